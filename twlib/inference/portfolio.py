"""The scheduler: the MPE engines take turns by time on one incumbent until one proves it.

Five engines (:mod:`twlib.inference.engine`) search the same shifted tables
and mini-bucket messages and share the incumbent:

* ``"dive"``, hybrid best-first branch and bound on the mini-bucket bounds
  (:mod:`twlib.inference.dive`);
* ``"and/or"``, AND/OR branch and bound with a context cache
  (:mod:`twlib.inference.andor`);
* ``"lp"``, LP-based branch and bound with a dynamic variable order
  (:mod:`twlib.inference.lp_search`);
* ``"propagation"``, depth-first branch and bound that removes values by
  their reduced costs against the incumbent or a target
  (:mod:`twlib.inference.propagation`);
* ``"local"``, iterated local search from the incumbent
  (:mod:`twlib.inference.local_search`).

Their nodes cost very different amounts, so they take turns by the seconds
they have spent divided by their share: the engine furthest behind runs next,
for one budget of work.  The shares are generic rules: the LP and propagation
searches get little time while the root's LP bound is far looser than the gap
left to close, the propagation search nearly all once the bound it proves is
the best, and the local search less after each turn in a row that found nothing.
The run ends when the best bound of any engine meets the incumbent, when an
engine finishes, at the time limit, or on Ctrl-C.
"""
from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from .. import clock
from .andor import AndOrSearch
from .dive import LP_SWEEPS, DiveSearch
from .flat import flat_tables, slack
from .local_search import LocalSearch
from .lp_search import LPSearch
from .results import MPEResult

__all__ = ["Portfolio", "ENGINES"]

ENGINES = ("dive", "and/or", "lp", "propagation", "local")
_NODES_PER_CALL = 20_000
# Nodes of the propagation search per turn: each rescans the tables around a variable
PROPAGATION_NODES = 200
# Seconds between the entries of a result's history that only record a lower bound
_BOUND_EVERY = 0.25
# AND/OR nodes per second, which caps the cache at what a run can fill (at most
# one entry written per node): measured 1.3-1.4 million on Grids_18 and Grids_24
# at MBE(20), fewer where bounds cost more; an unused entry still costs its
# filling, 1.7 s for the 800 MB a rate of 1e7 asked for on Grids_20
_NODES_PER_SECOND = 2e6
# The share of the time of the LP search and of the propagation search (both bound
# by the root's LP) when the root LP bound exceeds the mini-buckets' by more than the
# gap left to close (grids: by 20 %; Promedas: by 1e-4)
_LP_SHARE_LOOSE = 0.05
# The propagation search's share (the others' is 1) once the bound it proves, by
# refuting targets, is the best.  The others then prove only by catching up from
# their heuristic's bound, which on the wcsp instances none of them lowers, so it
# runs nearly alone: the others' turns keep a hundredth each, as a hedge
_PROPAGATION_SHARE_AHEAD = 100.0
# Kicks of the iterated local search per turn.  Its share of the time is 1 (as the
# others') after a turn that raised the incumbent and 1 / (1 + k / 8) after k turns
# in a row that did not: it only raises the incumbent, which a proof near its end
# does not need
_LOCAL_KICKS = 200
# Each engine's budget of work per turn (nodes, LP tests, kicks)
_BUDGETS = {"dive": _NODES_PER_CALL, "and/or": _NODES_PER_CALL // 4, "lp": 1,
            "propagation": PROPAGATION_NODES, "local": _LOCAL_KICKS}


