"""Graph helpers shared by the learners and the network class.

Directed graphs are given as a parent map ``{node: [parents...]}``; undirected
graphs as networkx graphs.
"""
from __future__ import annotations

import itertools

import networkx as nx

__all__ = ["topological_order", "find_cycle", "to_digraph", "moral_graph",
           "maximum_spanning_tree", "i_score"]


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
        raise ValueError(f"parents that are not nodes of the graph: {missing}")
    graph = to_digraph(parents)
    try:
        return list(nx.lexicographical_topological_sort(graph, key=position.__getitem__))
    except nx.NetworkXUnfeasible:
        cycle = find_cycle(parents)
        raise ValueError(f"the graph is cyclic: {' -> '.join(map(str, cycle))}") from None


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
