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

import numba as nb
import numpy as np

from .. import clock
from ..factors import FactorModel, as_factor_model
from .evidence import evidence_indices
from .flat import flat_tables
from .results import MPEResult

__all__ = ["Presolved", "eliminate_low_degree", "presolved", "reduced_and_merged"]

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
    and its log table over ``(variable, *neighbours)``.  They are kept as the
    compiled elimination left them (``names`` and ``arity`` of the whole
    model, then the flat records), and made into that list only when asked.

    >>> from twlib.datasets import load_network
    >>> pre = eliminate_low_degree(load_network("asia"), {"dysp": "yes"})
    >>> len(pre.eliminated), pre.model.variables
    (7, [])
    """

    model: FactorModel
    constant: float
    fixed: dict
    names: list
    arity: np.ndarray
    records: tuple                  # (variables, neighbours, offsets, log tables)

    @property
    def eliminated_count(self) -> int:
        """How many variables were maximised out (without making their records)."""
        return len(self.records[0])

    @property
    def eliminated(self) -> list:
        """``(variable, neighbours, log table)`` of each variable maximised out, in order."""
        e_var, e_nbr, e_offset, e_values = self.records
        names, sizes = self.names, self.arity.tolist()
        out = []
        for k, (x, nbrs) in enumerate(zip(e_var.tolist(), e_nbr.tolist())):
            around = [v for v in nbrs if v >= 0]
            out.append((names[x], [names[v] for v in around],
                        e_values[e_offset[k]:e_offset[k + 1]].reshape(
                            [sizes[x]] + [sizes[v] for v in around])))
        return out

    def completed(self, states: dict) -> dict:
        """``states`` (state index of each variable left) completed with the
        evidence and the best value of each eliminated variable, read back in
        reverse order of elimination.

        >>> from twlib.datasets import load_network
        >>> pre = eliminate_low_degree(load_network("asia"), {"dysp": "yes"})
        >>> pre.completed({})["bronc"]
        0
        """
        row = self.completed_row(states)
        return {v: int(s) for v, s in zip(self.names, row.tolist()) if s >= 0}

    def completed_row(self, states: dict) -> np.ndarray:
        """:meth:`completed` as state indices in the whole model's variable order."""
        index = {v: k for k, v in enumerate(self.names)}
        row = np.full(len(self.names), -1, dtype=np.int64)
        for v, s in {**states, **self.fixed}.items():
            row[index[v]] = s
        _complete(row, self.arity, *self.records)
        return row


