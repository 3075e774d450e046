"""The compiled part of the propagation search (:mod:`twlib.inference.propagation`).

The search allocates nothing (the class owns every array), so it is compiled
without numba's reference counting (``_nrt=False``): counting each array passed
to a helper, atomically, took two thirds of its time.  And the helpers take the
arrays one by one, not as the tuples the class keeps them in, which would be
copied whole at every call.  Their arguments, in this order: the tables ``ptr,
var, stride, offset, values, arity, inc_ptr, inc_table, k_of_slot`` and the
state ``dom, dsize, weight, tmax, mm, red, infs, stamp, touched, dtrail,
ttrail, ftrail, finite, infinite, digit, dirty, marked, seg, found`` and, for
dead-end elimination, ``seen, odometer`` (see ``PropagationSearch.__init__``).
The helpers called once per table a removed value touches
(:func:`~twlib.inference.table_maxima.may_lower`, ``_account``, ``_rescan``)
are inlined where they are called: passing their fifteen-odd arrays, call
after call, costs a fifth of the search's time.

A round of propagation removes the values whose reduced cost has reached the
bound's margin over the floor.  Scanning every variable for them costs, at
every round of every node, time in proportion to the model, while a round
changes the costs of a few variables; so each variable's largest reduced cost
over its values left is kept in a max segment tree (``seg``, leaves from
``seg.shape[0] // 2``), and a round visits only the variables whose largest
reaches the margin (listed in ``found``).  A change marks the variable
``dirty`` (listed in ``marked``, counted in ``state[9]``), and the tree takes
the marked variables' new largest before it is read.

The reduced costs and the sum of the maxima are kept up to date table by
table, and drift by a rounding at each update.  So after as many updates as
there are incidences of variables in tables (at least ``_RESUM_AFTER``;
counted in ``state[11]``) they are summed afresh from the tables' maxima, and
a value or a bound within ``_NEAR`` (relative) of the floor is decided on
sums made afresh.  The margin need only cover that bounded drift, and a
narrow one matters: once the gap between the bound and the incumbent is
nearly closed, nearly every value's bound lies within a wide margin of the
floor, and every one would be summed again at every round.

The class calls four entry points: :func:`floor_of`, :func:`rescan_all`,
:func:`root_propagate` and :func:`depth_first`.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .dominance import dominates
from .flat import slack, tables_total, to_beat
from .table_maxima import may_lower, scan_maxima, set_maximum

__all__ = ["floor_of", "rescan_all", "root_propagate", "depth_first"]

# A value whose bound comes this close (relative) to the floor has its reduced
# cost summed again before it is removed: the sums kept up to date drift, by
# about 1e-12 of their terms' size between two sums afresh (see the module)
_NEAR = 1e-9
_RESUM_AFTER = 4096
# What a failure adds to its variable's weight when values or bounds that tie
# with the incumbent (within its slack) had a part in it.  Ties are no conflict:
# where they are most failures (weighted CSPs, whose costs take few levels)
# whole weights would swamp the failures that guide the order, yet where
# nothing else fails (a network's near-irrelevant variables) they are the only guide
_TIED_WEIGHT = 0.01


@nb.njit(cache=True, _nrt=False)
def floor_of(scalars, target):
    """What a branch must beat: the incumbent (:func:`~twlib.inference.flat.to_beat`,
    with the constant the tables leave out, ``target[1]``) or the target
    (``target[0]``)."""
    return max(to_beat(scalars[0], target[1]), target[0])


@nb.njit(cache=True, _nrt=False)
def _blame(y, state, weight):
    """Add a failure to variable ``y``'s weight: a whole one, or ``_TIED_WEIGHT``
    when values or bounds that tie with the incumbent had a part in the
    trial's failure (``state[10]``)."""
    weight[y] += _TIED_WEIGHT if state[10] else 1.0


@nb.njit(cache=True, _nrt=False)
def _mark(y, state, dirty, marked):
    """Note that variable ``y``'s reduced costs or values left have changed."""
    if not dirty[y]:
        dirty[y] = True
        marked[state[9]] = y
        state[9] += 1


@nb.njit(cache=True, _nrt=False)
def _largest_cost(y, dom, dsize, red, infs, arity, inc_ptr):
    """The largest reduced cost over ``y``'s values left; ``-inf`` when ``y``
    is not to be branched on (one value left, or in no table)."""
    if dsize[y] < 2 or inc_ptr[y + 1] == inc_ptr[y]:
        return -np.inf
    top = -np.inf
    for b in range(arity[y]):
        if dom[y, b]:
            cost = np.inf if infs[y, b] > 0 else red[y, b]
            if cost > top:
                top = cost
    return top


