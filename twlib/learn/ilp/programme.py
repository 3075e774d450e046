"""Exact score-based learning by integer programming, with or without a tree-width bound.

The formulation is GOBNILP's (Jaakkola et al. 2010; Cussens 2011; Bartlett &
Cussens 2017).  Each kept candidate parent set ``t`` of each variable ``v`` has a
binary ``x[v, t]``; the objective is the sum of the chosen families' local
scores; each variable chooses exactly one parent set; and the graph is acyclic
exactly when every *cluster* ``C`` (a set of two or more variables) holds a
variable whose parents all lie outside ``C``::

    sum_{v in C} sum_{t : t & C = {}} x[v, t] >= 1          for every cluster C.

There are exponentially many cluster constraints, so they are added as cutting
planes by a SCIP constraint handler: an integral solution with a cycle is cut
off by the cluster of that cycle; a fractional LP solution is searched for
violated clusters by :func:`~twlib.learn.ilp.clusters.violated_clusters` (greedy
peeling, then, at the root, an exact search).  Acyclicity itself is checked on
every candidate solution, so the cuts only have to be strong, never complete.
A primal heuristic (GOBNILP's sink finding) turns every node's LP point into an
acyclic network.  Before the branch and cut, the LP relaxation is solved by
column generation (:func:`~twlib.learn.ilp.relaxation.lp_bound`) over a few
families at a time, and the cuts it needed (cluster constraints and GOBNILP's
set-packing rows of three and four variables) enter SCIP's first LP as rows:
SCIP's own root loop, re-solving an LP over every family, stalls long before
that relaxation's bound on large candidate sets.  Past a million families (a
table of 70 variables at in-degree 3) even building SCIP's programme costs more
than the search is worth, so the branch and cut is restricted to the families
the relaxation priced in and the relaxation's bound is the one proved.

With ``k`` given, the tree-width of the moral graph is bounded exactly by an
elimination order (after Parviainen, Farahani & Lagergren 2014): order
variables ``o[u, v]`` (``u`` is eliminated before ``v``, transitive), arc
variables ``e[u, v]`` (``v`` is a later neighbour of ``u`` in the filled graph),
and

* every moral edge ``{a, b}`` of a chosen family is an arc one way or the other,
* the later neighbours of each vertex form a clique (the fill-in), and
* each vertex has at most ``k`` later neighbours.

A graph has tree-width ``<= k`` exactly when some elimination order leaves every
vertex at most ``k`` later neighbours, so the optimum of this programme is the
optimum of width ``<= k`` over the candidate sets.  Its LP is weak (an order
half one way and half the other meets every row at half strength), so on up to
22 variables the order-graph DP's optimum without the width bound, which no
network of width ``<= k`` beats, caps the objective as one more row.  When
tiers of knowledge hold every variable, the bound that counts comes from
outside the programme: the branch and bound on width obstructions of
:mod:`twlib.learn.exact_width`, its DP kept to the orders that list the tiers
in turn, runs first; it proves the optimum or caps the objective.  Candidate
sets are pruned only by proved rules (:class:`~twlib.scores.ParentSetScores`);
removing a parent never raises the width, so the rules stay sound under the
bound.
"""
from __future__ import annotations

import itertools
import math
import pickle
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numba as nb
import numpy as np
import pandas as pd

from ... import clock
from ...data import Dataset, as_dataset
from ...errors import BudgetExceeded, InputError, InternalError
from ...graphs import (elimination_width, find_cycle, induced_graph, moral_graph,
                      treewidth_upper_bound)
from ...scores import ParentSetScores
from .. import exact_width, order_graph
from ..result import LearnResult, check_time_limit, check_width_bound, fit_to_scores, relative_gap
from .clusters import (SolverMissing, cluster_families, packing_families, require_scip,
                       violated_clusters)
from .relaxation import lp_bound, scoring_seconds

__all__ = ["learn", "solve", "SolverMissing"]

_EPS = 1e-6          # a heuristic's network must beat the incumbent by more than this
# The sink heuristic runs at every node until this many calls in a row find nothing better,
# then at one call in _SINK_BACKOFF: after a good start it seldom finds anything, and each
# call costs an order search
_SINK_PATIENCE = 50
_SINK_BACKOFF = 10
# The start: depth-first orders beat feedback-arc-set orders on large tables and keep paying
# in rounds, so they run in rounds until _DFS_PATIENCE rounds in a row find nothing better
_DFS_ROUND = 1_000
_DFS_PATIENCE = 2
# Above this many families, a helper process solves the programme over the relaxation's
# columns and the start's families, which finds networks the whole programme does not
# reach in the same time
_HELPER_FAMILIES = 20_000
# Above this many families even building SCIP's programme costs more than the search is
# worth: the branch and cut runs over the relaxation's columns and the start's families, and
# the relaxation (with _RESTRICTED_RELAXATION_SHARE of the time) gives the bound
_BRANCH_AND_CUT_FAMILIES = 1_000_000
_RESTRICTED_RELAXATION_SHARE = 0.5
# Under k, up to this many variables the order-graph DP's optimum without the bound caps the
# objective: the width formulation's own LP bound is weak
_DP_BOUND_VARS = 22
# ... when a quarter of the time limit covers it, the DP's time doubling with each variable
_DP_SECONDS_AT_22 = 2.0
_TIER_SEARCH_SHARE = 0.5    # of the time limit, for exact_width's search over the tiers' orders


@nb.njit(cache=True)
def _any_placed(parents, j, placed):
    """Whether family ``j`` (parent row, -1 padded) has a parent in ``placed``."""
    for u in parents[j]:
        if u < 0:
            return False
        if placed[u]:
            return True
    return False


