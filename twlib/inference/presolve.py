"""Exact elimination of the variables with few neighbours, before a search.

A variable ``X`` with at most two neighbours in the interaction graph (once
the evidence is set) can be maximised out exactly: its tables added (in logs)
make one table over ``X`` and its neighbours, and the maximum over ``X`` is a
table over the neighbours alone, no larger than a pair's.  The model without
``X`` and with that table has, for every assignment of the variables left, the
value of the best completion in ``X``: the same optimum, and a search over one
variable fewer whose bounds lose nothing by ``X``.  Repeated until every
variable left has three neighbours or more, this removes the leaves and the
chains of the graph (bucket elimination limited to small buckets: Larrosa 2000,
"Boosting search with variable elimination"; toulbar2 does it before its
search).  The variables are read back in reverse order, each at its best value
given its neighbours' (:meth:`Presolved.completed`).

The diagnostic networks (UAI 2014 Promedas) lose about half their variables;
a grid or a dense model loses none, and the search then gets the model as it
was.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import clock
from ..factors import Factor, FactorModel, as_factor_model
from .minibucket import log_tables, merged_tables
from .results import MPEResult

__all__ = ["Presolved", "eliminate_low_degree", "presolved"]

# Largest number of neighbours of a variable eliminated: two keeps each new table
# a pair's, so the model left is never wider than the one given (nor than 2)
MAX_DEGREE = 2
# The tables left go back to probabilities, each scaled by its largest entry;
# a table whose entries span more than a double holds is left in the model
# unreduced rather than rounded to zero
_SPAN = 700.0


@dataclass
class Presolved:
    """A model with its low-degree variables maximised out.

    ``model`` holds the variables left and their tables, ``constant`` the log
    value added to every assignment of it (the evidence's tables and the
    scales taken out), ``fixed`` the evidence (variable -> state index) and
    ``eliminated`` each variable maximised out, in order, with its neighbours
    and its log table over ``(variable, *neighbours)``.

    >>> from twlib.datasets import load_network
    >>> pre = eliminate_low_degree(load_network("asia"), {"dysp": "yes"})
    >>> len(pre.eliminated), pre.model.variables
    (7, [])
    """

    model: FactorModel
    constant: float
    fixed: dict
    eliminated: list

    def completed(self, states: dict) -> dict:
        """``states`` (state index of each variable left) completed with the
        evidence and the best value of each eliminated variable, read back in
        reverse order of elimination."""
        full = {**states, **self.fixed}
        for variable, neighbours, table in reversed(self.eliminated):
            column = table[(slice(None),) + tuple(full[v] for v in neighbours)]
            full[variable] = int(np.argmax(column))
        return full


def presolved(model, evidence, solve) -> MPEResult:
    """The MPE of ``model`` given ``evidence`` by ``solve(model, evidence)`` (an
    MPE method returning an :class:`MPEResult`), called on the model left by
    :func:`eliminate_low_degree` (with no evidence) when that removes a
    variable, and completed; ``stats["eliminated"]`` counts the variables
    maximised out.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree
    >>> res = presolved(load_network("alarm"), {"HR": "HIGH"},
    ...                 lambda m, e: JunctionTree(m).mpe(e))
    >>> res.stats["eliminated"], res.method
    (23, 'junction tree')
    """
    model = as_factor_model(model)
    started, compiled = clock.now(), clock.compile_seconds()
    pre = eliminate_low_degree(model, evidence)
    if pre is None or not pre.eliminated:
        return solve(model, evidence)
    if pre.model.variables:
        result = solve(pre.model, None)
        states = {v: pre.model.states(v).index(s) for v, s in result.assignment.items()}
    else:                               # a forest: the elimination alone is exact
        result = MPEResult.exact({}, 0.0, "variable elimination", history=[])
        states = {}
    full = pre.completed(states)
    row = [full[v] for v in model.variables]
    value = float(model.log_values([row])[0])
    bound = value if result.status == "optimal" else max(result.bound + pre.constant, value)
    # the solver's clock started after the elimination: its times move by that much
    offset = clock.now() - started - result.stats.get("seconds", 0.0)
    history = [(t + offset, v + pre.constant, b + pre.constant)
               for t, v, b in result.stats.get("history", [])]
    assignment = {v: model.states(v)[full[v]] for v in model.variables}
    stats = {**result.stats, "history": history, "eliminated": len(pre.eliminated),
             "seconds": clock.now() - started,
             "compile_seconds": clock.compile_seconds() - compiled}
    return MPEResult(assignment, value, bound, result.status, result.method, stats)


def eliminate_low_degree(model, evidence=None, *, max_degree: int = MAX_DEGREE):
    """``model`` with the ``evidence`` set and every variable of at most
    ``max_degree`` neighbours maximised out, repeatedly (see the module), as a
    :class:`Presolved`; None when a table left would need entries below what a
    double holds next to its largest, or when no assignment has a non-zero
    value (the caller's search then reports it).

    >>> from twlib.datasets import load_network
    >>> pre = eliminate_low_degree(load_network("alarm"))
    >>> len(pre.eliminated), len(pre.model.variables)
    (24, 13)
    """
    model = as_factor_model(model)
    tables, arity, ev = log_tables(model, evidence)
    constant = 0.0
    scopes, values, holding = {}, {}, [set() for _ in range(len(arity))]
    for scope, logs in merged_tables(tables):
        if not scope:
            constant += float(logs)
            continue
        key = frozenset(scope)
        scopes[key], values[key] = tuple(scope), logs
        for v in scope:
            holding[v].add(key)
    if constant == -math.inf:
        return None
    left = set(range(len(arity))) - set(ev)
    eliminated = []
    queue = sorted(left)
    while queue:
        x = queue.pop()
        if x not in left:
            continue
        neighbours = sorted({v for key in holding[x] for v in key} - {x})
        if len(neighbours) > max_degree:
            continue
        around = (x, *neighbours)
        table = np.zeros([int(arity[v]) for v in around])
        for key in holding[x]:
            table = table + _spread(values.pop(key), scopes.pop(key), around)
            for v in key:
                if v != x:
                    holding[v].discard(key)
        holding[x].clear()
        left.discard(x)
        eliminated.append((model.variables[x], [model.variables[v] for v in neighbours], table))
        best = table.max(axis=0)
        if not neighbours:
            constant += float(best)
            if constant == -math.inf:
                return None
            continue
        key = frozenset(neighbours)
        if key in scopes:
            values[key] = values[key] + _aligned(best, tuple(neighbours), scopes[key])
        else:
            scopes[key], values[key] = tuple(neighbours), best
            for v in neighbours:
                holding[v].add(key)
        queue.extend(v for v in neighbours if v in left)
    factors = []
    for key, scope in scopes.items():
        logs = values[key]
        top = float(logs.max())
        if top == -math.inf:
            return None
        if np.any(np.isfinite(logs) & (logs < top - _SPAN)):
            return None
        constant += top
        factors.append(Factor(tuple(model.variables[v] for v in scope), np.exp(logs - top)))
    names = [v for k, v in enumerate(model.variables) if k in left]
    reduced = FactorModel(names, {v: model.states(v) for v in names}, factors, name=model.name)
    fixed = {model.variables[k]: s for k, s in ev.items()}
    return Presolved(reduced, constant, fixed, eliminated)


def _aligned(logs, scope, target):
    """Table ``logs`` over ``scope`` with its axes in the order of ``target``
    (the same variables)."""
    return np.transpose(logs, [scope.index(v) for v in target])


def _spread(logs, scope, around):
    """Table ``logs`` over ``scope`` (a subset of ``around``) as an array that
    broadcasts over ``around``."""
    inner = [v for v in around if v in scope]
    shape = [logs.shape[scope.index(v)] if v in scope else 1 for v in around]
    return _aligned(logs, scope, inner).reshape(shape)
