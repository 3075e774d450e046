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
branch and bound.  This is iterative deepening on the value (as IDA* is on the
cost; Korf 1985): a run that refutes a target is cheap, since it prunes hard.

The variable assigned next is the one with the fewest values left per unit of
weight, its weight its number of tables plus the failures it has caused (a
form of dom/wdeg: Boussemart, Hemery, Lecoutre & Sais 2004); its values are
tried in order of reduced cost.  The node's bound is ``B`` lowered by the
largest over the variables of their smallest reduced cost (every assignment
pays at least that on each variable).  The branching is binary: once a value
has been tried and nothing with it beats the floor, it leaves the domain and
that removal is propagated before the next value is tried (the branch
``x != a``, as toulbar2 and constraint solvers branch).  A removed value makes
a table's maxima be computed again only when one of them may have been reached
at that value, and the reduced costs, like the sum of the maxima, are kept up
to date table by table.  Undo is a trail of removed values and of the table
maxima saved before they were recomputed, so the search can stop and resume.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .engine import Engine
from .flat import slack, table_sizes, tables_total
from .cost_shifting import star_incidence

__all__ = ["PropagationSearch"]

# The first target lies this far (relative) below the root's bound; each refuted
# target doubles the step
_FIRST_STEP = 0.01
_LARGEST_STEP = 1e6
# A value whose bound comes this close (relative) to the floor has its reduced
# cost summed again before it is removed: the sums kept up to date drift
_NEAR = 1e-7


