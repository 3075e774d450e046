"""Variable elimination: one query at a time, and marginal MAP (sum the rest, then maximise)."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError, MemoryBudgetExceeded, UnknownName
from ..factors import FactorModel, ZeroEvidenceError, cpt_factor, labelled_einsum
from ..graphs import elimination_cost, elimination_order, moral_graph
from ..network import BayesianNetwork
from .evidence import evidence_indices
from .junction_tree import JunctionTree
from .results import MPEResult

__all__ = ["variable_elimination", "marginal_map"]


def variable_elimination(net: BayesianNetwork, query, evidence=None, *, order=None) -> np.ndarray:
    """``P(query | evidence)`` by variable elimination.

    ``query`` is a variable or a list of them (the result then has one axis
    per query variable, in that order).  ``order`` eliminates the hidden
    variables; by default min-fill on the moral graph.

    >>> net = BayesianNetwork(["a", "b"], {"a": ["0", "1"], "b": ["0", "1"]}, {"b": ["a"]},
    ...     {"a": np.array([0.5, 0.5]), "b": np.array([[0.9, 0.2], [0.1, 0.8]])})
    >>> variable_elimination(net, "a", {"b": "1"}).round(3).tolist()
    [0.111, 0.889]
    """
    single = isinstance(query, str)
    query = [query] if single else list(query)
    for q in query:
        if q not in net.variables:
            raise UnknownName(f"unknown query variable {q!r}")
    ev = evidence_indices(net, evidence)
    if set(query) & set(ev):
        raise InputError("a query variable cannot also be observed")
    factors = [cpt_factor(net, v).reduce(ev) for v in net.variables]
    hidden = [v for v in net.variables if v not in ev and v not in query]
    if order is None:
        graph = moral_graph(net.parent_map())
        order = [v for v in elimination_order(graph.subgraph(hidden + query)) if v in hidden]
    for v in order:
        if v not in hidden:
            continue
        touching = [f for f in factors if v in f.variables]
        factors = [f for f in factors if v not in f.variables]
        if touching:
            product = touching[0]
            for f in touching[1:]:
                product = product * f
            factors.append(product.marginalize([v]))
    result = factors[0]
    for f in factors[1:]:
        result = result * f
    result = result.normalize()
    axes = [result.variables.index(q) for q in query]
    values = np.transpose(result.values, axes)
    return values


def marginal_map(model, query, evidence=None, *, max_memory_gb: float = 4.0,
                 order=None) -> MPEResult:
    """The most probable joint state of the ``query`` variables given the
    evidence, the other variables summed out: ``argmax_q sum_y P(q, y, e)``.

    Exact, by variable elimination along an order that sums out every other
    variable before it maximises over the query ones (by default
    :func:`twlib.graphs.elimination_order` constrained that way), then reads the
    maximisers back in reverse.  Such an order can be much wider than an
    unconstrained one; when its tables (the working ones and those kept for
    the read-back, 8 bytes an entry) need more than ``max_memory_gb``,
    :class:`MemoryBudgetExceeded` says how much.  Returns an optimal
    :class:`~twlib.inference.results.MPEResult` whose ``assignment`` maps each
    query variable to its state label and whose ``log_value`` is
    ``log P(q, e)``; for a factor model the log-probability is of the
    normalised distribution.

    >>> from twlib.datasets import load_network
    >>> res = marginal_map(load_network("asia"), ["lung", "bronc"], {"dysp": "yes"})
    >>> res.assignment, round(res.log_value, 4)
    ({'lung': 'no', 'bronc': 'yes'}, -1.0929)
    """
    normalised = isinstance(model, BayesianNetwork)
    model = FactorModel.from_network(model) if normalised else model
    query = [query] if isinstance(query, str) else list(query)
    if not query:
        raise InputError("marginal MAP needs at least one query variable")
    unknown = [q for q in query if q not in model.variables]
    if unknown:
        raise UnknownName(f"unknown query variables {unknown}")
    if len(set(query)) != len(query):
        raise InputError(f"query variables repeat: {query}")
    ev = evidence_indices(model, evidence)
    if set(query) & set(ev):
        raise InputError(f"query variables cannot also be observed: {sorted(set(query) & set(ev))}")
    arity = {v: model.arity(v) for v in model.variables}
    factors = [f.reduce(ev) for f in model.factors]
    free = [v for v in model.variables if v not in ev]
    graph = FactorModel(free, {v: model.states(v) for v in free}, factors).interaction_graph()
    if order is None:
        order = elimination_order(graph, method="auto", weights=arity, last=query)
    order = list(order)
    if sorted(order, key=str) != sorted(free, key=str) or any(
            v in query for v in order[:len(free) - len(query)]):
        raise InputError("the order must list every unobserved variable once, the query "
                         "variables last")
    _, entries = elimination_cost(graph, order, arity)
    need = 8 * 2 * entries / 2**30
    if need > max_memory_gb:
        raise MemoryBudgetExceeded(
            f"marginal MAP over {len(query)} variables needs about {need:.3g} GiB "
            f"({entries:.3g} table entries along an order that sums out the other "
            f"{len(free) - len(query)} first), over the budget of {max_memory_gb} GiB")
    log_p, kept = _eliminate(factors, order, maximise=set(query))
    if not np.isfinite(log_p):
        raise ZeroEvidenceError(f"the evidence has probability zero: {evidence}")
    if not normalised:
        log_p -= JunctionTree(model, max_memory_gb=max_memory_gb).log_z
    best = {}
    for v, scope, table in reversed(kept):
        index = tuple(best[u] if u != v else slice(None) for u in scope)
        best[v] = int(np.argmax(table[index]))
    return MPEResult.exact({q: model.states(q)[best[q]] for q in query}, log_p,
                           "variable elimination")


def _eliminate(factors, order, maximise=frozenset()):
    """Eliminate ``order`` from the product of ``factors``: sum out each
    variable, or maximise over it if in ``maximise``.  Tables are kept at peak 1
    with their log-scales summed, so nothing underflows.  Returns ``(log of the
    final value, [(variable, scope, table) of each maximisation])``."""
    log_scale = 0.0
    pool = []
    for f in factors:
        peak = float(f.values.max()) if f.values.size else 0.0
        if peak <= 0:
            return -math.inf, []
        log_scale += math.log(peak)
        pool.append((tuple(f.variables), f.values / peak))
    kept = []
    for v in order:
        touching = [p for p in pool if v in p[0]]
        pool = [p for p in pool if v not in p[0]]
        scope, product = touching[0]
        for s, t in touching[1:]:      # pairwise: numpy's einsum bounds its subscripts in all
            joined = tuple(dict.fromkeys(scope + s))
            product = labelled_einsum(product, list(scope), t, list(s), list(joined))
            scope = joined
        axis = scope.index(v)
        if v in maximise:
            kept.append((v, scope, product))
            table = product.max(axis=axis)
        else:
            table = product.sum(axis=axis)
        peak = float(table.max())
        if peak <= 0:
            return -math.inf, kept
        log_scale += math.log(peak)
        pool.append((tuple(u for u in scope if u != v), table / peak))
    for _, table in pool:                              # constants left over
        log_scale += math.log(float(table))
    return log_scale, kept