@nb.njit(cache=True, _nrt=False)
def _refresh(state, dirty, marked, seg, dom, dsize, red, infs, arity, inc_ptr):
    """The marked variables' largest reduced costs into the tree, each leaf's
    ancestors raised or lowered until one does not change."""
    leaves = seg.shape[0] // 2
    for i in range(state[9]):
        y = marked[i]
        dirty[y] = False
        at = leaves + y
        seg[at] = _largest_cost(y, dom, dsize, red, infs, arity, inc_ptr)
        at //= 2
        while at >= 1:
            top = max(seg[2 * at], seg[2 * at + 1])
            if seg[at] == top:
                break
            seg[at] = top
            at //= 2
    state[9] = 0


@nb.njit(cache=True, _nrt=False)
def _reaching(threshold, seg, found, n):
    """How many of the ``n`` variables have a largest reduced cost of at least
    ``threshold`` in the tree; they are put at the start of ``found``."""
    leaves = seg.shape[0] // 2
    count = 0
    if not seg[1] >= threshold:
        return 0
    # depth first over the tree, the nodes to visit kept past the variables
    # found: at most one pending node per level, and the tree has as many
    # levels as a leaf index has bits
    stack = found.shape[0] - 1
    found[stack] = 1
    while stack < found.shape[0]:
        at = found[stack]
        stack += 1
        if at >= leaves:
            if at - leaves < n:               # not a leaf past the variables
                found[count] = at - leaves
                count += 1
            continue
        for child in (2 * at + 1, 2 * at):
            if seg[child] >= threshold:
                stack -= 1
                found[stack] = child
    return count


@nb.njit(cache=True, _nrt=False, inline="always")
def _account(t, sign, state, ptr, var, arity, k_of_slot, tmax, mm, red, infs, dirty, marked):
    """Add (``sign`` 1) or take away (-1) table ``t``'s terms in the reduced
    costs of its variables' values."""
    for j in range(ptr[t], ptr[t + 1]):
        y, k = var[j], k_of_slot[j]
        _mark(y, state, dirty, marked)
        for b in range(arity[y]):
            if mm[k, b] == -np.inf:
                infs[y, b] += sign
            else:
                red[y, b] += sign * (tmax[t] - mm[k, b])


@nb.njit(cache=True, _nrt=False)
def _reduced_cost(y, b, exact, inc_ptr, inc_table, tmax, mm, red, infs):
    """The reduced cost of value ``b`` of ``y`` (see the module): as kept up to
    date, or with ``exact`` summed again from the tables (and stored)."""
    if infs[y, b] > 0:
        return np.inf
    if exact:
        total = 0.0
        for k in range(inc_ptr[y], inc_ptr[y + 1]):
            total += tmax[inc_table[k]] - mm[k, b]
        red[y, b] = total
    return red[y, b]


@nb.njit(cache=True, _nrt=False, inline="always")
def _rescan(t, state, ptr, var, stride, offset, values, arity, k_of_slot, dom, tmax, mm,
            red, infs, finite, infinite, digit, dirty, marked, supp, tsupp, old):
    """Table ``t``'s maxima recomputed
    (:func:`~twlib.inference.table_maxima.scan_maxima`), and the reduced costs with them."""
    _account(t, -1, state, ptr, var, arity, k_of_slot, tmax, mm, red, infs, dirty, marked)
    scan_maxima(t, ptr, var, stride, offset, values, arity, k_of_slot, dom, tmax, mm, finite,
                infinite, digit, supp, tsupp, old)
    _account(t, 1, state, ptr, var, arity, k_of_slot, tmax, mm, red, infs, dirty, marked)


@nb.njit(cache=True, _nrt=False)
def _total(exact, tmax, finite, infinite):
    """The sum of the tables' maxima: as kept up to date, or with ``exact``
    summed again (and stored)."""
    if infinite[0] > 0:
        return -np.inf
    if exact:
        total = 0.0
        for t in range(tmax.shape[0]):
            total += tmax[t]
        finite[0] = total
    return finite[0]


