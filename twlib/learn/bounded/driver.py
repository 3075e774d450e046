"""The driver of :func:`learn`: check the input, pick a start, climb under the
bound with exact windows and restarts, certify and fit the result."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ... import clock
from ...data import Dataset, as_dataset
from ...errors import InputError, InternalError
from ...graphs import elimination_width, moral_graph, treewidth_exact
from ...network import BayesianNetwork
from ...parallel import worker_count
from ...scores import FamilyScorer, ParentSetScores
from ..result import LearnResult, check_time_limit, check_width_bound, relative_gap
from .bounds import upper_bound
from ..ilp.relaxation import lp_bound, scoring_seconds
from .search import (RunLog, climb_and_polish, climb_race, iterated_local_search, no_checks,
                     no_tally)
from .starts import DP_MAX_VARS, exact_start, given_start, ktree_start, prune_to_width
from .state import EPS, SearchState

# Share of the time limit a k-tree start (k-greedy, k-MAX) may take.
GREEDY_SHARE = 0.05
# Share of the time limit each climb of initial="race" may take.
RACE_SHARE = 0.1
INITIALS = ("auto", "empty", "k-greedy", "k-max", "race")
# Share of the time limit the LP bound may take (scoring its parent sets included).
BOUND_SHARE = 0.25
BOUNDS = ("auto", "lp", "data-free")


def _check(data: Dataset, k, time_limit, max_iter):
    n = data.n_vars
    if n < 2:
        raise InputError(f"learning a network needs at least two variables, got {n}")
    check_width_bound(k, n_vars=n)
    check_time_limit(time_limit)
    if max_iter is not None and not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise InputError(f"max_iter (hill-climbing restarts) must be an integer >= 1 or None, "
                         f"got {max_iter!r}")


def learn(data: Dataset | pd.DataFrame, k: int, *, score: str = "bic", ess: float = 1.0,
          parameter_ess: float | None = 1.0, time_limit: float = 60.0,
          max_iter: int | None = None, perturbation: float = 0.25, window: int = 12,
          random_state=None, progress: bool = False, executor=None,
          restarts_per_round: int | None = None, start: dict | None = None,
          initial: str = "auto", bound: str = "auto", knowledge=None) -> LearnResult:
    """Learn a Bayesian network of tree-width at most ``k``: the library's best learner.

    Parameters
    ----------
    data : Dataset, DataFrame, 2-D array or CSV path
        See :func:`twlib.data.as_dataset`.
    k : int
        The tree-width bound, ``1 <= k < n``.
    score, ess : the structure score and its BDeu equivalent sample size.
    parameter_ess : float or None
        CPTs are posterior means under a BDeu prior of this equivalent sample
        size (so held-out log-likelihoods stay finite); None gives maximum
        likelihood.
    time_limit : float
        Seconds of search (:func:`twlib.clock.now`: compiling numba kernels is
        not counted); the best network so far is returned.  The first climb
        runs on to its local optimum past the limit (a short limit on a small
        table must not return the start), but never past the limit plus
        :func:`twlib.clock.overrun_allowance` (a tenth, at least 2 s): on
        thousands of variables it is cut there, keeping every move it made
        (``stats["first_climb_overran"]`` says when it ran past the limit).
        Ctrl-C returns the best network so far with status ``"interrupted"``.
    max_iter : int, optional
        Hill-climbing runs (the first from the start, the others from the best
        network perturbed); None means until ``time_limit``.
    perturbation : float
        Share of the best network's arcs removed before each restart.
    window : int
        Variables per local exact window (0 switches the windows off; at most
        20): after each hill-climbing run, windows re-optimise their families
        exactly with the rest fixed (:func:`twlib.learn.bounded.windows.improve_window`).
    progress : bool
        A tqdm bar over the time budget.
    executor : optional
        Where the parallel parts run (see :mod:`twlib.parallel`): a
        ``concurrent.futures`` executor or a Dask client.  The first rows of
        candidate parents are scored in blocks of variables on its workers,
        and each round of restarts runs one restart per worker.
    restarts_per_round : int, optional
        Restarts from the best network per round, the best of them kept
        (default: one per worker of ``executor``, 1 without).  Each restart
        draws its own random stream from ``random_state``, so a run with an
        executor returns the same network as the in-process run with the same
        ``restarts_per_round``, unless ``time_limit`` cuts one of them short.
    start : dict, optional
        ``{variable: [parents]}``, a structure of tree-width at most ``k`` to
        climb from (structural EM passes its current network) instead of the
        default start: the exact optimum of in-degree ``k`` on small data, else
        the empty graph.
    initial : {"auto", "empty", "k-greedy", "k-max", "race"}
        The start when none is given: ``"auto"`` is the exact optimum of
        in-degree ``k`` pruned to the bound on small data (at most
        :data:`DP_MAX_VARS` variables), else the empty graph; ``"k-greedy"`` and
        ``"k-max"`` the best network of repeated k-greedy or k-MAX runs
        (Scanagatta et al. 2016, 2018; :func:`twlib.learn.bounded.starts.k_greedy`,
        :func:`~twlib.learn.bounded.starts.k_max`) within 5 % of the time;
        ``"race"`` climbs from the empty graph and from the k-MAX start, each for
        at most 10 % of the time, and goes on from the better.  On moviereview
        (1,001 variables) the climb from the empty graph ends higher than the
        climbs from k-tree starts (Chapter 9), hence the default.
    bound : {"auto", "lp", "data-free"}
        Where the proved upper bound comes from.  The exact start's optimum when
        there is one; else ``"lp"`` is the linear relaxation of the integer
        programme over every parent set of at most ``k`` parents
        (:func:`twlib.learn.relaxation.lp_bound`), taking a quarter of
        ``time_limit`` after its parent sets are scored, however long that takes
        (the search has what is left of ``time_limit``);
        ``"auto"`` is ``"lp"`` when the scoring is estimated to fit in a quarter
        of ``time_limit`` (:func:`~twlib.learn.relaxation.scoring_seconds`), else
        ``"data-free"``, the bound of :func:`upper_bound` (BIC and LL only).
        ``stats["bound"]`` names the one used.
    knowledge : :class:`twlib.knowledge.Knowledge`, optional
        Required and forbidden arcs, tiers, roots, leaves and in-degree caps:
        checked against the data and ``k`` first, then the start holds the
        required arcs, no move adds a disallowed arc or removes a required one,
        the exact start, the windows and the LP bound take only the parent
        sets it allows, and the result is checked against it.  Not with the
        k-tree starts (``initial`` ``"k-greedy"``, ``"k-max"``, ``"race"``).

    Returns
    -------
    LearnResult
        ``network``, ``score``, ``width`` (``<= k``), ``elimination_order`` (the
        certificate), ``upper_bound`` (None for BDeu beyond the exact start) and
        ``gap`` (``upper_bound - score`` in percent of ``|score|``), ``status`` (``"optimal"`` when
        the gap closes, else ``"time_limit"``, ``"complete"`` or
        ``"interrupted"``) and ``stats`` with ``compile_seconds`` (spent
        compiling or loading kernels, outside the time limit), ``bound`` (which upper bound: ``"exact start"``, ``"lp"``,
        ``"data-free"`` or None), ``lp`` (the LP bound's rounds, columns, cuts
        and ``history`` when it ran), ``race`` (with ``initial="race"``, the
        score each start's climb reached),
        with ``history`` (best score against seconds), ``phases`` (seconds of the
        start, the candidate rows, the first climb, the upper bound and the
        search), the
        move-check counts and ``families_scored`` (in this process).

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("wine"), k=2, time_limit=5, max_iter=3, random_state=0)
    >>> res.width <= 2, res.upper_bound >= res.score
    (True, True)
    """
    data = as_dataset(data)
    scorer = FamilyScorer(data, score=score, ess=ess)
    _check(data, k, time_limit, max_iter)
    if parameter_ess is not None and not parameter_ess > 0:
        raise InputError(f"parameter_ess must be positive or None, got {parameter_ess!r}")
    if not 0 < perturbation <= 1:
        raise InputError(f"perturbation must be in (0, 1], got {perturbation!r}")
    if initial not in INITIALS:
        raise InputError(f"initial must be one of {INITIALS}, got {initial!r}")
    if bound not in BOUNDS:
        raise InputError(f"bound must be one of {BOUNDS}, got {bound!r}")
    if not (isinstance(window, (int, np.integer)) and 0 <= window <= 20):
        raise InputError(f"window must be an integer from 0 (off) to 20, got {window!r}")
    if knowledge:
        knowledge.validate(data.names, k)
        if initial in ("k-greedy", "k-max", "race"):
            raise InputError(f"initial={initial!r} grows k-trees that ignore background "
                             "knowledge; use initial='auto' or 'empty' with knowledge=")
    else:
        knowledge = None
    batch = worker_count(executor) if restarts_per_round is None else restarts_per_round
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise InputError(f"restarts_per_round must be an integer >= 1 or None, got {batch!r}")
    with clock.interruptible():
        return _learn(data, k, scorer, score, ess, parameter_ess, time_limit, max_iter,
                      perturbation, window, random_state, progress, executor, batch, start,
                      initial, bound, knowledge)


def _learn(data, k, scorer, score, ess, parameter_ess, time_limit, max_iter, perturbation,
           window, random_state, progress, executor, batch, start, initial, bound, knowledge):
    compiled = clock.compile_seconds()
    log = RunLog(time_limit)
    rng = np.random.default_rng(random_state)
    n = data.n_vars

    # 1. The start: the user's network, the exact optimum of in-degree <= k pruned
    #    to the bound (small problems), the best of repeated k-greedy or k-MAX runs
    #    (with "race", k-MAX and the empty graph both), or the empty graph.
    exact = None
    raced = start is None and initial == "race"      # start is rebound below
    constraints = None if knowledge is None else knowledge.parent_filter(list(data.names))
    fixed = None if constraints is None else SearchState.fixed_arcs(constraints)
    if start is None and initial == "auto":
        exact = exact_start(data, k, score, ess, log.deadline, knowledge)
    upper = exact[1] if exact else None
    bound_kind = "exact start" if exact else None
    if knowledge is not None and (start is not None or knowledge.required and not exact):
        start = knowledge.start(data.names, start)
    if start is not None:
        start, order = given_start(data, start, k)
    elif exact:
        log.note("exact optimum, in-degree <= k", exact[1])
        start, order = prune_to_width(exact[0], k, scorer, fixed)
    elif initial in ("k-greedy", "k-max", "race"):
        seconds = min(GREEDY_SHARE * time_limit, log.deadline - clock.now())
        method = "k-greedy" if initial == "k-greedy" else "k-max"
        start, order, value, _ = ktree_start(scorer, k, rng, seconds, method, executor)
        log.note(f"{method} start", value)
    else:
        start, order = {v: () for v in range(n)}, np.arange(n)
    log.phase_ends("start")
    # 2. Every variable's row of single-parent gains, scored (on the executor).
    checks = no_checks()
    state = SearchState(scorer, k, [start[v] for v in range(n)], order, checks, executor,
                        constraints)
    empty = state.derive([()] * n, np.arange(n)) if raced else None   # the race's rival
    log.phase_ends("candidate rows")
    # 3. The first climb (after the race of starts, with initial="race"), run to its
    #    end past the limit, up to the stated allowance: a short limit must not
    #    return the start when one climb takes milliseconds, nor a bound's
    #    computation keep it from running; on thousands of variables one climb
    #    takes many minutes, and the ceiling cuts it.
    log.note("start", state.score)
    start_score = state.score
    bar = _progress_bar(progress, time_limit)
    tally = no_tally()
    race = None
    if raced:
        state, race = climb_race({"k-max": state, "empty": empty}, rng, log,
                                 RACE_SHARE * time_limit, window, tally)
    # half the allowance: the bound and the fitting of the result come after the climb
    ceiling = log.deadline + clock.overrun_allowance(time_limit) / 2
    state = climb_and_polish(state, rng, log.deadline, window, tally,
                             _with_bar(log.checkpoint, bar, log), climb_deadline=ceiling)
    overran = clock.expired(log.deadline) and not clock.interrupted()
    if state.score > start_score + EPS * max(1.0, abs(start_score)):
        log.note("hill climbing run 1", state.score)
    log.phase_ends("first climb")
    # 4. The proved upper bound, for the gap: the LP relaxation when its parent
    #    sets can be scored in time, else the data-free bound.
    lp = None
    share = BOUND_SHARE * time_limit
    # "auto" past the limit (a long first climb): the LP bound would overrun it
    if upper is None and not clock.interrupted() and (
            bound == "lp" or bound == "auto" and not clock.expired(log.deadline)
            and scoring_seconds(n, data.n_rows, k) <= share):
        scoring = clock.now()
        pss = ParentSetScores(data, score=score, ess=ess, max_parents=k, executor=executor,
                              knowledge=knowledge)
        scoring = clock.now() - scoring
        lp = lp_bound(pss, time_limit=share if bound == "lp"
                      else max(min(share - scoring, ceiling - clock.now()), 0.1))
        upper, bound_kind = lp["bound"], "lp"
    if upper is None and score != "bdeu":
        upper, bound_kind = upper_bound(scorer, k), "data-free"   # reads the rows just scored
    log.phase_ends("upper bound")
    # 5. Restarts from the best network, with exact windows, until the time limit.
    best, status, runs = iterated_local_search(
        state, log, rng, bound=upper, max_iter=max_iter, batch=batch,
        perturbation=perturbation, window=window, executor=executor,
        shared=(data, score, ess, k, constraints), tally=tally, checks=checks, bar=bar)
    if bar is not None:
        bar.close()
    log.phase_ends("search")
    if clock.interrupted():
        status = "interrupted"
    return _result(data, best, k, score, parameter_ess, upper, status, log.started, knowledge,
                   {"runs": runs, "history": log.history, **tally, "phases": log.phases,
                    "compile_seconds": clock.compile_seconds() - compiled,
                    "first_climb_overran": overran,
                    "families_scored": len(scorer), "checks": checks,
                    "exact_start": exact is not None, "bound": bound_kind, "lp": lp, "race": race})


def first_incumbent(data: Dataset | pd.DataFrame, k: int, *, score: str = "bic",
                    ess: float = 1.0, time_limit: float = 60.0, knowledge=None) -> dict:
    """:func:`learn`'s network as the first incumbent of an exact learner that has
    ``time_limit`` seconds: it gets a quarter of them, at most 60 s, seed 0 and
    the data-free bound (the exact learner proves its own).  The exact searches
    seldom better their start, so it earns that share: on mushroom at ``k = 4``
    ten seconds give -43,409, a minute -43,399 and ten minutes -43,302.

    >>> from twlib.datasets import load_sklearn
    >>> iris = load_sklearn("iris")
    >>> sorted(first_incumbent(iris, 1, time_limit=4)) == sorted(iris.names)
    True
    """
    return learn(data, k, score=score, ess=ess, time_limit=min(60.0, 0.25 * time_limit),
                 random_state=0, bound="data-free", knowledge=knowledge).parents


def _with_bar(on_round, bar, log):
    """``on_round`` that also moves the progress bar (a first climb can take minutes)."""
    if bar is None:
        return on_round

    def both(state):
        on_round(state)
        bar.update(min(log.elapsed(), bar.total) - bar.n)
        bar.set_postfix(best=f"{state.score:.1f}", runs=1)
    return both


def _progress_bar(progress, total):
    if not progress:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="s", desc="bounded learning",
                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s {postfix}")


def _result(data, best, k, score, parameter_ess, bound, status, started, knowledge, stats):
    parents_idx, order, value = best
    names = list(data.names)
    parents = {names[v]: [names[p] for p in ps] for v, ps in enumerate(parents_idx)}
    moral = moral_graph(parents)
    moral.add_nodes_from(names)
    order_names = [names[int(v)] for v in order]
    width = elimination_width(moral, order_names)
    if width > k:
        raise InternalError(f"the certificate order has width {width} > k = {k}")
    if parameter_ess is None:
        network = BayesianNetwork.fit(data, parents, estimator="mle", name=f"bounded-{k}")
    else:
        network = BayesianNetwork.fit(data, parents, estimator="bdeu", ess=parameter_ess,
                                      name=f"bounded-{k}")
    gap = None
    if bound is not None:
        gap = (0.0 if status == "optimal"
               else relative_gap(value, bound))
    stats = dict(stats, score=score, k=k)
    if data.n_vars <= DP_MAX_VARS:
        stats["treewidth"] = treewidth_exact(moral, max_nodes=DP_MAX_VARS)[0]
    stats["seconds"] = clock.now() - started       # all of the call after the checks
    return LearnResult(network=network, score=value, status=status, stats=stats,
                       parents=parents, elimination_order=order_names, width=width,
                       upper_bound=bound, gap_percent=gap, knowledge=knowledge)