class _Families:
    """The kept candidate sets of every variable, flattened: child, members (a bool
    row), parents (-1 padded), score."""

    def __init__(self, pss: ParentSetScores):
        n = pss.n_vars
        rows, children, scores = [], [], []
        for v in range(n):
            parents, sc, _ = pss.parent_arrays(v)
            rows.append(parents)
            children.append(np.full(len(sc), v))
            scores.append(sc)
        width = max(r.shape[1] for r in rows)
        padded = np.concatenate([np.pad(r, ((0, 0), (0, width - r.shape[1])), constant_values=-1)
                                 for r in rows])
        self.n = n
        self.child = np.concatenate(children).astype(np.int64)
        self.score = np.concatenate(scores)
        self.parents = padded.astype(np.int64)            # -1 padded
        self.members = np.zeros((len(self.child), n), dtype=np.bool_)
        for col in range(width):
            ok = padded[:, col] >= 0
            self.members[np.flatnonzero(ok), padded[ok, col]] = True
        self.of_child = [np.flatnonzero(self.child == v) for v in range(n)]

    def named(self, rows, names) -> dict:
        """``{variable: parent names}`` of the families ``rows``, one per variable."""
        return {names[v]: tuple(names[u] for u in np.flatnonzero(self.members[j]))
                for v, j in enumerate(rows)}

    def best_inside(self, v, allowed) -> int:
        """Row of ``v``'s best kept family with every parent in ``allowed`` (a bool row),
        or -1 when none fits (knowledge may keep only families with a required parent)."""
        rows = self.of_child[v]
        fits = rows[~(self.members[rows] & ~allowed).any(axis=1)]
        return int(fits[np.argmax(self.score[fits])]) if fits.size else -1


@nb.njit(cache=True)
def _sink_order(child, parents, score, values, n):
    """An elimination of sinks guided by an LP point (GOBNILP's sink heuristic).

    From the last place to the first, every unplaced variable's most LP-weighted
    family with all parents still unplaced is looked up; the variable whose such
    family carries the most weight (ties: the better score) becomes the sink.
    Returns the order, first to last."""
    m = child.shape[0]
    placed = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    for place in range(n - 1, -1, -1):
        best_value = np.full(n, -1.0)
        best_score = np.full(n, -np.inf)
        for j in range(m):
            c = child[j]
            if placed[c]:
                continue
            if not _any_placed(parents, j, placed) and (values[j] > best_value[c] + 1e-9 or (
                    values[j] > best_value[c] - 1e-9 and score[j] > best_score[c])):
                best_value[c] = values[j]
                best_score[c] = score[j]
        sink = -1
        for v in range(n):
            if not placed[v] and (sink < 0 or best_value[v] > best_value[sink] + 1e-9 or (
                    best_value[v] > best_value[sink] - 1e-9 and best_score[v] > best_score[sink])):
                sink = v
        placed[sink] = True
        order[place] = sink
    return order


def _best_rows_for_order(fam: _Families, order) -> np.ndarray | None:
    """Each variable's best kept family whose parents all come before it in ``order``;
    None when some variable has none (a required parent placed after it)."""
    before = np.zeros(fam.n, dtype=bool)
    rows = np.empty(fam.n, dtype=np.int64)
    for v in order:
        rows[v] = fam.best_inside(v, before)
        if rows[v] < 0:
            return None
        before[v] = True
    return rows


def _solution_values(model, xs, sol=None) -> np.ndarray:
    """The family variables' values in ``sol`` (None: the current LP point)."""
    return np.array([model.getSolVal(sol, x) for x in xs])


def _has_cycle(fam: _Families, values) -> list | None:
    """A directed cycle of the families an integral point chooses, or None."""
    parents = {v: [] for v in range(fam.n)}
    for j in np.flatnonzero(values > 0.5):
        parents[int(fam.child[j])] = [int(u) for u in np.flatnonzero(fam.members[j])]
    return find_cycle(parents)


class SolverCallbackError(InternalError):
    """A callback of the integer programme (heuristic, constraint handler, event
    handler) raised; the solve stopped and the original error is the cause."""


# What each SCIP callback returns after it failed and asked the solve to stop: a
# result SCIP accepts, so that it stops cleanly instead of ending in an error code
_FALLBACK_RESULTS = {"heurexec": "DIDNOTRUN", "conssepalp": "DIDNOTRUN",
                     "consenfolp": "CUTOFF", "consenfops": "CUTOFF", "conscheck": "INFEASIBLE"}
_CALLBACKS = ("heurexec", "conssepalp", "consenfolp", "consenfops", "conscheck", "consinitlp",
              "consinitsol", "conslock", "eventinit", "eventexit", "eventexec")


def _guarded(pyscipopt, handler, failures: list):
    """``handler`` with each SCIP callback wrapped: an exception is kept in ``failures``
    and interrupts the solve (PySCIPOpt would print it and turn it into
    ``SCIP: unspecified error!``); :func:`_optimize` raises it by name."""
    def wrap(name, method):
        def guarded(*args):
            try:
                return method(*args)
            except Exception as err:            # re-raised by _optimize, with its name
                failures.append((f"{type(handler).__name__}.{name}", err))
                handler.model.interruptSolve()
                if name == "consinitlp":
                    return {"infeasible": False}
                if name in _FALLBACK_RESULTS:
                    return {"result": getattr(pyscipopt.SCIP_RESULT, _FALLBACK_RESULTS[name])}
                return None
        return guarded

    for name in _CALLBACKS:
        if name in type(handler).__dict__:
            setattr(handler, name, wrap(name, getattr(handler, name)))
    return handler


def _optimize(model, failures: list) -> None:
    """``model.optimize()``, with a callback's failure raised as itself and any other
    SCIP failure named."""
    try:
        model.optimize()
    except Exception as err:
        if not failures:
            raise InternalError(f"SCIP failed while solving the integer programme ({err}); "
                                "please report it") from err
    if failures:
        where, cause = failures[0]
        raise SolverCallbackError(f"the integer programme stopped: {where} raised "
                                  f"{type(cause).__name__}: {cause}") from cause


