"""Greedy structure search: over orders (Perez Urcia & Maua 2015) and over DAGs.

Order-based search moves in the space of variable orders.  The network of an
order gives each variable its best parent set among its predecessors, so an
order's score is a sum of ``BestScore(X, predecessors)`` queries and every order
yields an acyclic network.  The neighbourhood swaps two adjacent variables; a
swap at positions ``i, i+1`` changes only those two variables' candidate sets,
so a neighbour costs two best-score queries, not ``n``.

Initial orders (:func:`initial_orders`): uniformly random; DFS-based on the graph
``G-bar`` of unconstrained best parent sets; FAS-based, a topological order of
``G-bar`` after removing an approximate minimum-cost feedback arc set whose arc
weights are the score each parent contributes.

:func:`learn` takes data and runs :func:`order_search` on its scored parent sets.

Restarts run in parallel (numba ``prange``) and are reproducible for a given
``random_state`` whatever the number of threads: every restart's initial order
is drawn up front from its own seed.
"""
from __future__ import annotations

import heapq
import math
import time

import networkx as nx
import numba as nb
import numpy as np
import pandas as pd

from ..data import Dataset, as_dataset
from ..errors import InputError, InternalError
from ..graphs import topological_order
from ..scores import ParentSetScores, local_score
from .result import LearnResult, fit_to_scores

__all__ = ["learn", "order_search", "initial_orders", "order_network", "best_parent_graph",
           "fas_weights", "min_cost_fas", "hill_climb", "swap_climb", "INITS"]

INITS = ("random", "dfs", "fas")
_ONE = np.uint64(1)


# --------------------------------------------------------------------- kernels
# Parent sets are bitsets of one uint64 word per 64 variables, so the search
# runs on any number of variables (the k-tree learner needs 100 and more).
@nb.njit(cache=True)
def _best(var, cand, masks, costs, offsets, extra=-1):
    """Cost and index of ``var``'s best kept parent set inside the bitset ``cand``
    plus the variable ``extra`` (none when -1)."""
    extra_word = extra >> 6 if extra >= 0 else -1
    extra_bit = _ONE << np.uint64(extra & 63) if extra >= 0 else np.uint64(0)
    for t in range(offsets[var], offsets[var + 1]):
        inside = True
        for w in range(masks.shape[1]):
            allowed = cand[w] | extra_bit if w == extra_word else cand[w]
            if masks[t, w] & ~allowed != 0:
                inside = False
                break
        if inside:
            return costs[t], t
    return np.inf, -1


@nb.njit(cache=True)
def _add(bits, x):
    out = bits.copy()
    out[x >> 6] |= _ONE << np.uint64(x & 63)
    return out


@nb.njit(cache=True)
def _prefixes(order, words):
    """``prefix[i]`` = bitset of ``order[:i]``."""
    n = order.shape[0]
    prefix = np.zeros((n + 1, words), dtype=np.uint64)
    for i in range(n):
        prefix[i + 1] = _add(prefix[i], order[i])
    return prefix


@nb.njit(cache=True)
def _order_locals(order, masks, costs, offsets):
    """Cost of each variable's best parent set among its predecessors in ``order``."""
    prefix = _prefixes(order, masks.shape[1])
    out = np.empty(order.shape[0])
    for i in range(order.shape[0]):
        out[i], _ = _best(order[i], prefix[i], masks, costs, offsets)
    return out


@nb.njit(cache=True)
def swap_climb(order, masks, costs, offsets, max_swaps, best_improvement, trajectory):
    """The compiled climb of :func:`order_search`: swap-adjacent descent on one
    order (in place), with the kept parent sets flattened as ``order_search``
    does (``masks``, ``costs`` = negated scores, ``offsets`` per variable).
    Returns the swaps made; ``trajectory[t]`` receives the cost after t swaps
    (t = 0 .. max_swaps).
    """
    n = order.shape[0]
    local = _order_locals(order, masks, costs, offsets)
    prefix = _prefixes(order, masks.shape[1])
    total = local.sum()
    trajectory[0] = total
    it = 0
    while it < max_swaps:
        best_gain = 0.0
        best_i = -1
        best_a = 0.0
        best_b = 0.0
        for i in range(n - 1):
            a = order[i]
            b = order[i + 1]
            new_b, _ = _best(b, prefix[i], masks, costs, offsets)
            new_a, _ = _best(a, prefix[i], masks, costs, offsets, b)
            gain = (local[i] + local[i + 1]) - (new_a + new_b)
            if gain > 1e-9 * (1.0 + abs(total)) and gain > best_gain:
                best_gain, best_i, best_a, best_b = gain, i, new_a, new_b
                if not best_improvement:
                    break
        if best_i < 0:
            break
        i = best_i
        a = order[i]
        order[i] = order[i + 1]
        order[i + 1] = a
        local[i] = best_b
        local[i + 1] = best_a
        prefix[i + 1] = _add(prefix[i], order[i])
        total -= best_gain
        it += 1
        trajectory[it] = total
    for t in range(it + 1, trajectory.shape[0]):
        trajectory[t] = total
    return it


