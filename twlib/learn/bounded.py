"""The library's bounded-tree-width learner: hill climbing that never leaves the bound.

:func:`learn` searches directed acyclic graphs by single-arc moves -- add,
remove, reverse -- and accepts a move only when the moral graph of the new DAG
still has an elimination order of width at most ``k``.  This is the move set of
elimination-tree hill climbing (hc-ET, Benjumeda, Bielza & Larrañaga 2019).
Where hc-ET maintains an elimination tree, the check here is two-staged:

1. the moral graph is eliminated along the *current* certificate order, which
   costs ``O(n k w)`` word operations with ``w = ceil(n / 64)`` bitset words;
2. only if that order is too wide is a fresh min-fill order tried, and when it
   fits, it becomes the new certificate.

Both stages are sufficient conditions (a returned width is always a true
width of the returned order), so the result is certified exactly as hc-ET's.
The search is anytime: once hill climbing stops it is restarted from the best
network with a random share of its arcs removed (iterated local search), until
``time_limit``.  For up to :data:`DP_MAX_VARS` variables the order-graph dynamic
programme first gives the optimum over in-degree ``<= k``; if its tree-width is
at most ``k`` it is returned as optimal, else its score is the upper bound and
its arcs, pruned to the bound, are a start.
"""
from __future__ import annotations

import math
import time
import uuid

import numba as nb
import numpy as np
import pandas as pd

from ..bitsets import alive_neighbours, all_alive, eliminate_vertex, missing_edges, popcount
from ..data import Dataset, as_dataset
from ..errors import InputError, InternalError
from ..graphs import elimination_width, moral_graph, treewidth_exact, treewidth_upper_bound
from ..network import BayesianNetwork
from ..parallel import run_tasks, worker_count
from ..scores import FamilyScorer, ParentSetScores
from . import order_graph
from .result import LearnResult

__all__ = ["learn", "DP_MAX_VARS", "upper_bound"]

#: Problems with at most this many variables start from the exact optimum.
DP_MAX_VARS = 20
# Gains smaller than this (relative to the score's scale) are treated as ties.
_EPS = 1e-9
# Fresh min-fill orders tried per hill-climbing round, when the certificate order
# refuses a move; beyond it such moves wait for the next round.  Refusals cost a
# whole min-fill run each, which dominates on thousands of variables.
MIN_FILL_PER_ROUND = 32
# A round stops at moves gaining less than this share of its first applied move:
# best-first across variables, without ranking again after every move.
ROUND_SHARE = 0.5
# Family-count ceiling for the exact start: above it the candidate table
# would take longer to score than the local search needs.
_DP_MAX_FAMILIES = 300_000


# ----------------------------------------------------------------- bitset kernels
@nb.njit(cache=True)
def _moral_bits(pa, n_words):
    """Adjacency bitsets of the moral graph of the DAG with parent rows ``pa`` (-1 padded)."""
    n = pa.shape[0]
    adj = np.zeros((n, n_words), dtype=np.uint64)
    one = np.uint64(1)
    for v in range(n):
        for a in range(pa.shape[1]):
            p = pa[v, a]
            if p < 0:
                break
            adj[v, p >> 6] |= one << np.uint64(p & 63)
            adj[p, v >> 6] |= one << np.uint64(v & 63)
            for b in range(a + 1, pa.shape[1]):
                q = pa[v, b]
                if q < 0:
                    break
                adj[p, q >> 6] |= one << np.uint64(q & 63)
                adj[q, p >> 6] |= one << np.uint64(p & 63)
    return adj


def _parent_rows(parents, k):
    """Parent lists (a sequence, or a dict keyed 0..n-1) as the kernels' rows, -1 padded."""
    items = parents.items() if isinstance(parents, dict) else enumerate(parents)
    pa = np.full((len(parents), k), -1, dtype=np.int64)
    for v, ps in items:
        pa[v, :len(ps)] = ps
    return pa


@nb.njit(cache=True)
def _filled(adj0, order):
    """The graph plus the fill-in of eliminating ``order``: a chordal supergraph whose
    cliques have at most width + 1 vertices."""
    n, n_words = adj0.shape
    adj = adj0.copy()
    alive = all_alive(n, n_words)
    nbr = np.empty(n, dtype=np.int64)
    for v in order:
        eliminate_vertex(adj, v, alive, nbr)
    return adj


