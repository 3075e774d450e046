"""The MPE of a model asked once: one max-sum pass up a clique tree.

A :class:`~twlib.inference.JunctionTree` keeps every clique table for the
queries to come and calibrates them by sum-product when it is built.  A
single MPE needs neither.  Here each clique's log-table is made, leaves
first, from its factors and its children's messages in one walk
(:func:`~twlib.inference.table_walk.sum_factors`), maximised onto the
separator to its parent in a second (:func:`~twlib.inference.table_walk.max_out`),
and then dropped.  The assignment is read back down from the root: given its
separator's states, a clique's best states are those of the few entries
left, summed again from its factors and children's messages
(:func:`~twlib.inference.table_walk.best_trailing_states`), so the pass keeps
no best entry per separator entry, which would double its memory; only
cliques with many entries per separator entry keep them.  The memory is the
largest clique table plus the messages, not the sum of the tables, and each
table is walked twice.
"""
from __future__ import annotations

import math

import numpy as np

from .. import clock
from ..errors import MemoryBudgetExceeded
from ..factors import ZeroEvidenceError, as_factor_model
from ..graphs import clique_tree, elimination_order
from .costs import check_memory_budget
from .evidence import evidence_indices
from .results import MPEResult
from .table_walk import best_trailing_states, max_out, sum_factors

__all__ = ["max_sum_mpe"]

# a clique with more entries than this per entry of its separator keeps its
# best entries through the pass (its separator is small beside its table):
# summing them again on the way down costs more than the walk there did
KEPT_ABOVE_ENTRIES = 256


def max_sum_mpe(model, evidence=None, *, order=None, max_memory_gb: float = 4.0) -> MPEResult:
    """The most probable assignment of ``model`` (a Bayesian network or factor
    model) given ``evidence`` ``{variable: state}``, exact, by one max-sum
    pass over the clique tree of elimination ``order`` (by default that of
    :func:`~twlib.graphs.elimination_order`).  Its ``log_value`` is the log of
    the product of the factors there (``log P(x, e)`` for a Bayesian
    network).  Raises :class:`MemoryBudgetExceeded` when the largest clique
    table and the messages would pass ``max_memory_gb``, and
    :class:`ZeroEvidenceError` when every assignment has probability zero.

    >>> from twlib.datasets import load_network
    >>> res = max_sum_mpe(load_network("asia"), {"dysp": "yes", "smoke": "no"})
    >>> res.assignment["bronc"], res.assignment["lung"], round(res.log_value, 4)
    ('yes', 'no', -2.2017)
    """
    model = as_factor_model(model)
    check_memory_budget(max_memory_gb)
    started = clock.now()
    observed = evidence_indices(model, evidence)
    if not model.variables:
        return MPEResult.exact({}, model.log_values(np.zeros((1, 0), dtype=np.int64))[0],
                               "junction tree", width=0, seconds=clock.now() - started)
    index = {v: k for k, v in enumerate(model.variables)}
    arity = np.array([model.arity(v) for v in model.variables], dtype=np.int64)
    graph = model.interaction_graph()
    if order is None:
        order = elimination_order(graph, weights={v: model.arity(v) for v in model.variables})
    cliques, edges = clique_tree(graph, list(order))
    layout = _layout([[index[v] for v in c] for c in cliques], edges, arity,
                     model.flat_log_tables(), {index[v]: s for v, s in observed.items()})
    # the largest table, the logs with the messages after them
    need = 8 * (layout["largest"] + layout["message_from"] + layout["messages"]) / 2**30
    if need > max_memory_gb:
        raise MemoryBudgetExceeded(
            f"the max-sum pass over {model.name!r} needs about {need:.3g} GiB (largest clique "
            f"table {layout['largest']:.3g} entries), over the budget of {max_memory_gb} GiB")
    # one allocation, each page of it touched once
    logs = np.empty(layout["message_from"] + layout["messages"])
    logs[:layout["message_from"]] = layout["logs"]
    logs[layout["message_from"]:] = -np.inf
    states = np.zeros(len(model.variables), dtype=np.int64)
    if not _max_sum_pass(logs, layout["message_from"], layout["cvar_ptr"],
                         layout["cvar"], layout["ccard"], layout["up"], layout["f_ptr"],
                         layout["f_off"], layout["row_ptr"], layout["rows"],
                         layout["sep_off"], np.empty(layout["largest"]), states):
        raise ZeroEvidenceError(f"every assignment of {model.name!r} has probability zero"
                                + (f" given {evidence}" if observed else ""))
    return MPEResult.exact(model.labelled(states), model.log_values([states])[0],
                           "junction tree", width=max(len(c) for c in cliques) - 1,
                           seconds=clock.now() - started)