class Portfolio:
    """The engines over mini-buckets ``mb``, taking turns in :meth:`solve`
    until one proves the incumbent they share; all are kept, and reset,
    between runs.  Without ``lp`` there is no LP search, rounding, test of the
    dive's open nodes or local search: a prepared search answers many small
    queries, each in less time than one rounding takes.

    >>> from twlib.datasets import load_network
    >>> from twlib.factors import as_factor_model
    >>> from twlib.inference import mini_buckets
    >>> model = as_factor_model(load_network("asia"))
    >>> mb = mini_buckets(model, 2, {"dysp": "yes"})
    >>> res = Portfolio(mb, 1.0).solve(model, mb.evidence, lambda s: model.log_values([s])[0],
    ...                                started=clock.now(), time_limit=10)
    >>> res.status, res.assignment["bronc"]
    ('optimal', 'yes')
    """

    def __init__(self, mb, max_memory_gb, *, lp: bool = True):
        self.mb = mb
        self.tab = flat_tables(mb.tables)              # shared by the engines
        self.dive = DiveSearch(mb, self.tab, lp_sweeps=LP_SWEEPS if lp else 0)
        self.local = LocalSearch(self.tab, mb.originals, self.dive.seq, mb.arity,
                                 self.dive.scalars, self.dive.best)
        self.use_lp = lp
        # built on their first turn: the dive may end first
        self.andor = self.lp = None
        self.max_memory_gb = max_memory_gb
        self.lp_excess = mb.stats["mplp_bounds"][-1] - mb.constant

    def solve(self, model, evidence, log_value, *, started, time_limit, progress=False,
              probe=None, probe_spent=0.0, history=None, constant: float = 0.0) -> MPEResult:
        """One search, until ``started + time_limit`` (the clock's seconds, from
        which the history counts too); ``evidence`` ({variable index: state}) is
        written into the answer, whose value ``log_value(states)`` recomputes
        from the model (the shifted tables add up to it only up to rounding).
        ``probe`` is a propagation search that has already run on the same
        shifted tables for ``probe_spent`` seconds: it goes on from where it stopped,
        its incumbent the others', after ``history`` (its own).  ``constant``
        is the log value the tables leave out (see :func:`_proved`)."""
        mb, dive, local = self.mb, self.dive, self.local
        dive.reset()
        local.reset()
        # this run's engines, once they have had a turn
        running = {"dive": dive, "and/or": None, "lp": None, "propagation": None,
                   "local": local}
        history = [] if history is None else history
        if probe is not None:
            dive.scalars[0] = probe.incumbent
            dive.best[:] = probe.best
            probe.share(dive.scalars, dive.best)
            running["propagation"] = probe
        bar = tqdm(desc=f"AND/OR branch and bound, MBE({mb.i_bound})", unit="node",
                   disable=not progress)

        def bound():
            """The proved upper bound: the heuristic's at the root, and each
            engine's that has run."""
            return min([mb.bound] + [e.bound() for e in running.values() if e is not None])

        def record(before):
            """After a turn: a better incumbent is polished, given to the AND/OR
            search and written down, and so is a lower bound every so often."""
            if not dive.incumbent > before:
                if history and clock.now() - started - history[-1][0] >= _BOUND_EVERY:
                    now = bound()
                    if now < history[-1][2]:
                        history.append((clock.now() - started, dive.incumbent, now))
                return
            local.polish()
            if running["and/or"] is not None:
                running["and/or"].restart(dive.incumbent)
            history.append((clock.now() - started, dive.incumbent, bound()))
            bar.set_postfix({"log value": f"{dive.incumbent:.4f}",
                             "bound": f"{history[-1][2]:.4f}"}, refresh=False)

        if self.use_lp:
            dive.round_root()
            record(-np.inf)
        status = "optimal"
        spent = dict.fromkeys(ENGINES, 0.0)
        if not self.use_lp:
            spent["lp"] = spent["local"] = np.inf
        spent["propagation"] = np.inf if probe is None else probe_spent
        local_misses = 0
        with clock.interruptible():
            while not dive.finished:
                turn = clock.now()
                share = dict.fromkeys(ENGINES, 1.0)
                share["local"] = 1.0 / (1 + local_misses / 8)
                prop = running["propagation"]
                if self.use_lp and self.lp_excess > bound() - dive.incumbent:
                    share["lp"] = share["propagation"] = _LP_SHARE_LOOSE
                elif prop is not None and prop.bound() <= bound():
                    share["propagation"] = _PROPAGATION_SHARE_AHEAD
                # the local search starts from an incumbent, and without the time
                # the others had before there was one
                ready = [e for e in ENGINES if e != "local"]
                if dive.incumbent > -np.inf and np.isfinite(spent["local"]):
                    ready.append("local")
                elif self.use_lp:
                    spent["local"] = min(spent[e] / share[e] for e in ready)
                name = min(ready, key=lambda e: spent[e] / share[e])
                before = dive.incumbent
                bar.update(self._turn(name, running, started + time_limit - clock.now()))
                if name == "local":
                    local_misses = 0 if dive.incumbent > before else local_misses + 1
                spent[name] += clock.now() - turn
                for e in ("lp", "propagation"):
                    if running[e] is not None and running[e].stalled:
                        spent[e] = np.inf
                record(before)
                if any(e is not None and e.finished for e in running.values()):
                    break
                if _proved(bound(), dive.incumbent, constant):
                    break
                if clock.interrupted():
                    status = "interrupted"
                    break
                if clock.expired(started + time_limit):
                    status = "time_limit"
                    break
        bar.close()
        states, value = dive.best.copy(), dive.incumbent
        andor, lp, prop = running["and/or"], running["lp"], running["propagation"]
        if andor is not None and andor.improved:
            states, value = andor.assign.copy(), andor.value
        return MPEResult.of_search(
            model, states, value, evidence, log_value, status, bound(), time_limit,
            f"AND/OR branch and bound, MBE({mb.i_bound})", history, started,
            {"nodes": dive.work_done + (andor.work_done if andor else 0),
             "and_or_nodes": andor.work_done if andor else 0, "lp_tests": dive.lp_tests,
             "lp_search_nodes": lp.work_done if lp else 0,
             "propagation_nodes": prop.work_done if prop else 0,
             "pseudo_tree_depth": andor.tree.depth if andor else 0,
             "i_bound": int(mb.i_bound), "heuristic_bound": mb.bound, **mb.stats})

    def _turn(self, name, running, seconds_left) -> int:
        """One budget of engine ``name``; the work it did."""
        if running[name] is None:
            running[name] = self._first_turn(name, seconds_left)
        return running[name].run(_BUDGETS[name])

    def _first_turn(self, name, seconds_left):
        """The AND/OR or the LP search, built on its first turn ever (the dive
        may end first) and reset on its first turn of each later run."""
        if name == "and/or":
            if self.andor is None:
                self.andor = AndOrSearch(
                    self.mb, _cache_entries(self.max_memory_gb, seconds_left), tab=self.tab)
            else:
                self.andor.reset()
            self.andor.restart(self.dive.incumbent)
            return self.andor
        if self.lp is None:
            self.lp = LPSearch(self.dive.lp, self.tab, self.mb.arity, self.dive.scalars,
                               self.dive.best, root_bound=self.mb.bound)
        self.lp.reset()
        return self.lp


def _proved(bound, incumbent, constant) -> bool:
    """Whether ``bound`` proves ``incumbent`` optimal, up to a billionth of its
    value with ``constant`` (:func:`~twlib.inference.flat.slack`)."""
    return bool(np.isfinite(incumbent) and bound <= incumbent + slack(incumbent, constant))


def _cache_entries(max_memory_gb, seconds):
    """Cache entries for the AND/OR search: a quarter of the memory budget, and no
    more than it can fill (a bound per node at most) in ``seconds``."""
    return int(min(max_memory_gb / 4 * 2**30 / 8, _NODES_PER_SECOND * max(seconds, 0.0)))