@nb.njit(parallel=True, cache=True)
def _climb_batch(orders, masks, costs, offsets, max_swaps, best_improvement):
    restarts = orders.shape[0]
    iterations = np.zeros(restarts, dtype=np.int64)
    trajectories = np.empty((restarts, max_swaps + 1))
    for r in nb.prange(restarts):
        iterations[r] = swap_climb(orders[r], masks, costs, offsets, max_swaps,
                                   best_improvement, trajectories[r])
    return iterations, trajectories


# ------------------------------------------------------------------ helpers
def _flat(pss: ParentSetScores, allowed=None):
    """Flat (masks (sets, words), costs, offsets) of every variable's kept sets, best
    first; optionally only those with ``allowed(var, parents)``."""
    _, score_rows, mask_rows = zip(*(pss.parent_arrays(v) for v in range(pss.n_vars)))
    masks, scores = np.concatenate(mask_rows), np.concatenate(score_rows)
    counts = [len(row) for row in score_rows]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    if allowed is None:
        return masks, -scores, offsets
    keep = np.zeros(len(masks), dtype=bool)
    for v in range(pss.n_vars):
        for k, (parents, _) in enumerate(pss.sets(v)):
            keep[offsets[v] + k] = (not parents) or bool(allowed(pss.names[v], parents))
    counts = np.array([keep[offsets[v]:offsets[v + 1]].sum() for v in range(pss.n_vars)])
    new_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return masks[keep], -scores[keep], new_offsets


def _as_indices(pss, order):
    idx = np.array([pss.names.index(v) if isinstance(v, str) else int(v) for v in order],
                   dtype=np.int64)
    if sorted(idx.tolist()) != list(range(pss.n_vars)):
        raise InputError("an order must list every variable exactly once")
    return idx


def order_network(pss: ParentSetScores, order, *, allowed=None):
    """``(score, parents)`` of the best network consistent with ``order``.

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("iris"), score="bic", max_parents=2)
    >>> score, parents = order_network(pss, pss.names)
    >>> parents[pss.names[0]]
    []
    """
    masks, costs, offsets = _flat(pss, allowed)
    idx = _as_indices(pss, order)
    parents, total = {}, 0.0
    prefix = _prefixes(idx, masks.shape[1])
    for i, x in enumerate(idx):
        c, t = _best(x, prefix[i], masks, costs, offsets)
        parents[pss.names[x]] = _parents_of(pss, masks[t])
        total += c
    return -total, parents


def _parents_of(pss, mask):
    return [pss.names[v] for v in range(pss.n_vars) if int(mask[v >> 6]) >> (v & 63) & 1]


def best_parent_graph(pss: ParentSetScores) -> nx.DiGraph:
    """``G-bar``: every variable with its unconstrained best parent set (may be cyclic).

    Its score (``graph.graph["score"]``) bounds the optimal network's from above.
    """
    graph = nx.DiGraph()
    graph.add_nodes_from(pss.names)
    total = 0.0
    for v in pss.names:
        score, parents = pss.best(v)
        total += score
        graph.add_edges_from((p, v) for p in parents)
    graph.graph["score"] = total
    return graph


def fas_weights(pss: ParentSetScores, graph: nx.DiGraph) -> dict:
    """Relevance of each arc ``X_j -> X_i`` of ``G-bar``:
    ``W_ji = sc(X_i, Pa*) - sc(X_i, Pa* minus X_j)``.

    The score without ``X_j`` is computed from the data when the table has it,
    else taken as the best kept set inside ``Pa* minus X_j``.
    """
    weights = {}
    for child in graph.nodes:
        best = list(graph.predecessors(child))
        full = pss.best(child)[0]
        for p in best:
            rest = [q for q in best if q != p]
            if pss.data is not None:
                without = local_score(pss.data, child, rest, score=pss.score, ess=pss.ess)
            else:
                without = pss.best(child, candidates=rest)[0]
            weights[(p, child)] = full - without
    return weights


