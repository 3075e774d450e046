"""The dive: hybrid best-first branch and bound on mini-bucket bounds.

The variables are assigned in reverse elimination order, so when a variable is
assigned every function in its bucket becomes fully assigned.  The value of a
partial assignment is the sum of the log functions already fully assigned plus
the mini-bucket messages that are (:mod:`twlib.inference.minibucket`): by the
mini-bucket inequality no completion scores more, so a branch whose value is at
most the incumbent is pruned, and what is never pruned is optimal (Kask &
Dechter 2001).  Children are tried best first, so the first dive is the greedy
assignment the heuristic prefers.

Depth-first search does not revisit a poor choice made near the root until it
has exhausted everything below it.  So the search is *hybrid best-first*
(Allouche, de Givry, Katsirelos, Schiex & Zytnicki 2015): each dive is
depth-first, but after a fixed number of backtracks the branches it left open
are parked as nodes (a value and a link to the parent's prefix), and the next
dive starts from the open node of largest bound.  The proved bound is then the
best open node's, which falls as the search goes on rather than only when a
subtree near the root is closed.  When the node store is full the current dive
runs to its end, so the search stays complete.

The heuristic is static, and where the LP relaxation is nearly tight but full
of ties it stays flat for dozens of levels.  So an open node popped for the
first time is bounded again by MPLP on the tables conditioned on its prefix
(:func:`~twlib.inference.cost_shifting.conditioned_bound`) and dropped when
that refutes it.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..heaps import heap_pop, heap_push
from .cost_shifting import conditioned_bound
from .engine import Engine
from .flat import flat_lists, sort_best_first, table_value, to_beat
from .lp_search import lp_arrays, round_into_incumbent

__all__ = ["DiveSearch"]

# Parked nodes (57 bytes each with the heap; the arrays are touched only as they fill)
_OPEN_NODES = 1 << 22
# Backtracks before a dive parks its open branches: enough that a dive mostly ends
# in a leaf (an incumbent), few enough that the search returns to the best bound often
_BACKTRACKS_PER_DIVE = 1000
# MPLP sweeps on the conditioned tables before a dive from an open node; they
# mostly stop early, once the node is refuted or the bound stops falling
LP_SWEEPS = 200
# Where those tests keep failing (a loose LP, as on grids), at most one node in
# 2^16 is tested
_MOST_SKIPPED_DOUBLINGS = 16


class DiveSearch(Engine):
    """The dive's state in flat arrays, so the compiled loop can stop and resume;
    ``tab`` is ``flat_tables(mb.tables)``.  Its incumbent (``scalars[0]``,
    ``best``) is the one the other engines share.

    Open nodes are kept in ``node_*`` arrays of ``capacity`` entries (a node is
    the prefix of ``seq`` through its parent plus its own value) and a heap
    (:mod:`twlib.heaps`) on their negated bounds, deeper first on ties; a dive
    parks its open branches after ``backtracks_per_dive`` backtracks.  An open
    node popped for the first time gets up to ``lp_sweeps`` sweeps of MPLP (0:
    none).

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree, mini_buckets
    >>> from twlib.inference.flat import flat_tables
    >>> mb = mini_buckets(load_network("asia"), 2, {"dysp": "yes"})
    >>> dive = DiveSearch(mb, flat_tables(mb.tables))
    >>> while not dive.finished:
    ...     _ = dive.run(100)
    >>> best = JunctionTree(load_network("asia")).mpe({"dysp": "yes"}).log_value
    >>> round(dive.incumbent - best, 9)
    0.0
    """

    name = "dive"

    def __init__(self, mb, tab, *, capacity: int = _OPEN_NODES,
                 backtracks_per_dive: int = _BACKTRACKS_PER_DIVE, lp_sweeps: int = LP_SWEEPS):
        seq = np.array(mb.order[::-1], dtype=np.int64)
        n_vars = len(mb.arity)
        self.tab = tab
        self.add_ptr, self.add_ids = flat_lists([mb.placed[v] for v in seq])
        self.sub_ptr, self.sub_ids = flat_lists([mb.generated[v] for v in seq])
        self.seq, self.arity = seq, mb.arity.astype(np.int64)
        m, top = len(seq), int(mb.arity.max()) if n_vars else 1
        self.cand_val = np.zeros((m + 1, top), dtype=np.int64)
        self.cand_f = np.full((m + 1, top), -np.inf)
        self.cand_n = np.zeros(m + 1, dtype=np.int64)
        self.cand_next = np.full(m + 1, -1, dtype=np.int64)
        self.f_at = np.full(m + 1, -np.inf)
        self.assign = np.zeros(n_vars, dtype=np.int64)
        self.best = np.zeros(n_vars, dtype=np.int64)
        # depth, finished, diving, bottom, dive's node, nodes, heap size, backtracks, limit,
        # open nodes bounded by MPLP, tests in a row that changed nothing, pops to skip
        self.state = np.zeros(12, dtype=np.int64)
        self.scalars = np.array([-np.inf, np.inf])              # incumbent, dive's cap
        self.node_parent = np.empty(capacity, dtype=np.int64)
        self.node_f = np.empty(capacity)
        self.node_tested = np.empty(capacity, dtype=np.bool_)
        self.node_value = np.empty(capacity, dtype=np.int64)
        self.node_depth = np.empty(capacity, dtype=np.int64)
        self.heap = (np.empty(capacity), np.empty(capacity, dtype=np.int64),
                     np.empty(capacity, dtype=np.int64))
        self.backtracks_per_dive = backtracks_per_dive
        self.lp = lp_arrays(tab, mb.originals, self.arity, lp_sweeps)
        self.constant = mb.constant
        self.reset()

    def reset(self) -> None:
        """Back to the root with no incumbent (the tables may have changed)."""
        self.cand_next[:] = -1
        self.f_at[0] = self.constant
        self.state[:] = 0
        self.state[2] = 1                                       # diving from the root,
        self.node_parent[0], self.node_value[0], self.node_depth[0] = -1, 0, 0
        self.state[5] = 1                                       # which is node 0
        self.state[8] = self.backtracks_per_dive
        self.scalars[:] = -np.inf, np.inf
        self.expanded = 0
        if len(self.seq) == 0:                                  # all observed
            self.scalars[0] = self.constant
            self.state[1] = 1

    @property
    def work_done(self) -> int:
        return self.expanded

    def run(self, budget: int) -> int:
        done = _hybrid_search(self.seq, self.arity, self.add_ptr, self.add_ids, self.sub_ptr,
                              self.sub_ids, self.tab, self.cand_val, self.cand_f, self.cand_n,
                              self.cand_next, self.f_at, self.assign, self.best, self.state,
                              self.scalars, self.node_parent, self.node_value,
                              self.node_depth, self.node_f, self.node_tested, *self.heap, self.lp,
                              budget)
        self.expanded += done
        return done

    def round_root(self) -> None:
        """Take the LP's rounding at the root (``rounded_assignment`` in
        :mod:`twlib.inference.cost_shifting`) as the incumbent if it is better."""
        fixed, originals, offset, size, work, inc_ptr, gather_ptr, gather, _, _ = self.lp
        conditioned_bound(fixed, self.assign, originals, offset, size, self.tab[4], work,
                          self.arity, inc_ptr, gather_ptr, gather, 0, np.inf)
        round_into_incumbent(self.assign, self.lp, self.tab, self.arity, self.scalars, self.best)

    def bound(self) -> float:
        """The largest value of a branch not yet closed (or the incumbent)."""
        if self.finished:
            return self.incumbent
        best = self.incumbent
        if self.state[6] > 0:
            best = max(best, -float(self.heap[0][0]))
        if self.state[2]:
            depth, cap = int(self.state[0]), float(self.scalars[1])
            best = max(best, min(float(self.f_at[depth]), cap))
            for d in range(int(self.state[3]), depth + 1):
                k = self.cand_next[d]
                if 0 <= k < self.cand_n[d]:
                    best = max(best, min(float(self.cand_f[d, k]), cap))
        return best

    @property
    def lp_tests(self) -> int:
        """How many open nodes this run bounded by MPLP before diving."""
        return int(self.state[9])


@nb.njit(cache=True)
def _hybrid_search(seq, arity, add_ptr, add_ids, sub_ptr, sub_ids, tab, cand_val, cand_f,
                   cand_n, cand_next, f_at, assign, best, state, scalars, node_parent,
                   node_value, node_depth, node_f, node_tested, heap_f, heap_d, heap_node, lp,
                   budget):
    """Hybrid best-first search from the saved state for ``budget`` expansions;
    returns how many it made and leaves ``state[1] = 1`` when nothing is open.

    An open node popped for the first time is bounded by MPLP on the tables
    conditioned on its prefix (``lp``: see :class:`DiveSearch`): refuted, it is
    dropped; bounded below its heuristic value, it goes back to the heap with
    that bound.  A dive caps every value below it at its node's bound
    (``scalars[1]``), so the nodes it parks keep what MPLP proved.  A test ends
    the call: it costs as much as a budget of expansions.
    """
    fixed, originals, offset, size, work, inc_ptr, gather_ptr, gather, sweeps, _ = lp
    m = seq.shape[0]
    d, diving, bottom, root = state[0], state[2] == 1, state[3], state[4]
    nodes, heap_n, backtracks, limit = state[5], state[6], state[7], state[8]
    capacity = node_depth.shape[0]
    top = cand_val.shape[1]
    done = 0
    while done < budget:
        if not diving:                                # dive from the best open node
            if heap_n == 0 or not -heap_f[0] > scalars[0]:
                state[1] = 1
                heap_n = 0
                break
            minus_f, root, heap_n = heap_pop(heap_f, heap_d, heap_node, heap_n)
            d = node_depth[root]
            j = root
            while node_depth[j] > 0:
                assign[seq[node_depth[j] - 1]] = node_value[j]
                j = node_parent[j]
            if d > 0 and sweeps > 0 and not node_tested[root] and state[11] > 0:
                state[11] -= 1
            elif d > 0 and sweeps > 0 and not node_tested[root]:
                node_tested[root] = True
                fixed[seq[:d]] = True
                floor = to_beat(scalars[0])
                lp_bound = conditioned_bound(fixed, assign, originals, offset, size, tab[4],
                                             work, arity, inc_ptr, gather_ptr, gather, sweeps,
                                             floor)
                state[9] += 1
                done = budget
                if lp_bound > floor:
                    if round_into_incumbent(assign, lp, tab, arity, scalars, best):
                        floor = to_beat(scalars[0])
                fixed[seq[:d]] = False
                # a test that does not drop its node was mostly wasted: after k such
                # tests in a row, the next 2^k - 1 nodes go untested
                refuted = not lp_bound > floor
                state[10] = 0 if refuted else min(state[10] + 1, _MOST_SKIPPED_DOUBLINGS)
                state[11] = (1 << state[10]) - 1
                if refuted:
                    continue
                if lp_bound < -minus_f:
                    heap_n = heap_push(heap_f, heap_d, heap_node, heap_n, -lp_bound, d, root)
                    continue
            f_at[d] = node_f[root]                  # the heuristic's, which the dive adds to
            scalars[1] = -minus_f
            bottom = d
            backtracks = 0
            diving = True
            if d < m:
                cand_next[d] = -1
            continue
        if d == m:                                   # a complete assignment
            if f_at[m] > scalars[0]:
                scalars[0] = f_at[m]
                best[:] = assign
            d -= 1
            if d < bottom:
                diving = False
            continue
        if cand_next[d] == -1:                       # expand: score each value of seq[d]
            x = seq[d]
            minus = 0.0
            for j in range(sub_ptr[d], sub_ptr[d + 1]):
                minus += table_value(sub_ids[j], assign, tab)
            for a in range(arity[x]):
                assign[x] = a
                f = f_at[d] - minus
                for j in range(add_ptr[d], add_ptr[d + 1]):
                    f += table_value(add_ids[j], assign, tab)
                cand_val[d, a] = a
                cand_f[d, a] = f
            k = arity[x]
            sort_best_first(cand_f, cand_val, d, k)
            cand_n[d] = k
            cand_next[d] = 0
            done += 1
        k = cand_next[d]
        if k < cand_n[d] and not min(cand_f[d, k], scalars[1]) > scalars[0]:
            k = cand_n[d]                            # sorted: the rest cannot beat it either
        if k >= cand_n[d]:
            cand_next[d] = -1
            d -= 1
            if d < bottom:
                diving = False
                continue
            backtracks += 1
            if backtracks >= limit and nodes + (d - bottom + 1) * (top + 1) <= capacity:
                # park what this dive left open as nodes, the path's prefixes as
                # their parents, and dive next from the best open node
                parent = root
                for j in range(bottom, d + 1):
                    for q in range(cand_next[j], cand_n[j]):
                        f = min(cand_f[j, q], scalars[1])
                        if f > scalars[0]:
                            _new_node(nodes, parent, cand_val[j, q], j + 1, cand_f[j, q],
                                      node_parent, node_value, node_depth, node_f, node_tested)
                            heap_n = heap_push(heap_f, heap_d, heap_node, heap_n, -f, j + 1,
                                               nodes)
                            nodes += 1
                    if j < d:
                        _new_node(nodes, parent, assign[seq[j]], j + 1, f_at[j + 1],
                                  node_parent, node_value, node_depth, node_f, node_tested)
                        parent = nodes
                        nodes += 1
                    cand_next[j] = -1
                diving = False
            continue
        assign[seq[d]] = cand_val[d, k]
        cand_next[d] = k + 1
        f_at[d + 1] = cand_f[d, k]
        d += 1
        if d < m:
            cand_next[d] = -1
    state[0], state[2], state[3], state[4] = d, 1 if diving else 0, bottom, root
    state[5], state[6], state[7] = nodes, heap_n, backtracks
    return done


# allocates nothing, so it is compiled without numba's reference counting: the dive
# calls it at every node, and counting its dozen arrays, atomically, cost more than it
@nb.njit(cache=True, _nrt=False)
def _new_node(k, parent, value, depth, f, node_parent, node_value, node_depth, node_f,
              node_tested):
    """Open-node entry ``k``: ``value`` of the variable at ``depth`` below ``parent``,
    of heuristic value ``f``."""
    node_parent[k] = parent
    node_value[k] = value
    node_depth[k] = depth
    node_f[k] = f
    node_tested[k] = False
