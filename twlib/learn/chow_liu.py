"""Chow-Liu trees: the maximum-likelihood Bayesian network of tree-width one.

Chow and Liu (1968) showed that among all trees the one maximising the data
likelihood is a maximum spanning tree of the pairwise mutual-information graph,
because ``LL(tree) = N * sum_{edges} I(X_u; X_v) - N * sum_v H(X_v)``.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..data import Dataset, as_dataset
from ..errors import InternalError
from ..graphs import elimination_width, maximum_spanning_tree, moral_graph, orient_tree
from ..information import mutual_information_matrix
from ..network import BayesianNetwork
from ..scores import network_score
from .result import LearnResult

__all__ = ["chow_liu_tree", "learn"]


def chow_liu_tree(data: Dataset, mi: np.ndarray | None = None):
    """The undirected Chow-Liu tree (networkx Graph over variable names, MI as weights)."""
    if mi is None:
        mi = mutual_information_matrix(data)
    return maximum_spanning_tree(mi, names=data.names)


def learn(data: Dataset | pd.DataFrame, *, root=None, score: str = "bdeu", ess: float = 1.0,
          estimator: str = "bdeu") -> LearnResult:
    """Learn a Chow-Liu tree network.

    ``data``: a Dataset, a DataFrame, a 2-D array or a CSV path (see
    :func:`twlib.data.as_dataset`).

    The tree is rooted at ``root`` (default: the first variable); every
    orientation of a tree scores the same log-likelihood.  Parameters are fitted
    with ``estimator`` (``"bdeu"`` smoothing by default, so held-out rows never
    get probability zero).  The result carries the elimination order that
    removes leaves first, of width one.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("iris"))
    >>> res.width, len(res.network.arcs)
    (1, 4)
    """
    start = time.perf_counter()
    data = as_dataset(data)
    mi = mutual_information_matrix(data)
    tree = chow_liu_tree(data, mi)
    parents = orient_tree(tree, root=root if root is not None else data.names[0])
    net = BayesianNetwork.fit(data, parents, estimator=estimator, ess=ess, name="chow-liu")
    order = list(reversed(net.topological_order()))       # leaves before their parents
    width = elimination_width(moral_graph(parents), order)
    if width > 1:
        raise InternalError(f"a tree's leaf-first order has width {width}")
    total_mi = float(sum(w for _, _, w in tree.edges(data="weight")))
    return LearnResult(network=net, score=network_score(data, parents, score, ess),
                       status="optimal",
                       stats={"score": score, "seconds": time.perf_counter() - start,
                              "i_score": total_mi},
                       parents=parents, elimination_order=order, width=width, ktree=tree)