class PropagationSearch(Engine):
    """The search's state in flat arrays, so that it can stop and resume: an
    engine of the portfolio (:mod:`twlib.inference.engine`).

    ``tab`` are the flat tables (:func:`twlib.inference.flat.flat_tables`),
    of which the first ``count`` are the model's (shifted); ``scalars[0]`` (the
    incumbent's value) and ``best`` (its assignment) are shared with the other
    searches of the same run.  The undo trail takes at most ``trail_bytes``;
    a search that fills it stops (:attr:`stalled`) and leaves the proof to the
    others.

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
                 trail_bytes: float = 2**28):
        ptr, var, stride, offset, values = tab
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
                     np.empty(trail_floats), np.zeros(1), np.zeros(1, dtype=np.int64))
        self.levels = (np.empty(n + 1, dtype=np.int64), np.empty((n + 1, top), dtype=np.int64),
                       np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1, dtype=np.int64),
                       np.zeros((n + 1, 3), dtype=np.int64))
        # level, trying (else choosing), finished, nodes, trail lengths (values,
        # tables, floats), stamp, trail full
        self.state = np.zeros(9, dtype=np.int64)
        self.target = np.array([-np.inf])
        self.counted = 0
        self.reset()

    def reset(self) -> None:
        """Forget the proved bound and the weights (the incumbent is the caller's)."""
        self.weight[:] = 1.0
        self.counted = 0
        self.proved = np.inf
        self.target[0] = -np.inf
        self.done = False
        self._restart()
        if self.state[2]:
            self.done = True
        else:
            self.proved = self.root_bound
            self.scale = max(1.0, abs(self.root_bound))
            self._lower_target(_FIRST_STEP * self.scale)

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
        _rescan_all(self.count, self.static, self.work)
        self.root_bound = _propagate(self.state, self.scalars, self.target, self.static,
                                     self.work, 0)
        if not self.root_bound > _floor(self.scalars, self.target):
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
            before = self.state[3]
            _depth_first(self.state, self.scalars, self.target, self.best, self.static,
                         self.tab, self.count, self.work, self.levels, budget - expanded)
            expanded += int(self.state[3] - before)
            if not self.state[2]:
                continue
            if self.target[0] == -np.inf:
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


@nb.njit(cache=True)
def _floor(scalars, target):
    """What a branch must beat: the incumbent (up to rounding) or the target."""
    return max(scalars[0] - slack(scalars[0]), target[0])


@nb.njit(cache=True)
def _account(t, sign, static, work):
    """Add (``sign`` 1) or take away (-1) table ``t``'s terms in the reduced
    costs of its variables' values."""
    ptr, var, _, _, _, _, arity, _, _, k_of_slot = static
    tmax, mm, red, infs = work[3], work[4], work[5], work[6]
    for j in range(ptr[t], ptr[t + 1]):
        y, k = var[j], k_of_slot[j]
        for b in range(arity[y]):
            if mm[k, b] == -np.inf:
                infs[y, b] += sign
            else:
                red[y, b] += sign * (tmax[t] - mm[k, b])


@nb.njit(cache=True)
def _reduced_cost(y, b, static, work, exact):
    """The reduced cost of value ``b`` of ``y`` (see the module): as kept up to
    date, or with ``exact`` summed again from the tables (and stored)."""
    _, _, _, _, _, _, _, inc_ptr, inc_table, _ = static
    tmax, mm, red, infs = work[3], work[4], work[5], work[6]
    if infs[y, b] > 0:
        return np.inf
    if exact:
        total = 0.0
        for k in range(inc_ptr[y], inc_ptr[y + 1]):
            total += tmax[inc_table[k]] - mm[k, b]
        red[y, b] = total
    return red[y, b]


@nb.njit(cache=True)
def _rescan(t, static, work):
    """Table ``t``'s maxima recomputed (:func:`_scan`), and the reduced costs with them."""
    _account(t, -1, static, work)
    _scan(t, static, work)
    _account(t, 1, static, work)


@nb.njit(cache=True)
def _scan(t, static, work):
    """Table ``t``'s maximum over the entries the domains allow, and its maximum
    at each value of each of its variables."""
    ptr, var, stride, offset, size, values, arity, _, _, k_of_slot = static
    dom, mm = work[0], work[4]
    for j in range(ptr[t], ptr[t + 1]):
        mm[k_of_slot[j], :arity[var[j]]] = -np.inf
    top = -np.inf
    for e in range(size[t]):
        value = values[offset[t] + e]
        if value == -np.inf:
            continue
        allowed = True
        for j in range(ptr[t], ptr[t + 1]):
            if not dom[var[j], (e // stride[j]) % arity[var[j]]]:
                allowed = False
                break
        if not allowed:
            continue
        if value > top:
            top = value
        for j in range(ptr[t], ptr[t + 1]):
            k, a = k_of_slot[j], (e // stride[j]) % arity[var[j]]
            if value > mm[k, a]:
                mm[k, a] = value
    _set_max(t, top, work)


@nb.njit(cache=True)
def _set_max(t, value, work):
    """Table ``t``'s maximum set to ``value``, and the sum of the maxima with it."""
    tmax, finite, infinite = work[3], work[12], work[13]
    if tmax[t] == -np.inf:
        infinite[0] -= 1
    else:
        finite[0] -= tmax[t]
    tmax[t] = value
    if value == -np.inf:
        infinite[0] += 1
    else:
        finite[0] += value


@nb.njit(cache=True)
def _total(exact, work):
    """The sum of the tables' maxima: as kept up to date, or with ``exact``
    summed again (and stored)."""
    tmax, finite, infinite = work[3], work[12], work[13]
    if infinite[0] > 0:
        return -np.inf
    if exact:
        total = 0.0
        for t in range(tmax.shape[0]):
            total += tmax[t]
        finite[0] = total
    return finite[0]


@nb.njit(cache=True)
def _rescan_all(count, static, work):
    work[3][:] = 0.0
    work[5][:] = 0.0
    work[6][:] = 0
    work[12][0] = 0.0
    work[13][0] = 0
    for t in range(count):
        _scan(t, static, work)
        _account(t, 1, static, work)


@nb.njit(cache=True)
def _save(t, state, static, work):
    """Put table ``t``'s maxima on the trail, once per trial; False when it is full."""
    tmax, mm, stamp, ttrail, ftrail = work[3], work[4], work[7], work[10], work[11]
    if stamp[t] == state[7]:
        return True
    ptr, var, _, _, _, _, arity, _, _, k_of_slot = static
    need = 1
    for j in range(ptr[t], ptr[t + 1]):
        need += arity[var[j]]
    if state[5] >= ttrail.shape[0] or state[6] + need > ftrail.shape[0]:
        state[8] = 1
        return False
    ttrail[state[5]] = t
    state[5] += 1
    f = state[6]
    ftrail[f] = tmax[t]
    f += 1
    for j in range(ptr[t], ptr[t + 1]):
        a = arity[var[j]]
        ftrail[f:f + a] = mm[k_of_slot[j], :a]
        f += a
    state[6] = f
    stamp[t] = state[7]
    return True


@nb.njit(cache=True)
def _undo(marks, state, static, work):
    """Back to the trail lengths ``marks`` (values, tables, floats)."""
    ptr, var, _, _, _, _, arity, _, _, k_of_slot = static
    dom, dsize, _, tmax, mm, _, _, stamp, _, dtrail, ttrail, ftrail, _, _ = work
    top = dom.shape[1]
    while state[4] > marks[0]:
        state[4] -= 1
        x, a = dtrail[state[4]] // top, dtrail[state[4]] % top
        dom[x, a] = True
        dsize[x] += 1
    f = state[6]
    while state[5] > marks[1]:
        state[5] -= 1
        t = ttrail[state[5]]
        _account(t, -1, static, work)
        for j in range(ptr[t + 1] - 1, ptr[t] - 1, -1):
            a = arity[var[j]]
            f -= a
            mm[k_of_slot[j], :a] = ftrail[f:f + a]
        f -= 1
        _set_max(t, ftrail[f], work)
        _account(t, 1, static, work)
        stamp[t] = -1
    state[6] = f


@nb.njit(cache=True)
def _remove(x, a, state, work):
    dom, dsize, dtrail = work[0], work[1], work[9]
    dom[x, a] = False
    dsize[x] -= 1
    dtrail[state[4]] = x * dom.shape[1] + a
    state[4] += 1


@nb.njit(cache=True)
def _matters(t, k, a, static, work):
    """Whether removing value ``a`` of the variable of incidence ``k`` can lower
    table ``t``'s maxima: only if the table's best entry with that value is at
    least its maximum, or at least the maximum at some allowed value of another
    of its variables (where it may have been that maximum)."""
    ptr, var, _, _, _, _, arity, _, _, k_of_slot = static
    dom, tmax, mm = work[0], work[3], work[4]
    v = mm[k, a]
    if v == -np.inf:
        return False
    if v >= tmax[t]:
        return True
    for j in range(ptr[t], ptr[t + 1]):
        other = k_of_slot[j]
        if other == k:
            continue
        for b in range(arity[var[j]]):
            if dom[var[j], b] and mm[other, b] <= v:
                return True
    return False


@nb.njit(cache=True)
def _propagate(state, scalars, target, static, work, start):
    """Recompute the tables that the values removed since trail position
    ``start`` may lower and remove every value whose reduced cost leaves it no
    better than the floor, until nothing changes; the node's bound, or ``-inf``
    when a domain empties (the culprit's weight grows) or the trail is full."""
    _, _, _, _, _, _, arity, inc_ptr, inc_table, _ = static
    dom, dsize, weight, _, _, kept, infs, stamp, touched, dtrail, _, _, _, _ = work
    n = arity.shape[0]
    top = dom.shape[1]
    floor = _floor(scalars, target)
    # stamps of this trial's tables already recomputed in the current round
    fresh = state[7] + (1 << 40)
    while True:
        rescanned = 0
        end = state[4]
        for i in range(start, end):
            x, a = dtrail[i] // top, dtrail[i] % top
            for k in range(inc_ptr[x], inc_ptr[x + 1]):
                t = inc_table[k]
                if stamp[t] == fresh or not _matters(t, k, a, static, work):
                    continue
                if not _save(t, state, static, work):
                    return -np.inf
                _rescan(t, static, work)
                stamp[t] = fresh
                touched[rescanned] = t
                rescanned += 1
        start = end
        for i in range(rescanned):
            stamp[touched[i]] = state[7]
        total = _total(False, work)
        if not total > floor + _NEAR * (1.0 + abs(floor)):
            total = _total(True, work)
        if not total > floor:
            return -np.inf
        changed = False
        largest = 0.0
        for y in range(n):
            if dsize[y] < 2 or inc_ptr[y + 1] == inc_ptr[y]:
                continue
            smallest = np.inf
            for b in range(arity[y]):
                if not dom[y, b]:
                    continue
                # read here, not through _reduced_cost: a call that unpacks the
                # tuples costs more in reference counts than the check itself
                red = np.inf if infs[y, b] > 0 else kept[y, b]
                if not total - red > floor + _NEAR * (1.0 + abs(floor)):
                    # near the floor the sum kept up to date may have drifted
                    red = _reduced_cost(y, b, static, work, True)
                if not total - red > floor:
                    _remove(y, b, state, work)
                    changed = True
                elif red < smallest:
                    smallest = red
            if dsize[y] == 0:
                weight[y] += 1.0
                return -np.inf
            if smallest > largest:
                largest = smallest
        if not changed:
            return total - largest


@nb.njit(cache=True)
def _choose(static, dom, dsize, weight):
    """The variable with two values or more and the fewest per unit of weight; -1 if none."""
    _, _, _, _, _, _, arity, inc_ptr, _, _ = static
    chosen, score = -1, np.inf
    for x in range(arity.shape[0]):
        if dsize[x] < 2:
            continue
        s = dsize[x] / (weight[x] + (inc_ptr[x + 1] - inc_ptr[x]))
        if s < score:
            chosen, score = x, s
    return chosen


@nb.njit(cache=True)
def _depth_first(state, scalars, target, best, static, tab, count, work, levels, budget):
    """Expand up to ``budget`` nodes of the depth-first search from where it stopped."""
    arity = static[6]
    dom, dsize, weight = work[0], work[1], work[2]
    level_var, level_order, level_count, level_next, level_marks = levels
    n = arity.shape[0]
    assign = np.zeros(n, dtype=np.int64)
    nodes = 0
    while nodes < budget and not state[2] and not state[8]:
        level = state[0]
        if not state[1]:                                 # choose at this level
            x = _choose(static, dom, dsize, weight)
            if x < 0:                                    # every domain a single value
                for y in range(n):
                    for a in range(arity[y]):
                        if dom[y, a]:
                            assign[y] = a
                value = tables_total(assign, count, tab)
                if value > scalars[0]:
                    scalars[0] = value
                    best[:] = assign
                if _back_up(level, state, scalars, target, static, work, levels):
                    break
                state[1] = 1
                continue
            red = work[5][x]
            k = 0
            for a in range(arity[x]):
                if dom[x, a]:
                    level_order[level, k] = a
                    k += 1
            for i in range(1, k):                        # smallest reduced cost first
                a = level_order[level, i]
                j = i
                while j > 0 and red[level_order[level, j - 1]] > red[a]:
                    level_order[level, j] = level_order[level, j - 1]
                    j -= 1
                level_order[level, j] = a
            level_var[level], level_count[level], level_next[level] = x, k, 0
            state[1] = 1
            continue
        x = level_var[level]
        if level_next[level] == level_count[level]:      # every value tried: back up
            if _back_up(level, state, scalars, target, static, work, levels):
                break
            continue
        a = level_order[level, level_next[level]]
        level_next[level] += 1
        if not dom[x, a]:
            continue
        level_marks[level, 0], level_marks[level, 1] = state[4], state[5]
        level_marks[level, 2] = state[6]
        state[7] += 1
        for b in range(arity[x]):
            if b != a and dom[x, b]:
                _remove(x, b, state, work)
        nodes += 1
        bound = _propagate(state, scalars, target, static, work, level_marks[level, 0])
        if bound > _floor(scalars, target):
            state[0] = level + 1
            state[1] = 0
        else:
            weight[x] += 1.0
            _undo(level_marks[level], state, static, work)
            _refute(level, state, scalars, target, static, work, levels)
    state[3] += nodes


@nb.njit(cache=True)
def _back_up(level, state, scalars, target, static, work, levels):
    """Return from ``level`` to its parent and refute the parent's value; at the
    root, end the run instead (and say so)."""
    if level == 0:
        state[2] = 1
        return True
    state[0] = level - 1
    _undo(levels[4][level - 1], state, static, work)
    _refute(level - 1, state, scalars, target, static, work, levels)
    return False


@nb.njit(cache=True)
def _refute(level, state, scalars, target, static, work, levels):
    """After the level's last value tried is done with (nothing with it beats the
    floor), remove it from its variable's domain and propagate, as the branch
    ``x != a`` of binary branching; when that leaves no value able to beat the
    floor, the level is done with too."""
    level_var, level_order, level_count, level_next, level_marks = levels
    dom, dsize = work[0], work[1]
    x = level_var[level]
    a = level_order[level, level_next[level] - 1]
    if level_next[level] == level_count[level] or dsize[x] < 2 or not dom[x, a]:
        return
    # the trail is where the value's trial started from
    state[7] += 1
    _remove(x, a, state, work)
    if not _propagate(state, scalars, target, static, work,
                      level_marks[level, 0]) > _floor(scalars, target):
        _undo(level_marks[level], state, static, work)
        level_next[level] = level_count[level]
