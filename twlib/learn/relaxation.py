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
cluster constraints join as cuts (:func:`twlib.learn.clusters.violated_clusters`).

Any weights ``lam[C] >= 0`` on the cluster constraints give a Lagrangian bound
over *all* the columns::

    L(lam) = sum_v max_t (s[v, t] + sum_{C : v in C, t & C = {}} lam[C]) - sum_C lam[C]

because relaxing the cluster constraints into the objective leaves one choice
per variable.  ``L`` at the restricted programme's cut duals is at least the
relaxation's optimum, and so at least every acyclic network's score.  The
smallest ``L`` met is returned: stopping at the time limit still leaves a
proved bound, and at convergence (no column prices in, no cut is found) it is
the relaxation's optimum over the cuts found.
"""
from __future__ import annotations

import math
import time

import numba as nb
import numpy as np

from ..bitsets import from_bool_rows, to_bool_rows
from ..errors import InputError, InternalError
from ..scores import ParentSetScores
from .clusters import cluster_families, require_scip, violated_clusters

# (parent sets x rows) that ParentSetScores counts per second on this project's
# 2-core machine: plants (69 variables, 17,412 rows) at in-degree <= 3, 3.6 million
# sets in 38 s.  Only used to decide whether the bound fits a time budget.
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
def _priced_values(offsets, masks, scores, cut_start, cut_index, cut_masks, weights, floor):
    """Each family's score plus the weight of every cut whose cluster holds its
    child and none of its parents (the cut's constraint sums that family), and
    each variable's largest such value.

    Variable ``v``'s families are ``offsets[v]:offsets[v + 1]``, best score
    first, and the cuts holding ``v`` are ``cut_index[cut_start[v]:cut_start[v + 1]]``.
    A family is left at ``-inf`` once even its score plus every cut of ``v`` can
    neither beat the variable's largest value so far nor exceed ``floor[v]``.
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
        self.empty = np.flatnonzero(~self.masks.any(axis=1))   # one per variable

    def values(self, clusters, weights, floor):
        """Each family's score plus the weights of the cluster constraints it is in
        (``-inf`` where it cannot matter, see :func:`_priced_values`), and each
        variable's largest value."""
        live = weights > 0
        holding = clusters[live].T                      # variables x live cuts
        cut_start = np.concatenate([[0], np.cumsum(holding.sum(axis=1))])
        cut_index = np.nonzero(holding)[1]
        return _priced_values(self.offsets, self.masks, self.scores, cut_start, cut_index,
                              from_bool_rows(clusters[live]), weights[live], floor)


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
        self.clusters = np.zeros((0, cols.n), dtype=bool)
        self.idle = np.zeros(0, dtype=np.int64)    # solves each cut has been slack for
        self.cuts_added = 0
        self.add_columns(rows)

    def add_columns(self, rows):
        """Columns ``rows`` join, with their entries in every cut so far."""
        cols = self.cols
        child, members = cols.child[rows], to_bool_rows(cols.masks[rows], cols.n)
        inside = np.array([cluster_families(c, child, members) for c in self.clusters]
                          ).reshape(len(self.clusters), len(rows))
        for i, j in enumerate(rows):
            entries = [(int(child[i]), 1.0)]
            entries += [(cols.n + int(c), 1.0) for c in np.flatnonzero(inside[:, i])]
            self.lp.addCol(entries, obj=float(cols.scores[j]))
        self.rows = np.concatenate([self.rows, rows])
        self.child = np.concatenate([self.child, child])
        self.members = np.vstack([self.members, members])
        self.holds[rows] = True

    def add_cuts(self, clusters):
        """Cluster constraints ``sum x >= 1`` over the families each one sums."""
        for cluster in clusters:
            entries = [(int(i), 1.0) for i in
                       np.flatnonzero(cluster_families(cluster, self.child, self.members))]
            self.lp.addRow(entries, lhs=1.0, rhs=None)
        self.clusters = np.vstack([self.clusters, clusters])
        self.idle = np.concatenate([self.idle, np.zeros(len(clusters), dtype=np.int64)])
        self.cuts_added += len(clusters)

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
        keep = np.ones(len(self.clusters), dtype=bool)
        keep[drop] = False
        self.clusters, self.idle = self.clusters[keep], self.idle[keep]

    def solve(self):
        """(value, x, variable duals, cut duals >= 0) of the restricted programme, its
        cuts being ``self.clusters`` after long-idle ones are dropped."""
        self._purge()
        value = self.lp.solve()
        if not self.lp.isOptimal():
            raise InternalError("the restricted linear programme was not solved to optimality")
        dual = np.asarray(self.lp.getDual())
        n = self.cols.n
        cut_duals = np.maximum(-dual[n:], 0.0)
        slack = np.asarray(self.lp.getActivity())[n:] > 1.0 + _TOL
        self.idle = np.where(slack & (cut_duals < _TOL), self.idle + 1, 0)
        return value, np.asarray(self.lp.getPrimal()), dual[:n], cut_duals


def lp_bound(pss: ParentSetScores, time_limit: float = 60.0, exact_separation: bool = True
             ) -> dict:
    """The LP relaxation's bound on every acyclic network over the kept sets of ``pss``.

    With ``pss`` holding every set of at most ``k`` parents (pruned by proved
    rules only), the bound holds for every network of tree-width ``<= k``.

    Returns a dict: ``bound`` (the smallest Lagrangian bound met), ``lp`` (the
    restricted programme's last value), ``converged`` (no column priced in and
    no violated cluster was found; with ``exact_separation`` the sub-IP proved
    there is none, and ``bound`` is then the relaxation's optimum),
    ``rounds``, ``columns`` (used, of ``candidates``), ``cuts`` (added) and
    ``cuts_kept`` (the rest were dropped after long slack), ``clusters`` (the
    kept cuts' clusters, a bool row over the variables each), ``seconds`` and
    ``history`` (the bound against seconds at each pricing).

    >>> from twlib.datasets import load_sklearn
    >>> pss = ParentSetScores(load_sklearn("iris"), max_parents=2)
    >>> out = lp_bound(pss)
    >>> out["converged"], out["bound"] >= out["lp"] - 1e-6
    (True, True)
    """
    if not time_limit > 0:
        raise InputError(f"time_limit must be positive (seconds), got {time_limit!r}")
    started = time.perf_counter()
    deadline = started + time_limit
    cols = _Columns(pss)
    n = cols.n
    first = np.concatenate([np.arange(lo, min(lo + _COLUMNS_PER_ROUND, hi))
                            for lo, hi in zip(cols.offsets[:-1], cols.offsets[1:])])
    master = _Master(require_scip(), cols, np.union1d(first, cols.empty))
    # every variable's best family alone: the Lagrangian bound with no cuts
    bound = float(cols.scores[cols.offsets[:-1]].sum())
    value, rounds, converged, history, cut_rounds = -math.inf, 0, False, [], 0
    while time.perf_counter() < deadline:
        rounds += 1
        value, x, var_duals, cut_duals = master.solve()
        # cuts first: re-solving the restricted programme is cheap, pricing every
        # column is not
        support = (master.child, master.members, x, n)
        found = violated_clusters(*support, exact=False, max_cuts=_CUTS_PER_ROUND)
        if found:
            master.add_cuts(np.array([c for _, c in found]))
            cut_rounds += 1
            if cut_rounds < _CUT_ROUNDS:
                continue
        cut_rounds = 0
        priced, best = cols.values(master.clusters[:len(cut_duals)], cut_duals,
                                   var_duals + _TOL)
        bound = min(bound, float(best.sum() - cut_duals.sum()))
        history.append({"seconds": time.perf_counter() - started, "bound": bound,
                        "lp": value})
        gain = priced - var_duals[cols.child]
        new_rows = _entering(cols, np.flatnonzero((gain > _TOL) & ~master.holds), gain)
        if len(new_rows):
            master.add_columns(new_rows)
            continue
        if found:
            continue
        left = deadline - time.perf_counter()
        proved = not exact_separation       # without it, "converged" is the peeling's word
        if exact_separation and left > 0:
            found, proved = violated_clusters(*support, exact=True, time_limit=min(5.0, left),
                                              max_cuts=_CUTS_PER_ROUND, report_proof=True)
        if not found:
            converged = left > 0 and proved
            break
        master.add_cuts(np.array([c for _, c in found]))
    return {"bound": max(bound, value), "lp": value, "converged": converged,
            "rounds": rounds, "columns": len(master.rows), "candidates": len(cols.scores),
            "cuts": master.cuts_added, "cuts_kept": len(master.clusters),
            "clusters": master.clusters,
            "seconds": time.perf_counter() - started,
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
