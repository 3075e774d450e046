"""Empirical entropy and mutual information of discrete data.

All quantities use plug-in (maximum-likelihood) frequencies and are in nats
unless ``base`` says otherwise (``base=2`` for bits).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from .counting import count
from .data import Dataset
from .errors import InputError

__all__ = ["entropy", "mutual_information", "mutual_information_matrix",
           "conditional_mutual_information"]


def _resolve(data: Dataset, variables):
    if isinstance(variables, (str, int, np.integer)):
        variables = [variables]
    idx = data.indices(variables)
    if len(set(idx)) != len(idx):
        raise InputError(f"repeated variables in {list(variables)}")
    return idx


def _entropy_of_counts(counts: np.ndarray, n: int) -> float:
    c = counts[counts > 0].astype(np.float64)
    return float(math.log(n) - np.dot(c, np.log(c)) / n)


def entropy(data: Dataset, variables, *, base: float = math.e) -> float:
    """Joint entropy ``H(S)`` of a set of variables; ``H(empty set) = 0``.

    >>> import pandas as pd
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1]}))
    >>> round(entropy(ds, ["a"], base=2), 6)
    1.0
    """
    idx = _resolve(data, variables)
    if not idx:
        return 0.0
    _, counts = count(data.values, idx, data.arities[idx]).nonzero()
    return _entropy_of_counts(counts, data.n_rows) / math.log(base)


def mutual_information(data: Dataset, x, y, *, base: float = math.e) -> float:
    """``I(X; Y) = H(X) + H(Y) - H(X, Y)`` for two variable sets (or names)."""
    return conditional_mutual_information(data, x, y, [], base=base)


def conditional_mutual_information(data: Dataset, a, b, c=(), *, base: float = math.e) -> float:
    """``I(A; B | C) = H(A,C) + H(B,C) - H(A,B,C) - H(C)`` for disjoint sets.

    Sparse counting keeps this cheap for the small sets (``|A|+|B|+|C| <= 2k+2``)
    that thin junction trees ask about.
    """
    ia, ib, ic = _resolve(data, a), _resolve(data, b), _resolve(data, c)
    if set(ia) & set(ib) or set(ia) & set(ic) or set(ib) & set(ic):
        raise InputError("A, B and C must be disjoint variable sets")
    if not ia or not ib:
        raise InputError("A and B must each hold at least one variable")
    h = (entropy(data, ia + ic, base=base) + entropy(data, ib + ic, base=base)
         - entropy(data, ia + ib + ic, base=base) - entropy(data, ic, base=base))
    return max(h, 0.0)   # clamps rounding noise of order 1e-16


@nb.njit(parallel=True, cache=True)
def _mi_matrix_kernel(values_t, arities, pair_a, pair_b):
    n_vars, n = values_t.shape
    out = np.zeros((n_vars, n_vars))
    # entropies of single variables
    h1 = np.zeros(n_vars)
    for v in nb.prange(n_vars):
        c = np.zeros(arities[v], dtype=np.int64)
        for i in range(n):
            c[values_t[v, i]] += 1
        s = 0.0
        for k in range(arities[v]):
            if c[k] > 0:
                s += c[k] * math.log(c[k])
        h1[v] = math.log(n) - s / n
    for p in nb.prange(pair_a.shape[0]):
        a = pair_a[p]
        b = pair_b[p]
        rb = arities[b]
        c = np.zeros(arities[a] * rb, dtype=np.int64)
        for i in range(n):
            c[values_t[a, i] * rb + values_t[b, i]] += 1
        s = 0.0
        for k in range(c.shape[0]):
            if c[k] > 0:
                s += c[k] * math.log(c[k])
        mi = h1[a] + h1[b] - (math.log(n) - s / n)
        if mi < 0.0:
            mi = 0.0
        out[a, b] = mi
        out[b, a] = mi
    return out


def mutual_information_matrix(data: Dataset, *, base: float = math.e) -> np.ndarray:
    """Pairwise mutual information ``I(X_i; X_j)`` of all variables (zero diagonal).

    Computed in parallel over pairs; symmetric and non-negative.

    >>> import pandas as pd
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1] * 4, "b": [0, 1] * 4}))
    >>> np.round(mutual_information_matrix(ds, base=2), 6).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    values_t = data.columns
    pair_a, pair_b = np.triu_indices(data.n_vars, k=1)
    return _mi_matrix_kernel(values_t, data.arities, pair_a.astype(np.int64),
                             pair_b.astype(np.int64)) / math.log(base)