def _acyclicity_handler(pyscipopt, fam: _Families, xs, exact_separation: bool, tally: dict,
                        warm=None):
    """A SCIP constraint handler for acyclicity: cluster cuts, checked on every solution.

    ``warm`` (a relaxation's result) puts its cluster cuts and set-packing rows
    into each run's first LP as rows; as constraints, SCIP would presolve and
    propagate them, and on WIN95PTS their 21 million entries made that cost
    more than the LP."""
    SCIP_RESULT = pyscipopt.SCIP_RESULT

    class Acyclicity(pyscipopt.Conshdlr):
        def consinitsol(self, constraints):
            self.tx = [self.model.getTransformedVar(x) for x in xs]

        def consinitlp(self, constraints):
            if warm is not None:
                for cluster in warm["clusters"]:
                    self._row(cluster_families(cluster, fam.child, fam.members), 1.0, None)
                for members in warm["packings"]:
                    self._row(packing_families(members, fam.child, fam.members), None, 1.0)
            return {"infeasible": False}

        def _row(self, families, lhs, rhs):
            row = self.model.createEmptyRowUnspec(name="cluster", lhs=lhs, rhs=rhs,
                                                  local=False, removable=True)
            self.model.cacheRowExtensions(row)
            for j in np.flatnonzero(families):
                self.model.addVarToRow(row, self.tx[j], 1.0)
            self.model.flushRowExtensions(row)
            self.model.addCut(row, forcecut=True)

        def _cut(self, cluster, source):
            self._row(cluster_families(cluster, fam.child, fam.members), 1.0, None)
            tally[source] += 1

        def _cycle_cut(self, values):
            cycle = _has_cycle(fam, values)
            if cycle is None:
                return False
            cluster = np.zeros(fam.n, dtype=bool)
            cluster[[int(v) for v in cycle]] = True
            self._cut(cluster, "cycle cuts")
            return True

        def conssepalp(self, constraints, nusefulconss):
            values = _solution_values(self.model, xs)
            left = max(1.0, deadline_left[0] - clock.now())
            found = violated_clusters(fam.child, fam.members, values, fam.n,
                                      exact=exact_separation and self.model.getDepth() == 0,
                                      time_limit=min(5.0, left))
            for _, cluster in found:
                self._cut(cluster, "cluster cuts")
            return {"result": SCIP_RESULT.SEPARATED if found else SCIP_RESULT.DIDNOTFIND}

        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            if self._cycle_cut(_solution_values(self.model, xs)):
                return {"result": SCIP_RESULT.SEPARATED}
            return {"result": SCIP_RESULT.FEASIBLE}

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            if _has_cycle(fam, _solution_values(self.model, xs)) is None:
                return {"result": SCIP_RESULT.FEASIBLE}
            return {"result": SCIP_RESULT.SOLVELP}

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason,
                      completely):
            if _has_cycle(fam, _solution_values(self.model, xs, solution)) is None:
                return {"result": SCIP_RESULT.FEASIBLE}
            return {"result": SCIP_RESULT.INFEASIBLE}

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            # adding or dropping a parent set can both close a cycle
            for x in xs:
                self.model.addVarLocksType(x, locktype, nlockspos + nlocksneg,
                                           nlockspos + nlocksneg)

    deadline_left = [math.inf]
    return Acyclicity(), deadline_left


def _treewidth_constraints(pyscipopt, model, fam: _Families, xs, k: int):
    """The elimination-order constraints that bound the moral graph's width by ``k``.

    Returns ``(order, arc)``: ``order[u, v]`` (``u < v``) is 1 when ``u`` is
    eliminated first, ``arc[u, v]`` when ``v`` is a later neighbour of ``u``.
    """
    n = fam.n
    order = {(u, v): model.addVar(vtype="B", name=f"o{u}_{v}")
             for u in range(n) for v in range(u + 1, n)}

    def before(u, v):
        return order[u, v] if u < v else 1 - order[v, u]

    for a in range(n):
        for b in range(a + 1, n):
            for c in range(b + 1, n):
                model.addCons(order[a, b] + order[b, c] - order[a, c] <= 1)
                model.addCons(order[a, c] - order[a, b] - order[b, c] <= 0)
    arc = {(u, v): model.addVar(vtype="B", name=f"e{u}_{v}")
           for u in range(n) for v in range(n) if u != v}
    for (u, v), var in arc.items():
        model.addCons(var <= before(u, v))
    # every moral edge of a chosen family is covered: an arc either way (at most one of the
    # two directions is chosen, so their families share one row), and two parents child by
    # child (several children may share the pair)
    covering = {}
    for j in range(len(fam.score)):
        v = int(fam.child[j])
        parents = np.flatnonzero(fam.members[j]).tolist()
        for i, a in enumerate(parents):
            covering.setdefault((min(a, v), max(a, v), -1), []).append(j)
            for b in parents[i + 1:]:
                covering.setdefault((a, b, v), []).append(j)
    for (a, b, _), rows in covering.items():
        model.addCons(pyscipopt.quicksum(xs[j] for j in rows) <= arc[a, b] + arc[b, a])
    for u in range(n):
        later = [v for v in range(n) if v != u]
        model.addCons(pyscipopt.quicksum(arc[u, v] for v in later) <= k)
        for i, a in enumerate(later):
            for b in later[i + 1:]:
                model.addCons(arc[u, a] + arc[u, b] - 1 <= arc[a, b] + arc[b, a])
    return order, arc


def _history_handler(pyscipopt, started, history, root):
    """Records the incumbent and the bound over time in ``history``, and the bound
    when the first root node is solved in ``root`` (SCIP's own root bound is
    that of the last run, which after a restart late in the search is the optimum)."""
    class History(pyscipopt.Eventhdlr):
        def eventinit(self):
            self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexit(self):
            self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND, self)
            self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.NODESOLVED, self)

        def eventexec(self, event):
            primal, dual = self.model.getPrimalbound(), self.model.getDualbound()
            if (not root and event.getType() != pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND
                    and event.getNode().getDepth() == 0):
                root.append(dual)
            if history and history[-1]["score"] == primal and history[-1]["bound"] == dual:
                return
            history.append({"seconds": clock.now() - started, "score": primal,
                            "bound": dual})

    return History()


STATUSES = {"optimal": "optimal", "timelimit": "time_limit", "gaplimit": "gap_limit",
            "userinterrupt": "interrupted", "nodelimit": "node_limit"}


