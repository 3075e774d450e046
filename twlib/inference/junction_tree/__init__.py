"""The junction tree: built once per network, calibrated once, updated per evidence set.

The tree is built along an elimination order of small total table size and
calibrated once without evidence; each evidence set then runs Hugin propagation
that touches only the cliques the evidence and the question reach.  Tables are
normalised as they go and their scales accumulated in log space, so long chains
do not underflow and ``P(e)`` is exact.  One class, :class:`JunctionTree`, in
four parts a reader can find:

* ``structure``: cliques, separators, the rooted tree and the calibrated prior;
* ``sum_product``: posteriors, joints and ``P(e)`` for one evidence set, by one
  compiled pass (:mod:`twlib.inference.kernels`) that copies no table;
* ``max_product``: the most probable explanation, the same tree with maxima;
* ``batches``: many evidence sets at once, vectorised over a leading axis and
  spread over an executor: posteriors, MPE, ``P(e)``, expected counts, samples.
"""
from __future__ import annotations

from .batches import Batches
from .max_product import MaxProduct
from .structure import TreeStructure
from .sum_product import SumProduct

__all__ = ["JunctionTree"]


class JunctionTree(Batches, SumProduct, MaxProduct, TreeStructure):
    """A junction tree of a Bayesian network or factor model, calibrated once
    without evidence and then updated per evidence set (Hugin propagation).

    Parameters
    ----------
    model : BayesianNetwork or FactorModel
    order : list, optional
        Elimination order of the moral (interaction) graph.  By default
        :func:`twlib.graphs.elimination_order` with ``order_method`` and the
        variables' numbers of states as weights: the order of least total table
        size among the greedy heuristics it tries.
    max_memory_gb : float
        Refuse, with :class:`MemoryBudgetExceeded`, trees whose tables would
        need more memory than this: the calibrated clique tables (8 bytes an
        entry) plus two working copies of the largest one.
    order_method : str
        The method of :func:`twlib.graphs.elimination_order` used when no
        order is given.

    How a query runs: the tree holds every clique's prior marginal ``P(C)``
    and every separator's ``P(S)``.  Evidence multiplies indicators into the
    smallest clique holding each observed variable; only the cliques on the
    paths from those to the root send messages up (collect), then messages go
    down (distribute) only into the parts of the tree that hold a variable
    asked about, and a part whose incoming separator marginal did not change
    keeps its prior marginals.  Each message replaces a separator ``S`` and
    rescales the receiving table by ``new(S) / old(S)``; tables are kept
    normalised with their log-scales counted, so ``P(e)`` does not underflow.

    Examples
    --------
    >>> from twlib.datasets import load_network
    >>> jt = JunctionTree(load_network("asia"))
    >>> post = jt.posteriors({"xray": "yes"})
    >>> round(float(post["lung"][0]), 4)
    0.4887
    """

