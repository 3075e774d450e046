"""The MPE drivers: one evidence set by the search portfolio, or many by a prepared search.

:func:`branch_and_bound_mpe` answers one evidence set past the junction tree.
It maximises out the variables of at most two neighbours exactly
(:mod:`twlib.inference.presolve`), then shifts the tables left by MPLP
(:mod:`twlib.inference.cost_shifting`), which may close the LP at the root
and prove its rounding optimal with no search, in turns of doubling length
with the propagation search
(:mod:`twlib.inference.propagation`), since what that search proves needs no
messages and a tighter LP lets it prove more (a turn of it that finds no
assignment of non-zero probability hands the tables' zeros to a SAT solver,
:mod:`twlib.inference.zeros`); then the mini-bucket messages
are computed (:mod:`twlib.inference.minibucket`, at the largest affordable
i-bound where a small pass shows they tighten the LP: :func:`paying_mini_buckets`) and the
portfolio of engines (:mod:`twlib.inference.portfolio`) takes turns on one
incumbent until one proves it, anytime: at any moment it holds an incumbent
and a proved upper bound.

:class:`MPESearch` prepares the same search once, without evidence, for many
evidence sets of a few observed variables each, and can fall back on a
junction tree.  The clock (:mod:`twlib.clock`: compiling does not count) and
Ctrl-C are checked between budgets of work.  Which method a user's query
reaches first is decided in :mod:`twlib.inference.routing`.
"""
from __future__ import annotations

import numpy as np

from .. import clock
from ..errors import BudgetExceeded, InputError, ZeroEvidenceError
from ..factors import Factor, FactorModel, as_factor_model
from .cost_shifting import MPLP_TOL, converged, mplp_in_place, unflattened
from .costs import SEARCH_SHARE_OF_TREE, check_memory_budget
from .evidence import evidence_indices, likelihoods
from .flat import flat_tables, tables_total
from .kernels import flat_factors, log_values
from .minibucket import (ShiftedTables, affordable_i_bound, check_i_bound, mini_buckets,
                         shifted_tables)
from .portfolio import PROPAGATION_NODES, Portfolio
from .presolve import presolved
from .propagation import PropagationSearch
from .results import MPEResult
from .zeros import ZeroClauses

__all__ = ["MPESearch", "ShiftAndProbe", "branch_and_bound_mpe", "mpe_by_tree",
           "paying_mini_buckets", "with_likelihoods"]

# MPLP and the propagation search take turns before any mini-bucket is computed,
# the first turn this long (seconds) and each next one twice as long: an
# instance that a little MPLP lets the search prove costs about what it needs,
# and one that needs more gets it.  Without MPLP the search alone has this
# share of the time limit.
_FIRST_TURN = 0.01
_PROBE_SHARE = 0.025
# the least a SAT solver gets to find a first assignment, when a turn of the
# search found none: building its clauses alone takes tens of milliseconds
_SAT_SECONDS = 0.2
# The share of the gap between the LP bound and the propagation search's
# proved bound that a tighter bound must close to be worth computing (_pays):
# another turn of MPLP (ShiftAndProbe.run), a larger i-bound (paying_mini_buckets)
_LP_GAIN_WORTH = 0.01
# The share of the gap between MPLP's bound and the incumbent that a step of it
# closes, if that is less than its tolerance, to go on (ShiftAndProbe._tol)
_GAP_CLOSED = 0.01
# The i-bound of the pass that tells whether a larger one would pay
# (see paying_mini_buckets): a pass this small costs little
_SMALL_I_BOUND = 4


