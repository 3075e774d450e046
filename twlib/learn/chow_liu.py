"""Chow-Liu trees: the maximum-likelihood Bayesian network of tree-width one.

Chow and Liu (1968) showed that among all trees the one maximising the data
likelihood is a maximum spanning tree of the pairwise mutual-information graph,
because ``LL(tree) = N * sum_{edges} I(X_u; X_v) - N * sum_v H(X_v)``.
"""
from __future__ import annotations

import time

import networkx as nx
import numpy as np
import pandas as pd

from ..data import Dataset, as_dataset
from ..errors import InputError, InternalError
from ..graphs import elimination_width, maximum_spanning_tree, moral_graph, orient_tree
from ..information import mutual_information_matrix
from ..network import BayesianNetwork
from ..scores import network_score
from .result import LearnResult

__all__ = ["chow_liu_tree", "learn"]


def chow_liu_tree(data: Dataset, *, mi: np.ndarray | None = None):
    """The undirected Chow-Liu tree (networkx Graph over variable names, MI as weights)."""
    if mi is None:
        mi = mutual_information_matrix(data)
    return maximum_spanning_tree(mi, names=data.names)


def _constrained_tree(data: Dataset, mi: np.ndarray, knowledge) -> nx.Graph:
    """The maximum spanning forest over the edges ``knowledge`` allows one way or the
    other, every required arc's edge in it."""
    names = list(data.names)
    # the knowledge passed the width check at k = 1: its required arcs form a forest
    required = {frozenset(arc) for arc in knowledge.required}
    ceiling = float(mi.max()) + 1.0          # a required edge outweighs every other
    graph = nx.Graph()
    graph.add_nodes_from(names)
    for i, u in enumerate(names):
        for j in range(i + 1, len(names)):
            v = names[j]
            if frozenset((u, v)) in required:
                graph.add_edge(u, v, weight=ceiling + float(mi[i, j]))
            elif knowledge.allows(u, v) or knowledge.allows(v, u):
                graph.add_edge(u, v, weight=float(mi[i, j]))
    return nx.maximum_spanning_tree(graph, algorithm="kruskal")


def _rooted(tree: nx.Graph, knowledge, root) -> dict:
    """The forest oriented away from one root per component: the root (``root``
    first, on a tie) under which the fewest arcs point a way the knowledge
    forbids and no required arc points backwards; each arc it still forbids is
    cut, and the part below it is rooted the same way."""
    parents = {v: [] for v in tree.nodes}
    backwards = {(c, p) for p, c in knowledge.required}
    forest = tree.copy()
    todo = [set(component) for component in nx.connected_components(forest)]
    while todo:
        component = todo.pop()
        best = None
        for start in ([root] if root in component else []) + sorted(component, key=str):
            arcs = list(nx.bfs_edges(forest.subgraph(component), start))
            bad = [(u, v) for u, v in arcs if not knowledge.allows(u, v)]
            cost = (sum((u, v) in backwards for u, v in arcs), len(bad))
            if best is None or cost < best[0]:
                best = (cost, arcs, bad)
        (reversed_required, _), arcs, bad = best
        if reversed_required:
            raise InputError(f"no root of the Chow-Liu tree over {sorted(component)[:4]}... "
                             "points every required arc its way")
        forest.remove_edges_from(bad)
        kept = nx.node_connected_component(forest, arcs[0][0]) if arcs else component
        for u, v in arcs:
            if u in kept and v in kept:
                parents[v].append(u)
        rest = forest.subgraph(component - kept)
        todo.extend(set(part) for part in nx.connected_components(rest))
    return parents


def learn(data: Dataset | pd.DataFrame, *, root=None, score: str = "bic", ess: float = 1.0,
          estimator: str = "bdeu", knowledge=None) -> LearnResult:
    """Learn a Chow-Liu tree network.

    ``data``: a Dataset, a DataFrame, a 2-D array or a CSV path (see
    :func:`twlib.data.as_dataset`).

    The tree is rooted at ``root`` (default: the first variable); every
    orientation of a tree scores the same log-likelihood.  Parameters are fitted
    with ``estimator`` (``"bdeu"`` smoothing by default, so held-out rows never
    get probability zero).  The result carries the elimination order that
    removes leaves first, of width one.

    ``knowledge`` (:class:`twlib.knowledge.Knowledge`): an edge that neither
    direction allows is left out (the result may be a forest), every required
    arc's edge is forced in (knowledge whose required arcs are wider than a tree
    is refused), and each component is rooted where the fewest arcs point a
    way the knowledge forbids; those are cut, and the parts below them rooted
    alike.  The status is then ``"complete"``: the tree is the best over the
    allowed edges, the cuts only a repair.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("iris"))
    >>> res.width, len(res.network.arcs)
    (1, 4)
    """
    start = time.perf_counter()
    data = as_dataset(data)
    mi = mutual_information_matrix(data)
    if knowledge:
        knowledge.validate(data.names, 1)
        tree = _constrained_tree(data, mi, knowledge)
        parents = _rooted(tree, knowledge, root if root is not None else data.names[0])
    else:
        tree = chow_liu_tree(data, mi=mi)
        parents = orient_tree(tree, root=root if root is not None else data.names[0])
    net = BayesianNetwork.fit(data, parents, estimator=estimator, ess=ess, name="chow-liu")
    order = list(reversed(net.topological_order()))       # leaves before their parents
    width = elimination_width(moral_graph(parents), order)
    if width > 1:
        raise InternalError(f"a tree's leaf-first order has width {width}")
    total_mi = float(sum(w for _, _, w in tree.edges(data="weight")))
    return LearnResult(network=net, score=network_score(data, parents, score=score, ess=ess),
                       status="complete" if knowledge else "optimal",
                       stats={"score": score, "seconds": time.perf_counter() - start,
                              "i_score": total_mi},
                       parents=parents, elimination_order=order, width=width, ktree=tree,
                       knowledge=knowledge)
