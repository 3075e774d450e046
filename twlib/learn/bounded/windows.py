"""Local exact windows: a connected set of variables re-optimised exactly, the rest fixed."""
from __future__ import annotations

import numpy as np

from ...bitsets import to_bool_rows
from .. import order_graph
from .state import EPS
from .width import filled_graph, moral_bits, parent_rows


def _neighbours(adj, n):
    """Adjacency bitsets as a list of Python sets."""
    return [set(np.flatnonzero(row).tolist()) for row in to_bool_rows(adj, n)]


def _window_candidates(v, nbrs, k, scorer, cap):
    """Parent sets P of ``v`` with ``P + v`` a clique of the chordal graph, |P| <= k, scored.

    Grown one vertex at a time in increasing index order; each level is scored in
    one batched call."""
    found = [((), scorer(v, ()))]
    frontier = [((), sorted(nbrs[v]))]
    while frontier and len(found) < cap:
        grown = []
        for ps, ext in frontier:
            if len(ps) == k or not ext:
                continue
            scores = scorer.with_each_added(v, ps, ext)
            for x, sc in zip(ext, scores):
                child = ps + (x,)
                found.append((child, float(sc)))
                grown.append((child, [y for y in ext if y > x and y in nbrs[x]]))
        frontier = grown
    return found


def _allowed(v, ps, constraints) -> bool:
    allowed, required, caps = constraints
    return (len(ps) <= caps[v] and all(allowed[v, u] for u in ps)
            and set(required[v]) <= set(ps))


def improve_window(parents, order, k, scorer, size, rng, cap=4000, constraints=None):
    """Re-optimise the families of a window of variables exactly, the rest fixed.

    The window is a random connected set of ``size`` vertices of the chordal graph
    ``H`` = moral graph + fill-in of the certificate ``order``.  Each window
    variable may take any parent set that forms a clique with it in ``H`` (so the
    moral graph stays inside ``H`` and ``order`` keeps width <= k); a parent
    outside the window that descends from window variables (through outside
    vertices only) requires those variables earlier, which keeps the DAG
    acyclic.  The order-graph DP over the window then finds the best choice.
    ``constraints`` (see :class:`~twlib.learn.bounded.state.SearchState`) drops
    the sets background knowledge forbids.  Returns the new parent list and the
    gain (>= 0).
    """
    n = len(parents)
    pa = parent_rows(parents, k)
    nbrs = _neighbours(filled_graph(moral_bits(pa, (n + 63) // 64), order), n)
    start = int(rng.integers(n))
    window, pool = [start], set(nbrs[start])
    while pool and len(window) < size:
        x = int(rng.choice(sorted(pool)))
        window.append(x)
        pool |= nbrs[x]
        pool -= set(window)
    bit = {v: i for i, v in enumerate(window)}
    children = [[] for _ in range(n)]
    for v, ps in enumerate(parents):
        for u in ps:
            children[u].append(v)
    below = np.zeros(n, dtype=np.int64)        # below[u]: window variables reaching u
    for w, i in bit.items():
        stack, seen = [c for c in children[w] if c not in bit], set()
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            below[u] |= 1 << i
            stack.extend(c for c in children[u] if c not in bit)
    masks, costs, offsets, sets = [], [], [0], []
    for v in window:
        rows = []
        for ps, sc in _window_candidates(v, nbrs, k, scorer, cap):
            if constraints is not None and not _allowed(v, ps, constraints):
                continue
            need = 0
            for u in ps:
                need |= (1 << bit[u]) if u in bit else int(below[u])
            if not need >> bit[v] & 1:
                rows.append((-sc, need, ps))
        rows.sort(key=lambda r: r[0])
        costs += [r[0] for r in rows]
        masks += [r[1] for r in rows]
        sets += [r[2] for r in rows]
        offsets.append(len(costs))
    _, chosen, total = order_graph.optimal_order(np.array(masks, dtype=np.uint64),
                                                 np.array(costs), np.array(offsets))
    old = sum(scorer(v, parents[v]) for v in window)
    gain = -total - old
    if not gain > EPS * max(1.0, abs(old)):
        return parents, 0.0
    new = list(parents)
    for i, v in enumerate(window):
        new[v] = tuple(sorted(sets[chosen[i]]))
    return new, gain

