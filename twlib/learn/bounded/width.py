"""Bitset kernels of the width check: moral graphs, elimination along an order,
min-fill, and the directed-path test that keeps a move acyclic.

A graph on ``n`` vertices is an ``(n, ceil(n / 64))`` array of ``uint64``
adjacency words; parent rows are ``(n, k)`` arrays padded with -1.
"""
from __future__ import annotations

import heapq

import numba as nb
import numpy as np

from ...bitsets import (alive_neighbours, all_alive, eliminate_vertex, lowest_index, missing_edges,
                        popcount)


@nb.njit(cache=True)
def moral_bits(pa, n_words):
    """Adjacency bitsets of the moral graph of the DAG with parent rows ``pa`` (-1 padded)."""
    n = pa.shape[0]
    adj = np.zeros((n, n_words), dtype=np.uint64)
    one = np.uint64(1)
    for v in range(n):
        for a in range(pa.shape[1]):
            p = pa[v, a]
            if p < 0:
                break
            adj[v, p >> 6] |= one << np.uint64(p & 63)
            adj[p, v >> 6] |= one << np.uint64(v & 63)
            for b in range(a + 1, pa.shape[1]):
                q = pa[v, b]
                if q < 0:
                    break
                adj[p, q >> 6] |= one << np.uint64(q & 63)
                adj[q, p >> 6] |= one << np.uint64(p & 63)
    return adj


def parent_rows(parents, k):
    """Parent lists (a sequence, or a dict keyed 0..n-1) as the kernels' rows, -1 padded."""
    items = parents.items() if isinstance(parents, dict) else enumerate(parents)
    pa = np.full((len(parents), k), -1, dtype=np.int64)
    for v, ps in items:
        pa[v, :len(ps)] = ps
    return pa


@nb.njit(cache=True)
def filled_graph(adj0, order):
    """The graph plus the fill-in of eliminating ``order``: a chordal supergraph whose
    cliques have at most width + 1 vertices."""
    n, n_words = adj0.shape
    adj = adj0.copy()
    alive = all_alive(n, n_words)
    nbr = np.empty(n, dtype=np.int64)
    for v in order:
        eliminate_vertex(adj, v, alive, nbr)
    return adj


@nb.njit(cache=True)
def width_along(adj0, order, k):
    """Width of eliminating ``order``; stops at the first clique wider than ``k``."""
    n, n_words = adj0.shape
    adj = adj0.copy()
    alive = all_alive(n, n_words)
    nbr = np.empty(n, dtype=np.int64)
    width = 0
    for v in order:
        c = eliminate_vertex(adj, v, alive, nbr)
        if c > width:
            width = c
            if width > k:
                return width
    return width


_NO_WEIGHTS = np.ones(0)


@nb.njit(cache=True)
def _cost(adj, alive, v, k, nbr):
    """Remaining degree of ``v`` and its fill-in (-1 when the degree exceeds ``k``)."""
    deg = 0
    for w in range(adj.shape[1]):
        deg += popcount(adj[v, w] & alive[w])
    if deg > k:
        return deg, -1
    alive_neighbours(adj, alive, v, nbr)
    return deg, int(missing_edges(adj, nbr, deg, _NO_WEIGHTS, False))


@nb.njit(cache=True)
def min_fill(adj0, k):
    """A min-fill order (ties: smaller degree, then index) and its width, or width k+1
    as soon as every remaining vertex has more than ``k`` neighbours left."""
    n = adj0.shape[0]
    return min_fill_after(adj0, np.arange(n), 0, k)


