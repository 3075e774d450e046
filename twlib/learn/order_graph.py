"""Optimal Bayesian networks by search in the order graph (Wu 2010; Yuan, Malone & Wu 2011).

The order graph has one node per subset ``U`` of the variables: the variables
already placed in a topological order.  The edge ``U -> U + {X}`` costs
``-BestScore(X, U)``, the negated score of ``X``'s best parent set inside ``U``.
Every path from the empty set to the full set is an order, and its cost is the
negated score of the best network consistent with that order, so a shortest
path gives an optimal network.

* :func:`learn` takes data, scores the candidate parent sets and runs one of:
* :func:`dp` evaluates every node (Silander & Myllymaki 2006; Singh & Moore).
* :func:`astar` searches best-first with an admissible, consistent heuristic:
  ``"simple"`` (Wu 2010, Theorem 2: every remaining variable gets its best
  parent set with acyclicity ignored), ``"pd"`` (a static pattern database:
  acyclicity is kept inside groups of variables; Yuan & Malone 2012) or
  ``"zero"`` (Dijkstra).

Costs are negated scores (minimised); results report scores (maximised).
Variables are bits of a uint64, so at most 64 of them.
"""
from __future__ import annotations

import math
import time

import networkx as nx
import numba as nb
import numpy as np
import pandas as pd

from ..bitsets import popcount
from ..data import Dataset, as_dataset
from ..errors import BudgetExceeded, InputError, InternalError, WrongType
from ..heaps import heap_pop, heap_push
from ..scores import ParentSetScores
from .result import LearnResult, fit_to_scores

__all__ = ["learn", "dp", "astar", "best_parents", "remaining_cost_table", "optimal_order",
           "order_dp", "order_dp_tables", "best_cost_tables",
           "orders_without_pairs", "chosen_for_order", "best_within",
           "HEURISTICS", "BYTES_PER_NODE"]

HEURISTICS = ("zero", "simple", "pd")
BYTES_PER_NODE = 96          # measured ~70 on 67M nodes (wdbc); headroom for array doubling
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


# --------------------------------------------------------------------- kernels
@nb.njit(cache=True)
def best_within(var, cand, masks, costs, offsets):
    """Cost and index of ``var``'s best kept parent set inside the bitset ``cand``
    (``-1``: none): the first of its candidates, sorted by cost, that fits.
    ``masks``, ``costs`` and ``offsets`` are the flat candidate lists of
    :func:`optimal_order`."""
    for t in range(offsets[var], offsets[var + 1]):
        if masks[t] & ~cand == _ZERO:
            return costs[t], t
    return np.inf, -1


@nb.njit(cache=True)
def order_dp(n, masks, costs, offsets):
    """The order-graph DP over all ``2^n`` subsets: ``total[U]``, the least cost
    of placing the variables of ``U`` first, and ``leaf[U]``, the variable best
    placed last among them (``-1``: none fits)."""
    size = 1 << n
    total = np.empty(size)
    leaf = np.empty(size, dtype=np.int8)
    total[0] = 0.0
    leaf[0] = -1
    for u in range(1, size):
        cand_all = np.uint64(u)
        best = np.inf
        best_leaf = -1
        for x in range(n):
            bit = _ONE << np.uint64(x)
            if cand_all & bit == _ZERO:
                continue
            prev = cand_all & ~bit
            c, _ = best_within(x, prev, masks, costs, offsets)
            c += total[np.int64(prev)]
            if c < best:
                best = c
                best_leaf = x
        total[u] = best
        leaf[u] = best_leaf
    return total, leaf


@nb.njit(cache=True)
def _drop_bit(mask, x):
    """``mask`` (no bit ``x``) with the bits above ``x`` moved down one place."""
    low = mask & ((_ONE << np.uint64(x)) - _ONE)
    return np.int64(low | ((mask >> np.uint64(x + 1)) << np.uint64(x)))


@nb.njit(cache=True)
def _fill_table(x, row, masks, costs, offsets, n):
    """Variable ``x``'s row of :func:`best_cost_tables`."""
    for t in range(offsets[x], offsets[x + 1]):
        u = _drop_bit(masks[t], x)
        if costs[t] < row[u]:
            row[u] = costs[t]
    for b in range(n - 1):
        bit = 1 << b
        for u in range(row.size):
            if u & bit and row[u ^ bit] < row[u]:
                row[u] = row[u ^ bit]