def min_cost_fas(graph: nx.DiGraph, weights: dict, *, random_state=None) -> set:
    """Approximate minimum-cost feedback arc set (Perez Urcia & Maua's algorithm).

    While a cycle remains, subtract its lightest weight from all its arcs and
    remove the arcs that reach zero into F; then put back every arc of F that
    does not close a cycle.  Cycles are searched from a random node.
    """
    rng = np.random.default_rng(random_state)
    g = graph.copy()
    w = dict(weights)
    removed = []
    nodes = list(g.nodes)
    while True:
        try:
            cycle = nx.find_cycle(g, source=nodes[rng.integers(len(nodes))])
        except nx.NetworkXNoCycle:
            try:
                cycle = nx.find_cycle(g)
            except nx.NetworkXNoCycle:
                break
        arcs = [(u, v) for u, v, *_ in cycle]
        lightest = min(w[a] for a in arcs)
        for a in arcs:
            w[a] -= lightest
            if w[a] <= 1e-12:
                g.remove_edge(*a)
                removed.append(a)
    fas = set()
    for a in removed:
        g.add_edge(*a)
        if not nx.is_directed_acyclic_graph(g):
            g.remove_edge(*a)
            fas.add(a)
    return fas


def _random_topological_order(graph: nx.DiGraph, rng) -> list:
    indegree = {v: graph.in_degree(v) for v in graph}
    ready = [v for v in graph if indegree[v] == 0]
    order = []
    while ready:
        v = ready.pop(int(rng.integers(len(ready))))
        order.append(v)
        for u in graph.successors(v):
            indegree[u] -= 1
            if indegree[u] == 0:
                ready.append(u)
    if len(order) != graph.number_of_nodes():
        raise InputError("graph is cyclic")
    return order


def _dfs_order(graph: nx.DiGraph, rng) -> list:
    """Depth-first over parent arcs from random unvisited roots; parents are listed
    before the node that reached them, so most arcs of G-bar point forward."""
    visited, order = set(), []
    nodes = list(graph.nodes)
    for start in rng.permutation(len(nodes)):
        root = nodes[start]
        if root in visited:
            continue
        stack = [(root, iter(rng.permutation(list(graph.predecessors(root))).tolist()))]
        visited.add(root)
        while stack:
            node, parents = stack[-1]
            nxt = next((p for p in parents if p not in visited), None)
            if nxt is None:
                stack.pop()
                order.append(node)
            else:
                visited.add(nxt)
                stack.append((nxt, iter(rng.permutation(list(graph.predecessors(nxt))).tolist())))
    return order


def initial_orders(pss: ParentSetScores, *, method: str = "random", count: int = 1,
                   random_state=None) -> np.ndarray:
    """``count`` initial orders (rows of variable indices) by ``method``.

    Restart ``r`` uses its own generator spawned from ``random_state``, so the
    orders do not depend on how many are drawn together.
    """
    if method not in INITS:
        raise InputError(f"init must be one of {INITS} or an array of orders, got {method!r}")
    seeds = np.random.SeedSequence(random_state).spawn(count)
    n = pss.n_vars
    out = np.empty((count, n), dtype=np.int64)
    graph = best_parent_graph(pss) if method != "random" else None
    if method == "fas":
        weights = fas_weights(pss, graph)
    index = {v: i for i, v in enumerate(pss.names)}
    for r, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        if method == "random":
            out[r] = rng.permutation(n)
            continue
        if method == "dfs":
            names = _dfs_order(graph, rng)
        else:
            fas = min_cost_fas(graph, weights, random_state=rng)
            dag = graph.copy()
            dag.remove_edges_from(fas)
            names = _random_topological_order(dag, rng)
        out[r] = [index[v] for v in names]
    return out


# ---------------------------------------------------------------------- search
def respecting(order, required) -> list:
    """``order`` with as few moves as a greedy topological sort makes so that each
    variable ``v`` comes after its ``required[v]`` parents (indices).

    >>> respecting([2, 0, 1], [(), (0,), (1,)])
    [0, 1, 2]
    """
    position = {int(v): i for i, v in enumerate(order)}
    waiting = {v: set(required[v]) for v in position}
    children = {v: [c for c in position if v in waiting[c]] for v in position}
    ready = [(position[v], v) for v in position if not waiting[v]]
    heapq.heapify(ready)
    out = []
    while ready:
        _, v = heapq.heappop(ready)
        out.append(v)
        for c in children[v]:
            waiting[c].discard(v)
            if not waiting[c]:
                heapq.heappush(ready, (position[c], c))
    if len(out) != len(position):
        raise InputError("the required arcs form a cycle")
    return out


