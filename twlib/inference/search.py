"""Exact MPE past the junction tree: branch and bound on mini-bucket bounds.

The variables are assigned in reverse elimination order, so when a variable is
assigned every function in its bucket becomes fully assigned.  The value of a
partial assignment is the sum of the log functions already fully assigned plus
the mini-bucket messages that are (:mod:`twlib.inference.minibucket`): by the
mini-bucket inequality no completion scores more, so a branch whose value is at
most the best complete assignment found (the incumbent) is pruned, and what is
never pruned is optimal (Kask & Dechter 2001; Marinescu & Dechter 2009 for its
AND/OR form).  Children are tried best first, so the first dive is the greedy
assignment the heuristic prefers, and the search is anytime: at any moment it
holds an incumbent and a proved upper bound (the largest value of a branch not
yet closed).

Depth-first search does not revisit a poor choice made near the root until it
has exhausted everything below it.  So the OR search is *hybrid best-first*
(Allouche, de Givry, Katsirelos, Schiex & Zytnicki 2015): each dive is
depth-first, but after a fixed number of backtracks the branches it left open
are parked as nodes (a value and a link to the parent's prefix), and the next
dive starts from the open node of largest bound.  The proved bound is then the
best open node's, which falls as the search goes on rather than only when a
subtree near the root is closed.  When the node store is full the current dive
runs to its end, so the search stays complete.

The heuristic is static, and where the LP relaxation is nearly tight but full
of ties it stays flat for dozens of levels.  So an open node popped for the
first time is bounded again by MPLP on the tables conditioned on its prefix
(:func:`~twlib.inference.cost_shifting.conditioned_bound`) and dropped when
that refutes it, and the LP search of :mod:`twlib.inference.lp_search` takes
turns with the dive and the AND/OR search on their shared incumbent, as do the
propagation search of :mod:`twlib.inference.propagation` and an iterated local
search (random kicks of up to 32 connected variables of the incumbent, each
polished by conditional modes, the kicked variables held until their
neighbours have adapted), whose share of the time shrinks while it finds nothing.

The search runs in a compiled kernel for a budget of nodes at a time; between
budgets the clock (:mod:`twlib.clock`: compiling does not count) and Ctrl-C are
checked.  :func:`most_probable_explanation` picks the method: the junction tree
when it fits the memory budget, else this search with the largest i-bound whose
messages fit.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np
from tqdm.auto import tqdm

from .. import clock
from ..errors import BudgetExceeded, InputError, MemoryBudgetExceeded, ZeroEvidenceError
from ..factors import Factor, FactorModel, as_factor_model
from ..graphs import elimination_order
from ..heaps import heap_pop, heap_push
from .andor import (AndOrSearch, flat_lists, flat_tables, slack, sort_best_first, table_value,
                    tables_sum, tables_total)
from .cost_shifting import conditioned_bound
from .evidence import evidence_indices, likelihoods
from .junction_tree import JunctionTree
from .lp_search import LPSearch, lp_arrays, round_into_incumbent
from .propagation import PropagationSearch
from .kernels import flat_factors, log_values
from .minibucket import (affordable_i_bound, check_i_bound, check_memory_budget,
                         mini_buckets, shifted_tables)

__all__ = ["MPEResult", "MPESearch", "branch_and_bound_mpe", "most_probable_explanation",
           "with_likelihoods"]

_NODES_PER_CALL = 20_000
# Nodes of the propagation search per turn: each rescans the tables around a variable
_PROPAGATION_NODES = 200
# The share of the time limit the propagation search has alone, after MPLP and
# before the mini-buckets: what it proves in that time needs no messages
_PROBE_SHARE = 0.025
# Seconds between the entries of a result's history that only record a lower bound
_BOUND_EVERY = 0.25
_NODES_PER_SECOND = 1e7
# Junction-tree table entries built and maximised per second (Grids_30: 2.1e8 in 20 s);
# a tree that would take longer than the time limit is not tried
_TREE_ENTRIES_PER_SECOND = 1e7
# A tree whose greedy orders need this many times the entries that fit is not
# looked at further: better orders shrink it by small factors
_FAR_OVER = 1e3
# A prepared search either proves a few-variable evidence set in a small fraction
# of the tree's time or thrashes for far longer than the tree; a quarter of the
# tree's time catches the first kind and caps the loss on the second at 1.25x
_SEARCH_SHARE_OF_TREE = 0.25
# Parked nodes (57 bytes each with the heap; the arrays are touched only as they fill)
_OPEN_NODES = 1 << 22
# Backtracks before a dive parks its open branches: enough that a dive mostly ends
# in a leaf (an incumbent), few enough that the search returns to the best bound often
_BACKTRACKS_PER_DIVE = 1000
# MPLP sweeps on the conditioned tables before a dive from an open node; they
# mostly stop early, once the node is refuted or the bound stops falling
_LP_SWEEPS = 200
# The share of the time of the LP search and of the propagation search (both bound
# by the root's LP) when the root LP bound exceeds the mini-buckets' by more than the
# gap left to close (grids: by 20 %; Promedas: by 1e-4)
_LP_SHARE_LOOSE = 0.05
# The propagation search's share (the others' is 1) once the bound it proves, by
# refuting targets, is the best: on the wcsp instances no other search lowers it
_PROPAGATION_SHARE_AHEAD = 5.0
# Kicks of the iterated local search per turn.  Its share of the time is 1 (as the
# others') after a turn that raised the incumbent and 1 / (1 + k / 8) after k turns
# in a row that did not: it only raises the incumbent, which a proof near its end
# does not need
_LOCAL_KICKS = 200
# A kick sets 2 to this many connected variables to random values: leaving a
# basin can take twenty variables moved at once (ObjectDetection_11)
_LOCAL_KICK_MOST = 32
# Where those tests keep failing (a loose LP, as on grids), at most one node in
# 2^16 is tested
_MOST_SKIPPED_DOUBLINGS = 16


@dataclass
class MPEResult:
    """The most probable explanation found, and what is proved about it.

    ``assignment`` maps every variable to a state label (evidence included),
    ``log_value`` is the natural log of its joint probability (of the model's
    unnormalised product for a Markov network), ``bound`` a proved upper bound on
    the optimum's, ``status`` ``"optimal"``, ``"time_limit"`` or
    ``"interrupted"``, ``gap`` = ``bound - log_value`` and ``method`` says which
    method answered.  ``stats["history"]`` holds ``(seconds, log_value, bound)``
    each time the incumbent improved, at most every quarter second while only
    the bound falls, and at the end.
    """

    assignment: dict
    log_value: float
    bound: float
    status: str
    method: str
    stats: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return max(self.bound - self.log_value, 0.0)


def branch_and_bound_mpe(model, evidence=None, *, i_bound: int | str = 10,
                         time_limit: float = 60.0, order=None, max_memory_gb: float = 4.0,
                         mplp_seconds: float | None = None, propagation: bool = True,
                         progress: bool = False) -> MPEResult:
    """The MPE by branch and bound guided by MBE(``i_bound``) (hybrid best-first).

    ``i_bound="auto"`` takes the largest whose messages fit a quarter of
    ``max_memory_gb`` and about a quarter of ``time_limit``, sized only when
    the mini-buckets are needed.

    The tables are first reparameterised by MPLP for at most ``mplp_seconds``
    (default a tenth of ``time_limit``; 0 turns it off), which tightens the
    mini-bucket heuristic and removes the values that the zeros rule out; it
    stops early when the assignment of largest beliefs reaches its bound,
    which proves that assignment optimal with no search.  Then the propagation search (:mod:`twlib.inference.propagation`) runs
    alone for a fortieth of the time, and if it has not proved the answer the
    mini-buckets are computed and it takes turns with the other searches;
    ``propagation=False`` leaves it out.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree
    >>> net = load_network("alarm")
    >>> res = branch_and_bound_mpe(net, {"HR": "HIGH"}, i_bound=3)
    >>> res.status, round(res.log_value - JunctionTree(net).mpe({"HR": "HIGH"})[1], 9)
    ('optimal', 0.0)
    """
    clock.check_time_limit(time_limit)
    if i_bound != "auto":
        check_i_bound(i_bound)
    check_memory_budget(max_memory_gb)
    model = as_factor_model(model)
    compiled = clock.compile_seconds()
    started = clock.now()

    def log_value(states):
        return model.log_values([states])[0]

    shifted = shifted_tables(model, evidence, order=order,
                             mplp_seconds=time_limit / 10 if mplp_seconds is None
                             else mplp_seconds)
    probe, history, status = None, [], None
    if propagation and shifted.closed is None:
        probe, history, status = _probe(shifted, started, _PROBE_SHARE * time_limit,
                                        max_memory_gb)
    probe_seconds = clock.now() - started
    if shifted.closed is not None:                   # MPLP's LP is tight: nothing to search
        result = _answer(model, shifted.closed.copy(), float(shifted.lp_bounds[-1]),
                         shifted.evidence, log_value, "optimal", float(shifted.lp_bounds[-1]),
                         time_limit, "MPLP, tight", history, started,
                         {"nodes": 0, "mplp_bounds": shifted.lp_bounds[[0, -1]].tolist()})
        heuristic_seconds = probe_seconds
    elif status is not None:
        result = _answer(model, probe.best.copy(), probe.incumbent, shifted.evidence,
                         log_value, status, probe.bound(), time_limit,
                         "branch and bound with propagation, MPLP", history, started,
                         {"nodes": probe.nodes, "propagation_nodes": probe.nodes,
                          "heuristic_bound": float(shifted.lp_bounds[-1]),
                          "mplp_bounds": shifted.lp_bounds[[0, -1]].tolist()})
        heuristic_seconds = probe_seconds
    else:
        if i_bound == "auto":
            i_bound = affordable_i_bound(model, evidence, max_memory_gb / 4, time_limit / 4,
                                         order=[model.variables[k] for k in shifted.order])
        mb = mini_buckets(model, i_bound, evidence, task="max", shifted=shifted,
                          max_memory_gb=max_memory_gb)
        heuristic_seconds = clock.now() - started
        solver = _Solver(mb, max_memory_gb)
        result = solver.solve(model, mb.evidence, log_value, started=started,
                              time_limit=time_limit, progress=progress, probe=probe,
                              probe_seconds=probe_seconds, history=history)
    result.stats.update(seconds=clock.now() - started, heuristic_seconds=heuristic_seconds,
                        compile_seconds=clock.compile_seconds() - compiled)
    return result


def _probe(shifted, started, seconds, max_memory_gb):
    """The propagation search on ``shifted`` tables alone for up to ``seconds``,
    before any mini-bucket is computed: ``(search, history, status)``, the status
    ``"optimal"`` or ``"interrupted"`` if that ended the run, else None.  Its
    undo trail takes at most an eighth of ``max_memory_gb``."""
    tab = flat_tables(shifted.tables)
    probe = PropagationSearch(tab, len(shifted.tables), shifted.arity, np.array([-np.inf]),
                              np.zeros(len(shifted.arity), dtype=np.int64),
                              trail_bytes=max_memory_gb * 2**30 / 8)
    history = []
    end = clock.now() + seconds
    with clock.interruptible():
        while not probe.finished and not probe.stalled and not clock.expired(end):
            before = probe.incumbent
            probe.run(_PROPAGATION_NODES)
            if probe.incumbent > before:
                history.append((clock.now() - started, probe.incumbent, probe.bound()))
            if clock.interrupted():
                return probe, history, "interrupted"
    return probe, history, "optimal" if probe.finished else None


class MPESearch:
    """Exact MPE by AND/OR branch and bound, prepared once for many evidence sets.

    The MPLP reparameterisation and the mini-buckets are computed once, without
    evidence, over the model's tables and one zero log-table per variable.  A
    query writes ``-inf`` into those tables at the states its evidence rules
    out: that only lowers values, so every mini-bucket message stays an upper
    bound and the search stays exact, and nothing but the search itself runs
    per evidence set.  The bounds ignore the evidence, so this suits many
    queries with a few observed variables each (as a junction tree does);
    :func:`branch_and_bound_mpe` computes them for one evidence set.  The LP
    search, the LP rounding and the LP tests of the dive's open nodes are left
    out: on BARLEY and MUNIN they made a query five times slower, and fewer
    queries ended before the fallback.

    ``i_bound``, ``order`` and ``max_memory_gb`` are those of
    :func:`branch_and_bound_mpe`; MPLP runs for at most ``mplp_seconds``.

    A few evidence sets can still be hard for the search when the tree is
    easy (a zero the bounds do not see thrashes the dive).  With ``fallback`` (a
    :class:`JunctionTree` of the model) a query gets the search for as long as
    a quarter of the time the tree took on its last query, then the tree: never
    more than 1.25 times the tree's time, and the search's when the search is
    quick.  The first query goes to the tree, to time it.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree
    >>> net = load_network("alarm")
    >>> search = MPESearch(net, i_bound=4)
    >>> res = search.mpe({"HR": "HIGH"}, time_limit=10)
    >>> res.status, round(res.log_value - JunctionTree(net).mpe({"HR": "HIGH"})[1], 9)
    ('optimal', 0.0)
    """

    def __init__(self, model, *, i_bound: int = 10, order=None, max_memory_gb: float = 4.0,
                 mplp_seconds: float = 1.0):
        model = as_factor_model(model)
        slots = [Factor((v,), np.ones(model.arity(v))) for v in model.variables]
        self.model = model
        self._index = {v: k for k, v in enumerate(model.variables)}
        started = clock.now()
        try:
            mb = mini_buckets(_with_factors(model, slots), i_bound, None, task="max",
                              order=order, max_memory_gb=max_memory_gb,
                              mplp_seconds=mplp_seconds)
        except ZeroEvidenceError:
            raise ZeroEvidenceError("every assignment of the model has probability zero"
                                    ) from None
        self._solver = _Solver(mb, max_memory_gb, lp=False)
        # each variable's table of its own (its slot, added into any other table
        # over it alone), where a query's evidence is written
        self._slot = np.empty(len(model.variables), dtype=np.int64)
        for t, (scope, _) in enumerate(mb.tables[:mb.originals]):
            if len(scope) == 1:
                self._slot[scope[0]] = t
        self._tree_seconds = None               # the fallback tree's last query
        scopes, strides, offsets, values = flat_factors(model)
        with np.errstate(divide="ignore"):
            self._flat = scopes, strides, offsets, np.log(values)
        self.prepare_seconds = clock.now() - started

    def _log_value(self, states):
        return log_values(*self._flat, states[None])[0]

    def mpe(self, evidence=None, *, time_limit: float = 60.0, fallback=None,
            progress: bool = False) -> MPEResult:
        """The MPE given ``evidence`` (``{variable: state label}``), as
        :func:`branch_and_bound_mpe` returns it; ``fallback`` a junction tree of
        the model (see the class).

        >>> from twlib.datasets import load_network
        >>> net = load_network("asia")
        >>> search, tree = MPESearch(net), JunctionTree(net)
        >>> [search.mpe({"dysp": "yes"}, fallback=tree).method for _ in range(2)]
        ['junction tree', 'AND/OR branch and bound, MBE(10)']
        """
        clock.check_time_limit(time_limit)
        if fallback is not None:
            if list(fallback.net.variables) != self.model.variables:
                raise InputError("the fallback junction tree is not over this model's variables")
            if self._tree_seconds is None:
                return self._by_tree(fallback, evidence)
            time_limit = min(time_limit, _SEARCH_SHARE_OF_TREE * self._tree_seconds)
        compiled = clock.compile_seconds()
        started = clock.now()
        ev = {self._index[v]: s for v, s in evidence_indices(self.model, evidence).items()}
        _, _, _, offset, values = self._solver.tab
        ruled_out = [offset[self._slot[v]] + a for v, s in ev.items()
                     for a in range(self.model.arity(self.model.variables[v])) if a != s]
        kept = values[ruled_out].copy()
        values[ruled_out] = -np.inf
        try:
            result = self._solver.solve(self.model, ev, self._log_value, started=started,
                                        time_limit=time_limit, progress=progress)
        except BudgetExceeded:                  # no assignment found in the time given
            if fallback is None:
                raise
            result = None
        finally:
            values[ruled_out] = kept
        if fallback is not None and (result is None or result.status == "time_limit"):
            return self._by_tree(fallback, evidence)
        result.stats.update(seconds=clock.now() - started,
                            compile_seconds=clock.compile_seconds() - compiled)
        return result

    def _by_tree(self, tree, evidence) -> MPEResult:
        """The MPE by ``tree``, timed for the next queries' search."""
        result = _by_tree(tree, self.model, evidence, self._log_value)
        self._tree_seconds = result.stats["seconds"]
        return result