@nb.njit(cache=True)
def min_fill_after(adj0, order, start, k):
    """``order[:start]`` eliminated as it stands, then min-fill on the rest: the
    new order (its prefix kept) and its width, or width > k as soon as the prefix
    or every remaining vertex has more than ``k`` neighbours left.

    The incremental width check: when a move changes only edges among vertices
    placed at ``start`` or later in a certificate order, every earlier vertex
    meets the same neighbours when it is eliminated, so only the suffix needs a
    new order.  Costs are kept per vertex and refreshed only around each
    eliminated vertex (its neighbours and theirs), the only places where degree
    or fill change; the cheapest vertex comes from a heap whose stale entries
    are skipped when popped."""
    n, n_words = adj0.shape
    adj = adj0.copy()
    alive = all_alive(n, n_words)
    out = order.copy()
    elim = np.empty(n, dtype=np.int64)
    width = 0
    for step in range(start):
        c = eliminate_vertex(adj, order[step], alive, elim)
        if c > width:
            width = c
            if width > k:
                return out, width
    nbr = np.empty(n, dtype=np.int64)
    around = np.empty(n + 1, dtype=np.int64)
    deg = np.empty(n, dtype=np.int64)
    fill = np.empty(n, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    done = np.zeros(n, dtype=np.bool_)
    heap = [(np.int64(0), np.int64(0), np.int64(0))]     # (fill, degree, vertex), lazily
    heap.pop()                                          # invalidated: popped if still true
    for i in range(start, n):
        v = order[i]
        deg[v], fill[v] = _cost(adj, alive, v, k, nbr)
        if fill[v] >= 0:
            heapq.heappush(heap, (fill[v], deg[v], v))
    for step in range(start, n):
        best = -1
        while heap:
            f, d, v = heapq.heappop(heap)
            if not done[v] and f == fill[v] and d == deg[v]:
                best = v
                break
        if best < 0:
            return out, k + 1
        c = eliminate_vertex(adj, best, alive, elim)
        width = max(width, c)
        done[best] = True
        out[step] = best
        for i in range(c):
            u = elim[i]
            around[0] = u
            a = 1 + alive_neighbours(adj, alive, u, around[1:])
            for j in range(a):
                y = around[j]
                if stamp[y] != step:
                    stamp[y] = step
                    deg[y], fill[y] = _cost(adj, alive, y, k, nbr)
                    if fill[y] >= 0:
                        heapq.heappush(heap, (fill[y], deg[y], y))
    return out, width


@nb.njit(cache=True)
def later_neighbours(adj0, order):
    """The filled graph of eliminating ``order``, in position space: row ``i`` holds
    the positions of the neighbours ``order[i]`` still has when it is eliminated
    (all later than ``i``).  Returns the rows and each vertex's position.

    These rows are a chordal graph with the identity as a perfect elimination
    order, so the largest row is the width of ``order``; :func:`close_fill` keeps
    them up to date when edges are added, as hc-ET keeps its elimination tree."""
    n, n_words = adj0.shape
    position = np.empty(n, dtype=np.int64)
    for i in range(n):
        position[order[i]] = i
    adj = adj0.copy()
    alive = all_alive(n, n_words)
    nbr = np.empty(n, dtype=np.int64)
    rows = np.zeros((n, n_words), dtype=np.uint64)
    for i in range(n):
        for j in range(eliminate_vertex(adj, order[i], alive, nbr)):
            p = position[nbr[j]]
            rows[i, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    return rows, position


@nb.njit(cache=True)
def _row_of(rows, scratch, slot, i):
    return scratch[slot[i]] if slot[i] >= 0 else rows[i]


@nb.njit(cache=True)
def _writable(rows, scratch, slot, touched, count, i):
    """Row ``i``'s copy in ``scratch`` (made on first use); returns the new count."""
    if slot[i] < 0:
        slot[i] = count
        touched[count] = i
        scratch[count] = rows[i]
        count += 1
    return count


@nb.njit(cache=True)
def close_fill(rows, pairs, k, scratch, slot, touched):
    """Add the edges ``pairs`` (positions) to the filled graph ``rows`` (see
    :func:`later_neighbours`) and close it again, without changing ``rows``.

    Fill only flows to later positions: an eliminated vertex's later neighbours
    must all be neighbours of the first of them.  So the rows that gain
    neighbours are visited in position order, each passing what its first
    later neighbour lacks on to that neighbour; every other row keeps its
    first later neighbour and that neighbour only grows.  A row is final when
    it is visited, so the check stops at the first one holding more than ``k``.

    The changed rows go to ``scratch`` (``slot[i]`` its index there, -1 when row
    ``i`` is unchanged; ``touched`` lists them).  Returns their number, to be
    applied by :func:`apply_fill`, or -1 when the width would exceed ``k``
    (``slot`` is then reset)."""
    n, n_words = rows.shape
    one = np.uint64(1)
    pending = np.zeros(n_words, dtype=np.uint64)
    count = 0
    for e in range(pairs.shape[0]):
        a, b = min(pairs[e, 0], pairs[e, 1]), max(pairs[e, 0], pairs[e, 1])
        if a == b or (_row_of(rows, scratch, slot, a)[b >> 6] >> np.uint64(b & 63)) & one:
            continue
        count = _writable(rows, scratch, slot, touched, count, a)
        scratch[slot[a], b >> 6] |= one << np.uint64(b & 63)
        pending[a >> 6] |= one << np.uint64(a & 63)
    word = 0
    while word < n_words:
        if pending[word] == 0:
            word += 1
            continue
        x = word * 64 + lowest_index(pending[word])
        pending[word] &= ~(one << np.uint64(x & 63))
        row = scratch[slot[x]]
        size, first = 0, -1
        for w in range(x >> 6, n_words):
            size += popcount(row[w])
            if first < 0 and row[w]:
                first = w * 64 + lowest_index(row[w])
        if size > k:
            for i in range(count):
                slot[touched[i]] = -1
            return -1
        if first < 0:
            continue
        target = _row_of(rows, scratch, slot, first)
        grows = False
        for w in range(first >> 6, n_words):
            need = row[w] & ~target[w]
            if w == first >> 6:
                need &= ~(one << np.uint64(first & 63))
            if need:
                grows = True
                break
        if not grows:
            continue
        count = _writable(rows, scratch, slot, touched, count, first)
        target = scratch[slot[first]]
        for w in range(first >> 6, n_words):
            target[w] |= row[w]
        target[first >> 6] &= ~(one << np.uint64(first & 63))
        pending[first >> 6] |= one << np.uint64(first & 63)
    return count


@nb.njit(cache=True)
def apply_fill(rows, scratch, slot, touched, count):
    """Write the rows :func:`close_fill` changed into ``rows``; reset ``slot``."""
    for i in range(count):
        rows[touched[i]] = scratch[i]
        slot[touched[i]] = -1


@nb.njit(cache=True)
def reaches(pa, source, target, skip_child, skip_parent):
    """Whether a directed path ``source -> ... -> target`` exists, ignoring the one arc
    ``skip_parent -> skip_child`` (pass -1 to ignore none).  Walks parents from target."""
    n = pa.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    stack[0] = target
    top = 1
    seen[target] = True
    while top:
        top -= 1
        v = stack[top]
        for a in range(pa.shape[1]):
            p = pa[v, a]
            if p < 0:
                break
            if v == skip_child and p == skip_parent:
                continue
            if p == source:
                return True
            if not seen[p]:
                seen[p] = True
                stack[top] = p
                top += 1
    return False

