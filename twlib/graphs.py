"""Graph helpers shared by the learners and the network class.

Directed graphs are given as a parent map ``{node: [parents...]}``; undirected
graphs as networkx graphs.
"""
from __future__ import annotations

import itertools

import networkx as nx
import numba as nb
import numpy as np

from .bitsets import lowest_index, popcount
from .errors import BudgetExceeded, InputError, InternalError

__all__ = ["topological_order", "find_cycle", "to_digraph", "moral_graph",
           "maximum_spanning_tree", "i_score", "orient_tree", "elimination_width", "random_ktree",
           "ORDER_HEURISTICS", "elimination_order", "induced_graph", "treewidth_upper_bound",
           "treewidth_exact", "clique_tree", "has_running_intersection", "ktree_elimination_order",
           "is_ktree", "ktree_cliques", "greedy_clique", "order_arcs", "pattern",
           "structural_hamming_distance"]


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


def maximum_spanning_tree(weights, names=None) -> nx.Graph:
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


def i_score(graph: nx.Graph, mi, names=None) -> float:
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


def orient_tree(tree: nx.Graph, root=None) -> dict:
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


def random_ktree(nodes, k: int, weights=None, random_state=None) -> nx.Graph:
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
ORDER_HEURISTICS = ("min-fill", "min-degree", "weighted-min-fill")


def elimination_order(graph: nx.Graph, method: str = "min-fill", weights=None) -> list:
    """A greedy elimination order: repeatedly eliminate the node that is cheapest now.

    ``"min-degree"``: fewest neighbours; ``"min-fill"``: fewest fill-in edges
    needed to make its neighbours a clique; ``"weighted-min-fill"``: fill-in
    edges weighted by the product of their endpoints' ``weights`` (e.g. numbers
    of states), so large-domain variables are joined reluctantly.  Ties go to
    the node listed first in the graph.

    >>> elimination_order(nx.path_graph(4), "min-degree")
    [0, 1, 2, 3]
    """
    if method not in ORDER_HEURISTICS:
        raise InputError(f"method must be one of {ORDER_HEURISTICS}, got {method!r}")
    if method == "weighted-min-fill" and weights is None:
        raise InputError("weighted-min-fill needs node weights (e.g. numbers of states)")
    rank = {v: i for i, v in enumerate(graph.nodes)}
    adj = {v: set(graph.neighbors(v)) - {v} for v in graph.nodes}

    def cost(v):
        nbrs = adj[v]
        if method == "min-degree":
            return len(nbrs)
        missing = [(a, b) for a, b in itertools.combinations(nbrs, 2) if b not in adj[a]]
        if method == "min-fill":
            return len(missing)
        return sum(weights[a] * weights[b] for a, b in missing)

    order = []
    while adj:
        v = min(adj, key=lambda u: (cost(u), rank[u]))
        nbrs = adj.pop(v)
        for u in nbrs:
            adj[u].discard(v)
            adj[u] |= nbrs - {u}
        order.append(v)
    return order


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
        order = elimination_order(graph, method, weights)
        width = elimination_width(graph, order)
        if best is None or width < best[0]:
            best = (width, order)
    return best


def treewidth_exact(graph: nx.Graph, max_nodes: int = 20):
    """``(treewidth, order)`` by dynamic programming over vertex subsets.

    Uses the recursion of Bodlaender et al. (2006): ``TW(S) = min over v in S of
    max(TW(S - v), |Q(S - v, v)|)``, where ``Q(S, v)`` are the vertices outside
    ``S + v`` reachable from ``v`` through ``S``.  Exponential: for graphs of at
    most ``max_nodes`` vertices (20 by default), meant to test the heuristics.
    """
    nodes = list(graph.nodes)
    n = len(nodes)
    if n > max_nodes:
        raise BudgetExceeded(f"exact tree-width over {n} nodes would take too long "
                             f"(max_nodes={max_nodes})")
    if n == 0:
        return 0, []
    index = {v: i for i, v in enumerate(nodes)}
    adj = np.zeros(n, dtype=np.int64)
    for u, v in graph.edges():
        if u != v:
            adj[index[u]] |= 1 << index[v]
            adj[index[v]] |= 1 << index[u]
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


# ------------------------------------------------------------------ clique trees
def clique_tree(graph: nx.Graph, order):
    """Junction tree of ``graph`` from an elimination order.

    Returns ``(cliques, edges)``: the maximal cliques of the induced graph (each
    a tuple in elimination order) and tree edges ``(i, j)`` between clique
    indices, chosen as a maximum spanning tree on separator sizes, which has the
    running intersection property.
    """
    position = {v: i for i, v in enumerate(order)}
    candidates = [frozenset(nbrs | {v}) for v, nbrs in _eliminate(graph, order)]
    cliques = []
    for c in candidates:                                   # keep the maximal ones
        if not any(c < d for d in candidates) and c not in cliques:
            cliques.append(c)
    tree = nx.Graph()
    tree.add_nodes_from(range(len(cliques)))
    tree.add_weighted_edges_from((i, j, len(cliques[i] & cliques[j]))
                                 for i, j in itertools.combinations(range(len(cliques)), 2))
    edges = [(i, j) for i, j in nx.maximum_spanning_tree(tree).edges()]
    cliques = [tuple(sorted(c, key=position.__getitem__)) for c in cliques]
    if not has_running_intersection(cliques, edges):
        raise InternalError("clique tree violates running intersection")
    return cliques, edges


def has_running_intersection(cliques, edges) -> bool:
    """True when the cliques form a tree in which every variable's cliques are connected."""
    tree = nx.Graph()
    tree.add_nodes_from(range(len(cliques)))
    tree.add_edges_from(edges)
    if len(cliques) and not nx.is_tree(tree):
        return False
    for v in set().union(*map(set, cliques)) if cliques else ():
        holding = [i for i, c in enumerate(cliques) if v in c]
        if not nx.is_connected(tree.subgraph(holding)):
            return False
    return True


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


def structural_hamming_distance(a: dict, b: dict, patterns: bool = True) -> int:
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
