"""Queyranne's minimisation of a symmetric submodular set function (1998)."""
from __future__ import annotations

import math

import numpy as np

from ...errors import InputError

__all__ = ["queyranne"]


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

