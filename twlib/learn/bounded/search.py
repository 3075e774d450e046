"""Iterated local search: climb, polish by exact windows, restart from the best
network with a share of its arcs removed, until the time limit.

Restarts run in this process or one per worker of an executor (see
:mod:`twlib.parallel`); each draws its own random stream, so the outcome does
not depend on where it ran.
"""
from __future__ import annotations

import uuid

import numpy as np

from ... import clock
from ...parallel import run_tasks
from ...scores import FamilyScorer
from .state import EPS, SearchState
from .windows import improve_window


class RunLog:
    """The run's clock: a best-score ``history`` against seconds and ``phases``
    (seconds per step of the run)."""

    def __init__(self, time_limit: float):
        self.started = self._clock = clock.now()
        self.deadline = self.started + time_limit
        self.history: list = []
        self.phases: dict = {}

    def elapsed(self) -> float:
        return clock.now() - self.started

    def note(self, event: str, value: float) -> None:
        self.history.append({"event": event, "score": value, "seconds": self.elapsed()})

    def checkpoint(self, state) -> None:
        """Record a long climb's progress (at most once a second) when it leads."""
        if (state.score > self.history[-1]["score"]
                and self.elapsed() - self.history[-1]["seconds"] >= 1.0):
            self.note("climbing", state.score)

    def phase_ends(self, name: str) -> None:
        now = clock.now()
        self.phases[name] = now - self._clock
        self._clock = now


def no_checks() -> dict:
    """Counts of width checks: by the certificate order, by min-fill, refused."""
    return {"order": 0, "min_fill": 0, "refused": 0}


def no_tally() -> dict:
    return {"windows": 0, "windows_improved": 0, "window_gain": 0.0, "steps": 0}


def climb_and_polish(state, rng, deadline, window, tally, on_round=None, climb_deadline=None):
    """One hill-climbing run, then local exact windows when ``window > 1``; the
    climb may go on past ``deadline`` to ``climb_deadline`` (never past a stop
    request), the windows may not.  Every applied move leaves a valid state, so
    a climb cut anywhere keeps all it gained."""
    tally["steps"] += state.climb(deadline if climb_deadline is None else climb_deadline,
                                  on_round)
    if window > 1:
        state = _polish(state, min(window, state.n), rng, deadline, tally)
    return state


def climb_race(states: dict, rng, log: RunLog, seconds, window, tally):
    """Climb from each of the named ``states`` for at most ``seconds``, one after
    another; returns the best state reached and each one's score."""
    reached = {}
    for name, state in states.items():
        deadline = min(log.deadline, clock.now() + seconds)
        reached[name] = climb_and_polish(state, rng, deadline, window, tally, log.checkpoint)
    winner = max(reached, key=lambda name: reached[name].score)
    return reached[winner], {name: state.score for name, state in reached.items()}


def iterated_local_search(state: SearchState, log: RunLog, rng, *, bound, max_iter,
                          batch, perturbation, window, executor, shared, tally, checks,
                          bar=None):
    """Restart from the best network until the bound is met, the deadline passes or
    ``max_iter`` runs are done (``state`` is the first run's result); the restarts'
    window tally and width checks are added to ``tally`` and ``checks``.

    Returns the best snapshot, its status and the run count."""
    best, best_state, runs = state.snapshot(), state, 1
    token = uuid.uuid4().hex
    while True:
        if bar is not None:
            bar.update(min(log.elapsed(), bar.total) - bar.n)
            bar.set_postfix(best=f"{best[2]:.1f}", runs=runs)
        if bound is not None and best[2] >= bound - EPS * max(1.0, abs(bound)):
            status = "optimal"
            break
        if clock.expired(log.deadline):
            status = "time_limit"
            break
        if max_iter is not None and runs >= max_iter:
            status = "complete"
            break
        count = batch if max_iter is None else min(batch, max_iter - runs)
        seeds = rng.integers(2**63, size=count).tolist()
        parents, order, _ = best
        if executor is None:
            outcomes = []
            for seed in seeds:
                seconds = log.deadline - clock.now()
                if seconds <= 0:
                    break
                state, more_tally, more_checks = _restart(best_state, parents, order, seed,
                                                          seconds, perturbation, window)
                outcomes.append((state.snapshot(), more_tally, more_checks, state))
        else:
            seconds = log.deadline - clock.now()
            outcomes = [out + (None,) for out in run_tasks(
                executor, _restart_task, (token, *shared, perturbation, window),
                [(parents, order, seed, seconds) for seed in seeds])]
        for snap, more_tally, more_checks, state in outcomes:
            runs += 1
            for key, value in more_tally.items():
                tally[key] += value
            for key, value in more_checks.items():
                checks[key] += value
            if snap[2] > best[2] + EPS * max(1.0, abs(best[2])):
                best, best_state = snap, state      # (a worker's state stays there: None)
                log.note(f"hill climbing run {runs}", best[2])
    _WORKER_STATE.pop(token, None)     # this process's copy, when the executor was threads
    return best, status, runs


def _polish(state, size, rng, deadline, tally):
    """Local exact windows on a hill-climbing optimum, climbing again after each gain."""
    for _ in range(max(1, state.n // size)):
        if clock.expired(deadline):
            break
        parents, order, _ = state.snapshot()
        new, gain = improve_window(parents, order, state.k, state.scorer, size, rng,
                                   constraints=state.constraints)
        tally["windows"] += 1
        if gain > 0:
            tally["windows_improved"] += 1
            tally["window_gain"] += gain
            state = state.derive(new, order)
            tally["steps"] += state.climb(deadline)
    return state


def _perturbed(parents, share, rng, fixed=None):
    """Parent lists with a random share of the arcs removed (never one ``fixed[v, u]``
    marks as required)."""
    arcs = [(v, u) for v, ps in enumerate(parents) for u in ps
            if fixed is None or not fixed[v, u]]
    drop = set()
    if arcs:
        m = max(1, int(round(share * len(arcs))))
        drop = {arcs[i] for i in rng.choice(len(arcs), size=min(m, len(arcs)), replace=False)}
    return [tuple(u for u in ps if (v, u) not in drop) for v, ps in enumerate(parents)]


def _restart(base, parents, order, seed, seconds, perturbation, window):
    """One restart of the iterated local search, for at most ``seconds``: ``parents``
    with a random share of arcs removed, climbed, then polished by windows.

    ``base`` is any search state over the same scorer (only rows that differ
    are rescored).  Returns the final state, the tally and the width checks."""
    deadline = clock.now() + seconds
    rng = np.random.default_rng(seed)
    tally, checks = no_tally(), no_checks()
    state = base.derive(_perturbed(parents, perturbation, rng, base.fixed), order, checks)
    return climb_and_polish(state, rng, deadline, window, tally), tally, checks


# A worker's search state for the current learn call, by the call's token: built
# by the first restart the worker runs, then only the changed rows are rescored.
# A worker process keeps it until a later call replaces it.
_WORKER_STATE: dict = {}


def _restart_task(shared, parents, order, seed, seconds):
    """:func:`_restart` on an executor's worker; returns the snapshot, not the state."""
    token, data, score, ess, k, constraints, perturbation, window = shared
    base = _WORKER_STATE.get(token)
    if base is None:
        _WORKER_STATE.clear()
        base = _WORKER_STATE[token] = SearchState(FamilyScorer(data, score=score, ess=ess), k,
                                                  parents, order, no_checks(),
                                                  constraints=constraints)
    state, tally, checks = _restart(base, parents, order, seed, seconds, perturbation, window)
    return state.snapshot(), tally, checks

