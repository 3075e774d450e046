"""Flat tables read within domains, for the propagation search
(:mod:`twlib.inference.propagation`).

Both functions read only the entries the domains ``dom`` allow, by an
odometer over each variable's values left (the last variable fastest): deep
in a search most variables of a table have one value left, and a table of 64
entries has a handful allowed.  Row ``r`` of ``digit`` holds, for the table's
``r``-th variable, its position on the odometer, its count of values left,
then those values.  They are compiled without reference counting, as the
search's kernels are (:mod:`twlib.inference.propagation_kernels`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["table_maxima", "dominates"]


@nb.njit(cache=True, _nrt=False)
def table_maxima(t, ptr, var, stride, offset, values, arity, k_of_slot, dom, mm, digit):
    """Table ``t``'s maximum over the entries the domains allow (returned), and
    its maximum at each value of each of its variables (into ``mm``, by incidence).

    >>> from twlib.inference.flat import flat_tables
    >>> table = np.array([[1.0, 5.0], [3.0, 2.0]])
    >>> ptr, var, stride, offset, values = flat_tables([((0, 1), table)])
    >>> dom, mm = np.array([[True, True], [True, False]]), np.empty((2, 2))
    >>> digit = np.zeros((2, 4), dtype=np.int64)
    >>> k_of_slot, arity = np.array([0, 1]), np.array([2, 2])
    >>> top = table_maxima(0, ptr, var, stride, offset, values, arity, k_of_slot, dom, mm, digit)
    >>> float(top), mm.tolist()
    (3.0, [[1.0, 3.0], [3.0, -inf]])
    """
    first, last = ptr[t], ptr[t + 1]
    index = offset[t]
    empty = False
    for j in range(first, last):
        y, r = var[j], j - first
        count = 0
        for b in range(arity[y]):
            mm[k_of_slot[j], b] = -np.inf
            if dom[y, b]:
                digit[r, 2 + count] = b
                count += 1
        digit[r, 0], digit[r, 1] = 0, count
        if count == 0:
            empty = True
        else:
            index += digit[r, 2] * stride[j]
    top = -np.inf
    while not empty:
        value = values[index]
        if value > -np.inf:
            if value > top:
                top = value
            for j in range(first, last):
                r = j - first
                k, a = k_of_slot[j], digit[r, 2 + digit[r, 0]]
                if value > mm[k, a]:
                    mm[k, a] = value
        index = _next_entry(index, first, last, stride, digit)
        empty = index < 0
    return top


@nb.njit(cache=True, _nrt=False)
def _next_entry(index, first, last, stride, digit):
    """The odometer of :func:`table_maxima` one step on, the last variable fastest:
    the next allowed entry's index, from ``index``, or -1 once it has gone round."""
    j = last - 1
    while j >= first:
        r = j - first
        index -= digit[r, 2 + digit[r, 0]] * stride[j]
        digit[r, 0] += 1
        if digit[r, 0] < digit[r, 1]:
            return index + digit[r, 2 + digit[r, 0]] * stride[j]
        digit[r, 0] = 0
        index += digit[r, 2] * stride[j]
        j -= 1
    return -1


@nb.njit(cache=True, _nrt=False)
def dominates(y, a, b, ptr, var, stride, offset, values, arity, inc_ptr, inc_table, mm, dom,
              digit):
    """Whether value ``b`` of ``y`` is as good as ``a`` in every assignment the
    domains allow: whether the least, over those assignments, of what changing
    ``y`` from ``a`` to ``b`` adds to each table around ``y``, summed over the
    tables (a lower bound on what it adds to the whole), is at least 0
    (dead-end elimination, Goldstein 1994).  A table's least is at most the
    difference of its maxima at ``b`` and at ``a`` (``mm``, as
    :func:`table_maxima` leaves them), so the sum stops as soon as those of the
    tables not yet read cannot bring it back to 0.

    >>> from twlib.inference.flat import flat_tables
    >>> table = np.array([[1.0, 5.0], [3.0, 2.0]])           # x0 = 1 beats x0 = 0 if x1 = 0
    >>> ptr, var, stride, offset, values = flat_tables([((0, 1), table)])
    >>> dom, mm = np.array([[True, True], [True, False]]), np.empty((2, 2))
    >>> digit, arity = np.zeros((2, 4), dtype=np.int64), np.array([2, 2])
    >>> _ = table_maxima(0, ptr, var, stride, offset, values, arity, np.array([0, 1]), dom, mm,
    ...                  digit)
    >>> inc_ptr, inc_table = np.array([0, 1, 2]), np.array([0, 0])
    >>> dominates(0, 0, 1, ptr, var, stride, offset, values, arity, inc_ptr, inc_table, mm, dom,
    ...           digit)
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
                digit[r, 2] = 0
                count = 1
            else:
                for c in range(arity[var[j]]):
                    if dom[var[j], c]:
                        digit[r, 2 + count] = c
                        count += 1
            digit[r, 0], digit[r, 1] = 0, count
            empty = empty or count == 0
            index += digit[r, 2] * stride[j]
        least = np.inf
        while not empty:
            va, vb = values[index + a * step], values[index + b * step]
            if va > -np.inf:
                d = vb - va
                if d < least:
                    least = d
                    if least == -np.inf:
                        return False
            index = _next_entry(index, first, last, stride, digit)
            empty = index < 0
        if least < np.inf:
            total += least
        if total + ahead < 0.0:
            return False
    return True