def branch_and_bound_mpe(model, evidence=None, *, i_bound: int | str = 10,
                         time_limit: float = 60.0, order=None, max_memory_gb: float = 4.0,
                         mplp_time_limit: float | None = None, propagation: bool = True,
                         presolve: bool = True, progress: bool = False,
                         head_start: "ShiftAndProbe | None" = None) -> MPEResult:
    """The MPE by branch and bound guided by MBE(``i_bound``) (hybrid best-first).

    With ``presolve``, the variables with at most two neighbours once the
    evidence is set are first maximised out exactly
    (:mod:`twlib.inference.presolve`), and everything below runs on the
    variables left; ``stats["eliminated"]`` says how many went.

    ``i_bound="auto"`` takes the largest whose messages fit a quarter of
    ``max_memory_gb`` and about a quarter of ``time_limit``, sized only when
    the mini-buckets are needed.

    The tables are first reparameterised by MPLP for at most ``mplp_time_limit``
    in all (default a tenth of ``time_limit``; 0 turns it off), which tightens
    the mini-bucket heuristic and removes the values that the zeros rule out;
    it stops early when the assignment of largest beliefs reaches its bound,
    which proves that assignment optimal with no search, or when it stops
    improving.  MPLP takes turns with the propagation search
    (:mod:`twlib.inference.propagation`), each turn twice as long as the one
    before, for at most a fortieth of the limit more in all, since what that
    search proves needs no messages and a tighter LP lets it prove more.  If it has
    not proved the answer, the mini-buckets are computed and it takes turns
    with the other searches; ``propagation=False`` leaves it out.
    ``head_start`` is a :class:`ShiftAndProbe` of the same model and evidence
    that has had turns already (without ``presolve``): they go on from there.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree
    >>> net = load_network("alarm")
    >>> res = branch_and_bound_mpe(net, {"HR": "HIGH"}, i_bound=3)
    >>> res.status, round(res.log_value - JunctionTree(net).mpe({"HR": "HIGH"}).log_value, 9)
    ('optimal', 0.0)
    """
    clock.check_time_limit(time_limit)
    if i_bound != "auto":
        check_i_bound(i_bound)
    check_memory_budget(max_memory_gb)
    model = as_factor_model(model)
    started = clock.now()
    options = {"i_bound": i_bound, "max_memory_gb": max_memory_gb,
               "mplp_time_limit": mplp_time_limit, "propagation": propagation,
               "progress": progress}
    if head_start is not None and (presolve or not propagation):
        raise InputError("head_start goes on with the propagation search on the model as "
                         "given: pass presolve=False and propagation=True with it")
    if not presolve:
        return _searched(model, evidence, time_limit=time_limit, order=order,
                         head_start=head_start, **options)

    def search(reduced, reduced_evidence, constant):
        kept = set(reduced.variables)
        # names unknown to the model go on, to be reported
        given = None if order is None else [v for v in order
                                            if v in kept or v not in model.variables]
        return _searched(reduced, reduced_evidence, order=given, **options, constant=constant,
                         time_limit=max(time_limit - (clock.now() - started), 1e-3))

    return presolved(model, evidence, search)


def _searched(model, evidence, *, i_bound, time_limit, order, max_memory_gb, mplp_time_limit,
              propagation, progress, head_start=None, constant=0.0) -> MPEResult:
    """:func:`branch_and_bound_mpe` of ``model`` as given (no presolve), whose
    tables leave out the log value ``constant`` (a head start's own)."""
    compiled = clock.compile_seconds()
    started = clock.now()
    if head_start is not None:
        # its turns' history counts from its start, and so does this search's
        time_limit += started - head_start.started
        started = head_start.started

    def log_value(states):
        return model.log_values([states])[0]

    mplp_cap = time_limit / 10 if mplp_time_limit is None else mplp_time_limit
    if propagation:
        turns = head_start or ShiftAndProbe(model, evidence, order=order,
                                            max_memory_gb=max_memory_gb, constant=constant)
        constant = turns.constant
        # MPLP for mplp_cap in all, the search alone for a fortieth of the limit more
        turns.run(mplp_cap, clock.now() + max(mplp_cap - turns.mplp_spent, 0.0)
                  + _PROBE_SHARE * time_limit)
        shifted, probe, probe_spent = turns.finish(), turns.probe, turns.probe_spent
        history, status, satisfied = turns.history, turns.status, turns.satisfied
    else:
        shifted = shifted_tables(model, evidence, order=order, mplp_time_limit=mplp_cap)
        probe, probe_spent, history, status, satisfied = None, 0.0, [], None, False
    probe_seconds = clock.now() - started
    if shifted.closed is not None:                   # MPLP's LP is tight: nothing to search
        result = MPEResult.of_search(
            model, shifted.closed.copy(), float(shifted.lp_bounds[-1]), shifted.evidence,
            log_value, "optimal", float(shifted.lp_bounds[-1]), time_limit, "MPLP, tight",
            history, started, {"nodes": 0, "mplp_bounds": shifted.lp_bounds[[0, -1]].tolist()})
        heuristic_seconds = probe_seconds
    elif status is not None:
        result = MPEResult.of_search(
            model, probe.best.copy(), probe.incumbent, shifted.evidence, log_value, status,
            probe.bound(), time_limit, "branch and bound with propagation, MPLP"
            + (", first assignment by SAT" if satisfied else ""), history,
            started, {"nodes": probe.work_done, "propagation_nodes": probe.work_done,
                      "heuristic_bound": float(shifted.lp_bounds[-1]),
                      "mplp_bounds": shifted.lp_bounds[[0, -1]].tolist()})
        heuristic_seconds = probe_seconds
    else:
        if i_bound == "auto":
            mb = paying_mini_buckets(model, evidence, shifted,
                                     np.inf if probe is None else probe.bound(),
                                     max_memory_gb=max_memory_gb, time_limit=time_limit)
        else:
            mb = mini_buckets(model, i_bound, evidence, task="max", shifted=shifted,
                              max_memory_gb=max_memory_gb)
        heuristic_seconds = clock.now() - started
        solver = Portfolio(mb, max_memory_gb)
        result = solver.solve(model, mb.evidence, log_value, started=started,
                              time_limit=time_limit, progress=progress, probe=probe,
                              probe_spent=probe_spent, history=history, constant=constant)
    result.stats.update(seconds=clock.now() - started, heuristic_seconds=heuristic_seconds,
                        compile_seconds=clock.compile_seconds() - compiled,
                        sat_assignment=satisfied)
    return result


