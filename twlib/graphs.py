"""Graph helpers shared by the learners and the network class.

Directed graphs are given as a parent map ``{node: [parents...]}``; undirected
graphs as networkx graphs.
"""
from __future__ import annotations

import itertools
import math
import time

import networkx as nx
import numba as nb
import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits

from .bitsets import (all_alive, alive_neighbours, eliminate_vertex, lowest_index,
                      missing_edges, popcount, rows_of_scopes)
from .errors import BudgetExceeded, InputError, InternalError

__all__ = ["topological_order", "find_cycle", "to_digraph", "moral_graph",
           "maximum_spanning_tree", "i_score", "orient_tree", "elimination_width", "random_ktree",
           "ORDER_HEURISTICS", "ORDER_METHODS", "elimination_order", "elimination_cost",
           "greedy_elimination", "greedy_entries", "flat_greedy_entries",
           "induced_graph", "treewidth_upper_bound",
           "treewidth_exact", "treewidth_at_most", "simplicial_reduction", "width_obstruction",
           "clique_tree",
           "has_running_intersection", "ktree_elimination_order",
           "is_ktree", "ktree_cliques", "greedy_clique", "order_arcs", "pattern",
           "structural_hamming_distance", "compare_arcs"]


def find_cycle(parents: dict):
    """A directed cycle of the parent map as a node list, or None if acyclic."""
    graph = to_digraph(parents)
    try:
        edges = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return None
    return [u for u, _ in edges] + [edges[0][0]]


def topological_order(parents: dict) -> list:
    """Nodes ordered parents-first; ties broken by the map's own order.

    Raises ValueError naming a cycle if there is one.

    >>> topological_order({"a": ["b"], "b": [], "c": ["a", "b"]})
    ['b', 'a', 'c']
    """
    position = {v: i for i, v in enumerate(parents)}
    missing = sorted({p for ps in parents.values() for p in ps} - set(parents), key=str)
    if missing:
        raise InputError(f"parents that are not nodes of the graph: {missing}")
    graph = to_digraph(parents)
    try:
        return list(nx.lexicographical_topological_sort(graph, key=position.__getitem__))
    except nx.NetworkXUnfeasible:
        cycle = find_cycle(parents)
        raise InputError(f"the graph is cyclic: {' -> '.join(map(str, cycle))}") from None


def to_digraph(parents: dict) -> nx.DiGraph:
    """networkx DiGraph with an arc ``p -> v`` for every parent ``p`` of ``v``."""
    graph = nx.DiGraph()
    graph.add_nodes_from(parents)
    graph.add_edges_from((p, v) for v, ps in parents.items() for p in ps)
    return graph


def moral_graph(parents: dict) -> nx.Graph:
    """Undirected graph joining each node to its parents and its parents to each other."""
    graph = nx.Graph()
    graph.add_nodes_from(parents)
    for v, ps in parents.items():
        graph.add_edges_from((p, v) for p in ps)
        graph.add_edges_from(itertools.combinations(ps, 2))
    return graph


def maximum_spanning_tree(weights, *, names=None) -> nx.Graph:
    """Maximum-weight spanning tree of a complete graph with a symmetric weight matrix.

    With mutual information as weights this is the Chow-Liu tree; edge weights
    are stored in the ``weight`` attribute.
    """
    n = len(weights)
    names = list(range(n)) if names is None else list(names)
    graph = nx.Graph()
    graph.add_nodes_from(names)
    graph.add_weighted_edges_from((names[i], names[j], float(weights[i][j]))
                                  for i in range(n) for j in range(i + 1, n))
    return nx.maximum_spanning_tree(graph, algorithm="kruskal")


def i_score(graph: nx.Graph, mi, *, names=None) -> float:
    """Informative score of an undirected graph: the sum of ``mi[i][j]`` over its edges.

    ``mi`` is a pairwise mutual-information matrix indexed like ``names``
    (default: the graph's nodes are matrix indices).
    """
    index = {v: i for i, v in enumerate(names)} if names is not None else None
    total = 0.0
    for u, v in graph.edges():
        i, j = (index[u], index[v]) if index else (u, v)
        total += float(mi[i][j])
    return total


def orient_tree(tree: nx.Graph, *, root=None) -> dict:
    """Parent map of a tree (or forest) with every edge directed away from a root.

    Each component is rooted at ``root`` if it holds it, else at its first node.

    >>> t = nx.Graph([("a", "b"), ("b", "c")])
    >>> orient_tree(t, root="b")
    {'a': ['b'], 'b': [], 'c': ['b']}
    """
    if not nx.is_forest(tree):
        raise InputError("the graph has a cycle, so it is not a tree or forest")
    parents = {v: [] for v in tree.nodes}
    for component in nx.connected_components(tree):
        start = root if root in component else next(v for v in tree.nodes if v in component)
        for u, v in nx.bfs_edges(tree, start):
            parents[v] = [u]
    return parents


def _eliminate(graph: nx.Graph, order):
    """Yield ``(node, neighbours at elimination)`` along ``order``, adding fill-in edges."""
    order = list(order)
    if sorted(order, key=str) != sorted(graph.nodes, key=str) or len(set(order)) != len(order):
        raise InputError("the order must list every node of the graph exactly once")
    g = {v: set(graph.neighbors(v)) - {v} for v in graph.nodes}
    for v in order:
        nbrs = g.pop(v)
        for u in nbrs:
            g[u].discard(v)
            g[u] |= nbrs - {u}
        yield v, nbrs


def elimination_width(graph: nx.Graph, order) -> int:
    """Width of an elimination order: the largest number of neighbours a node has
    when it is eliminated (fill-in edges added as we go).  The tree-width of the
    graph is the minimum over all orders.

    >>> elimination_width(nx.cycle_graph(4), [0, 1, 2, 3])
    2
    """
    return max((len(nbrs) for _, nbrs in _eliminate(graph, order)), default=0)


