"""Contingency counts of variable sets (numba kernels).

A joint state of variables ``v_0 .. v_{m-1}`` is coded in mixed radix with the
*last* variable varying fastest: ``key = ((x_0 * r_1) + x_1) * r_2 + ...``, the
C order of an array of shape ``(r_0, .., r_{m-1})``.  When the joint space is at
most ``dense_factor`` times the number of rows the counts come back dense (that
array, flattened); otherwise as sorted keys of the occupied states with their
counts, so memory stays proportional to the data.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from .errors import BudgetExceeded, InputError

__all__ = ["Counts", "count", "joint_keys", "dense_limit", "DENSE_FACTOR"]

DENSE_FACTOR = 4


@dataclass(frozen=True)
class Counts:
    """Counts of the joint states of ``variables``.

    ``dense`` is the flattened full table (length ``prod(arities)``) or None;
    otherwise ``keys`` (sorted, occupied states only) and ``counts`` hold the
    sparse form.  ``nonzero()`` gives the occupied cells either way.
    """

    variables: tuple
    arities: tuple
    n_rows: int
    dense: np.ndarray | None = None
    keys: np.ndarray | None = None
    counts: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Size of the joint state space."""
        return int(np.prod(self.arities, dtype=np.int64))

    def nonzero(self):
        """``(keys, counts)`` of the occupied joint states, keys ascending."""
        if self.dense is not None:
            keys = np.flatnonzero(self.dense)
            return keys, self.dense[keys]
        return self.keys, self.counts

    def to_dense(self) -> np.ndarray:
        """The full table, shape ``arities``; a ValueError if it would be huge."""
        if self.dense is not None:
            return self.dense.reshape(self.arities)
        if self.size > 50_000_000:
            raise BudgetExceeded(f"joint space of {self.size} states is too large to densify")
        out = np.zeros(self.size, dtype=np.int64)
        out[self.keys] = self.counts
        return out.reshape(self.arities)


@nb.njit(cache=True)
def _keys_kernel(values, cols, arities):
    n = values.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for j in range(cols.shape[0]):
        c = cols[j]
        r = arities[j]
        for i in range(n):
            out[i] = out[i] * r + values[i, c]
    return out


@nb.njit(cache=True)
def _dense_kernel(values, cols, arities, size):
    n = values.shape[0]
    m = cols.shape[0]
    out = np.zeros(size, dtype=np.int64)
    for i in range(n):
        key = 0
        for j in range(m):
            key = key * arities[j] + values[i, cols[j]]
        out[key] += 1
    return out


@nb.njit(cache=True)
def _run_lengths(sorted_keys):
    n = sorted_keys.shape[0]
    keys = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    k = -1
    for i in range(n):
        if k < 0 or sorted_keys[i] != keys[k]:
            k += 1
            keys[k] = sorted_keys[i]
            counts[k] = 1
        else:
            counts[k] += 1
    return keys[:k + 1], counts[:k + 1]


def _checked(values, cols, arities):
    # one memory layout for the kernels: a Fortran-ordered table would compile them again
    values = np.ascontiguousarray(values)
    cols = np.asarray(cols, dtype=np.int64)
    arities = np.asarray(arities, dtype=np.int64)
    if values.ndim != 2:
        raise InputError("values must be a 2-D matrix of state codes")
    if cols.shape != arities.shape:
        raise InputError("cols and arities must have the same length")
    if np.any(arities < 1):
        raise InputError("arities must be positive")
    log_size = float(np.sum(np.log2(arities))) if len(arities) else 0.0
    if log_size >= 62:
        raise InputError(f"joint space of {len(cols)} variables (2^{log_size:.0f} states) "
                         "overflows 64-bit keys")
    return values, cols, arities


def joint_keys(values, cols, arities) -> np.ndarray:
    """Mixed-radix key of each row's joint state of columns ``cols``.

    >>> joint_keys(np.array([[0, 1], [1, 2]]), [0, 1], [2, 3]).tolist()
    [1, 5]
    """
    values, cols, arities = _checked(values, cols, arities)
    return _keys_kernel(values, cols, arities)


def dense_limit(n_rows: int, *, dense_factor: float = DENSE_FACTOR) -> int:
    """The largest joint space counted in a dense table for ``n_rows`` rows: a
    table of that size costs about as much as sorting the rows' keys.

    >>> dense_limit(10), dense_limit(100_000)
    (4096, 400000)
    """
    return int(dense_factor * max(n_rows, 1024))


def count(values, cols, arities, *, dense_factor: float = DENSE_FACTOR) -> Counts:
    """Count every joint state of the columns ``cols`` over all rows.

    Parameters
    ----------
    values : ndarray (n_rows, n_vars) of state codes
    cols : sequence of int
        Columns forming the joint variable (the last varies fastest in keys).
    arities : sequence of int
        Number of states of each of those columns.
    dense_factor : float
        Dense output when ``prod(arities) <= dense_limit(n_rows, dense_factor)``.

    Examples
    --------
    >>> c = count(np.array([[0, 1], [0, 1], [1, 0]]), [0, 1], [2, 2])
    >>> c.dense.tolist()
    [0, 2, 1, 0]
    """
    values, cols, arities = _checked(values, cols, arities)
    size = int(np.prod(arities, dtype=np.int64))
    n = values.shape[0]
    if size <= dense_limit(n, dense_factor=dense_factor):
        dense = _dense_kernel(values, cols, arities, size)
        return Counts(tuple(cols.tolist()), tuple(arities.tolist()), n, dense=dense)
    keys = np.sort(_keys_kernel(values, cols, arities))
    k, c = _run_lengths(keys)
    return Counts(tuple(cols.tolist()), tuple(arities.tolist()), n, keys=k, counts=c)
