"""The routers: which method answers a query, chosen by what it would cost.

* :func:`most_probable_explanation`: the variables of at most two neighbours
  maximised out exactly (:mod:`twlib.inference.presolve`), then on the rest
  a first turn of MPLP and the propagation search
  (:class:`~twlib.inference.search.ShiftAndProbe`) unless the max-sum pass
  over a clique tree would surely be quicker.  When the pass
  (:func:`~twlib.inference.max_sum.max_sum_mpe`) fits, its largest table
  within the memory budget and all of them within the time limit, the
  search (:func:`~twlib.inference.search.branch_and_bound_mpe`) goes on for
  a quarter of the pass's expected time and the pass answers if the search
  has not; else the search goes on alone, with the largest i-bound whose
  mini-bucket messages fit.
* :func:`posterior_marginals`: the junction tree when it fits the memory and
  the time, else cutset conditioning (:mod:`twlib.inference.conditioning`),
  exact when its runs finish within the time limit and bounded when they do
  not, or mini-bucket bounds alone when no cutset's runs could finish.

The rates they decide by, and the memory checks, are in
:mod:`twlib.inference.costs`.  Both return the library's one result of their
kind (:mod:`twlib.inference.results`), whose ``method`` says which answered.
"""
from __future__ import annotations

from .. import clock
from ..errors import BudgetExceeded, MemoryBudgetExceeded
from ..factors import as_factor_model
from ..graphs import FILL_BUDGET, elimination_order, flat_greedy_entries, greedy_entries
from .conditioning import bounded_posteriors, choose_cutset, conditioned_posteriors
from .costs import (CONDITIONED_ENTRIES_PER_SECOND, FAR_OVER, MOST_CONDITIONED_RUNS,
                    MAX_SUM_ENTRIES_PER_SECOND, MAX_SUM_TYPICAL_ENTRIES_PER_SECOND,
                    SEARCH_AFTER_TREE_SECONDS, SEARCH_FROM_QUERY_SECONDS, SEARCH_SHARE_OF_TREE,
                    SECONDS_PER_FACTOR, check_memory_budget, tables_gib, tree_budget_gb)
from .evidence import evidence_indices
from .junction_tree import JunctionTree
from .max_sum import max_sum_mpe
from .minibucket import affordable_i_bound
from .presolve import presolved
from .results import Marginals, MPEResult
from .search import ShiftAndProbe, branch_and_bound_mpe, with_likelihoods

__all__ = ["most_probable_explanation", "posterior_marginals"]