def presolved(model, evidence, solve) -> MPEResult:
    """The MPE of ``model`` given ``evidence`` by ``solve(model, evidence,
    constant)`` (an MPE method returning an :class:`MPEResult`), called on the
    model left by :func:`eliminate_low_degree` (with no evidence: it is set,
    and the tables over one scope are merged, even where no variable goes), and
    completed; ``constant`` is the log value that model's tables leave out (a
    search proves within a share of the value with it: :func:`~twlib.inference.flat.slack`).
    ``stats["eliminated"]`` counts the variables maximised out.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree
    >>> res = presolved(load_network("alarm"), {"HR": "HIGH"},
    ...                 lambda m, e, constant: JunctionTree(m).mpe(e))
    >>> res.stats["eliminated"], res.method
    (23, 'junction tree')
    """
    model = as_factor_model(model)
    started, compiled = clock.now(), clock.compile_seconds()
    pre = eliminate_low_degree(model, evidence)
    if pre is None:
        return solve(model, evidence, 0.0)
    if pre.model.variables:
        result = solve(pre.model, None, pre.constant)
        states = pre.model.state_indices(result.assignment)
    else:                               # a forest: the elimination alone is exact
        result = MPEResult.exact({}, 0.0, "variable elimination", history=[])
        states = {}
    row = pre.completed_row(states)
    value = float(model.log_values(row[None])[0])
    bound = value if result.status == "optimal" else max(result.bound + pre.constant, value)
    # the solver's clock started after the elimination: its times move by that much
    offset = clock.now() - started - result.stats.get("seconds", 0.0)
    history = [(t + offset, v + pre.constant, b + pre.constant)
               for t, v, b in result.stats.get("history", [])]
    if history:                 # the answer's own entry: its value as the whole model gives it
        history[-1] = (history[-1][0], value, bound)
    assignment = model.labelled(row)
    stats = {**result.stats, "history": history, "eliminated": pre.eliminated_count,
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
    names = model.variables
    index = {v: k for k, v in enumerate(names)}
    ev = {index[v]: s for v, s in evidence_indices(model, evidence).items()}
    arity = np.array([model.arity(v) for v in names], dtype=np.int64)
    ptr, var, offset, values, constant = reduced_and_merged(model.flat_log_tables(), arity, ev)
    if constant == -math.inf:
        return None
    candidate = np.ones(len(arity), dtype=np.bool_)
    candidate[list(ev)] = False
    (more, possible, t_ptr, t_var, t_offset, t_values, alive, e_var, e_nbr, e_offset,
     e_values) = _eliminated(ptr, var, offset, values, arity, candidate, max_degree)
    constant += more
    if not possible:
        return None
    live = np.flatnonzero(alive)
    tops, representable = _peaks_out(live, t_offset, t_values, _SPAN)
    if not representable:
        return None
    constant += float(tops.sum())
    left = candidate.copy()
    left[e_var] = False
    position = np.cumsum(left) - 1
    kept_names = [names[k] for k in np.flatnonzero(left).tolist()]
    # the tables come from the model's, checked when it was made; the search
    # reads their logs, and their factors are made only if another method asks
    reduced = FactorModel.from_flat_logs(
        kept_names, {v: model.states(v) for v in kept_names},
        _tables_left(live, t_ptr, t_var, t_offset, t_values, tops, position, arity),
        name=model.name)
    fixed = {names[k]: s for k, s in ev.items()}
    return Presolved(reduced, constant, fixed, names, arity, (e_var, e_nbr, e_offset, e_values))


def reduced_and_merged(tab, arity, evidence):
    """The flat log tables ``tab`` (:func:`twlib.inference.flat.flat_tables`)
    with the ``evidence`` (variable index -> state) set and the tables over the
    same variables then added into one, in the first one's order: ``(ptr, var,
    offset, values, constant)``, the tables left with at least one variable
    (in the order of their first) and the sum of those with none.  The same
    sums as :func:`~twlib.inference.minibucket.log_tables` followed by
    :func:`~twlib.inference.minibucket.merged_tables`, in the same order, in
    compiled passes: with a thousand small factors, Python loops over the
    tables cost more than the elimination itself.

    >>> tab = flat_tables([((0, 1), np.log([[1.0, 2.0], [3.0, 4.0]])),
    ...                    ((1, 0), np.log([[1.0, 1.0], [1.0, 2.0]]))])
    >>> ptr, var, offset, values, constant = reduced_and_merged(tab, np.array([2, 2]), {1: 1})
    >>> var.tolist(), np.exp(values).round(6).tolist(), constant
    ([0], [2.0, 8.0], 0.0)
    """
    ptr, var, stride, offset, values = tab
    state = np.full(len(arity), -1, dtype=np.int64)
    state[list(evidence)] = list(evidence.values())
    keys = _free_scope_keys(ptr, var, state)
    # tables with equal keys, the key's first table first: lexsort is stable
    ranked = np.lexsort(keys.T[::-1])
    fresh = np.ones(len(ranked), dtype=np.bool_)
    fresh[1:] = (keys[ranked[1:]] != keys[ranked[:-1]]).any(axis=1)
    starts = np.flatnonzero(fresh)
    groups = starts[np.argsort(ranked[starts], kind="stable")]
    ends = np.append(starts[1:], len(ranked))[np.searchsorted(starts, groups)]
    return _summed_groups(ptr, var, stride, offset, values, arity, state, ranked, groups, ends)


@nb.njit(cache=True)
def _free_scope_keys(ptr, var, state):
    """Each table's variables not set by ``state`` (-1: free), sorted, as a row
    of a matrix whose first column is their number and whose unused places hold
    -1: two tables over the same free variables have equal rows."""
    width = 1
    for t in range(ptr.shape[0] - 1):
        width = max(width, ptr[t + 1] - ptr[t] + 1)
    keys = np.full((ptr.shape[0] - 1, width), -1, dtype=np.int64)
    for t in range(ptr.shape[0] - 1):
        m = 0
        for j in range(ptr[t], ptr[t + 1]):
            if state[var[j]] < 0:
                m += 1
                keys[t, m] = var[j]
        keys[t, 0] = m
        keys[t, 1:m + 1].sort()
    return keys


@nb.njit(cache=True)
def _summed_groups(ptr, var, stride, offset, values, arity, state, ranked, groups, ends):
    """The sums of :func:`reduced_and_merged`: group ``g``'s tables are
    ``ranked[groups[g]:ends[g]]``, the first one's free variables its scope."""
    n_out, n_var, n_val = 0, 0, 0
    for g in range(groups.shape[0]):
        first = ranked[groups[g]]
        size, m = 1, 0
        for j in range(ptr[first], ptr[first + 1]):
            if state[var[j]] < 0:
                size *= arity[var[j]]
                m += 1
        if m > 0:
            n_out += 1
            n_var += m
            n_val += size
    o_ptr = np.zeros(n_out + 1, dtype=np.int64)
    o_var = np.empty(n_var, dtype=np.int64)
    o_offset = np.empty(n_out, dtype=np.int64)
    o_values = np.empty(n_val)
    place = np.full(arity.shape[0], -1, dtype=np.int64)   # a free variable's digit
    digits = np.zeros(max(1, n_var), dtype=np.int64)
    constant, t_out, at = 0.0, 0, 0
    for g in range(groups.shape[0]):
        first = ranked[groups[g]]
        m = 0
        for j in range(ptr[first], ptr[first + 1]):
            if state[var[j]] < 0:
                place[var[j]] = m
                o_var[o_ptr[t_out] + m] = var[j]
                m += 1
        scope = o_var[o_ptr[t_out]:o_ptr[t_out] + m]
        size = 1
        for v in scope:
            size *= arity[v]
        digits[:m] = 0
        for e in range(size):
            total = 0.0
            for r in range(groups[g], ends[g]):
                t = ranked[r]
                entry = offset[t]
                for j in range(ptr[t], ptr[t + 1]):
                    v = var[j]
                    entry += (state[v] if state[v] >= 0 else digits[place[v]]) * stride[j]
                total += values[entry]
            if m == 0:
                constant += total
            else:
                o_values[at + e] = total
            for p in range(m - 1, -1, -1):          # the next entry, last digit fastest
                digits[p] += 1
                if digits[p] < arity[scope[p]]:
                    break
                digits[p] = 0
        if m > 0:
            o_offset[t_out] = at
            at += size
            t_out += 1
            o_ptr[t_out] = o_ptr[t_out - 1] + m
    return o_ptr, o_var, o_offset, o_values, constant


@nb.njit(cache=True)
def _complete(row, arity, e_var, e_nbr, e_offset, e_values):
    """Each eliminated variable's best value given its neighbours' in ``row``,
    read back in reverse order of elimination (the first best on ties, as
    ``argmax``); its table is over ``(variable, *neighbours)``, C-ordered."""
    for k in range(e_var.shape[0] - 1, -1, -1):
        x = e_var[k]
        at, step = 0, 1
        for i in range(e_nbr.shape[1] - 1, -1, -1):
            v = e_nbr[k, i]
            if v >= 0:
                at += row[v] * step
                step *= arity[v]
        best, top = 0, -np.inf
        for a in range(arity[x]):
            value = e_values[e_offset[k] + a * step + at]
            if value > top:
                best, top = a, value
        row[x] = best


@nb.njit(cache=True)
def _grown(a, need):
    """``a``, or a copy with room for at least ``need`` entries (twice as many)."""
    if need <= a.shape[0]:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


@nb.njit(cache=True)
def _entry(e, sizes, strides, count):
    """The offset, at ``strides``, of entry ``e`` of a C-ordered table of
    ``sizes`` (the first ``count`` axes)."""
    at = 0
    for p in range(count - 1, -1, -1):
        at += (e % sizes[p]) * strides[p]
        e //= sizes[p]
    return at


@nb.njit(cache=True)
def _eliminated(ptr, var, offset, values, arity, candidate, max_degree):
    """The elimination of :func:`eliminate_low_degree` on flat log tables
    (C-ordered, over distinct sets of variables), compiled.  Variables come
    off a stack, the highest index first, and each one's neighbours go on it
    once it is eliminated.  The tables live in arrays that grow, new ones
    appended, and each variable's tables are a linked list of incidences.

    Returns ``(constant, possible, t_ptr, t_var, t_offset, t_values, alive,
    e_var, e_nbr, e_offset, e_values)``: the log value added (``possible``
    False when it is ``-inf``), the tables (those not ``alive`` were summed
    into an elimination), and each variable maximised out with its
    neighbours (-1 past them) and its table over ``(variable, *neighbours)``.
    """
    n, n_tab = arity.shape[0], ptr.shape[0] - 1
    t_ptr, t_var = ptr.copy(), var.copy()
    t_offset = np.append(offset, values.shape[0])
    t_values = values.copy()
    alive = np.ones(n_tab, dtype=np.bool_)
    head = np.full(n, -1, dtype=np.int64)
    nxt = np.empty(var.shape[0] + max_degree * n, dtype=np.int64)
    itab = np.empty(var.shape[0] + max_degree * n, dtype=np.int64)
    n_inc = 0
    for t in range(n_tab):
        for j in range(ptr[t], ptr[t + 1]):
            itab[n_inc], nxt[n_inc], head[var[j]] = t, head[var[j]], n_inc
            n_inc += 1
    left = candidate.copy()
    stack = np.flatnonzero(candidate)
    top = stack.shape[0]
    e_var = np.empty(n, dtype=np.int64)
    e_nbr = np.full((n, max_degree), -1, dtype=np.int64)
    e_offset = np.zeros(n + 1, dtype=np.int64)
    e_values = np.empty(max(1, values.shape[0]))
    n_elim, constant, possible = 0, 0.0, True
    around = np.empty(max_degree + 1, dtype=np.int64)     # x, then its neighbours
    sizes = np.empty(max_degree + 1, dtype=np.int64)
    strides = np.empty(max_degree + 1, dtype=np.int64)
    own = np.empty(max_degree + 1, dtype=np.int64)
    while top > 0 and possible:
        top -= 1
        x = stack[top]
        if not left[x]:
            continue
        around[0], m = x, 0
        k = head[x]
        while k >= 0 and m <= max_degree:
            t = itab[k]
            for j in range(t_ptr[t], t_ptr[t + 1] if alive[t] else t_ptr[t]):
                seen = False
                for i in range(m + 1):
                    seen = seen or around[i] == t_var[j]
                if not seen:
                    m += 1
                    if m > max_degree:          # too many: x stays
                        break
                    around[m] = t_var[j]
            k = nxt[k]
        if m > max_degree:
            continue
        around[1:m + 1] = np.sort(around[1:m + 1])
        size = 1
        for i in range(m + 1):
            sizes[i] = arity[around[i]]
            size *= sizes[i]
        # the sum of x's tables over (x, *neighbours), C-ordered
        table = np.zeros(size)
        k = head[x]
        while k >= 0:
            t = itab[k]
            if alive[t]:
                alive[t] = False
                strides[:m + 1] = 0
                step = 1
                for j in range(t_ptr[t + 1] - 1, t_ptr[t] - 1, -1):
                    for i in range(m + 1):
                        if around[i] == t_var[j]:
                            strides[i] = step
                    step *= arity[t_var[j]]
                for e in range(size):
                    table[e] += t_values[t_offset[t] + _entry(e, sizes, strides, m + 1)]
            k = nxt[k]
        left[x] = False
        e_var[n_elim] = x
        e_nbr[n_elim, :m] = around[1:m + 1]
        e_values = _grown(e_values, e_offset[n_elim] + size)
        e_values[e_offset[n_elim]:e_offset[n_elim] + size] = table
        e_offset[n_elim + 1] = e_offset[n_elim] + size
        n_elim += 1
        rest = size // sizes[0]
        best = np.full(rest, -np.inf)
        for a in range(sizes[0]):
            for j in range(rest):
                best[j] = max(best[j], table[a * rest + j])
        if m == 0:
            constant += best[0]
            possible = constant > -np.inf
            continue
        found = _table_over(around[1:m + 1], head, nxt, itab, alive, t_ptr, t_var)
        if found >= 0:
            # added into it along its own axis order: best's stride of each
            step = 1
            for i in range(m, 0, -1):
                own[i] = step
                step *= sizes[i]
            for j in range(t_ptr[found], t_ptr[found + 1]):
                sizes[j - t_ptr[found]] = arity[t_var[j]]
                for i in range(1, m + 1):
                    if around[i] == t_var[j]:
                        strides[j - t_ptr[found]] = own[i]
            for e in range(rest):
                t_values[t_offset[found] + e] += best[_entry(e, sizes, strides, m)]
        else:
            alive = _grown(alive, n_tab + 1)
            alive[n_tab] = True
            t_ptr = _grown(t_ptr, n_tab + 2)
            t_ptr[n_tab + 1] = t_ptr[n_tab] + m
            t_var = _grown(t_var, t_ptr[n_tab + 1])
            t_var[t_ptr[n_tab]:t_ptr[n_tab + 1]] = around[1:m + 1]
            t_offset = _grown(t_offset, n_tab + 2)
            t_offset[n_tab + 1] = t_offset[n_tab] + rest
            t_values = _grown(t_values, t_offset[n_tab + 1])
            t_values[t_offset[n_tab]:t_offset[n_tab + 1]] = best
            for i in range(1, m + 1):
                itab[n_inc], nxt[n_inc], head[around[i]] = n_tab, head[around[i]], n_inc
                n_inc += 1
            n_tab += 1
        for i in range(1, m + 1):
            if left[around[i]]:
                stack = _grown(stack, top + 1)
                stack[top] = around[i]
                top += 1
    return (constant, possible, t_ptr[:n_tab + 1], t_var, t_offset[:n_tab + 1], t_values,
            alive[:n_tab], e_var[:n_elim], e_nbr[:n_elim], e_offset[:n_elim + 1], e_values)


@nb.njit(cache=True)
def _peaks_out(live, t_offset, t_values, span):
    """``(tops, representable)``: each table of ``live``'s largest log value,
    and False (at the first) when a table is all ``-inf`` or has an entry more
    than ``span`` below its largest, which as a probability scaled by the
    largest would round to zero."""
    tops = np.empty(live.shape[0])
    for i, t in enumerate(live):
        top = -np.inf
        for e in range(t_offset[t], t_offset[t + 1]):
            top = max(top, t_values[e])
        if top == -np.inf:
            return tops, False
        for e in range(t_offset[t], t_offset[t + 1]):
            if t_values[e] > -np.inf and t_values[e] < top - span:
                return tops, False
        tops[i] = top
    return tops, True


@nb.njit(cache=True)
def _tables_left(live, t_ptr, t_var, t_offset, t_values, tops, position, arity):
    """The tables ``live`` as flat log tables (``flat_tables``' layout) over the
    variables left, variable ``v`` renumbered ``position[v]``, each less its
    largest entry ``tops``."""
    ptr = np.zeros(live.shape[0] + 1, dtype=np.int64)
    offset = np.zeros(live.shape[0], dtype=np.int64)
    total = 0
    for i, t in enumerate(live):
        ptr[i + 1] = ptr[i] + t_ptr[t + 1] - t_ptr[t]
        offset[i] = total
        total += t_offset[t + 1] - t_offset[t]
    var = np.empty(ptr[-1], dtype=np.int64)
    stride = np.empty(ptr[-1], dtype=np.int64)
    values = np.empty(total)
    for i, t in enumerate(live):
        step = 1
        for j in range(t_ptr[t + 1] - t_ptr[t] - 1, -1, -1):
            var[ptr[i] + j] = position[t_var[t_ptr[t] + j]]
            stride[ptr[i] + j] = step
            step *= arity[t_var[t_ptr[t] + j]]
        for e in range(t_offset[t + 1] - t_offset[t]):
            values[offset[i] + e] = t_values[t_offset[t] + e] - tops[i]
    return ptr, var, stride, offset, values


@nb.njit(cache=True)
def _table_over(scope, head, nxt, itab, alive, t_ptr, t_var):
    """The live table over exactly the variables of ``scope`` (in any order), or -1."""
    k = head[scope[0]]
    while k >= 0:
        t = itab[k]
        if alive[t] and t_ptr[t + 1] - t_ptr[t] == scope.shape[0]:
            same = True
            for j in range(t_ptr[t], t_ptr[t + 1]):
                inside = False
                for v in scope:
                    inside = inside or t_var[j] == v
                same = same and inside
            if same:
                return t
        k = nxt[k]
    return -1