@nb.njit(cache=True)
def _tables_serial(n, masks, costs, offsets):
    table = np.full((n, 1 << (n - 1)), np.inf)
    for x in range(n):
        _fill_table(x, table[x], masks, costs, offsets, n)
    return table


@nb.njit(cache=True, parallel=True)
def _tables_parallel(n, masks, costs, offsets):
    table = np.full((n, 1 << (n - 1)), np.inf)
    for x in nb.prange(n):
        _fill_table(x, table[x], masks, costs, offsets, n)
    return table


# a thread pool per call costs milliseconds, more than the whole table below about 14
# variables
_PARALLEL_FROM = 14


def best_cost_tables(n, masks, costs, offsets):
    """``table[x, U]``: the least cost of ``x``'s candidates inside ``U``, for every
    subset ``U`` of the other variables (indexed with ``x``'s bit dropped, see
    :func:`_drop_bit`): each candidate's cost at its own set, then a running
    minimum over subsets, one bit at a time; the variables' tables in parallel
    from 14 variables on."""
    build = _tables_parallel if n >= _PARALLEL_FROM else _tables_serial
    return build(n, masks, costs, offsets)


@nb.njit(cache=True)
def order_dp_tables(n, table):
    """:func:`order_dp` reading each variable's best cost from :func:`best_cost_tables`,
    and pushing forward: each subset, once final, offers itself to every variable it
    lacks (one lookup per edge of the order graph instead of a scan of candidates)."""
    size = 1 << n
    total = np.full(size, np.inf)
    leaf = np.full(size, -1, dtype=np.int8)
    total[0] = 0.0
    for prev in range(size - 1):
        here = total[prev]
        for x in range(n):
            if (prev >> x) & 1:
                continue
            c = here + table[x, _drop_bit(np.uint64(prev), x)]
            u = prev | (1 << x)
            if c < total[u]:
                total[u] = c
                leaf[u] = x
    return total, leaf


@nb.njit(cache=True)
def _with_pair(r, a, b):
    """The subset holding ``a`` and ``b`` (``a < b``) whose other members are the bits
    of ``r`` spread over the other positions (the inverse of dropping both bits)."""
    r = (r & ((1 << a) - 1)) | ((r >> a) << (a + 1))
    r = (r & ((1 << b) - 1)) | ((r >> b) << (b + 1))
    return r | (1 << a) | (1 << b)


@nb.njit(cache=True)
def _drop_pair(u, a, b):
    """The inverse of :func:`_with_pair`: ``u`` without bits ``a < b``, packed."""
    return _drop_bit(np.uint64(_drop_bit(np.uint64(u), b)), a)


@nb.njit(cache=True)
def _order_without(n, table, total, leaf, a, b, out):
    """The DP of :func:`order_dp_tables` (``total``, ``leaf``) redone without the
    candidates that put ``a`` and ``b`` (``a < b``) in one family: an optimal order
    into ``out`` (first to last; ``-1`` everywhere when none fits) and its total.

    Only the subsets holding both change: a set lacking one of them holds no
    family that held both.  Inside such a set, a variable's best remaining
    candidate lies inside the set less ``a`` or less ``b`` (``a``'s inside the
    set less ``b``), which the table holds."""
    quarter = np.empty(1 << (n - 2))
    quarter_leaf = np.empty(1 << (n - 2), dtype=np.int8)
    for r in range(quarter.size):
        u = _with_pair(r, a, b)
        best, best_leaf = np.inf, -1
        for x in range(n):
            if not (u >> x) & 1:
                continue
            prev = u ^ (1 << x)
            if x == a:
                c = total[prev] + table[x, _drop_bit(np.uint64(prev ^ (1 << b)), x)]
            elif x == b:
                c = total[prev] + table[x, _drop_bit(np.uint64(prev ^ (1 << a)), x)]
            else:
                c = quarter[_drop_pair(prev, a, b)] + min(
                    table[x, _drop_bit(np.uint64(prev ^ (1 << a)), x)],
                    table[x, _drop_bit(np.uint64(prev ^ (1 << b)), x)])
            if c < best:
                best, best_leaf = c, x
        quarter[r] = best
        quarter_leaf[r] = best_leaf
    u = (1 << n) - 1
    for place in range(n - 1, -1, -1):
        if (u >> a) & (u >> b) & 1:
            x = quarter_leaf[_drop_pair(u, a, b)]
        else:
            x = leaf[u]
        if x < 0:
            out[:] = -1
            return np.inf
        out[place] = x
        u ^= 1 << x
    return quarter[-1]