@nb.njit(cache=True, _nrt=False)
def _resum(state, arity, inc_ptr, inc_table, tmax, mm, red, infs, finite, infinite, dom, dsize,
           dirty, seg):
    """Every reduced cost and the sum of the maxima summed afresh from the
    tables' maxima, and the tree of the largest costs rebuilt."""
    for y in range(arity.shape[0]):
        for b in range(arity[y]):
            red[y, b] = 0.0
            infs[y, b] = 0
        for k in range(inc_ptr[y], inc_ptr[y + 1]):
            top = tmax[inc_table[k]]
            for b in range(arity[y]):
                if mm[k, b] == -np.inf:
                    infs[y, b] += 1
                else:
                    red[y, b] += top - mm[k, b]
    _total(True, tmax, finite, infinite)
    dirty[:] = False
    state[9] = 0
    state[11] = 0
    leaves = seg.shape[0] // 2
    seg[:] = -np.inf
    for y in range(arity.shape[0]):
        seg[leaves + y] = _largest_cost(y, dom, dsize, red, infs, arity, inc_ptr)
    for at in range(leaves - 1, 0, -1):
        seg[at] = max(seg[2 * at], seg[2 * at + 1])


@nb.njit(cache=True, _nrt=False)
def rescan_all(count, state, static, work):
    """Every table's maxima, every reduced cost and the tree of the largest
    computed afresh."""
    ptr, var, stride, offset, _, values, arity, inc_ptr, inc_table, k_of_slot = static
    dom, dsize, tmax, mm, red, infs = work[0], work[1], work[3], work[4], work[5], work[6]
    finite, infinite, digit = work[12], work[13], work[14]
    dirty, seg = work[15], work[17]
    supp, tsupp, old = work[21], work[22], work[23]
    tmax[:] = 0.0
    finite[0] = 0.0
    infinite[0] = 0
    for t in range(count):
        scan_maxima(t, ptr, var, stride, offset, values, arity, k_of_slot, dom, tmax, mm, finite,
                    infinite, digit, supp, tsupp, old[:0])
    _resum(state, arity, inc_ptr, inc_table, tmax, mm, red, infs, finite, infinite, dom, dsize,
           dirty, seg)


@nb.njit(cache=True, _nrt=False)
def _save(t, state, ptr, var, arity, k_of_slot, tmax, mm, stamp, ttrail, ftrail):
    """Put table ``t``'s maxima on the trail, once per trial; False when it is full."""
    if stamp[t] == state[7]:
        return True
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
        for b in range(a):
            ftrail[f + b] = mm[k_of_slot[j], b]
        f += a
    state[6] = f
    stamp[t] = state[7]
    return True


@nb.njit(cache=True, _nrt=False)
def _undo(marks, state, ptr, var, arity, k_of_slot, dom, dsize, tmax, mm, red, infs, stamp,
          dtrail, ttrail, ftrail, finite, infinite, dirty, marked):
    """Back to the trail lengths ``marks`` (values, tables, floats)."""
    top = dom.shape[1]
    while state[4] > marks[0]:
        state[4] -= 1
        x, a = dtrail[state[4]] // top, dtrail[state[4]] % top
        dom[x, a] = True
        dsize[x] += 1
        _mark(x, state, dirty, marked)
    f = state[6]
    while state[5] > marks[1]:
        state[5] -= 1
        t = ttrail[state[5]]
        _account(t, -1, state, ptr, var, arity, k_of_slot, tmax, mm, red, infs, dirty, marked)
        for j in range(ptr[t + 1] - 1, ptr[t] - 1, -1):
            a = arity[var[j]]
            f -= a
            for b in range(a):
                mm[k_of_slot[j], b] = ftrail[f + b]
        f -= 1
        set_maximum(t, ftrail[f], tmax, finite, infinite)
        _account(t, 1, state, ptr, var, arity, k_of_slot, tmax, mm, red, infs, dirty, marked)
        state[11] += 1
        stamp[t] = -1
    state[6] = f


@nb.njit(cache=True, _nrt=False)
def _remove(x, a, state, dom, dsize, dtrail, dirty, marked):
    dom[x, a] = False
    dsize[x] -= 1
    _mark(x, state, dirty, marked)
    dtrail[state[4]] = x * dom.shape[1] + a
    state[4] += 1


