"""The LP relaxation of GOBNILP's programme, by column generation.

Two learners use it.  :func:`~twlib.learn.bounded.learn` takes its bound for the
gap: a network of tree-width ``<= k`` has in-degree ``<= k``, so its score is at
most the optimum of the integer programme of :mod:`twlib.learn.ilp` over the
parent sets of at most ``k`` parents, and at most that programme's linear
relaxation.  :func:`twlib.learn.ilp.solve` starts its branch and cut from the
cluster cuts found here.

The relaxation keeps every candidate set that the proved pruning of
:class:`~twlib.scores.ParentSetScores` leaves (millions on a table of 100
variables at ``k = 3``), so it is solved over a few of them at a time: the
*restricted* programme is solved by SoPlex (through pyscipopt), every column's
reduced cost is priced from its duals, the best columns join, and violated
cluster constraints join as cuts (:func:`twlib.learn.ilp.clusters.violated_clusters`),
with violated set-packing rows of three and four variables
(:func:`twlib.learn.ilp.clusters.violated_packings`): at most one member of such a
set has all the others as parents.

Any weights ``lam[C] >= 0`` on the cluster constraints and ``mu[D] >= 0`` on the
set-packing rows give a Lagrangian bound over *all* the columns::

    L(lam, mu) = sum_v max_t (s[v, t] + sum_{C : v in C, t & C = {}} lam[C]
                              - sum_{D : v in D, D - {v} <= t} mu[D])
                 - sum_C lam[C] + sum_D mu[D]

because relaxing both kinds of rows into the objective leaves one choice per
variable.  ``L`` at the restricted programme's duals is at least the
relaxation's optimum, and so at least every acyclic network's score.  The
smallest ``L`` met is returned: stopping at the time limit still leaves a
proved bound, and at convergence (no column prices in, no cut is found) it is
the relaxation's optimum over the cuts found.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from ... import clock
from ...bitsets import from_bool_rows, to_bool_rows
from ...errors import InputError, InternalError
from ...scores import ParentSetScores
from ..result import check_time_limit
from .clusters import (cluster_families, packing_families, require_scip, violated_clusters,
                       violated_packings)

# (parent sets x rows) that ParentSetScores counts per second on the reference 2-core
# machine (Chapter 10); only used to decide whether the bound fits a time budget
SCORING_RATE = 1.6e9

_TOL = 1e-7            # reduced costs and violations below this are zero
_COLUMNS_PER_ROUND = 8  # new columns per variable and round
_CUTS_PER_ROUND = 50
_CUT_ROUNDS = 3        # rounds of cuts alone between two pricings
_IDLE_SOLVES = 20      # a cut slack this many solves in a row is dropped


def scoring_seconds(n_vars: int, n_rows: int, k: int) -> float:
    """Estimated seconds to score every parent set of at most ``k`` parents.

    >>> round(scoring_seconds(69, 17412, 3))
    39
    """
    sets = n_vars * sum(math.comb(n_vars - 1, j) for j in range(min(k, n_vars - 1) + 1))
    return sets * n_rows / SCORING_RATE


@nb.njit(cache=True, parallel=True)
def _priced_values(offsets, masks, scores, cut_start, cut_index, cut_masks, weights,
                   pack_start, pack_index, pack_masks, pack_weights, floor):
    """Each family's score plus the weight of every cut whose cluster holds its
    child and none of its parents (the cut's constraint sums that family), less
    the weight of every set-packing row that sums it, and each variable's
    largest such value.

    Variable ``v``'s families are ``offsets[v]:offsets[v + 1]``, best score
    first, and the cuts holding ``v`` are ``cut_index[cut_start[v]:cut_start[v + 1]]``;
    its packing rows are ``pack_index[pack_start[v]:pack_start[v + 1]]``, and
    ``pack_masks[i]`` is row ``pack_index[i]``'s other members (a family of ``v``
    is in the row when they are all its parents).  A family is left at ``-inf``
    once even its score plus every cut of ``v`` can neither beat the variable's
    largest value so far nor exceed ``floor[v]`` (packing rows only subtract).
    """
    n = offsets.shape[0] - 1
    out = np.full(scores.shape[0], -np.inf)
    best = np.full(n, -np.inf)
    words = masks.shape[1]
    for v in nb.prange(n):
        bonus = 0.0
        for i in range(cut_start[v], cut_start[v + 1]):
            bonus += weights[cut_index[i]]
        for j in range(offsets[v], offsets[v + 1]):
            if scores[j] + bonus <= min(best[v], floor[v]):
                break                    # sorted: no later family can matter either
            value = scores[j]
            for i in range(cut_start[v], cut_start[v + 1]):
                c = cut_index[i]
                outside = True
                for w in range(words):
                    if masks[j, w] & cut_masks[c, w]:
                        outside = False
                        break
                if outside:
                    value += weights[c]
            for i in range(pack_start[v], pack_start[v + 1]):
                inside = True
                for w in range(words):
                    if pack_masks[i, w] & ~masks[j, w]:
                        inside = False
                        break
                if inside:
                    value -= pack_weights[pack_index[i]]
            out[j] = value
            best[v] = max(best[v], value)
    return out, best


class _Columns:
    """Every kept family of ``pss``, flat and grouped by child (best first within each)."""

    def __init__(self, pss: ParentSetScores):
        arrays = [pss.parent_arrays(v) for v in range(pss.n_vars)]
        self.n = pss.n_vars
        self.scores = np.concatenate([sc for _, sc, _ in arrays])
        self.masks = np.ascontiguousarray(np.concatenate([m for _, _, m in arrays]))
        sizes = np.array([len(sc) for _, sc, _ in arrays])
        self.child = np.repeat(np.arange(self.n), sizes)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        # each variable's family of fewest parents: the empty one, or its required
        # parents alone.  Together they are an acyclic network, which meets every
        # cluster and packing row, so the restricted programme that holds them stays
        # feasible whatever cuts join it
        parents = np.bitwise_count(self.masks).sum(axis=1)
        self.smallest = np.lexsort((parents, self.child))[self.offsets[:-1]]

    def values(self, cuts, weights, packing, floor):
        """Each family's score plus the weights of the cluster constraints it is in,
        less those of the set-packing rows it is in (``-inf`` where it cannot
        matter, see :func:`_priced_values`), and each variable's largest value.
        ``cuts`` are the rows' sets of variables, ``packing`` marks the packing rows."""
        live = (weights > 0) & ~packing
        holding = cuts[live].T                          # variables x live cluster cuts
        cut_start = np.concatenate([[0], np.cumsum(holding.sum(axis=1))])
        # np.nonzero's second row is a strided view: copied, so the kernel sees one layout
        cut_index = np.ascontiguousarray(np.nonzero(holding)[1])
        live_packs = (weights > 0) & packing
        holding = cuts[live_packs].T                    # variables x live packing rows
        pack_start = np.concatenate([[0], np.cumsum(holding.sum(axis=1))])
        child, pack_index = map(np.ascontiguousarray, np.nonzero(holding))
        others = cuts[live_packs][pack_index]           # each row's members but the child
        others[np.arange(len(child)), child] = False
        return _priced_values(self.offsets, self.masks, self.scores, cut_start, cut_index,
                              from_bool_rows(cuts[live]), weights[live], pack_start,
                              pack_index, from_bool_rows(others), weights[live_packs], floor)


