"""The search state of hill climbing under a width bound, and its climb.

:class:`SearchState` holds a DAG of in-degree at most ``k``, its local scores,
the gain of every single-arc move and an elimination order of width at most
``k`` (the certificate).  A move is accepted only when the new moral graph
still has such an order: first the certificate order is tried, then the
certificate's prefix up to the first vertex the move touches followed by a
min-fill order of the rest, which becomes the certificate when it fits.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from ... import clock
from ...scores import FamilyScorer
from .width import (apply_fill, close_fill, later_neighbours, min_fill_after, moral_bits,
                    reaches)

# Gains smaller than this (relative to the score's scale) are treated as ties.
EPS = 1e-9
# Min-fill runs tried per hill-climbing round, when the certificate order refuses
# a move; beyond it such moves wait for the next round.  Each costs a min-fill
# run over the order's suffix, which dominates on thousands of variables.
MIN_FILL_PER_ROUND = 32
# A round stops at moves gaining less than this share of its first applied move:
# best-first across variables, without ranking again after every move.
ROUND_SHARE = 0.5


class SearchState:
    """A DAG with in-degree <= k, its local scores, the move gains and a width certificate."""

    def __init__(self, scorer: FamilyScorer, k: int, parents, order, checks, executor=None,
                 constraints=None):
        self.scorer, self.k = scorer, k
        self._constrain(constraints)
        n = scorer.data.n_vars
        self.n, self.n_words = n, (n + 63) // 64
        self.pa = np.full((n, k), -1, dtype=np.int64)
        self.sets = [()] * n                    # parent tuples, sorted: pa's rows
        self.local = np.empty(n)
        self.add = np.full((n, n), -np.inf)     # add[v, u]: gain of arc u -> v
        self.rem = np.full((n, n), -np.inf)     # rem[v, u]: gain of removing u -> v
        self.blocked: dict = {}     # moves refused by the width check: the vertices they touch
        self.order_refused: set = set()       # moves the certificate order refused
        self.min_fill_budget = MIN_FILL_PER_ROUND
        self.undecided = 0
        self.checks = checks      # shared by the states of one run: counts of width checks
        scorer.prefetch([(v, parents[v]) for v in range(n) if len(parents[v]) < k],
                        executor=executor)
        for v in range(n):
            self._set(v, tuple(sorted(parents[v])))
        self._make_scratch()
        self._certify(order)

    def derive(self, parents, order, checks=None) -> "SearchState":
        """A new state for ``parents``, recomputing only the rows of changed variables;
        it counts its width checks in ``checks`` (default: this state's counts)."""
        new = object.__new__(SearchState)
        new.scorer, new.k, new.n, new.n_words = self.scorer, self.k, self.n, self.n_words
        new.constraints, new.allowed, new.caps, new.fixed = (
            self.constraints, self.allowed, self.caps, self.fixed)
        new.pa, new.local, new.sets = self.pa.copy(), self.local.copy(), list(self.sets)
        new.add, new.rem = self.add.copy(), self.rem.copy()
        new.blocked, new.order_refused = dict(self.blocked), set()
        new.checks = self.checks if checks is None else checks
        new.min_fill_budget, new.undecided = MIN_FILL_PER_ROUND, 0
        changed = [v for v in range(self.n) if tuple(sorted(parents[v])) != self.parents_of(v)]
        new._unblock_around([x for v in changed for x in (v, *self.parents_of(v))])
        for v in changed:
            new._set(v, tuple(sorted(parents[v])))
        new._make_scratch()
        new._certify(order)
        return new

    @staticmethod
    def fixed_arcs(constraints) -> np.ndarray:
        """``fixed[v, u]``: whether ``u -> v`` is a required arc."""
        allowed, required, _ = constraints
        fixed = np.zeros_like(allowed)
        for v, ps in enumerate(required):
            fixed[v, list(ps)] = True
        return fixed

    def _constrain(self, constraints):
        """Background knowledge as :meth:`twlib.knowledge.Knowledge.parent_filter`
        gives it (``allowed[v, u]``, required parents, caps), or None: moves that
        add a disallowed arc, pass a cap, or remove or reverse a required arc are
        never offered."""
        self.constraints = constraints
        self.allowed = self.caps = self.fixed = None
        if constraints is not None:
            self.allowed, _, self.caps = constraints
            self.fixed = self.fixed_arcs(constraints)

    def _make_scratch(self):
        """Work space of :func:`close_fill`, one per state (states may live in threads)."""
        self._scratch = np.zeros((self.n, self.n_words), dtype=np.uint64)
        self._slot = np.full(self.n, -1, dtype=np.int64)
        self._touched = np.zeros(self.n, dtype=np.int64)

    def _certify(self, order, adj=None):
        """Make ``order`` the certificate, with its filled graph (see
        :func:`later_neighbours`) for the current DAG, or for the moral graph
        ``adj`` when given."""
        if adj is None:
            adj = moral_bits(self.pa, self.n_words)
        self.order = np.asarray(order, dtype=np.int64).copy()
        self.filled, self.position = later_neighbours(adj, self.order)
        self.stale = False          # True once arcs are removed: the rows then hold extra fill

    @property
    def score(self) -> float:
        return float(self.local.sum())

    def parents_of(self, v) -> tuple:
        return self.sets[v]

    def _set(self, v, ps):
        """Give ``v`` the parent set ``ps`` and refresh its row of move gains."""
        self.pa[v] = -1
        self.pa[v, :len(ps)] = ps
        self.sets[v] = ps
        s = self.scorer(v, ps)
        self.local[v] = s
        self.add[v] = -np.inf
        self.rem[v] = -np.inf
        if len(ps) < self.k and (self.caps is None or len(ps) < self.caps[v]):
            row = self.scorer.growth_row(v, ps)
            self.add[v] = np.where(np.isnan(row), -np.inf, row - s)
            if self.allowed is not None:
                self.add[v, ~self.allowed[v]] = -np.inf
        for u in ps:
            if self.fixed is None or not self.fixed[v, u]:   # a required arc stays at -inf
                self.rem[v, u] = self.scorer(v, tuple(p for p in ps if p != u)) - s

    def _fits(self, move, changes, touched):
        """Whether the DAG with ``changes`` (``[(child, new parents)]``, changing moral
        edges among the ``touched`` variables only) applied has width <= k; may
        adopt a new order.  True, False, or None when the certificate order
        refused it and the round's min-fill budget is spent (undecided: try again
        later).  True means the caller applies the changes: the filled graph of
        the certificate already holds them.

        First the new families are closed into the certificate's filled graph
        (:func:`close_fill`, hc-ET's incremental check: work only where fill
        flows); if that is too wide, the certificate order is kept up to the
        first variable the move touches and min-fill orders the rest
        (:func:`min_fill_after`).  A refusal by the certificate order is
        remembered until the order changes or an arc disappears: adding arcs
        only adds fill along a fixed order."""
        if move not in self.order_refused:
            self.checks["order"] += 1
            pairs = np.array([(w, p) for w, ps in changes for p in ps]
                             + [(p, q) for _, ps in changes for p, q in combinations(ps, 2)],
                             dtype=np.int64).reshape(-1, 2)
            if self._close(self.position[pairs]):
                return True
            if self.stale:                      # the rows may hold fill of removed arcs
                self._certify(self.order)
                if self._close(self.position[pairs]):
                    return True
            self.order_refused.add(move)
        if self.min_fill_budget <= 0:
            return None
        self.min_fill_budget -= 1
        self.checks["min_fill"] += 1
        start = int(np.flatnonzero(np.isin(self.order, touched))[0])
        adj = moral_bits(self._with(changes), self.n_words)
        order, width = min_fill_after(adj, self.order, start, self.k)
        if width <= self.k:
            self._certify(order, adj)
            self.order_refused.clear()
            return True
        self.checks["refused"] += 1
        return False

    def _close(self, pairs) -> bool:
        count = close_fill(self.filled, pairs, self.k, self._scratch, self._slot, self._touched)
        if count < 0:
            return False
        apply_fill(self.filled, self._scratch, self._slot, self._touched, count)
        return True

    def _with(self, changes):
        pa = self.pa.copy()
        for v, ps in changes:
            pa[v] = -1
            pa[v, :len(ps)] = ps
        return pa

    def moves(self, limit):
        """The ``limit`` best moves with positive gain, best first, as arrays (gain, kind,
        u, v) for arc u -> v, and how many moves gain at all.  Only the best are
        sorted: from the empty graph on thousands of variables almost every
        arc gains."""
        found = []
        for table, kind in ((self.add, 0), (self.rem, 1)):
            vs, us = np.nonzero(table > EPS)
            found.append((table[vs, us], np.full(vs.size, kind), us, vs))
        vs, us = np.nonzero(self.rem > -np.inf)         # existing arcs u -> v, not required
        gains = self.rem[vs, us] + self.add[us, vs]
        keep = gains > EPS
        found.append((gains[keep], np.full(int(keep.sum()), 2), us[keep], vs[keep]))
        gain = np.concatenate([f[0] for f in found])
        kind = np.concatenate([f[1] for f in found])
        u = np.concatenate([f[2] for f in found])
        v = np.concatenate([f[3] for f in found])
        if gain.size > limit:
            top = np.argpartition(-gain, limit - 1)[:limit]
            order = top[np.lexsort((top, -gain[top]))]
        else:
            order = np.argsort(-gain, kind="stable")
        return gain[order], kind[order], u[order], v[order], gain.size

    def try_move(self, kind, u, v) -> bool:
        """Apply the move if it keeps the DAG acyclic and the width <= k."""
        if kind == 1:                                   # removal is always allowed
            self._unblock_around((v, *self.parents_of(v)))
            self._set(v, tuple(p for p in self.parents_of(v) if p != u))
            self.order_refused.clear()
            self.stale = True
            return True
        if (kind, u, v) in self.blocked:
            return False
        if self.min_fill_budget <= 0 and (kind, u, v) in self.order_refused:
            self.undecided += 1
            return False
        pv = self.parents_of(v)
        if kind == 0:
            if reaches(self.pa, v, u, -1, -1):
                return False
            changes = [(v, tuple(sorted(pv + (u,))))]
        else:
            if reaches(self.pa, u, v, v, u):
                return False
            changes = [(v, tuple(p for p in pv if p != u)),
                       (u, tuple(sorted(self.parents_of(u) + (v,))))]
        touched = [x for w, ps in changes for x in (w, *ps, *self.parents_of(w))]
        fits = self._fits((kind, u, v), changes, touched)
        if not fits:
            if fits is None:
                self.undecided += 1
            else:
                self.blocked[(kind, u, v)] = touched
            return False
        if kind == 2:
            self._unblock_around((v, *pv))
            self.order_refused.clear()
            self.stale = True
        for w, ps in changes:
            self._set(w, ps)
        return True

    def _unblock_around(self, vertices):
        """Forget the refusals of moves that touch ``vertices`` (families about to
        lose moral edges) or their moral neighbours: a smaller graph there may fit
        them now.  Refusals elsewhere stand; they are a cache of the search, never
        a certificate, so keeping one only skips a move."""
        if not self.blocked or not len(vertices):
            return
        near = np.zeros(self.n + 1, dtype=bool)             # the last entry: padding (-1)
        near[list(vertices)] = True
        children = np.flatnonzero(near[self.pa].any(axis=1))
        near[children] = True
        near[self.pa[near[:-1]]] = True                      # parents of all those: the rest
        near = near[:-1]
        self.blocked = {move: touched for move, touched in self.blocked.items()
                        if not near[touched].any()}

    def climb(self, deadline, on_round=None) -> int:
        """Hill climbing until no move helps or the deadline passes; ``on_round(state)``
        is called after every round that changed the network, and every 64 tried
        moves within a round that has changed it (on 10,000 variables an applied
        move costs a row of 10,000 family scores, so a round takes minutes).

        Each round ranks every improving move once and applies them best first,
        down to ``ROUND_SHARE`` of the first one's gain, skipping a move whose
        gain an earlier move of the round has changed (its child's, or for a
        reversal also its parent's, family was touched): the gains of the others
        are still exact, so one ranking serves many moves.
        A round spends at most ``MIN_FILL_PER_ROUND`` min-fill runs on moves the
        certificate order refuses (four times more after a round that applied
        nothing); the rest wait for a later round, and the climb ends when a
        round applies nothing and left nothing undecided.
        A round looks at the best ``depth`` moves only (8 n at first), and looks
        four times deeper after a round that found nothing there.
        """
        steps, depth, budget = 0, 8 * self.n, MIN_FILL_PER_ROUND
        while not clock.expired(deadline):
            gain, kind, us, vs, gaining = self.moves(depth)
            self.min_fill_budget, self.undecided = budget, 0
            touched = np.zeros(self.n, dtype=bool)
            applied = 0
            floor = 0.0
            for t in range(min(depth, gain.size)):
                if gain[t] < floor:
                    break
                kd, u, v = int(kind[t]), int(us[t]), int(vs[t])
                if touched[v] or (kd == 2 and touched[u]):
                    continue
                if self.try_move(kd, u, v):
                    applied += 1
                    floor = floor or ROUND_SHARE * gain[t]
                    touched[v] = True
                    if kd == 2:
                        touched[u] = True
                if t % 64 == 63:
                    if clock.expired(deadline):
                        break
                    if applied and on_round is not None:
                        on_round(self)          # a long round's progress, as it comes
            steps += applied
            if applied and on_round is not None:
                on_round(self)
            if applied:
                budget = MIN_FILL_PER_ROUND
            elif self.undecided:
                budget *= 4
            elif depth >= gaining:
                break
            else:
                depth *= 4
        return steps

    def snapshot(self):
        return [self.parents_of(v) for v in range(self.n)], self.order.copy(), self.score

