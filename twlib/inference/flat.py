"""Log tables in flat arrays, the form every compiled search reads.

A list of ``(scope, log table)`` pairs becomes five arrays
``(ptr, var, stride, offset, values)`` (:func:`flat_tables`), so that a
compiled loop can look up table ``t`` at an assignment without Python objects:
the dive, the AND/OR search, MPLP, the LP search, the propagation search and
the local search all share one such copy of the shifted tables and messages.
Lists of integers (the tables around a variable, the children of a node) are
flattened the same way (:func:`flat_lists`).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..factors import flat_layout

__all__ = ["flat_tables", "table_sizes", "flat_lists", "table_value", "tables_sum",
           "tables_total", "slack", "to_beat", "sort_best_first"]

# The compiled lookups allocate nothing, so they are compiled without numba's
# reference counting (``_nrt=False``): every search calls them at each node, and
# counting the arrays of ``tab`` at each call, atomically, cost more than the lookup

# Two values closer than this (relative) are not told apart when pruning: the
# heuristic and the search add the same logs in different orders
_TOLERANCE = 1e-9


def flat_tables(tables):
    """``(scope, log table)`` pairs as flat arrays for compiled lookups,
    ``(ptr, var, stride, offset, values)``: table ``t`` has variables
    ``var[ptr[t]:ptr[t + 1]]`` with those strides, from ``offset[t]`` in ``values``.

    >>> tab = flat_tables([((0, 1), np.arange(4.0).reshape(2, 2))])
    >>> float(table_value(0, np.array([1, 0]), tab))
    2.0
    """
    return flat_layout([scope for scope, _ in tables], [values for _, values in tables])


def table_sizes(tab) -> np.ndarray:
    """The number of entries of each flat table of ``tab`` (:func:`flat_tables`).

    >>> table_sizes(flat_tables([((0, 1), np.zeros((2, 3))), ((1,), np.zeros(3))])).tolist()
    [6, 3]
    """
    offset, values = tab[3], tab[4]
    return np.diff(np.append(offset, len(values)))


@nb.njit(cache=True, _nrt=False)
def table_value(t, assign, tab):
    """The value of flat table ``t`` at ``assign`` (``tab`` from :func:`flat_tables`)."""
    ptr, var, stride, offset, values = tab
    index = offset[t]
    for j in range(ptr[t], ptr[t + 1]):
        index += assign[var[j]] * stride[j]
    return values[index]


@nb.njit(cache=True, _nrt=False)
def sort_best_first(scores, labels, row, k):
    """Sort ``scores[row, :k]`` in decreasing order, ``labels`` alongside (insertion
    sort: a variable's few values)."""
    for i in range(1, k):
        sv, lv = scores[row, i], labels[row, i]
        j = i - 1
        while j >= 0 and scores[row, j] < sv:
            scores[row, j + 1] = scores[row, j]
            labels[row, j + 1] = labels[row, j]
            j -= 1
        scores[row, j + 1] = sv
        labels[row, j + 1] = lv


def flat_lists(lists):
    """Lists of integers as ``(ptr, ids)``: list ``k`` is ``ids[ptr[k]:ptr[k + 1]]``."""
    ptr = np.cumsum([0] + [len(x) for x in lists]).astype(np.int64)
    return ptr, np.array([t for x in lists for t in x], dtype=np.int64)


@nb.njit(cache=True, _nrt=False)
def tables_sum(csr, v, assign, tab):
    """The sum of the flat tables of list ``v`` of ``csr`` (from :func:`flat_lists`)
    at ``assign``."""
    ptr, ids = csr
    s = 0.0
    for j in range(ptr[v], ptr[v + 1]):
        s += table_value(ids[j], assign, tab)
    return s


@nb.njit(cache=True, _nrt=False)
def tables_total(assign, count, tab):
    """The sum of the first ``count`` flat tables at ``assign`` (constants included)."""
    total = 0.0
    for t in range(count):
        total += table_value(t, assign, tab)
    return total


@nb.njit(cache=True, _nrt=False)
def slack(t, constant=0.0):
    """How far above ``t`` a value may be and still count as ``t`` (0 when ``t``
    is infinite), relative to ``t + constant``: a search over tables that
    leave out a constant log value (:class:`~twlib.inference.presolve.Presolved`)
    proves its answer within the same share of the value the model gives it.

    >>> float(slack(-2.0)), round(float(slack(-2.0, -998.0)) * 1e9, 6)
    (2e-09, 1000.0)
    """
    return _TOLERANCE * max(1.0, abs(t + constant)) if np.isfinite(t) else 0.0


@nb.njit(cache=True, _nrt=False)
def to_beat(incumbent, constant=0.0):
    """What a branch's bound must pass for the branch to be searched: the
    incumbent and its :func:`slack` (with the ``constant`` the tables leave
    out, the share of the model's value the proof allows).  A bound within the
    slack leaves only assignments that tie with the incumbent, and a search
    that went into them would list every one (a model's irrelevant variables
    multiply them).

    >>> float(to_beat(-2.0)) == -2.0 + 2e-09, float(to_beat(-np.inf))
    (True, -inf)
    >>> round((float(to_beat(-2.0, -998.0)) + 2.0) * 1e9, 6)
    1000.0
    """
    return incumbent + slack(incumbent, constant)
