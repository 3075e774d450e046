"""Learning from data with missing cells: EM for the parameters of a fixed
network, and structural EM under a tree-width bound.

Every E-step is exact: the expected counts of each family are sums of clique
posteriors of a junction tree (:meth:`twlib.inference.JunctionTree.expected_counts`),
batched over the distinct incomplete rows, each distinct row propagated once.  A
row that misses one cell needs no tree: that cell's posterior is the product of
the families holding it.  Complete rows are counted once, before the first
iteration.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from .. import clock
from ..counting import count
from ..data import Dataset, IncompleteDataset
from ..errors import InputError, InternalError, WrongType, ZeroEvidenceError
from ..graphs import elimination_width, moral_graph, treewidth_upper_bound
from ..inference import JunctionTree
from ..network import BayesianNetwork
from . import bounded
from .result import LearnResult, check_time_limit, check_width_bound

__all__ = ["EMResult", "fit_parameters", "observed_bic", "observed_log_likelihood",
           "start_parameters", "structural_em"]

INITS = ("available", "random")


@dataclass
class EMResult:
    """What :func:`fit_parameters` returns.

    Attributes
    ----------
    network : BayesianNetwork
        The structure with the parameters EM converged to.
    log_likelihood : float
        Natural-log likelihood of the observed cells under ``network``.
    objective : float
        What EM increases: ``log_likelihood`` plus the log density of the
        parameters' Dirichlet prior (equal to ``log_likelihood`` without one).
    history : list of float
        ``objective`` before each M-step (the start first); never decreasing.
    n_iter : int
        M-steps taken.
    converged : bool
        Whether the gain per row fell below the tolerance before ``max_iter``.
    seconds : float
    """

    network: BayesianNetwork
    log_likelihood: float
    objective: float
    history: list = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False
    seconds: float = 0.0


def _as_incomplete(data) -> IncompleteDataset:
    if isinstance(data, IncompleteDataset):
        return data
    if isinstance(data, Dataset):
        return IncompleteDataset(data.values.astype(np.int32), data.names, data.states)
    raise WrongType(f"data must be an IncompleteDataset or a Dataset, got {type(data).__name__}")


class _Families:
    """The data arranged for EM on one structure: complete rows counted once,
    incomplete rows reduced to their distinct patterns and multiplicities."""

    def __init__(self, data: IncompleteDataset, variables, parents: dict):
        self.variables = list(variables)
        self.parents = {v: list(parents.get(v, [])) for v in self.variables}
        self.scopes = [(v, *self.parents[v]) for v in self.variables]
        # each family's columns in the rows, child first: also the axes of its CPT in
        # every network EM meets, all built on these parents
        index = {v: i for i, v in enumerate(self.variables)}
        self.columns = [[index[u] for u in scope] for scope in self.scopes]
        self.arity = {v: int(data.arities[data.index(v)]) for v in self.variables}
        rows = data.values[:, data.indices(self.variables)]
        complete = (rows >= 0).all(axis=1)
        self.n_rows = len(rows)
        self.complete = Dataset(rows[complete], self.variables,
                                [data.states[data.index(v)] for v in self.variables]) \
            if complete.any() else None
        self.fixed = []                                  # counts from the complete rows
        for scope, cols in zip(self.scopes, self.columns):
            shape = [self.arity[v] for v in scope]
            if self.complete is None:
                self.fixed.append(np.zeros(shape))
                continue
            self.fixed.append(count(self.complete.values, cols,
                                    np.array(shape)).to_dense().astype(float))
        partial = ~complete & (rows >= 0).any(axis=1)     # a blank row carries nothing
        patterns, weights = (np.unique(rows[partial], axis=0, return_counts=True)
                             if partial.any() else (rows[:0], np.zeros(0)))
        # a pattern that misses one cell needs no junction tree: that cell's posterior is
        # the product of the families holding it, its own and its children's
        alone = (patterns < 0).sum(axis=1) == 1
        where = np.argmax(patterns < 0, axis=1)
        self.one_missing = {int(j): (patterns[alone & (where == j)],
                                     weights[alone & (where == j)])
                            for j in np.unique(where[alone])}
        self.patterns, self.weights = patterns[~alone], weights[~alone]

    def e_step(self, net: BayesianNetwork, order):
        """Expected family counts (child axis first) and the observed-data
        log-likelihood under ``net``."""
        counts = [fixed.copy() for fixed in self.fixed]
        ll = 0.0
        if len(self.patterns):
            tree = JunctionTree(net, order=order)
            tables, log_p = tree.expected_counts(self.patterns, self.scopes, self.weights)
            counts = [c + table for c, table in zip(counts, tables)]
            ll += float(self.weights @ log_p)
            order = tree.order
        for j, (patterns, weights) in self.one_missing.items():
            ll += self._one_missing(net, j, patterns, weights, counts)
        if self.complete is not None:
            ll += net.log_likelihood(self.complete)
        return counts, ll, order

    def _one_missing(self, net: BayesianNetwork, j: int, patterns, weights, counts) -> float:
        """Add to ``counts`` the expected counts of rows that miss variable ``j`` alone,
        and return their weighted observed-data log-likelihood."""
        holding = [f for f, c in enumerate(self.columns) if j in c]
        filled = np.repeat(patterns[None], self.arity[self.variables[j]], axis=0)
        filled[:, :, j] = np.arange(filled.shape[0])[:, None]           # state x row
        joint = np.ones(filled.shape[:2])
        for f in holding:
            joint *= net.cpt(self.variables[f])[
                tuple(np.moveaxis(filled[:, :, self.columns[f]], 2, 0))]
        total = joint.sum(axis=0)
        log_p = np.log(total, where=total > 0, out=np.full(len(total), -np.inf))
        posterior = np.divide(joint, total, where=total > 0, out=np.zeros_like(joint))
        for f, c in enumerate(self.columns):
            if f in holding:
                for x in range(filled.shape[0]):
                    np.add.at(counts[f], tuple(filled[x][:, c].T), weights * posterior[x])
            else:
                with np.errstate(divide="ignore"):
                    log_p += np.log(net.cpt(self.variables[f])[tuple(patterns[:, c].T)])
                np.add.at(counts[f], tuple(patterns[:, c].T), weights)
        if not np.isfinite(log_p).all():
            raise ZeroEvidenceError("a row's observed cells have probability zero under the "
                                    "network")
        return float(weights @ log_p)

    def m_step(self, counts, prior, states, name) -> BayesianNetwork:
        cpts = {}
        for v, table in zip(self.variables, counts):
            table = table + (prior(table.shape) if prior is not None else 0.0)
            totals = table.sum(axis=0, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                cpts[v] = np.where(totals > 0, table / totals, 1.0 / table.shape[0])
        return BayesianNetwork(self.variables, states, self.parents, cpts, name=name)


def _prior(ess, alpha):
    """The Dirichlet prior's pseudo-count per cell of a family's table, as a function
    of the table's shape: ``alpha`` (Laplace) when given, else BDeu's
    ``ess / (q r)``; None (maximum likelihood) when both are None."""
    if alpha is not None:
        return lambda shape: alpha
    if ess is not None:
        return lambda shape: ess / math.prod(shape)
    return None


def _log_prior(net: BayesianNetwork, prior) -> float:
    """``sum of pseudo-count * log theta`` over every CPT cell: the log density
    (up to a constant) of the Dirichlet prior whose posterior mode the M-step's
    posterior mean is."""
    if prior is None:
        return 0.0
    total = 0.0
    for v in net.variables:
        cpt = net.cpt(v)
        with np.errstate(divide="ignore"):
            total += prior(cpt.shape) * float(np.log(cpt).sum())
    return total


def _start(families: _Families, data: IncompleteDataset, init, prior, states, rng):
    """Starting CPTs: ``"available"`` estimates each family from the rows where
    it is fully observed; ``"random"`` draws each column from a flat Dirichlet;
    a network gives its own."""
    if isinstance(init, BayesianNetwork):
        if set(init.variables) != set(families.variables) or any(
                init.parents(v) != families.parents[v] for v in families.variables):
            raise InputError("the starting network must have the structure being fitted")
        return BayesianNetwork(families.variables, states, families.parents,
                               {v: init.cpt(v) for v in families.variables}, name="start")
    if init not in INITS:
        raise InputError(f"init must be one of {INITS} or a BayesianNetwork, got {init!r}")
    cpts = {}
    for v, scope in zip(families.variables, families.scopes):
        shape = [families.arity[u] for u in scope]
        if init == "random":
            table = rng.gamma(1.0, size=shape)
        else:
            cols = data.indices(scope)
            seen = data.observed[:, cols].all(axis=1)
            table = count(data.values[seen][:, cols], list(range(len(scope))),
                          np.array(shape)).to_dense().astype(float) if seen.any() \
                else np.zeros(shape)
            table += (prior or _prior(1.0, None))(shape)
        cpts[v] = table / table.sum(axis=0, keepdims=True)
    return BayesianNetwork(families.variables, states, families.parents, cpts, name="start")


def start_parameters(data, structure, *, init: str = "available", parameter_ess: float | None = 1.0,
                     random_state=None) -> BayesianNetwork:
    """The CPTs :func:`fit_parameters` starts from (``init`` as there), as a network:
    to start another EM implementation at the same point.

    >>> from twlib.datasets import load_network
    >>> from twlib.data import mask_mcar
    >>> net = load_network("asia")
    >>> holes = mask_mcar(net.sample(500, random_state=0), 0.3, random_state=1)
    >>> start_parameters(holes, net.parent_map()).parents("either")
    ['lung', 'tub']
    """
    data = _as_incomplete(data)
    parents = _parents_of(structure, data)
    states = {v: data.states[data.index(v)] for v in data.names}
    return _start(_Families(data, data.names, parents), data, init, _prior(parameter_ess, None),
                  states, np.random.default_rng(random_state))


def _parents_of(structure, data: IncompleteDataset) -> dict:
    """``structure`` (a network or a dict of parent lists) as a dict, checked."""
    parents = structure.parent_map() if isinstance(structure, BayesianNetwork) else structure
    if not isinstance(parents, dict):
        raise WrongType("structure must be a BayesianNetwork or a dict of parent lists")
    unknown = sorted({u for v, ps in parents.items() for u in [v, *ps]} - set(data.names))
    if unknown:
        raise InputError(f"the structure names variables that are not in the data: {unknown}")
    return parents


def fit_parameters(data, structure, *, parameter_ess: float | None = 1.0,
                   parameter_alpha: float | None = None, max_iter: int = 100, tol: float = 1e-7,
                   init="available", random_state=None, progress: bool = False,
                   time_limit: float | None = None, name: str = "em") -> EMResult:
    """Fit the CPTs of a fixed structure to data with missing cells by EM.

    Parameters
    ----------
    data : IncompleteDataset or Dataset
    structure : BayesianNetwork or dict
        The network (its parents, and its CPTs when ``init`` is ``"network"``)
        or ``{variable: [parents]}`` over the data's variables.
    parameter_ess : float or None
        M-step CPTs are posterior means under a BDeu prior of this equivalent
        sample size (no zero probabilities); None gives maximum likelihood.
    parameter_alpha : float or None
        When given, the prior instead adds this pseudo-count to every CPT cell
        (Laplace smoothing, as ``BayesianNetwork.fit(estimator="laplace")``).
    max_iter : int
        At most this many M-steps (at least 1).
    tol : float
        Stop when an iteration gains less than ``tol`` per row (>= 0).
    init : {"available", "random"} or BayesianNetwork
        The starting CPTs: each family estimated from the rows where it is fully
        observed; random columns (seeded by ``random_state``); or a network's.
    progress : bool
        A tqdm bar over the iterations.
    time_limit : float, optional
        Seconds; no M-step starts after them (the parameters of the last
        E-step are returned, ``converged`` False).

    Examples
    --------
    >>> from twlib.datasets import load_network
    >>> from twlib.data import mask_mcar
    >>> net = load_network("asia")
    >>> holes = mask_mcar(net.sample(2000, random_state=0), 0.3, random_state=1)
    >>> fit = fit_parameters(holes, net.parent_map())
    >>> fit.converged, bool(np.all(np.diff(fit.history) >= -1e-9))
    (True, True)
    """
    started = clock.now()
    data = _as_incomplete(data)
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InputError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if not (isinstance(tol, (int, float)) and tol >= 0):
        raise InputError(f"tol must be a number >= 0, got {tol!r}")
    if parameter_ess is not None and not parameter_ess > 0:
        raise InputError(f"parameter_ess must be positive or None, got {parameter_ess!r}")
    if parameter_alpha is not None and not parameter_alpha > 0:
        raise InputError(f"parameter_alpha must be positive or None, got {parameter_alpha!r}")
    prior = _prior(parameter_ess, parameter_alpha)
    parents = _parents_of(structure, data)
    states = {v: data.states[data.index(v)] for v in data.names}
    families = _Families(data, data.names, parents)
    rng = np.random.default_rng(random_state)
    net = _start(families, data, init, prior, states, rng)
    order = None                 # the junction tree's own choice, kept after the first E-step
    history, converged = [], False
    bar = tqdm(total=max_iter, unit="it", desc="EM", disable=not progress)
    for it in range(max_iter + 1):
        counts, ll, order = families.e_step(net, order)
        history.append(ll + _log_prior(net, prior))
        bar.set_postfix(ll_per_row=f"{ll / families.n_rows:.6f}")
        if it and history[-1] - history[-2] < tol * families.n_rows:
            converged = True
            break
        if it == max_iter or (time_limit is not None
                               and clock.now() - started >= time_limit):
            break
        last = (net, ll)
        net = families.m_step(counts, prior, states, name)
        bar.update(1)
    bar.close()
    if converged and history[-1] < history[-2]:
        # within the tolerance a rounding step down can happen: keep the better one
        net, ll = last
        history.pop()
    return EMResult(network=net, log_likelihood=ll, objective=history[-1], history=history,
                    n_iter=len(history) - 1, converged=converged,
                    seconds=clock.now() - started)


def observed_log_likelihood(net: BayesianNetwork, data) -> float:
    """Natural-log likelihood of the observed cells: each row's missing cells
    summed out exactly through a junction tree.

    >>> from twlib.datasets import load_network
    >>> net = load_network("asia")
    >>> data = net.sample(500, random_state=0)
    >>> bool(abs(observed_log_likelihood(net, data) - net.log_likelihood(data)) < 1e-9)
    True
    """
    data = _as_incomplete(data)
    _, ll, _ = _Families(data, net.variables, net.parent_map()).e_step(net, None)
    return float(ll)


def observed_bic(net: BayesianNetwork, data) -> float:
    """BIC of a network on data with missing cells: the exact
    :func:`observed_log_likelihood` minus ``log(N)/2`` times the number of free
    parameters."""
    data = _as_incomplete(data)
    return _bic(observed_log_likelihood(net, data), net, data.n_rows)


def _bic(log_likelihood: float, net: BayesianNetwork, n_rows: int) -> float:
    return log_likelihood - 0.5 * math.log(n_rows) * net.n_parameters


def structural_em(data, k: int, *, time_limit: float = 60.0, max_iter: int = 20,
                  parameter_ess: float | None = 1.0, em_max_iter: int = 30, tol: float = 1e-6,
                  search_max_iter: int | None = None, random_state=None, progress: bool = False,
                  executor=None, knowledge=None) -> LearnResult:
    """Structural EM (Friedman 1998) with the tree-width bound kept: learn a
    network of tree-width at most ``k`` from data with missing cells.

    Each round draws one completion of the data from the current network's
    exact posterior (:meth:`~twlib.inference.JunctionTree.sample_missing`),
    searches it with :func:`twlib.learn.bounded.learn` (BIC, from the current
    structure, for a sixth of ``time_limit`` at most), refits the proposal's
    CPTs by :func:`fit_parameters`, and keeps
    it only when its observed-data BIC (:func:`observed_bic`, exact) is higher,
    so the reported score never goes down.  The search's score is that of a
    sampled completion, not of expected counts; the acceptance test is exact.
    Stops after two rounds in a row without a gain, ``max_iter`` rounds or
    ``time_limit`` seconds of search (:func:`twlib.clock.now`; the first round
    always runs), or at Ctrl-C with the best network so far and status
    ``"interrupted"``.  Data without a missing cell go to
    :func:`~twlib.learn.bounded.learn` as they are.

    ``em_max_iter`` and ``tol`` bound each refit's EM; ``search_max_iter`` caps each
    round's hill-climbing runs (so that a run whose time share is not binding
    is reproducible).  ``knowledge`` (:class:`twlib.knowledge.Knowledge`): the
    first network holds its required arcs and every round's search honours it.

    Returns a :class:`LearnResult` whose ``score`` is the observed-data BIC,
    with the certificate (``elimination_order``, ``width <= k``) and
    ``stats["history"]`` (one entry per round: seconds, proposal's score,
    whether it was kept).

    >>> from twlib.datasets import load_network
    >>> from twlib.data import mask_mcar
    >>> holes = mask_mcar(load_network("asia").sample(3000, random_state=0), 0.2, random_state=1)
    >>> res = structural_em(holes, 2, time_limit=20, random_state=0)
    >>> res.width <= 2, res.stats["history"][0]["kept"]
    (True, True)
    """
    started = clock.now()
    deadline = started + time_limit
    data = _as_incomplete(data)
    check_width_bound(k, n_vars=data.n_vars)
    check_time_limit(time_limit)
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) \
            or max_iter < 1:
        raise InputError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if knowledge:
        knowledge.validate(data.names, k)
    if data.n_missing == 0:
        return bounded.learn(Dataset(data.values, data.names, data.states), k,
                             parameter_ess=parameter_ess, time_limit=time_limit,
                             random_state=random_state, progress=progress, executor=executor,
                             knowledge=knowledge)
    required = knowledge.start(data.names) if knowledge else {}
    compiled = clock.compile_seconds()
    with clock.interruptible():
        rng = np.random.default_rng(random_state)
        fit = fit_parameters(data, required, parameter_ess=parameter_ess, max_iter=1)
        best, best_score = fit.network, _bic(fit.log_likelihood, fit.network, data.n_rows)
        best_order = list(data.names)                 # any order, for the empty network
        if any(required.values()):
            moral = moral_graph(best.parent_map())
            moral.add_nodes_from(best.variables)
            best_order = list(treewidth_upper_bound(moral)[1])
        history = [{"round": 0, "seconds": clock.now() - started, "score": best_score,
                    "kept": True}]
        idle, status = 0, "complete"
        upkeep = 0.0          # the last round's seconds that no clock can cut
        bar = tqdm(total=max_iter, unit="round", desc="structural EM", disable=not progress)
        for round_ in range(1, max_iter + 1):
            if clock.interrupted():
                status = "interrupted"
                break
            left = deadline - clock.now()
            # the first round runs whatever the limit; a later one only if twice what no
            # clock cut in the last (sampling, the search's set-up, the first EM step:
            # seconds on a thousand variables, more as the network grows) leaves its search
            # half a second
            if left <= 0.5 + 2 * upkeep and round_ > 1:
                status = "time_limit"
                break
            round_started = clock.now()
            rows = data.values[:, data.indices(best.variables)]
            tree = JunctionTree(best, order=best_order)
            filled = tree.sample_missing(rows, random_state=rng.integers(2**63))
            completed = Dataset(filled, best.variables, [best.states(v) for v in best.variables])
            searching = max(0.5, min((left - upkeep) / 2, time_limit / 6))
            search = bounded.learn(completed, k, score="bic", parameter_ess=parameter_ess,
                                   time_limit=searching,
                                   start=best.parent_map(), max_iter=search_max_iter,
                                   random_state=rng.integers(2**63), executor=executor,
                                   bound="data-free", knowledge=knowledge)   # no gap needed
            refit_started = clock.now()
            refit = fit_parameters(data, search.network.parent_map(),
                                   parameter_ess=parameter_ess, max_iter=em_max_iter, tol=tol,
                                   init=search.network,
                                   time_limit=max(0.0, deadline - clock.now()))
            # all of the round but the parts a clock cuts: the search's limit, and the refit's
            # EM steps after its first (it stops at the deadline, but not inside a step)
            refitting = clock.now() - refit_started
            upkeep = (clock.now() - round_started - searching
                      - refitting * (1 - 1 / max(1, refit.n_iter)))
            score = _bic(refit.log_likelihood, refit.network, data.n_rows)
            kept = score > best_score + 1e-9 * abs(best_score)
            history.append({"round": round_, "seconds": clock.now() - started,
                            "score": score, "kept": kept})
            bar.update(1)
            bar.set_postfix(best=f"{max(score, best_score):.1f}")
            if kept:
                best, best_score, best_order, idle = (refit.network, score,
                                                      search.elimination_order, 0)
            else:
                idle += 1
                if idle >= 2:
                    break
        bar.close()
    moral = moral_graph(best.parent_map())
    moral.add_nodes_from(best.variables)
    width = elimination_width(moral, best_order)
    if width > k:
        raise InternalError(f"the certificate order has width {width} > k = {k}")
    net = BayesianNetwork(data.names, {v: best.states(v) for v in data.names},
                          best.parent_map(), {v: best.cpt(v) for v in data.names},
                          name=f"sem-{k}")
    return LearnResult(network=net, score=best_score, status=status, knowledge=knowledge,
                       stats={"history": history, "rounds": len(history) - 1,
                              "seconds": clock.now() - started, "score": "bic",
                              "compile_seconds": clock.compile_seconds() - compiled,
                              "k": k, "missing": data.n_missing / data.observed.size},
                       parents=net.parent_map(), elimination_order=list(best_order),
                       width=width)