@nb.njit(cache=True)
def _orders_serial(n, table, pairs):
    total, leaf = order_dp_tables(n, table)
    totals = np.empty(pairs.shape[0])
    orders = np.empty((pairs.shape[0], n), dtype=np.int64)
    for i in range(pairs.shape[0]):
        totals[i] = _order_without(n, table, total, leaf, pairs[i, 0], pairs[i, 1], orders[i])
    return totals, orders


@nb.njit(cache=True, parallel=True)
def _orders_parallel(n, table, pairs):
    total, leaf = order_dp_tables(n, table)
    totals = np.empty(pairs.shape[0])
    orders = np.empty((pairs.shape[0], n), dtype=np.int64)
    for i in nb.prange(pairs.shape[0]):
        totals[i] = _order_without(n, table, total, leaf, pairs[i, 0], pairs[i, 1], orders[i])
    return totals, orders


def orders_without_pairs(table, pairs):
    """For each row ``(a, b)`` of ``pairs`` (``a < b``), the order-graph DP over the
    candidates of ``table`` (:func:`best_cost_tables`) less those that put ``a``
    and ``b`` in one family (as child and parent, or as two parents):
    ``(totals, orders)``, the least total and an optimal order (first to last)
    per pair.  One DP over every subset, then per pair only the quarter of the
    subsets that hold both (in parallel from 14 variables on).

    >>> masks = np.array([0, 2, 0, 1], dtype=np.uint64)   # 0 after 1, or 1 after 0
    >>> table = best_cost_tables(2, masks, np.array([1.0, 5.0, 0.5, 2.0]), np.array([0, 2, 4]))
    >>> totals, orders = orders_without_pairs(table, np.array([[0, 1]]))
    >>> totals.tolist()                                  # both families parentless
    [1.5]
    """
    n = table.shape[0]
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    build = _orders_parallel if n >= _PARALLEL_FROM else _orders_serial
    return build(n, table, pairs)


@nb.njit(cache=True)
def _pd_tables(n, group_starts, group_sizes, masks, costs, offsets):
    """Pattern database of each group of contiguous bits.

    ``table[g][R]`` is the least cost of placing the group's variables in ``R``
    (a bitset over the group) when every variable outside ``R`` may be a parent:
    acyclicity is enforced inside ``R`` only.  One DP over the subsets of each group.
    """
    n_groups = group_starts.shape[0]
    table_offsets = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups):
        table_offsets[g + 1] = table_offsets[g] + (1 << group_sizes[g])
    tables = np.empty(table_offsets[n_groups])
    everything = (~_ZERO) >> np.uint64(64 - n)
    for g in range(n_groups):
        start = group_starts[g]
        base = table_offsets[g]
        tables[base] = 0.0
        for r in range(1, 1 << group_sizes[g]):
            remaining = np.uint64(r) << np.uint64(start)
            best = np.inf
            for j in range(group_sizes[g]):
                if (r >> j) & 1 == 0:
                    continue
                x = start + j
                # x is placed first among R: its candidates are everything outside R
                c, _ = best_within(x, everything & ~remaining, masks, costs, offsets)
                c += tables[base + (r & ~(1 << j))]
                if c < best:
                    best = c
            tables[base + r] = best
    return tables, table_offsets


@nb.njit(cache=True)
def _group_term(remaining, g, pd, pd_offsets, group_starts, group_sizes):
    sub = (remaining >> np.uint64(group_starts[g])) & ((_ONE << np.uint64(group_sizes[g])) - _ONE)
    return pd[pd_offsets[g] + np.int64(sub)]


@nb.njit(cache=True)
def _heuristic(mask, everything, kind, best_cost, pd, pd_offsets, group_starts, group_sizes):
    """h of a node from scratch (used for the root)."""
    remaining = everything & ~mask
    h = 0.0
    if kind == 1:
        for x in range(best_cost.shape[0]):
            if remaining & (_ONE << np.uint64(x)) != _ZERO:
                h += best_cost[x]
    elif kind == 2:
        for g in range(group_starts.shape[0]):
            h += _group_term(remaining, g, pd, pd_offsets, group_starts, group_sizes)
    return h


