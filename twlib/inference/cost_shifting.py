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
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .. import clock
from .andor import flat_tables

__all__ = ["mplp"]

_SWEEPS_PER_CALL = 20


def mplp(tables, arity, *, seconds: float = 1.0, max_sweeps: int = 100_000,
         tolerance: float = 1e-7):
    """Tables reparameterised by MPLP star updates, and the bound after each call.

    ``tables`` are ``(scope, log table)`` pairs over variable indices with
    ``arity`` (as :func:`twlib.inference.minibucket.log_tables` gives them); the
    sweeps stop after ``seconds``, ``max_sweeps``, or when
    ``_SWEEPS_PER_CALL`` sweeps lower the bound by less than ``tolerance``
    (relative).  Returns ``(tables, bounds)``: the same scopes with shifted
    values (the sum over tables is unchanged for every assignment) and the
    LP bound ``sum of table maxima`` before the first sweep and after each call.

    >>> import numpy as np
    >>> t = [((0,), np.log([1.0, 0.1])), ((0, 1), np.log([[1.0, 0.5], [0.5, 1.0]])),
    ...      ((1,), np.log([0.1, 1.0]))]
    >>> shifted, bounds = mplp(t, np.array([2, 2]))
    >>> round(float(np.exp(bounds[0])), 3), round(float(np.exp(bounds[-1])), 3)
    (1.0, 0.5)
    """
    ptr, var, stride, offset, values = flat_tables(tables)
    arity = np.asarray(arity, dtype=np.int64)
    around = [[] for _ in range(len(arity))]
    for t, (scope, _) in enumerate(tables):
        for j, v in enumerate(scope):
            around[v].append((t, ptr[t] + j))
    inc_ptr = np.cumsum([0] + [len(a) for a in around]).astype(np.int64)
    inc_table = np.array([t for a in around for t, _ in a], dtype=np.int64)
    inc_slot = np.array([j for a in around for _, j in a], dtype=np.int64)
    size = np.array([int(np.size(v)) for _, v in tables], dtype=np.int64)
    bounds = [_bound(ptr, offset, size, values)]
    deadline = clock.now() + seconds
    sweeps = 0
    while sweeps < max_sweeps:
        step = min(_SWEEPS_PER_CALL, max_sweeps - sweeps)
        _star_sweeps(ptr, var, stride, offset, size, values, arity, inc_ptr, inc_table,
                     inc_slot, step)
        sweeps += step
        bounds.append(_bound(ptr, offset, size, values))
        if not bounds[-2] - bounds[-1] > tolerance * max(1.0, abs(bounds[-1])):
            break
        if clock.expired(deadline):
            break
    shifted = [(scope, values[offset[t]:offset[t] + size[t]].reshape(np.shape(v)).copy())
               for t, (scope, v) in enumerate(tables)]
    return shifted, np.array(bounds)


@nb.njit(cache=True)
def _bound(ptr, offset, size, values):
    total = 0.0
    for t in range(ptr.shape[0] - 1):
        best = -np.inf
        for e in range(offset[t], offset[t] + size[t]):
            if values[e] > best:
                best = values[e]
        total += best
    return total


@nb.njit(cache=True)
def _star_sweeps(ptr, var, stride, offset, size, values, arity, inc_ptr, inc_table, inc_slot,
                 sweeps):
    """``sweeps`` rounds of star updates over every variable in turn, in place."""
    n = arity.shape[0]
    top, most = 1, 1
    for x in range(n):
        top = max(top, arity[x])
        most = max(most, inc_ptr[x + 1] - inc_ptr[x])
    m = np.empty((most, top))
    total = np.empty(top)
    for _ in range(sweeps):
        for x in range(n):
            deg = inc_ptr[x + 1] - inc_ptr[x]
            if deg < 2:
                continue
            ax = arity[x]
            total[:ax] = 0.0
            for k in range(deg):
                t = inc_table[inc_ptr[x] + k]
                step = stride[inc_slot[inc_ptr[x] + k]]
                m[k, :ax] = -np.inf
                # the entries where x = a: runs of `step` entries, every ax * step
                for start in range(offset[t], offset[t] + size[t], ax * step):
                    e = start
                    for a in range(ax):
                        top_a = m[k, a]
                        for _ in range(step):
                            if values[e] > top_a:
                                top_a = values[e]
                            e += 1
                        m[k, a] = top_a
                for a in range(ax):
                    total[a] += m[k, a]
            feasible = False
            for a in range(ax):
                if total[a] > -np.inf:
                    feasible = True
            if not feasible:               # the evidence is impossible: nothing to shift
                continue
            for k in range(deg):
                t = inc_table[inc_ptr[x] + k]
                step = stride[inc_slot[inc_ptr[x] + k]]
                for start in range(offset[t], offset[t] + size[t], ax * step):
                    e = start
                    for a in range(ax):
                        if total[a] == -np.inf:
                            for _ in range(step):
                                values[e] = -np.inf
                                e += 1
                        else:
                            shift = total[a] / deg - m[k, a]
                            for _ in range(step):
                                values[e] += shift
                                e += 1