@nb.njit(cache=True, _nrt=False)
def root_propagate(state, scalars, target, static, work):
    """:func:`_propagate` of every value removed so far, from the tuples the
    class keeps; the root's bound: the sum of the maxima lowered by the
    largest over the variables of their smallest reduced cost (every
    assignment pays at least that on each variable)."""
    ptr, var, stride, offset, _, values, arity, inc_ptr, inc_table, k_of_slot = static
    (dom, dsize, weight, tmax, mm, red, infs, stamp, touched, dtrail, ttrail, ftrail, finite,
     infinite, digit, dirty, marked, seg, found, _, _, supp, tsupp, old) = work
    total = _propagate(state, scalars, target, 0, ptr, var, stride, offset, values, arity,
                       inc_ptr, inc_table, k_of_slot, dom, dsize, weight, tmax, mm, red, infs,
                       stamp, touched, dtrail, ttrail, ftrail, finite, infinite, digit, dirty,
                       marked, seg, found, supp, tsupp, old)
    largest = 0.0
    for y in range(arity.shape[0]):
        if dsize[y] < 2 or inc_ptr[y + 1] == inc_ptr[y]:
            continue
        smallest = np.inf
        for b in range(arity[y]):
            if dom[y, b]:
                smallest = min(smallest, np.inf if infs[y, b] > 0 else red[y, b])
        largest = max(largest, smallest)
    return total - largest


@nb.njit(cache=True, _nrt=False)
def _propagate(state, scalars, target, start, ptr, var, stride, offset, values, arity,
               inc_ptr, inc_table, k_of_slot, dom, dsize, weight, tmax, mm, red, infs, stamp,
               touched, dtrail, ttrail, ftrail, finite, infinite, digit, dirty, marked, seg, found,
               supp, tsupp, old):
    """Recompute the tables that the values removed since trail position
    ``start`` may lower and remove every value whose reduced cost leaves it no
    better than the floor, until nothing changes; the sum of the tables'
    maxima (above the floor), or ``-inf`` when a domain empties (the culprit's
    weight grows) or the trail is full."""
    top = dom.shape[1]
    floor = floor_of(scalars, target)
    # below this a value or a bound is worse than the incumbent, not tied with it
    worse = max(scalars[0] - slack(scalars[0], target[1]), target[0])
    margin = _NEAR * (1.0 + abs(floor))
    # stamps of this trial's tables already recomputed in the current round
    fresh = state[7] + (1 << 40)
    while True:
        rescanned = 0
        end = state[4]
        for i in range(start, end):
            x, a = dtrail[i] // top, dtrail[i] % top
            for k in range(inc_ptr[x], inc_ptr[x + 1]):
                t = inc_table[k]
                if stamp[t] == fresh or not may_lower(t, k, a, ptr, var, stride, offset, values,
                                                     arity, k_of_slot, dom, tmax, mm, supp, tsupp):
                    continue
                if not _save(t, state, ptr, var, arity, k_of_slot, tmax, mm, stamp, ttrail,
                             ftrail):
                    return -np.inf
                _rescan(t, state, ptr, var, stride, offset, values, arity, k_of_slot, dom,
                        tmax, mm, red, infs, finite, infinite, digit, dirty, marked, supp, tsupp,
                        old)
                stamp[t] = fresh
                touched[rescanned] = t
                rescanned += 1
        start = end
        for i in range(rescanned):
            stamp[touched[i]] = state[7]
        state[11] += rescanned
        if state[11] >= max(_RESUM_AFTER, inc_table.shape[0]):
            _resum(state, arity, inc_ptr, inc_table, tmax, mm, red, infs, finite, infinite, dom,
                   dsize, dirty, seg)
        total = _total(False, tmax, finite, infinite)
        if not total > floor + margin:
            total = _total(True, tmax, finite, infinite)
        if not total > floor:
            if total > worse:
                state[10] = 1
            return -np.inf
        # the variables with a value near enough the floor to be checked (twice
        # the margin: a superset, the tests below decide); every one while
        # there is no floor
        _refresh(state, dirty, marked, seg, dom, dsize, red, infs, arity, inc_ptr)
        near = _reaching(total - floor - 2 * margin if floor > -np.inf else -np.inf, seg,
                         found, arity.shape[0])
        changed = False
        for i in range(near):
            y = found[i]
            if dsize[y] < 2 or inc_ptr[y + 1] == inc_ptr[y]:
                continue
            for b in range(arity[y]):
                if not dom[y, b]:
                    continue
                cost = np.inf if infs[y, b] > 0 else red[y, b]
                if not total - cost > floor + margin:
                    # near the floor the sum kept up to date may have drifted
                    cost = _reduced_cost(y, b, True, inc_ptr, inc_table, tmax, mm, red, infs)
                    _mark(y, state, dirty, marked)
                if not total - cost > floor:
                    if total - cost > worse:
                        state[10] = 1
                    _remove(y, b, state, dom, dsize, dtrail, dirty, marked)
                    changed = True
            if dsize[y] == 0:
                _blame(y, state, weight)
                return -np.inf
        if not changed:
            return total


