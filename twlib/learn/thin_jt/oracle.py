"""The information oracle: conditional mutual information of small variable sets
from data, every joint entropy computed once (compiled, on bit masks)."""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from ...data import Dataset
from ...errors import InputError
from .masks import MAX_VARIABLES, find_root, mask_of

__all__ = ["InformationOracle"]

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
        first = find_root(parent, idx[0])
        spans = False
        for i in range(1, size):
            if find_root(parent, idx[i]) != first:
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
                        parent[find_root(parent, idx[i])] = find_root(parent, idx[0])
        i = size - 1
        while i >= 0 and idx[i] == m - size + i:
            i -= 1
        if i < 0:
            return evaluated
        idx[i] += 1
        for j in range(i + 1, size):
            idx[j] = idx[j - 1] + 1


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

    MAX_VARIABLES = MAX_VARIABLES

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
        return mask_of(variables)

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

    def strength(self, subset, *, separator=()) -> float:
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

    def merge_pass(self, sep_mask, rest, parent, size, delta, *, tested=None, touching=-1) -> int:
        """Run the compiled LTCI pass (see ``_merge_pass``); counts the strengths."""
        record = tested is not None
        if tested is None:
            tested = nb.typed.Dict.empty(nb.types.int64, nb.types.float64)
        done = _merge_pass(self.cache, self.values_t, self.arities, sep_mask, rest, parent,
                           size, delta, tested, record, touching, self.cells, self.keys)
        self.strengths += done
        return done

    @property
    def cached(self) -> int:
        """Number of joint entropies computed so far."""
        return len(self.cache)