def _by_tree(tree, model, evidence, log_value) -> MPEResult:
    """The MPE by junction tree ``tree`` of ``model``, its value ``log_value(row)``
    (unnormalised, as the search's)."""
    started = clock.now()
    assignment, _ = tree.mpe(evidence)
    seconds = clock.now() - started
    row = np.array([model.states(v).index(assignment[v]) for v in model.variables])
    value = float(log_value(row))
    return MPEResult(assignment=assignment, log_value=value, bound=value, status="optimal",
                     method="junction tree", stats={"seconds": seconds, "width": tree.width})


class _Solver:
    """The OR dive, the AND/OR search, the LP search over mini-buckets ``mb`` and
    the propagation search given to :meth:`solve`, taking turns until one
    proves the incumbent they share; all are kept, and reset, between runs.
    Without ``lp`` there is no LP search, rounding or test of the dive's open
    nodes: a prepared search answers many small queries, each in less time than
    one rounding takes, and is given no propagation search."""

    def __init__(self, mb, max_memory_gb, *, lp: bool = True):
        self.mb = mb
        self.tab = flat_tables(mb.tables)              # shared by the searches
        self.kernel = _Kernel(mb, self.tab, lp_sweeps=_LP_SWEEPS if lp else 0)
        self.use_lp = lp
        # built on their first turn: the dive may end first
        self.andor = self.lp = None
        self.max_memory_gb = max_memory_gb
        self.lp_excess = mb.stats["mplp_bounds"][-1] - mb.constant

    def solve(self, model, evidence, log_value, *, started, time_limit, progress,
              probe=None, probe_seconds=0.0, history=None) -> MPEResult:
        """One search, until ``started + time_limit`` (the clock's seconds, from
        which the history counts too); ``evidence`` ({variable index: state}) is
        written into the answer, whose value ``log_value(states)`` recomputes
        from the model (the shifted tables add up to it only up to rounding).
        ``probe`` is a propagation search that has already run on the same
        shifted tables for ``probe_seconds``: it goes on from where it stopped,
        its incumbent the others', after ``history`` (its own)."""
        mb, kernel = self.mb, self.kernel
        kernel.reset()
        andor = lp = prop = None            # this run's, once they have had a turn
        history = [] if history is None else history
        if probe is not None:
            kernel.scalars[0] = probe.incumbent
            kernel.best[:] = probe.best
            probe.share(kernel.scalars, kernel.best)
            prop = probe
        bar = tqdm(desc=f"AND/OR branch and bound, MBE({mb.i_bound})", unit="node",
                   disable=not progress)

        def record(before):
            """After a turn: a better incumbent is polished, given to the AND/OR
            search and written down, and so is a lower bound every so often."""
            if not kernel.incumbent > before:
                if history and clock.now() - started - history[-1][0] >= _BOUND_EVERY:
                    bound = self._bound(andor, lp, prop)
                    if bound < history[-1][2]:
                        history.append((clock.now() - started, kernel.incumbent, bound))
                return
            kernel.polish()
            if andor is not None:
                andor.restart(kernel.incumbent)
            history.append((clock.now() - started, kernel.incumbent,
                            self._bound(andor, lp, prop)))
            bar.set_postfix({"log value": f"{kernel.incumbent:.4f}",
                             "bound": f"{history[-1][2]:.4f}"}, refresh=False)

        if self.use_lp:
            kernel.round_root()
            record(-np.inf)
        status = "optimal"
        # seconds of the OR dive, the AND/OR search, the LP search, the propagation
        # search and the local search: they take turns by time, not nodes, since
        # their nodes cost very different amounts
        spent = [0.0, 0.0, 0.0 if self.use_lp else np.inf,
                 np.inf if probe is None else probe_seconds, 0.0 if self.use_lp else np.inf]
        local_misses = 0
        with clock.interruptible():
            while not kernel.finished:
                turn = clock.now()
                share = [1.0, 1.0, 1.0, 1.0, 1.0 / (1 + local_misses / 8)]
                bound = self._bound(andor, lp, prop)
                if self.use_lp and self.lp_excess > bound - kernel.incumbent:
                    share[2] = share[3] = _LP_SHARE_LOOSE
                elif prop is not None and prop.bound() <= bound:
                    share[3] = _PROPAGATION_SHARE_AHEAD
                # the local search starts from an incumbent, and without the time
                # the others had before there was one
                local = kernel.incumbent > -np.inf and np.isfinite(spent[4])
                if not local and self.use_lp:
                    spent[4] = min(spent[e] / share[e] for e in range(4))
                engine = min(range(5 if local else 4), key=lambda e: spent[e] / share[e])
                before = kernel.incumbent
                if engine == 0:
                    bar.update(kernel.run(_NODES_PER_CALL))
                elif engine == 1:
                    if andor is None:
                        if self.andor is None:
                            self.andor = AndOrSearch(
                                mb, _cache_entries(self.max_memory_gb, time_limit), self.tab)
                        andor = self.andor
                        andor.clear()
                        andor.restart(kernel.incumbent)
                    bar.update(andor.run(_NODES_PER_CALL // 4))
                elif engine == 3:
                    bar.update(prop.run(_PROPAGATION_NODES))
                elif engine == 4:
                    kernel.local_search(_LOCAL_KICKS)
                    local_misses = 0 if kernel.incumbent > before else local_misses + 1
                else:
                    if lp is None:
                        if self.lp is None:
                            self.lp = LPSearch(kernel.lp, self.tab, mb.arity, kernel.scalars,
                                               kernel.best)
                        lp = self.lp
                        lp.reset(mb.bound)
                    bar.update(lp.run(1))
                spent[engine] += clock.now() - turn
                if lp is not None and lp.stalled:
                    spent[2] = np.inf
                if prop is not None and prop.stalled:
                    spent[3] = np.inf
                record(before)
                if any(s is not None and s.finished for s in (andor, lp, prop)):
                    break
                if _proved(self._bound(andor, lp, prop), kernel.incumbent):
                    break
                if clock.interrupted():
                    status = "interrupted"
                    break
                if clock.expired(started + time_limit):
                    status = "time_limit"
                    break
        bar.close()
        states, value = kernel.best.copy(), kernel.incumbent
        if andor is not None and andor.improved:
            states, value = andor.assign.copy(), andor.value
        return _answer(model, states, value, evidence, log_value, status,
                       self._bound(andor, lp, prop), time_limit,
                       f"AND/OR branch and bound, MBE({mb.i_bound})", history, started,
                       {"nodes": kernel.nodes + (andor.nodes if andor else 0),
                        "and_or_nodes": andor.nodes if andor else 0,
                        "lp_tests": kernel.lp_tests,
                        "lp_search_nodes": lp.tests if lp else 0,
                        "propagation_nodes": prop.nodes if prop else 0,
                        "pseudo_tree_depth": andor.tree.depth if andor else 0,
                        "i_bound": int(mb.i_bound), "heuristic_bound": mb.bound, **mb.stats})

    def _bound(self, andor, lp, prop):
        """The proved upper bound: the heuristic's at the root, the open branches'
        of each search that has run."""
        bounds = [self.kernel.bound(), self.mb.bound]
        bounds += [s.bound() for s in (andor, lp, prop) if s is not None]
        return min(bounds)


def _answer(model, states, value, evidence, log_value, status, bound, time_limit, method,
            history, started, stats) -> MPEResult:
    """The result of a search that ended with ``status``, incumbent ``states`` of
    value ``value`` and proved ``bound``: the evidence written in and the value
    recomputed from the model by ``log_value``."""
    if not np.isfinite(value):
        if status == "optimal":
            raise ZeroEvidenceError("the evidence has probability zero")
        raise BudgetExceeded(f"no assignment of non-zero probability was found in "
                             f"{time_limit} s")
    for v, s in evidence.items():
        states[v] = s
    value = float(log_value(states))
    bound = value if status == "optimal" else max(bound, value)
    history.append((clock.now() - started, value, bound))
    assignment = {v: model.states(v)[int(states[k])] for k, v in enumerate(model.variables)}
    return MPEResult(assignment=assignment, log_value=value, bound=float(bound), status=status,
                     method=method, stats={**stats, "history": history})


def _proved(bound, incumbent) -> bool:
    """Whether ``bound`` proves ``incumbent`` optimal, up to the rounding of
    adding the same logs in another order."""
    return bool(np.isfinite(incumbent) and bound <= incumbent + slack(incumbent))


class _Kernel:
    """The search state in flat arrays, so the compiled loop can stop and resume;
    ``tab`` is ``flat_tables(mb.tables)``.

    Each new incumbent is first improved by iterated conditional modes (each
    variable in turn moved to its best value given the others, until none
    moves; Besag 1986): the dive's first assignments are greedy, and a better
    incumbent early prunes more of the search.

    Open nodes of the hybrid best-first search are kept in ``node_*`` arrays of
    ``capacity`` entries (a node is the prefix of ``seq`` through its parent
    plus its own value) and a heap (:mod:`twlib.heaps`) on their negated bounds,
    deeper first on ties; a dive parks its open branches after
    ``backtracks_per_dive`` backtracks.
    """

    def __init__(self, mb, tab, *, capacity: int = _OPEN_NODES,
                 backtracks_per_dive: int = _BACKTRACKS_PER_DIVE, lp_sweeps: int = _LP_SWEEPS):
        seq = np.array(mb.order[::-1], dtype=np.int64)
        n_vars = len(mb.arity)
        self.tab = tab
        self.add_ptr, self.add_ids = flat_lists([mb.placed[v] for v in seq])
        self.sub_ptr, self.sub_ids = flat_lists([mb.generated[v] for v in seq])
        self.seq, self.arity = seq, mb.arity.astype(np.int64)
        m, top = len(seq), int(mb.arity.max()) if n_vars else 1
        self.cand_val = np.zeros((m + 1, top), dtype=np.int64)
        self.cand_f = np.full((m + 1, top), -np.inf)
        self.cand_n = np.zeros(m + 1, dtype=np.int64)
        self.cand_next = np.full(m + 1, -1, dtype=np.int64)
        self.f_at = np.full(m + 1, -np.inf)
        self.assign = np.zeros(n_vars, dtype=np.int64)
        self.best = np.zeros(n_vars, dtype=np.int64)
        # depth, finished, diving, bottom, dive's node, nodes, heap size, backtracks, limit,
        # open nodes bounded by MPLP, tests in a row that changed nothing, pops to skip
        self.state = np.zeros(12, dtype=np.int64)
        self.scalars = np.array([-np.inf, np.inf])              # incumbent, dive's cap
        self.node_parent = np.empty(capacity, dtype=np.int64)
        self.node_f = np.empty(capacity)
        self.node_tested = np.empty(capacity, dtype=np.bool_)
        self.node_value = np.empty(capacity, dtype=np.int64)
        self.node_depth = np.empty(capacity, dtype=np.int64)
        self.heap = (np.empty(capacity), np.empty(capacity, dtype=np.int64),
                     np.empty(capacity, dtype=np.int64))
        self.backtracks_per_dive = backtracks_per_dive
        self.lp = lp_arrays(tab, mb.originals, n_vars, lp_sweeps)
        self.constant = mb.constant
        around = [[] for _ in range(n_vars)]
        for t in range(mb.originals):
            for v in mb.tables[t][0]:
                around[v].append(t)
        self.around = flat_lists(around)
        self.originals = mb.originals
        self.reset()

    def reset(self) -> None:
        """Back to the root with no incumbent (the tables may have changed)."""
        self.cand_next[:] = -1
        self.f_at[0] = self.constant
        self.state[:] = 0
        self.state[2] = 1                                       # diving from the root,
        self.node_parent[0], self.node_value[0], self.node_depth[0] = -1, 0, 0
        self.state[5] = 1                                       # which is node 0
        self.state[8] = self.backtracks_per_dive
        self.scalars[:] = -np.inf, np.inf
        self.nodes = 0
        self.local_calls = 0
        if len(self.seq) == 0:                                  # all observed
            self.scalars[0] = self.constant
            self.state[1] = 1

    @property
    def finished(self) -> bool:
        return bool(self.state[1])

    @property
    def incumbent(self) -> float:
        return float(self.scalars[0])

    def run(self, budget: int) -> int:
        done = _hybrid_search(self.seq, self.arity, self.add_ptr, self.add_ids, self.sub_ptr,
                              self.sub_ids, self.tab, self.cand_val, self.cand_f, self.cand_n,
                              self.cand_next, self.f_at, self.assign, self.best, self.state,
                              self.scalars, self.node_parent, self.node_value,
                              self.node_depth, self.node_f, self.node_tested, *self.heap, self.lp,
                              budget)
        self.nodes += done
        return done

    def round_root(self) -> None:
        """Take the LP's rounding at the root (``rounded_assignment`` in
        :mod:`twlib.inference.cost_shifting`) as the incumbent if it is better."""
        fixed, originals, stride, offset, size, work, inc_ptr, inc_table, inc_slot, _, _ = \
            self.lp
        conditioned_bound(fixed, self.assign, originals, stride, offset, size, self.tab[4], work,
                          self.arity, inc_ptr, inc_table, inc_slot, 0, np.inf)
        round_into_incumbent(self.assign, self.lp, self.tab, self.arity, self.scalars, self.best)

    def local_search(self, kicks: int) -> int:
        """Iterated local search from the incumbent (Lourenço, Martin & Stützle
        2003): ``kicks`` times, set two to 32 variables connected by the tables,
        around a random one, to random values and polish by conditional modes;
        an assignment at least as good becomes the incumbent.  Seeded by the
        number of calls, so a run repeats."""
        if self.incumbent == -np.inf or len(self.seq) == 0:
            return 0
        self.local_calls += 1
        _iterated_modes(self.best, self.scalars, self.seq, self.arity, self.around, self.tab,
                        self.originals, kicks, self.local_calls)
        return kicks

    def polish(self) -> None:
        """Improve the incumbent by iterated conditional modes."""
        trial = self.best.copy()
        _conditional_modes(trial, self.seq, self.arity, self.around, self.tab)
        value = tables_total(trial, self.originals, self.tab)
        if value > self.incumbent:
            self.best[:] = trial
            self.scalars[0] = value

    def bound(self) -> float:
        """The largest value of a branch not yet closed (or the incumbent)."""
        if self.finished:
            return self.incumbent
        best = self.incumbent
        if self.state[6] > 0:
            best = max(best, -float(self.heap[0][0]))
        if self.state[2]:
            depth, cap = int(self.state[0]), float(self.scalars[1])
            best = max(best, min(float(self.f_at[depth]), cap))
            for d in range(int(self.state[3]), depth + 1):
                k = self.cand_next[d]
                if 0 <= k < self.cand_n[d]:
                    best = max(best, min(float(self.cand_f[d, k]), cap))
        return best

    @property
    def lp_tests(self) -> int:
        """How many open nodes this run bounded by MPLP before diving."""
        return int(self.state[9])


@nb.njit(cache=True)
def _conditional_modes(assign, seq, arity, around, tab):
    """Move each variable of ``seq`` to the value that maximises the tables
    around it, the others fixed, until no variable moves."""
    n = assign.shape[0]
    movable = np.zeros(n, dtype=np.bool_)
    movable[seq] = True
    queue = np.empty(n, dtype=np.int64)
    queue[:seq.shape[0]] = seq
    _modes_from(assign, queue, seq.shape[0], movable.copy(), movable, arity, around, tab)


@nb.njit(cache=True)
def _iterated_modes(best, scalars, seq, arity, around, tab, count, kicks, seed):
    """The kicks of :meth:`_Kernel.local_search`, each from the incumbent ``best``
    (value ``scalars[0]``), polished from the first by conditional modes so that
    a kick need only revisit the variables it moved and their neighbours."""
    np.random.seed(seed)
    trial = best.copy()
    _conditional_modes(trial, seq, arity, around, tab)
    value = tables_total(trial, count, tab)
    if value >= scalars[0]:
        scalars[0] = value
        best[:] = trial
    n = best.shape[0]
    movable = np.zeros(n, dtype=np.bool_)
    movable[seq] = True
    queued = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    kicked = np.empty(n, dtype=np.int64)
    for _ in range(kicks):
        trial[:] = best
        # a connected set, grown breadth first from a random variable: scattered
        # variables, each held by neighbours that did not move, escaped less
        most = np.random.randint(2, _LOCAL_KICK_MOST + 1)
        kicked[0] = seq[np.random.randint(seq.shape[0])]
        queued[kicked[0]] = True
        size, head = 1, 0
        while head < size and size < most:
            size = _queue_neighbours(kicked[head], kicked, size, queued, movable, around, tab)
            head += 1
        queued[kicked[:size]] = False
        size = min(size, most)
        movable[kicked[:size]] = False
        change = 0.0
        for x in kicked[:size]:
            before = tables_sum(around, x, trial, tab)
            trial[x] = np.random.randint(arity[x])
            change += tables_sum(around, x, trial, tab) - before
        # the kicked variables are held while their neighbours adapt, and then
        # released: polished at once, they would only go back to the incumbent
        around_kick = 0
        for x in kicked[:size]:
            around_kick = _queue_neighbours(x, queue, around_kick, queued, movable, around, tab)
        change += _modes_from(trial, queue, around_kick, queued, movable, arity, around, tab)
        movable[kicked[:size]] = True
        queue[:size] = kicked[:size]
        queued[kicked[:size]] = True
        change += _modes_from(trial, queue, size, queued, movable, arity, around, tab)
        # the running change decides whether the total is worth summing; a
        # table of zeros makes it meaningless, and then the total decides
        if np.isfinite(change) and change < -1e-9 * max(1.0, abs(scalars[0])):
            continue
        value = tables_total(trial, count, tab)
        # an equal value is taken too: the next kicks start from elsewhere on
        # the plateau, as the wcsp instances' many ties need
        if value >= scalars[0]:
            scalars[0] = value
            best[:] = trial


@nb.njit(cache=True)
def _queue_neighbours(x, queue, end, queued, movable, around, tab):
    """Append the movable neighbours of ``x`` not yet ``queued`` to the circular
    ``queue`` from position ``end``, marking them; the new end."""
    var_ptr, var = tab[0], tab[1]
    ptr, ids = around
    for j in range(ptr[x], ptr[x + 1]):
        for k in range(var_ptr[ids[j]], var_ptr[ids[j] + 1]):
            y = var[k]
            if movable[y] and not queued[y]:
                queued[y] = True
                queue[end % queue.shape[0]] = y
                end += 1
    return end


@nb.njit(cache=True)
def _modes_from(assign, queue, size, queued, movable, arity, around, tab):
    """Conditional modes on the variables of ``queue[:size]`` (marked in ``queued``)
    and then on the neighbours of each that moves; the change in value."""
    n, head, change = queue.shape[0], 0, 0.0
    while size > 0:
        x = queue[head]
        head = (head + 1) % n
        size -= 1
        queued[x] = False
        now = assign[x]
        now_value = tables_sum(around, x, assign, tab)
        best, best_value = now, now_value
        for a in range(arity[x]):
            if a == now:
                continue
            assign[x] = a
            score = tables_sum(around, x, assign, tab)
            # strictly better, beyond rounding, so that it cannot cycle
            if score > best_value and (best_value == -np.inf or score - best_value
                                       > 1e-12 * max(1.0, abs(best_value))):
                best, best_value = a, score
        assign[x] = best
        if best == now:
            continue
        change += best_value - now_value
        size = _queue_neighbours(x, queue, head + size, queued, movable, around, tab) - head
    return change


@nb.njit(cache=True)
def _hybrid_search(seq, arity, add_ptr, add_ids, sub_ptr, sub_ids, tab, cand_val, cand_f,
                   cand_n, cand_next, f_at, assign, best, state, scalars, node_parent,
                   node_value, node_depth, node_f, node_tested, heap_f, heap_d, heap_node, lp,
                   budget):
    """Hybrid best-first search from the saved state for ``budget`` expansions;
    returns how many it made and leaves ``state[1] = 1`` when nothing is open.

    An open node popped for the first time is bounded by MPLP on the tables
    conditioned on its prefix (``lp``: see :class:`_Kernel`): refuted, it is
    dropped; bounded below its heuristic value, it goes back to the heap with
    that bound.  A dive caps every value below it at its node's bound
    (``scalars[1]``), so the nodes it parks keep what MPLP proved.  A test ends
    the call: it costs as much as a budget of expansions.
    """
    fixed, originals, stride, offset, size, work, inc_ptr, inc_table, inc_slot, sweeps, _ = lp
    m = seq.shape[0]
    d, diving, bottom, root = state[0], state[2] == 1, state[3], state[4]
    nodes, heap_n, backtracks, limit = state[5], state[6], state[7], state[8]
    capacity = node_depth.shape[0]
    top = cand_val.shape[1]
    done = 0
    while done < budget:
        if not diving:                                # dive from the best open node
            if heap_n == 0 or not -heap_f[0] > scalars[0]:
                state[1] = 1
                heap_n = 0
                break
            minus_f, root, heap_n = heap_pop(heap_f, heap_d, heap_node, heap_n)
            d = node_depth[root]
            j = root
            while node_depth[j] > 0:
                assign[seq[node_depth[j] - 1]] = node_value[j]
                j = node_parent[j]
            if d > 0 and sweeps > 0 and not node_tested[root] and state[11] > 0:
                state[11] -= 1
            elif d > 0 and sweeps > 0 and not node_tested[root]:
                node_tested[root] = True
                fixed[seq[:d]] = True
                floor = scalars[0] - slack(scalars[0])
                lp_bound = conditioned_bound(fixed, assign, originals, stride, offset, size,
                                             tab[4], work, arity, inc_ptr, inc_table, inc_slot,
                                             sweeps, floor)
                state[9] += 1
                done = budget
                if lp_bound > floor:
                    if round_into_incumbent(assign, lp, tab, arity, scalars, best):
                        floor = scalars[0] - slack(scalars[0])
                fixed[seq[:d]] = False
                # a test that does not drop its node was mostly wasted: after k such
                # tests in a row, the next 2^k - 1 nodes go untested
                refuted = not lp_bound > floor
                state[10] = 0 if refuted else min(state[10] + 1, _MOST_SKIPPED_DOUBLINGS)
                state[11] = (1 << state[10]) - 1
                if refuted:
                    continue
                if lp_bound < -minus_f:
                    heap_n = heap_push(heap_f, heap_d, heap_node, heap_n, -lp_bound, d, root)
                    continue
            f_at[d] = node_f[root]                  # the heuristic's, which the dive adds to
            scalars[1] = -minus_f
            bottom = d
            backtracks = 0
            diving = True
            if d < m:
                cand_next[d] = -1
            continue
        if d == m:                                   # a complete assignment
            if f_at[m] > scalars[0]:
                scalars[0] = f_at[m]
                best[:] = assign
            d -= 1
            if d < bottom:
                diving = False
            continue
        if cand_next[d] == -1:                       # expand: score each value of seq[d]
            x = seq[d]
            minus = 0.0
            for j in range(sub_ptr[d], sub_ptr[d + 1]):
                minus += table_value(sub_ids[j], assign, tab)
            for a in range(arity[x]):
                assign[x] = a
                f = f_at[d] - minus
                for j in range(add_ptr[d], add_ptr[d + 1]):
                    f += table_value(add_ids[j], assign, tab)
                cand_val[d, a] = a
                cand_f[d, a] = f
            k = arity[x]
            sort_best_first(cand_f, cand_val, d, k)
            cand_n[d] = k
            cand_next[d] = 0
            done += 1
        k = cand_next[d]
        if k < cand_n[d] and not min(cand_f[d, k], scalars[1]) > scalars[0]:
            k = cand_n[d]                            # sorted: the rest cannot beat it either
        if k >= cand_n[d]:
            cand_next[d] = -1
            d -= 1
            if d < bottom:
                diving = False
                continue
            backtracks += 1
            if backtracks >= limit and nodes + (d - bottom + 1) * (top + 1) <= capacity:
                # park what this dive left open as nodes, the path's prefixes as
                # their parents, and dive next from the best open node
                parent = root
                for j in range(bottom, d + 1):
                    for q in range(cand_next[j], cand_n[j]):
                        f = min(cand_f[j, q], scalars[1])
                        if f > scalars[0]:
                            _new_node(nodes, parent, cand_val[j, q], j + 1, cand_f[j, q],
                                      node_parent, node_value, node_depth, node_f, node_tested)
                            heap_n = heap_push(heap_f, heap_d, heap_node, heap_n, -f, j + 1,
                                               nodes)
                            nodes += 1
                    if j < d:
                        _new_node(nodes, parent, assign[seq[j]], j + 1, f_at[j + 1],
                                  node_parent, node_value, node_depth, node_f, node_tested)
                        parent = nodes
                        nodes += 1
                    cand_next[j] = -1
                diving = False
            continue
        assign[seq[d]] = cand_val[d, k]
        cand_next[d] = k + 1
        f_at[d + 1] = cand_f[d, k]
        d += 1
        if d < m:
            cand_next[d] = -1
    state[0], state[2], state[3], state[4] = d, 1 if diving else 0, bottom, root
    state[5], state[6], state[7] = nodes, heap_n, backtracks
    return done


@nb.njit(cache=True)
def _new_node(k, parent, value, depth, f, node_parent, node_value, node_depth, node_f,
              node_tested):
    """Open-node entry ``k``: ``value`` of the variable at ``depth`` below ``parent``,
    of heuristic value ``f``."""
    node_parent[k] = parent
    node_value[k] = value
    node_depth[k] = depth
    node_f[k] = f
    node_tested[k] = False


def with_likelihoods(model, soft_evidence) -> FactorModel:
    """``model`` as a factor model with a factor of likelihood weights per
    variable of ``soft_evidence`` (a virtual child observed)."""
    model = as_factor_model(model)
    if not soft_evidence:
        return model
    return _with_factors(model, [Factor((v,), w)
                                 for v, w in likelihoods(model, soft_evidence).items()])


def _with_factors(model, extra) -> FactorModel:
    """Factor model ``model`` with the factors ``extra`` multiplied in."""
    return FactorModel(model.variables, {v: model.states(v) for v in model.variables},
                       list(model.factors) + extra, name=model.name)


def _cache_entries(max_memory_gb, time_limit):
    """Cache entries for the AND/OR search: a quarter of the memory budget, and no
    more than it can fill (a bound per node at most) in the time given."""
    return int(min(max_memory_gb / 4 * 2**30 / 8, _NODES_PER_SECOND * time_limit))


def most_probable_explanation(model, evidence=None, *, soft_evidence=None,
                              max_memory_gb: float = 4.0, time_limit: float = 60.0,
                              progress: bool = False) -> MPEResult:
    """The MPE by the method that fits: the junction tree when its tables fit
    ``max_memory_gb`` and can be filled within ``time_limit`` (exact, fastest), else
    AND/OR branch and bound with the largest
    i-bound whose mini-bucket messages take at most a quarter of the budget and
    about a quarter of ``time_limit`` to compute.
    ``method`` in the result says which ran.  ``soft_evidence`` (likelihood
    weights per state, as in :meth:`JunctionTree.posteriors`) multiplies the
    weights of each variable's state into the value maximised.

    >>> from twlib.datasets import load_network
    >>> res = most_probable_explanation(load_network("asia"), {"dysp": "yes"})
    >>> res.method, res.status, res.assignment["bronc"]
    ('junction tree', 'optimal', 'yes')
    """
    clock.check_time_limit(time_limit)
    model = with_likelihoods(model, soft_evidence)
    check_memory_budget(max_memory_gb)
    # the tree's budget: the memory given, and what can be filled within the time limit
    tree_gb = min(max_memory_gb, 8 * _TREE_ENTRIES_PER_SECOND * time_limit / 2**30)
    # the restarts that look for a smaller tree get a twentieth of the time: they
    # decide whether the tree fits, and are lost time when it does not (and not
    # tried when the greedy orders miss the budget by orders of magnitude)
    tree_order = elimination_order(model.interaction_graph(), "auto",
                                   weights={v: model.arity(v) for v in model.variables},
                                   time_limit=time_limit / 20,
                                   stop_above=_FAR_OVER * tree_gb * 2**30 / 8)
    try:
        tree = JunctionTree(model, order=tree_order, max_memory_gb=tree_gb)
    except MemoryBudgetExceeded:
        tree = None
    if tree is not None:
        return _by_tree(tree, model, evidence, lambda row: model.log_values([row])[0])
    return branch_and_bound_mpe(model, evidence, i_bound="auto", time_limit=time_limit,
                                max_memory_gb=max_memory_gb, progress=progress)
