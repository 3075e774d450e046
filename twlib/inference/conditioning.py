"""Marginals and ``P(e)`` past the junction tree: cutset conditioning, and bounds.

Fixing a variable removes it from the interaction graph, and with it from every
clique it was in: the tree of the rest is smaller by its number of states in
each of them.  Cutset conditioning (Pearl 1986; Darwiche 2009, ch. 8) fixes a
set ``C`` of variables so that the tree of the rest fits the memory budget, runs
that tree once per assignment ``c`` of ``C`` (the evidence variables are fixed
too, for free), and adds up::

    P(e) = sum_c P(c, e)        P(x, e) = sum_c P(x | c, e) P(c, e)

Each run is a :meth:`JunctionTree.with_factors` of one tree structure on the
model's factors sliced at ``c``; the runs are independent, so they go to the
executor layer (:mod:`twlib.parallel`) in blocks, and Dask spreads them.  Memory
is traded for time: the runs multiply by the states of each variable added.

:func:`choose_cutset` picks ``C`` greedily: at each step the variable whose
removal leaves the least total work (its states times the table entries left,
estimated from the current cliques), until the tree fits.  Finding the smallest
cutset is NP-hard; the greedy choice is the usual compromise.

When the runs do not finish in the time given, the runs done still bound the
answer: they sum to ``D <= P(e)``, and one mini-bucket upper bound ``U >= P(e)``
(:mod:`twlib.inference.minibucket`) closes the interval, for ``log P(e)`` and
for every posterior (:func:`conditioned_posteriors`); with no run at all, a
lower mini-bucket bound closes it from below (:func:`bounded_posteriors`).  The
router :func:`~twlib.inference.routing.posterior_marginals` picks the method:
the tree when it fits, else conditioning, else the bounds alone.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from .. import clock
from ..errors import BudgetExceeded, InputError, MemoryBudgetExceeded, ZeroEvidenceError
from ..factors import Factor, FactorModel, as_factor_model
from ..graphs import clique_tree, elimination_order
from ..parallel import run_tasks, task_count
from .evidence import evidence_indices
from .costs import (CONDITIONED_ENTRIES_PER_SECOND, MOST_CONDITIONED_RUNS, SECONDS_PER_FACTOR,
                    check_memory_budget, tables_gib)
from .junction_tree import JunctionTree
from .minibucket import affordable_i_bound, mini_buckets
from .results import Marginals

__all__ = ["Cutset", "bounded_posteriors", "choose_cutset", "conditioned_posteriors"]

# Past this many assignments conditioning cannot finish; a random sample of this
# size is run for the bounds and estimates
_MOST_RUNS = 10**6


@dataclass
class Cutset:
    """The variables to condition on and the tree of the rest.

    ``variables`` are conditioned on (the evidence variables are fixed besides
    them), ``order`` eliminates the rest, ``entries`` counts the table entries of
    one conditioned tree, ``gib`` the memory it needs and ``runs`` the number of
    assignments of ``variables``.
    """

    variables: list
    order: list
    entries: int
    gib: float
    runs: int

    def seconds(self, factors: int) -> float:
        """Estimated time of all runs on a model of ``factors`` factors."""
        return self.runs * (self.entries / CONDITIONED_ENTRIES_PER_SECOND + factors * SECONDS_PER_FACTOR)


def choose_cutset(model, evidence=None, *, max_memory_gb: float = 4.0,
                  max_runs: float | None = None, time_limit: float | None = None) -> Cutset:
    """Variables to condition on so that the junction tree of the rest fits
    ``max_memory_gb``, chosen greedily for the least total work.
    MemoryBudgetExceeded once they need more than ``max_runs`` runs, and
    BudgetExceeded when no cutset is found within ``time_limit`` seconds (each
    step orders the whole graph anew).

    >>> from twlib.datasets import load_uai
    >>> inst = load_uai("Grids_11")
    >>> cut = choose_cutset(inst.model, inst.evidence, max_memory_gb=1e-4)
    >>> cut.gib <= 1e-4, cut.runs == 2 ** len(cut.variables)
    (True, True)
    """
    model = as_factor_model(model)
    check_memory_budget(max_memory_gb)
    if time_limit is not None:
        clock.check_time_limit(time_limit)
    deadline = clock.now() + (math.inf if time_limit is None else time_limit)
    fixed = evidence_indices(model, evidence)
    graph = model.interaction_graph()
    graph.remove_nodes_from(fixed)
    arity = {v: model.arity(v) for v in model.variables}
    chosen = []
    # each step orders the graph by the greedy heuristics alone; the spectral
    # sweeps (an eigen-decomposition each) only for the graph that is kept
    sweeps = False
    while True:
        order = (elimination_order(graph, method="auto", weights=arity, restarts=0,
                                   sweeps=sweeps) if graph else [])
        cliques = clique_tree(graph, order)[0] if graph else []
        sizes = [math.prod(arity[v] for v in c) for c in cliques]
        entries, largest = sum(sizes), max(sizes, default=0)
        gib = tables_gib(entries, largest)
        if (gib <= max_memory_gb and sweeps) or not graph:
            return Cutset(chosen, order, int(entries), gib,
                          math.prod(arity[v] for v in chosen))
        if gib <= max_memory_gb:
            sweeps = True
            continue
        held = dict.fromkeys(graph, 0)
        for c, size in zip(cliques, sizes):
            for v in c:
                held[v] += size
        # conditioning on v divides each clique holding it by its states and
        # multiplies the runs by them
        v = min(graph, key=lambda u: (arity[u] * (entries - held[u] * (1 - 1 / arity[u])),
                                      -graph.degree(u)))
        chosen.append(v)
        graph.remove_node(v)
        if max_runs is not None and math.prod(arity[u] for u in chosen) > max_runs:
            raise MemoryBudgetExceeded(f"conditioning needs more than {max_runs:.3g} runs to "
                                       f"fit {max_memory_gb:.3g} GiB")
        if clock.expired(deadline):
            raise BudgetExceeded(f"no cutset that fits {max_memory_gb:.3g} GiB was found in "
                                 f"{time_limit} s")


def _structure(model, free, order):
    """The junction tree of the conditioned models (uniform factors of their scopes)."""
    kept = set(free)
    scopes = {tuple(v for v in f.variables if v in kept) for f in model.factors}
    ones = [Factor(scope, np.ones([model.arity(v) for v in scope])) for scope in scopes if scope]
    return JunctionTree(FactorModel(free, {v: model.states(v) for v in free}, ones),
                        order=order, max_memory_gb=math.inf)


def _run_block(shared, runs, deadline):
    """The runs numbered ``runs`` of a conditioning: ``(log scale, total weight,
    {free variable: weighted marginal}, {cut variable: weight per state}, runs
    done)``, the weights ``P(c, e)`` divided by ``exp(log scale)``.  Stops at ``deadline``
    (wall clock, shared by worker processes) so the caller can fall back to
    bounds."""
    model, fixed, cut, order, entries = shared
    free = [v for v in model.variables if v not in fixed and v not in cut]
    arity = [model.arity(v) for v in cut]
    if time.time() + entries / CONDITIONED_ENTRIES_PER_SECOND > deadline:
        runs = []                               # not even the tree would be built in time
    tree = _structure(model, free, order) if free and len(runs) else None
    answers, done = [], 0
    for run in runs:
        if time.time() > deadline:
            break
        done += 1
        states = dict(zip(cut, map(int, np.unravel_index(run, arity)))) if cut else {}
        constant, reduced = model.reduced({**fixed, **states})
        if constant == -math.inf:
            continue
        prior = {}
        if tree is not None:
            try:
                conditioned = tree.with_factors(reduced)
            except ZeroEvidenceError:
                continue
            constant += conditioned.log_z
            prior = conditioned.prior
        answers.append((constant, prior, states))
    total = {v: np.zeros(model.arity(v)) for v in free}
    cut_weights = {v: np.zeros(model.arity(v)) for v in cut}
    top = max((lw for lw, _, _ in answers), default=-math.inf)
    weight = 0.0
    for lw, prior, states in answers:
        w = math.exp(lw - top)
        weight += w
        for v, p in prior.items():
            total[v] += w * p
        for v, s in states.items():
            cut_weights[v][s] += w
    return top, weight, total, cut_weights, done


def conditioned_posteriors(model, evidence=None, cutset: Cutset | None = None, *,
                           max_memory_gb: float = 4.0, time_limit: float | None = None,
                           i_bound: int | None = None, max_runs: int | None = None,
                           executor=None, random_state=0, progress: bool = False) -> Marginals:
    """Posteriors and ``log P(e)`` by cutset conditioning: exact when every run
    finishes within ``time_limit``, else bounded by the runs that did.

    ``cutset`` defaults to :func:`choose_cutset` for ``max_memory_gb``.  The runs
    go to ``executor`` (see :mod:`twlib.parallel`) in blocks.  When time runs
    out, the runs done sum to ``D = sum P(c, e)`` and ``D(x)``; with an upper
    bound ``U >= P(e)`` from MBE(``i_bound``) (default: the largest whose
    messages fit a quarter of the budget), ``log P(e)`` lies in
    ``[log D, log U]`` and ``P(x | e)`` in ``[D(x) / U, 1 - (D - D(x)) / U]``.
    The runs go in a random order (``random_state``), so the runs done are a
    random sample of the assignments: the estimates are ``D(x) / D`` and
    ``D * runs / done`` (unbiased for ``P(e)``), the latter kept within the
    bounds.  ``max_runs`` stops after that many runs instead, for a bounded
    answer that does not depend on the machine's speed.

    >>> from twlib.datasets import load_uai
    >>> inst = load_uai("Grids_12")
    >>> res = conditioned_posteriors(inst.model, inst.evidence, max_memory_gb=1e-4)
    >>> exact = JunctionTree(inst.model).posteriors(inst.evidence)
    >>> res.exact, bool(abs(res.posteriors["0"] - exact["0"]).max() < 1e-9)
    (True, True)
    """
    model = as_factor_model(model)
    if time_limit is not None:
        clock.check_time_limit(time_limit)
    fixed = evidence_indices(model, evidence)
    cutset = cutset or choose_cutset(model, fixed, max_memory_gb=max_memory_gb)
    started = time.time()
    deadline = started + (math.inf if time_limit is None else time_limit)
    if cutset.runs > MOST_CONDITIONED_RUNS:
        raise MemoryBudgetExceeded(f"conditioning would need {cutset.runs:.3g} runs to fit "
                                   f"{max_memory_gb} GiB")
    # in random order, so that the runs done when time runs out are a simple random
    # sample and D * runs / done estimates P(e) without bias
    rng = np.random.default_rng(random_state)
    sample = (rng.permutation(cutset.runs) if cutset.runs <= _MOST_RUNS
              else rng.choice(cutset.runs, _MOST_RUNS, replace=False))
    if max_runs is not None:
        if isinstance(max_runs, bool) or not isinstance(max_runs, (int, np.integer)) \
                or max_runs < 1:
            raise InputError(f"max_runs must be a positive integer, got {max_runs!r}")
        sample = sample[:max_runs]
    parts = np.array_split(sample, max(1, min(len(sample), task_count(executor))))
    bar = tqdm(total=cutset.runs, unit="run", desc="conditioning", disable=not progress)
    answers = run_tasks(executor, _run_block,
                        (model, fixed, cutset.variables, cutset.order, cutset.entries),
                        [(part, deadline) for part in parts],
                        progress=lambda answer: bar.update(answer[-1]))
    bar.close()
    done = sum(a[-1] for a in answers)
    top = max(a[0] for a in answers)
    summed, weight = {}, 0.0
    for scale, block_weight, totals, cut_weights, _ in answers:
        w = math.exp(scale - top) if scale > -math.inf else 0.0
        weight += w * block_weight
        for v, t in {**totals, **cut_weights}.items():
            summed[v] = summed.get(v, 0.0) + w * t
    stats = {"cutset": list(cutset.variables), "runs": cutset.runs, "runs_done": done,
             "tree_entries": cutset.entries}
    method = f"cutset conditioning ({len(cutset.variables)} variables, {cutset.runs} runs)"
    if done == cutset.runs:
        if weight == 0:
            raise ZeroEvidenceError(f"the evidence has probability zero: {evidence}")
        log_z = top + math.log(weight)
        posteriors = {v: np.eye(model.arity(v))[fixed[v]] if v in fixed else summed[v] / weight
                      for v in model.variables}
        stats["seconds"] = time.time() - started
        return Marginals(posteriors, log_z, True, method, (log_z, log_z), stats=stats)
    if i_bound is None:
        i_bound = affordable_i_bound(model, fixed, max_memory_gb / 4,
                                     time_limit / 4 if time_limit else 60.0)
    return _bounded(model, fixed, i_bound, max_memory_gb, (top, weight, summed, done),
                    cutset.runs, f"{method}, {done} done", stats, started)


def bounded_posteriors(model, evidence=None, *, i_bound: int, max_memory_gb: float = 4.0
                       ) -> Marginals:
    """Bounds alone, for a model that neither a tree nor conditioning can
    answer in time: ``log P(e)`` between MBE(``i_bound``)'s lower and upper
    bounds, every posterior between 0 and 1 (estimated as uniform).

    >>> from twlib.datasets import load_network
    >>> res = bounded_posteriors(load_network("asia"), {"dysp": "yes"}, i_bound=2)
    >>> res.exact, bool(res.log_z_bounds[0] <= res.log_z <= res.log_z_bounds[1])
    (False, True)
    """
    model = as_factor_model(model)
    started = time.time()
    fixed = evidence_indices(model, evidence)
    return _bounded(model, fixed, i_bound, max_memory_gb, (-math.inf, 0.0, {}, 0), None,
                    "no conditioned run", {"runs_done": 0}, started)


def _bounded(model, fixed, i_bound, max_memory_gb, runs_done, runs, method, stats, started):
    """The bounded :class:`Marginals` of the conditioned runs done, ``(scale,
    weight, summed weights, count)`` of ``runs`` (None when none was tried),
    closed by MBE(``i_bound``); ``stats`` gain the i-bound and the seconds
    since ``started``."""
    top, weight, summed, done = runs_done
    high = mini_buckets(model, i_bound, fixed, task="sum", max_memory_gb=max_memory_gb).bound
    low = top + math.log(weight) if weight > 0 else -math.inf
    if low == -math.inf:
        low = mini_buckets(model, i_bound, fixed, task="sum-lower",
                           max_memory_gb=max_memory_gb).bound
    lower, upper, posteriors = {}, {}, {}
    for v in model.variables:
        k = model.arity(v)
        if v in fixed:
            lower[v] = upper[v] = posteriors[v] = np.eye(k)[fixed[v]]
        elif weight > 0:
            seen = summed[v] * math.exp(top - high)           # D(x) / U
            lower[v] = np.clip(seen, 0.0, 1.0)
            upper[v] = np.clip(1.0 - (seen.sum() - seen), 0.0, 1.0)
            posteriors[v] = summed[v] / weight
        else:
            lower[v], upper[v], posteriors[v] = np.zeros(k), np.ones(k), np.full(k, 1.0 / k)
    estimate = min(max(low + math.log(runs / done), low), high) if done else high
    stats.update(i_bound=i_bound, seconds=time.time() - started)
    return Marginals(posteriors, estimate, False, f"{method}; bounds by MBE({i_bound})",
                     (low, high), lower, upper, stats)