def greedy_clique(weights, size: int) -> list:
    """Indices of a heavy clique of ``size`` nodes in a complete weighted graph:
    the heaviest edge, then repeatedly the node adding the most weight (sorted).

    >>> greedy_clique(np.array([[0, 5, 1], [5, 0, 2], [1, 2, 0]]), 2)
    [0, 1]
    """
    w = np.asarray(weights, dtype=float)
    n = w.shape[0]
    if not 2 <= size <= n:
        raise InputError(f"a clique of {size} nodes needs 2 <= size <= {n}")
    i, j = np.unravel_index(np.argmax(w - np.diag(np.full(n, np.inf))), w.shape)
    clique = [int(i), int(j)]
    while len(clique) < size:
        gain = w[:, clique].sum(axis=1)
        gain[clique] = -np.inf
        clique.append(int(np.argmax(gain)))
    return sorted(clique)


def random_ktree(nodes, k: int, weights=None, *, random_state=None) -> nx.Graph:
    """A k-tree over ``nodes`` built by its definition (Nie et al. 2016, Definition 1).

    Start from a (k+1)-clique; then repeatedly join a new vertex to every vertex
    of an existing k-clique.  Without ``weights`` the root clique, each new vertex
    and its k-clique are drawn uniformly.  With a symmetric ``weights`` matrix
    (indexed like ``nodes``) the construction is greedy instead: the root is the
    best-weighted (k+1)-clique found from the heaviest edge outward, and each step
    adds the (vertex, k-clique) pair that adds the most weight.

    The returned graph records ``graph.graph["construction"]``: the root clique
    followed by ``(vertex, k-clique)`` steps; eliminating the vertices in reverse
    construction order has width exactly ``k``.

    >>> g = random_ktree(range(6), 2, random_state=0)
    >>> g.number_of_edges() == 3 + 2 * 3
    True
    """
    nodes = list(nodes)
    n = len(nodes)
    if not 1 <= k < n:
        raise InputError(f"a k-tree over {n} nodes needs 1 <= k < n, got k={k}")
    rng = np.random.default_rng(random_state)
    if weights is None:
        root = sorted(rng.choice(n, size=k + 1, replace=False).tolist())
    else:
        w = np.asarray(weights, dtype=float)
        root = greedy_clique(w, k + 1)
    cliques = [tuple(c) for c in itertools.combinations(root, k)]
    placed = set(root)
    steps = []
    while len(placed) < n:
        rest = [v for v in range(n) if v not in placed]
        if weights is None:
            v = rest[rng.integers(len(rest))]
            clique = cliques[rng.integers(len(cliques))]
        else:
            gains = w[np.ix_(rest, range(n))][:, np.array(cliques)].sum(axis=2)
            a, b = np.unravel_index(np.argmax(gains), gains.shape)
            v, clique = rest[a], cliques[b]
        steps.append((v, clique))
        placed.add(v)
        cliques += [tuple(sorted(c + (v,))) for c in itertools.combinations(clique, k - 1)]
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from((nodes[a], nodes[b]) for a, b in itertools.combinations(root, 2))
    graph.add_edges_from((nodes[v], nodes[u]) for v, clique in steps for u in clique)
    graph.graph["construction"] = ([nodes[r] for r in root],
                                   [(nodes[v], tuple(nodes[u] for u in c)) for v, c in steps])
    return graph


# ------------------------------------------------------------ elimination orders
ORDER_HEURISTICS = ("min-fill", "min-degree", "weighted-min-fill", "min-size")
# Pairs of neighbours a min-fill run may compare before it goes on by min-degree
# (``fill_budget``), for callers that must answer in time: a few tenths of a
# second.  The grids, networks, Promedas and linkage models need fewer (their
# orders do not change); on SAT encodings of 2,000 variables min-fill alone takes
# 9-29 s
FILL_BUDGET = 1e8
ORDER_METHODS = ORDER_HEURISTICS + ("auto",)
_KIND = {name: i for i, name in enumerate(ORDER_HEURISTICS)}


@nb.njit(cache=True)
def _greedy_cost(adj, alive, v, kind, weight, log_weight, nbr):
    """``(cost, degree)`` of eliminating v now; the cost is the degree, the
    fill-in edges, the fill weighted by the product of the endpoints' weights,
    or the log of the clique's table size."""
    m = alive_neighbours(adj, alive, v, nbr)
    if kind == 1:
        return float(m), m
    if kind == 3:
        s = log_weight[v]
        for i in range(m):
            s += log_weight[nbr[i]]
        return s, m
    return missing_edges(adj, nbr, m, weight, kind == 2), m