def order_search(pss: ParentSetScores, *, init="random", restarts: int = 100,
                 max_swaps: int = 100, strategy: str = "best", random_state=None,
                 allowed=None) -> LearnResult:
    """Order-based greedy search with restarts (Perez Urcia & Maua 2015).

    Parameters
    ----------
    pss : ParentSetScores
    init : {"random", "dfs", "fas"} or array (restarts, n) of orders
    restarts, max_swaps : int
        Number of independent runs (the outer loop), and swap iterations per
        run (the paper's K).
    strategy : {"best", "first"}
        Best-improvement (scan all n-1 swaps, take the best) or first-improvement.
    allowed : callable(var, parents) -> bool, optional
        Restrict parent sets (e.g. to cliques of a k-tree); the empty set is
        always allowed.

    Returns
    -------
    LearnResult
        The best run's network.  ``stats`` holds per-restart ``initial_scores``,
        ``final_scores``, ``iterations``, the score ``trajectories`` (restarts x
        max_swaps+1) and ``upper_bound`` (the score of G-bar).

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("wine"), score="bic", max_parents=2)
    >>> res = order_search(pss, init="fas", restarts=5, random_state=0)
    >>> res.score <= res.stats["upper_bound"]
    True
    """
    started = time.perf_counter()
    if strategy not in ("best", "first"):
        raise InputError(f"strategy must be 'best' or 'first', got {strategy!r}")
    if max_swaps < 0 or restarts < 1:
        raise InputError("restarts must be >= 1 and max_swaps >= 0")
    if isinstance(init, str):
        orders = initial_orders(pss, method=init, count=restarts, random_state=random_state)
    else:
        orders = np.array([_as_indices(pss, o) for o in np.atleast_2d(init)], dtype=np.int64)
        restarts = orders.shape[0]
    required = [] if pss.knowledge is None else pss.knowledge.parent_filter(pss.names)[1]
    if any(required):
        # each order moved the least so every required parent comes before its child
        # (else that child has no set to take); swaps that break it cost infinity
        orders = np.array([respecting(o, required) for o in orders], dtype=np.int64)
    masks, costs, offsets = _flat(pss, allowed)
    initial = np.array([-_order_locals(o, masks, costs, offsets).sum() for o in orders])
    final_orders = orders.copy()
    iterations, trajectories = _climb_batch(final_orders, masks, costs, offsets, int(max_swaps),
                                            strategy == "best")
    finals = -trajectories[:, -1]
    best = int(np.argmax(finals))
    score, parents = order_network(pss, final_orders[best], allowed=allowed)
    if not math.isclose(score, finals[best], rel_tol=1e-9, abs_tol=1e-9):
        raise InternalError("incremental score differs from the order's network score")
    network = fit_to_scores(pss, parents, "order-search")
    stats = {"score": pss.score, "seconds": time.perf_counter() - started,
             "init": init if isinstance(init, str) else "given", "restarts": restarts,
             "initial_scores": initial, "final_scores": finals, "iterations": iterations,
             "trajectories": -trajectories, "best_order": [pss.names[i] for i in final_orders[best]],
             "upper_bound": best_parent_graph(pss).graph["score"]}
    status = "complete"
    return LearnResult(network=network, score=score, status=status, stats=stats, parents=parents,
                       knowledge=pss.knowledge)


def learn(data: Dataset | pd.DataFrame, *, score: str = "bic", ess: float = 1.0,
          max_parents: int = 3, init: str = "fas", restarts: int = 100, max_swaps: int = 100,
          strategy: str = "best", random_state=None, knowledge=None) -> LearnResult:
    """Order-based greedy search from data (Perez Urcia & Maua 2015).

    ``data``: a Dataset, a DataFrame, a 2-D array or a CSV path (see
    :func:`twlib.data.as_dataset`).  Scores the candidate parent sets of
    in-degree at most ``max_parents`` (:class:`~twlib.scores.ParentSetScores`),
    then runs :func:`order_search` with the other options.  The tree-width is
    not bounded: see :func:`twlib.learn.bounded.learn` for that.  ``knowledge``
    (:class:`twlib.knowledge.Knowledge`) filters the parent sets before scoring.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("wine"), max_parents=2, restarts=5, random_state=0)
    >>> res.score <= res.stats["upper_bound"], res.stats["init"]
    (True, 'fas')
    """
    if init not in INITS:
        raise InputError(f"init must be one of {INITS}, got {init!r}")
    pss = ParentSetScores(as_dataset(data), score=score, ess=ess, max_parents=max_parents,
                          knowledge=knowledge)
    return order_search(pss, init=init, restarts=restarts, max_swaps=max_swaps, strategy=strategy,
                        random_state=random_state)


