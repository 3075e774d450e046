"""Algorithm 4 (FindConsistentTreeDPGreedy): a junction tree of width k assembled
from the components every separator leaves."""
from __future__ import annotations

import numba as nb
import numpy as np

from ...bitsets import popcount
from ...errors import InputError, InternalError
from ...graphs import has_running_intersection
from .masks import MAX_VARIABLES, mask_of

__all__ = ["ComponentTable", "find_consistent_tree"]

@nb.njit(cache=True)
def _consistent_tree(sep_masks, sep_lookup, comp_sep, comp_mask):
    """The DP of Algorithm 4 on bit masks.  Components ``(sep_masks[comp_sep[c]],
    comp_mask[c])`` come grouped by separator in a fixed order; they are processed
    by size (stable).  Returns the index of the first separator all of whose
    components are decomposable (or -1) and each component's recipe: the added
    variable ``x`` (-1: not decomposable) and its sub-components, a slice of ``subs``."""
    n_comp = comp_mask.shape[0]
    sizes = np.empty(n_comp, dtype=np.int64)
    total = 0
    for c in range(n_comp):
        sizes[c] = popcount(comp_mask[c])
        total += sizes[c]
    order = np.argsort(sizes, kind="mergesort")
    n_sep = sep_masks.shape[0]
    head = np.full(n_sep, -1, dtype=np.int64)   # decomposable components of each
    tail = np.full(n_sep, -1, dtype=np.int64)   # separator, as a linked list
    link = np.full(n_comp, -1, dtype=np.int64)
    rec_x = np.full(n_comp, -1, dtype=np.int64)
    sub_start = np.zeros(n_comp, dtype=np.int64)
    sub_count = np.zeros(n_comp, dtype=np.int64)
    subs = np.empty(total, dtype=np.int64)
    used = 0
    for c in order:
        sep, group = sep_masks[comp_sep[c]], comp_mask[c]
        g = group
        while g:
            xbit = g & -g
            g ^= xbit
            rest = group ^ xbit
            covered = 0
            start = used
            s = sep
            while s:
                ybit = s & -s
                s ^= ybit
                sub_sep = (sep ^ ybit) | xbit
                if sub_sep not in sep_lookup:
                    continue
                d = head[sep_lookup[sub_sep]]
                while d >= 0:
                    sub = comp_mask[d]
                    if (sub & ~rest) == 0 and (sub & covered) == 0:
                        subs[used] = d
                        used += 1
                        covered |= sub
                    d = link[d]
            if covered == rest:
                rec_x[c] = popcount(xbit - 1)
                sub_start[c], sub_count[c] = start, used - start
                i = comp_sep[c]
                if head[i] < 0:
                    head[i] = c
                else:
                    link[tail[i]] = c
                tail[i] = c
                break
            used = start
    complete = np.zeros(n_sep, dtype=np.bool_)
    for c in range(n_comp):
        complete[comp_sep[c]] = True
    for c in range(n_comp):
        if rec_x[c] < 0:
            complete[comp_sep[c]] = False
    for i in range(n_sep):
        if complete[i]:
            return i, rec_x, sub_start, sub_count, subs
    return -1, rec_x, sub_start, sub_count, subs


class ComponentTable:
    """Components of every separator, flattened for the compiled DP."""

    def __init__(self, separators):
        self.separators = list(separators)             # frozensets, in a fixed order
        self.sep_masks = np.array([mask_of(s) for s in self.separators], dtype=np.int64)
        self.lookup = nb.typed.Dict.empty(nb.types.int64, nb.types.int64)
        for i, m in enumerate(self.sep_masks):
            self.lookup[m] = i

    def tree(self, *, masks_per_separator=None, flat=None):
        """``(cliques, edges)`` from the components (an array of bit masks per
        separator, in order, or ``flat = (separator index, mask)`` arrays), or
        None; ``self.used`` then maps each separator index the tree uses to the
        mask of its components in the tree."""
        if flat is None:
            comp_sep = np.repeat(np.arange(len(self.separators)),
                                 [len(m) for m in masks_per_separator])
            masks = np.concatenate(masks_per_separator).astype(np.int64)
        else:
            comp_sep, masks = flat
        root, rec_x, start, count, subs = _consistent_tree(self.sep_masks, self.lookup,
                                                           comp_sep, masks)
        if root < 0:
            return None
        cliques, edges = [], []
        self.used = {}

        def build(c):
            self.used[comp_sep[c]] = self.used.get(comp_sep[c], 0) | int(masks[c])
            here = len(cliques)
            cliques.append(tuple(sorted(self.separators[comp_sep[c]] | {int(rec_x[c])})))
            for d in subs[start[c]:start[c] + count[c]]:
                edges.append((here, build(d)))
            return here

        tops = [build(c) for c in np.flatnonzero(comp_sep == root)]
        edges += [(tops[0], t) for t in tops[1:]]
        if not has_running_intersection(cliques, edges):
            raise InternalError("assembled tree violates the running intersection property")
        return cliques, edges


def find_consistent_tree(components: dict, k: int):
    """FindConsistentTreeDPGreedy (Chechetka & Guestrin's Algorithm 4).

    ``components`` maps each separator (a frozenset of k variables) to the groups
    (frozensets) its LTCI partition puts on separate sides.  A component ``(S, Q)``
    is decomposable when some ``x`` in ``Q`` and disjoint decomposable components
    ``(S', Q')`` with ``S'`` inside ``S + x`` cover ``Q - x``; candidates are tried
    greedily, smallest components first (compiled, on bit masks).  Returns
    ``(cliques, edges)`` of a junction tree whose cliques have k + 1 variables, from
    the first separator all of whose components are decomposable, or None.

    >>> comps = {frozenset({1}): [frozenset({0}), frozenset({2})],
    ...          frozenset({0}): [frozenset({1, 2})], frozenset({2}): [frozenset({0, 1})]}
    >>> find_consistent_tree(comps, 1)
    ([(0, 1), (1, 2)], [(0, 1)])
    """
    if any(len(s) != k for s in components):
        raise InputError(f"every separator must hold k = {k} variables")
    seps = sorted(components, key=sorted)
    if max((v for s, gs in components.items() for g in list(gs) + [s] for v in g),
           default=0) > MAX_VARIABLES:
        raise InputError("variable indices above 62 do not fit the 64-bit masks")
    masks = [np.array([mask_of(g) for g in sorted(components[s], key=sorted)], dtype=np.int64)
             for s in seps]
    return ComponentTable(seps).tree(masks_per_separator=masks)