class _Master:
    """The restricted programme: the columns and cuts found so far, kept in one
    SoPlex LP (through pyscipopt) so each round re-solves from the last basis."""

    def __init__(self, pyscipopt, cols: _Columns, rows):
        self.cols = cols
        self.lp = pyscipopt.LP("restricted", sense="maximize")
        self.lp.addRows([[] for _ in range(cols.n)], lhss=[1.0] * cols.n, rhss=[1.0] * cols.n)
        self.rows = np.zeros(0, dtype=np.int64)
        self.child = np.zeros(0, dtype=np.int64)            # of each column in the LP
        self.members = np.zeros((0, cols.n), dtype=bool)    # its parents, as a bool row
        self.holds = np.zeros(len(cols.scores), dtype=bool)  # which kept families are in
        self.cuts = np.zeros((0, cols.n), dtype=bool)        # each cut's set of variables
        self.packing = np.zeros(0, dtype=bool)      # a set-packing row (else a cluster cut)
        self.idle = np.zeros(0, dtype=np.int64)    # solves each cut has been slack for
        self.cuts_added = 0
        self.add_columns(rows)

    @property
    def clusters(self):
        return self.cuts[~self.packing]

    def _sums(self, cut, packing, child, members):
        """Which of the families (``child``, ``members``) the cut's row sums."""
        return (packing_families if packing else cluster_families)(cut, child, members)

    def add_columns(self, rows):
        """Columns ``rows`` join, with their entries in every cut so far."""
        cols = self.cols
        child, members = cols.child[rows], to_bool_rows(cols.masks[rows], cols.n)
        inside = np.array([self._sums(c, p, child, members)
                           for c, p in zip(self.cuts, self.packing)]
                          ).reshape(len(self.cuts), len(rows))
        for i, j in enumerate(rows):
            entries = [(int(child[i]), 1.0)]
            entries += [(cols.n + int(c), 1.0) for c in np.flatnonzero(inside[:, i])]
            self.lp.addCol(entries, obj=float(cols.scores[j]))
        self.rows = np.concatenate([self.rows, rows])
        self.child = np.concatenate([self.child, child])
        self.members = np.vstack([self.members, members])
        self.holds[rows] = True

    def add_cuts(self, sets, packing=False):
        """Cluster constraints ``sum x >= 1`` (or set-packing rows ``sum x <= 1``)
        over the families each one sums."""
        for cut in sets:
            entries = [(int(i), 1.0) for i in
                       np.flatnonzero(self._sums(cut, packing, self.child, self.members))]
            self.lp.addRow(entries, lhs=-self.lp.infinity() if packing else 1.0,
                           rhs=1.0 if packing else None)
        self.cuts = np.vstack([self.cuts, sets])
        self.packing = np.concatenate([self.packing, np.full(len(sets), packing)])
        self.idle = np.concatenate([self.idle, np.zeros(len(sets), dtype=np.int64)])
        self.cuts_added += len(sets)

    def _purge(self):
        """Drop the cuts that were slack with a zero dual for the last
        ``_IDLE_SOLVES`` solves: they cost every re-solve and bound nothing
        (separation finds them again if they are violated later)."""
        drop = np.flatnonzero(self.idle >= _IDLE_SOLVES)
        if not len(drop):
            return
        runs = np.split(drop, np.flatnonzero(np.diff(drop) > 1) + 1)
        for run in reversed(runs):          # from the end, so earlier indices stay put
            self.lp.delRows(self.cols.n + int(run[0]), self.cols.n + int(run[-1]))
        keep = np.ones(len(self.cuts), dtype=bool)
        keep[drop] = False
        self.cuts, self.packing, self.idle = self.cuts[keep], self.packing[keep], self.idle[keep]

    def solve(self):
        """(value, x, variable duals, cut duals >= 0) of the restricted programme, its
        cuts being ``self.cuts`` after long-idle ones are dropped."""
        self._purge()
        value = self.lp.solve()
        if not self.lp.isOptimal():
            raise InternalError("the restricted linear programme was not solved to optimality")
        dual = np.asarray(self.lp.getDual())
        n = self.cols.n
        # a maximisation's >= rows have duals <= 0, its <= rows duals >= 0
        cut_duals = np.maximum(np.where(self.packing, dual[n:], -dual[n:]), 0.0)
        slack = np.abs(np.asarray(self.lp.getActivity())[n:] - 1.0) > _TOL
        self.idle = np.where(slack & (cut_duals < _TOL), self.idle + 1, 0)
        return value, np.asarray(self.lp.getPrimal()), dual[:n], cut_duals


