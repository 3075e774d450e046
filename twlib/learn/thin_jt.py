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

import numpy as np

from ..counting import count
from ..data import Dataset
from ..factors import Factor, FactorModel
from ..graphs import has_running_intersection
from ..information import entropy

__all__ = ["InformationOracle", "queyranne", "ltci", "split_strength", "find_consistent_tree",
           "ThinJunctionTree", "learn"]


class InformationOracle:
    """Conditional mutual information ``I(A; B | S)`` (nats) of variable-index sets,
    estimated from data, with every joint entropy cached.

    >>> import pandas as pd
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1] * 50, "b": [0, 1] * 50,
    ...                                        "c": [0, 0, 1, 1] * 25}))
    >>> oracle = InformationOracle(ds)
    >>> round(oracle({0}, {1}), 4), round(oracle({0}, {2}, {1}), 4)
    (0.6931, 0.0)
    """

    def __init__(self, data: Dataset):
        self.data = data
        self._entropy = {frozenset(): 0.0}
        self.calls = 0

    def entropy(self, variables) -> float:
        key = frozenset(variables)
        if key not in self._entropy:
            self._entropy[key] = entropy(self.data, sorted(key))
        return self._entropy[key]

    def __call__(self, a, b, s=()) -> float:
        a, b, s = frozenset(a), frozenset(b), frozenset(s)
        self.calls += 1
        if not a or not b:
            raise ValueError("A and B must each hold at least one variable")
        if a & b or a & s or b & s:
            raise ValueError("A, B and S must be disjoint")
        value = (self.entropy(a | s) + self.entropy(b | s) - self.entropy(a | b | s)
                 - self.entropy(s))
        return max(value, 0.0)

    @property
    def cached(self) -> int:
        """Number of joint entropies computed so far."""
        return len(self._entropy) - 1


def queyranne(f, elements):
    """Minimise a symmetric submodular function over non-empty proper subsets.

    ``f`` takes a frozenset of ``elements`` (including the full set, where a
    symmetric function equals its value on the empty set).  Returns ``(value, subset)``.  Each
    round builds an ordering that adds, next, the group ``u`` minimising
    ``f(W + u) - f(u)``; its last two groups form a pendant pair, the last one
    alone is a candidate minimiser, and the pair is merged for the next round.

    >>> edges = [(0, 1), (1, 2), (2, 3), (0, 2)]
    >>> cut = lambda X: sum((a in X) != (b in X) for a, b in edges)
    >>> queyranne(cut, range(4))
    (1, frozenset({3}))
    """
    groups = [frozenset([e]) for e in elements]
    if len(groups) < 2:
        raise ValueError("a proper non-empty subset needs at least two elements")
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


def split_strength(oracle, separator, subset) -> float:
    """``min_X I(X; A - X | S)`` over non-empty proper ``X`` of ``A``: how strongly
    the variables of ``A`` hang together given ``S``.  Sets of up to four variables
    (at most seven splits) are split exhaustively, which takes fewer evaluations
    than Queyranne's algorithm; larger ones use it."""
    subset, separator = frozenset(subset), frozenset(separator)
    members = sorted(subset)
    if len(members) <= 4:
        rest = members[1:]               # each split once: the side without members[0]
        return min(oracle(subset - side, side, separator)
                   for r in range(1, len(rest) + 1)
                   for side in map(frozenset, itertools.combinations(rest, r)))
    return queyranne(lambda x: oracle(x, subset - x, separator) if x != subset else 0.0,
                     members)[0]


def ltci(variables, separator, oracle, delta: float, q: int):
    """LTCI (Chechetka & Guestrin's Algorithm 2): groups of ``variables - separator``
    that the separator cannot split at threshold ``delta``, testing sets of size
    ``2 .. q``.  A set already inside one group is not tested (it cannot merge
    anything).  Returns a list of frozensets.
    """
    separator = frozenset(separator)
    rest = sorted(set(variables) - separator)
    group = {v: frozenset([v]) for v in rest}
    for size in range(2, q + 1):
        for subset in itertools.combinations(rest, size):
            if len({group[v] for v in subset}) == 1:
                continue
            if split_strength(oracle, separator, subset) > delta:
                merged = frozenset().union(*{group[v] for v in subset})
                for v in merged:
                    group[v] = merged
    return sorted(set(group.values()), key=lambda g: sorted(g))


