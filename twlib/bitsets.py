"""Bit tricks on 64-bit words, shared by the compiled kernels that keep sets as bitsets.

Both functions are numba-compiled and callable from other kernels or from Python.

>>> popcount(0b1011), lowest_index(0b1000)
(3, 3)
"""
from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["popcount", "lowest_index"]

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@nb.njit(cache=True)
def popcount(x):
    """Number of set bits of a 64-bit word (int64 or uint64), in constant time."""
    v = np.uint64(x)
    v = v - ((v >> np.uint64(1)) & _M1)
    v = (v & _M2) + ((v >> np.uint64(2)) & _M2)
    v = (v + (v >> np.uint64(4))) & _M4
    return np.int64((v * _H01) >> np.uint64(56))


@nb.njit(cache=True)
def lowest_index(x):
    """Index of the lowest set bit of a non-zero 64-bit word."""
    v = np.uint64(x)
    return popcount((v & (~v + np.uint64(1))) - np.uint64(1))