def lp_bound(pss: ParentSetScores, *, time_limit: float = 60.0, exact_separation: bool = True,
             packing: int = 4) -> dict:
    """The LP relaxation's bound on every acyclic network over the kept sets of ``pss``.

    With ``pss`` holding every set of at most ``k`` parents (pruned by proved
    rules only), the bound holds for every network of tree-width ``<= k``.
    ``packing`` is the largest set whose set-packing row is separated (3 or 4;
    2 leaves the cluster constraints alone, whose pairs are the same rows).
    The packing rows tighten the bound markedly on large tables (Chapter 10).

    Returns a dict: ``bound`` (the smallest Lagrangian bound met), ``lp`` (the
    restricted programme's last value), ``converged`` (no column priced in and
    no violated cluster or packing row was found; with ``exact_separation`` the
    exact search proved there is no cluster, and ``bound`` is then the relaxation's
    optimum), ``rounds``, ``columns`` (used, of ``candidates``; ``column_rows`` are
    their positions in the variables' lists concatenated), ``cuts`` (added)
    and ``cuts_kept`` (cluster cuts kept; the rest were dropped after long slack),
    ``clusters`` and ``packings`` (the kept cluster cuts' and packing rows' sets,
    a bool row over the variables each), ``seconds`` and ``history`` (the bound
    against seconds at each pricing).

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("iris"), max_parents=2)
    >>> out = lp_bound(pss)
    >>> out["converged"], out["bound"] >= out["lp"] - 1e-6
    (True, True)
    """
    check_time_limit(time_limit)
    if packing not in (2, 3, 4):
        raise InputError(f"packing must be 2, 3 or 4 (the largest packed set), got {packing!r}")
    started = clock.now()
    deadline = started + time_limit
    cols = _Columns(pss)
    n = cols.n
    first = np.concatenate([np.arange(lo, min(lo + _COLUMNS_PER_ROUND, hi))
                            for lo, hi in zip(cols.offsets[:-1], cols.offsets[1:])])
    master = _Master(require_scip(), cols, np.union1d(first, cols.smallest))
    # every variable's best family alone: the Lagrangian bound with no cuts
    bound = float(cols.scores[cols.offsets[:-1]].sum())
    value, rounds, converged, history, cut_rounds = -math.inf, 0, False, [], 0
    while not clock.expired(deadline):
        rounds += 1
        value, x, var_duals, cut_duals = master.solve()
        # cuts first: re-solving the restricted programme is cheap, pricing every
        # column is not
        support = (master.child, master.members, x, n)
        found = violated_clusters(*support, exact=False, max_cuts=_CUTS_PER_ROUND)
        packs = violated_packings(*support, largest=packing, max_cuts=_CUTS_PER_ROUND)
        if found:
            master.add_cuts(np.array([c for _, c in found]))
        if packs:
            master.add_cuts(np.array([c for _, c in packs]), packing=True)
        found = found + packs
        if found:
            cut_rounds += 1
            if cut_rounds < _CUT_ROUNDS:
                continue
        cut_rounds = 0
        solved = slice(len(cut_duals))      # the cuts of the last solve
        packed = master.packing[solved]
        priced, best = cols.values(master.cuts[solved], cut_duals, packed, var_duals + _TOL)
        # cluster weights were added to the families, packing weights subtracted
        bound = min(bound, float(best.sum() - cut_duals[~packed].sum()
                                 + cut_duals[packed].sum()))
        history.append({"seconds": clock.now() - started, "bound": bound,
                        "lp": value})
        gain = priced - var_duals[cols.child]
        new_rows = _entering(cols, np.flatnonzero((gain > _TOL) & ~master.holds), gain)
        if len(new_rows):
            master.add_columns(new_rows)
            continue
        if found:
            continue
        left = deadline - clock.now()
        proved = not exact_separation       # without it, "converged" is the peeling's word
        if exact_separation and left > 0:
            found, proved = violated_clusters(*support, exact=True, time_limit=min(5.0, left),
                                              max_cuts=_CUTS_PER_ROUND, report_proof=True)
        if not found:
            converged = left > 0 and proved
            break
        master.add_cuts(np.array([c for _, c in found]))
    return {"bound": max(bound, value), "lp": value, "converged": converged,
            "rounds": rounds, "columns": len(master.rows), "column_rows": master.rows,
            "candidates": len(cols.scores),
            "cuts": master.cuts_added, "cuts_kept": len(master.clusters),
            "clusters": master.clusters, "packings": master.cuts[master.packing],
            "seconds": clock.now() - started,
            "history": history}


def _entering(cols: _Columns, candidates, gain) -> np.ndarray:
    """Of the ``candidates`` (columns with a positive reduced cost), each variable's best few."""
    if not len(candidates):
        return candidates
    order = np.lexsort((-gain[candidates], cols.child[candidates]))
    ranked = candidates[order]
    child = cols.child[ranked]
    first = np.searchsorted(child, child)        # where each variable's run starts
    return ranked[np.arange(len(ranked)) - first < _COLUMNS_PER_ROUND]