# ------------------------------------------------------------------ hill climbing
def hill_climb(pss: ParentSetScores, *, start: dict | None = None, max_iter: int = 1000,
               tabu_length: int = 0) -> LearnResult:
    """Structure-based hill climbing: add, remove or reverse one arc at a time.

    Scores come from ``pss`` built with ``prune=False`` (every parent set up to
    its size bound must be present; a move to a missing set is skipped).  With
    ``tabu_length > 0`` the last moves' inverses are forbidden, and the search
    takes the best non-tabu move even when it does not improve, keeping the best
    network seen, until ``max_iter``.

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("iris"), score="bic", max_parents=2, prune=False)
    >>> hill_climb(pss).status
    'complete'
    """
    started = time.perf_counter()
    names = pss.names
    table = [{frozenset(ps): s for ps, s in pss.sets(v)} for v in names]
    parents = {v: list((start or {}).get(v, [])) for v in names}
    topological_order(parents)
    local = {}
    for i, v in enumerate(names):
        key = frozenset(parents[v])
        if key not in table[i]:
            raise InputError(f"the start network gives {v!r} a parent set missing from the table")
        local[v] = table[i][key]
    graph = nx.DiGraph()
    graph.add_nodes_from(names)
    graph.add_edges_from((p, v) for v in names for p in parents[v])
    tabu: list = []
    best_total, best_parents = sum(local.values()), {v: list(ps) for v, ps in parents.items()}
    total = best_total
    it = 0
    for it in range(1, max_iter + 1):
        move, gain = None, -math.inf
        for i, v in enumerate(names):
            current = frozenset(parents[v])
            for j, u in enumerate(names):
                if u == v:
                    continue
                if u in current:
                    # remove u -> v
                    s = table[i].get(current - {u})
                    if s is not None and ("add", u, v) not in tabu and s - local[v] > gain:
                        move, gain = ("remove", u, v), s - local[v]
                    # reverse u -> v into v -> u
                    su = table[j].get(frozenset(parents[u]) | {v})
                    if (s is not None and su is not None and ("reverse", v, u) not in tabu
                            and not _path_without(graph, u, v)):
                        g = s - local[v] + su - local[u]
                        if g > gain:
                            move, gain = ("reverse", u, v), g
                else:
                    s = table[i].get(current | {u})
                    if (s is not None and ("remove", u, v) not in tabu and s - local[v] > gain
                            and not nx.has_path(graph, v, u)):
                        move, gain = ("add", u, v), s - local[v]
        if move is None or (tabu_length == 0 and gain <= 1e-9 * (1 + abs(total))):
            break
        kind, u, v = move
        if kind == "add":
            parents[v].append(u)
            graph.add_edge(u, v)
        elif kind == "remove":
            parents[v].remove(u)
            graph.remove_edge(u, v)
        else:
            parents[v].remove(u)
            parents[u].append(v)
            graph.remove_edge(u, v)
            graph.add_edge(v, u)
        for w in {u, v}:
            local[w] = table[names.index(w)][frozenset(parents[w])]
        total = sum(local.values())
        if tabu_length:
            tabu = (tabu + [move])[-tabu_length:]
        if total > best_total + 1e-9 * (1 + abs(best_total)):
            best_total, best_parents = total, {w: list(ps) for w, ps in parents.items()}
    return LearnResult(network=fit_to_scores(pss, best_parents, "hill-climb"), score=best_total, status="complete",
                       stats={"score": pss.score, "seconds": time.perf_counter() - started,
                              "iterations": it}, parents=best_parents)


def _path_without(graph: nx.DiGraph, u, v) -> bool:
    """Is there a path u -> ... -> v other than the arc u -> v itself?"""
    graph.remove_edge(u, v)
    try:
        return nx.has_path(graph, u, v)
    finally:
        graph.add_edge(u, v)
