"""Cost shifting: the LP relaxation of the MPE, tightened by MPLP before the mini-buckets.

The log-value of an assignment is a sum of log tables, and moving a function
of one variable from one table to another (subtract ``d(x)`` from a table that
holds ``X``, add it to another that holds ``X``) changes no assignment's value:
it is a *reparameterisation*.  What it does change is the trivial upper bound
``sum over tables of max table``, the dual of the MPE's linear-programming
relaxation.  MPLP (Globerson & Jaakkola 2007) lowers that bound by block
coordinate descent: the *star update* of a variable ``X`` takes from each table
around ``X`` its max-marginal ``m_t(x)`` and gives each back an equal share of
their sum,

    table_t  <-  table_t - m_t(x) + (sum_s m_s(x)) / deg(X),

after which every table around ``X`` has the same max-marginal, so their maxima
add up to ``max_x sum_s m_s(x)`` where they were ``sum_s max_x m_s(x)``: the
bound never rises.

Mini-bucket elimination run on the shifted tables bounds the same MPE, usually
far more tightly, because the shifts have already moved cost across the
mini-bucket splits (Ihler, Flerova, Dechter & Otten 2012; the DAOOPT solver
that won the PASCAL 2011 MAP challenge runs MPLP before its mini-buckets).

Zeros (``-inf`` in log space) are kept exact: a value of ``X`` at which one
table around ``X`` is ``-inf`` whatever the rest is a value no assignment can
take, so every table around ``X`` is set to ``-inf`` there.  Repeated over the
sweeps this is arc consistency on the zero pattern, which is what lets the
search stop diving into assignments of probability zero.

During the search the same sweeps bound a partial assignment: the shifted
tables are clamped to it and swept again (:func:`conditioned_bound`), which
is what makes the bound follow the assignment.  The swept tables also round
into a complete assignment (:func:`rounded_assignment`) and name the variable
the LP is least sure of (:func:`branching_variable`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .. import clock
from .flat import flat_tables, slack, table_sizes

__all__ = ["MPLP_TOL", "mplp", "mplp_in_place", "unflattened", "conditioned_bound",
           "rounded_assignment", "branching_variable", "star_incidence", "star_gathers"]

# MPLP stops once a step of its sweeps lowers the bound by less than this (relative)
MPLP_TOL = 1e-7
_SWEEPS_PER_CALL = 20
# Rounding clamps this fraction of the free variables at a time: a quarter at once
# clamps ties against each other into zeros on Promedas
_ROUNDING_SHARE = 32


def mplp(tables, arity, *, time_limit: float = 1.0, max_sweeps: int = 100_000,
         tol: float = MPLP_TOL, decode: bool = False):
    """Tables reparameterised by MPLP star updates, and the bound after each call.

    ``tables`` are ``(scope, log table)`` pairs over variable indices with
    ``arity`` (as :func:`twlib.inference.minibucket.log_tables` gives them); the
    sweeps stop after ``time_limit`` seconds, ``max_sweeps``, or when
    ``_SWEEPS_PER_CALL`` sweeps lower the bound by less than ``tol``
    (relative).  Returns ``(tables, bounds)``: the same scopes with shifted
    values (the sum over tables is unchanged for every assignment) and the
    LP bound ``sum of table maxima`` before the first sweep and after each call.

    With ``decode``, after each call every variable takes the value of largest
    belief (the sum of its tables' max-marginals), and the sweeps stop as soon
    as that assignment's value reaches the bound (up to rounding): the LP is
    tight and the assignment optimal, with nothing left to search.  Then
    ``(tables, bounds, assignment)`` is returned, the assignment None unless
    it closed the bound.

    >>> import numpy as np
    >>> t = [((0,), np.log([1.0, 0.1])), ((0, 1), np.log([[1.0, 0.5], [0.5, 1.0]])),
    ...      ((1,), np.log([0.1, 1.0]))]
    >>> shifted, bounds = mplp(t, np.array([2, 2]))
    >>> round(float(np.exp(bounds[0])), 3), round(float(np.exp(bounds[-1])), 3)
    (1.0, 0.5)
    """
    tab = flat_tables(tables)
    bounds, closed = mplp_in_place(tab, arity, time_limit=time_limit, max_sweeps=max_sweeps,
                                   tol=tol, decode=decode)
    shifted = unflattened(tab, arity)
    return (shifted, bounds, closed) if decode else (shifted, bounds)


def mplp_in_place(tab, arity, *, time_limit: float = 1.0, max_sweeps: int = 100_000,
                  tol: float = MPLP_TOL, decode: bool = False, constant: float = 0.0):
    """:func:`mplp` on flat tables ``tab`` (:func:`twlib.inference.flat.flat_tables`),
    whose values it shifts in place: ``(bounds, assignment)``, the assignment
    None unless ``decode`` found one that closes the bound (up to
    :func:`~twlib.inference.flat.slack` of its value with ``constant``, the
    log value the tables leave out).  A caller that
    alternates MPLP with a search on the same tables flattens them once.

    >>> import numpy as np
    >>> pair = np.log([[1.0, 0.5], [0.5, 1.0]])
    >>> tab = flat_tables([((0,), np.log([1.0, 0.1])), ((0, 1), pair)])
    >>> bounds, closed = mplp_in_place(tab, np.array([2, 2]), decode=True)
    >>> round(float(np.exp(bounds[-1])), 3), closed.tolist()
    (1.0, [0, 0])
    """
    ptr, var, stride, offset, values = tab
    arity = np.asarray(arity, dtype=np.int64)
    count = len(ptr) - 1
    inc_ptr, gather_ptr, gather = star_gathers(tab, arity, count)
    size = table_sizes(tab)
    every = np.arange(len(arity))
    m, total = _scratch(arity, inc_ptr)
    bounds = [_bound(count, offset, size, values)]
    deadline = clock.now() + time_limit
    sweeps, closed = 0, None
    while sweeps < max_sweeps:
        step = min(_SWEEPS_PER_CALL, max_sweeps - sweeps)
        _star_updates(every, step, values, arity, inc_ptr, gather_ptr, gather, m, total)
        sweeps += step
        bounds.append(_bound(count, offset, size, values))
        if decode:
            assign = np.zeros(len(arity), dtype=np.int64)
            value = _believed(ptr, var, stride, offset, values, arity, inc_ptr, gather_ptr,
                              gather, assign)
            if np.isfinite(value) and bounds[-1] <= value + slack(value, constant):
                closed = assign
                break
        if converged(bounds, tol):
            break
        if clock.expired(deadline):
            break
    return np.array(bounds), closed


def unflattened(tab, arity):
    """The flat tables ``tab`` over variables of ``arity`` values back as
    ``(scope, log table)`` pairs (copies, so that ``tab`` can change on).

    >>> tab = flat_tables([((1, 0), np.arange(6.0).reshape(3, 2))])
    >>> [(scope, t.tolist()) for scope, t in unflattened(tab, np.array([2, 3]))]
    [((1, 0), [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])]
    """
    ptr, scopes, sizes = tab[0].tolist(), tab[1].tolist(), np.asarray(arity).tolist()
    values, starts = tab[4], tab[3].tolist() + [len(tab[4])]
    return [(tuple(scopes[ptr[t]:ptr[t + 1]]),
             values[starts[t]:starts[t + 1]].reshape([sizes[v] for v in
                                                      scopes[ptr[t]:ptr[t + 1]]]).copy())
            for t in range(len(ptr) - 1)]


def converged(bounds, tol: float = MPLP_TOL) -> bool:
    """Whether the last call of :func:`mplp` that gave ``bounds`` lowered the
    bound by less than ``tol`` (relative): more sweeps would hardly tighten it.

    >>> converged([3.0, 2.0, 2.0]), converged([3.0, 2.0])
    (True, False)
    """
    if bounds[-1] == -np.inf:            # no assignment has a non-zero value: nothing to tighten
        return True
    return not bounds[-2] - bounds[-1] > tol * max(1.0, abs(bounds[-1]))


@nb.njit(cache=True)
def _believed(ptr, var, stride, offset, values, arity, inc_ptr, gather_ptr, gather, assign):
    """Set each variable in ``assign`` to its value of largest belief (the sum of
    its tables' max-marginals; the lowest value among ties) and return the sum
    of the tables at that assignment."""
    m, total = _scratch(arity, inc_ptr)
    for x in range(arity.shape[0]):
        _max_marginals(x, values, arity, inc_ptr, gather_ptr, gather, m, total)
        best = 0
        for a in range(1, arity[x]):
            if total[a] > total[best]:
                best = a
        assign[x] = best
    value = 0.0
    for t in range(ptr.shape[0] - 1):
        at = offset[t]
        for j in range(ptr[t], ptr[t + 1]):
            at += assign[var[j]] * stride[j]
        value += values[at]
    return value


def star_incidence(ptr, var, n_vars: int, count: int):
    """For each variable, the flat tables among the first ``count`` that hold it
    and the slot of it in each (an index into ``var`` and the strides), as
    ``(inc_ptr, inc_table, inc_slot)``: variable ``x``'s are at
    ``inc_ptr[x]:inc_ptr[x + 1]``.

    >>> tab = flat_tables([((0, 1), np.zeros((2, 2))), ((1,), np.zeros(2))])
    >>> [a.tolist() for a in star_incidence(tab[0], tab[1], 2, 2)]
    [[0, 1, 3], [0, 0, 1], [0, 1, 2]]
    """
    end = int(ptr[count])
    # sorted by variable, stably: each variable's tables stay in table order
    inc_slot = np.argsort(var[:end], kind="stable").astype(np.int64)
    inc_table = np.repeat(np.arange(count, dtype=np.int64), np.diff(ptr[:count + 1]))[inc_slot]
    inc_ptr = np.zeros(n_vars + 1, dtype=np.int64)
    np.cumsum(np.bincount(var[:end], minlength=n_vars), out=inc_ptr[1:])
    return inc_ptr, inc_table, inc_slot


def star_gathers(tab, arity, count: int):
    """The tables around each variable with their entries listed by its value:
    ``(inc_ptr, gather_ptr, gather)``.  Variable ``x``'s tables are the
    incidences ``k`` in ``inc_ptr[x]:inc_ptr[x + 1]`` (those of
    :func:`star_incidence`, among the first ``count`` flat tables), and the
    entries of incidence ``k``'s table where ``x = a`` are
    ``gather[gather_ptr[k] + a * h:gather_ptr[k] + (a + 1) * h]``, ``h`` its
    size over ``arity[x]``.  A star update reads and writes those runs
    directly: stepping through a table of a few entries by its strides costs
    more than the entries themselves.  The lists take as many integers as the
    tables' entries times their scopes.

    >>> tab = flat_tables([((0, 1), np.arange(6.0).reshape(2, 3))])
    >>> [a.tolist() for a in star_gathers(tab, np.array([2, 3]), 1)]
    [[0, 1, 2], [0, 6, 12], [0, 1, 2, 3, 4, 5, 0, 3, 1, 4, 2, 5]]
    """
    ptr, var, stride, offset, _ = tab
    arity = np.asarray(arity, dtype=np.int64)
    inc_ptr, inc_table, inc_slot = star_incidence(ptr, var, len(arity), count)
    gather_ptr, gather = _gathers(stride, offset, table_sizes(tab), arity, inc_ptr, inc_table,
                                  inc_slot)
    return inc_ptr, gather_ptr, gather


@nb.njit(cache=True)
def _gathers(stride, offset, size, arity, inc_ptr, inc_table, inc_slot):
    """The ``gather_ptr`` and ``gather`` of :func:`star_gathers`."""
    gather_ptr = np.zeros(inc_table.shape[0] + 1, dtype=np.int64)
    for k in range(inc_table.shape[0]):
        gather_ptr[k + 1] = gather_ptr[k] + size[inc_table[k]]
    gather = np.empty(gather_ptr[-1], dtype=np.int64)
    for x in range(arity.shape[0]):
        ax = arity[x]
        for k in range(inc_ptr[x], inc_ptr[x + 1]):
            t, step, at = inc_table[k], stride[inc_slot[k]], gather_ptr[k]
            for a in range(ax):
                for start in range(offset[t] + a * step, offset[t] + size[t], ax * step):
                    for e in range(start, start + step):
                        gather[at] = e
                        at += 1
    return gather_ptr, gather


@nb.njit(cache=True)
def _bound(count, offset, size, values):
    """The sum over the first ``count`` flat tables of their maxima."""
    total = 0.0
    for t in range(count):
        best = -np.inf
        for e in range(offset[t], offset[t] + size[t]):
            if values[e] > best:
                best = values[e]
        total += best
    return total


@nb.njit(cache=True)
def _scratch(arity, inc_ptr):
    """Work arrays for :func:`_star_updates`: max-marginals per table and their sum."""
    top, most = 1, 1
    for x in range(arity.shape[0]):
        top = max(top, arity[x])
        most = max(most, inc_ptr[x + 1] - inc_ptr[x])
    return np.empty((most, top)), np.empty(top)


@nb.njit(cache=True)
def conditioned_bound(fixed, assign, count, offset, size, values, work, arity, inc_ptr,
                      gather_ptr, gather, sweeps, target):
    """The MPLP bound of the first ``count`` flat tables with every variable
    ``x`` where ``fixed[x]`` clamped to ``assign[x]``: an upper bound on the best
    completion of that partial assignment.

    The tables' ``values`` are copied into ``work`` (warm start: the tables are
    already shifted at the root), the other values of a clamped variable are set
    to ``-inf`` there, and up to ``sweeps`` sweeps of star updates run over the
    free variables.  They stop early once the bound is at most ``target`` (the
    branch is refuted) or a sweep lowers it by less than a millionth.  The
    tables around each variable are ``inc_ptr, gather_ptr, gather``
    (:func:`star_gathers`).
    """
    end = offset[count - 1] + size[count - 1] if count else 0
    work[:end] = values[:end]
    for x in range(arity.shape[0]):
        if fixed[x]:
            _clamp(x, assign[x], work, arity, inc_ptr, gather_ptr, gather)
    m, total = _scratch(arity, inc_ptr)
    free = np.flatnonzero(~fixed)
    bound = _bound(count, offset, size, work)
    for _ in range(sweeps):
        if bound <= target:
            break
        _star_updates(free, 1, work, arity, inc_ptr, gather_ptr, gather, m, total)
        after = _bound(count, offset, size, work)
        if not bound - after > 1e-6 * max(1.0, abs(after)):
            bound = min(bound, after)
            break
        bound = after
    return bound


@nb.njit(cache=True)
def rounded_assignment(fixed, assign, work, arity, inc_ptr, gather_ptr, gather, sweeps):
    """Complete ``assign`` (given where ``fixed``) by rounding the LP: the tables
    ``work`` as :func:`conditioned_bound` leaves them (and changes them further).

    In rounds, each free variable's value of largest belief (the sum of its
    tables' max-marginals) is found; the 1/32 of the free variables whose best
    value leads their second by most are clamped to it, and ``sweeps`` sweeps
    of star updates pass what that implies to the rest (a zero among them, so
    the next rounds avoid it).  ``fixed`` is
    left as it was.
    """
    n = arity.shape[0]
    m, total = _scratch(arity, inc_ptr)
    free = np.array([x for x in range(n) if not fixed[x]], dtype=np.int64)
    margin = np.empty(free.shape[0])
    clamped = fixed.copy()
    while free.shape[0] > 0:
        for j in range(free.shape[0]):
            x = free[j]
            _max_marginals(x, work, arity, inc_ptr, gather_ptr, gather, m, total)
            first, second, best = -np.inf, -np.inf, 0
            for a in range(arity[x]):
                if total[a] > first:
                    first, second, best = total[a], first, a
                elif total[a] > second:
                    second = total[a]
            assign[x] = best
            margin[j] = first - second if first > -np.inf else 0.0
        take = np.argsort(-margin[:free.shape[0]])[:max(1, free.shape[0] // _ROUNDING_SHARE)]
        for j in take:
            x = free[j]
            clamped[x] = True
            _clamp(x, assign[x], work, arity, inc_ptr, gather_ptr, gather)
        free = np.array([x for x in free if not clamped[x]], dtype=np.int64)
        _star_updates(free, sweeps, work, arity, inc_ptr, gather_ptr, gather, m, total)


@nb.njit(cache=True)
def _clamp(x, keep, values, arity, inc_ptr, gather_ptr, gather):
    """Set every entry of the tables around ``x`` where ``x != keep`` to ``-inf``."""
    ax = arity[x]
    for k in range(inc_ptr[x], inc_ptr[x + 1]):
        h = (gather_ptr[k + 1] - gather_ptr[k]) // ax
        for a in range(ax):
            if a != keep:
                for j in range(gather_ptr[k] + a * h, gather_ptr[k] + (a + 1) * h):
                    values[gather[j]] = -np.inf


# the star updates allocate nothing: compiled without numba's reference counting,
# which counted their arrays at every call (a seventh of a sweep)
@nb.njit(cache=True, _nrt=False)
def _max_marginals(x, values, arity, inc_ptr, gather_ptr, gather, m, total):
    """Each table's max-marginal over ``x`` into ``m[k]``, their sum into ``total``."""
    ax = arity[x]
    for a in range(ax):
        total[a] = 0.0
    for k in range(inc_ptr[x + 1] - inc_ptr[x]):
        begin = gather_ptr[inc_ptr[x] + k]
        h = (gather_ptr[inc_ptr[x] + k + 1] - begin) // ax
        for a in range(ax):
            top_a = -np.inf
            for j in range(begin + a * h, begin + (a + 1) * h):
                if values[gather[j]] > top_a:
                    top_a = values[gather[j]]
            m[k, a] = top_a
            total[a] += top_a


@nb.njit(cache=True, _nrt=False)
def _star_updates(xs, sweeps, values, arity, inc_ptr, gather_ptr, gather, m, total):
    """``sweeps`` rounds of the star update of each variable of ``xs`` in
    turn, in place (``m``, ``total``: scratch).  One call for them all: a call
    per variable would cost as much as its update."""
    for _ in range(sweeps):
        for x in xs:
            deg = inc_ptr[x + 1] - inc_ptr[x]
            if deg < 2:
                continue
            if arity[x] == 2:
                _binary_star_update(x, values, inc_ptr, gather_ptr, gather, m)
                continue
            ax = arity[x]
            _max_marginals(x, values, arity, inc_ptr, gather_ptr, gather, m, total)
            feasible = False
            for a in range(ax):
                if total[a] > -np.inf:
                    feasible = True
            if not feasible:               # the evidence is impossible: nothing to shift
                continue
            for k in range(deg):
                begin = gather_ptr[inc_ptr[x] + k]
                h = (gather_ptr[inc_ptr[x] + k + 1] - begin) // ax
                for a in range(ax):
                    # a value some table rules out is ruled out in all (-inf shift)
                    shift = total[a] / deg - m[k, a] if total[a] > -np.inf else -np.inf
                    for j in range(begin + a * h, begin + (a + 1) * h):
                        values[gather[j]] += shift


@nb.njit(cache=True, _nrt=False)
def _binary_star_update(x, values, inc_ptr, gather_ptr, gather, m):
    """The star update of :func:`_star_updates` for a variable of two values,
    both read in one pass over each table: most models' variables are binary,
    and this takes about two thirds of the general loop's time."""
    deg = inc_ptr[x + 1] - inc_ptr[x]
    total0, total1 = 0.0, 0.0
    for k in range(deg):
        begin = gather_ptr[inc_ptr[x] + k]
        h = (gather_ptr[inc_ptr[x] + k + 1] - begin) // 2
        top0, top1 = -np.inf, -np.inf
        for j in range(begin, begin + h):
            top0 = max(top0, values[gather[j]])
            top1 = max(top1, values[gather[j + h]])
        m[k, 0], m[k, 1] = top0, top1
        total0 += top0
        total1 += top1
    if total0 == -np.inf and total1 == -np.inf:
        return                             # the evidence is impossible: nothing to shift
    for k in range(deg):
        begin = gather_ptr[inc_ptr[x] + k]
        h = (gather_ptr[inc_ptr[x] + k + 1] - begin) // 2
        shift0 = total0 / deg - m[k, 0] if total0 > -np.inf else -np.inf
        shift1 = total1 / deg - m[k, 1] if total1 > -np.inf else -np.inf
        for j in range(begin, begin + h):
            values[gather[j]] += shift0
            values[gather[j + h]] += shift1


@nb.njit(cache=True)
def branching_variable(fixed, values, arity, inc_ptr, gather_ptr, gather):
    """The free variable the LP is least sure of: the one whose two best beliefs
    (sums of max-marginals over its tables, ``values`` as :func:`conditioned_bound`
    leaves them) are closest; -1 when every free variable in a table has one
    value left."""
    m, total = _scratch(arity, inc_ptr)
    chosen, closest = -1, np.inf
    for x in range(arity.shape[0]):
        if fixed[x] or inc_ptr[x + 1] == inc_ptr[x]:
            continue
        _max_marginals(x, values, arity, inc_ptr, gather_ptr, gather, m, total)
        first, second = -np.inf, -np.inf
        for a in range(arity[x]):
            if total[a] > first:
                first, second = total[a], first
            elif total[a] > second:
                second = total[a]
        if second > -np.inf and first - second < closest:
            chosen, closest = x, first - second
    return chosen