def most_probable_explanation(model, evidence=None, *, soft_evidence=None,
                              max_memory_gb: float = 4.0, time_limit: float = 60.0,
                              progress: bool = False) -> MPEResult:
    """The MPE by the method that fits: one max-sum pass over a clique tree
    (:func:`~twlib.inference.max_sum.max_sum_mpe`) when its largest table fits
    ``max_memory_gb`` and its tables can be made within ``time_limit``, else
    AND/OR branch and bound with the largest
    i-bound whose mini-bucket messages take at most a quarter of the budget and
    about a quarter of ``time_limit`` to compute.  Either runs on the variables
    left once those with at most two neighbours are maximised out
    (:mod:`twlib.inference.presolve`).  The search starts first, with a turn
    of MPLP and the propagation search (which often prove the answer at once,
    with no tree), unless the pass is expected to take under a hundredth of a
    second; when the pass fits, the search goes on for a quarter of the time
    the pass is expected to take (MPLP and the propagation search alone for
    its first half, and throughout when the pass is too quick to pay for
    building mini-buckets), then the pass answers.
    ``method`` in the result says which ran.  ``soft_evidence`` (likelihood
    weights per state, as in :meth:`JunctionTree.posteriors`) multiplies the
    weights of each variable's state into the value maximised.

    >>> from twlib.datasets import load_network
    >>> res = most_probable_explanation(load_network("asia"), {"dysp": "yes"})
    >>> res.method, res.status, res.assignment["bronc"]
    ('variable elimination', 'optimal', 'yes')
    """
    clock.check_time_limit(time_limit)
    model = with_likelihoods(model, soft_evidence)
    check_memory_budget(max_memory_gb)
    started = clock.now()

    def left():
        return max(time_limit - (clock.now() - started), 1e-3)

    def solve(reduced, reduced_evidence, constant):
        def turns_from_scratch():
            return ShiftAndProbe(reduced, reduced_evidence, max_memory_gb=max_memory_gb,
                                 constant=constant)

        def search(turns, seconds):
            return branch_and_bound_mpe(reduced, reduced_evidence, i_bound="auto",
                                        time_limit=max(seconds, 1e-3),
                                        max_memory_gb=max_memory_gb, presolve=False,
                                        progress=progress, head_start=turns)

        def before_the_pass(turns, expected):
            """The search's answer if it proves one within a quarter of the
            pass's ``expected`` seconds from now, else None: MPLP and the
            propagation search for half that time, as they need no memory and
            no building, then the mini-buckets and the portfolio too, where the
            pass takes long enough to pay for building them."""
            share, begun = SEARCH_SHARE_OF_TREE * expected, clock.now()
            if turns.run(left() / 10, begun + share / 2).search_until(begun + share / 2).ended:
                return search(turns, left())
            if expected >= SEARCH_AFTER_TREE_SECONDS:
                found = search(turns, begun + share - clock.now())
                if found.status != "time_limit":
                    return found
            return None

        turns = None
        if not _pass_is_quick(reduced, max_memory_gb, MAX_SUM_ENTRIES_PER_SECOND * left()):
            # as branch_and_bound_mpe would: MPLP for a tenth of the limit in all
            turns = turns_from_scratch().run(left() / 10, clock.now() + left(), turns=1)
            if turns.ended:
                return search(turns, left())
        order, entries = _order_that_fits(reduced, max_memory_gb,
                                          MAX_SUM_ENTRIES_PER_SECOND * left(), left())
        if order is None:
            # the turns and the order search count against the limit
            return search(turns or turns_from_scratch(), left())
        if turns is not None:
            # the share is the pass's by the order found: the greedy one's can
            # be many times longer
            found = before_the_pass(turns, _pass_seconds(entries, reduced))
            if found is not None:
                return found
            if entries > MAX_SUM_ENTRIES_PER_SECOND * left():
                # the pass cannot be stopped, and no longer surely fits the time left
                return search(turns_from_scratch(), left())
        try:
            return max_sum_mpe(reduced, reduced_evidence, order=order,
                               max_memory_gb=max_memory_gb)
        except MemoryBudgetExceeded:
            # a search may have ended on these turns: the next starts afresh
            return search(turns_from_scratch(), left())

    return presolved(model, evidence, solve)


def posterior_marginals(model, evidence=None, *, max_memory_gb: float = 4.0,
                        time_limit: float = 60.0, executor=None,
                        progress: bool = False) -> Marginals:
    """Posterior marginals and ``log P(e)`` by the method that fits: the junction
    tree when its tables fit ``max_memory_gb`` and can be filled within
    ``time_limit``, else cutset conditioning, exact
    when its runs finish within ``time_limit`` and bounded (see
    :func:`conditioned_posteriors`) when they do not.  The cutset is chosen so
    that one run takes at most a tenth of the time, so that some finish; when
    not all are expected to, the mini-bucket upper bound gets an i-bound sized
    to a quarter of the time.  When no cutset is found in half the time and
    half the overrun allowance (:func:`twlib.clock.overrun_allowance`), or it
    would need more runs than can be sampled, the answer is the mini-bucket
    bounds alone (:func:`bounded_posteriors`).
    ``method`` in the result says which answered.

    >>> from twlib.datasets import load_uai
    >>> inst = load_uai("Grids_12")
    >>> posterior_marginals(inst.model, inst.evidence).method
    'junction tree'
    """
    model = as_factor_model(model)
    clock.check_time_limit(time_limit)
    check_memory_budget(max_memory_gb)
    fixed = evidence_indices(model, evidence)
    started = clock.now()
    tree = _tree_that_fits(model, tree_budget_gb(max_memory_gb, time_limit), time_limit)
    if tree is not None:
        result = tree.posteriors(fixed)
        result.stats["seconds"] = clock.now() - started
        return result
    # a run may take a tenth of the time, so that some finish when not all can
    per_run = tables_gib(CONDITIONED_ENTRIES_PER_SECOND * time_limit / 10, 0)
    # the cutset search gets half the time and half the overrun allowance (its
    # steps, an ordering of the whole graph each, cannot be cut), the bounds or
    # the runs the rest: on a small model a short limit still leaves it room
    searching = (time_limit + clock.overrun_allowance(time_limit)) / 2
    try:
        cutset = choose_cutset(model, fixed, max_memory_gb=min(max_memory_gb, per_run),
                               time_limit=searching, max_runs=MOST_CONDITIONED_RUNS)
    except BudgetExceeded:
        # two passes (the upper and the lower bound), each about a quarter of what is left
        left = max(time_limit - (clock.now() - started), 1e-3)
        i_bound = affordable_i_bound(model, fixed, max_memory_gb / 4, left / 4)
        return bounded_posteriors(model, fixed, i_bound=i_bound, max_memory_gb=max_memory_gb)
    left = time_limit - (clock.now() - started)
    if cutset.seconds(len(model.factors)) <= left:
        i_bound = None                  # sized only if the runs overrun their estimate
    else:
        i_bound = affordable_i_bound(model, fixed, max_memory_gb / 4, time_limit / 4)
        left -= time_limit / 4
    return conditioned_posteriors(model, fixed, cutset, max_memory_gb=max_memory_gb,
                                  time_limit=max(left, 1e-3), i_bound=i_bound,
                                  executor=executor, progress=progress)


