"""A binary min-heap in flat arrays, for the compiled best-first searches.

Entries are ``(f, d, node)`` kept in three arrays of one capacity: the smallest
``f`` comes first, and of equal ``f`` the larger ``d`` (the deeper node, the one
closer to a goal).  The caller owns the arrays and the size, so a heap lives in
a kernel's state between calls; :mod:`twlib.learn.order_graph` (A*) and
:mod:`twlib.inference.dive` (hybrid best-first) use it.

>>> f, d, node = np.empty(4), np.empty(4, dtype=np.int64), np.empty(4, dtype=np.int64)
>>> size = heap_push(f, d, node, 0, 2.0, 0, 7)
>>> size = heap_push(f, d, node, size, 1.0, 0, 8)
>>> heap_pop(f, d, node, size)
(1.0, 8, 1)
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["heap_push", "heap_pop"]


@nb.njit(cache=True)
def _heap_less(f1, d1, f2, d2):
    return f1 < f2 or (f1 == f2 and d1 > d2)


@nb.njit(cache=True)
def heap_push(heap_f, heap_d, heap_node, size, f, d, node):
    """Add ``(f, d, node)`` to the heap of ``size`` entries; returns the new size."""
    i = size
    heap_f[i] = f
    heap_d[i] = d
    heap_node[i] = node
    while i > 0:
        p = (i - 1) // 2
        if _heap_less(heap_f[i], heap_d[i], heap_f[p], heap_d[p]):
            heap_f[i], heap_f[p] = heap_f[p], heap_f[i]
            heap_d[i], heap_d[p] = heap_d[p], heap_d[i]
            heap_node[i], heap_node[p] = heap_node[p], heap_node[i]
            i = p
        else:
            break
    return size + 1


@nb.njit(cache=True)
def heap_pop(heap_f, heap_d, heap_node, size):
    """Remove the first entry; returns its ``f`` and ``node`` and the new size."""
    f, node = heap_f[0], heap_node[0]
    size -= 1
    heap_f[0], heap_d[0], heap_node[0] = heap_f[size], heap_d[size], heap_node[size]
    i = 0
    while True:
        left, right, m = 2 * i + 1, 2 * i + 2, i
        if left < size and _heap_less(heap_f[left], heap_d[left], heap_f[m], heap_d[m]):
            m = left
        if right < size and _heap_less(heap_f[right], heap_d[right], heap_f[m], heap_d[m]):
            m = right
        if m == i:
            break
        heap_f[i], heap_f[m] = heap_f[m], heap_f[i]
        heap_d[i], heap_d[m] = heap_d[m], heap_d[i]
        heap_node[i], heap_node[m] = heap_node[m], heap_node[i]
        i = m
    return f, node, size
