"""Mini-bucket elimination: variable elimination with its width bounded, giving bounds.

Bucket elimination processes the variables along an elimination order; the
bucket of ``X`` holds every function whose earliest-eliminated variable is
``X``, and eliminating ``X`` combines them into one message over all their other
variables, whose size is what makes exact inference stop.  Mini-bucket
elimination MBE(i) (Dechter & Rish 2003) splits a bucket into *mini-buckets* of
at most ``i`` variables each and eliminates ``X`` from each separately.  Since
``max_x f(x) g(x) <= max_x f(x) max_x g(x)``, the result bounds the exact one
from above: MBE(i) returns an upper bound on the MPE value, and for sums a
Hölder split (weighted mini-buckets, Liu & Ihler 2011) an upper bound on log Z
or log P(e); taking ``min`` instead of ``max`` in all but one mini-bucket gives a
lower bound.

Before ``X`` is eliminated from a bucket under ``max``, the mini-buckets' max-
marginals over ``X`` are matched to their geometric mean (moment matching, or
cost shifting in log space; Flerova, Ihler, Dechter & Otten 2011).  The product
of the bucket is unchanged, so the bound stays a bound, and it can only get
tighter.

Every message is kept with the bucket it came from and the bucket it went to:
that is the static heuristic of :mod:`twlib.inference.dive`, which assigns
variables in reverse elimination order and, for each partial assignment, adds
the messages that are already fully assigned to the functions that are.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx
import numpy as np

from ..errors import InputError, MemoryBudgetExceeded, ZeroEvidenceError
from ..factors import as_factor_model
from ..graphs import FILL_BUDGET, elimination_order
from .cost_shifting import mplp
from .costs import MESSAGE_BYTES_PER_SECOND, check_memory_budget
from .evidence import evidence_indices
from .table_walk import summed_tables

__all__ = ["MiniBuckets", "ShiftedTables", "shifted_tables", "mini_buckets", "check_i_bound",
           "message_bytes", "largest_i_bound", "log_tables", "merged_tables", "default_order",
           "affordable_i_bound", "TASKS"]

#: What a mini-bucket pass bounds: the MPE value (``"max"``), log Z or log P(e)
#: from above (``"sum"``) or from below (``"sum-lower"``).
TASKS = ("max", "sum", "sum-lower")


@dataclass
class MiniBuckets:
    """The outcome of one mini-bucket pass.

    ``bound`` is the bound on the log of the MPE value or of Z (``P(e)`` for a
    Bayesian network with evidence), ``order`` the elimination order (variable
    indices of the model, evidence variables left out), and ``tables`` every
    function as ``(scope, log table)``: the model's factors reduced by the
    evidence first, then the messages.  ``placed[v]`` lists the tables in the
    bucket of variable ``v`` (ids into ``tables``), ``generated[v]`` the messages
    its bucket produced; ``constant`` is the sum of the tables with empty scope.
    """

    task: str
    i_bound: int
    bound: float
    order: list
    arity: np.ndarray
    tables: list
    placed: list
    generated: list
    constant: float
    evidence: dict
    stats: dict = field(default_factory=dict)

    @property
    def originals(self) -> int:
        """How many of ``tables`` come first from the model (the rest are messages)."""
        return len(self.tables) - sum(len(g) for g in self.generated)


def log_tables(model, evidence=None):
    """The model's factors reduced by ``evidence`` as ``(scope, log table)`` pairs
    over variable indices, with the arities and the evidence as indices; a
    Bayesian network is taken as its CPTs.

    >>> from twlib.datasets import load_network
    >>> tables, arity, _ = log_tables(load_network("asia"), {"smoke": "yes"})
    >>> len(tables), int(arity.sum())
    (8, 16)
    """
    model = as_factor_model(model)
    ev = evidence_indices(model, evidence)
    index = {v: k for k, v in enumerate(model.variables)}
    arity = np.array([model.arity(v) for v in model.variables], dtype=np.int64)
    tables = []
    with np.errstate(divide="ignore"):
        for f in model.factors:
            reduced = f.reduce(ev) if ev and not ev.keys().isdisjoint(f.variables) else f
            tables.append((tuple(index[v] for v in reduced.variables),
                           np.log(np.asarray(reduced.values, dtype=float))))
    return tables, arity, {index[v]: s for v, s in ev.items()}


@dataclass
class ShiftedTables:
    """The model's log tables reduced by the evidence and reparameterised by MPLP,
    before any message: ``tables`` (``(scope, log table)`` over variable indices),
    ``arity``, ``evidence`` and ``order`` as in :class:`MiniBuckets`,
    ``lp_bounds`` the LP bound before and after MPLP, and ``closed`` an
    assignment (state indices) whose value reached the bound, which proves it
    optimal, or None.  ``tables`` is None only for turns of MPLP and search
    that answered the query before they were needed
    (:class:`~twlib.inference.search.ShiftAndProbe`).  ``given_order`` is the
    order asked for (indices), or None for min-fill, which is computed when
    ``order`` is first read: a search that ends before its mini-buckets never
    needs it."""

    tables: list | None
    arity: np.ndarray
    evidence: dict
    lp_bounds: np.ndarray
    closed: np.ndarray | None = None
    given_order: list | None = None

    @cached_property
    def order(self) -> list:
        """The elimination order of the mini-buckets (variable indices)."""
        if self.given_order is not None:
            return self.given_order
        return _min_fill(self.tables, [v for v in range(len(self.arity))
                                       if v not in self.evidence])


def shifted_tables(model, evidence=None, *, order=None, mplp_time_limit: float = 1.0
                   ) -> ShiftedTables:
    """The tables a max-product pass starts from, shifted by MPLP for at most
    ``mplp_time_limit`` (:func:`twlib.inference.cost_shifting.mplp`); pass them to
    :func:`mini_buckets` to compute its messages from them.

    >>> from twlib.datasets import load_network
    >>> shifted = shifted_tables(load_network("asia"), {"dysp": "yes"})
    >>> len(shifted.tables), bool(shifted.lp_bounds[-1] <= shifted.lp_bounds[0])
    (8, True)
    """
    if not mplp_time_limit >= 0:
        raise InputError(f"mplp_time_limit must be >= 0, got {mplp_time_limit!r}")
    tables, arity, ev = log_tables(model, evidence)
    tables = merged_tables(tables)
    given = None if order is None else _checked_order(ev, list(model.variables), order)
    lp_bounds, closed = np.array([np.inf]), None
    if mplp_time_limit > 0:
        tables, lp_bounds, closed = mplp(tables, arity, time_limit=mplp_time_limit, decode=True)
    return ShiftedTables(tables=tables, arity=arity, evidence=ev, lp_bounds=lp_bounds,
                         closed=closed, given_order=given)


def mini_buckets(model, i_bound: int = 10, evidence=None, *, task: str = "max", order=None,
                 moment_matching: bool = True, max_memory_gb: float = 4.0,
                 mplp_time_limit: float = 0.0, shifted: ShiftedTables | None = None
                 ) -> MiniBuckets:
    """Mini-bucket elimination MBE(i) on a Bayesian network or factor model.

    ``i_bound`` caps the number of variables of a mini-bucket (the eliminated one
    included), so no message has more than ``i_bound - 1``; an i-bound at least
    the induced width plus one is exact elimination.  ``task`` is one of
    :data:`TASKS`; ``order`` an elimination order of variable names (default
    min-fill on the interaction graph after the evidence).  MemoryBudgetExceeded
    when the messages would pass ``max_memory_gb``.  With ``mplp_time_limit`` (task
    ``"max"`` only) the tables are first reparameterised by MPLP for at most that
    long (:func:`twlib.inference.cost_shifting.mplp`), and the bound is the
    smaller of the LP bound and the mini-buckets'.  ``shifted``
    (:func:`shifted_tables` of the same model and evidence) gives those tables
    instead, and then ``order`` and ``mplp_time_limit`` are not used.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree
    >>> net = load_network("asia")
    >>> exact = JunctionTree(net).mpe({"dysp": "yes"}).log_value
    >>> mini_buckets(net, 2, {"dysp": "yes"}).bound >= exact
    True
    >>> round(mini_buckets(net, 8, {"dysp": "yes"}).bound - exact, 9)
    0.0
    """
    check_i_bound(i_bound)
    if task not in TASKS:
        raise InputError(f"task must be one of {TASKS}, got {task!r}")
    check_memory_budget(max_memory_gb)
    if not mplp_time_limit >= 0 or (mplp_time_limit > 0 and task != "max"):
        raise InputError(f"mplp_time_limit must be >= 0 and is for the task 'max' only, got "
                         f"{mplp_time_limit!r} with task {task!r}")
    if shifted is None:
        shifted = shifted_tables(model, evidence, order=order, mplp_time_limit=mplp_time_limit)
    elif task != "max":
        raise InputError(f"shifted tables are for the task 'max' only, got {task!r}")
    tables, arity, ev, order = (list(shifted.tables), shifted.arity, shifted.evidence,
                                shifted.order)
    lp_bounds = shifted.lp_bounds
    position = {v: k for k, v in enumerate(order)}
    n = len(arity)
    placed, generated = [[] for _ in range(n)], [[] for _ in range(n)]
    constant = 0.0
    for t, (scope, values) in enumerate(tables):
        if scope:
            placed[min(scope, key=position.__getitem__)].append(t)
        else:
            constant += float(values)
    used, largest = _plan([scope for scope, _ in tables], arity, order, i_bound)
    if used > max_memory_gb * 2**30:
        raise MemoryBudgetExceeded(
            f"mini-bucket elimination with i-bound {i_bound} needs {used / 2**30:.3g} GiB, over "
            f"the budget of {max_memory_gb} GiB; lower the i-bound")
    for x in order:
        messages = _eliminate(x, placed[x], tables, arity, i_bound, task, moment_matching,
                              position)
        for scope, values in messages:
            tables.append((scope, values))
            generated[x].append(len(tables) - 1)
            if scope:
                placed[min(scope, key=position.__getitem__)].append(len(tables) - 1)
            else:
                constant += float(values)
    if np.isnan(constant) or (task != "sum-lower" and constant == -np.inf):
        raise ZeroEvidenceError("the evidence has probability zero (an upper bound on it is 0)")
    return MiniBuckets(task=task, i_bound=int(i_bound), bound=float(min(constant, lp_bounds[-1])),
                       order=order, arity=arity, tables=tables, placed=placed,
                       generated=generated, constant=constant, evidence=ev,
                       stats={"largest_scope": largest, "message_bytes": used,
                              "messages": sum(len(g) for g in generated),
                              "mplp_bounds": lp_bounds[[0, -1]].tolist()})


def check_i_bound(i_bound) -> None:
    """InputError unless ``i_bound`` is an integer of at least 1.

    >>> check_i_bound(0)
    Traceback (most recent call last):
    ...
    twlib.errors.InputError: the i-bound must be an integer >= 1, got 0
    """
    if isinstance(i_bound, bool) or not isinstance(i_bound, (int, np.integer)) or i_bound < 1:
        raise InputError(f"the i-bound must be an integer >= 1, got {i_bound!r}")


def message_bytes(model, i_bound: int, evidence=None, *, order=None) -> int:
    """Bytes the messages of MBE(``i_bound``) would take, from their scopes alone.

    >>> from twlib.datasets import load_network
    >>> message_bytes(load_network("asia"), 2) < message_bytes(load_network("asia"), 3)
    True
    """
    shifted = shifted_tables(model, evidence, order=order, mplp_time_limit=0)
    return _plan([scope for scope, _ in shifted.tables], shifted.arity, shifted.order,
                 i_bound)[0]


def default_order(model, evidence=None) -> list:
    """The elimination order (names) a pass uses when given none: min-fill on the
    interaction graph of the variables without evidence.

    >>> from twlib.datasets import load_network
    >>> len(default_order(load_network("asia"), {"smoke": "yes"}))
    7
    """
    model = as_factor_model(model)
    order = shifted_tables(model, evidence, mplp_time_limit=0).order
    return [model.variables[v] for v in order]


def largest_i_bound(model, evidence, max_memory_gb: float, *, cap: int = 30,
                    order=None) -> int:
    """The largest i-bound (at most ``cap``, at least 1) whose messages fit ``max_memory_gb``
    along ``order`` (names; default :func:`default_order`).

    >>> from twlib.datasets import load_network
    >>> largest_i_bound(load_network("alarm"), {}, 1.0, cap=6)
    6
    """
    shifted = shifted_tables(model, evidence, order=order, mplp_time_limit=0)
    scopes, arity, order = [scope for scope, _ in shifted.tables], shifted.arity, shifted.order
    low, high = 1, cap
    while low < high:
        mid = (low + high + 1) // 2
        if _plan(scopes, arity, order, mid)[0] <= max_memory_gb * 2**30:
            low = mid
        else:
            high = mid - 1
    return low


def affordable_i_bound(model, evidence, max_memory_gb: float, time_limit: float, *,
                       order=None) -> int:
    """The largest i-bound whose messages fit ``max_memory_gb`` and take about
    ``time_limit`` seconds to compute.

    >>> from twlib.datasets import load_network
    >>> affordable_i_bound(load_network("alarm"), {}, 1.0, 10.0) >= 5
    True
    """
    affordable = MESSAGE_BYTES_PER_SECOND * time_limit / 2**30
    return largest_i_bound(model, evidence, min(max_memory_gb, affordable), order=order)


def _plan(scopes, arity, order, i_bound):
    """``(bytes, largest mini-bucket scope)`` of a pass, by its scopes alone."""
    position = {v: k for k, v in enumerate(order)}
    placed = [[] for _ in range(len(arity))]
    for scope in scopes:
        if scope:
            placed[min(scope, key=position.__getitem__)].append(tuple(scope))
    used, largest = 0, 0
    for x in order:
        for variables, _ in _groups(placed[x], i_bound):
            largest = max(largest, len(variables))
            rest = [v for v in variables if v != x]
            used += 8 * math.prod(int(arity[v]) for v in rest)
            if rest:
                placed[min(rest, key=position.__getitem__)].append(tuple(rest))
    return used, largest


def merged_tables(tables):
    """Tables over the same variables added into one, in the first one's axis order.

    Apart, each is bounded by its own maximum and MPLP treats them as separate
    factors that need only agree on single variables; summed, their bound is the
    maximum of the sum, never looser, and every pass has fewer tables to visit
    (the UAI ``wcsp`` instances list most pairs several times).

    >>> [(scope, t.tolist()) for scope, t in merged_tables(
    ...     [((0, 1), np.eye(2)), ((1, 0), np.ones((2, 2))), ((1,), np.zeros(2))])]
    [((0, 1), [[2.0, 1.0], [1.0, 2.0]]), ((1,), [0.0, 0.0])]
    """
    merged = {}
    for scope, values in tables:
        key = frozenset(scope)
        if key in merged:
            first, total = merged[key]
            merged[key] = (first, total + np.transpose(values, [scope.index(v) for v in first]))
        else:
            merged[key] = (scope, values)
    return list(merged.values())


def _min_fill(tables, free):
    """A min-fill order (indices) of the variables ``free`` in the tables' graph,
    going on by min-degree past :data:`~twlib.graphs.FILL_BUDGET`."""
    graph = nx.Graph()
    graph.add_nodes_from(free)
    for scope, _ in tables:
        graph.add_edges_from((a, b) for i, a in enumerate(scope) for b in scope[i + 1:])
    return (list(elimination_order(graph, method="min-fill", fill_budget=FILL_BUDGET))
            if free else [])


def _checked_order(evidence, names, order):
    """``order`` (names) as indices, without the variables in ``evidence``."""
    index = {v: k for k, v in enumerate(names)}
    unknown = [v for v in order if v not in index]
    if unknown:
        raise InputError(f"the order names unknown variables {unknown}")
    given = [index[v] for v in order if index[v] not in evidence]
    if sorted(given) != [v for v in range(len(names)) if v not in evidence]:
        raise InputError("the order must list every variable without evidence exactly once")
    return given


def _groups(scopes, i_bound):
    """First-fit of scopes, largest first (ties in the order given), into mini-buckets
    of at most ``i_bound`` variables (a scope larger than that stays alone); returns
    each mini-bucket's variables and the positions of its members."""
    out = []
    for k in sorted(range(len(scopes)), key=lambda k: -len(scopes[k])):
        scope = set(scopes[k])
        for group in out:
            if len(group[0] | scope) <= i_bound:
                group[0] |= scope
                group[1].append(k)
                break
        else:
            out.append([scope, [k]])
    return out