@nb.njit(cache=True)
def _width_along(adj0, order, k):
    """Width of eliminating ``order``; stops at the first clique wider than ``k``."""
    n, n_words = adj0.shape
    adj = adj0.copy()
    alive = all_alive(n, n_words)
    nbr = np.empty(n, dtype=np.int64)
    width = 0
    for v in order:
        c = eliminate_vertex(adj, v, alive, nbr)
        if c > width:
            width = c
            if width > k:
                return width
    return width


_NO_WEIGHTS = np.ones(0)


@nb.njit(cache=True)
def _cost(adj, alive, v, k, nbr):
    """Remaining degree of ``v`` and its fill-in (-1 when the degree exceeds ``k``)."""
    deg = 0
    for w in range(adj.shape[1]):
        deg += popcount(adj[v, w] & alive[w])
    if deg > k:
        return deg, -1
    alive_neighbours(adj, alive, v, nbr)
    return deg, int(missing_edges(adj, nbr, deg, _NO_WEIGHTS, False))


@nb.njit(cache=True)
def _min_fill(adj0, k):
    """A min-fill order (ties: smaller degree, then index) and its width, or width k+1
    as soon as every remaining vertex has more than ``k`` neighbours left.

    Costs are kept per vertex and refreshed only around each eliminated vertex
    (its neighbours and theirs), the only places where degree or fill change."""
    n, n_words = adj0.shape
    adj = adj0.copy()
    alive = all_alive(n, n_words)
    done = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    nbr = np.empty(n, dtype=np.int64)
    elim = np.empty(n, dtype=np.int64)
    around = np.empty(n + 1, dtype=np.int64)
    deg = np.empty(n, dtype=np.int64)
    fill = np.empty(n, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        deg[v], fill[v] = _cost(adj, alive, v, k, nbr)
    width = 0
    for step in range(n):
        best = -1
        for v in range(n):
            if done[v] or fill[v] < 0:
                continue
            if best < 0 or fill[v] < fill[best] or (fill[v] == fill[best] and deg[v] < deg[best]):
                best = v
        if best < 0:
            return order, k + 1
        c = eliminate_vertex(adj, best, alive, elim)
        width = max(width, c)
        done[best] = True
        order[step] = best
        for i in range(c):
            u = elim[i]
            around[0] = u
            m = 1 + alive_neighbours(adj, alive, u, around[1:])
            for j in range(m):
                y = around[j]
                if stamp[y] != step:
                    stamp[y] = step
                    deg[y], fill[y] = _cost(adj, alive, y, k, nbr)
    return order, width


@nb.njit(cache=True)
def _reaches(pa, source, target, skip_child, skip_parent):
    """Whether a directed path ``source -> ... -> target`` exists, ignoring the one arc
    ``skip_parent -> skip_child`` (pass -1 to ignore none).  Walks parents from target."""
    n = pa.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    stack[0] = target
    top = 1
    seen[target] = True
    while top:
        top -= 1
        v = stack[top]
        for a in range(pa.shape[1]):
            p = pa[v, a]
            if p < 0:
                break
            if v == skip_child and p == skip_parent:
                continue
            if p == source:
                return True
            if not seen[p]:
                seen[p] = True
                stack[top] = p
                top += 1
    return False


# ----------------------------------------------------------------- the search state
class _State:
    """A DAG with in-degree <= k, its local scores, the move gains and a width certificate."""

    def __init__(self, scorer: FamilyScorer, k: int, parents, order, checks, executor=None):
        self.scorer, self.k = scorer, k
        n = scorer.data.n_vars
        self.n, self.n_words = n, (n + 63) // 64
        self.pa = np.full((n, k), -1, dtype=np.int64)
        self.sets = [()] * n                    # parent tuples, sorted: pa's rows
        self.local = np.empty(n)
        self.add = np.full((n, n), -np.inf)     # add[v, u]: gain of arc u -> v
        self.rem = np.full((n, n), -np.inf)     # rem[v, u]: gain of removing u -> v
        self.order = np.asarray(order, dtype=np.int64)
        self.blocked: set = set()             # moves refused by the width check
        self.order_refused: set = set()       # moves the certificate order refused
        self.min_fill_budget = MIN_FILL_PER_ROUND
        self.undecided = 0
        self.checks = checks      # shared by the states of one run: counts of width checks
        scorer.prefetch([(v, parents[v]) for v in range(n) if len(parents[v]) < k], executor)
        for v in range(n):
            self._set(v, tuple(sorted(parents[v])))

    def derive(self, parents, order, checks=None) -> "_State":
        """A new state for ``parents``, recomputing only the rows of changed variables;
        it counts its width checks in ``checks`` (default: this state's counts)."""
        new = object.__new__(_State)
        new.scorer, new.k, new.n, new.n_words = self.scorer, self.k, self.n, self.n_words
        new.pa, new.local, new.sets = self.pa.copy(), self.local.copy(), list(self.sets)
        new.add, new.rem = self.add.copy(), self.rem.copy()
        new.order = np.asarray(order, dtype=np.int64).copy()
        new.blocked, new.order_refused = set(), set()
        new.checks = self.checks if checks is None else checks
        new.min_fill_budget, new.undecided = MIN_FILL_PER_ROUND, 0
        for v in range(self.n):
            ps = tuple(sorted(parents[v]))
            if ps != self.parents_of(v):
                new._set(v, ps)
        return new

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
        if len(ps) < self.k:
            row = self.scorer.growth_row(v, ps)
            self.add[v] = np.where(np.isnan(row), -np.inf, row - s)
        for u in ps:
            self.rem[v, u] = self.scorer(v, tuple(p for p in ps if p != u)) - s

    def _fits(self, pa, move):
        """Whether the DAG with parent rows ``pa`` (``move`` applied) has width <= k; may
        adopt a new order.  True, False, or None when the certificate order refused
        it and the round's min-fill budget is spent (undecided: try again later).

        A refusal by the certificate order is remembered until the order changes
        or an arc disappears: adding arcs only adds fill along a fixed order."""
        if move not in self.order_refused:
            self.checks["order"] += 1
            if _width_along(_moral_bits(pa, self.n_words), self.order, self.k) <= self.k:
                return True
            self.order_refused.add(move)
        if self.min_fill_budget <= 0:
            return None
        self.min_fill_budget -= 1
        self.checks["min_fill"] += 1
        order, width = _min_fill(_moral_bits(pa, self.n_words), self.k)
        if width <= self.k:
            self.order = order
            self.order_refused.clear()
            return True
        self.checks["refused"] += 1
        return False

    def _with(self, changes):
        pa = self.pa.copy()
        for v, ps in changes:
            pa[v] = -1
            pa[v, :len(ps)] = ps
        return pa

    def moves(self):
        """Candidate moves with positive gain, best first: (gain, kind, u, v) for arc u -> v."""
        found = []
        for table, kind in ((self.add, 0), (self.rem, 1)):
            vs, us = np.nonzero(table > _EPS)
            found.append((table[vs, us], np.full(vs.size, kind), us, vs))
        vs, us = np.nonzero(self.rem > -np.inf)         # existing arcs u -> v
        gains = self.rem[vs, us] + self.add[us, vs]
        keep = gains > _EPS
        found.append((gains[keep], np.full(int(keep.sum()), 2), us[keep], vs[keep]))
        gain = np.concatenate([f[0] for f in found])
        kind = np.concatenate([f[1] for f in found])
        u = np.concatenate([f[2] for f in found])
        v = np.concatenate([f[3] for f in found])
        order = np.argsort(-gain, kind="stable")
        return gain[order], kind[order], u[order], v[order]

    def try_move(self, kind, u, v) -> bool:
        """Apply the move if it keeps the DAG acyclic and the width <= k."""
        if kind == 1:                                   # removal is always allowed
            self._set(v, tuple(p for p in self.parents_of(v) if p != u))
            self.blocked.clear()                        # a smaller graph may fit them now
            self.order_refused.clear()
            return True
        if (kind, u, v) in self.blocked:
            return False
        if self.min_fill_budget <= 0 and (kind, u, v) in self.order_refused:
            self.undecided += 1
            return False
        pv = self.parents_of(v)
        if kind == 0:
            if _reaches(self.pa, v, u, -1, -1):
                return False
            changes = [(v, tuple(sorted(pv + (u,))))]
        else:
            if _reaches(self.pa, u, v, v, u):
                return False
            changes = [(v, tuple(p for p in pv if p != u)),
                       (u, tuple(sorted(self.parents_of(u) + (v,))))]
        fits = self._fits(self._with(changes), (kind, u, v))
        if not fits:
            if fits is None:
                self.undecided += 1
            else:
                self.blocked.add((kind, u, v))
            return False
        for w, ps in changes:
            self._set(w, ps)
        if kind == 2:
            self.blocked.clear()
            self.order_refused.clear()
        return True

    def climb(self, deadline, on_round=None) -> int:
        """Hill climbing until no move helps or the deadline passes; ``on_round(state)``
        is called after every round that changed the network.

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
        while time.perf_counter() < deadline:
            gain, kind, us, vs = self.moves()
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
                if t % 1024 == 1023 and time.perf_counter() >= deadline:
                    break
            steps += applied
            if applied and on_round is not None:
                on_round(self)
            if applied:
                budget = MIN_FILL_PER_ROUND
            elif self.undecided:
                budget *= 4
            elif depth >= gain.size:
                break
            else:
                depth *= 4
        return steps

    def snapshot(self):
        return [self.parents_of(v) for v in range(self.n)], self.order.copy(), self.score


# ----------------------------------------------------------------- local exact windows
def _neighbours(adj, n):
    """Adjacency bitsets as a list of Python sets."""
    bits = np.unpackbits(adj.view(np.uint8), axis=1, bitorder="little")[:, :n]
    return [set(np.flatnonzero(row).tolist()) for row in bits]


def _window_candidates(v, nbrs, k, scorer, cap):
    """Parent sets P of ``v`` with ``P + v`` a clique of the chordal graph, |P| <= k, scored.

    Grown one vertex at a time in increasing index order; each level is scored in
    one batched call."""
    found = [((), scorer(v, ()))]
    frontier = [((), sorted(nbrs[v]))]
    while frontier and len(found) < cap:
        grown = []
        for ps, ext in frontier:
            if len(ps) == k or not ext:
                continue
            scores = scorer.with_each_added(v, ps, ext)
            for x, sc in zip(ext, scores):
                child = ps + (x,)
                found.append((child, float(sc)))
                grown.append((child, [y for y in ext if y > x and y in nbrs[x]]))
        frontier = grown
    return found


def _improve_window(parents, order, k, scorer, size, rng, cap=4000):
    """Re-optimise the families of a window of variables exactly, the rest fixed.

    The window is a random connected set of ``size`` vertices of the chordal graph
    ``H`` = moral graph + fill-in of the certificate ``order``.  Each window
    variable may take any parent set that forms a clique with it in ``H`` (so the
    moral graph stays inside ``H`` and ``order`` keeps width <= k); a parent
    outside the window that descends from window variables (through outside
    vertices only) requires those variables earlier, which keeps the DAG
    acyclic.  The order-graph DP over the window then finds the best choice.
    Returns the new parent list and the gain (>= 0).
    """
    n = len(parents)
    pa = _parent_rows(parents, k)
    nbrs = _neighbours(_filled(_moral_bits(pa, (n + 63) // 64), order), n)
    start = int(rng.integers(n))
    window, pool = [start], set(nbrs[start])
    while pool and len(window) < size:
        x = int(rng.choice(sorted(pool)))
        window.append(x)
        pool |= nbrs[x]
        pool -= set(window)
    bit = {v: i for i, v in enumerate(window)}
    children = [[] for _ in range(n)]
    for v, ps in enumerate(parents):
        for u in ps:
            children[u].append(v)
    below = np.zeros(n, dtype=np.int64)        # below[u]: window variables reaching u
    for w, i in bit.items():
        stack, seen = [c for c in children[w] if c not in bit], set()
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            below[u] |= 1 << i
            stack.extend(c for c in children[u] if c not in bit)
    masks, costs, offsets, sets = [], [], [0], []
    for v in window:
        rows = []
        for ps, sc in _window_candidates(v, nbrs, k, scorer, cap):
            need = 0
            for u in ps:
                need |= (1 << bit[u]) if u in bit else int(below[u])
            if not need >> bit[v] & 1:
                rows.append((-sc, need, ps))
        rows.sort(key=lambda r: r[0])
        costs += [r[0] for r in rows]
        masks += [r[1] for r in rows]
        sets += [r[2] for r in rows]
        offsets.append(len(costs))
    _, chosen, total = order_graph.optimal_order(np.array(masks, dtype=np.uint64),
                                                 np.array(costs), np.array(offsets))
    old = sum(scorer(v, parents[v]) for v in window)
    gain = -total - old
    if not gain > _EPS * max(1.0, abs(old)):
        return parents, 0.0
    new = list(parents)
    for i, v in enumerate(window):
        new[v] = tuple(sorted(sets[chosen[i]]))
    return new, gain


# ----------------------------------------------------------------- starts and bounds
def _exact_start(data, k, score, ess, deadline):
    """The order-graph optimum over in-degree <= k, when the problem is small enough."""
    n = data.n_vars
    families = n * sum(math.comb(n - 1, j) for j in range(min(k, n - 1) + 1))
    if n > DP_MAX_VARS or families > _DP_MAX_FAMILIES or time.perf_counter() > deadline:
        return None
    pss = ParentSetScores(data, score=score, ess=ess, max_parents=k)
    res = order_graph.dp(pss)
    index = {name: i for i, name in enumerate(data.names)}
    parents = {index[v]: tuple(sorted(index[p] for p in ps)) for v, ps in res.parents.items()}
    return parents, res.score


def _prune_to_width(parents, k, scorer):
    """Drop the arcs that cost least, one at a time, until the moral graph has width <= k
    (exact tree-width, the problem being small), and an order of that width."""
    n = len(parents)
    names = list(range(n))
    parents = {v: list(ps) for v, ps in parents.items()}
    while True:
        order, width = _min_fill(_moral_bits(_parent_rows(parents, k), (n + 63) // 64), k)
        if width > k:                   # min-fill only bounds the width from above
            moral = moral_graph({v: parents[v] for v in names})
            moral.add_nodes_from(names)
            width, order = treewidth_exact(moral, max_nodes=DP_MAX_VARS)
        if width <= k:
            return {v: tuple(sorted(ps)) for v, ps in parents.items()}, order
        loss = [(scorer(v, ps) - scorer(v, [p for p in ps if p != u]), v, u)
                for v, ps in parents.items() for u in ps]
        _, v, u = min(loss)
        parents[v].remove(u)


def upper_bound(scorer: FamilyScorer, k: int) -> float:
    """A score no network of tree-width <= k can exceed (BIC and log-likelihood).

    Width ``<= k`` implies in-degree ``<= k``.  For each variable the best
    family with at most one parent is found exactly; a larger parent set ``P``
    scores at most ``-penalty(P)`` because a log-likelihood is never positive
    (de Campos & Ji 2011), and the smallest penalty of ``j`` parents uses the
    ``j`` smallest arities.  The sum over variables bounds every network.
    Loose when the data have many rows, but proved.

    >>> import pandas as pd
    >>> from twlib.data import Dataset
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1] * 8, "b": [0, 0, 1, 1] * 4}))
    >>> fs = FamilyScorer(ds, score="bic")
    >>> upper_bound(fs, k=1) >= fs(0, ()) + fs(1, ())      # e.g. the empty network
    True
    """
    if scorer.score == "bdeu":
        raise InputError("a data-free upper bound is proved here for 'bic' and 'll' only")
    data = scorer.data
    n, arities = data.n_vars, np.asarray(data.arities)
    log_n = math.log(data.n_rows) if scorer.score == "bic" else 0.0
    ascending = np.sort(arities)[:k + 1]
    total = 0.0
    for v in range(n):
        best = max(scorer(v, ()), float(np.nanmax(scorer.growth_row(v, ()))))
        smallest = np.delete(ascending, np.flatnonzero(ascending == arities[v])[0]
                             if arities[v] in ascending else k)   # the others' k smallest
        for j in range(2, min(k, n - 1) + 1):
            q = float(np.prod(smallest[:j]))
            best = max(best, -0.5 * log_n * q * (arities[v] - 1))
        total += best
    return total


def _check(data: Dataset, k, time_limit, max_iter):
    n = data.n_vars
    if n < 2:
        raise InputError(f"learning a network needs at least two variables, got {n}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < n:
        raise InputError(f"the tree-width bound must be an integer with 1 <= k < n = {n}, "
                         f"got k={k!r}")
    if not time_limit > 0:
        raise InputError(f"time_limit must be positive (seconds), got {time_limit!r}")
    if max_iter is not None and not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise InputError(f"max_iter (hill-climbing restarts) must be an integer >= 1 or None, "
                         f"got {max_iter!r}")


def _given_start(data: Dataset, parents: dict, k: int):
    """A user's starting structure as parent tuples by column, with an
    elimination order of width at most ``k`` (refused when min-fill finds none)."""
    unknown = sorted({u for v, ps in parents.items() for u in [v, *ps]} - set(data.names))
    if unknown:
        raise InputError(f"the start names variables that are not in the data: {unknown}")
    moral = moral_graph({v: list(ps) for v, ps in parents.items()})
    moral.add_nodes_from(data.names)
    width, order = treewidth_upper_bound(moral)
    if width > k:
        raise InputError(f"the start's tree-width bound found is {width}, over k = {k}")
    index = {v: i for i, v in enumerate(data.names)}
    start = {index[v]: () for v in data.names}
    start.update({index[v]: tuple(sorted(index[u] for u in ps)) for v, ps in parents.items()})
    return start, np.array([index[v] for v in order])


def learn(data: Dataset | pd.DataFrame, k: int, *, score: str = "bic", ess: float = 1.0,
          parameter_ess: float | None = 1.0, time_limit: float = 60.0,
          max_iter: int | None = None, perturbation: float = 0.25, window: int = 12,
          random_state=None, progress: bool = False, executor=None,
          restarts_per_round: int | None = None, start: dict | None = None) -> LearnResult:
    """Learn a Bayesian network of tree-width at most ``k``: the library's best learner.

    Parameters
    ----------
    data : Dataset, DataFrame, 2-D array or CSV path
        See :func:`twlib.data.as_dataset`.
    k : int
        The tree-width bound, ``1 <= k < n``.
    score, ess : the structure score and its BDeu equivalent sample size.
    parameter_ess : float or None
        CPTs are posterior means under a BDeu prior of this equivalent sample
        size (so held-out log-likelihoods stay finite); None gives maximum
        likelihood.
    time_limit : float
        Seconds for the whole search; the best network so far is returned.
    max_iter : int, optional
        Hill-climbing runs (the first from the start, the others from the best
        network perturbed); None means until ``time_limit``.
    perturbation : float
        Share of the best network's arcs removed before each restart.
    window : int
        Variables per local exact window (0 switches the windows off; at most
        20): after each hill-climbing run, windows re-optimise their families
        exactly with the rest fixed (:func:`_improve_window`).
    progress : bool
        A tqdm bar over the time budget.
    executor : optional
        Where the parallel parts run (see :mod:`twlib.parallel`): a
        ``concurrent.futures`` executor or a Dask client.  The first rows of
        candidate parents are scored in blocks of variables on its workers,
        and each round of restarts runs one restart per worker.
    restarts_per_round : int, optional
        Restarts from the best network per round, the best of them kept
        (default: one per worker of ``executor``, 1 without).  Each restart
        draws its own random stream from ``random_state``, so a run with an
        executor returns the same network as the in-process run with the same
        ``restarts_per_round``, unless ``time_limit`` cuts one of them short.
    start : dict, optional
        ``{variable: [parents]}``, a structure of tree-width at most ``k`` to
        climb from (structural EM passes its current network) instead of the
        default start: the exact optimum of in-degree ``k`` on small data, else
        the empty graph.

    Returns
    -------
    LearnResult
        ``network``, ``score``, ``width`` (``<= k``), ``elimination_order`` (the
        certificate), ``upper_bound`` (None for BDeu beyond the exact start) and
        ``gap`` (``upper_bound - score`` in percent of ``|score|``), ``status`` (``"optimal"`` when
        the gap closes, else ``"time_limit"`` or ``"complete"``) and ``stats``
        with ``history`` (best score against seconds), ``phases`` (seconds of the
        exact start, the candidate rows, the upper bound and the search), the
        move-check counts and ``families_scored`` (in this process).

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("wine"), k=2, time_limit=5, max_iter=3, random_state=0)
    >>> res.width <= 2, res.upper_bound >= res.score
    (True, True)
    """
    data = as_dataset(data)
    scorer = FamilyScorer(data, score=score, ess=ess)
    _check(data, k, time_limit, max_iter)
    if parameter_ess is not None and not parameter_ess > 0:
        raise InputError(f"parameter_ess must be positive or None, got {parameter_ess!r}")
    if not 0 < perturbation <= 1:
        raise InputError(f"perturbation must be in (0, 1], got {perturbation!r}")
    if not (isinstance(window, (int, np.integer)) and 0 <= window <= 20):
        raise InputError(f"window must be an integer from 0 (off) to 20, got {window!r}")
    batch = worker_count(executor) if restarts_per_round is None else restarts_per_round
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise InputError(f"restarts_per_round must be an integer >= 1 or None, got {batch!r}")
    started = time.perf_counter()
    deadline = started + time_limit
    rng = np.random.default_rng(random_state)
    n = data.n_vars
    history = []

    def note(event, value):
        history.append({"event": event, "score": value,
                        "seconds": time.perf_counter() - started})

    def checkpoint(current):
        """Record a long climb's progress (at most once a second) when it leads."""
        if (current.score > history[-1]["score"]
                and time.perf_counter() - started - history[-1]["seconds"] >= 1.0):
            note("climbing", current.score)

    phases = {}

    def phase_ends(name, since):
        phases[name] = time.perf_counter() - since
        return time.perf_counter()

    exact = None if start is not None else _exact_start(data, k, score, ess, deadline)
    bound = exact[1] if exact else None
    if start is not None:
        start, order = _given_start(data, start, k)
    elif exact:
        note("exact optimum, in-degree <= k", exact[1])
        start, order = _prune_to_width(exact[0], k, scorer)
    else:
        start, order = {v: () for v in range(n)}, np.arange(n)
    clock = phase_ends("exact start", started)
    checks = _no_checks()
    state = _State(scorer, k, [start[v] for v in range(n)], order, checks, executor)
    clock = phase_ends("candidate rows", clock)
    if bound is None and score != "bdeu":
        bound = upper_bound(scorer, k)         # reads the rows just scored
    clock = phase_ends("upper bound", clock)
    note("start", state.score)
    start_score = state.score
    bar = _progress_bar(progress, time_limit)
    tally = _no_tally()
    state = _climb_and_polish(state, rng, deadline, window, tally, checkpoint)
    best, best_state, runs = state.snapshot(), state, 1
    if best[2] > start_score + _EPS * max(1.0, abs(start_score)):
        note("hill climbing run 1", best[2])
    shared = (uuid.uuid4().hex, data, score, ess, k, perturbation, window)
    while True:
        if bar is not None:
            bar.update(min(time.perf_counter() - started, time_limit) - bar.n)
            bar.set_postfix(best=f"{best[2]:.1f}", runs=runs)
        if bound is not None and best[2] >= bound - _EPS * max(1.0, abs(bound)):
            status = "optimal"
            break
        if time.perf_counter() >= deadline:
            status = "time_limit"
            break
        if max_iter is not None and runs >= max_iter:
            status = "complete"
            break
        count = batch if max_iter is None else min(batch, max_iter - runs)
        seeds = rng.integers(2**63, size=count).tolist()
        parents, order, _ = best
        if executor is None:
            outcomes = []
            for seed in seeds:
                seconds = deadline - time.perf_counter()
                if seconds <= 0:
                    break
                state, more_tally, more_checks = _restart(best_state, parents, order, seed,
                                                          seconds, perturbation, window)
                outcomes.append((state.snapshot(), more_tally, more_checks, state))
        else:
            seconds = deadline - time.perf_counter()
            outcomes = [out + (None,) for out in run_tasks(
                executor, _restart_task, shared, [(parents, order, seed, seconds)
                                                  for seed in seeds])]
        for snap, more_tally, more_checks, state in outcomes:
            runs += 1
            for key, value in more_tally.items():
                tally[key] += value
            for key, value in more_checks.items():
                checks[key] += value
            if snap[2] > best[2] + _EPS * max(1.0, abs(best[2])):
                best, best_state = snap, state      # (a worker's state stays there: None)
                note(f"hill climbing run {runs}", best[2])
    if bar is not None:
        bar.close()
    _WORKER_STATE.pop(shared[0], None)     # this process's copy, when the executor was threads
    phase_ends("search", clock)
    return _result(data, best, k, score, parameter_ess, bound, status, started,
                   {"runs": runs, "history": history, **tally, "phases": phases,
                    "families_scored": len(scorer), "checks": checks,
                    "exact_start": exact is not None})