def solve(pss: ParentSetScores, *, k: int | None = None, time_limit: float = 60.0,
          start: dict | None = None, gap_limit: float = 0.0, exact_separation: bool = True,
          relaxation_share: float = 0.1, progress: bool = False, threads: int = 1,
          solver_params: dict | None = None, helper_share: float = 0.4,
          relaxation: dict | None = None) -> LearnResult:
    """The optimal network over the candidate sets of ``pss``, by branch and cut.

    Parameters
    ----------
    pss : ParentSetScores
        The candidate parent sets and their scores (a score file works too).
    k : int, optional
        Bound the moral graph's tree-width by ``k`` (elimination-order
        constraints); None leaves it free.  On up to 22 variables, when a
        quarter of ``time_limit`` covers it (2 s at 22 variables, halving with
        each variable fewer), the order-graph DP's optimum without the bound caps
        the objective (``stats["unbounded_optimum"]``), and starts the search
        when its width fits.  When tiers of the knowledge hold every variable
        (up to 62), :func:`twlib.learn.exact_width.solve` first searches the
        orders that list the tiers in turn for up to half of ``time_limit``: a
        proof there is the answer (``stats["solver"]`` says so), else its
        proved bound caps the objective and its network starts the search
        (``stats["tier_search"]``).
    time_limit : float
        Seconds for the solver; on expiry the incumbent comes back with
        ``status="time_limit"``, the solver's dual bound and the gap.
    start : dict, optional
        ``{variable: parents}``, a starting network (acyclic, and of width
        ``<= k`` when ``k`` is given).  Each family is replaced by the best kept
        subset of it, which scores at least as well and keeps both properties.
    gap_limit : float
        Stop at this relative gap (0: prove the optimum).
    exact_separation : bool
        At the root node, search fractional points for violated clusters
        exactly when the greedy peeling finds none (the root LP bound is then
        the tightest cluster cuts give); deeper nodes use the peeling only.
    relaxation_share : float
        At most this share of ``time_limit`` first goes to the LP relaxation by
        column generation (:func:`~twlib.learn.ilp.relaxation.lp_bound`); its
        cluster cuts and set-packing rows enter the first LP as rows
        and its bound caps the one reported.  0 leaves the cuts to the branch and cut alone.
        On more than a million families it gets at least half the time, and
        the branch and cut runs over its columns and the start's families
        alone (``stats["restricted"]``); the relaxation's bound, which holds
        over every family, is the one reported.
    progress : bool
        Show SCIP's log as it solves.
    solver_params : dict, optional
        SCIP parameters to set, such as ``{"separating/maxroundsroot": 50}``.
    helper_share : float
        Without ``k``, on more than 20,000 families: for this share of the time
        left after the relaxation, a second process solves the programme over
        the relaxation's columns and the start's families alone, and its network
        joins the search as an incumbent (``stats["helper"]``).  It runs on a
        second core; 0 turns it off.
    relaxation : dict, optional
        A result of :func:`~twlib.learn.ilp.relaxation.lp_bound` over these
        families or more, to use instead of solving one: its cuts enter the
        first LP and its bound caps the one reported (no helper then).

    Returns
    -------
    LearnResult
        ``status`` is ``"optimal"`` (over the kept candidate sets: in-degree
        ``<= pss.max_parents``), ``"time_limit"``, ``"gap_limit"``, or
        ``"complete"`` (a restricted programme solved, the gap to the
        relaxation's bound open); ``upper_bound`` the solver's dual bound;
        ``stats`` holds seconds, nodes, the root bound, cut counts and the
        ``history`` of incumbent and bound against seconds.

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("iris"), max_parents=2)
    >>> res = solve(pss)
    >>> res.status, round(res.score - res.upper_bound, 6)
    ('optimal', 0.0)
    """
    pyscipopt = require_scip()
    if k is not None:
        check_width_bound(k)
    check_time_limit(time_limit)
    if not gap_limit >= 0:
        raise InputError(f"gap_limit must be >= 0, got {gap_limit!r}")
    _check_share("relaxation_share", relaxation_share)
    _check_share("helper_share", helper_share)
    with clock.interruptible():
        started = clock.now()
        model = pyscipopt.Model("bnsl")
        for name in solver_params or {}:
            try:
                model.getParam(name)
            except KeyError:
                raise InputError(f"SCIP has no parameter {name!r} (solver_params)") from None
        given = relaxation is not None
        restricted = not given and relaxation_share > 0 and len(pss) > _BRANCH_AND_CUT_FAMILIES
        if restricted:
            relaxation_share = max(relaxation_share, _RESTRICTED_RELAXATION_SHARE)
        if not given and relaxation_share > 0:
            relaxation = lp_bound(pss, time_limit=relaxation_share * time_limit,
                                  exact_separation=exact_separation)
        fam = _Families(pss)
        n = fam.n
        # without a start, the empty graph (with the required arcs of the knowledge):
        # a time limit always leaves an incumbent
        if pss.knowledge is not None:
            start = pss.knowledge.start(pss.names, start)
        start_rows = _start_rows(fam, {} if start is None else start, pss)
        if restricted:
            return _solve_restricted(pss, fam, relaxation, start_rows, started, k=k,
                                     time_limit=time_limit, gap_limit=gap_limit,
                                     exact_separation=exact_separation, progress=progress,
                                     threads=threads, solver_params=solver_params)
        dp_seconds = _DP_SECONDS_AT_22 * 2.0 ** (n - 22)
        unbounded = None
        if k is not None and n <= _DP_BOUND_VARS and dp_seconds <= 0.25 * time_limit:
            unbounded = order_graph.dp(pss)
        tiered = None
        if k is not None and exact_width.tiered(pss):
            try:
                tiered = exact_width.solve(pss, k, time_limit=_TIER_SEARCH_SHARE * time_limit,
                                           start=start)
            except BudgetExceeded:     # a moral graph whose core is past the exact decisions
                pass
            if tiered is not None and tiered.status == "optimal":
                return _proved_by_tiers(tiered, pss, fam, start_rows, relaxation, started)
        if not progress:
            model.hideOutput()
        model.setParam("limits/gap", float(gap_limit))
        model.setParam("parallel/maxnthreads", int(threads))
        model.setParam("randomization/randomseedshift", 0)
        # strong branching re-solves LPs of thousands of columns plus cuts: a small share of
        # SCIP's iteration budget, and a small fixed allowance past it (Chapter 10 has the
        # times behind these settings)
        model.setParam("branching/relpscost/sbiterquot", 0.05)
        model.setParam("branching/relpscost/sbiterofs", 10_000)
        # these heuristics spend minutes at the root of large tables and find nothing the sink
        # heuristic and the start do not
        for name in ("conflictdiving", "farkasdiving", "feaspump", "clique"):
            model.setParam(f"heuristics/{name}/freq", -1)
        # with the relaxation's cuts the root bound fixes many families by reduced cost, and
        # every restart re-runs the root's separation
        model.setParam("presolving/maxrestarts", 1)
        xs = [model.addVar(vtype="B", obj=float(s), name=f"x{j}") for j, s in enumerate(fam.score)]
        for x in xs:
            model.chgVarBranchPriority(x, 10)
        for v in range(n):
            model.addCons(pyscipopt.quicksum(xs[j] for j in fam.of_child[v]) == 1, name=f"one{v}")
        _pair_cuts(pyscipopt, model, fam, xs)
        order_vars = arc = None
        if k is not None:
            order_vars, arc = _treewidth_constraints(pyscipopt, model, fam, xs, k)
        model.setMaximize()
        tally = {"cluster cuts": 0, "cycle cuts": 0}
        handler, deadline_left = _acyclicity_handler(pyscipopt, fam, xs, exact_separation, tally,
                                                     relaxation)
        deadline_left[0] = started + time_limit
        failures = []
        handler = _guarded(pyscipopt, handler, failures)
        model.includeConshdlr(handler, "acyclicity", "cluster constraints", sepapriority=100,
                              enfopriority=-100, chckpriority=-100, sepafreq=1, propfreq=-1,
                              eagerfreq=-1, maxprerounds=0, needscons=True)
        model.addPyCons(model.createCons(handler, "acyclic", initial=True, separate=True,
                                         enforce=True, check=True, propagate=False))
        model.includeHeur(_guarded(pyscipopt, _sink_heuristic(pyscipopt, fam, xs, k, order_vars,
                                                              arc), failures), "sinks",
                          "sink elimination guided by the LP", "S", priority=100000, freq=1,
                          timingmask=pyscipopt.SCIP_HEURTIMING.AFTERLPNODE)
        history = []
        root = []
        model.includeEventhdlr(_guarded(pyscipopt, _history_handler(pyscipopt, started, history,
                                                                    root), failures), "history",
                               "incumbent and bound over time")
        _add_start(model, fam, xs, start_rows, k, order_vars, arc)
        if unbounded is not None:
            _add_cap(pyscipopt, model, fam, xs, unbounded.score, unbounded.parents, pss, k,
                     order_vars, arc, "unbounded_optimum")
        if tiered is not None:
            _add_cap(pyscipopt, model, fam, xs, tiered.upper_bound, tiered.parents, pss, k,
                     order_vars, arc, "tier_search_bound")
        for name, value in (solver_params or {}).items():
            try:
                model.setParam(name, value)
            except (TypeError, ValueError, LookupError) as err:
                raise InputError(f"SCIP refused {name} = {value!r} (solver_params): "
                                 f"{err}") from None
        helper = None
        if (helper_share > 0 and k is None and relaxation is not None and not given
                and len(fam.score) > _HELPER_FAMILIES):
            left = time_limit - (clock.now() - started)
            helper = _Helper(pss, fam, np.union1d(relaxation["column_rows"], start_rows),
                             start_rows, helper_share * left)
            model.includeEventhdlr(_guarded(pyscipopt, helper.handler(pyscipopt, pss, fam, xs),
                                            failures), "helper",
                                   "networks from the restricted programme")
        setup = clock.now() - started
        # SCIP's clock starts in optimize: building the programme (seconds under k) comes
        # first; after a stop request SCIP only returns the start
        model.setParam("limits/time", 0.1 if clock.interrupted() else max(time_limit - setup, 0.1))
        try:
            _optimize(model, failures)
        finally:
            if helper is not None:
                helper.stop()
        status = STATUSES.get(model.getStatus(), model.getStatus())
        if status == "interrupted":          # SCIP caught the Ctrl-C itself: tell the callers
            clock.request_stop()
        elif clock.interrupted():
            status = "interrupted"
        if model.getNSols() == 0:
            raise InternalError(f"SCIP ended with status {status!r} and lost the start")
        best = model.getBestSol()
        rows = [int(max(fam.of_child[v], key=lambda j: model.getSolVal(best, xs[j])))
                for v in range(n)]
        parents = fam.named(rows, pss.names)
        if find_cycle({v: list(ps) for v, ps in parents.items()}) is not None:
            raise InternalError("the integer programme returned a cyclic graph")
        score = float(fam.score[rows].sum())
        bound = float(model.getDualbound())
        if relaxation is not None:
            bound = min(bound, relaxation["bound"])
        if unbounded is not None:
            bound = min(bound, unbounded.score)
        if tiered is not None:
            bound = min(bound, tiered.upper_bound)
        bound = max(bound, score)
        order = width = None
        if k is not None:
            first = {(u, v): model.getSolVal(best, var) > 0.5 for (u, v), var in order_vars.items()}
            order = sorted(range(n), key=lambda v: sum(first[u, v] if u < v else not first[v, u]
                                                       for u in range(n) if u != v))
            moral = moral_graph({v: list(ps) for v, ps in parents.items()})
            moral.add_nodes_from(pss.names)
            order = [pss.names[v] for v in order]
            width = elimination_width(moral, order)
            if width > k:
                raise InternalError(f"the solver's elimination order has width {width} > k = {k}")
        stats = {"seconds": clock.now() - started, "setup_seconds": setup,
                 "nodes": model.getNNodes(), "root_bound": root[0] if root else bound,
                 "candidate_sets": len(fam.score), "in_degree_limit": pss.max_parents,
                 "score": pss.score, "method": "ilp", "solver": f"SCIP {model.version()}",
                 "history": history, "start_score": float(fam.score[start_rows].sum()), **tally}
        if helper is not None:
            stats["helper"] = helper.stats
        if relaxation is not None:
            stats["relaxation"] = _relaxation_stats(relaxation)
        if unbounded is not None:
            stats["unbounded_optimum"] = unbounded.score
        if tiered is not None:
            stats["tier_search"] = _tier_search_stats(tiered)
        if not abs(stats["root_bound"]) < 1e19:     # the root was cut off: its bound is optimal
            stats["root_bound"] = bound
        stats["root_gap"] = relative_gap(score, stats["root_bound"])
        return LearnResult(network=fit_to_scores(pss, parents, "ilp"), score=score, status=status,
                           stats=stats, parents=parents, elimination_order=order, width=width,
                           upper_bound=bound, gap_percent=relative_gap(score, bound),
                           knowledge=pss.knowledge)