def paying_mini_buckets(model, evidence, shifted, proved, *, max_memory_gb: float = 4.0,
                        time_limit: float = 60.0):
    """The mini-buckets of the largest i-bound that fits a quarter of
    ``max_memory_gb`` and of ``time_limit``, over ``shifted`` (the model's
    :func:`~twlib.inference.minibucket.shifted_tables` with the evidence),
    unless MBE(4) tightens the LP bound by less than a hundredth of what a
    search has proved past it (``proved``): then MBE(4).

    The mini-buckets tighten the LP where the shifted tables disagree over
    groups of variables, and a small pass tells whether they do.  On the UAI
    2014 MAP models, MBE(4) gained next to nothing on the LP only on wcsp_14
    and wcsp_15, and there the largest affordable i-bound gained nothing
    either (it took 0.2-1 s); wherever MBE(4) gained, the larger i-bound
    gained more.

    >>> from twlib.datasets import load_network
    >>> from twlib.factors import as_factor_model
    >>> model = as_factor_model(load_network("alarm"))
    >>> shifted = shifted_tables(model, {"HR": "HIGH"}, mplp_time_limit=0.1)
    >>> paying_mini_buckets(model, {"HR": "HIGH"}, shifted, -np.inf).i_bound
    4
    >>> paying_mini_buckets(model, {"HR": "HIGH"}, shifted, np.inf).i_bound > 4
    True
    """
    i_bound = affordable_i_bound(model, evidence, max_memory_gb / 4, time_limit / 4,
                                 order=[model.variables[k] for k in shifted.order])
    lp = shifted.lp_bounds[-1]
    if i_bound > _SMALL_I_BOUND and np.isfinite(lp):
        small = mini_buckets(model, _SMALL_I_BOUND, evidence, task="max", shifted=shifted,
                             max_memory_gb=max_memory_gb)
        if not _pays(lp - small.bound, lp, proved):
            return small
    return mini_buckets(model, i_bound, evidence, task="max", shifted=shifted,
                        max_memory_gb=max_memory_gb)


def _pays(gain, lp, proved) -> bool:
    """Whether tightening the LP bound ``lp`` by ``gain`` is worth its time: it
    must close at least ``_LP_GAIN_WORTH`` of what a search has proved past
    ``lp`` (its bound ``proved``)."""
    return not gain < _LP_GAIN_WORTH * (lp - proved)