@nb.njit(cache=True)
def greedy_elimination(adj0, kind, weight, jitter, random_state, fixed,
                       late=np.zeros(0, np.bool_), give_up_above=np.inf, fill_budget=np.inf):
    """One greedy elimination of the graph with bitset rows ``adj0`` (uint64,
    one row per vertex): repeatedly eliminate the vertex of least cost
    (``kind``: 0 min-fill, 1 min-degree, 2 weighted min-fill, 3 min-size).  Ties
    go to fewer neighbours, then to the lower index; ``jitter > 0`` multiplies
    each cost by a random factor in ``[1, 1 + jitter)`` (seeded by ``random_state``), and breaks
    exact ties at random, so repeated runs explore other orders.  A non-empty
    ``fixed`` order is followed instead (to measure it).  Vertices flagged in
    ``late`` (when given) wait until every other vertex is eliminated.  Once a
    clique's log table size exceeds ``give_up_above`` the order is finished
    with the vertices left in index order, and ``(order, n, inf)`` returned: a
    caller that only asks whether the tree fits skips the dense steps at the
    end, which cost the most.  Min-fill's refreshes reach the neighbours'
    neighbours, and each compares every pair of a vertex's neighbours: once
    the pairs compared pass ``fill_budget``, the order goes on by min-degree
    (on dense graphs, such as SAT encodings, min-fill alone takes seconds to
    minutes).

    Returns ``(order, width, entries)``: ``entries`` is the total table size
    of the junction tree's maximal cliques, with ``weight`` the number of
    states of each vertex.  Costs are refreshed only where an elimination can
    change them (the eliminated vertex's neighbours, and theirs for fill).
    """
    np.random.seed(random_state)
    n, words = adj0.shape
    adj = adj0.copy()
    alive = all_alive(n, words)
    log_weight = np.log(weight)
    nbr = np.empty(n, dtype=np.int64)          # the eliminated vertex's neighbours
    nbr2 = np.empty(n, dtype=np.int64)         # scratch for the refreshes
    around = np.empty(n, dtype=np.int64)
    cost = np.empty(n)
    degree = np.empty(n, dtype=np.int64)
    noise = np.ones(n)
    stamp = np.full(n, -1, dtype=np.int64)
    greedy = fixed.shape[0] == 0
    constrained = late.shape[0] == n
    early_left = n
    if constrained:
        for v in range(n):
            if late[v]:
                early_left -= 1
    fill_work = 0.0
    for v in range(n):
        if greedy:
            cost[v], degree[v] = _greedy_cost(adj, alive, v, kind, weight, log_weight, nbr)
            fill_work += degree[v] * degree[v]
        if jitter > 0:
            noise[v] = 1.0 + jitter * np.random.random()
    order = np.empty(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)          # clique size at elimination
    log_table = np.empty(n)
    done = np.zeros(n, dtype=np.bool_)
    position = np.empty(n, dtype=np.int64)
    for step in range(n):
        best = -1 if greedy else fixed[step]
        best_key = np.inf
        for v in range(n if greedy else 0):
            if done[v] or (constrained and early_left > 0 and late[v]):
                continue
            key = cost[v] * noise[v]
            if best < 0 or key < best_key or (key == best_key and degree[v] < degree[best]):
                best, best_key = v, key
        v = best
        if constrained and not late[v]:
            early_left -= 1
        m = eliminate_vertex(adj, v, alive, nbr)
        done[v] = True
        order[step] = v
        position[v] = step
        size[v] = m + 1
        log_table[v] = log_weight[v]
        for i in range(m):
            log_table[v] += log_weight[nbr[i]]
        if log_table[v] > give_up_above:
            k = step + 1
            for u in range(n):
                if not done[u]:
                    order[k] = u
                    k += 1
            return order, n, np.inf
        # refresh the costs the elimination can change
        n_around = 0
        for i in range(m if greedy else 0):
            a = nbr[i]
            if stamp[a] != step:
                stamp[a] = step
                around[n_around] = a
                n_around += 1
            if kind == 0 or kind == 2:
                k = alive_neighbours(adj, alive, a, nbr2)
                for j in range(k):
                    b = nbr2[j]
                    if stamp[b] != step:
                        stamp[b] = step
                        around[n_around] = b
                        n_around += 1
        for i in range(n_around):
            a = around[i]
            cost[a], degree[a] = _greedy_cost(adj, alive, a, kind, weight, log_weight, nbr2)
            fill_work += degree[a] * degree[a]
        if fill_work > fill_budget and (kind == 0 or kind == 2):
            kind = 1
            for u in range(n):
                if not done[u]:
                    cost[u], degree[u] = _greedy_cost(adj, alive, u, kind, weight, log_weight,
                                                      nbr2)
    # parent of a clique: its first neighbour eliminated after it; a clique is
    # not maximal when a child's clique holds it (the child has one more vertex)
    maximal = np.ones(n, dtype=np.bool_)
    for v in range(n):
        first = n
        for w in range(adj.shape[1]):
            bits = adj[v, w]
            while bits:
                u = w * 64 + lowest_index(bits)
                bits &= bits - np.uint64(1)
                if position[u] > position[v] and position[u] < first:
                    first = position[u]
        if first < n:
            parent[v] = order[first]
    for v in range(n):
        if parent[v] >= 0 and size[v] == size[parent[v]] + 1:
            maximal[parent[v]] = False
    width = 0
    entries = 0.0
    for v in range(n):
        width = max(width, size[v] - 1)
        if maximal[v]:
            entries += math.exp(log_table[v])
    return order, width, entries


def greedy_entries(scopes, weights, *, method: str = "min-degree",
                   stop_above: float | None = None) -> float:
    """The table entries of the junction tree of one greedy order (``method``
    as in :func:`elimination_order`) of the graph in which each of ``scopes``
    (lists of node indices ``0 .. len(weights) - 1``) is a clique, nodes of
    ``weights`` states; ``inf`` once a clique passes ``stop_above``.  For a
    caller that only asks how large a tree would be: no graph object is built.

    >>> greedy_entries([[0, 1], [1, 2]], [2, 2, 2])
    8.0
    """
    ptr = np.zeros(len(scopes) + 1, dtype=np.int64)
    np.cumsum([len(scope) for scope in scopes], out=ptr[1:])
    var = np.fromiter(itertools.chain.from_iterable(scopes), dtype=np.int64, count=ptr[-1])
    return flat_greedy_entries(ptr, var, weights, method=method, stop_above=stop_above)


def flat_greedy_entries(ptr, var, weights, *, method: str = "min-degree",
                        stop_above: float | None = None) -> float:
    """:func:`greedy_entries` of the scopes ``var[ptr[t]:ptr[t + 1]]`` (int64
    arrays, the form of a model's flat tables), which a caller that holds
    them need not make into lists.

    >>> flat_greedy_entries(np.array([0, 2, 4]), np.array([0, 1, 1, 2]), [2, 2, 2])
    8.0
    """
    if method not in ORDER_HEURISTICS:
        raise InputError(f"method must be one of {ORDER_HEURISTICS}, got {method!r}")
    w = _node_weights(range(len(weights)), list(weights), required=True)
    if not len(w):
        return 0.0
    give_up = np.inf if stop_above is None else math.log(stop_above)
    _, _, entries = greedy_elimination(rows_of_scopes(len(w), ptr, var), _KIND[method],
                                       w, 0.0, 0, _NO_ORDER, np.zeros(0, np.bool_), give_up)
    return float(entries)


def _bitset_rows(graph: nx.Graph, nodes) -> np.ndarray:
    index = {v: i for i, v in enumerate(nodes)}
    ends = np.array([(index[u], index[v]) for u, v in graph.edges() if u != v],
                    dtype=np.int64).reshape(-1, 2)
    return _bitset_rows_of(len(nodes), ends)


