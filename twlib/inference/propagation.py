"""Depth-first branch and bound that prunes values, not only branches, by the LP's reduced costs.

The LP bound of the shifted tables is the sum of their maxima, and it bounds
more than the whole problem.  Restrict every variable to a *domain* (the values
still allowed) and take each table's maximum over the entries the domains
allow: the sum ``B`` bounds every assignment inside the domains.  For a value
``b`` of ``Y``, replacing each table around ``Y`` by its maximum with ``Y = b``
bounds every such assignment with ``Y = b``:

    B - red(Y, b),   red(Y, b) = sum over tables t around Y of (max_t - max_t[Y = b]).

When that is no better than the incumbent, ``b`` leaves ``Y``'s domain, which
lowers the maxima of the tables around ``Y``, which may remove values of their
other variables, and so on: *propagation*.  A value that a zero rules out has
an infinite reduced cost, so this is arc consistency on the zeros; a value of
finite cost goes as soon as the incumbent is good enough.  It is the filtering
of weighted constraint solvers such as toulbar2 (node and arc consistency with
an upper bound: Larrosa & Schiex 2004) and reduced-cost filtering in
constraint programming (Focacci, Lodi & Milano 1999), on the tables MPLP
shifted once at the root rather than shifted again at every node.

Propagation is strongest when the value to beat is close to the optimum, and
the first incumbents are far below it.  So the search beats a *target* instead
while the target is above the incumbent: the first lies 1 % below the root's
bound; a run that finds nothing above it proves the target an upper bound, and
the next lies twice as far below; a run that finds something goes on as plain
branch and bound, and its end proves the incumbent.  This is iterative
deepening on the value (as IDA* is on the cost; Korf 1985): a run that
refutes a target is cheap, since it prunes hard.  The search ends as soon as
its incumbent meets the bound proved.  Until the first assignment is found
(on models full of zeros, such as SAT encodings, that is the hard part) a run
restarts from the root after 100 nodes, then 150, and so on, keeping the
weights its failures have taught the variable order (restarts with weighted
degrees: Boussemart et al. 2004; geometric growth keeps the search complete).

The variable assigned next is the one with the fewest values left per unit of
weight, its weight its number of tables plus the failures it has caused (a
form of dom/wdeg: Boussemart, Hemery, Lecoutre & Sais 2004); its values are
tried in order of reduced cost.  "No better than the incumbent" includes a
tie within the proof's slack (:func:`~twlib.inference.flat.to_beat`), and a
failure that met such ties counts a hundredth of one: a tie is no conflict.
The root's bound is ``B`` lowered by the largest over the variables of their
smallest reduced cost (every assignment pays at least that on each
variable); below the root a node needs only to beat the floor, which ``B``
does once every value that cannot is removed.
The branching is binary: once a value has been tried and nothing with it
beats the floor, it leaves the domain and that removal is propagated before
the next value is tried (the branch ``x != a``, as toulbar2 and constraint
solvers branch).

After each branch, the neighbours of the variable branched on lose their
*dominated* values: a value ``a`` of ``Y`` goes when the value ``b`` of least
reduced cost is as good in every assignment the domains allow, which holds
when, table by table around ``Y``, the least of ``t[Y = b] - t[Y = a]`` over
the other variables' values sums to at least 0 (dead-end elimination:
Goldstein 1994; toulbar2 applies it during search, de Givry, Prestwich &
O'Sullivan 2013).  It removes assignments, not optima: whenever ``a`` goes,
``b`` stays, so an assignment at least as good as any removed is left.

A removed value makes a table's maxima be computed again only when one of them
may have been reached at that value and the entry that reached it is gone
(:mod:`twlib.inference.table_maxima`), and the reduced costs, like the sum of
the maxima, are kept up to date table by table.  Undo is a trail of removed
values and of the table maxima saved before they were recomputed, so the
search can stop and resume.
"""
from __future__ import annotations

import numpy as np

from .engine import Engine
from .cost_shifting import star_incidence
from .flat import slack, table_sizes
from .propagation_kernels import depth_first, floor_of, rescan_all, root_propagate

__all__ = ["PropagationSearch"]

# The first target lies this far (relative) below the root's bound; each refuted
# target doubles the step
_FIRST_STEP = 0.01
_LARGEST_STEP = 1e6
# Nodes of a run that has found no assignment before it restarts, and the
# growth of that number at each restart
_FIRST_PATIENCE = 100
_PATIENCE_GROWTH = 1.5
# The work arrays a full rescan fills (the tables' maxima, the reduced costs and
# their infinite counts, the sums of the maxima, the tree of the largest costs)
_RESCANNED = (3, 4, 5, 6, 12, 13, 17)


def _leaves(n: int) -> int:
    """The leaves of a binary tree over ``n`` variables: the power of two from ``n``."""
    return 1 << max(n - 1, 0).bit_length()