class ShiftAndProbe:
    """MPLP and the propagation search in turns on one model and evidence,
    before any mini-bucket is computed (see :func:`branch_and_bound_mpe`).  It
    can stop between turns and go on later: a caller gives it a first turn,
    decides what else to try, and hands it to :func:`branch_and_bound_mpe`
    (``head_start=``), which goes on from where it stopped.  The search's undo
    trail takes at most an eighth of ``max_memory_gb``.  ``constant`` is the log
    value the model's tables leave out (a presolved model's): MPLP and the
    search prove their answer within a share of its value with it
    (:func:`~twlib.inference.flat.slack`).  While the search has
    no assignment of non-zero probability, each of its turns is followed by
    one of a SAT solver on the tables' zeros (:mod:`twlib.inference.zeros`),
    whose assignment becomes the incumbent (``satisfied``).

    >>> from twlib.datasets import load_network
    >>> from twlib.factors import as_factor_model
    >>> model = as_factor_model(load_network("alarm"))
    >>> turns = ShiftAndProbe(model, {"HR": "HIGH"})
    >>> turns.run(mplp_cap=1.0, until=clock.now() + 10).ended
    True
    >>> branch_and_bound_mpe(model, {"HR": "HIGH"}, presolve=False, head_start=turns).status
    'optimal'
    """

    def __init__(self, model, evidence=None, *, order=None, max_memory_gb: float = 4.0,
                 constant: float = 0.0):
        self.started = clock.now()
        self.constant = constant
        model = as_factor_model(model)
        # the turns shift and search one flat copy, made into tables again at the
        # end if a search goes on; a presolved model comes with its copy made
        if model.flat_logs is not None and not evidence and order is None:
            self.tab = model.flat_logs[:4] + (model.flat_logs[4].copy(),)
            self.shifted = ShiftedTables(
                tables=None, arity=np.array([model.arity(v) for v in model.variables]),
                evidence={}, lp_bounds=np.array([np.inf]))
        else:
            self.shifted = shifted_tables(model, evidence, order=order, mplp_time_limit=0)
            self.tab = flat_tables(self.shifted.tables)
        # one incumbent for every turn's search: shifting leaves each assignment's value
        self._scalars = np.array([-np.inf])
        self._best = np.zeros(len(self.shifted.arity), dtype=np.int64)
        self._trail = max_memory_gb * 2**30 / 8
        self.bounds, self.history = [], []
        self.mplp_spent = 0.0
        # the turns' search (None when MPLP closed the bound), which rereads the
        # tables as MPLP left them at each turn, its seconds in all, and the
        # status that ended the run ("optimal", "interrupted") or None
        self.probe, self.probe_spent, self.status = None, 0.0, None
        self._turn, self._last = _FIRST_TURN, False
        # the zeros as clauses, built once a turn of the search finds no
        # assignment of non-zero probability; whether they gave the incumbent
        self._zeros, self.satisfied = None, False

    @property
    def ended(self) -> bool:
        """Whether the turns answered the query (MPLP closed the bound, or the
        search proved its incumbent or was interrupted)."""
        return self.shifted.closed is not None or self.status is not None

    def run(self, mplp_cap: float, until: float, *,
            turns: int | None = None) -> "ShiftAndProbe":
        """Turns, each twice as long as the one before, until clock time
        ``until``, ``turns`` more of them, or an end: the query answered, MPLP
        converged, past ``mplp_cap`` seconds in all (0: no MPLP, one search
        until ``until``) or tightening its bound by less than the search proves
        past it, or the search stalled.  Returns itself."""
        while not (self.ended or self._last or clock.expired(until)) and turns != 0:
            self._last, tightened = True, np.inf
            if self.mplp_spent < mplp_cap:
                begun, tol = clock.now(), self._tol()
                more, self.shifted.closed = mplp_in_place(
                    self.tab, self.shifted.arity, decode=True, constant=self.constant, tol=tol,
                    time_limit=min(self._turn, mplp_cap - self.mplp_spent, until - begun))
                self.mplp_spent += clock.now() - begun
                self.bounds.extend(more[1:] if self.bounds else more)
                if self.shifted.closed is not None:
                    self.probe = None
                    break
                # against the gap as the step left it
                self._last = converged(more, self._tol()) or self.mplp_spent >= mplp_cap
                tightened = more[0] - more[-1]
            if self.probe is None:
                self.probe = PropagationSearch(self.tab, len(self.tab[0]) - 1,
                                               self.shifted.arity, self._scalars, self._best,
                                               trail_bytes=self._trail,
                                               constant=self.constant)
            else:
                self.probe.reread()
            begun = clock.now()
            self.status = _probe_turn(self.probe, min(begun + self._turn, until)
                                      if mplp_cap > 0 else until, self.started, self.history)
            if self.status is None and self.probe.incumbent == -np.inf and self._satisfy(
                    min(max(self._turn, _SAT_SECONDS), max(until - clock.now(), 0.0))):
                self.status = _probe_turn(self.probe, min(clock.now() + self._turn, until),
                                          self.started, self.history)
            self.probe_spent += clock.now() - begun
            # MPLP stops once a turn of it no longer pays: the search closes
            # the gap, not the LP
            self._last = (self._last or self.probe.stalled
                          or not _pays(tightened, self.bounds[-1], self.probe.bound()))
            self._turn *= 2
            turns = None if turns is None else turns - 1
        return self

    def search_until(self, until: float) -> "ShiftAndProbe":
        """The propagation search alone, once the turns have stopped MPLP,
        until clock time ``until`` or an end.  Returns itself."""
        if not self.ended and self.probe is not None and not self.probe.stalled:
            begun = clock.now()
            self.status = _probe_turn(self.probe, until, self.started, self.history)
            self.probe_spent += clock.now() - begun
        return self

    def _tol(self) -> float:
        """MPLP's convergence tolerance (relative, see :func:`converged`): its
        default, or a step that closes ``_GAP_CLOSED`` of the gap between its
        bound and the incumbent if that is smaller.  On a tight LP, MPLP nears
        the optimum by a steady share of that gap, slowly, and goes on until it
        closes it."""
        tol = MPLP_TOL
        if self.bounds and np.isfinite(self._scalars[0]):
            gap = self.bounds[-1] - self._scalars[0]
            tol = min(tol, _GAP_CLOSED * gap / max(1.0, abs(self.bounds[-1])))
        return tol

    def _satisfy(self, time_limit: float) -> bool:
        """Ask a SAT solver for an assignment that avoids every zero
        (:class:`~twlib.inference.zeros.ZeroClauses`), for ``time_limit``
        seconds; it becomes the incumbent.  Whether it found one."""
        if self._zeros is None:
            self._zeros = ZeroClauses(self.tab, self.probe.count, self.shifted.arity)
        states = self._zeros.solve(time_limit)
        if states is None:
            return False
        self._scalars[0] = tables_total(states, self.probe.count, self.tab)
        self._best[:] = states
        self.satisfied = True
        self._zeros.close()
        self.history.append((clock.now() - self.started, self._scalars[0], self.probe.bound()))
        return True

    def finish(self):
        """The shifted tables with the bounds MPLP proved; their tables are
        made from the flat copy as MPLP left it only if the turns have not
        answered (a search that goes on needs them, an answer does not: its
        ``tables`` may then be None)."""
        if self.bounds:
            self.shifted.lp_bounds = np.array(self.bounds)
        if not self.ended and (self.bounds or self.shifted.tables is None):
            self.shifted.tables = unflattened(self.tab, self.shifted.arity)
        return self.shifted