def _relaxation_stats(relaxation: dict) -> dict:
    out = {key: relaxation[key] for key in
           ("bound", "converged", "seconds", "columns", "cuts_kept")}
    out["packing_rows"] = len(relaxation["packings"])
    return out


def _restricted_scores(pss: ParentSetScores, fam: _Families, rows) -> ParentSetScores:
    """``pss`` with the families ``rows`` (positions in ``fam``) alone, and the empty sets."""
    keep = {}
    for j in rows:
        v = int(fam.child[j])
        keep.setdefault(v, []).append(int(j - fam.of_child[v][0]))
    return pss.restricted(keep)


def _solve_restricted(pss, fam, relaxation, start_rows, started, *, k, time_limit, gap_limit,
                      **options) -> LearnResult:
    """Branch and cut over the relaxation's columns and the start's families alone; the
    relaxation's bound, which holds for every family, is the one reported."""
    rows = np.union1d(relaxation["column_rows"], start_rows)
    left = max(time_limit - (clock.now() - started), 1.0)
    res = solve(_restricted_scores(pss, fam, rows), k=k, time_limit=left,
                start=fam.named(start_rows, pss.names), gap_limit=gap_limit,
                relaxation=relaxation, **options)
    bound = max(relaxation["bound"], res.score)
    gap = relative_gap(res.score, bound)
    if bound - res.score <= 1e-9 * max(1.0, abs(res.score)):
        status = "optimal"
    elif gap <= 100 * gap_limit:
        status = "gap_limit"
    else:                       # the restricted programme solved: a heuristic's end
        status = "complete" if res.status == "optimal" else res.status
    elapsed = clock.now() - started
    offset = elapsed - res.stats["seconds"]           # when the restricted solve began
    stats = {**res.stats, "seconds": elapsed,
             "candidate_sets": len(fam.score), "start_score": float(fam.score[start_rows].sum()),
             "root_bound": bound, "root_gap": gap,
             "restricted": {"families": len(rows), "status": res.status,
                            "bound": res.upper_bound},
             "history": [{**h, "seconds": h["seconds"] + offset,
                          "bound": max(relaxation["bound"], h["score"])}
                         for h in res.stats["history"]],
             "relaxation": _relaxation_stats(relaxation)}
    return LearnResult(network=res.network, score=res.score, status=status, stats=stats,
                       parents=res.parents, elimination_order=res.elimination_order,
                       width=res.width, upper_bound=bound, gap_percent=gap, knowledge=res.knowledge)