# ------------------------------------------------------- consistent junction trees
def find_consistent_tree(components: dict, k: int):
    """FindConsistentTreeDPGreedy (Chechetka & Guestrin's Algorithm 4).

    ``components`` maps each separator (a frozenset of k variables) to the groups
    (frozensets) its LTCI partition puts on separate sides.  A component ``(S, Q)``
    is decomposable when some ``x`` in ``Q`` and disjoint decomposable components
    ``(S', Q')`` with ``S'`` inside ``S + x`` cover ``Q - x``; candidates are tried
    greedily, smallest components first.  Returns ``(cliques, edges)`` of a
    junction tree whose cliques have k + 1 variables, from the first separator all
    of whose components are decomposable, or None.

    >>> comps = {frozenset({1}): [frozenset({0}), frozenset({2})],
    ...          frozenset({0}): [frozenset({1, 2})], frozenset({2}): [frozenset({0, 1})]}
    >>> find_consistent_tree(comps, 1)
    ([(0, 1), (1, 2)], [(0, 1)])
    """
    order = sorted(((s, q) for s, groups in components.items() for q in groups),
                   key=lambda c: (len(c[1]), sorted(c[0]), sorted(c[1])))
    decomposable = {}                    # separator -> decomposable groups
    recipe = {}                          # (S, Q) -> (x, [(S', Q'), ...])
    for sep, group in order:
        for x in sorted(group):
            rest = group - {x}
            chosen, covered = [], frozenset()
            for y in sorted(sep):
                sub_sep = (sep - {y}) | {x}
                for sub in decomposable.get(sub_sep, ()):
                    if sub <= rest and not sub & covered:
                        chosen.append((sub_sep, sub))
                        covered |= sub
            if covered == rest:
                recipe[sep, group] = (x, chosen)
                decomposable.setdefault(sep, []).append(group)
                break
    for sep in sorted(components, key=sorted):
        groups = components[sep]
        if groups and all((sep, g) in recipe for g in groups):
            return _assemble(sep, groups, recipe)
    return None


def _assemble(root_sep, groups, recipe):
    cliques, edges = [], []

    def build(sep, group):
        x, subs = recipe[sep, group]
        here = len(cliques)
        cliques.append(tuple(sorted(sep | {x})))
        for sub in subs:
            edges.append((here, build(*sub)))
        return here

    tops = [build(root_sep, g) for g in groups]
    edges += [(tops[0], t) for t in tops[1:]]
    if not has_running_intersection(cliques, edges):
        raise AssertionError("assembled tree violates the running intersection property")
    return cliques, edges


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
            raise ValueError(f"the pseudo-count alpha must be positive, got {alpha}")
        if not has_running_intersection(cliques, edges):
            raise ValueError("the cliques and edges do not form a junction tree")

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
        """Log-likelihood (nats) of ``data``; mean per row with ``per_row``."""
        index = {v: i for i, v in enumerate(data.names)}
        missing = set(self.names) - set(index)
        if missing:
            raise KeyError(f"the data lack variables {sorted(missing)[:5]}")
        cols = data.columns
        total = 0.0
        for scope, table, sign in ([(c, t, 1.0) for c, t in zip(self.cliques, self.tables)]
                                   + [(s, t, -1.0) for s, t in zip(self.separators,
                                                                   self.separator_tables)]):
            idx = tuple(cols[index[v]].astype(np.int64) for v in scope)
            total += sign * float(np.log(table[idx]).sum())
        return total / data.n_rows if per_row else total

    def to_factor_model(self) -> FactorModel:
        """The tree as a Markov network (clique marginals over separator marginals)."""
        factors = [Factor(c, t) for c, t in zip(self.cliques, self.tables)]
        factors += [Factor(s, 1.0 / t) for s, t in zip(self.separators, self.separator_tables)
                    if s]
        return FactorModel(self.names, self.states, factors, name="thin-junction-tree")


# ------------------------------------------------------------------- LPACJT
class _Separator:
    """Hyper-edges tested for one separator, and its components at a threshold."""

    def __init__(self, sep, rest):
        self.sep, self.rest = sep, rest
        self.edges = {}                      # frozenset A -> strength
        self._memo = (None, None)            # (active edge count, components)

    def components(self, delta):
        # the active edges are those stronger than delta, so their number (with the
        # edge set unchanged) identifies the components already computed
        active = (len(self.edges), sum(1 for v in self.edges.values() if v > delta))
        if self._memo[0] == active:
            return self._memo[1]
        groups = self._components(delta)
        self._memo = (active, groups)
        return groups

    def _components(self, delta):
        parent = {v: v for v in self.rest}

        def find(v):
            while parent[v] != v:
                parent[v] = parent[parent[v]]
                v = parent[v]
            return v

        for subset, strength in self.edges.items():
            if strength > delta:
                first, *others = [find(v) for v in subset]
                for o in others:
                    parent[o] = first
        groups = {}
        for v in self.rest:
            groups.setdefault(find(v), set()).add(v)
        return [frozenset(g) for g in groups.values()]


