"""LTCI (Chechetka & Guestrin's Algorithm 2): the groups a separator cannot split."""
from __future__ import annotations

import numpy as np

from .masks import final_components, members

__all__ = ["ltci", "ltci_masks"]


def ltci(variables, separator, oracle, delta: float, q: int):
    """LTCI (Chechetka & Guestrin's Algorithm 2): groups of ``variables - separator``
    that the separator cannot split at threshold ``delta``, testing sets of size
    ``2 .. q``.  A set already inside one group is not tested (it cannot merge
    anything).  Returns a list of frozensets.
    """
    return sorted(map(members, ltci_masks(variables, separator, oracle, delta, q).tolist()),
                  key=sorted)


def ltci_masks(variables, separator, oracle, delta, q):
    """LTCI's groups as bit masks, in order of their smallest variable."""
    separator = frozenset(separator)
    rest = np.array(sorted(set(variables) - separator), dtype=np.int64)
    parent = np.arange(len(rest))
    sep_mask = oracle.mask(separator)
    oracle.mask(list(separator) + rest[np.argsort(-oracle.arities[rest])][:q].tolist())
    for size in range(2, min(q, len(rest)) + 1):
        oracle.merge_pass(sep_mask, rest, parent, size, delta)
    return final_components(rest, parent)