def _layout(cliques, edges, arity, tab, observed) -> dict:
    """The clique tree as flat arrays for :func:`_max_sum_pass`, cliques in
    preorder from the last clique eliminated: each clique's variables (those
    it shares with its parent first, in the parent's order, so that
    maximising onto the separator runs over trailing axes), their strides in
    the separator to the parent (``up``), and the factors each clique's walk
    adds with their stride rows: the model's tables that fit it first (each
    in the smallest such clique), a log-indicator per observed variable, the
    children's messages.  ``logs`` holds the tables' logs, the indicators,
    then (not made here) the messages from ``message_from``."""
    ptr, var, stride, offset, values = tab
    n = len(cliques)
    nbrs = [[] for _ in range(n)]
    for i, j in edges:
        nbrs[i].append(j)
        nbrs[j].append(i)
    parent, preorder = {n - 1: None}, [n - 1]
    for i in preorder:
        for j in nbrs[i]:
            if j not in parent:
                parent[j] = i
                preorder.append(j)
    for i in preorder[1:]:
        shared = [v for v in cliques[parent[i]] if v in cliques[i]]
        cliques[i] = shared + [v for v in cliques[i] if v not in shared]
    holding = [set() for _ in arity]
    for i, c in enumerate(cliques):
        for v in c:
            holding[v].add(i)

    def home(scope):
        return min(set.intersection(*(holding[v] for v in scope)),
                   key=lambda i: (len(cliques[i]), i))

    # each factor of a clique: (its first entry in logs, its strides by variable)
    added = {i: [] for i in range(n)}
    for t in range(len(offset)):
        scope = var[ptr[t]:ptr[t + 1]].tolist()
        # a table of no variable is a constant: the root adds it (a zero there
        # makes every assignment zero)
        added[home(scope) if scope else n - 1].append(
            (offset[t], dict(zip(scope, stride[ptr[t]:ptr[t + 1]].tolist()))))
    indicators = []
    for v, s in observed.items():
        added[home([v])].append((len(values) + sum(map(len, indicators)), {v: 1}))
        indicators.append(np.where(np.arange(arity[v]) == s, 0.0, -np.inf))
    message_from = len(values) + sum(map(len, indicators))
    position = {i: t for t, i in enumerate(preorder)}
    up, sep_off = {}, [0]
    for i in preorder:
        sep = [] if parent[i] is None else [v for v in cliques[i] if v in cliques[parent[i]]]
        sizes = [arity[v] for v in sep]
        up[i] = {v: math.prod(sizes[k + 1:]) for k, v in enumerate(sep)}
        sep_off.append(sep_off[-1] + math.prod(sizes))
    for i in preorder[1:]:
        added[parent[i]].append((message_from + sep_off[position[i]], up[i]))
    cvar, f_ptr, f_off, rows, row_ptr = [], [0], [], [], [0]
    for i in preorder:
        cvar += cliques[i]
        f_off += [first for first, _ in added[i]]
        rows += [strides.get(v, 0) for _, strides in added[i] for v in cliques[i]]
        f_ptr.append(len(f_off))
        row_ptr.append(len(rows))
    as_int = lambda a: np.array(a, dtype=np.int64)  # noqa: E731
    return dict(logs=np.concatenate([values, *indicators]), message_from=message_from, messages=sep_off[-1],
                largest=max(math.prod(arity[v] for v in c) for c in cliques),
                cvar_ptr=as_int(np.cumsum([0] + [len(cliques[i]) for i in preorder])),
                cvar=as_int(cvar), ccard=arity[as_int(cvar)],
                up=as_int([up[i].get(v, 0) for i in preorder for v in cliques[i]]),
                f_ptr=as_int(f_ptr), f_off=as_int(f_off), row_ptr=as_int(row_ptr),
                rows=as_int(rows), sep_off=as_int(sep_off))


def _max_sum_pass(logs, message_from, cvar_ptr, cvar, ccard, up, f_ptr, f_off, row_ptr, rows,
                  sep_off, table, states):
    """Max-sum up the tree of :func:`_layout`, leaves first, into the message
    room of ``logs`` (``-inf`` before; the root's peak first), then the best
    states down from the root into ``states``; False when the peak is
    ``-inf``.  ``table`` holds the largest clique table.  The walks are
    compiled; the loop over the cliques is not, which saves compiling them
    again inside it (seconds on a cold cache) for a few microseconds a
    clique."""
    messages = logs[message_from:]
    none, unkept = f_off[:0], f_off[:0]
    kept = {}
    for t in range(len(cvar_ptr) - 2, -1, -1):
        c0, c1 = cvar_ptr[t], cvar_ptr[t + 1]
        sum_factors(table, ccard, c0, c1 - c0, rows[row_ptr[t]:row_ptr[t + 1]],
                    f_ptr[t + 1] - f_ptr[t], logs, f_off[f_ptr[t]:f_ptr[t + 1]])
        s0, s1 = int(sep_off[t]), int(sep_off[t + 1])
        if t == 0 or math.prod(ccard[c0:c1].tolist()) > KEPT_ABOVE_ENTRIES * (s1 - s0):
            kept[t] = np.full(s1 - s0, -1, dtype=np.int64)
            max_out(table, 0, ccard, c0, c1 - c0, up[c0:c1], 0, logs, none, messages[s0:s1],
                    kept[t], 0)
        else:
            max_out(table, 0, ccard, c0, c1 - c0, up[c0:c1], 0, logs, none, messages, unkept, s0)
    if messages[sep_off[0]] == -np.inf:
        return False
    for t in range(len(cvar_ptr) - 1):
        c0, c1 = cvar_ptr[t], cvar_ptr[t + 1]
        if t in kept:
            # the separator's entry, from the states decoded above
            entry = kept[t][int(states[cvar[c0:c1]] @ up[c0:c1])]
            states[cvar[c0:c1]] = np.unravel_index(entry, ccard[c0:c1])
        else:
            best_trailing_states(states, cvar, ccard, c0, c1 - c0,
                                 np.count_nonzero(up[c0:c1]), rows[row_ptr[t]:row_ptr[t + 1]],
                                 f_ptr[t + 1] - f_ptr[t], logs, f_off[f_ptr[t]:f_ptr[t + 1]])
    return True