def _bitset_rows_of(n, ends) -> np.ndarray:
    """Bitset rows of the graph on nodes ``0 .. n - 1`` with edges ``ends`` (pairs)."""
    adj = np.zeros((n, (n + 63) // 64), dtype=np.uint64)
    # both directions at once: a numpy step per edge cost as much as a greedy order
    rows, cols = np.concatenate([ends, ends[:, ::-1]]).T
    bits = np.left_shift(np.uint64(1), (cols & 63).astype(np.uint64))
    np.bitwise_or.at(adj, (rows, cols >> 6), bits)
    return adj


def elimination_order(graph: nx.Graph, *, method: str = "auto", weights=None,
                      restarts: int | None = None, time_limit: float | None = None,
                      random_state=0, last=(), stop_above: float | None = None,
                      fit_within: float | None = None, sweeps: bool = True,
                      with_cost: bool = False, fill_budget: float | None = None):
    """An elimination order of ``graph``, by greedy heuristics (compiled).

    Each heuristic repeatedly eliminates the node that is cheapest now:
    ``"min-degree"``: fewest neighbours; ``"min-fill"``: fewest fill-in edges
    needed to make its neighbours a clique; ``"weighted-min-fill"``: fill-in
    edges weighted by the product of their endpoints' ``weights`` (numbers of
    states), so large-domain variables are joined reluctantly; ``"min-size"``:
    the smallest table (product of the weights of the node and its
    neighbours).  Ties go to fewer neighbours, then to the node listed first.

    ``"auto"`` runs all four, then ``restarts`` randomised runs of min-fill,
    weighted min-fill and min-size (costs jittered, ties broken at random;
    default ``max(8, 3000 // n)``, also stopped by ``time_limit`` seconds), and
    keeps the order of least total table size (then least width): the size of
    the junction tree exact inference builds.  ``weights`` default to 2 per
    node (a dict or a sequence in node order).  Deterministic for a given
    ``random_state`` when no ``time_limit`` stops it early.  Nodes in ``last``
    come after all the others (the constrained orders of marginal MAP, which
    must sum out the other variables before maximising over these).  With
    ``stop_above``, "auto" returns at once when every greedy order needs more
    table entries than that (each stops at its first clique over it, and the
    order returned is finished arbitrarily; a single heuristic stops so too):
    the sweeps and restarts shrink a tree by small factors, not by orders of
    magnitude, so a caller that only asks whether a tree fits its budget
    passes a large multiple of the budget.
    ``fit_within`` is that budget: a sweep or restart stops at its first
    clique over it, since such an order cannot fit, and is not kept.
    ``sweeps=False`` leaves out the spectral sweeps (an eigen-decomposition of
    the graph's Laplacian each), for a caller that orders many graphs.
    ``with_cost=True`` returns ``(order, width, entries)``, the order's
    :func:`elimination_cost` as the search measured it (``(n, inf)`` for an
    order that ``stop_above`` cut short), so that a caller need not measure it
    again.  ``fill_budget`` caps each min-fill run's work, in pairs of
    neighbours compared: past it the order goes on by min-degree (see
    :func:`greedy_elimination` and :data:`FILL_BUDGET`).

    >>> elimination_order(nx.path_graph(4), method="min-degree")
    [0, 1, 2, 3]
    >>> elimination_order(nx.path_graph(4), method="min-degree", last=[0])
    [3, 2, 1, 0]
    >>> order = elimination_order(nx.grid_2d_graph(6, 6))
    >>> elimination_cost(nx.grid_2d_graph(6, 6), order)[0]
    6
    """
    if method not in ORDER_METHODS:
        raise InputError(f"method must be one of {ORDER_METHODS}, got {method!r}")
    nodes = list(graph.nodes)
    if not nodes:
        return ([], 0, 0.0) if with_cost else []
    w = _node_weights(nodes, weights, required=method == "weighted-min-fill")
    adj = _bitset_rows(graph, nodes)
    unknown = set(last) - set(nodes)
    if unknown:
        raise InputError(f"last names nodes not in the graph: {sorted(map(str, unknown))}")
    late = np.array([v in set(last) for v in nodes], dtype=np.bool_)
    give_up = np.inf if stop_above is None else math.log(stop_above)
    fill = np.inf if fill_budget is None else fill_budget
    if method != "auto":
        order, width, entries = greedy_elimination(adj, _KIND[method], w, 0.0, 0, _NO_ORDER,
                                                   late, give_up, fill)
        return _named(nodes, order, width, entries, with_cost)
    started = time.perf_counter()
    best = None
    # with equal weights, weighted min-fill and min-size rank the vertices as
    # min-fill and min-degree do, and would repeat their orders
    kinds = range(len(ORDER_HEURISTICS)) if np.ptp(w) > 0 else (_KIND["min-fill"],
                                                                 _KIND["min-degree"])
    for kind in kinds:
        order, width, entries = greedy_elimination(adj, kind, w, 0.0, 0, _NO_ORDER, late,
                                                   give_up, fill)
        if best is None or (entries, width) < best[:2]:
            best = (entries, width, order)
    if stop_above is not None and best[0] > stop_above:
        return _named(nodes, best[2], best[1], best[0], with_cost)
    within = np.inf if fit_within is None else math.log(fit_within)
    if (sweeps and best[1] >= SWEEP_FROM_WIDTH and len(nodes) <= SWEEP_MAX_NODES
            and not late.any()):
        for order in _spectral_sweeps(graph, nodes):
            order, width, entries = greedy_elimination(adj, 0, w, 0.0, 0, order, late, within)
            if (entries, width) < best[:2]:
                best = (entries, width, order)
    restarts = max(8, 3000 // len(nodes)) if restarts is None else restarts
    rng = np.random.default_rng(random_state)
    for r in range(restarts):
        if time_limit is not None and time.perf_counter() - started > time_limit:
            break
        kind = (_KIND["min-fill"], _KIND["weighted-min-fill"], _KIND["min-size"])[r % 3]
        order, width, entries = greedy_elimination(adj, kind, w, 0.5 * rng.random(),
                                                   int(rng.integers(2**31)), _NO_ORDER, late,
                                                   within, fill)
        if (entries, width) < best[:2]:
            best = (entries, width, order)
    return _named(nodes, best[2], best[1], best[0], with_cost)


def _named(nodes, order, width, entries, with_cost):
    """An order of node indices as the nodes, with its cost if asked for."""
    named = [nodes[i] for i in order]
    return (named, int(width), float(entries)) if with_cost else named


_NO_ORDER = np.empty(0, dtype=np.int64)
SWEEP_FROM_WIDTH = 12        # below it the greedy orders are good enough and cheap to use
SWEEP_MAX_NODES = 3000       # dense eigen-decomposition beyond would cost seconds
SWEEP_ANGLES = 12


def _spectral_sweeps(graph: nx.Graph, nodes):
    """Orders that sweep the graph along directions of its two smoothest
    Laplacian eigenvectors (a grid is then eliminated row by row, width = side),
    one per connected component in turn."""
    index = {v: i for i, v in enumerate(nodes)}
    coords = np.zeros((len(nodes), 2))
    component = np.empty(len(nodes), dtype=np.int64)
    for c, comp in enumerate(nx.connected_components(graph)):
        members = [v for v in nodes if v in comp]
        rows = [index[v] for v in members]
        component[rows] = c
        if len(members) > 3:
            lap = nx.laplacian_matrix(graph, nodelist=members).toarray().astype(float)
            coords[rows] = _smoothest_pair(lap)
    for angle in np.linspace(0, np.pi, SWEEP_ANGLES, endpoint=False):
        yield np.lexsort((_levels(coords @ np.array([np.cos(angle), np.sin(angle)])),
                          component)).astype(np.int64)


def _levels(position, tol=1e-7):
    """``position`` as ranks of levels: values closer than ``tol`` to the one
    before share a level (then go in node order).  LAPACK's noise (1e-12) would
    otherwise split nodes of one grid row by chance, differently from one
    numpy build to the next; rounding would too, for values by a rounding edge."""
    order = np.argsort(position, kind="stable")
    level = np.empty(len(position), dtype=np.int64)
    level[order] = np.concatenate(([0], np.cumsum(np.diff(position[order]) > tol)))
    return level


def _smoothest_pair(lap):
    """The second and third eigenvectors of a Laplacian, the same in every process.

    A square grid's two smoothest eigenvectors share one eigenvalue, and the basis
    LAPACK returns for such a pair changes with BLAS threads and memory layout.
    A diagonal ramp of 1e-6 splits the pair (picking, on a grid, the row and the
    column directions), the signs are fixed by that ramp, and the callers group
    positions closer than 1e-7 (:func:`_levels`), within which LAPACK's noise stays."""
    ramp = np.linspace(0.0, 1.0, lap.shape[0])
    # only the pair is computed (a third of the full decomposition's time), on one
    # BLAS thread: with another process on the other core, two threads wait on each
    # other and the call takes seven to ten times longer
    with threadpool_limits(1):
        vectors = scipy.linalg.eigh(lap + np.diag(RAMP * ramp), subset_by_index=[1, 2],
                                    driver="evr")[1]
    for j in range(2):
        lean = vectors[:, j] @ (ramp - 0.5)
        if abs(lean) < 1e-9:             # symmetric about the ramp: the first clear entry
            lean = vectors[np.argmax(np.abs(vectors[:, j]) > 1e-6), j]
        if lean < 0:
            vectors[:, j] *= -1
    return vectors


RAMP = 1e-6


def _node_weights(nodes, weights, required: bool) -> np.ndarray:
    if weights is None:
        if required:
            raise InputError("weighted-min-fill needs node weights (e.g. numbers of states)")
        return np.full(len(nodes), 2.0)
    w = np.array([weights[v] for v in nodes] if isinstance(weights, dict) else weights,
                 dtype=np.float64)
    if w.shape != (len(nodes),) or not np.all(w >= 1):
        raise InputError("weights must give every node a number of states >= 1")
    return w


def elimination_cost(graph: nx.Graph, order, weights=None):
    """``(width, entries)`` of an elimination order: its width, and the total
    table size of the junction tree it gives (the product of ``weights``, by
    default 2 per node, over each maximal clique, summed).

    >>> elimination_cost(nx.cycle_graph(4), [0, 1, 2, 3], {v: 3 for v in range(4)})
    (2, 54.0)
    """
    nodes = list(graph.nodes)
    order = list(order)
    if sorted(map(str, order)) != sorted(map(str, nodes)) or len(set(order)) != len(order):
        raise InputError("the order must list every node of the graph exactly once")
    if not nodes:
        return 0, 0.0
    index = {v: i for i, v in enumerate(nodes)}
    _, width, entries = greedy_elimination(
        _bitset_rows(graph, nodes), 0, _node_weights(nodes, weights, required=False), 0.0, 0,
        np.array([index[v] for v in order], dtype=np.int64))
    return int(width), float(entries)


def induced_graph(graph: nx.Graph, order) -> nx.Graph:
    """The triangulated graph: ``graph`` plus the fill-in edges that eliminating in
    ``order`` adds.  Its maximal cliques have at most width + 1 nodes."""
    out = nx.Graph(graph)
    for _, nbrs in _eliminate(graph, order):
        out.add_edges_from(itertools.combinations(nbrs, 2))
    return out


def treewidth_upper_bound(graph: nx.Graph, weights=None):
    """``(width, order)``: the best of the greedy elimination heuristics."""
    best = None
    for method in ORDER_HEURISTICS:
        if method == "weighted-min-fill" and weights is None:
            continue
        order = elimination_order(graph, method=method, weights=weights)
        width = elimination_width(graph, order)
        if best is None or width < best[0]:
            best = (width, order)
    return best


def treewidth_exact(graph: nx.Graph, *, max_nodes: int = 20):
    """``(treewidth, order)`` by dynamic programming over vertex subsets.

    Uses the recursion of Bodlaender et al. (2006): ``TW(S) = min over v in S of
    max(TW(S - v), |Q(S - v, v)|)``, where ``Q(S, v)`` are the vertices outside
    ``S + v`` reachable from ``v`` through ``S``.  Exponential: for graphs of at
    most ``max_nodes`` vertices (20 by default), meant to test the heuristics.
    """
    n = graph.number_of_nodes()
    if n > max_nodes:
        raise BudgetExceeded(f"exact tree-width over {n} nodes would take too long "
                             f"(max_nodes={max_nodes})")
    if n == 0:
        return 0, []
    nodes, adj = _adjacency_words(graph)
    tw, last = _treewidth_dp(adj, n)
    order, s = [], (1 << n) - 1
    while s:
        v = int(last[s])
        order.append(nodes[v])
        s &= ~(1 << v)
    return int(tw[(1 << n) - 1]), order[::-1]


@nb.njit(cache=True)
def _q_size(adj, s, v):
    """|Q(S, v)|: vertices outside S + v adjacent to v's component in G[S + v]."""
    comp = 1 << v
    frontier = 1 << v
    reach = 0
    while frontier:
        nxt = 0
        f = frontier
        while f:
            u = lowest_index(f)
            reach |= adj[u]
            nxt |= adj[u] & s & ~comp
            f &= f - 1
        comp |= nxt
        frontier = nxt
    return popcount(reach & ~s & ~(1 << v))


@nb.njit(cache=True)
def _treewidth_dp(adj, n):
    size = 1 << n
    tw = np.empty(size, dtype=np.int64)
    last = np.zeros(size, dtype=np.int8)
    tw[0] = -1
    for s in range(1, size):
        best = n
        best_v = 0
        rest = s
        while rest:
            v = lowest_index(rest)
            prev = s & ~(1 << v)
            cand = max(tw[prev], _q_size(adj, prev, v))
            if cand < best:
                best = cand
                best_v = v
            rest &= rest - 1
        tw[s] = best
        last[s] = best_v
    return tw, last


def _adjacency_words(graph: nx.Graph):
    """``(nodes, adj)``: the graph's nodes and one int64 neighbour bitset per node."""
    nodes = list(graph.nodes)
    if len(nodes) > 62:
        raise InputError(f"{len(nodes)} nodes do not fit one 64-bit word (at most 62)")
    index = {v: i for i, v in enumerate(nodes)}
    adj = np.zeros(len(nodes), dtype=np.int64)
    for u, v in graph.edges():
        if u != v:
            adj[index[u]] |= 1 << index[v]
            adj[index[v]] |= 1 << index[u]
    return nodes, adj


def treewidth_at_most(graph: nx.Graph, k: int, *, max_nodes: int = 24) -> bool:
    """Whether ``graph`` has tree-width at most ``k``, decided exactly.

    A min-fill order of width ``<= k`` answers yes at once; otherwise the
    subsets that some order of width ``<= k`` can eliminate first are grown
    one vertex at a time (the recursion of :func:`treewidth_exact`, kept to
    those subsets), and the answer is yes when the whole vertex set is reached.

    >>> treewidth_at_most(nx.complete_graph(5), 3), treewidth_at_most(nx.cycle_graph(6), 2)
    (False, True)
    """
    n = graph.number_of_nodes()
    if n <= k + 1 or elimination_width(graph, elimination_order(graph, method="min-fill")) <= k:
        return True
    removed, core = simplicial_reduction(graph, k)
    n = core.number_of_nodes()
    # min-fill again only on a smaller graph: on the same one it gives the same order
    if n <= k + 1 or (removed and elimination_width(
            core, elimination_order(core, method="min-fill")) <= k):
        return True
    if n > max_nodes:
        raise BudgetExceeded(f"deciding tree-width <= {k} over {n} nodes would take too long "
                             f"(max_nodes={max_nodes}; what is left once the simplicial "
                             "vertices of degree <= k are removed)")
    adj = _adjacency_words(core)[1]
    return bool(_fits(adj, np.int64((1 << n) - 1), k))


def simplicial_reduction(graph: nx.Graph, k: int):
    """``(removed, core)``: the vertices deleted, in turn, while some vertex has
    at most ``k`` neighbours, all adjacent to each other, and the subgraph left.

    Eliminating such a (simplicial) vertex first costs its degree and adds no
    edge, so the tree-width of the graph is the larger of that degree and the
    tree-width of the rest: the graph has tree-width ``<= k`` exactly when the
    core has, ``removed`` followed by an order of the core of width ``<= k``
    is an order of the graph of width ``<= k``, and a subgraph of the core of
    tree-width ``> k`` is one of the graph.  Moral graphs of sparse networks
    shrink to a small core, on which the exact decisions are affordable.

    >>> g = nx.complete_graph(5)
    >>> g.add_edges_from([(4, 5), (5, 6)])
    >>> removed, core = simplicial_reduction(g, 3)
    >>> removed, sorted(core)
    ([6, 5], [0, 1, 2, 3, 4])
    """
    core = graph.copy()
    removed = []
    changed = True
    while changed:
        changed = False
        for v in list(core.nodes):
            around = list(core[v])
            if len(around) <= k and all(core.has_edge(a, b)
                                        for a, b in itertools.combinations(around, 2)):
                removed.append(v)
                core.remove_node(v)
                changed = True
    return removed, core


@nb.njit(cache=True)
def _width_at_most(adj, n, k):
    size = 1 << n
    good = np.zeros(size, dtype=np.bool_)
    good[0] = True
    for s in range(size):
        if not good[s]:
            continue
        for v in range(n):
            if (s >> v) & 1 == 0 and not good[s | (1 << v)] and _q_size(adj, s, v) <= k:
                good[s | (1 << v)] = True
    return good[size - 1]


@nb.njit(cache=True)
def _fits(adj, alive, k):
    """Tree-width ``<= k`` of the subgraph on the vertices of the bitset ``alive``."""
    index = np.full(adj.size, -1)
    m = 0
    for v in range(adj.size):
        if (alive >> v) & 1:
            index[v] = m
            m += 1
    if m <= k + 1:
        return True
    sub = np.zeros(m, dtype=np.int64)
    for v in range(adj.size):
        if index[v] >= 0:
            for u in range(adj.size):
                if (adj[v] >> u) & 1 and index[u] >= 0:
                    sub[index[v]] |= np.int64(1) << index[u]
    return _width_at_most(sub, m, k)


@nb.njit(cache=True)
def _obstruction(adj, k, vertices, edges):
    """An edge-minimal subgraph of tree-width ``> k`` (adjacency words): vertices
    dropped in the order ``vertices`` while the rest keeps tree-width ``> k``, then
    the edges in the order of the rows of ``edges``."""
    alive = np.int64(0)
    for v in range(adj.size):
        alive |= np.int64(1) << v
    for v in vertices:
        fewer = alive & ~(np.int64(1) << v)
        if not _fits(adj, fewer, k):
            alive = fewer
    core = adj.copy()
    for v in range(adj.size):
        core[v] = core[v] & alive if (alive >> v) & 1 else 0
    for i in range(edges.shape[0]):
        a, b = edges[i, 0], edges[i, 1]
        if (core[a] >> b) & 1:
            core[a] &= ~(np.int64(1) << b)
            core[b] &= ~(np.int64(1) << a)
            if _fits(core, alive, k):
                core[a] |= np.int64(1) << b
                core[b] |= np.int64(1) << a
    return core


def width_obstruction(graph: nx.Graph, k: int, *, max_nodes: int = 24,
                      weights: dict | None = None) -> nx.Graph:
    """An edge-minimal subgraph of tree-width ``> k``: dropping any one of its
    edges brings the tree-width down to ``k`` or less.

    Vertices go first while what is left still has tree-width ``> k``, then
    edges, each decided as in :func:`treewidth_at_most` (compiled).  Every graph
    of tree-width ``<= k`` therefore misses at least one edge of the result.
    Without ``weights`` vertices are tried fewest neighbours first and edges in
    sorted order; with ``weights`` (``{(u, v): w}``, missing edges weigh 0) the
    lightest edges, and the vertices of least incident weight, are tried first,
    so the obstruction keeps heavy edges where it can.  Raises InputError when
    ``graph`` itself has tree-width ``<= k``.

    >>> width_obstruction(nx.complete_graph(6), 3).number_of_edges()   # a 5-clique
    10
    """
    # the core's tree-width is over k exactly when the graph's is, and its
    # obstructions are the graph's: decided and searched there, it is reduced once
    core = simplicial_reduction(graph, k)[1]
    if treewidth_at_most(core, k, max_nodes=max_nodes):
        raise InputError(f"the graph has tree-width <= {k}: it holds no obstruction")
    nodes, adj = _adjacency_words(core)
    index = {v: i for i, v in enumerate(nodes)}
    weight = np.zeros((len(nodes), len(nodes)))
    for (u, v), w in (weights or {}).items():
        if u in index and v in index:                  # the simplicial vertices are gone
            weight[index[u], index[v]] = weight[index[v], index[u]] = w
    incident = [(weight[v].sum(), bin(adj[v]).count("1"), v) for v in range(len(nodes))]
    vertices = np.array([v for *_, v in sorted(incident)], dtype=np.int64)
    edges = sorted((weight[a, b], a, b) for a in range(len(nodes)) for b in range(a + 1, len(nodes))
                   if (int(adj[a]) >> b) & 1)
    core = _obstruction(adj, k, vertices, np.array([[a, b] for _, a, b in edges],
                                                   dtype=np.int64).reshape(-1, 2))
    out = nx.Graph()
    out.add_edges_from((nodes[a], nodes[b]) for a in range(len(nodes))
                       for b in range(a + 1, len(nodes)) if (int(core[a]) >> b) & 1)
    return out


# ------------------------------------------------------------------ clique trees
def clique_tree(graph: nx.Graph, order):
    """Junction tree of ``graph`` from an elimination order.

    Returns ``(cliques, edges)``: the maximal cliques of the induced graph (each
    a tuple in elimination order) and tree edges ``(i, j)`` between clique
    indices.  Eliminating ``v`` makes the clique ``v + N(v)``; its parent is the
    clique of the first of ``N(v)`` eliminated after it.  A clique inside a
    child's clique (the child has exactly one more vertex) is merged into that
    child, which takes over its edges.  The trees of a disconnected graph are
    joined by edges with empty separators.  Linear in the size of the cliques.

    >>> clique_tree(nx.path_graph(4), [0, 1, 2, 3])
    ([(0, 1), (1, 2), (2, 3)], [(1, 0), (2, 1)])
    """
    position = {v: i for i, v in enumerate(order)}
    steps = list(_eliminate(graph, order))
    nbrs = {v: ns for v, ns in steps}
    parent = {v: min(ns, key=position.__getitem__) if ns else None for v, ns in steps}
    absorbed_by = {}
    for v, ns in steps:
        p = parent[v]
        if p is not None and len(ns) == len(nbrs[p]) + 1:
            absorbed_by[p] = v

    def holder(v):                      # the maximal clique that holds v's clique
        while v in absorbed_by:
            v = absorbed_by[v]
        return v

    maximal = [v for v, _ in steps if v not in absorbed_by]
    index = {v: i for i, v in enumerate(maximal)}
    cliques = [tuple(sorted(nbrs[v] | {v}, key=position.__getitem__)) for v in maximal]
    edges, roots = [], []
    for v in maximal:
        p = parent[v]
        while p is not None and holder(p) == v:
            p = parent[p]
        if p is not None:
            edges.append((index[holder(p)], index[v]))
        else:
            roots.append(index[v])
    edges += [(roots[0], r) for r in roots[1:]]
    if not has_running_intersection(cliques, edges):
        raise InternalError("clique tree violates running intersection")
    return cliques, edges


def has_running_intersection(cliques, edges) -> bool:
    """True when the cliques form a tree in which every variable's cliques are
    connected: a variable in ``m`` cliques must lie on both ends of exactly
    ``m - 1`` edges.

    >>> has_running_intersection([(0, 1), (1, 2), (0, 2)], [(0, 1), (1, 2)])
    False
    """
    tree = nx.Graph()
    tree.add_nodes_from(range(len(cliques)))
    tree.add_edges_from(edges)
    if len(cliques) and (not nx.is_tree(tree) or tree.number_of_edges() != len(edges)):
        return False
    holding, joined = {}, {}
    for c in cliques:
        for v in set(c):
            holding[v] = holding.get(v, 0) + 1
    for i, j in edges:
        for v in set(cliques[i]) & set(cliques[j]):
            joined[v] = joined.get(v, 0) + 1
    return all(joined.get(v, 0) == m - 1 for v, m in holding.items())


# ------------------------------------------------------------------------ k-trees
def ktree_elimination_order(graph: nx.Graph, k: int):
    """A perfect elimination order of a k-tree (width exactly k), or None if
    ``graph`` is not a k-tree.

    A graph on more than k nodes is a k-tree exactly when nodes whose neighbours
    form a k-clique can be removed one by one until a (k+1)-clique remains
    (Definition 1 of Nie et al. 2016, run backwards).

    >>> ktree_elimination_order(nx.path_graph(4), 1) is not None
    True
    >>> ktree_elimination_order(nx.cycle_graph(4), 1) is None
    True
    """
    n = graph.number_of_nodes()
    if k < 1 or n < k + 1:
        return None
    adj = {v: set(graph.neighbors(v)) - {v} for v in graph.nodes}
    if sum(len(a) for a in adj.values()) // 2 != k * (k + 1) // 2 + (n - k - 1) * k:
        return None
    order = []
    ready = [v for v in adj if _is_simplicial_k(adj, v, k)]
    while len(adj) > k + 1:
        while ready and (ready[-1] not in adj or not _is_simplicial_k(adj, ready[-1], k)):
            ready.pop()
        if not ready:
            return None
        v = ready.pop()
        for u in adj.pop(v):
            adj[u].discard(v)
            if _is_simplicial_k(adj, u, k):
                ready.append(u)
        order.append(v)
    rest = list(adj)
    if any(len(adj[v]) != k for v in rest):
        return None
    return order + rest


def _is_simplicial_k(adj, v, k) -> bool:
    nbrs = adj[v]
    return len(nbrs) == k and all(b in adj[a] for a, b in itertools.combinations(nbrs, 2))


def is_ktree(graph: nx.Graph, k: int) -> bool:
    """Is ``graph`` a k-tree?"""
    return ktree_elimination_order(graph, k) is not None


def ktree_cliques(graph: nx.Graph, k: int):
    """``(k_cliques, top_cliques)``: the k-cliques and (k+1)-cliques of a k-tree, as
    sorted tuples.  Raises ValueError if ``graph`` is not a k-tree."""
    order = ktree_elimination_order(graph, k)
    if order is None:
        raise InputError(f"the graph is not a {k}-tree")
    top, small = set(), set()
    for v, nbrs in _eliminate(graph, order):
        if len(nbrs) == k:
            top.add(tuple(sorted(nbrs | {v}, key=str)))
    for c in top:
        small.update(tuple(sorted(s, key=str)) for s in itertools.combinations(c, k))
    return sorted(small, key=str), sorted(top, key=str)


# ------------------------------------------------------ equivalence classes
def order_arcs(parents: dict) -> list:
    """Chickering's ORDER-ARCS: arcs sorted by their head's topological position
    (lowest first) and, for one head, by their tail's position (highest first)."""
    order = topological_order(parents)
    position = {v: i for i, v in enumerate(order)}
    return [(x, y) for y in order
            for x in sorted(parents[y], key=position.__getitem__, reverse=True)]


def pattern(parents: dict):
    """The pattern (CPDAG) of a DAG by Chickering's FIND-PATTERN (Rosland's Algorithm 1).

    Returns ``(compelled, reversible)``: the set of arcs ``(x, y)`` that every
    Markov-equivalent DAG shares, and the set of edges (frozensets) whose
    direction varies across the equivalence class.

    >>> compelled, reversible = pattern({"a": [], "b": [], "c": ["a", "b"]})
    >>> sorted(compelled), reversible
    ([('a', 'c'), ('b', 'c')], set())
    """
    arcs = order_arcs(parents)
    pa = {v: set(ps) for v, ps in parents.items()}
    label = dict.fromkeys(arcs)                   # None = unknown
    while True:
        x, y = next(((x, y) for x, y in arcs if label[x, y] is None), (None, None))
        if x is None:
            break
        for w in [w for w in pa[x] if label[w, x] == "compelled"]:
            if w not in pa[y]:
                for z in pa[y]:
                    label[z, y] = "compelled"
                break
            label[w, y] = "compelled"
        else:
            kind = ("compelled" if any(z != x and z not in pa[x] for z in pa[y])
                    else "reversible")
            for z in pa[y]:
                if label[z, y] is None:
                    label[z, y] = kind
    compelled = {a for a, lab in label.items() if lab == "compelled"}
    reversible = {frozenset(a) for a, lab in label.items() if lab == "reversible"}
    return compelled, reversible


def _pair_states(parents: dict, as_pattern: bool) -> dict:
    if as_pattern:
        compelled, reversible = pattern(parents)
        states = {frozenset(a): a for a in compelled}
        states.update({e: "undirected" for e in reversible})
        return states
    return {frozenset((p, v)): (p, v) for v, ps in parents.items() for p in ps}


def structural_hamming_distance(a: dict, b: dict, *, patterns: bool = True) -> int:
    """Number of node pairs whose connection differs between two graphs (parent maps
    over the same nodes): absent in one, or oriented differently.  With ``patterns``
    the graphs' patterns are compared, so Markov-equivalent DAGs are at distance 0.

    >>> structural_hamming_distance({"a": [], "b": ["a"]}, {"a": ["b"], "b": []})
    0
    >>> structural_hamming_distance({"a": [], "b": ["a"]}, {"a": ["b"], "b": []}, patterns=False)
    1
    """
    if set(a) != set(b):
        raise InputError(f"the graphs have different nodes: {sorted(set(a) ^ set(b), key=str)[:5]}")
    sa, sb = _pair_states(a, patterns), _pair_states(b, patterns)
    return sum(sa.get(pair) != sb.get(pair) for pair in set(sa) | set(sb))


def compare_arcs(parents: dict, truth: dict) -> dict:
    """Each arc of ``parents`` against ``truth`` (both parent maps): ``"shared"``,
    ``"reversed"`` (truth has it the other way) or ``"extra"``; and ``"missing"``,
    truth's arcs that ``parents`` lacks either way (sorted).  Returns
    ``{kind: [(parent, child), ...]}``, the arcs of ``parents`` in its own order.

    >>> arcs = compare_arcs({"a": [], "b": ["a"], "c": ["b"]}, {"a": ["b"], "b": [], "c": ["d"]})
    >>> arcs["reversed"], arcs["extra"], arcs["missing"]
    ([('a', 'b')], [('b', 'c')], [('d', 'c')])
    """
    ours = [(p, v) for v, ps in parents.items() for p in ps]
    theirs = {(p, v) for v, ps in truth.items() for p in ps}
    found = {"shared": [], "reversed": [], "extra": []}
    for p, v in ours:
        found["shared" if (p, v) in theirs
              else "reversed" if (v, p) in theirs else "extra"].append((p, v))
    mine = set(ours)
    found["missing"] = [(p, v) for p, v in sorted(theirs, key=str)
                        if (p, v) not in mine and (v, p) not in mine]
    return found
