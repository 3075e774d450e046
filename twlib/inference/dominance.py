"""Dead-end elimination for the propagation search (:mod:`twlib.inference.propagation`):
whether one value of a variable is as good as another in every assignment the domains allow.

The test reads only the entries the domains ``dom`` allow, by an odometer
over each other variable's values left (the last variable fastest): deep in a
search most variables of a table have one value left.  Row ``r`` of
``odometer`` holds, for the table's ``r``-th variable, its position, its
count of values left, then those values.  It is compiled without reference
counting, as the search's kernels are (:mod:`twlib.inference.propagation_kernels`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["dominates"]


@nb.njit(cache=True, _nrt=False)
def _next_entry(index, first, last, stride, odometer):
    """The odometer one step on, the last variable fastest: the next allowed
    entry's index, from ``index``, or -1 once it has gone round."""
    j = last - 1
    while j >= first:
        r = j - first
        index -= odometer[r, 2 + odometer[r, 0]] * stride[j]
        odometer[r, 0] += 1
        if odometer[r, 0] < odometer[r, 1]:
            return index + odometer[r, 2 + odometer[r, 0]] * stride[j]
        odometer[r, 0] = 0
        index += odometer[r, 2] * stride[j]
        j -= 1
    return -1


@nb.njit(cache=True, _nrt=False)
def dominates(y, a, b, ptr, var, stride, offset, values, arity, inc_ptr, inc_table, mm, dom,
              odometer):
    """Whether value ``b`` of ``y`` is as good as ``a`` in every assignment the
    domains allow: whether the least, over those assignments, of what changing
    ``y`` from ``a`` to ``b`` adds to each table around ``y``, summed over the
    tables (a lower bound on what it adds to the whole), is at least 0
    (dead-end elimination, Goldstein 1994).  A table's least is at most the
    difference of its maxima at ``b`` and at ``a`` (``mm``, by incidence, as the
    search keeps them), so the sum stops as soon as those of the tables not yet
    read cannot bring it back to 0.

    >>> from twlib.inference.flat import flat_tables
    >>> table = np.array([[1.0, 5.0], [3.0, 2.0]])           # x0 = 1 beats x0 = 0 if x1 = 0
    >>> ptr, var, stride, offset, values = flat_tables([((0, 1), table)])
    >>> dom = np.array([[True, True], [True, False]])
    >>> mm = np.array([[1.0, 3.0], [3.0, -np.inf]])          # maxima at each value, allowed
    >>> odometer, arity = np.zeros((2, 4), dtype=np.int64), np.array([2, 2])
    >>> inc_ptr, inc_table = np.array([0, 1, 2]), np.array([0, 0])
    >>> dominates(0, 0, 1, ptr, var, stride, offset, values, arity, inc_ptr, inc_table, mm, dom,
    ...           odometer)
    True
    """
    ahead = 0.0
    for k in range(inc_ptr[y], inc_ptr[y + 1]):
        if mm[k, a] > -np.inf:
            ahead += mm[k, b] - mm[k, a]
    if ahead < 0.0:
        return False
    total = 0.0
    for k in range(inc_ptr[y], inc_ptr[y + 1]):
        t = inc_table[k]
        if mm[k, a] == -np.inf:          # no allowed entry with y = a
            continue
        ahead -= mm[k, b] - mm[k, a]
        first, last = ptr[t], ptr[t + 1]
        index = offset[t]
        step = 0
        empty = False
        for j in range(first, last):
            r = j - first
            count = 0
            if var[j] == y:
                step = stride[j]
                odometer[r, 2] = 0
                count = 1
            else:
                for c in range(arity[var[j]]):
                    if dom[var[j], c]:
                        odometer[r, 2 + count] = c
                        count += 1
            odometer[r, 0], odometer[r, 1] = 0, count
            empty = empty or count == 0
            index += odometer[r, 2] * stride[j]
        least = np.inf
        while not empty:
            va, vb = values[index + a * step], values[index + b * step]
            if va > -np.inf:
                d = vb - va
                if d < least:
                    least = d
                    if least == -np.inf:
                        return False
            index = _next_entry(index, first, last, stride, odometer)
            empty = index < 0
        if least < np.inf:
            total += least
        if total + ahead < 0.0:
            return False
    return True
