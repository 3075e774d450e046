"""Building blocks of LPACJT, thin junction trees with PAC guarantees
(Chechetka & Guestrin 2007).

* :class:`InformationOracle` answers ``I(A; B | S)`` from data for the small sets
  the method asks about, caching every joint entropy it computes;
* :func:`queyranne` minimises a symmetric submodular set function with
  ``O(n^3)`` evaluations (Queyranne 1998);
* :func:`ltci` (the paper's Algorithm 2) partitions the variables outside a
  separator ``S`` into groups that ``S`` cannot separate: it merges the groups of
  every small set ``A`` whose weakest split ``min_X I(X; A - X | S)`` exceeds a
  threshold;
* :func:`find_consistent_tree` (Algorithm 4, FindConsistentTreeDPGreedy) assembles
  a junction tree of width k from such components by dynamic programming with
  greedy decomposition checks;
* :class:`ThinJunctionTree` holds the result with the projection of the empirical
  distribution on it (the paper's eq. 1), its test log-likelihood, and a
  conversion to a factor model the inference module can query;
* :func:`learn` is LPACJT: the threshold is raised lazily (section 5) until a tree
  is found, testing hyper-edges only where they can change a component.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numba as nb
import numpy as np
import pandas as pd

from ..counting import count
from ..data import Dataset, as_dataset
from ..errors import InputError, InternalError, UnknownName
from ..factors import Factor, FactorModel
from ..bitsets import popcount
from ..graphs import has_running_intersection

__all__ = ["InformationOracle", "queyranne", "ltci", "find_consistent_tree",
           "ThinJunctionTree", "learn"]


# ------------------------------------------------------------ compiled kernels
# Variable sets are int64 bit masks (so at most 62 variables); every joint entropy
# is cached in a numba dictionary keyed by its mask.
_DENSE_CELLS = 1 << 20                   # joint spaces up to this size are counted densely


@nb.njit(cache=True)
def _set_entropy(values_t, arities, mask, cells, keys):
    """Plug-in entropy (nats) of the variables in ``mask``; ``cells`` is a zeroed
    scratch table (left zeroed) and ``keys`` a per-row scratch vector."""
    n = values_t.shape[1]
    keys[:] = 0
    size = 1
    v = 0
    m = mask
    while m:
        if m & 1:
            r = arities[v]
            for i in range(n):
                keys[i] = keys[i] * r + values_t[v, i]
            size *= r
        m >>= 1
        v += 1
    s = 0.0
    if size <= cells.shape[0]:
        for i in range(n):
            cells[keys[i]] += 1
        for i in range(n):
            c = cells[keys[i]]
            if c > 0:
                s += c * math.log(c)
                cells[keys[i]] = 0
    else:
        ordered = np.sort(keys)
        run = 1
        for i in range(1, n + 1):
            if i < n and ordered[i] == ordered[i - 1]:
                run += 1
            else:
                s += run * math.log(run)
                run = 1
    return math.log(n) - s / n


@nb.njit(cache=True)
def _cached_entropy(cache, values_t, arities, mask, cells, keys):
    if mask == 0:
        return 0.0
    if mask in cache:
        return cache[mask]
    h = _set_entropy(values_t, arities, mask, cells, keys)
    cache[mask] = h
    return h


@nb.njit(cache=True)
def _split_value(cache, values_t, arities, sep, full, x, h_joint, h_sep, cells, keys):
    """``I(X; A - X | S)`` from cached entropies (``full`` = A)."""
    return (_cached_entropy(cache, values_t, arities, sep | x, cells, keys)
            + _cached_entropy(cache, values_t, arities, sep | (full ^ x), cells, keys)
            - h_joint - h_sep)


@nb.njit(cache=True)
def _strength(cache, values_t, arities, sep, bits, stop, cells, keys):
    """``min_X I(X; A - X | S)`` for ``A`` = the variables in ``bits`` (one bit each):
    every split for up to five variables (at most 15), Queyranne's algorithm on
    the symmetric submodular function ``X -> I(X; A - X | S)`` above that.  Returns
    early, with the weakest split seen so far, once that is ``<= stop``: a caller
    asking only "stronger than stop?" needs no more (``stop = -inf``: exact)."""
    s = bits.shape[0]
    full = 0
    for i in range(s):
        full |= bits[i]
    h_sep = _cached_entropy(cache, values_t, arities, sep, cells, keys)
    h_joint = _cached_entropy(cache, values_t, arities, sep | full, cells, keys)
    best = np.inf
    if s <= 5:
        # splits X not holding the first variable; the s splits that cut off one
        # variable come first, as they are the likeliest to be weak
        n_splits = (1 << (s - 1)) - 1
        for phase in range(2):
            for t in range(1, n_splits + 1):
                single = (t & (t - 1)) == 0 or t == n_splits
                if single != (phase == 0):
                    continue
                x = 0
                for i in range(s - 1):
                    if (t >> i) & 1:
                        x |= bits[i + 1]
                value = _split_value(cache, values_t, arities, sep, full, x, h_joint, h_sep,
                                     cells, keys)
                if value < best:
                    best = value
                    if best <= stop:
                        return max(best, 0.0)
    else:
        groups = bits.copy()
        g = s
        while g > 1:
            placed = groups[0]
            free = np.ones(g, dtype=np.bool_)
            free[0] = False
            last, before = 0, 0
            for _ in range(g - 1):
                pick, pick_score = -1, np.inf
                for u in range(g):
                    if free[u]:
                        score = (_split_value(cache, values_t, arities, sep, full,
                                              placed | groups[u], h_joint, h_sep, cells, keys)
                                 - _split_value(cache, values_t, arities, sep, full, groups[u],
                                                h_joint, h_sep, cells, keys))
                        if score < pick_score:
                            pick, pick_score = u, score
                free[pick] = False
                placed |= groups[pick]
                before, last = last, pick
            value = _split_value(cache, values_t, arities, sep, full, groups[last], h_joint,
                                 h_sep, cells, keys)
            if value < best:
                best = value
                if best <= stop:
                    break
            groups[before] |= groups[last]     # merge the pendant pair
            groups[last] = groups[g - 1]
            g -= 1
    return max(best, 0.0)


@nb.njit(cache=True)
def _root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@nb.njit(cache=True)
def _merge_pass(cache, values_t, arities, sep, rest, parent, size, delta, tested, record,
                touching, cells, keys):
    """LTCI's inner loop for one separator and one set size: every ``size``-subset
    of ``rest`` that meets the mask ``touching``, whose variables lie in two or
    more components (union-find ``parent`` over positions of ``rest``) and, with
    ``record``, is not yet in ``tested`` gets its strength (stored in ``tested``
    with ``record``); one above ``delta`` merges the components.  A strength is
    computed only until a split at most ``delta`` shows up: the value stored is
    then an upper bound that is itself at most ``delta``, which is exact for
    every decision at thresholds ``>= delta`` (the lazy search only raises it).
    Returns the number of strengths computed."""
    m = rest.shape[0]
    idx = np.arange(size)
    bits = np.empty(size, dtype=np.int64)
    evaluated = 0
    while True:
        first = _root(parent, idx[0])
        spans = False
        for i in range(1, size):
            if _root(parent, idx[i]) != first:
                spans = True
                break
        if spans:
            mask = 0
            for i in range(size):
                bits[i] = np.int64(1) << rest[idx[i]]
                mask |= bits[i]
            if (mask & touching) != 0 and not (record and mask in tested):
                strength = _strength(cache, values_t, arities, sep, bits, delta, cells, keys)
                evaluated += 1
                if record:
                    tested[mask] = strength
                if strength > delta:
                    for i in range(1, size):
                        parent[_root(parent, idx[i])] = _root(parent, idx[0])
        i = size - 1
        while i >= 0 and idx[i] == m - size + i:
            i -= 1
        if i < 0:
            return evaluated
        idx[i] += 1
        for j in range(i + 1, size):
            idx[j] = idx[j - 1] + 1


@nb.njit(cache=True)
def _strength_values(tested):
    out = np.empty(len(tested))
    for i, strength in enumerate(tested.values()):
        out[i] = strength
    return out


# ------------------------------------------------------------------ the oracle
class InformationOracle:
    """Conditional mutual information ``I(A; B | S)`` (nats) of variable-index sets,
    estimated from data, with every joint entropy cached (compiled counting; sets
    are bit masks, so at most 62 variables).

    >>> import pandas as pd
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1] * 50, "b": [0, 1] * 50,
    ...                                        "c": [0, 0, 1, 1] * 25}))
    >>> oracle = InformationOracle(ds)
    >>> round(oracle({0}, {1}), 4), round(oracle({0}, {2}, {1}), 4)
    (0.6931, 0.0)
    >>> round(oracle.strength({0, 1, 2}), 4)     # the weakest split: {c} against {a, b}
    0.0
    """

    MAX_VARIABLES = 62

    def __init__(self, data: Dataset):
        if data.n_vars > self.MAX_VARIABLES:
            raise InputError(f"the information oracle handles at most {self.MAX_VARIABLES} "
                             f"variables (sets are 64-bit masks), got {data.n_vars}")
        self.data = data
        self.values_t = data.columns
        self.arities = np.asarray(data.arities, dtype=np.int64)
        self._log_arity = np.log2(np.maximum(self.arities, 1))
        self.cache = nb.typed.Dict.empty(nb.types.int64, nb.types.float64)
        self.cells = np.zeros(_DENSE_CELLS, dtype=np.int64)
        self.keys = np.empty(data.n_rows, dtype=np.int64)
        self.calls = 0          # conditional-MI evaluations asked for from Python
        self.strengths = 0      # split strengths computed (hyper-edges tested)

    def mask(self, variables) -> int:
        variables = sorted(set(variables))
        if variables and not 0 <= variables[0] <= variables[-1] < self.data.n_vars:
            raise InputError(f"variable indices must lie in 0..{self.data.n_vars - 1}")
        if self._log_arity[variables].sum() >= 62:
            raise InputError(f"the joint space of {len(variables)} variables overflows "
                             "64-bit keys")
        return _bits(variables)

    def entropy(self, variables) -> float:
        return _cached_entropy(self.cache, self.values_t, self.arities, self.mask(variables),
                               self.cells, self.keys)

    def __call__(self, a, b, s=()) -> float:
        a, b, s = frozenset(a), frozenset(b), frozenset(s)
        self.calls += 1
        if not a or not b:
            raise InputError("A and B must each hold at least one variable")
        if a & b or a & s or b & s:
            raise InputError("A, B and S must be disjoint")
        value = (self.entropy(a | s) + self.entropy(b | s) - self.entropy(a | b | s)
                 - self.entropy(s))
        return max(value, 0.0)

    def strength(self, subset, separator=()) -> float:
        """``min_X I(X; A - X | S)`` over non-empty proper ``X`` of ``A``: how
        strongly the variables of ``A`` hang together given ``S`` (every split for
        up to five variables, Queyranne's algorithm above)."""
        subset, separator = sorted(set(subset)), set(separator)
        if len(subset) < 2:
            raise InputError("a split needs a set of at least two variables")
        if separator & set(subset):
            raise InputError("the set and the separator must be disjoint")
        self.mask(list(separator) + subset)             # validates indices and key size
        bits = np.array([1 << v for v in subset], dtype=np.int64)
        self.strengths += 1
        return _strength(self.cache, self.values_t, self.arities, self.mask(separator), bits,
                         -np.inf, self.cells, self.keys)

    def merge_pass(self, sep_mask, rest, parent, size, delta, tested=None, touching=-1) -> int:
        """Run the compiled LTCI pass (see ``_merge_pass``); counts the strengths."""
        record = tested is not None
        if tested is None:
            tested = _EMPTY_TESTED
        done = _merge_pass(self.cache, self.values_t, self.arities, sep_mask, rest, parent,
                           size, delta, tested, record, touching, self.cells, self.keys)
        self.strengths += done
        return done

    @property
    def cached(self) -> int:
        """Number of joint entropies computed so far."""
        return len(self.cache)


_EMPTY_TESTED = nb.typed.Dict.empty(nb.types.int64, nb.types.float64)


def queyranne(f, elements):
    """Minimise a symmetric submodular function over non-empty proper subsets.

    ``f`` takes a frozenset of ``elements`` (including the full set, where a
    symmetric function equals its value on the empty set).  Returns ``(value, subset)``.  Each
    round builds an ordering that adds, next, the group ``u`` minimising
    ``f(W + u) - f(u)``; its last two groups form a pendant pair, the last one
    alone is a candidate minimiser, and the pair is merged for the next round.
    (The compiled split strength of LPACJT runs the same rounds on bit masks.)

    >>> edges = [(0, 1), (1, 2), (2, 3), (0, 2)]
    >>> cut = lambda X: sum((a in X) != (b in X) for a, b in edges)
    >>> queyranne(cut, range(4))
    (1, frozenset({3}))
    """
    groups = [frozenset([e]) for e in elements]
    if len(groups) < 2:
        raise InputError("a proper non-empty subset needs at least two elements")
    best_value, best_set = math.inf, None
    while len(groups) > 1:
        placed, rest = groups[0], list(groups[1:])
        order = [groups[0]]
        while rest:
            scores = [f(placed | u) - f(u) for u in rest]
            u = rest.pop(int(np.argmin(scores)))
            placed |= u
            order.append(u)
        last, before = order[-1], order[-2]
        value = f(last)
        if value < best_value:
            best_value, best_set = value, last
        groups = [g for g in groups if g is not last and g is not before] + [last | before]
    return best_value, best_set


@nb.njit(cache=True)
def _component_masks(rest, roots):
    """Bit masks of the components given each position's union-find root, in order
    of first appearance."""
    slot = np.full(rest.shape[0], -1, dtype=np.int64)
    out = np.zeros(rest.shape[0], dtype=np.int64)
    k = 0
    for i in range(rest.shape[0]):
        if slot[roots[i]] < 0:
            slot[roots[i]] = k
            k += 1
        out[slot[roots[i]]] |= np.int64(1) << rest[i]
    return out[:k]


def _members(mask: int) -> frozenset:
    return frozenset(v for v in range(mask.bit_length()) if mask >> v & 1)


def ltci(variables, separator, oracle, delta: float, q: int):
    """LTCI (Chechetka & Guestrin's Algorithm 2): groups of ``variables - separator``
    that the separator cannot split at threshold ``delta``, testing sets of size
    ``2 .. q``.  A set already inside one group is not tested (it cannot merge
    anything).  Returns a list of frozensets.
    """
    return sorted(map(_members, _ltci_masks(variables, separator, oracle, delta, q).tolist()),
                  key=sorted)


def _ltci_masks(variables, separator, oracle, delta, q):
    """LTCI's groups as bit masks, in order of their smallest variable."""
    separator = frozenset(separator)
    rest = np.array(sorted(set(variables) - separator), dtype=np.int64)
    parent = np.arange(len(rest))
    sep_mask = oracle.mask(separator)
    oracle.mask(list(separator) + rest[np.argsort(-oracle.arities[rest])][:q].tolist())
    for size in range(2, min(q, len(rest)) + 1):
        oracle.merge_pass(sep_mask, rest, parent, size, delta)
    return _final_components(rest, parent)


@nb.njit(cache=True)
def _final_components(rest, parent):
    # a separate entry point: numba's cache fails to return arrays to Python from a
    # function that another cached function also calls (``_component_masks``)
    roots = np.empty(rest.shape[0], dtype=np.int64)
    for i in range(rest.shape[0]):
        roots[i] = _root(parent, i)
    return _component_masks(rest, roots)


# ------------------------------------------------------- consistent junction trees
@nb.njit(cache=True)
def _consistent_tree(sep_masks, sep_lookup, comp_sep, comp_mask):
    """The DP of Algorithm 4 on bit masks.  Components ``(sep_masks[comp_sep[c]],
    comp_mask[c])`` come grouped by separator in a fixed order; they are processed
    by size (stable).  Returns the index of the first separator all of whose
    components are decomposable (or -1) and each component's recipe: the added
    variable ``x`` (-1: not decomposable) and its sub-components, a slice of ``subs``."""
    n_comp = comp_mask.shape[0]
    sizes = np.empty(n_comp, dtype=np.int64)
    total = 0
    for c in range(n_comp):
        sizes[c] = popcount(comp_mask[c])
        total += sizes[c]
    order = np.argsort(sizes, kind="mergesort")
    n_sep = sep_masks.shape[0]
    head = np.full(n_sep, -1, dtype=np.int64)   # decomposable components of each
    tail = np.full(n_sep, -1, dtype=np.int64)   # separator, as a linked list
    link = np.full(n_comp, -1, dtype=np.int64)
    rec_x = np.full(n_comp, -1, dtype=np.int64)
    sub_start = np.zeros(n_comp, dtype=np.int64)
    sub_count = np.zeros(n_comp, dtype=np.int64)
    subs = np.empty(total, dtype=np.int64)
    used = 0
    for c in order:
        sep, group = sep_masks[comp_sep[c]], comp_mask[c]
        g = group
        while g:
            xbit = g & -g
            g ^= xbit
            rest = group ^ xbit
            covered = 0
            start = used
            s = sep
            while s:
                ybit = s & -s
                s ^= ybit
                sub_sep = (sep ^ ybit) | xbit
                if sub_sep not in sep_lookup:
                    continue
                d = head[sep_lookup[sub_sep]]
                while d >= 0:
                    sub = comp_mask[d]
                    if (sub & ~rest) == 0 and (sub & covered) == 0:
                        subs[used] = d
                        used += 1
                        covered |= sub
                    d = link[d]
            if covered == rest:
                rec_x[c] = popcount(xbit - 1)
                sub_start[c], sub_count[c] = start, used - start
                i = comp_sep[c]
                if head[i] < 0:
                    head[i] = c
                else:
                    link[tail[i]] = c
                tail[i] = c
                break
            used = start
    complete = np.zeros(n_sep, dtype=np.bool_)
    for c in range(n_comp):
        complete[comp_sep[c]] = True
    for c in range(n_comp):
        if rec_x[c] < 0:
            complete[comp_sep[c]] = False
    for i in range(n_sep):
        if complete[i]:
            return i, rec_x, sub_start, sub_count, subs
    return -1, rec_x, sub_start, sub_count, subs


def _bits(variables) -> int:
    return sum(1 << v for v in variables)


class _Components:
    """Components of every separator, flattened for the compiled DP."""

    def __init__(self, separators):
        self.separators = list(separators)             # frozensets, in a fixed order
        self.sep_masks = np.array([_bits(s) for s in self.separators], dtype=np.int64)
        self.lookup = nb.typed.Dict.empty(nb.types.int64, nb.types.int64)
        for i, m in enumerate(self.sep_masks):
            self.lookup[m] = i

    def tree(self, masks_per_separator=None, flat=None):
        """``(cliques, edges)`` from the components (an array of bit masks per
        separator, in order, or ``flat = (separator index, mask)`` arrays), or
        None; ``self.used`` then maps each separator index the tree uses to the
        mask of its components in the tree."""
        if flat is None:
            comp_sep = np.repeat(np.arange(len(self.separators)),
                                 [len(m) for m in masks_per_separator])
            masks = np.concatenate(masks_per_separator).astype(np.int64)
        else:
            comp_sep, masks = flat
        root, rec_x, start, count, subs = _consistent_tree(self.sep_masks, self.lookup,
                                                           comp_sep, masks)
        if root < 0:
            return None
        cliques, edges = [], []
        self.used = {}

        def build(c):
            self.used[comp_sep[c]] = self.used.get(comp_sep[c], 0) | int(masks[c])
            here = len(cliques)
            cliques.append(tuple(sorted(self.separators[comp_sep[c]] | {int(rec_x[c])})))
            for d in subs[start[c]:start[c] + count[c]]:
                edges.append((here, build(d)))
            return here

        tops = [build(c) for c in np.flatnonzero(comp_sep == root)]
        edges += [(tops[0], t) for t in tops[1:]]
        if not has_running_intersection(cliques, edges):
            raise InternalError("assembled tree violates the running intersection property")
        return cliques, edges


def find_consistent_tree(components: dict, k: int):
    """FindConsistentTreeDPGreedy (Chechetka & Guestrin's Algorithm 4).

    ``components`` maps each separator (a frozenset of k variables) to the groups
    (frozensets) its LTCI partition puts on separate sides.  A component ``(S, Q)``
    is decomposable when some ``x`` in ``Q`` and disjoint decomposable components
    ``(S', Q')`` with ``S'`` inside ``S + x`` cover ``Q - x``; candidates are tried
    greedily, smallest components first (compiled, on bit masks).  Returns
    ``(cliques, edges)`` of a junction tree whose cliques have k + 1 variables, from
    the first separator all of whose components are decomposable, or None.

    >>> comps = {frozenset({1}): [frozenset({0}), frozenset({2})],
    ...          frozenset({0}): [frozenset({1, 2})], frozenset({2}): [frozenset({0, 1})]}
    >>> find_consistent_tree(comps, 1)
    ([(0, 1), (1, 2)], [(0, 1)])
    """
    if any(len(s) != k for s in components):
        raise InputError(f"every separator must hold k = {k} variables")
    seps = sorted(components, key=sorted)
    if max((v for s, gs in components.items() for g in list(gs) + [s] for v in g),
           default=0) > InformationOracle.MAX_VARIABLES:
        raise InputError("variable indices above 62 do not fit the 64-bit masks")
    return _Components(seps).tree([np.array([_bits(g) for g in sorted(components[s], key=sorted)],
                                            dtype=np.int64) for s in seps])


# ----------------------------------------------------------------- the model
@dataclass
class ThinJunctionTree:
    """A junction tree over a data set's variables with the empirical distribution
    projected on it: ``P(x) = prod_C P(x_C) / prod_S P(x_S)`` (clique and
    separator marginals of the training data with a total pseudo-count ``alpha``
    spread uniformly over each table's cells, which keeps all marginals mutually
    consistent).

    Attributes: ``cliques`` and ``separators`` (tuples of variable names), ``edges``
    (index pairs), ``width``, the fitted ``tables`` and search ``stats``.
    """

    names: list
    states: dict
    cliques: list
    edges: list
    tables: list = field(repr=False)
    separator_tables: list = field(repr=False)
    stats: dict = field(default_factory=dict, repr=False)

    @classmethod
    def fit(cls, data: Dataset, cliques, edges, alpha: float = 1.0, stats=None):
        """Project ``data`` on the junction tree ``(cliques, edges)`` (variable indices)."""
        if alpha <= 0:
            raise InputError(f"the pseudo-count alpha must be positive, got {alpha}")
        if not has_running_intersection(cliques, edges):
            raise InputError("the cliques and edges do not form a junction tree")

        def marginal(vs):
            vs = sorted(vs)
            shape = [int(data.arities[v]) for v in vs]
            c = (count(data.values, vs, shape).to_dense() if vs
                 else np.array(float(data.n_rows)))
            return (c + alpha / max(1, int(np.prod(shape)))) / (data.n_rows + alpha)

        tables = [marginal(c) for c in cliques]
        seps = [tuple(sorted(set(cliques[i]) & set(cliques[j]))) for i, j in edges]
        names = list(data.names)
        return cls(names, {v: list(data.states[i]) for i, v in enumerate(names)},
                   [tuple(names[v] for v in sorted(c)) for c in cliques], list(edges), tables,
                   [marginal(s) for s in seps], dict(stats or {}))

    @property
    def separators(self) -> list:
        return [tuple(v for v in self.cliques[i] if v in self.cliques[j]) for i, j in self.edges]

    @property
    def width(self) -> int:
        return max(len(c) for c in self.cliques) - 1

    def log_likelihood(self, data: Dataset, per_row: bool = False):
        """Natural-log likelihood of the rows of ``data`` (matched by variable name);
        ``per_row=True`` gives each row's value, as ``BayesianNetwork.log_likelihood``."""
        index = {v: i for i, v in enumerate(data.names)}
        missing = set(self.names) - set(index)
        if missing:
            raise UnknownName(f"the data lack variables {sorted(missing)[:5]}")
        cols = data.columns
        out = np.zeros(data.n_rows)
        for scope, table, sign in ([(c, t, 1.0) for c, t in zip(self.cliques, self.tables)]
                                   + [(s, t, -1.0) for s, t in zip(self.separators,
                                                                   self.separator_tables)]):
            idx = tuple(cols[index[v]].astype(np.int64) for v in scope)
            out += sign * np.log(table[idx])
        return out if per_row else float(out.sum())

    def to_factor_model(self) -> FactorModel:
        """The tree as a Markov network (clique marginals over separator marginals)."""
        factors = [Factor(c, t) for c, t in zip(self.cliques, self.tables)]
        factors += [Factor(s, 1.0 / t) for s, t in zip(self.separators, self.separator_tables)
                    if s]
        return FactorModel(self.names, self.states, factors, name="thin-junction-tree")


# ------------------------------------------------------------------- LPACJT
@nb.njit(cache=True)
def _merge_events(tested, rest):
    """Kruskal over one separator's hyper-edges, strongest first: the unions that
    join two components, as (strength, position, position), in descending
    strength.  The components at any threshold are those of the events above it."""
    where = np.full(64, -1, dtype=np.int64)
    for i in range(rest.shape[0]):
        where[rest[i]] = i
    masks = np.empty(len(tested), dtype=np.int64)
    strengths = np.empty(len(tested))
    for j, (mask, strength) in enumerate(tested.items()):
        masks[j], strengths[j] = mask, strength
    parent = np.arange(rest.shape[0])
    ev_s = np.empty(rest.shape[0])
    ev_a = np.empty(rest.shape[0], dtype=np.int64)
    ev_b = np.empty(rest.shape[0], dtype=np.int64)
    n_ev = 0
    for j in np.argsort(-strengths, kind="mergesort"):
        first = -1
        m, v = masks[j], 0
        while m:
            if m & 1:
                if first < 0:
                    first = where[v]
                else:
                    ra, rb = _root(parent, first), _root(parent, where[v])
                    if ra != rb:
                        parent[rb] = ra
                        ev_s[n_ev], ev_a[n_ev], ev_b[n_ev] = strengths[j], first, where[v]
                        n_ev += 1
            m >>= 1
            v += 1
    return ev_s[:n_ev], ev_a[:n_ev], ev_b[:n_ev]


@nb.njit(cache=True)
def _event_roots(ev_s, ev_a, ev_b, size, delta):
    """Union-find roots (fully compressed) of the events stronger than ``delta``."""
    parent = np.arange(size)
    for j in range(ev_s.shape[0]):
        if ev_s[j] <= delta:
            break
        ra, rb = _root(parent, ev_a[j]), _root(parent, ev_b[j])
        if ra != rb:
            parent[rb] = ra
    for i in range(size):
        parent[i] = _root(parent, i)
    return parent


@nb.njit(cache=True)
def _refresh(tested, ranked, events, rests, i):
    """Bring separator i's sorted strengths and merge events up to date."""
    if ranked[i].shape[0] != len(tested[i]):
        ranked[i] = np.sort(_strength_values(tested[i]))
        events[i] = _merge_events(tested[i], rests[i])


@nb.njit(cache=True)
def _separator_roots(tested, ranked, events, rests, i, delta):
    _refresh(tested, ranked, events, rests, i)
    ev_s, ev_a, ev_b = events[i]
    return _event_roots(ev_s, ev_a, ev_b, rests[i].shape[0], delta)


@nb.njit(cache=True)
def _all_components(tested, ranked, events, memo, comps, rests, delta):
    """Components of every separator at ``delta``, flattened to (separator index,
    mask) arrays.  ``ranked[i]`` keeps separator i's tested strengths sorted and
    ``events[i]`` its merge events (refreshed after new tests); ``memo[i]`` is the
    (edge count, active events) its ``comps[i]`` were computed for."""
    total = 0
    for i in range(len(tested)):
        _refresh(tested, ranked, events, rests, i)
        ev_s, ev_a, ev_b = events[i]
        active = 0
        while active < ev_s.shape[0] and ev_s[active] > delta:
            active += 1
        if memo[i, 0] != ranked[i].shape[0] or memo[i, 1] != active:
            roots = _event_roots(ev_s, ev_a, ev_b, rests[i].shape[0], delta)
            comps[i] = _component_masks(rests[i], roots)
            memo[i, 0], memo[i, 1] = ranked[i].shape[0], active
        total += comps[i].shape[0]
    comp_sep = np.empty(total, dtype=np.int64)
    comp_mask = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(len(tested)):
        for m in comps[i]:
            comp_sep[k], comp_mask[k] = i, m
            k += 1
    return comp_sep, comp_mask


@nb.njit(cache=True)
def _smallest_above(ranked, delta, limit):
    """The distinct tested strengths above ``delta``, sorted, at most ``limit`` of
    them (the smallest)."""
    total = 0
    for r in ranked:
        total += r.shape[0] - np.searchsorted(r, delta, side="right")
    out = np.empty(total)
    k = 0
    for r in ranked:
        for j in range(np.searchsorted(r, delta, side="right"), r.shape[0]):
            out[k] = r[j]
            k += 1
    if total > limit:
        out = np.partition(out, limit - 1)[:limit]
    return np.unique(out)


class _Hypergraph:
    """The hyper-edges tested for every separator (set mask -> strength, one numba
    dict each) and their components at a threshold, all kept compiled-side."""

    def __init__(self, separators, n, oracle):
        self.oracle = oracle
        self.masks = [oracle.mask(s) for s in separators]
        dict_type = nb.types.DictType(nb.types.int64, nb.types.float64)
        self.tested = nb.typed.List.empty_list(dict_type)
        self.ranked = nb.typed.List.empty_list(nb.types.float64[::1])
        self.comps = nb.typed.List.empty_list(nb.types.int64[::1])
        self.rests = nb.typed.List.empty_list(nb.types.int64[::1])
        self.events = nb.typed.List.empty_list(nb.types.Tuple(
            (nb.types.float64[::1], nb.types.int64[::1], nb.types.int64[::1])))
        for s in separators:
            self.events.append((np.empty(0), np.empty(0, dtype=np.int64),
                                np.empty(0, dtype=np.int64)))
            self.tested.append(nb.typed.Dict.empty(nb.types.int64, nb.types.float64))
            self.ranked.append(np.empty(0))
            self.comps.append(np.empty(0, dtype=np.int64))
            self.rests.append(np.array(sorted(set(range(n)) - s), dtype=np.int64))
        self.memo = np.full((len(separators), 2), -1, dtype=np.int64)

    def components(self, delta):
        return _all_components(self.tested, self.ranked, self.events, self.memo, self.comps,
                               self.rests, delta)

    def strengths_above(self, delta, limit):
        self.components(delta)                      # brings the sorted strengths up to date
        return _smallest_above(self.ranked, delta, limit)

    def test_spanning_sets(self, i, delta, sizes, touching=-1):
        """Test separator i's untested sets that meet the mask ``touching`` and join
        two or more of its components at ``delta``; True if one of them is
        stronger than ``delta`` (the components change)."""
        rest, tested = self.rests[i], self.tested[i]
        parent = _separator_roots(self.tested, self.ranked, self.events, self.rests, i, delta)
        before = len(np.unique(parent))
        for size in sizes:
            if size <= len(rest):
                self.oracle.merge_pass(self.masks[i], rest, parent, size, delta, tested,
                                       touching)
        return len({_root(parent, j) for j in range(len(parent))}) < before


def learn(data: Dataset | pd.DataFrame, k: int, q: int | None = None, alpha: float = 1.0,
          search: str = "lazy", select: str = "likelihood") -> ThinJunctionTree:
    """LPACJT: a junction tree of width ``k`` from data (Chechetka & Guestrin 2007).

    ``data``: a Dataset, a DataFrame, a 2-D array or a CSV path (see
    :func:`twlib.data.as_dataset`).

    ``search="lazy"`` raises the threshold over the strengths of the hyper-edges
    tested so far until a tree is found (bisecting over them rather than stepping
    edge by edge), testing only hyper-edges that join components, and re-testing,
    once a tree is found, those that touch the components it uses (section 5);
    ``"binary"`` bisects the threshold over ``[0, log R]``, running LTCI for every
    separator at each step (the baseline).  ``q`` is LTCI's largest set (default
    k + 2, as in the paper's Algorithm 3).  ``select="likelihood"`` (default) returns
    the tree of highest training likelihood among all the search met, as the
    paper's experiments report; ``"threshold"`` the tree at the final threshold
    (the one the guarantee is about).  ``stats`` records the threshold, the trees met, the
    number of hyper-edge strengths computed and of distinct entropies, and the time.
    At most 62 variables (sets are 64-bit masks).

    >>> from twlib.datasets import load_sklearn
    >>> jt = learn(load_sklearn("iris"), 2)
    >>> jt.width, len(jt.cliques)
    (2, 3)
    """
    data = as_dataset(data)
    n = data.n_vars
    if not 1 <= k <= n - 2:
        raise InputError(f"a junction tree of width k over n = {n} variables needs "
                         f"1 <= k <= n - 2, got k={k}")
    if search not in ("lazy", "binary"):
        raise InputError(f"search must be 'lazy' or 'binary', got {search!r}")
    if select not in ("threshold", "likelihood"):
        raise InputError(f"select must be 'threshold' or 'likelihood', got {select!r}")
    q = k + 2 if q is None else q
    if q < 2:
        raise InputError(f"q must be at least 2, got {q}")
    widest = np.sort(np.log2(np.maximum(data.arities, 1)))[::-1][:k + q].sum()
    if widest >= 62:
        raise InputError(f"sets of k + q = {k + q} variables of these arities overflow "
                         "64-bit joint-state keys; lower q or k")
    started = time.perf_counter()
    oracle = InformationOracle(data)
    seps = [frozenset(c) for c in itertools.combinations(range(n), k)]
    best = _BestTree(oracle)
    if search == "lazy":
        tree, delta, rounds = _lazy(n, seps, oracle, q, k, best)
    else:
        tree, delta, rounds = _binary(n, seps, oracle, q, k, data, best)
    if select == "likelihood":
        tree = best.tree
    stats = {"delta": delta, "trees_seen": best.seen, "select": select,
             "entropies": oracle.cached, "strengths": oracle.strengths,
             "rounds": rounds, "search": search, "q": q,
             "seconds": time.perf_counter() - started}
    return ThinJunctionTree.fit(data, *tree, alpha=alpha, stats=stats)


_GATHER = 4096                           # thresholds gathered per raise of delta


class _BestTree:
    """Every tree the search meets, scored by the training log-likelihood of its
    projection, ``-N (sum H(C) - sum H(S))`` (empirical entropies, cached)."""

    def __init__(self, oracle):
        self.oracle, self.seen = oracle, 0
        self.tree = None
        self.score = -math.inf

    def offer(self, tree):
        if tree is not None:
            cliques, edges = tree
            h = (sum(self.oracle.entropy(c) for c in cliques)
                 - sum(self.oracle.entropy(set(cliques[i]) & set(cliques[j])) for i, j in edges))
            score = -self.oracle.data.n_rows * h
            self.seen += 1
            if score > self.score:
                self.tree, self.score = tree, score
        return tree


def _lazy(n, seps, oracle, q, k, best):
    graph = _Hypergraph(seps, n, oracle)
    table = _Components(seps)
    for i in range(len(seps)):         # pairs are cheap: test them all (none merges at +inf)
        graph.test_spanning_sets(i, math.inf, sizes=[2])
    delta, rounds = -math.inf, 0

    def tree_at(d):
        nonlocal rounds
        rounds += 1
        return best.offer(table.tree(flat=graph.components(d)))

    while True:
        tree = tree_at(delta)
        if tree is None:
            # the smallest tested strength at which a tree appears (one always does
            # once every edge is gone): gallop up from delta, then bisect
            above = graph.strengths_above(delta, _GATHER)
            if len(above) == _GATHER and tree_at(above[-1]) is None:
                delta = float(above[-1])       # beyond the smallest strengths gathered
                continue
            lo, step = 0, 1
            while lo + step < len(above) and tree_at(above[lo + step - 1]) is None:
                lo, step = lo + step, 2 * step
            hi = min(lo + step - 1, len(above) - 1)
            while lo < hi:
                mid = (lo + hi) // 2
                if tree_at(above[mid]) is None:
                    lo = mid + 1
                else:
                    hi = mid
            delta = float(above[lo])
            continue
        # only a set meeting a component the tree uses can change the tree
        changed = False
        for i, touching in table.used.items():
            changed |= graph.test_spanning_sets(i, delta, range(3, q + 1), touching)
        if not changed:
            return tree, delta, rounds


def _binary(n, seps, oracle, q, k, data, best, steps: int = 12):
    low, high = 0.0, math.log(max(int(data.arities.max()), 2))
    table = _Components(seps)
    found = None
    for _ in range(steps):
        mid = (low + high) / 2
        tree = best.offer(table.tree([_ltci_masks(range(n), s, oracle, mid, q) for s in seps]))
        if tree is None:
            low = mid
        else:
            found, high = (tree, mid), mid
    if found is None:                    # every separator's singletons always give a tree
        found = (best.offer(table.tree([np.array([1 << v for v in range(n) if v not in s],
                                                 dtype=np.int64) for s in seps])), high)
    return found[0], found[1], steps