class _Helper:
    """The restricted programme in a second process (``python -m
    twlib.learn.ilp.restricted``): started with the families ``rows``, polled for its
    network whenever SCIP solves an LP."""

    def __init__(self, pss: ParentSetScores, fam: _Families, rows, start_rows, seconds):
        start = fam.named(start_rows, pss.names)
        self._dir = tempfile.TemporaryDirectory(prefix="twlib-helper-")
        task, self._answer = (Path(self._dir.name) / name for name in ("task.pkl", "answer.pkl"))
        with open(task, "wb") as out:
            pickle.dump({"scores": _restricted_scores(pss, fam, rows), "start": start,
                         "seconds": seconds}, out)
        # a fresh interpreter, not multiprocessing: no fork of SCIP's or numba's threads,
        # and no re-import of the caller's script
        self._process = subprocess.Popen(
            [sys.executable, "-m", "twlib.learn.ilp.restricted", str(task),
             str(self._answer)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._delivered = False
        self.stats = {"families": len(rows), "seconds": seconds, "score": None,
                      "improved": False, "exit": None}

    def handler(self, pyscipopt, pss: ParentSetScores, fam: _Families, xs):
        helper = self

        class Poll(pyscipopt.Eventhdlr):
            def eventinit(self):
                self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.LPSOLVED, self)

            def eventexit(self):
                self.model.dropEvent(pyscipopt.SCIP_EVENTTYPE.LPSOLVED, self)

            def eventexec(self, event):
                parents = helper.receive()
                if parents is None:
                    return
                rows = _start_rows(fam, parents, pss)
                helper.stats["score"] = float(fam.score[rows].sum())
                if helper.stats["score"] > self.model.getPrimalbound() + _EPS:
                    sol = _network_solution(self.model, fam, xs, rows, None, None, None)
                    helper.stats["improved"] = bool(self.model.trySol(sol, free=True))

        return Poll()

    def receive(self):
        """The helper's network (parents by name) the first time it is asked after
        the process ended, else None."""
        if self._delivered or self._process.poll() is None:
            return None
        self._delivered = True
        if self._process.returncode != 0 or not self._answer.exists():
            return None
        with open(self._answer, "rb") as src:
            return pickle.load(src)

    def stop(self):
        if self._process.poll() is None:
            self._process.kill()
        self.stats["exit"] = self._process.wait()    # 0: it finished in its time
        self._dir.cleanup()


def _check_share(name, share):
    if not 0 <= share < 1:
        raise InputError(f"{name} must be in [0, 1), got {share!r}")


def _pair_cuts(pyscipopt, model, fam: _Families, xs):
    """The cluster constraints of all pairs, up front: no 2-cycles (GOBNILP does the same)."""
    pairs = {}
    for j in np.flatnonzero(fam.members.any(axis=1)):
        v = int(fam.child[j])
        for u in np.flatnonzero(fam.members[j]):
            pairs.setdefault((min(u, v), max(u, v)), {}).setdefault(v, []).append(j)
    for (a, b), by_child in pairs.items():
        if len(by_child) == 2:
            model.addCons(pyscipopt.quicksum(xs[j] for rows in by_child.values() for j in rows)
                          <= 1, name=f"pair{a}_{b}")


def _start_rows(fam: _Families, start: dict, pss: ParentSetScores):
    index = {name: i for i, name in enumerate(pss.names)}
    unknown = sorted({u for v, ps in start.items() for u in [v, *ps]} - set(index))
    if unknown:
        raise InputError(f"the start names variables that are not in the data: {unknown}")
    rows = []
    for v, name in enumerate(pss.names):
        allowed = np.zeros(fam.n, dtype=bool)
        allowed[[index[u] for u in start.get(name, ())]] = True
        rows.append(fam.best_inside(v, allowed))
        if rows[-1] < 0:
            raise InputError(f"no kept parent set of {name!r} lies inside the start's "
                             f"parents {sorted(start.get(name, ()))}")
    parents = {v: [int(u) for u in np.flatnonzero(fam.members[j])] for v, j in enumerate(rows)}
    if find_cycle(parents) is not None:
        raise InputError("the start has a directed cycle")
    return np.array(rows)


def _network_solution(model, fam: _Families, xs, rows, k, order_vars, arc, heuristic=None):
    """A solver solution choosing the families ``rows`` (with an elimination order
    found by min-fill when ``k`` is given); None when that order's width exceeds ``k``."""
    # in the original space: presolve may multi-aggregate a variable, which a solution of the
    # transformed problem cannot set
    sol = model.createOrigSol(heuristic)
    chosen = set(rows.tolist())
    for j, x in enumerate(xs):
        model.setSolVal(sol, x, 1.0 if j in chosen else 0.0)
    if k is not None:
        graph = moral_graph({v: [int(u) for u in np.flatnonzero(fam.members[j])]
                             for v, j in enumerate(rows)})
        graph.add_nodes_from(range(fam.n))
        width, order = treewidth_upper_bound(graph)
        if width > k:
            model.freeSol(sol)
            return None
        position = {v: i for i, v in enumerate(order)}
        filled = induced_graph(graph, order)
        for (u, v), var in arc.items():
            later = filled.has_edge(u, v) and position[u] < position[v]
            model.setSolVal(sol, var, 1.0 if later else 0.0)
        for (u, v), var in order_vars.items():
            model.setSolVal(sol, var, 1.0 if position[u] < position[v] else 0.0)
    return sol


def _add_start(model, fam: _Families, xs, rows, k, order_vars, arc):
    sol = _network_solution(model, fam, xs, rows, k, order_vars, arc)
    if sol is None:
        raise InputError(f"the start's tree-width (by min-fill) is over k = {k}")
    if not model.addSol(sol):
        raise InternalError("the start was refused by the solver as infeasible")


def _add_cap(pyscipopt, model, fam: _Families, xs, cap, parents: dict, pss: ParentSetScores, k,
             order_vars, arc, name):
    """A proved upper bound ``cap`` on the objective (the optimum without the
    width bound, or the bound of exact_width's search over the tiers' orders)
    as a row SCIP's bound then respects, so that an incumbent that meets it
    ends the search; ``parents``, the network behind it, is offered as a
    solution and taken when it is one (acyclic, of width ``<= k``)."""
    cap += _EPS * max(1.0, abs(cap))
    model.addCons(pyscipopt.quicksum(float(s) * x for s, x in zip(fam.score, xs)) <= cap,
                  name=name)
    sol = _network_solution(model, fam, xs, _start_rows(fam, parents, pss), k, order_vars, arc)
    if sol is not None:
        model.addSol(sol)


def _proved_by_tiers(tiered: LearnResult, pss: ParentSetScores, fam: _Families, start_rows,
                     relaxation, started) -> LearnResult:
    """The result of a solve that exact_width's search over the tiers' orders
    proved before SCIP started: its network, in the programme's record."""
    stats = {"seconds": clock.now() - started, "nodes": 0, "root_bound": tiered.upper_bound,
             "root_gap": 0.0, "candidate_sets": len(fam.score),
             "in_degree_limit": pss.max_parents, "score": pss.score, "method": "ilp",
             "solver": "none: proved by the search over the tiers' orders",
             "history": tiered.stats["history"],
             "start_score": float(fam.score[start_rows].sum()),
             "tier_search": _tier_search_stats(tiered)}
    if relaxation is not None:
        stats["relaxation"] = _relaxation_stats(relaxation)
    return LearnResult(network=fit_to_scores(pss, tiered.parents, "ilp"), score=tiered.score,
                       status="optimal", stats=stats, parents=tiered.parents,
                       elimination_order=tiered.elimination_order, width=tiered.width,
                       upper_bound=tiered.upper_bound, gap_percent=0.0, knowledge=pss.knowledge)


def _tier_search_stats(tiered: LearnResult) -> dict:
    """What ``stats["tier_search"]`` records of exact_width's search over the tiers' orders."""
    return {"seconds": tiered.stats["seconds"], "nodes": tiered.stats["nodes"],
            "score": tiered.score, "upper_bound": tiered.upper_bound, "status": tiered.status}


def _sink_heuristic(pyscipopt, fam: _Families, xs, k, order_vars, arc):
    """A primal heuristic: sinks eliminated as the LP point suggests, then each
    variable's best family that fits the order (so the network is acyclic)."""
    SCIP_RESULT = pyscipopt.SCIP_RESULT

    class Sinks(pyscipopt.Heur):
        calls = fruitless = 0

        def heurexec(self, heurtiming, nodeinfeasible):
            self.calls += 1
            if self.fruitless >= _SINK_PATIENCE and self.calls % _SINK_BACKOFF:
                return {"result": SCIP_RESULT.DIDNOTRUN}
            self.fruitless += 1
            values = _solution_values(self.model, xs)
            order = _sink_order(fam.child, fam.parents, fam.score, values, fam.n)
            rows = _best_rows_for_order(fam, order)
            if rows is None or fam.score[rows].sum() <= self.model.getPrimalbound() + _EPS:
                return {"result": SCIP_RESULT.DIDNOTFIND}
            sol = _network_solution(self.model, fam, xs, rows, k, order_vars, arc, self)
            if sol is None or not self.model.trySol(sol, printreason=False, free=True):
                return {"result": SCIP_RESULT.DIDNOTFIND}
            self.fruitless = 0
            return {"result": SCIP_RESULT.FOUNDSOL}

    return Sinks()


def learn(data: Dataset | pd.DataFrame, *, score: str = "bic", ess: float = 1.0,
          max_parents: int | None = None, k: int | None = None, time_limit: float = 60.0,
          start="auto", gap_limit: float = 0.0, relaxation_share: float = 0.1,
          progress: bool = False, executor=None, knowledge=None) -> LearnResult:
    """The optimal network from data, proved by integer programming (SCIP).

    Scores the candidate parent sets of in-degree ``<= max_parents``
    (:class:`~twlib.scores.ParentSetScores`, pruned by proved rules only) and
    solves :func:`solve`.  With ``k``, the optimum of tree-width ``<= k``;
    ``max_parents`` then defaults to ``k`` (a width-``k`` network has no more
    parents per variable), else to 3.  ``status="optimal"`` means optimal over
    in-degree ``<= max_parents``, which ``stats["in_degree_limit"]`` names.

    ``start="auto"`` gives the solver a first incumbent: for ``k``, a run of
    :func:`twlib.learn.bounded.learn` for a quarter of ``time_limit`` (at most
    60 s), unless tiers of the knowledge hold every variable (the search over
    the tiers' orders, see :func:`solve`, finds its own); without ``k``, the
    better of two order-based greedy searches
    (feedback-arc-set and depth-first starts).
    ``None`` gives none; a dict ``{variable: parents}`` gives that one.
    ``relaxation_share`` is :func:`solve`'s (the share of the time that first
    goes to the LP relaxation).  ``executor`` scores the candidate sets on
    its workers (:mod:`twlib.parallel`).  The scoring runs to its end whatever
    ``time_limit`` says; a ``RuntimeWarning`` says so first when it is
    estimated to take longer (:func:`~twlib.learn.ilp.relaxation.scoring_seconds`).
    ``knowledge`` (:class:`twlib.knowledge.Knowledge`) keeps only the family
    columns it allows (a required arc fixes its child's columns to those that
    hold it), so ``"optimal"`` proves the optimum among the networks it allows;
    the automatic start honours it too.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("wine"), k=2, time_limit=60)
    >>> res.status, res.width <= 2
    ('optimal', True)
    """
    data = as_dataset(data)
    if k is not None:
        check_width_bound(k)
    if knowledge:
        knowledge.validate(data.names, k)
    if max_parents is None:
        max_parents = 3 if k is None else k
    if isinstance(max_parents, bool) or not isinstance(max_parents, (int, np.integer)) \
            or max_parents < 0:
        raise InputError(f"max_parents must be an integer >= 0, got {max_parents!r}")
    check_time_limit(time_limit)
    _check_share("relaxation_share", relaxation_share)
    with clock.interruptible():
        started = clock.now()
        limit = max_parents if k is None else min(max_parents, k)
        if k is not None and k >= data.n_vars - 1:
            k = None            # every graph on n variables has tree-width <= n - 1
        estimate = scoring_seconds(data.n_vars, data.n_rows, limit)
        if estimate > time_limit:
            fewer = (f"; max_parents={limit - 1} would take about "
                     f"{scoring_seconds(data.n_vars, data.n_rows, limit - 1):.0f} s"
                     if limit else "")
            warnings.warn(f"scoring every parent set of at most {limit} parents ({data.n_vars} "
                          f"variables, {data.n_rows} rows) takes about {estimate:.0f} s on two "
                          f"cores, past time_limit={time_limit:g} s, and is not cut short{fewer}",
                          RuntimeWarning, stacklevel=2)
        pss = ParentSetScores(data, score=score, ess=ess, max_parents=limit, executor=executor,
                              knowledge=knowledge)
        scoring = clock.now() - started
        if isinstance(start, str):
            if start != "auto":
                raise InputError(f"start must be 'auto', None or a dict of parents, got {start!r}")
            start = _auto_start(data, pss, k, score, ess, time_limit, knowledge)
        left = max(time_limit - (clock.now() - started), 1.0)
        res = solve(pss, k=k, time_limit=left, start=start, gap_limit=gap_limit,
                    relaxation_share=relaxation_share, progress=progress)
        res.stats["scoring_seconds"] = scoring
        res.stats["seconds"] = clock.now() - started
        return res


def _auto_start(data, pss, k, score, ess, time_limit, knowledge=None):
    from .. import bounded
    if k is None:
        return _greedy_start(pss, time_limit).parents
    if exact_width.tiered(pss):
        return None            # the search over the tiers' orders finds its own incumbents
    # the programme under k seldom betters its start, so the start gets a real share of the time
    return bounded.first_incumbent(data, k, score=score, ess=ess, time_limit=time_limit,
                                   knowledge=knowledge)


def _greedy_start(pss: ParentSetScores, time_limit: float) -> LearnResult:
    """The best of order-based greedy searches from feedback-arc-set orders and from
    depth-first orders, the latter in rounds of ``_DFS_ROUND`` restarts until
    ``_DFS_PATIENCE`` rounds in a row find nothing better or a twentieth of the
    time limit is spent.

    >>> from twlib.datasets import load_sklearn
    >>> from twlib.learn import greedy
    >>> pss = ParentSetScores(load_sklearn("wine"), max_parents=2)
    >>> fas = greedy.order_search(pss, init="fas", restarts=5, random_state=0)
    >>> _greedy_start(pss, 10).score >= fas.score
    True
    """
    from .. import greedy
    started = clock.now()
    best = greedy.order_search(pss, init="fas", restarts=5, random_state=0)
    idle = 0
    for seed in itertools.count():
        run = greedy.order_search(pss, init="dfs", restarts=_DFS_ROUND, random_state=seed)
        if run.score > best.score:
            best, idle = run, 0
        else:
            idle += 1
        if idle >= _DFS_PATIENCE or clock.now() - started >= 0.05 * time_limit:
            return best