@nb.njit(cache=True)
def _heuristic_step(h_u, umask, x, everything, kind, best_cost, pd, pd_offsets, group_starts,
                    group_sizes, group_of):
    """h of ``U + {x}`` from h of ``U``: only x's term (or x's group) changes."""
    if kind == 0:
        return 0.0
    if kind == 1:
        return h_u - best_cost[x]
    g = group_of[x]
    remaining = everything & ~umask
    return (h_u - _group_term(remaining, g, pd, pd_offsets, group_starts, group_sizes)
            + _group_term(remaining & ~(_ONE << np.uint64(x)), g, pd, pd_offsets, group_starts,
                          group_sizes))


@nb.njit(cache=True)
def _hash(mask):
    z = mask + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True)
def _find(table, node_mask, mask):
    """Slot of ``mask`` in the open-addressing table (value 0 = empty, else node + 1)."""
    cap = np.uint64(table.shape[0] - 1)
    slot = np.int64(_hash(mask) & cap)
    while True:
        v = table[slot]
        if v == 0 or node_mask[v - 1] == mask:
            return slot
        slot = (slot + 1) & np.int64(cap)


@nb.njit(cache=True)
def _astar_kernel(n, masks, costs, offsets, kind, best_cost, pd, pd_offsets, group_starts,
                  group_sizes, max_nodes, trace):
    everything = (~_ZERO) >> np.uint64(64 - n)
    group_of = np.empty(n, dtype=np.int64)
    for g in range(group_starts.shape[0]):
        group_of[group_starts[g]:group_starts[g] + group_sizes[g]] = g
    cap = 1024
    node_mask = np.empty(cap, dtype=np.uint64)
    node_g = np.empty(cap)
    node_h = np.empty(cap)
    node_prev = np.empty(cap, dtype=np.int32)
    node_leaf = np.empty(cap, dtype=np.int8)
    node_closed = np.zeros(cap, dtype=np.bool_)
    table = np.zeros(2 * cap, dtype=np.int32)
    heap_cap = cap
    heap_f = np.empty(heap_cap)
    heap_d = np.empty(heap_cap, dtype=np.int8)
    heap_node = np.empty(heap_cap, dtype=np.int32)
    trace_f = np.empty(1024 if trace else 0)
    n_trace = 0
    # root
    node_mask[0] = _ZERO
    node_g[0] = 0.0
    node_h[0] = _heuristic(_ZERO, everything, kind, best_cost, pd, pd_offsets, group_starts,
                           group_sizes)
    node_prev[0] = -1
    node_leaf[0] = -1
    table[_find(table, node_mask, _ZERO)] = 1
    n_nodes = 1
    heap_size = heap_push(heap_f, heap_d, heap_node, 0, node_h[0], 0, 0)
    expanded = 0
    edges = 0
    max_open = 1
    goal = -1
    last_f = node_h[0]
    status = 0                      # 0 optimal, 1 node limit
    while heap_size > 0:
        f, u, heap_size = heap_pop(heap_f, heap_d, heap_node, heap_size)
        if node_closed[u] or f > node_g[u] + node_h[u] + 1e-9 * (1.0 + abs(f)):
            continue                # a stale heap entry
        last_f = f
        if trace:
            if n_trace == trace_f.shape[0]:
                trace_f = np.concatenate((trace_f, np.empty(n_trace)))
            trace_f[n_trace] = f
            n_trace += 1
        if node_mask[u] == everything:
            goal = u
            break
        node_closed[u] = True
        expanded += 1
        if n_nodes + n > max_nodes:
            status = 1
            heap_size = heap_push(heap_f, heap_d, heap_node, heap_size, f, 0, u)
            node_closed[u] = False
            break
        umask = node_mask[u]
        depth = popcount(umask) + 1
        for x in range(n):
            bit = _ONE << np.uint64(x)
            if umask & bit != _ZERO:
                continue
            w = umask | bit
            slot = _find(table, node_mask, w)
            idx = table[slot] - 1
            if idx >= 0 and node_closed[idx]:
                continue            # consistent h: a closed node's g is already optimal
            c, _ = best_within(x, umask, masks, costs, offsets)
            edges += 1
            g = node_g[u] + c
            if idx < 0:
                if n_nodes == cap:  # grow node arrays and rehash
                    cap *= 2
                    node_mask = np.concatenate((node_mask, np.empty(cap // 2, dtype=np.uint64)))
                    node_g = np.concatenate((node_g, np.empty(cap // 2)))
                    node_h = np.concatenate((node_h, np.empty(cap // 2)))
                    node_prev = np.concatenate((node_prev, np.empty(cap // 2, dtype=np.int32)))
                    node_leaf = np.concatenate((node_leaf, np.empty(cap // 2, dtype=np.int8)))
                    node_closed = np.concatenate((node_closed, np.zeros(cap // 2, dtype=np.bool_)))
                    table = np.zeros(2 * cap, dtype=np.int32)
                    for k in range(n_nodes):
                        table[_find(table, node_mask, node_mask[k])] = k + 1
                    slot = _find(table, node_mask, w)
                idx = n_nodes
                n_nodes += 1
                node_mask[idx] = w
                node_h[idx] = _heuristic_step(node_h[u], umask, x, everything, kind, best_cost,
                                              pd, pd_offsets, group_starts, group_sizes,
                                              group_of)
                node_g[idx] = g
                node_prev[idx] = u
                node_leaf[idx] = x
                table[slot] = idx + 1
            elif g < node_g[idx]:
                node_g[idx] = g
                node_prev[idx] = u
                node_leaf[idx] = x
            else:
                continue
            if heap_size == heap_cap:
                heap_cap *= 2
                heap_f = np.concatenate((heap_f, np.empty(heap_cap // 2)))
                heap_d = np.concatenate((heap_d, np.empty(heap_cap // 2, dtype=np.int8)))
                heap_node = np.concatenate((heap_node, np.empty(heap_cap // 2, dtype=np.int32)))
            heap_size = heap_push(heap_f, heap_d, heap_node, heap_size,
                                   g + node_h[idx], depth, idx)
            if heap_size > max_open:
                max_open = heap_size
    stats = np.array([n_nodes, expanded, edges, max_open], dtype=np.int64)
    return (status, goal, last_f, stats, node_mask[:n_nodes], node_g[:n_nodes],
            node_h[:n_nodes], node_prev[:n_nodes], node_leaf[:n_nodes],
            node_closed[:n_nodes], trace_f[:n_trace])


# ------------------------------------------------------------------ python side
class _Problem:
    """Kept parent sets relabelled so that pattern-database groups are contiguous bits."""

    def __init__(self, pss: ParentSetScores, order=None):
        if not isinstance(pss, ParentSetScores):
            raise WrongType("expected a ParentSetScores table")
        n = pss.n_vars
        if n > 64:
            raise InputError(f"the order graph over {n} variables does not fit 64-bit masks "
                             "(at most 64 variables)")
        if n < 1:
            raise InputError("no variables")
        self.pss = pss
        self.n = n
        self.order = list(range(n)) if order is None else list(order)   # new bit -> variable
        position = np.empty(n, dtype=np.int64)
        position[self.order] = np.arange(n)
        masks, scores, offsets = pss.flat_arrays()
        # remap every parent bitset into the new labels
        remapped = np.zeros_like(masks)
        for v in range(n):
            hit = (masks >> np.uint64(v)) & _ONE
            remapped |= hit << np.uint64(position[v])
        sizes = np.diff(offsets)
        lo = offsets[self.order]
        self.offsets = np.concatenate([[0], np.cumsum(sizes[self.order])]).astype(np.int64)
        take = np.concatenate([np.arange(a, a + s) for a, s in zip(lo, sizes[self.order])])
        self.masks = remapped[take]
        self.costs = -scores[take]
        self.index = take                      # flat index in pss order of each entry
        self.best_cost = self.costs[self.offsets[:-1]]   # unconstrained best of each variable

    def network_from_leaves(self, leaves):
        """Parents (names) of the order that places ``leaves`` (new labels) one by one."""
        placed = _ZERO
        parents = {}
        total = 0.0
        for x in leaves:
            c, t = best_within(x, placed, self.masks, self.costs, self.offsets)
            var = self.order[x]
            row = self.pss.parent_arrays(var)[0][t - self.offsets[x]]
            parents[self.pss.names[var]] = [self.pss.names[p] for p in row if p >= 0]
            total += c
            placed |= _ONE << np.uint64(x)
        return parents, -total


def best_parents(pss: ParentSetScores, var, candidates):
    """``BestScore(X, U)`` through the compiled query: ``(score, parent names)``.

    Same answer as :meth:`ParentSetScores.best`, by the kernel the searches use.
    """
    masks, scores, offsets = pss.flat_arrays()
    i = pss.names.index(var) if not isinstance(var, (int, np.integer)) else int(var)
    cand = pss.mask_of([c for c in candidates if c != pss.names[i]])[0]
    c, t = best_within(i, cand, masks, -scores, offsets)
    row = pss.parent_arrays(i)[0][t - offsets[i]]
    return -c, tuple(pss.names[p] for p in row if p >= 0)


def optimal_order(masks, costs, offsets, *, tables: bool = False):
    """The order-graph DP on raw candidate lists: the cheapest way to choose one
    candidate per variable so that the choices fit one order.

    Variable ``v`` (``0 <= v < n <= 25``) has candidates ``offsets[v]`` to
    ``offsets[v + 1] - 1``, each with a bitset ``masks[t]`` of the variables
    that must come before ``v`` and a cost ``costs[t]``, sorted by cost within
    each variable.  Returns ``(order, chosen, total)``: an order of the
    variables, the candidate index each takes, and the least total cost
    (``inf`` when no order admits a candidate for every variable).
    ``tables=True`` first tabulates every variable's best cost inside every
    subset (:func:`best_cost_tables`, ``n 2^(n-1)`` floats: 370 MB at 22
    variables), which pays when the candidate lists are long.

    >>> masks = np.array([0, 2, 0, 1], dtype=np.uint64)   # 0 after 1, or 1 after 0
    >>> costs = np.array([1.0, 5.0, 0.5, 2.0])
    >>> order, chosen, total = optimal_order(masks, costs, np.array([0, 2, 4]))
    >>> order, chosen.tolist(), total
    ([1, 0], [0, 2], 1.5)
    """
    masks = np.asarray(masks, dtype=np.uint64)
    costs = np.asarray(costs, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    n = offsets.size - 1
    if not 1 <= n <= 25:
        raise InputError(f"optimal_order takes 1 to 25 variables, got {n}")
    if tables:
        total, leaf = order_dp_tables(n, best_cost_tables(n, masks, costs, offsets))
    else:
        total, leaf = order_dp(n, masks, costs, offsets)
    if not np.isfinite(total[-1]):
        return [], np.full(n, -1), np.inf
    order = _dp_order(leaf, n)
    return order, chosen_for_order(order, masks, costs, offsets), float(total[-1])


def chosen_for_order(order, masks, costs, offsets) -> np.ndarray:
    """Each variable's best candidate (its index) inside the variables before it in ``order``."""
    chosen = np.empty(offsets.size - 1, dtype=np.int64)
    placed = _ZERO
    for x in order:
        chosen[x] = best_within(x, placed, masks, costs, offsets)[1]
        placed |= _ONE << np.uint64(x)
    return chosen


def _dp_gib(n: int) -> float:
    """GiB the DP's tables take over n variables (a float64 total and an int8 leaf per subset)."""
    return (1 << n) * 9 / 2**30


def _dp_order(leaf, n) -> list:
    """The optimal order the DP's ``leaf`` table encodes: from the full set, drop
    each subset's best last variable in turn."""
    leaves, u = [], (1 << n) - 1
    while u:
        x = int(leaf[u])
        leaves.append(x)
        u &= ~(1 << x)
    return leaves[::-1]


def _astar_path(node_leaf, node_prev, u) -> list:
    """The variables placed on the search path to node ``u``, first to last."""
    leaves = []
    while node_leaf[u] >= 0:
        leaves.append(int(node_leaf[u]))
        u = node_prev[u]
    return leaves[::-1]


def _result(problem, parents, score, status, stats, started):
    pss = problem.pss
    stats = dict(stats, score=pss.score, seconds=time.perf_counter() - started)
    return LearnResult(network=fit_to_scores(pss, parents, "order-graph"), score=score,
                       status=status, stats=stats, parents=parents, knowledge=pss.knowledge)


def dp(pss: ParentSetScores, *, max_memory_gb: float = 4.0) -> LearnResult:
    """Optimal network by dynamic programming over all ``2^n`` subsets.

    Every node and edge of the order graph is evaluated
    (``stats["nodes"] = 2^n``, ``stats["edges"] = n 2^(n-1)``).  Refuses, with a
    clear ValueError, problems whose tables would exceed ``max_memory_gb``.

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("iris"), score="bic", max_parents=2)
    >>> res = dp(pss)
    >>> res.status, res.stats["nodes"]
    ('optimal', 32)
    """
    started = time.perf_counter()
    problem = _Problem(pss)
    n = problem.n
    need = _dp_gib(n)
    if need > max_memory_gb:
        raise BudgetExceeded(f"dynamic programming over {n} variables needs {need:.1f} GiB "
                             f"(more than max_memory_gb={max_memory_gb}); use astar with a node limit")
    total, leaf = order_dp(n, problem.masks, problem.costs, problem.offsets)
    parents, score = problem.network_from_leaves(_dp_order(leaf, n))
    stats = {"nodes": 1 << n, "edges": n * (1 << (n - 1)), "expanded": 1 << n}
    if not math.isclose(score, -total[-1], rel_tol=1e-9, abs_tol=1e-9):
        raise InternalError("reconstructed network does not reach the DP optimum")
    return _result(problem, parents, score, "optimal", stats, started)


def _groups(pss: ParentSetScores, max_group: int):
    """Split variables into groups of at most ``max_group``, keeping strongly linked
    variables together: a breadth-first order over the graph joining each variable
    to the members of its best parent sets, cut into consecutive pieces."""
    graph = nx.Graph()
    graph.add_nodes_from(range(pss.n_vars))
    for v in range(pss.n_vars):
        parents, _, _ = pss.parent_arrays(v)
        for row in parents[:5]:
            graph.add_edges_from((v, int(p)) for p in row if p >= 0)
    order = []
    for comp in sorted(nx.connected_components(graph), key=min):
        start = max(comp, key=graph.degree)
        order += [start] + [v for _, v in nx.bfs_edges(graph, start)]
    n_groups = max(1, math.ceil(len(order) / max_group))
    bounds = np.linspace(0, len(order), n_groups + 1).round().astype(int)
    return order, [bounds[i + 1] - bounds[i] for i in range(n_groups)]


def remaining_cost_table(pss: ParentSetScores) -> np.ndarray:
    """Exact remaining cost ``h*(U)`` of every order-graph node (small problems only).

    ``h*(U)`` is the least cost of placing the variables outside ``U`` after
    ``U``; entry ``U`` (bitset over pss's variable order).  This is the pattern
    database of a single group holding every variable, and the yardstick that
    shows a heuristic admissible.
    """
    problem = _Problem(pss)
    if problem.n > 24:
        raise InputError("remaining_cost_table is for small problems (at most 24 variables)")
    starts = np.array([0], dtype=np.int64)
    sizes = np.array([problem.n], dtype=np.int64)
    table, _ = _pd_tables(problem.n, starts, sizes, problem.masks, problem.costs,
                          problem.offsets)
    everything = (1 << problem.n) - 1
    return table[everything ^ np.arange(1 << problem.n)]   # index by placed set U


def astar(pss: ParentSetScores, *, heuristic: str = "simple", max_nodes: int | None = None,
          max_memory_gb: float = 4.0, group_size: int | None = None,
          trace: bool = False) -> LearnResult:
    """Optimal network by A* search in the order graph (Wu 2010, Figure 3.1).

    Parameters
    ----------
    pss : ParentSetScores
    heuristic : {"simple", "pd", "zero"}
        ``"simple"``: sum of each remaining variable's unconstrained best cost
        (Wu's Theorem 2).  ``"pd"``: static pattern database, tighter; groups of
        at most ``group_size`` variables (default ``min(ceil(n/2), 20)``).
        ``"zero"``: no heuristic (Dijkstra).  All are admissible and consistent.
    max_nodes : int, optional
        Stop after generating this many order-graph nodes (default: what fits
        in ``max_memory_gb``).  The result then has status ``"node_limit"`` and
        bounds on the optimal score in ``stats["score_bounds"]``.
    trace : bool
        Record the f value of every node popped, in ``stats["trace_f"]``
        (non-decreasing when the heuristic is consistent), and per generated
        node its bitset, g and h in ``stats["trace_nodes"]``.

    Returns
    -------
    LearnResult
        ``stats`` has ``nodes`` (generated), ``expanded``, ``edges`` (edge costs
        evaluated), ``max_open`` and, for "pd", the group sizes.

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("wine"), score="bic", max_parents=2)
    >>> a, d = astar(pss), dp(pss)
    >>> abs(a.score - d.score) < 1e-9, a.stats["nodes"] < d.stats["nodes"]
    (True, True)
    """
    started = time.perf_counter()
    if heuristic not in HEURISTICS:
        raise InputError(f"heuristic must be one of {HEURISTICS}, got {heuristic!r}")
    n = pss.n_vars
    if heuristic == "pd":
        group_size = group_size or min(math.ceil(n / 2), 20)
        if not 1 <= group_size <= 25:
            raise InputError(f"group_size must lie in 1..25, got {group_size}")
        order, sizes = _groups(pss, group_size)
    else:
        order, sizes = list(range(n)), [n]
    problem = _Problem(pss, order)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    sizes = np.array(sizes, dtype=np.int64)
    if heuristic == "pd":
        pd, pd_offsets = _pd_tables(n, starts, sizes, problem.masks, problem.costs,
                                    problem.offsets)
    else:
        pd, pd_offsets = np.zeros(1), np.zeros(2, dtype=np.int64)
    if max_nodes is None:
        max_nodes = int(max_memory_gb * 2**30 / BYTES_PER_NODE)
    kind = HEURISTICS.index(heuristic)
    (status, goal, last_f, counts, node_mask, node_g, node_h, node_prev, node_leaf,
     node_closed, trace_f) = _astar_kernel(n, problem.masks, problem.costs, problem.offsets,
                                           kind, problem.best_cost, pd, pd_offsets, starts,
                                           sizes, int(max_nodes), trace)
    stats = {"nodes": int(counts[0]), "expanded": int(counts[1]), "edges": int(counts[2]),
             "max_open": int(counts[3]), "heuristic": heuristic}
    if heuristic == "pd":
        stats["groups"] = sizes.tolist()
    if trace:
        back = np.array(problem.order, dtype=np.uint64)
        plain = np.zeros_like(node_mask)
        for bit in range(n):                       # relabel bitsets to pss's variable order
            plain |= ((node_mask >> np.uint64(bit)) & _ONE) << back[bit]
        stats["trace_f"] = trace_f
        stats["trace_nodes"] = (plain, node_g, node_h, node_closed)
    if status == 0:
        parents, score = problem.network_from_leaves(_astar_path(node_leaf, node_prev, goal))
        if not math.isclose(-score, node_g[goal], rel_tol=1e-9, abs_tol=1e-9):
            raise InternalError("reconstructed network does not reach the A* optimum")
        return _result(problem, parents, score, "optimal", stats, started)
    # node limit: the last f popped bounds the optimum from above (in score terms);
    # a greedy completion of the deepest closed node gives a network and a lower bound
    deepest = int(np.argmax(np.where(node_closed, np.bitwise_count(node_mask), -1)))
    leaves = _astar_path(node_leaf, node_prev, deepest)
    placed = _ZERO
    for x in leaves:
        placed |= _ONE << np.uint64(x)
    while len(leaves) < n:
        options = [(best_within(x, placed, problem.masks, problem.costs, problem.offsets)[0], x)
                   for x in range(n) if not placed & (_ONE << np.uint64(x))]
        _, x = min(options)
        leaves.append(x)
        placed |= _ONE << np.uint64(x)
    parents, score = problem.network_from_leaves(leaves)
    stats["score_bounds"] = (score, -last_f)
    return _result(problem, parents, score, "node_limit", stats, started)


METHODS = ("auto", "dp", "astar")


def learn(data: Dataset | pd.DataFrame, *, score: str = "bic", ess: float = 1.0,
          max_parents: int = 3, method: str = "auto", heuristic: str = "pd",
          max_memory_gb: float = 4.0, knowledge=None) -> LearnResult:
    """The optimal network of in-degree at most ``max_parents``, from data.

    ``data``: a Dataset, a DataFrame, a 2-D array or a CSV path (see
    :func:`twlib.data.as_dataset`).  Scores every candidate parent set
    (:class:`~twlib.scores.ParentSetScores`, pruned), then searches the order
    graph: ``method="dp"`` (every node), ``"astar"`` (with ``heuristic``, a node
    limit from ``max_memory_gb``) or ``"auto"``: DP when its tables fit
    ``max_memory_gb``, A* otherwise.  The tree-width is not bounded: see
    :func:`twlib.learn.bounded.learn` for that.  ``knowledge``
    (:class:`twlib.knowledge.Knowledge`) removes the parent sets it forbids
    before scoring, so the result is the optimum among the networks it allows.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("iris"), max_parents=2)
    >>> res.status, res.stats["method"]
    ('optimal', 'dp')
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, got {method!r}")
    data = as_dataset(data)
    if data.n_vars > 64:       # before scoring, which would be long for nothing
        raise InputError(f"the order graph takes at most 64 variables, got {data.n_vars}")
    pss = ParentSetScores(data, score=score, ess=ess, max_parents=max_parents,
                          knowledge=knowledge)
    if method == "auto":
        method = "dp" if _dp_gib(pss.n_vars) <= max_memory_gb else "astar"
    if method == "dp":
        res = dp(pss, max_memory_gb=max_memory_gb)
    else:
        res = astar(pss, heuristic=heuristic, max_memory_gb=max_memory_gb)
    res.stats["method"] = method
    return res
