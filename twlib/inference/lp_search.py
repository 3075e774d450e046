"""Best-first branch and bound on the LP relaxation, branching where the LP is least sure.

The mini-bucket heuristic of :mod:`twlib.inference.dive` is computed once,
along one elimination order, before the search starts.  On instances whose LP
relaxation is nearly tight but full of ties (the Promedas diagnosis networks:
MPLP's bound within a few hundredths of the optimum at the root) it stays flat
for dozens of levels: assigning the first variables of the order changes no
message, so a search guided by it cannot tell the branches apart.  The LP can,
once it is solved again with those variables fixed.

So this search keeps its own nodes: a node is a partial assignment of any
variables, its bound MPLP on the tables conditioned on it
(:func:`~twlib.inference.cost_shifting.conditioned_bound`, warm-started from the
root's shifted tables), and a node whose bound does not beat the incumbent is
dropped.  A node that survives

* is rounded into a complete assignment
  (:func:`~twlib.inference.cost_shifting.rounded_assignment`), which may become
  the incumbent, and
* branches on the free variable whose two best LP beliefs are closest
  (:func:`~twlib.inference.cost_shifting.branching_variable`): a variable order
  chosen anew at every node, as the LP sees it, where the mini-bucket heuristic
  is tied to one static order.

Nodes are expanded largest bound first, so the proved bound (the largest open
node's) falls steadily: LP-based branch and bound (Land & Doig 1960) with the
MPLP dual (Globerson & Jaakkola 2007) as its bound.  The portfolio
(:mod:`twlib.inference.portfolio`) runs it in turns with the mini-bucket
searches, sharing their incumbent.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..heaps import heap_pop, heap_push
from .engine import Engine
from .flat import table_sizes, tables_total, to_beat
from .cost_shifting import (branching_variable, conditioned_bound, rounded_assignment,
                            star_gathers)

__all__ = ["LPSearch", "lp_arrays", "round_into_incumbent"]

# Nodes kept (48 bytes each with the heap, touched only as they fill); a search
# that fills them stops and leaves the proof to the others
_LP_NODES = 1 << 20


def lp_arrays(tab, count: int, arity, sweeps: int):
    """What a compiled search needs to bound a partial assignment by MPLP on the
    first ``count`` flat tables of ``tab`` (:func:`twlib.inference.flat.flat_tables`)
    over variables with ``arity`` values:
    ``(fixed, count, offset, size, work, inc_ptr, gather_ptr, gather, sweeps,
    trial)``, with ``fixed`` a clear mask, ``work`` and ``trial`` scratch, and
    the tables around each variable as :func:`~twlib.inference.cost_shifting.star_gathers`
    lists them.

    >>> from twlib.inference.flat import flat_tables
    >>> lp = lp_arrays(flat_tables([((0, 1), np.zeros((2, 3)))]), 1, np.array([2, 3]), 10)
    >>> lp[3].tolist(), len(lp[4])
    ([6], 6)
    """
    offset, values = tab[3], tab[4]
    end = offset[count] if count < len(offset) else len(values)
    n_vars = len(arity)
    return (np.zeros(n_vars, dtype=np.bool_), count, offset, table_sizes(tab), np.empty(end),
            *star_gathers(tab, arity, count), sweeps, np.zeros(n_vars, dtype=np.int64))


@nb.njit(cache=True)
def round_into_incumbent(assign, lp, tab, arity, scalars, best):
    """Round the LP that ``conditioned_bound`` left in ``lp``'s work tables, from
    ``assign`` where ``lp``'s mask is set, and make it the incumbent
    (``scalars[0]``, ``best``) if it is better; returns whether it was."""
    fixed, count, _, _, work, inc_ptr, gather_ptr, gather, _, trial = lp
    trial[:] = assign
    rounded_assignment(fixed, trial, work, arity, inc_ptr, gather_ptr, gather, 1)
    value = tables_total(trial, count, tab)
    if not value > scalars[0]:
        return False
    scalars[0] = value
    best[:] = trial
    return True


class LPSearch(Engine):
    """The search's state in flat arrays, so that it can stop and resume: an
    engine of the portfolio (:mod:`twlib.inference.engine`).

    ``lp`` is :func:`lp_arrays` of ``tab``, ``arity`` the variables' numbers of
    states, ``root_bound`` a proved upper bound at the root; ``scalars[0]``
    (the incumbent's value) and ``best`` (its assignment) are shared with the
    other searches of the same run, so an incumbent found by any of them prunes
    here and the other way round.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree, mini_buckets
    >>> from twlib.inference.flat import flat_tables
    >>> net = load_network("asia")
    >>> mb = mini_buckets(net, 2, {"dysp": "yes"}, mplp_time_limit=1)
    >>> tab = flat_tables(mb.tables)
    >>> lp = lp_arrays(tab, mb.originals, mb.arity, 50)
    >>> search = LPSearch(lp, tab, mb.arity, np.array([-np.inf]), np.zeros(8, dtype=np.int64),
    ...                   root_bound=mb.bound)
    >>> while not search.finished:
    ...     _ = search.run(10)
    >>> round(search.incumbent - JunctionTree(net).mpe({"dysp": "yes"}).log_value, 9)
    0.0
    """

    name = "lp"
    FINISHED = 3

    def __init__(self, lp, tab, arity, scalars, best, *, root_bound: float = np.inf,
                 capacity: int = _LP_NODES):
        self.lp, self.tab = lp, tab
        self.root_bound = root_bound
        self.arity = np.asarray(arity, dtype=np.int64)
        self.scalars, self.best = scalars, best
        self.assign = np.zeros(len(self.arity), dtype=np.int64)
        self.node_parent = np.empty(capacity, dtype=np.int64)
        self.node_var = np.empty(capacity, dtype=np.int64)
        self.node_value = np.empty(capacity, dtype=np.int64)
        self.heap = (np.empty(capacity), np.empty(capacity, dtype=np.int64),
                     np.empty(capacity, dtype=np.int64))
        # nodes, heap size, nodes bounded, finished, store full
        self.state = np.zeros(5, dtype=np.int64)
        self.reset()

    def reset(self) -> None:
        """Back to the root alone (the incumbent is the caller's)."""
        self.state[:] = 0
        self.node_parent[0], self.node_var[0], self.node_value[0] = -1, -1, 0
        self.state[1] = heap_push(*self.heap, 0, -self.root_bound, 0, 0)
        self.state[0] = 1

    @property
    def stalled(self) -> bool:
        """Whether the node store is full, so that the search cannot go on."""
        return bool(self.state[4])

    @property
    def work_done(self) -> int:
        """How many nodes have been bounded by MPLP since the reset."""
        return int(self.state[2])

    def bound(self) -> float:
        """The largest bound of an open node (or the incumbent)."""
        if self.finished or self.state[1] == 0:
            return self.incumbent
        return max(self.incumbent, -float(self.heap[0][0]))

    def run(self, budget: int) -> int:
        """Bound up to ``budget`` nodes; returns how many it bounded."""
        if self.finished or self.stalled:
            return 0
        before = self.state[2]
        _lp_best_first(self.state, self.scalars, self.best, self.assign, self.node_parent,
                       self.node_var, self.node_value, *self.heap, self.lp, self.tab,
                       self.arity, budget)
        return int(self.state[2] - before)


@nb.njit(cache=True)
def _lp_best_first(state, scalars, best, assign, node_parent, node_var, node_value, heap_f,
                   heap_d, heap_node, lp, tab, arity, budget):
    """Bound, round and branch up to ``budget`` open nodes, largest bound first."""
    fixed, count, offset, size, work, inc_ptr, gather_ptr, gather, sweeps, trial = lp
    values = tab[4]
    capacity = node_parent.shape[0]
    nodes, heap_n = state[0], state[1]
    tests = 0
    while tests < budget:
        floor = to_beat(scalars[0])
        if heap_n == 0 or not -heap_f[0] > floor:
            state[3] = 1
            heap_n = 0
            break
        minus_f, node, heap_n = heap_pop(heap_f, heap_d, heap_node, heap_n)
        depth = 0
        j = node
        while j > 0:
            fixed[node_var[j]] = True
            assign[node_var[j]] = node_value[j]
            depth += 1
            j = node_parent[j]
        bound = conditioned_bound(fixed, assign, count, offset, size, values, work, arity,
                                  inc_ptr, gather_ptr, gather, sweeps, floor)
        tests += 1
        if bound > floor:
            # chosen before rounding, which clamps the tables it reads
            x = branching_variable(fixed, work, arity, inc_ptr, gather_ptr, gather)
            if round_into_incumbent(assign, lp, tab, arity, scalars, best):
                floor = to_beat(scalars[0])
            # with no variable left to branch on, the rounding is the node's one completion
            if x >= 0 and bound > floor:
                if nodes + arity[x] > capacity:
                    heap_n = heap_push(heap_f, heap_d, heap_node, heap_n, minus_f, depth, node)
                    state[4] = 1
                else:
                    for a in range(arity[x]):
                        node_parent[nodes] = node
                        node_var[nodes] = x
                        node_value[nodes] = a
                        heap_n = heap_push(heap_f, heap_d, heap_node, heap_n, -bound,
                                           depth + 1, nodes)
                        nodes += 1
        j = node
        while j > 0:
            fixed[node_var[j]] = False
            j = node_parent[j]
        if state[4]:
            break
    state[0], state[1] = nodes, heap_n
    state[2] += tests
