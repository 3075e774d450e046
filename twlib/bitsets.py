"""Bit tricks on 64-bit words, shared by the compiled kernels that keep sets as bitsets.

A graph is kept as bitset rows: ``adj[v, w]`` holds the neighbours ``64 w .. 64 w + 63``
of ``v`` (uint64), and a set of vertices as one row of words.  The kernels are
numba-compiled and callable from other kernels or from Python; :func:`to_bool_rows`
and :func:`from_bool_rows` convert between bitset rows and bool rows in numpy.

>>> popcount(0b1011), lowest_index(0b1000)
(3, 3)
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["popcount", "lowest_index", "all_alive", "alive_neighbours", "eliminate_vertex",
           "missing_edges", "rows_of_scopes", "later_neighbours", "to_bool_rows",
           "from_bool_rows"]

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@nb.njit(cache=True)
def popcount(x):
    """Number of set bits of a 64-bit word (int64 or uint64), in constant time."""
    v = np.uint64(x)
    v = v - ((v >> np.uint64(1)) & _M1)
    v = (v & _M2) + ((v >> np.uint64(2)) & _M2)
    v = (v + (v >> np.uint64(4))) & _M4
    return np.int64((v * _H01) >> np.uint64(56))


@nb.njit(cache=True)
def lowest_index(x):
    """Index of the lowest set bit of a non-zero 64-bit word."""
    v = np.uint64(x)
    return popcount((v & (~v + np.uint64(1))) - np.uint64(1))


@nb.njit(cache=True)
def all_alive(n, n_words):
    """The set of vertices ``0 .. n - 1`` as ``n_words`` words."""
    alive = np.zeros(n_words, dtype=np.uint64)
    for v in range(n):
        alive[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    return alive


@nb.njit(cache=True)
def alive_neighbours(adj, alive, v, out):
    """Neighbours of ``v`` among the ``alive`` vertices into ``out``; return their number."""
    count = 0
    for w in range(adj.shape[1]):
        bits = adj[v, w] & alive[w]
        while bits:
            low = bits & (~bits + np.uint64(1))
            out[count] = w * 64 + lowest_index(low)
            count += 1
            bits ^= low
    return count


@nb.njit(cache=True)
def eliminate_vertex(adj, v, alive, nbr):
    """Eliminate ``v``: its alive neighbours into ``nbr``, made a clique (fill-in
    edges added to ``adj``), ``v`` removed from ``alive``; return their number."""
    count = alive_neighbours(adj, alive, v, nbr)
    for i in range(count):
        u = nbr[i]
        for j in range(count):
            if i != j:
                x = nbr[j]
                adj[u, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
    alive[v >> 6] &= ~(np.uint64(1) << np.uint64(v & 63))
    return count


@nb.njit(cache=True)
def missing_edges(adj, nbr, m, weight, weighted):
    """The fill-in of making ``nbr[:m]`` a clique: the number of pairs not yet
    adjacent or, with ``weighted``, the sum of ``weight[a] * weight[b]`` over them."""
    fill = 0.0
    for i in range(m):
        a = nbr[i]
        for j in range(i + 1, m):
            b = nbr[j]
            if not (adj[a, b >> 6] >> np.uint64(b & 63)) & np.uint64(1):
                fill += weight[a] * weight[b] if weighted else 1.0
    return fill


@nb.njit(cache=True)
def rows_of_scopes(n, ptr, var):
    """Bitset rows of the graph on vertices ``0 .. n - 1`` in which the vertices
    of each scope ``var[ptr[t]:ptr[t + 1]]`` form a clique (a model's
    interaction graph, without listing its edges first)."""
    adj = np.zeros((n, (n + 63) // 64), dtype=np.uint64)
    for t in range(ptr.shape[0] - 1):
        for i in range(ptr[t], ptr[t + 1]):
            for j in range(ptr[t], ptr[t + 1]):
                a, b = var[i], var[j]
                if a != b:
                    adj[a, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    return adj


@nb.njit(cache=True)
def later_neighbours(adj0, order):
    """Each vertex's neighbours when it is eliminated along ``order``, the graph
    ``adj0`` restricted to the vertices of ``order`` (its later neighbours in
    the filled graph), as ``(ptr, out)``: those of ``order[k]`` are
    ``out[ptr[k]:ptr[k + 1]]``, in increasing index.

    >>> adj = rows_of_scopes(3, np.array([0, 2, 4]), np.array([0, 1, 1, 2]))
    >>> ptr, out = later_neighbours(adj, np.array([0, 1, 2]))
    >>> ptr.tolist(), out.tolist()
    ([0, 1, 2, 2], [1, 2])
    """
    n, words = adj0.shape
    adj = adj0.copy()
    alive = np.zeros(words, dtype=np.uint64)
    for v in order:
        alive[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
    nbr = np.empty(n, dtype=np.int64)
    ptr = np.zeros(order.shape[0] + 1, dtype=np.int64)
    out = np.empty(max(16, 4 * n), dtype=np.int64)
    for k in range(order.shape[0]):
        m = eliminate_vertex(adj, order[k], alive, nbr)
        if ptr[k] + m > out.shape[0]:
            grown = np.empty(max(2 * out.shape[0], ptr[k] + m), dtype=np.int64)
            grown[:ptr[k]] = out[:ptr[k]]
            out = grown
        out[ptr[k]:ptr[k] + m] = nbr[:m]
        ptr[k + 1] = ptr[k] + m
    return ptr, out[:ptr[-1]].copy()


def to_bool_rows(words: np.ndarray, n: int) -> np.ndarray:
    """Bitset rows (uint64, one row per set) as bool rows over ``n`` elements.

    >>> to_bool_rows(np.array([[0b101]], dtype=np.uint64), 4).tolist()
    [[True, False, True, False]]
    """
    words = np.ascontiguousarray(words, dtype=np.uint64)
    bits = np.unpackbits(words.view(np.uint8), axis=1, count=64 * words.shape[1],
                         bitorder="little")
    return bits[:, :n].astype(bool)


def from_bool_rows(rows: np.ndarray) -> np.ndarray:
    """Bool rows as bitset rows (uint64, ``ceil(n / 64)`` words each).

    >>> from_bool_rows(np.array([[True, False, True]])).tolist()
    [[5]]
    """
    rows = np.asarray(rows, dtype=bool)
    words = (rows.shape[1] + 63) // 64
    padded = np.zeros((rows.shape[0], 64 * words), dtype=bool)
    padded[:, :rows.shape[1]] = rows
    return np.packbits(padded, axis=1, bitorder="little").view(np.uint64)
