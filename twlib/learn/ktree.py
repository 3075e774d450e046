"""k-trees of high Informative score (Nie, de Campos & Ji 2016).

A k-tree is grown from a root (k+1)-clique by adding one variable at a time,
joined to an existing k-clique.  Its I-score is the mutual information summed
over its edges.  :func:`guided_ktree` is the paper's Algorithm 1: best-first
search over (variable, k-clique) moves with ``g`` = minus the I-score so far and
``h`` = minus, for every unplaced variable, the sum of its k largest mutual
informations, where popping a state that adds ``X`` closes every other open
state containing ``X``.  :func:`best_ktree` is an exact A* over the same moves
(with duplicate detection) for small problems, the yardstick for Algorithm 1.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..graphs import greedy_clique

__all__ = ["KTreeSearch", "guided_ktree", "best_ktree", "top_k_information"]


@dataclass
class KTreeSearch:
    """A k-tree found by search, with its construction and statistics."""

    graph: nx.Graph
    i_score: float
    root: tuple
    steps: list            # (variable, k-clique it joined), in order
    expanded: int
    generated: int


def top_k_information(mi: np.ndarray, k: int) -> np.ndarray:
    """Per variable, the sum of its k largest mutual informations with the others."""
    mi = np.asarray(mi, dtype=float)
    off = mi.copy()
    np.fill_diagonal(off, -np.inf)
    return np.sort(off, axis=1)[:, ::-1][:, :k].sum(axis=1)


def _check(mi, k, root, names):
    mi = np.asarray(mi, dtype=float)
    n = mi.shape[0]
    if mi.shape != (n, n) or not np.allclose(mi, mi.T):
        raise ValueError("mutual information must be a symmetric square matrix")
    if not 1 <= k < n:
        raise ValueError(f"k must satisfy 1 <= k < n = {n}, got k={k}")
    names = list(range(n)) if names is None else list(names)
    index = {v: i for i, v in enumerate(names)}
    if root is None:
        root = greedy_clique(mi, k + 1)
    root = tuple(sorted(index[r] if r in index else int(r) for r in root))
    if len(set(root)) != k + 1:
        raise ValueError(f"the root must hold k + 1 = {k + 1} distinct variables")
    return mi, n, names, root


def _new_cliques(clique, x, k):
    return [tuple(sorted(s + (x,))) for s in itertools.combinations(clique, k - 1)]


def _result(mi, names, root, steps, expanded, generated):
    graph = nx.Graph()
    graph.add_nodes_from(names)
    graph.add_edges_from((names[a], names[b]) for a, b in itertools.combinations(root, 2))
    graph.add_edges_from((names[x], names[u]) for x, c in steps for u in c)
    score = sum(mi[a, b] for a, b in itertools.combinations(root, 2))
    score += sum(mi[x, u] for x, c in steps for u in c)
    named = [(names[x], tuple(names[u] for u in c)) for x, c in steps]
    graph.graph["construction"] = ([names[r] for r in root], named)
    return KTreeSearch(graph, float(score), tuple(names[r] for r in root), named, expanded,
                       generated)


def guided_ktree(mi, k: int, root=None, names=None, max_states: int = 2_000_000) -> KTreeSearch:
    """Algorithm 1 of Nie et al. (2016): a k-tree of high I-score from a root clique.

    Parameters
    ----------
    mi : (n, n) array
        Pairwise mutual information.
    k : int
    root : k+1 variables (names or indices), optional
        Default: a greedy (k+1)-clique of high I-score.
    names : list, optional
        Variable names (default: indices).
    max_states : int
        Give up with a ValueError after generating this many states, instead of
        exhausting memory (the open list can grow quickly beyond ~50 variables).

    >>> rng = np.random.default_rng(0)
    >>> m = rng.random((6, 6)); m = m + m.T; np.fill_diagonal(m, 0)
    >>> res = guided_ktree(m, 2)
    >>> res.graph.number_of_edges()
    9
    """
    mi, n, names, root = _check(mi, k, root, names)
    top = top_k_information(mi, k)
    # states: parent, added variable, clique, g, placed set, cliques (filled when expanded)
    parent, added, joined, g_of, placed_of, cliques_of = [], [], [], [], [], {}
    base_g = -sum(mi[a, b] for a, b in itertools.combinations(root, 2))
    parent.append(-1), added.append(root[0]), joined.append(root[1:])
    g_of.append(base_g), placed_of.append(frozenset(root))
    cliques_of[0] = [tuple(c) for c in itertools.combinations(root, k)]
    h_root = -sum(top[x] for x in range(n) if x not in root)
    heap = [(base_g + h_root, 0, 0)]           # (f, insertion time, state)
    removed_at = {}
    clock, expanded = 1, 0
    while heap:
        f, t_ins, s = heapq.heappop(heap)
        if any(removed_at.get(y, -1) > t_ins for y in placed_of[s]):
            continue                            # closed when another state took that variable
        if len(placed_of[s]) == n:
            steps = []
            while parent[s] >= 0:
                steps.append((added[s], joined[s]))
                s = parent[s]
            return _result(mi, names, root, steps[::-1], expanded, len(parent))
        if parent[s] >= 0:
            removed_at[added[s]] = clock
            clock += 1
            cliques_of[s] = cliques_of[parent[s]] + _new_cliques(joined[s], added[s], k)
        expanded += 1
        h_now = -sum(top[x] for x in range(n) if x not in placed_of[s])
        cliques = np.array(cliques_of[s])
        rest = [x for x in range(n) if x not in placed_of[s]]
        gains = mi[np.ix_(rest, range(n))][:, cliques].sum(axis=2)       # rest x cliques
        # Only each variable's best clique is pushed: its siblings with the same
        # variable have the same h and less gain, so they would pop later and be
        # closed by the step-8 rule the moment the best one pops.
        best = np.argmax(gains, axis=1)
        for a, x in enumerate(rest):
            g = g_of[s] - gains[a, best[a]]
            parent.append(s), added.append(x), joined.append(tuple(cliques[best[a]]))
            g_of.append(g), placed_of.append(placed_of[s] | {x})
            heapq.heappush(heap, (g + h_now + top[x], clock, len(parent) - 1))
            clock += 1
        if len(parent) > max_states:
            raise ValueError(f"guided k-tree search generated more than {max_states} states "
                             f"after {expanded} expansions; raise max_states or use a smaller problem")
    raise AssertionError("the search ran out of states before placing every variable")


def best_ktree(mi, k: int, root=None, names=None, max_states: int = 2_000_000) -> KTreeSearch:
    """The k-tree of maximum I-score containing ``root``, by exact A* (small n only).

    States are identified by their set of k-cliques, so each distinct partial
    k-tree is expanded once; the heuristic of Algorithm 1 is consistent, so the
    first complete state popped is optimal.
    """
    mi, n, names, root = _check(mi, k, root, names)
    top = top_k_information(mi, k)
    start = frozenset(tuple(c) for c in itertools.combinations(root, k))
    base_g = -sum(mi[a, b] for a, b in itertools.combinations(root, 2))
    best_g = {start: base_g}
    info = {start: (frozenset(root), None, None, None)}     # placed, parent key, x, clique
    heap = [(base_g - sum(top[x] for x in range(n) if x not in root), 0, start)]
    closed, counter, expanded = set(), 1, 0
    while heap:
        f, _, key = heapq.heappop(heap)
        if key in closed:
            continue
        placed = info[key][0]
        if len(placed) == n:
            steps = []
            while info[key][1] is not None:
                _, prev, x, c = info[key]
                steps.append((x, c))
                key = prev
            return _result(mi, names, root, steps[::-1], expanded, len(info))
        closed.add(key)
        expanded += 1
        h_now = -sum(top[x] for x in range(n) if x not in placed)
        for x in range(n):
            if x in placed:
                continue
            for c in key:
                new = key | frozenset(_new_cliques(c, x, k))
                if new in closed:
                    continue
                g = best_g[key] - mi[x, list(c)].sum()
                if g < best_g.get(new, np.inf) - 1e-12:
                    best_g[new] = g
                    info[new] = (placed | {x}, key, x, c)
                    heapq.heappush(heap, (g + h_now + top[x], counter, new))
                    counter += 1
        if len(info) > max_states:
            raise ValueError(f"exact k-tree search passed {max_states} states; it is meant for "
                             "small problems (n <= 9)")
    raise AssertionError("the search ran out of states before placing every variable")