def _test_spanning_sets(state, oracle, delta, q, sizes):
    """Test untested sets that join two or more components at ``delta``; True if one
    of them is stronger than ``delta`` (the components change)."""
    changed = False
    for size in sizes:
        groups = state.components(delta)
        where = {v: i for i, g in enumerate(groups) for v in g}
        for subset in itertools.combinations(sorted(state.rest), size):
            key = frozenset(subset)
            if key in state.edges or len({where[v] for v in subset}) < 2:
                continue
            state.edges[key] = split_strength(oracle, state.sep, key)
            if state.edges[key] > delta:
                changed = True
                groups = state.components(delta)
                where = {v: i for i, g in enumerate(groups) for v in g}
    return changed


def learn(data: Dataset, k: int, q: int | None = None, alpha: float = 1.0,
          search: str = "lazy") -> ThinJunctionTree:
    """LPACJT: a junction tree of width ``k`` from data (Chechetka & Guestrin 2007).

    ``search="lazy"`` raises the threshold over the strengths of the hyper-edges
    tested so far until a tree is found (bisecting over them rather than stepping
    edge by edge), testing only hyper-edges that join components, and re-testing,
    once a tree is found, those around its separators (section 5);
    ``"binary"`` bisects the threshold over ``[0, log R]``, running LTCI for every
    separator at each step (the baseline).  ``q`` is LTCI's largest set (default
    k + 2, as in the paper's Algorithm 3).  ``stats`` records the threshold, the
    number of conditional-MI evaluations and distinct entropies, and the time.

    >>> from twlib.datasets import load_sklearn
    >>> jt = learn(load_sklearn("iris"), 2)
    >>> jt.width, len(jt.cliques)
    (2, 3)
    """
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a twlib Dataset, got {type(data).__name__}")
    n = data.n_vars
    if not 1 <= k <= n - 2:
        raise ValueError(f"a junction tree of width k over n = {n} variables needs "
                         f"1 <= k <= n - 2, got k={k}")
    if search not in ("lazy", "binary"):
        raise ValueError(f"search must be 'lazy' or 'binary', got {search!r}")
    q = k + 2 if q is None else q
    if q < 2:
        raise ValueError(f"q must be at least 2, got {q}")
    started = time.perf_counter()
    oracle = InformationOracle(data)
    seps = [frozenset(c) for c in itertools.combinations(range(n), k)]
    if search == "lazy":
        tree, delta, rounds = _lazy(n, seps, oracle, q, k)
    else:
        tree, delta, rounds = _binary(n, seps, oracle, q, k, data)
    stats = {"delta": delta, "entropies": oracle.cached, "oracle_calls": oracle.calls,
             "rounds": rounds, "search": search, "q": q,
             "seconds": time.perf_counter() - started}
    return ThinJunctionTree.fit(data, *tree, alpha=alpha, stats=stats)


def _lazy(n, seps, oracle, q, k):
    states = {s: _Separator(s, frozenset(range(n)) - s) for s in seps}
    delta, rounds = -math.inf, 0
    for state in states.values():               # at delta = -inf every tested edge holds
        _test_spanning_sets(state, oracle, delta, q, sizes=[2])
    def tree_at(d):
        return find_consistent_tree({s: st.components(d) for s, st in states.items()}, k)

    while True:
        rounds += 1
        tree = tree_at(delta)
        if tree is None:
            # the smallest tested strength at which a tree appears, by bisection over
            # the sorted strengths (a tree always exists once every edge is gone)
            above = sorted({v for st in states.values() for v in st.edges.values() if v > delta})
            lo, hi = 0, len(above) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                rounds += 1
                if tree_at(above[mid]) is None:
                    lo = mid + 1
                else:
                    hi = mid
            delta = above[lo]
            continue
        cliques, edges = tree
        used = {frozenset(set(cliques[i]) & set(cliques[j])) for i, j in edges}
        changed = False
        for sep in used:
            changed |= _test_spanning_sets(states[sep], oracle, delta, q, range(2, q + 1))
        if not changed:
            return tree, delta, rounds


def _binary(n, seps, oracle, q, k, data, steps: int = 12):
    low, high = 0.0, math.log(max(int(data.arities.max()), 2))
    best = None
    for _ in range(steps):
        mid = (low + high) / 2
        tree = find_consistent_tree({s: ltci(range(n), s, oracle, mid, q) for s in seps}, k)
        if tree is None:
            low = mid
        else:
            best, high = (tree, mid), mid
    if best is None:
        comps = {s: [frozenset([v]) for v in range(n) if v not in s] for s in seps}
        best = (find_consistent_tree(comps, k), high)
    return best[0], best[1], steps

