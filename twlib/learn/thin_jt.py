"""Building blocks of LPACJT, thin junction trees with PAC guarantees
(Chechetka & Guestrin 2007).

* :class:`InformationOracle` answers ``I(A; B | S)`` from data for the small sets
  the method asks about, caching every joint entropy it computes;
* :func:`queyranne` minimises a symmetric submodular set function with
  ``O(n^3)`` evaluations (Queyranne 1998);
* :func:`ltci` (the paper's Algorithm 2) partitions the variables outside a
  separator ``S`` into groups that ``S`` cannot separate: it merges the groups of
  every small set ``A`` whose weakest split ``min_X I(X; A - X | S)`` exceeds a
  threshold.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..data import Dataset
from ..information import entropy

__all__ = ["InformationOracle", "queyranne", "ltci", "split_strength"]


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

    def entropy(self, variables) -> float:
        key = frozenset(variables)
        if key not in self._entropy:
            self._entropy[key] = entropy(self.data, sorted(key))
        return self._entropy[key]

    def __call__(self, a, b, s=()) -> float:
        a, b, s = frozenset(a), frozenset(b), frozenset(s)
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
    the variables of ``A`` hang together given ``S`` (by Queyranne's algorithm)."""
    subset, separator = frozenset(subset), frozenset(separator)
    return queyranne(lambda x: oracle(x, subset - x, separator) if x != subset else 0.0,
                     sorted(subset))[0]


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
