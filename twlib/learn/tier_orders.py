"""The order-graph DP over the orders that respect tiers.

When every variable is in a tier and no arc may go from a later tier into an
earlier one, some optimal network lists its variables tier by tier: sort any
topological order of it stably by tier and each arc still points forward.
The DP of Chapter 3 then only visits the subsets made of every earlier tier
and part of the current one, the sum over tiers of ``2^size`` instead of
``2^n``: 27 variables in three tiers of nine make 1,536 subsets instead of
134 million, so that the exact bound of
:mod:`twlib.learn.exact_width` reaches networks past two dozen variables.
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["tier_order", "tier_entries"]


def tier_entries(sizes) -> int:
    """Best-cost entries :func:`tier_order` keeps at once for tiers of these
    sizes (a table per variable of its tier over the tier's subsets).

    >>> tier_entries([9, 9, 9])
    4608
    """
    return max((s << s for s in sizes), default=0)


def tier_order(masks, costs, offsets, tiers):
    """``(total cost, order)``: the least total cost of one candidate per
    variable that is acyclic, with each variable's parents in its own or an
    earlier tier, and an order that realises it (tier by tier).  ``masks``,
    ``costs``, ``offsets`` are the candidate lists (variable ``v``'s at
    ``offsets[v]:offsets[v + 1]``, parents as bitsets); ``tiers`` lists the
    variable indices of each tier, earliest first, every variable once.  The
    total is infinite when some variable has no candidate within reach.

    >>> masks = np.array([0, 0, 1, 0, 1], dtype=np.uint64)   # b may take a, c may take a
    >>> costs = np.array([1.0, 2.0, 1.5, 3.0, 0.5])
    >>> offsets = np.array([0, 1, 3, 5])
    >>> total, order = tier_order(masks, costs, offsets, [[0], [1, 2]])
    >>> float(total), order.tolist()[0]
    (3.0, 0)
    """
    members = np.array([v for tier in tiers for v in tier], dtype=np.int64)
    ptr = np.cumsum([0] + [len(tier) for tier in tiers]).astype(np.int64)
    return _tier_dp(masks, costs, offsets, members, ptr)


@nb.njit(cache=True)
def _tier_dp(masks, costs, offsets, members, ptr):
    n = offsets.size - 1
    order = np.empty(n, dtype=np.int64)
    earlier = np.uint64(0)
    total = 0.0
    for t in range(ptr.size - 1):
        tier = members[ptr[t]:ptr[t + 1]]
        s = tier.size
        inside = np.uint64(0)
        for j in range(s):
            inside |= np.uint64(1) << np.uint64(tier[j])
        # best[j, u]: the cheapest candidate of tier[j] within the earlier tiers and u
        best = np.full((s, 1 << s), np.inf)
        for j in range(s):
            v = tier[j]
            for r in range(offsets[v], offsets[v + 1]):
                if masks[r] & ~(earlier | inside) != 0:
                    continue
                u = 0
                for i in range(s):
                    if (masks[r] >> np.uint64(tier[i])) & np.uint64(1):
                        u |= 1 << i
                best[j, u] = min(best[j, u], costs[r])
            for b in range(s):
                for u in range(1 << s):
                    if u & (1 << b):
                        best[j, u] = min(best[j, u], best[j, u ^ (1 << b)])
        cost = np.full(1 << s, np.inf)
        last = np.full(1 << s, -1, dtype=np.int64)
        cost[0] = 0.0
        for u in range(1, 1 << s):
            for j in range(s):
                if u & (1 << j):
                    c = cost[u ^ (1 << j)] + best[j, u ^ (1 << j)]
                    if c < cost[u]:
                        cost[u], last[u] = c, j
        full = (1 << s) - 1
        if cost[full] == np.inf:
            return np.inf, order
        u = full
        for i in range(ptr[t + 1] - 1, ptr[t] - 1, -1):
            order[i] = tier[last[u]]
            u ^= 1 << last[u]
        total += cost[full]
        earlier |= inside
    return total, order