def _probe_turn(probe, end, started, history):
    """The propagation search ``probe`` run until clock time ``end``, its new
    incumbents appended to ``history``: ``"optimal"`` or ``"interrupted"`` if
    that ended the run, else None."""
    nodes = 1
    with clock.interruptible():
        while not probe.finished and not probe.stalled and not clock.expired(end):
            before, begun = probe.incumbent, clock.now()
            expanded = probe.run(nodes)
            # next, the nodes that take a quarter of what is left of the turn at
            # the rate just seen: on dense tables one node rescans thousands of
            # entries, and a fixed number of them would overrun short turns
            rate = expanded / max(clock.now() - begun, 1e-6)
            nodes = int(min(PROPAGATION_NODES, max(1, rate * (end - clock.now()) / 4)))
            if probe.incumbent > before:
                history.append((clock.now() - started, probe.incumbent, probe.bound()))
            if clock.interrupted():
                return "interrupted"
    return "optimal" if probe.finished else None


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
    :func:`branch_and_bound_mpe`; MPLP runs for at most ``mplp_time_limit``.

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
    >>> res.status, round(res.log_value - JunctionTree(net).mpe({"HR": "HIGH"}).log_value, 9)
    ('optimal', 0.0)
    """

    def __init__(self, model, *, i_bound: int = 10, order=None, max_memory_gb: float = 4.0,
                 mplp_time_limit: float = 1.0):
        model = as_factor_model(model)
        slots = [Factor((v,), np.ones(model.arity(v))) for v in model.variables]
        self.model = model
        self._index = {v: k for k, v in enumerate(model.variables)}
        started = clock.now()
        try:
            mb = mini_buckets(_with_factors(model, slots), i_bound, None, task="max",
                              order=order, max_memory_gb=max_memory_gb,
                              mplp_time_limit=mplp_time_limit)
        except ZeroEvidenceError:
            raise ZeroEvidenceError("every assignment of the model has probability zero"
                                    ) from None
        self._solver = Portfolio(mb, max_memory_gb, lp=False)
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
        >>> from twlib.inference import JunctionTree
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
            time_limit = min(time_limit, SEARCH_SHARE_OF_TREE * self._tree_seconds)
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
        result = mpe_by_tree(tree, self.model, evidence, self._log_value)
        self._tree_seconds = result.stats["seconds"]
        return result


def mpe_by_tree(tree, model, evidence, log_value) -> MPEResult:
    """The MPE by junction tree ``tree`` of ``model``, its value ``log_value(row)``
    (unnormalised, as the search's)."""
    started = clock.now()
    assignment = tree.mpe(evidence, method="junction tree").assignment
    seconds = clock.now() - started
    row = np.array([model.states(v).index(assignment[v]) for v in model.variables])
    return MPEResult.exact(assignment, log_value(row), "junction tree", seconds=seconds,
                           width=tree.width)


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
