"""Variable sets as int64 bit masks, and the union-find pieces LPACJT shares.

Sets of variable indices are bit masks, so the package handles at most
``MAX_VARIABLES`` variables (the joint-state keys of a set must fit 64 bits too).

>>> mask_of([0, 2]), sorted(members(5))
(5, [0, 2])
"""
from __future__ import annotations

import numba as nb
import numpy as np

MAX_VARIABLES = 62


def mask_of(variables) -> int:
    """The bit mask of a collection of variable indices."""
    return sum(1 << v for v in variables)


def members(mask: int) -> frozenset:
    """The variable indices of a bit mask."""
    return frozenset(v for v in range(mask.bit_length()) if mask >> v & 1)


@nb.njit(cache=True)
def find_root(parent, i):
    """Union-find root of ``i``, halving the path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@nb.njit(cache=True)
def component_masks(rest, roots):
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


@nb.njit(cache=True)
def final_components(rest, parent):
    """Component masks of the union-find forest ``parent`` over positions of ``rest``."""
    # a separate entry point: numba's cache fails to return arrays to Python from a
    # function that another cached function also calls (``component_masks``)
    roots = np.empty(rest.shape[0], dtype=np.int64)
    for i in range(rest.shape[0]):
        roots[i] = find_root(parent, i)
    return component_masks(rest, roots)