class PropagationSearch(Engine):
    """The search's state in flat arrays, so that it can stop and resume: an
    engine of the portfolio (:mod:`twlib.inference.engine`).

    ``tab`` are the flat tables (:func:`twlib.inference.flat.flat_tables`),
    of which the first ``count`` are the model's (shifted); ``scalars[0]`` (the
    incumbent's value) and ``best`` (its assignment) are shared with the other
    searches of the same run.  The undo trail takes at most ``trail_bytes``;
    a search that fills it stops (:attr:`stalled`) and leaves the proof to the
    others.  ``constant`` is the log value the tables leave out: the search ends
    once the bound it proves is within :func:`~twlib.inference.flat.slack` of
    the incumbent's value with it.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree, mini_buckets
    >>> from twlib.inference.flat import flat_tables
    >>> net = load_network("asia")
    >>> mb = mini_buckets(net, 2, {"dysp": "yes"}, mplp_time_limit=1)
    >>> search = PropagationSearch(flat_tables(mb.tables), mb.originals, mb.arity,
    ...                            np.array([-np.inf]), np.zeros(8, dtype=np.int64))
    >>> while not search.finished:
    ...     _ = search.run(10)
    >>> round(search.incumbent - JunctionTree(net).mpe({"dysp": "yes"}).log_value, 9)
    0.0
    """

    name = "propagation"

    def __init__(self, tab, count: int, arity, scalars, best, *,
                 trail_bytes: float = 2**28, constant: float = 0.0):
        ptr, var, stride, offset, values = tab
        self.constant = constant
        # the table maxima saved for undo: a search that fills them stops
        trail_floats = max(1, int(trail_bytes / 9))
        self.tab, self.count = tab, count
        self.arity = np.asarray(arity, dtype=np.int64)
        self.scalars, self.best = scalars, best
        n = len(self.arity)
        top = int(self.arity.max()) if n else 1
        inc_ptr, inc_table, inc_slot = star_incidence(ptr, var, n, count)
        k_of_slot = np.full(len(var), -1, dtype=np.int64)
        k_of_slot[inc_slot] = np.arange(len(inc_slot))
        size = table_sizes(tab)
        self.static = (ptr, var, stride, offset, size, values, self.arity, inc_ptr, inc_table,
                       k_of_slot)
        self.dom = np.ones((n, top), dtype=np.bool_)
        self.dsize = self.arity.copy()
        self.weight = np.ones(n)
        # the tables' maxima within the domains, overall and at each value of each
        # of their variables; the values' reduced costs kept up to date as the sum
        # of their finite terms and the count of their infinite ones, and so is
        # the sum of the maxima (the last two arrays)
        self.work = (self.dom, self.dsize, self.weight, np.empty(count),
                     np.empty((len(inc_slot), top)), np.zeros((n, top)),
                     np.zeros((n, top), dtype=np.int64),
                     np.full(count, -1, dtype=np.int64), np.empty(count, dtype=np.int64),
                     np.empty(n * top, dtype=np.int64),
                     np.empty(max(1, trail_floats // 8), dtype=np.int64),
                     np.empty(trail_floats), np.zeros(1), np.zeros(1, dtype=np.int64),
                     np.zeros(max(1, int(np.diff(ptr).max(initial=0))), dtype=np.int64),
                     # the variables marked since the tree of their largest
                     # reduced costs was read, the tree, and the variables it
                     # finds (with room for its walk's pending nodes)
                     np.zeros(n, dtype=np.bool_), np.empty(n, dtype=np.int64),
                     np.empty(2 * _leaves(n)), np.empty(n + 2 * _leaves(n).bit_length() + 2,
                                                        dtype=np.int64),
                     # the neighbours visited, and an odometer over a table's
                     # values left (dead-end elimination)
                     np.zeros(n, dtype=np.bool_),
                     np.zeros((max(1, int(np.diff(ptr).max(initial=0))), top + 2),
                              dtype=np.int64),
                     # the entry where each maximum at a value, and each
                     # table's maximum, was last found (checked before use)
                     np.full((len(inc_slot), top), -1, dtype=np.int64),
                     np.full(count, -1, dtype=np.int64),
                     # a table's maxima before its scan (see table_maxima.scan_maxima)
                     np.empty((max(1, int(np.diff(ptr).max(initial=0))), top)))
        self.levels = (np.empty(n + 1, dtype=np.int64), np.empty((n + 1, top), dtype=np.int64),
                       np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1, dtype=np.int64),
                       np.zeros((n + 1, 3), dtype=np.int64), np.zeros(n, dtype=np.int64))
        # level, trying (else choosing), finished, nodes, trail lengths (values,
        # tables, floats), stamp, trail full, variables marked, whether the
        # trial has met ties with the incumbent, updates of the sums kept up
        # to date since they were last summed afresh
        self.state = np.zeros(12, dtype=np.int64)
        # the target to beat, and the constant the slack of the incumbent needs
        self.target = np.array([-np.inf, constant])
        self.counted = 0
        self.reset()

    def reset(self) -> None:
        """Forget the proved bound and the weights, and read the tables afresh
        (they may have changed; the incumbent is the caller's)."""
        self._root = None
        self.weight[:] = 1.0
        self.counted = 0
        self.patience = _FIRST_PATIENCE
        self.proved = np.inf
        self.target[0] = -np.inf
        self.done = False
        self._restart()
        if self.state[2]:
            self.done = True
        elif not self.stalled:
            self.proved = self.root_bound
            self.scale = max(1.0, abs(self.root_bound))
            self._lower_target(_FIRST_STEP * self.scale)

    def reread(self) -> None:
        """Read the tables afresh after a reparameterisation changed them, and
        start again from the root, keeping what the search has learnt: the
        weights, the patience, and the bound proved, which holds for every
        assignment however the tables are shifted.  The targets start again
        from the first step below the better of that bound and the new root's."""
        self._root = None
        self.counted += int(self.state[3])
        self.target[0] = -np.inf
        self._restart()
        if self.state[2]:
            self.done = True
        elif not self.stalled:
            self.proved = min(self.proved, self.root_bound)
            self._lower_target(_FIRST_STEP * self.scale)
            self._restart()
            if self.state[2] and self.target[0] == -np.inf:
                self.done = True

    def share(self, scalars, best) -> None:
        """Take ``scalars[0]`` and ``best`` as the incumbent from now on (another
        search's, so that both prune by the better)."""
        self.scalars, self.best = scalars, best

    def _restart(self) -> None:
        """Back to the root with every value allowed, propagated against the floor."""
        inc_ptr = self.static[7]
        # a variable in no table (observed, say) takes its first value: branching
        # on it would only repeat the same subtree
        self.dsize[:] = np.where(np.diff(inc_ptr) > 0, self.arity, 1)
        self.dom[:] = np.arange(self.dom.shape[1]) < self.dsize[:, None]
        self.state[:] = 0
        self.work[7][:] = -1
        if self._root is None:
            rescan_all(self.count, self.state, self.static, self.work)
            self._root = [self.work[i].copy() for i in _RESCANNED]
        else:
            # the tables are those of the reset: the root's maxima are the first
            # rescan's, and a search that lowers its target restarts many times
            for i, saved in zip(_RESCANNED, self._root):
                self.work[i][:] = saved
            self.work[15][:] = False
        self.root_bound = root_propagate(self.state, self.scalars, self.target, self.static,
                                          self.work)
        # a root whose propagation filled the trail has refuted nothing: the
        # search is stalled, its bound left where it was
        if not self.stalled and not self.root_bound > floor_of(self.scalars, self.target):
            self.state[2] = 1

    def _lower_target(self, step: float) -> None:
        """Search next for assignments better than ``proved - step``, or for any
        better than the incumbent once the step has grown past all proportion
        (every assignment may be impossible)."""
        self.step = step
        self.target[0] = -np.inf
        if step < _LARGEST_STEP * self.scale:
            self.target[0] = self.proved - step
        if not self.target[0] > self.incumbent:
            self.target[0] = -np.inf

    @property
    def finished(self) -> bool:
        """Whether the search has ended: no assignment beats the incumbent."""
        return self.done

    @property
    def stalled(self) -> bool:
        """Whether the undo trail is full, so that the search cannot go on."""
        return bool(self.state[8])

    @property
    def work_done(self) -> int:
        return self.counted + int(self.state[3])

    def bound(self) -> float:
        """The smallest target a run has refuted (nothing beats it but the
        incumbent), or the incumbent once the search has ended."""
        return self.incumbent if self.done else max(self.proved, self.incumbent)

    def run(self, budget: int) -> int:
        """Expand up to ``budget`` nodes; returns how many it expanded."""
        expanded = 0
        while expanded < budget and not self.done and not self.stalled:
            # an incumbent that meets the proved bound leaves nothing to beat: a
            # search on would only list the assignments of the same value
            if self.incumbent >= self.proved - slack(self.incumbent, self.constant):
                self.done = True
                break
            before, nodes = self.state[3], budget - expanded
            if self.incumbent == -np.inf:
                nodes = min(nodes, max(self.patience - before, 1))
            depth_first(self.state, self.scalars, self.target, self.best, self.static,
                         self.tab, self.count, self.work, self.levels, nodes)
            expanded += int(self.state[3] - before)
            if not self.state[2]:
                if self.incumbent == -np.inf and self.state[3] >= self.patience:
                    # no assignment yet: start again from the root with the
                    # weights the failures have taught, and more patience
                    self.counted += int(self.state[3])
                    self.patience = max(self.patience + 1, int(self.patience * _PATIENCE_GROWTH))
                    self._restart()
                continue
            # a run that ends with an incumbent at or above its target has
            # refuted everything better than the incumbent: its floor never
            # rose past the incumbent
            if self.target[0] == -np.inf or self.incumbent >= self.target[0]:
                self.done = True
                break
            # the run ended: nothing beats the target but what it found
            self.proved = max(self.target[0], self.incumbent)
            self.counted += int(self.state[3])
            self._lower_target(2 * self.step)
            self._restart()
            if self.state[2] and self.target[0] == -np.inf:
                self.done = True
        return expanded
