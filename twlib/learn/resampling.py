"""Arc confidence by the bootstrap, and the averaged network under the width bound.

One sample gives one network, and nothing in it says which arcs the data
support and which a few rows tipped.  Friedman, Goldszmidt & Wyner (1999)
learn again on resamples of the rows drawn with replacement and read each
arc's *strength* (the share of resamples in which the two variables are
adjacent) and its *direction* (the share of those in which it points this
way); Scutari & Nagarajan (2013) build the *averaged network* from the arcs
whose strength passes a threshold.  Here each resample is learned by
:func:`twlib.learn.bounded.learn` under the same bound ``k``, and the averaged
network keeps the bound too: arcs enter strongest first and an arc is left out
when it would close a cycle or when no elimination order the greedy
heuristics find keeps the moral graph within width ``k``, so the result
carries a certificate like every learner's.

The resamples are independent tasks on the executor layer (:mod:`twlib.parallel`):
each draws its rows and its search's seed from its own stream of
``random_state``, so a Dask cluster gives the same frequencies as one process.

>>> from twlib.datasets import load_network
>>> sample = load_network("asia").sample(2000, random_state=0)
>>> boot = bootstrap(sample, k=2, n_resamples=8, random_state=0)
>>> strong = boot.arcs[boot.arcs.strength >= 0.9]
>>> ("either", "dysp") in set(zip(strong["from"], strong["to"])), boot.width <= 2
(True, True)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import clock
from ..data import Dataset, as_dataset
from ..errors import InputError, InternalError
from ..graphs import ORDER_HEURISTICS, elimination_width, greedy_elimination, moral_graph
from ..network import BayesianNetwork
from ..parallel import run_tasks
from .result import check_width_bound

__all__ = ["bootstrap", "BootstrapResult", "averaged_structure"]


@dataclass
class BootstrapResult:
    """Arc frequencies over resamples and the averaged network.

    Attributes
    ----------
    arcs : DataFrame
        One row per ordered pair seen at least once: ``from``, ``to``,
        ``strength`` (share of resamples with the two adjacent, either way),
        ``direction`` (share of those with ``from -> to``) and ``in_network``
        (whether the averaged network holds the arc), strongest first.
    network : BayesianNetwork
        The averaged structure at ``threshold``, its CPTs fitted to the data.
    width, elimination_order : its certified tree-width (``<= k``) and order.
    counts : ndarray
        ``counts[u, v]``: resamples whose network has ``u -> v``.
    """

    arcs: pd.DataFrame
    network: BayesianNetwork
    width: int
    elimination_order: list
    counts: np.ndarray
    n_resamples: int
    k: int
    threshold: float
    stats: dict = field(default_factory=dict)
    data: Dataset | None = field(default=None, repr=False)

    def averaged(self, threshold: float) -> "BootstrapResult":
        """The same counts with the averaged network at another ``threshold``."""
        _check_threshold(threshold)
        return _averaged(self, threshold)


def _learn_resample(shared, seed, first):
    """The arcs ``(parent, child)`` (column indices) learned from one resample; None
    when it is skipped (Ctrl-C, or the call's deadline has passed: never the
    ``first``, which gets the whole limit wherever it starts, so that a call
    always counts one resample)."""
    from . import bounded

    data, k, options, deadline = shared
    if clock.interrupted():         # Ctrl-C in this process: the resamples left are skipped
        return None
    if deadline is not None:
        left = deadline.seconds if first else deadline.left()
        if left <= 0:
            return None
        options = {**options, "time_limit": min(options["time_limit"], left)}
    rng = np.random.default_rng(seed)
    rows = rng.integers(data.n_rows, size=data.n_rows)
    resample = Dataset(data.values[rows], data.names, data.states)
    res = bounded.learn(resample, k, random_state=rng.integers(2**63), bound="data-free",
                        parameter_ess=None, **options)
    index = {name: i for i, name in enumerate(data.names)}
    return [(index[u], index[v]) for v, ps in res.parents.items() for u in ps]


# The share of bootstrap's time limit kept for building the averaged network after
# the resamples (about 4 s for 2,000 arcs on 1,359 variables).
AVERAGING_SHARE = 0.1


class _Deadline:
    """The call's deadline as a task sees it: :func:`twlib.clock.now` seconds in
    this process (compiling excluded, as every learner counts), wall-clock
    seconds on an executor's workers, whose compiling cannot be told apart."""

    def __init__(self, seconds: float, *, in_process: bool):
        self.seconds, self.in_process = seconds, in_process
        self.at = (clock.now() if in_process else time.time()) + seconds

    def left(self) -> float:
        return self.at - (clock.now() if self.in_process else time.time())