@nb.njit(cache=True, _nrt=False)
def _eliminate(x, state, ptr, var, stride, offset, values, arity, inc_ptr, inc_table, mm, dom,
               dsize, red, infs, dtrail, dirty, marked, odometer, seen):
    """Remove the values of each neighbour of ``x`` (whose domain has just
    shrunk) that the neighbour's value of smallest reduced cost dominates
    (:func:`~twlib.inference.dominance.dominates`); whether any went.  An optimum
    within the domains stays: the dominating value stays whenever one goes."""
    removed = False
    for k in range(inc_ptr[x], inc_ptr[x + 1]):
        for j in range(ptr[inc_table[k]], ptr[inc_table[k] + 1]):
            y = var[j]
            if y == x or seen[y] or dsize[y] < 2:
                continue
            seen[y] = True
            b, low = -1, np.inf
            for c in range(arity[y]):
                cost = np.inf if infs[y, c] > 0 else red[y, c]
                if dom[y, c] and (b < 0 or cost < low):
                    b, low = c, cost
            for a in range(arity[y]):
                if a != b and dom[y, a] and dominates(y, a, b, ptr, var, stride, offset, values,
                                                       arity, inc_ptr, inc_table, mm, dom,
                                                       odometer):
                    _remove(y, a, state, dom, dsize, dtrail, dirty, marked)
                    removed = True
    for k in range(inc_ptr[x], inc_ptr[x + 1]):
        for j in range(ptr[inc_table[k]], ptr[inc_table[k] + 1]):
            seen[var[j]] = False
    return removed


@nb.njit(cache=True, _nrt=False)
def _choose(arity, inc_ptr, dsize, weight):
    """The variable with two values or more and the fewest per unit of weight; -1 if none."""
    chosen, score = -1, np.inf
    for x in range(arity.shape[0]):
        if dsize[x] < 2:
            continue
        s = dsize[x] / (weight[x] + (inc_ptr[x + 1] - inc_ptr[x]))
        if s < score:
            chosen, score = x, s
    return chosen


