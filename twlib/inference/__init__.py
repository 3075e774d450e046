"""Inference in discrete Bayesian networks and factor models.

The route, by what fits in memory, chosen by ``routing`` (its two routers,
:func:`most_probable_explanation` and :func:`posterior_marginals`, pick the
cheapest exact method by the rates in ``costs``):

* ``junction_tree``: :class:`JunctionTree`, exact posteriors, ``P(e)``, MPE and
  expected counts, for one evidence set or a batch, in four parts (structure,
  sum-product, max-product, batches); its compiled passes live in ``kernels``,
  the walks over a clique table they share in ``table_walk``.
  The method of choice whenever the tree fits; a tree whose MPE queries are
  slow hands them to a prepared :class:`MPESearch` first (``max_product``).
* ``max_sum``: :func:`max_sum_mpe`, the MPE of a model asked once by one
  max-sum pass up a clique tree that holds only its largest table at a time
  (the router's exact MPE whenever its tables can be made in time).
* ``elimination``: :func:`variable_elimination` for one query, and
  :func:`marginal_map` (sum out the rest, then maximise over the query).
* ``minibucket``: :func:`mini_buckets`, elimination with its width bounded by an
  i-bound: upper bounds on the MPE value and log Z, a lower bound on log Z,
  within any memory; for the MPE, after ``cost_shifting`` (MPLP, the LP
  relaxation's bound, which moves cost across the mini-bucket splits first).
* ``presolve``: the variables of at most two neighbours maximised out exactly,
  before the router's tree and before the search.
* ``search``: :func:`branch_and_bound_mpe`, the exact MPE past the tree, and
  :class:`MPESearch`, the same prepared once for many evidence sets.  Both
  start with MPLP and the propagation search in turns (``ShiftAndProbe``,
  which the router gives a first turn before it builds any tree; a turn that
  finds no assignment of non-zero probability hands the zeros to a SAT
  solver, ``zeros``), then run
  the ``portfolio``: five engines with one interface (``engine``) taking turns
  on one incumbent: the hybrid best-first ``dive``, AND/OR branch and bound
  (``andor``), LP-based branch and bound (``lp_search``), the propagation
  search (``propagation``, compiled in ``propagation_kernels``) and iterated
  local search (``local_search``), all reading the flat tables of ``flat``.
* ``conditioning``: :func:`conditioned_posteriors`, exact posteriors and
  ``P(e)`` in any memory by cutset conditioning (the runs spread over an
  executor), bounded by the runs done and a mini-bucket bound when time runs out,
  and :func:`bounded_posteriors`, the mini-bucket bounds alone.
* ``interventions``: :func:`intervene` (``do(X = x)`` by graph surgery) and
  :func:`do_posteriors`; soft (virtual) evidence is an argument of the junction
  tree's queries and of :func:`most_probable_explanation`.
* ``approximate``: :func:`loopy_belief_propagation` and :func:`gibbs_sample`,
  for models whose tree would not fit, without guarantees.
* ``evidence``: the one check of what is observed, shared by all of them.

Every MPE path returns an :class:`MPEResult` and every marginal path a
:class:`Marginals` (``results``); the batch methods of :class:`JunctionTree`
return an :class:`MPEBatch` or a :class:`MarginalsBatch`, arrays with one row
per evidence set that give each set's :class:`MPEResult` or :class:`Marginals`.

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
from .approximate import gibbs_sample, loopy_belief_propagation
from .conditioning import bounded_posteriors, conditioned_posteriors
from .elimination import marginal_map, variable_elimination
from .interventions import do_posteriors, intervene
from .junction_tree import JunctionTree
from .max_sum import max_sum_mpe
from .minibucket import MiniBuckets, mini_buckets
from .results import Marginals, MarginalsBatch, MPEBatch, MPEResult
from .routing import most_probable_explanation, posterior_marginals
from .search import MPESearch, branch_and_bound_mpe

__all__ = ["Factor", "FactorModel", "variable_elimination", "marginal_map", "JunctionTree",
           "ZeroEvidenceError", "MemoryBudgetExceeded", "loopy_belief_propagation",
           "gibbs_sample", "mini_buckets", "MiniBuckets", "branch_and_bound_mpe",
           "most_probable_explanation", "MPEResult", "MPESearch", "intervene", "do_posteriors",
           "posterior_marginals", "conditioned_posteriors", "bounded_posteriors", "Marginals",
           "MPEBatch", "MarginalsBatch", "max_sum_mpe"]