def averaged_structure(counts: np.ndarray, n_resamples: int, names: list, k: int,
                       threshold: float):
    """The averaged network's parents, elimination order and width from the arc
    counts of ``n_resamples`` resamples.

    Pairs whose strength reaches ``threshold`` are taken strongest first (then
    by how one-sided their direction is), each in its more frequent direction
    (the earlier column on a tie); one that would close a cycle, or push the
    moral graph past width ``k`` under the elimination order kept so far and
    under every greedy order, is left out.

    >>> counts = np.array([[0, 9, 0], [1, 0, 6], [0, 0, 0]])
    >>> averaged_structure(counts, 10, ["a", "b", "c"], 1, 0.5)[0]
    {'a': [], 'b': ['a'], 'c': ['b']}
    """
    n = len(names)
    total = counts + counts.T
    pairs = zip(*np.nonzero(np.triu(total, 1)))
    chosen = []
    for u, v in pairs:
        forward, backward = counts[u, v], counts[v, u]
        parent, child = (u, v) if forward >= backward else (v, u)
        chosen.append((-(total[u, v]), -abs(int(forward) - int(backward)), parent, child))
    chosen.sort()
    parents = {i: [] for i in range(n)}
    children = {i: set() for i in range(n)}
    # the moral graph as bitset rows, changed in place and mended when an arc is
    # refused: thousands of arcs on a thousand variables, and rebuilding the graph
    # and its greedy orders per arc took minutes
    adj = np.zeros((n, (n + 63) // 64), dtype=np.uint64)
    weights = np.full(n, 2.0)                  # states per variable: unused by the widths
    order, width = np.arange(n), 0
    for neg_total, _, parent, child in chosen:
        if -neg_total < threshold * n_resamples:
            break
        if _reaches(children, child, parent):            # child ->* parent: a cycle
            continue
        new = [q for q in (child, *parents[child]) if not _joined(adj, parent, q)]
        for q in new:                        # the arc and the marriages it makes
            _join(adj, parent, q, True)
        # the order kept so far first; the greedy orders only when it fails
        _, trial_width, _ = greedy_elimination(adj, 0, weights, 0.0, 0, order)
        trial_order = order
        if trial_width > k:
            trial_width, trial_order = _best_greedy(adj, weights)
        if trial_width > k:
            for q in new:
                _join(adj, parent, q, False)
            continue
        parents[child].append(parent)
        children[parent].add(child)
        order, width = trial_order, trial_width
    return ({names[v]: [names[u] for u in ps] for v, ps in parents.items()},
            [names[i] for i in order], int(width))


_NO_ORDER = np.empty(0, dtype=np.int64)


def _joined(adj, a, b) -> bool:
    return bool(adj[a, b >> 6] >> np.uint64(b & 63) & np.uint64(1))


def _join(adj, a, b, on: bool) -> None:
    """Set (or clear) the edge ``a - b`` of bitset rows ``adj``."""
    for x, y in ((a, b), (b, a)):
        bit = np.uint64(1) << np.uint64(y & 63)
        adj[x, y >> 6] = adj[x, y >> 6] | bit if on else adj[x, y >> 6] & ~bit


def _best_greedy(adj, weights):
    """``(width, order)`` of the best greedy elimination heuristic, as
    :func:`twlib.graphs.treewidth_upper_bound` on bitset rows: without states,
    weighted min-fill would repeat min-fill."""
    best = None
    for kind, method in enumerate(ORDER_HEURISTICS):
        if method == "weighted-min-fill":
            continue
        order, width, _ = greedy_elimination(adj, kind, weights, 0.0, 0, _NO_ORDER)
        if best is None or width < best[0]:
            best = (width, order)
    return best


def _reaches(children: dict, start, goal) -> bool:
    """Whether a directed path leads from ``start`` to ``goal``."""
    seen, stack = {start}, [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        for nxt in children[node] - seen:
            seen.add(nxt)
            stack.append(nxt)
    return False


def bootstrap(data, k: int, *, n_resamples: int = 100, threshold: float = 0.5,
              score: str = "bic", ess: float = 1.0, max_iter: int | None = 3,
              resample_time_limit: float = 60.0, time_limit: float | None = None,
              random_state=None, executor=None, progress: bool = False) -> BootstrapResult:
    """Learn a network of tree-width ``<= k`` on each of ``n_resamples`` bootstrap
    resamples of ``data`` and count its arcs (see the module's docstring).

    Parameters
    ----------
    data : Dataset, DataFrame, 2-D array or CSV path
    k : int
        The tree-width bound of every resample's network and of the averaged one.
    n_resamples : int
    threshold : float
        Strength (in ``[0, 1]``) an arc needs to enter the averaged network.
    score, ess : the structure score of :func:`twlib.learn.bounded.learn`.
    max_iter, resample_time_limit : float
        Each resample's hill-climbing runs and search seconds: a limit per
        resample, not for the call.  With ``max_iter`` set the search ends on
        it, not on the clock, so the counts do not depend on the machine or
        on where a resample ran.
    time_limit : float, optional
        Seconds for the whole call: no resample starts after nine tenths of
        them (the rest is the averaged network's), and each gets at most what
        is left of those.  The counts are then of the resamples learned in
        time (``n_resamples`` of the result, at least one: the first always
        runs; ``stats["time_limit_reached"]`` says when some were skipped), so
        they depend on the machine.  In this process the seconds are
        :func:`twlib.clock.now`'s (compiling excluded); on an executor's
        workers, wall-clock time.
    random_state : int, optional
        Seeds every resample's rows and search.
    executor : optional
        A ``concurrent.futures`` executor or a Dask client
        (:mod:`twlib.parallel`) that runs the resamples.
    progress : bool
        A tqdm bar over the resamples.

    Returns
    -------
    BootstrapResult
        Its :meth:`~BootstrapResult.averaged` gives the network at another threshold.
        After Ctrl-C (in process) the resamples learned so far are counted,
        ``n_resamples`` says how many, and ``stats["interrupted"]`` is set.
    """
    data = as_dataset(data)
    check_width_bound(k, n_vars=data.n_vars)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) \
            or n_resamples < 1:
        raise InputError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    _check_threshold(threshold)
    if time_limit is not None:
        clock.check_time_limit(time_limit)
    started = clock.now()
    deadline = None if time_limit is None else _Deadline((1 - AVERAGING_SHARE) * time_limit,
                                                         in_process=executor is None)
    seeds = np.random.SeedSequence(random_state).generate_state(n_resamples, dtype=np.uint64)
    options = {"score": score, "ess": ess, "max_iter": max_iter,
               "time_limit": resample_time_limit}
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=n_resamples, unit="resample", desc="bootstrap")
    with clock.interruptible():
        results = run_tasks(executor, _learn_resample, (data, k, options, deadline),
                            [(int(seed), i == 0) for i, seed in enumerate(seeds)],
                            progress=None if bar is None else (lambda _: bar.update(1)))
        interrupted = clock.interrupted()
    if bar is not None:
        bar.close()
    done = [arcs for arcs in results if arcs is not None]
    if interrupted and executor is None:
        done = done[:-1]            # the resample Ctrl-C cut short is not counted
    if not done:
        raise KeyboardInterrupt

    counts = np.zeros((data.n_vars, data.n_vars), dtype=np.int64)
    for arcs in done:
        for u, v in arcs:
            counts[u, v] += 1
    result = BootstrapResult(arcs=None, network=None, width=0, elimination_order=[],
                             counts=counts, n_resamples=len(done), k=k, threshold=threshold,
                             stats={"seconds": clock.now() - started, "score": score,
                                    "max_iter": max_iter, "interrupted": interrupted,
                                    "time_limit_reached": len(done) < n_resamples
                                    and not interrupted},
                             data=data)
    return _averaged(result, threshold)


def _check_threshold(threshold):
    if not 0 <= threshold <= 1:
        raise InputError(f"threshold must be a strength in [0, 1], got {threshold!r}")


def _averaged(result: BootstrapResult, threshold: float) -> BootstrapResult:
    data = result.data
    names = list(data.names)
    parents, order, width = averaged_structure(result.counts, result.n_resamples, names,
                                               result.k, threshold)
    moral = moral_graph(parents)
    moral.add_nodes_from(names)
    if elimination_width(moral, order) > result.k:
        raise InternalError(f"the averaged network's order has width over k = {result.k}")
    counts = result.counts
    us, vs = np.nonzero(counts)
    both = counts[us, vs] + counts[vs, us]
    arcs = pd.DataFrame({"from": [names[u] for u in us], "to": [names[v] for v in vs],
                         "strength": both / result.n_resamples,
                         "direction": counts[us, vs] / both,
                         "in_network": [names[u] in parents[names[v]] for u, v in zip(us, vs)]},
                        columns=["from", "to", "strength", "direction", "in_network"])
    arcs = arcs.sort_values(["strength", "direction"], ascending=False, kind="stable")
    network = BayesianNetwork.fit(data, parents, estimator="bdeu", ess=1.0,
                                  name=f"averaged-{result.k}")
    return BootstrapResult(arcs=arcs.reset_index(drop=True), network=network, width=width,
                           elimination_order=order, counts=counts,
                           n_resamples=result.n_resamples, k=result.k, threshold=threshold,
                           stats=result.stats, data=data)