@nb.njit(cache=True, _nrt=False)
def depth_first(state, scalars, target, best, static, tab, count, work, levels, budget):
    """Expand up to ``budget`` nodes of the depth-first search from where it
    stopped, or fewer if it finds a better incumbent."""
    ptr, var, stride, offset, _, values, arity, inc_ptr, inc_table, k_of_slot = static
    (dom, dsize, weight, tmax, mm, red, infs, stamp, touched, dtrail, ttrail, ftrail, finite,
     infinite, digit, dirty, marked, seg, found, seen, odometer, supp, tsupp, old) = work
    level_var, level_order, level_count, level_next, level_marks, assign = levels
    n = arity.shape[0]
    nodes = 0
    # a level to refute (its last value tried is done with: see the end of the
    # loop), or -1; ``ended`` when backing up left the root
    refute = -1
    # a new incumbent ends the call, so that the caller can see whether it
    # meets the bound proved
    improved = False
    while True:
        if refute >= 0:
            # remove the level's last value tried and propagate, as the branch
            # x != a of binary branching; when that leaves no value able to beat
            # the floor, the level is done with too
            x = level_var[refute]
            a = level_order[refute, level_next[refute] - 1]
            if level_next[refute] < level_count[refute] and dsize[x] >= 2 and dom[x, a]:
                # the trail is where the value's trial started from
                state[7] += 1
                state[10] = 0
                _remove(x, a, state, dom, dsize, dtrail, dirty, marked)
                bound = _propagate(state, scalars, target, level_marks[refute, 0], ptr, var, stride,
                                   offset, values, arity, inc_ptr, inc_table, k_of_slot,
                                   dom, dsize, weight, tmax, mm, red, infs, stamp, touched,
                                   dtrail, ttrail, ftrail, finite, infinite, digit, dirty,
                                   marked, seg, found, supp, tsupp, old)
                before = state[4]
                if bound > floor_of(scalars, target) and _eliminate(
                        x, state, ptr, var, stride, offset, values, arity, inc_ptr, inc_table,
                        mm, dom, dsize, red, infs, dtrail, dirty, marked, odometer, seen):
                    bound = _propagate(state, scalars, target, before, ptr, var, stride, offset,
                                       values, arity, inc_ptr, inc_table, k_of_slot, dom, dsize,
                                       weight, tmax, mm, red, infs, stamp, touched, dtrail, ttrail,
                                       ftrail, finite, infinite, digit, dirty, marked, seg, found,
                                       supp, tsupp, old)
                if not bound > floor_of(scalars, target):
                    _undo(level_marks[refute], state, ptr, var, arity, k_of_slot, dom, dsize,
                          tmax, mm, red, infs, stamp, dtrail, ttrail, ftrail, finite, infinite,
                          dirty, marked)
                    level_next[refute] = level_count[refute]
            refute = -1
        if nodes >= budget or state[2] or state[8] or improved:
            break
        level = state[0]
        back_up = False
        if not state[1]:                                 # choose at this level
            x = _choose(arity, inc_ptr, dsize, weight)
            if x < 0:                                    # every domain a single value
                for y in range(n):
                    for a in range(arity[y]):
                        if dom[y, a]:
                            assign[y] = a
                value = tables_total(assign, count, tab)
                if value > scalars[0]:
                    scalars[0] = value
                    for y in range(n):
                        best[y] = assign[y]
                    improved = True
                back_up = True
                state[1] = 1
            else:
                k = 0
                for a in range(arity[x]):
                    if dom[x, a]:
                        level_order[level, k] = a
                        k += 1
                for i in range(1, k):                    # smallest reduced cost first
                    a = level_order[level, i]
                    j = i
                    while j > 0 and red[x, level_order[level, j - 1]] > red[x, a]:
                        level_order[level, j] = level_order[level, j - 1]
                        j -= 1
                    level_order[level, j] = a
                level_var[level], level_count[level], level_next[level] = x, k, 0
                state[1] = 1
                continue
        elif level_next[level] == level_count[level]:    # every value tried: back up
            back_up = True
        if back_up:
            # return to the parent and refute its value; at the root, end the run
            if level == 0:
                state[2] = 1
                break
            state[0] = level - 1
            _undo(level_marks[level - 1], state, ptr, var, arity, k_of_slot, dom, dsize, tmax,
                  mm, red, infs, stamp, dtrail, ttrail, ftrail, finite, infinite, dirty, marked)
            refute = level - 1
            continue
        x = level_var[level]
        a = level_order[level, level_next[level]]
        level_next[level] += 1
        if not dom[x, a]:
            continue
        level_marks[level, 0], level_marks[level, 1] = state[4], state[5]
        level_marks[level, 2] = state[6]
        state[7] += 1
        state[10] = 0
        for b in range(arity[x]):
            if b != a and dom[x, b]:
                _remove(x, b, state, dom, dsize, dtrail, dirty, marked)
        nodes += 1
        bound = _propagate(state, scalars, target, level_marks[level, 0], ptr, var, stride, offset,
                           values, arity, inc_ptr, inc_table, k_of_slot, dom, dsize, weight, tmax,
                           mm, red, infs, stamp, touched, dtrail, ttrail, ftrail, finite, infinite,
                           digit, dirty, marked, seg, found, supp, tsupp, old)
        before = state[4]
        if bound > floor_of(scalars, target) and _eliminate(
                x, state, ptr, var, stride, offset, values, arity, inc_ptr, inc_table, mm, dom,
                dsize, red, infs, dtrail, dirty, marked, odometer, seen):
            bound = _propagate(state, scalars, target, before, ptr, var, stride, offset,
                               values, arity, inc_ptr, inc_table, k_of_slot, dom, dsize, weight,
                               tmax, mm, red, infs, stamp, touched, dtrail, ttrail, ftrail, finite,
                               infinite, digit, dirty, marked, seg, found, supp, tsupp, old)
        if bound > floor_of(scalars, target):
            state[0] = level + 1
            state[1] = 0
        else:
            _blame(x, state, weight)
            _undo(level_marks[level], state, ptr, var, arity, k_of_slot, dom, dsize, tmax, mm,
                  red, infs, stamp, dtrail, ttrail, ftrail, finite, infinite, dirty, marked)
            refute = level
    state[3] += nodes