def _polish(state, scorer, k, size, rng, deadline, tally):
    """Local exact windows on a hill-climbing optimum, climbing again after each gain."""
    for _ in range(max(1, state.n // size)):
        if time.perf_counter() >= deadline:
            break
        parents, order, _ = state.snapshot()
        new, gain = _improve_window(parents, order, k, scorer, size, rng)
        tally["windows"] += 1
        if gain > 0:
            tally["windows_improved"] += 1
            tally["window_gain"] += gain
            state = state.derive(new, order)
            tally["steps"] += state.climb(deadline)
    return state


def _perturbed(parents, share, rng):
    """Parent lists with a random share of the arcs removed."""
    arcs = [(v, u) for v, ps in enumerate(parents) for u in ps]
    drop = set()
    if arcs:
        m = max(1, int(round(share * len(arcs))))
        drop = {arcs[i] for i in rng.choice(len(arcs), size=min(m, len(arcs)), replace=False)}
    return [tuple(u for u in ps if (v, u) not in drop) for v, ps in enumerate(parents)]


def _no_checks():
    return {"order": 0, "min_fill": 0, "refused": 0}


def _no_tally():
    return {"windows": 0, "windows_improved": 0, "window_gain": 0.0, "steps": 0}


def _climb_and_polish(state, rng, deadline, window, tally, on_round=None):
    """One hill-climbing run, then local exact windows when ``window > 1``."""
    tally["steps"] += state.climb(deadline, on_round)
    if window > 1:
        state = _polish(state, state.scorer, state.k, min(window, state.n), rng, deadline, tally)
    return state


def _restart(base, parents, order, seed, seconds, perturbation, window):
    """One restart of the iterated local search, for at most ``seconds``: ``parents``
    with a random share of arcs removed, climbed, then polished by windows.

    ``base`` is any search state over the same scorer (only rows that differ
    are rescored).  Returns the final state, the tally and the width checks."""
    deadline = time.perf_counter() + seconds
    rng = np.random.default_rng(seed)
    tally, checks = _no_tally(), _no_checks()
    state = base.derive(_perturbed(parents, perturbation, rng), order, checks)
    return _climb_and_polish(state, rng, deadline, window, tally), tally, checks


# A worker's search state for the current learn call, by the call's token: built
# by the first restart the worker runs, then only the changed rows are rescored.
# A worker process keeps it until a later call replaces it.
_WORKER_STATE: dict = {}


def _restart_task(shared, parents, order, seed, seconds):
    """:func:`_restart` on an executor's worker; returns the snapshot, not the state."""
    token, data, score, ess, k, perturbation, window = shared
    base = _WORKER_STATE.get(token)
    if base is None:
        _WORKER_STATE.clear()
        base = _WORKER_STATE[token] = _State(FamilyScorer(data, score=score, ess=ess), k,
                                             parents, order, _no_checks())
    state, tally, checks = _restart(base, parents, order, seed, seconds, perturbation, window)
    return state.snapshot(), tally, checks


def _progress_bar(progress, total):
    if not progress:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="s", desc="bounded learning",
                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s {postfix}")


def _result(data, best, k, score, parameter_ess, bound, status, started, stats):
    parents_idx, order, value = best
    names = list(data.names)
    parents = {names[v]: [names[p] for p in ps] for v, ps in enumerate(parents_idx)}
    moral = moral_graph(parents)
    moral.add_nodes_from(names)
    order_names = [names[int(v)] for v in order]
    width = elimination_width(moral, order_names)
    if width > k:
        raise InternalError(f"the certificate order has width {width} > k = {k}")
    if parameter_ess is None:
        network = BayesianNetwork.fit(data, parents, estimator="mle", name=f"bounded-{k}")
    else:
        network = BayesianNetwork.fit(data, parents, estimator="bdeu", ess=parameter_ess,
                                      name=f"bounded-{k}")
    gap = None
    if bound is not None:
        gap = (0.0 if status == "optimal"
               else 100.0 * max(0.0, bound - value) / max(abs(value), 1e-12))
    stats = dict(stats, score=score, seconds=time.perf_counter() - started, k=k)
    if data.n_vars <= DP_MAX_VARS:
        stats["treewidth"] = treewidth_exact(moral, max_nodes=DP_MAX_VARS)[0]
    return LearnResult(network=network, score=value, status=status, stats=stats,
                       parents=parents, elimination_order=order_names, width=width,
                       upper_bound=bound, gap=gap)