def _partition(members, tables, i_bound):
    """The bucket's table ids split into mini-buckets (see :func:`_groups`)."""
    return [[members[k] for k in group[1]]
            for group in _groups([tables[t][0] for t in members], i_bound)]


def _combined(members, tables, scope):
    """The sum of the members' log tables over ``scope`` (broadcast), in one
    compiled walk (:func:`~twlib.inference.table_walk.summed_tables`)."""
    card = [0] * len(scope)
    for t in members:
        s, values = tables[t]
        for v, size in zip(s, np.shape(values)):
            card[scope.index(v)] = size
    return summed_tables(scope, card, [tables[t] for t in members])


def _eliminate(x, members, tables, arity, i_bound, task, moment_matching, position):
    """The messages that eliminating ``x`` from its bucket sends on."""
    if not members:                 # a variable no function mentions: max 1, sum |X|
        return [((), np.array(0.0 if task == "max" else math.log(arity[x])))]
    groups = _partition(members, tables, i_bound)
    combined = []
    for group in groups:
        scope = sorted(set().union(*(tables[t][0] for t in group)), key=position.__getitem__)
        combined.append((scope, _combined(group, tables, scope)))
    if task == "max" and moment_matching and len(combined) > 1:
        combined = _match_max_marginals(x, combined)
    out = []
    weight = 1.0 / len(combined)
    for j, (scope, table) in enumerate(combined):
        axis = scope.index(x)
        rest = tuple(v for v in scope if v != x)
        with np.errstate(invalid="ignore"):
            if task == "max":
                message = table.max(axis=axis)
            elif task == "sum":
                message = weight * _log_sum(table / weight, axis)
            elif j == 0:
                message = _log_sum(table, axis)
            else:
                message = table.min(axis=axis)
        out.append((rest, np.asarray(message)))
    return out


def _log_sum(table, axis):
    top = table.max(axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return (np.log(np.exp(table - safe).sum(axis=axis, keepdims=True)) + safe).squeeze(axis)


def _match_max_marginals(x, combined):
    """Shift each mini-bucket by its max-marginal over ``x`` to their mean: the sum
    of the shifts is zero, so the bucket's total is unchanged.  A value of ``x``
    at which one mini-bucket is zero makes the whole bucket zero there, so every
    mini-bucket is set to zero at it (the product is unchanged too)."""
    marginals = []
    for scope, table in combined:
        axis = scope.index(x)
        others = tuple(k for k in range(table.ndim) if k != axis)
        marginals.append(table.max(axis=others) if others else table.reshape(-1))
    stacked = np.array(marginals)
    alive = np.isfinite(stacked).all(axis=0)
    if not alive.any():
        return combined
    shift = np.full(stacked.shape, -np.inf)
    shift[:, alive] = stacked[:, alive].mean(axis=0) - stacked[:, alive]
    for (scope, table), s in zip(combined, shift):
        shape = [1] * table.ndim
        shape[scope.index(x)] = -1
        table += s.reshape(shape)             # in place: the tables are the largest arrays
    return combined