def _pass_is_quick(model, max_memory_gb, most_entries):
    """Whether the max-sum pass of :func:`max_sum_mpe` is expected to take
    under ``SEARCH_FROM_QUERY_SECONDS`` by the min-degree order, the cheapest
    greedy one (placing each factor in its clique costs about what it does
    for a conditioned run), with no clique table over ``max_memory_gb`` and at
    most ``most_entries`` table entries in all.  The factors alone can rule
    that out; else the elimination stops at the first clique larger than the
    entries the time allows, so that a large model is not eliminated whole
    to learn that its pass is not quick."""
    allowed = min((SEARCH_FROM_QUERY_SECONDS - _pass_seconds(0, model))
                  * MAX_SUM_TYPICAL_ENTRIES_PER_SECOND, most_entries)
    if not allowed > 0:
        return False
    weights = [model.arity(v) for v in model.variables]
    stop_above = min(max_memory_gb * 2**30 / 8, allowed)
    if model.flat_logs is not None:          # a presolved model's factors are made if read
        entries = flat_greedy_entries(model.flat_logs[0], model.flat_logs[1], weights,
                                      stop_above=stop_above)
    else:
        index = {v: k for k, v in enumerate(model.variables)}
        entries = greedy_entries([[index[v] for v in f.variables] for f in model.factors],
                                 weights, stop_above=stop_above)
    return entries <= allowed and _pass_seconds(entries, model) < SEARCH_FROM_QUERY_SECONDS


def _pass_seconds(entries, model):
    """The seconds the max-sum pass over ``entries`` clique-table entries of
    ``model`` is expected to take, at the typical rate."""
    count = len(model.flat_logs[3]) if model.flat_logs is not None else len(model.factors)
    return entries / MAX_SUM_TYPICAL_ENTRIES_PER_SECOND + count * SECONDS_PER_FACTOR


def _order_that_fits(model, max_memory_gb, most_entries, time_limit):
    """``(order, entries)``: an elimination order of ``model`` whose clique
    tables take ``entries <= most_entries`` entries in all, none of them over
    ``max_memory_gb``, or ``(None, entries)`` when none is found.

    The restarts that look for a smaller tree get a twentieth of the time: they
    decide whether the tree fits, and are lost time when it does not (and not
    tried when the greedy orders miss the budget by orders of magnitude).
    """
    graph = model.interaction_graph()
    weights = {v: model.arity(v) for v in model.variables}
    order, _, entries = elimination_order(graph, method="auto", weights=weights,
                                          time_limit=time_limit / 20,
                                          stop_above=FAR_OVER * max_memory_gb * 2**30 / 8,
                                          fit_within=most_entries, with_cost=True,
                                          fill_budget=FILL_BUDGET)
    # the order's table entries alone can rule the tree out, before its cliques are built
    return (order if entries <= most_entries else None), entries


def _tree_that_fits(model, budget_gb, time_limit):
    """The junction tree of ``model`` if its tables fit ``budget_gb``, else None."""
    order, _ = _order_that_fits(model, budget_gb, budget_gb * 2**30 / 8, time_limit)
    if order is None:
        return None
    try:
        return JunctionTree(model, order=order, max_memory_gb=budget_gb)
    except MemoryBudgetExceeded:
        return None
