"""The maxima of a flat table over the entries the domains allow, for the
propagation search (:mod:`twlib.inference.propagation_kernels`).

A table's maximum, and its maximum at each value of each of its variables,
are read by an odometer over the values left, so that deep in the search a
table costs the small box of entries its domains allow, not its size.  Each
maximum keeps the entry that reached it (its *support*): when a value goes,
a maximum whose support is still allowed and still worth it stands, and the
table is not read again (the residual supports of arc consistency: Lecoutre &
Hemery 2007).  On tables of many equal entries, such as a clause's, nearly
every removal leaves every support standing.  And a table read again after
removals only can stop once every maximum it had is reached again, since
none can rise.

The arrays are those of :mod:`twlib.inference.propagation_kernels`; ``supp``
holds the supports by incidence and value, ``tsupp`` each table's (-1: none).
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["scan_maxima", "set_maximum", "may_lower", "supported"]


@nb.njit(cache=True, _nrt=False)
def scan_maxima(t, ptr, var, stride, offset, values, arity, k_of_slot, dom, tmax, mm, finite,
                infinite, digit, supp, tsupp, old):
    """Table ``t``'s maximum over the entries the domains allow into ``tmax[t]``
    (and the sum of the maxima ``finite``, ``infinite``: see :func:`set_maximum`),
    its maximum at each value of each of its variables into ``mm`` (by
    incidence ``k_of_slot``), with the entries that reach them.  With ``old``
    (scratch of a row per variable of the table) the maxima as they stand are
    taken to be those of larger domains: none can rise, so the scan stops once
    every one is reached again; with an empty ``old`` it reads every entry allowed.

    >>> from twlib.inference.flat import flat_tables
    >>> ptr, var, stride, offset, values = flat_tables([((0, 1), np.array([[1.0, 5.0],
    ...                                                                    [3.0, 2.0]]))])
    >>> dom = np.array([[True, True], [True, False]])         # x1 = 1 is out
    >>> tmax, mm, supp = np.zeros(1), np.zeros((2, 2)), np.zeros((2, 2), dtype=np.int64)
    >>> scan_maxima(0, ptr, var, stride, offset, values, np.array([2, 2]), np.array([0, 1]), dom,
    ...             tmax, mm, np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64),
    ...             supp, np.zeros(1, dtype=np.int64), np.empty((0, 0)))
    >>> tmax.tolist(), mm.tolist(), supp[0].tolist()
    ([3.0], [[1.0, 3.0], [3.0, -inf]], [0, 2])
    """
    first, last = ptr[t], ptr[t + 1]
    at = offset[t]
    top = -np.inf
    empty = False
    bounded = old.shape[0] > 0
    old_top = tmax[t]
    # the maxima still to reach again, when they cannot rise
    left = 1 if bounded and old_top > -np.inf else 0
    for j in range(first, last):
        y = var[j]
        for b in range(arity[y]):
            if bounded:
                old[j - first, b] = mm[k_of_slot[j], b]
                if dom[y, b] and old[j - first, b] > -np.inf:
                    left += 1
            mm[k_of_slot[j], b] = -np.inf
        b = 0
        while b < arity[y] and not dom[y, b]:
            b += 1
        empty = empty or b == arity[y]
        digit[j - first] = b
        at += b * stride[j]
    # an odometer over the values left (the last variable fastest): deep in the
    # search most values are gone, and the entries they leave are a small box
    while not empty:
        value = values[at]
        if value > -np.inf:
            if value > top:
                top = value
                tsupp[t] = at
                if bounded and value == old_top:
                    left -= 1
            for j in range(first, last):
                k, a = k_of_slot[j], digit[j - first]
                if value > mm[k, a]:
                    mm[k, a] = value
                    supp[k, a] = at
                    if bounded and value == old[j - first, a]:
                        left -= 1
            if bounded and left == 0:
                break
        j = last - 1
        while j >= first:
            y, b = var[j], digit[j - first]
            at -= b * stride[j]
            b += 1
            while b < arity[y] and not dom[y, b]:
                b += 1
            if b < arity[y]:
                digit[j - first] = b
                at += b * stride[j]
                break
            b = 0
            while not dom[y, b]:
                b += 1
            digit[j - first] = b
            at += b * stride[j]
            j -= 1
        empty = j < first
    set_maximum(t, top, tmax, finite, infinite)


@nb.njit(cache=True, _nrt=False)
def set_maximum(t, value, tmax, finite, infinite):
    """Table ``t``'s maximum set to ``value``, and the sum of the maxima with it."""
    if tmax[t] == -np.inf:
        infinite[0] -= 1
    else:
        finite[0] -= tmax[t]
    tmax[t] = value
    if value == -np.inf:
        infinite[0] += 1
    else:
        finite[0] += value


@nb.njit(cache=True, _nrt=False, inline="always")
def may_lower(t, k, a, ptr, var, stride, offset, values, arity, k_of_slot, dom, tmax, mm, supp,
             tsupp):
    """Whether removing value ``a`` of the variable of incidence ``k`` (already
    out of its domain) can lower table ``t``'s maxima: only if the table's best
    entry with that value is at least its maximum, or at least the maximum at
    some allowed value of another of its variables (where it may have been that
    maximum), and one of those maxima has lost the entry that reached it."""
    v = mm[k, a]
    if v == -np.inf:
        return False
    near = v >= tmax[t]
    for j in range(ptr[t], ptr[t + 1]):
        other = k_of_slot[j]
        if other == k:
            continue
        for b in range(arity[var[j]]):
            if dom[var[j], b] and mm[other, b] <= v:
                near = True
    if not near:
        return False
    # on tables of many equal entries (constraints) some maximum is always at
    # that value, and almost always at others as well: each maximum's last
    # entry found (its support) settles it when it is still allowed
    if not supported(t, tsupp[t], tmax[t], ptr, var, stride, offset, values, arity, dom):
        return True
    for j in range(ptr[t], ptr[t + 1]):
        other = k_of_slot[j]
        if other == k:
            continue
        for b in range(arity[var[j]]):
            if dom[var[j], b] and not supported(t, supp[other, b], mm[other, b], ptr, var, stride,
                                                offset, values, arity, dom):
                return True
    return False


@nb.njit(cache=True, _nrt=False)
def supported(t, e, top, ptr, var, stride, offset, values, arity, dom):
    """Whether entry ``e`` of table ``t`` is allowed by the domains and worth
    ``top`` (so that a maximum of ``top`` stands); a maximum of ``-inf`` needs none."""
    if top == -np.inf:
        return True
    if e < 0 or values[e] != top:
        return False
    for j in range(ptr[t], ptr[t + 1]):
        if not dom[var[j], (e - offset[t]) // stride[j] % arity[var[j]]]:
            return False
    return True
