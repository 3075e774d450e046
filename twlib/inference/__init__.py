"""Inference in discrete Bayesian networks and factor models.

The route, by what fits in memory:

* ``junction_tree``: :class:`JunctionTree`, exact posteriors, ``P(e)``, MPE and
  expected counts, for one evidence set or a batch; its compiled passes live in
  ``kernels``.  The method of choice whenever the tree fits.
* ``elimination``: :func:`variable_elimination` for one query, and
  :func:`marginal_map` (sum out the rest, then maximise over the query).
* ``minibucket``: :func:`mini_buckets`, elimination with its width bounded by an
  i-bound: upper bounds on the MPE value and log Z, a lower bound on log Z,
  within any memory; for the MPE, after ``cost_shifting`` (MPLP, the LP
  relaxation's bound, which moves cost across the mini-bucket splits first).
* ``search`` and ``andor``: :func:`branch_and_bound_mpe`, the exact MPE past the
  tree by AND/OR branch and bound over a pseudo-tree on mini-bucket bounds,
  with a context cache, anytime; :class:`MPESearch`, the same search prepared
  once for many evidence sets of a few observed variables each; and
  :func:`most_probable_explanation`, which picks the junction tree when it fits
  and this search when it does not.  The search re-solves the LP conditioned on
  its open nodes, and ``lp_search`` (LP-based branch and bound with a dynamic
  variable order) and ``propagation`` (depth-first branch and bound that
  removes values by their reduced costs against the incumbent or a target,
  which runs first, before the mini-buckets) take turns with it on the same
  incumbent.
* ``conditioning``: :func:`posterior_marginals`, exact posteriors and ``P(e)``
  in any memory by cutset conditioning when the tree does not fit (the runs
  spread over an executor), bounded by the runs done and a mini-bucket bound
  when time runs out; it picks the tree when it fits.
* ``interventions``: :func:`intervene` (``do(X = x)`` by graph surgery) and
  :func:`do_posteriors`; soft (virtual) evidence is an argument of the junction
  tree's queries and of :func:`most_probable_explanation`.
* ``approximate``: :func:`loopy_belief_propagation` and :func:`gibbs_sample`,
  for models whose tree would not fit, without guarantees.
* ``evidence``: the one check of what is observed, shared by all of them.

Tables are :class:`Factor` objects and models :class:`FactorModel` (from
:mod:`twlib.factors`); an exact method that would pass its memory budget raises
:class:`MemoryBudgetExceeded` saying how much it needs.

>>> from twlib.datasets import load_network
>>> tree = JunctionTree(load_network("asia"))
>>> tree.posteriors({"smoke": "yes"}, ["lung"])["lung"].round(3)
array([0.1, 0.9])
"""
from ..errors import MemoryBudgetExceeded
from ..factors import Factor, FactorModel, ZeroEvidenceError
from .approximate import LoopyResult, gibbs_sample, loopy_belief_propagation
from .conditioning import Marginals, conditioned_posteriors, posterior_marginals
from .elimination import marginal_map, variable_elimination
from .interventions import do_posteriors, intervene
from .junction_tree import JunctionTree
from .minibucket import MiniBuckets, mini_buckets
from .search import MPEResult, MPESearch, branch_and_bound_mpe, most_probable_explanation

__all__ = ["Factor", "FactorModel", "variable_elimination", "marginal_map", "JunctionTree",
           "ZeroEvidenceError", "MemoryBudgetExceeded", "loopy_belief_propagation", "LoopyResult",
           "gibbs_sample", "mini_buckets", "MiniBuckets", "branch_and_bound_mpe",
           "most_probable_explanation", "MPEResult", "MPESearch", "intervene", "do_posteriors",
           "posterior_marginals", "conditioned_posteriors", "Marginals"]
