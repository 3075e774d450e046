"""LPACJT's search: the threshold raised lazily (section 5) or by bisection."""
from __future__ import annotations

import itertools
import math
import time

import numba as nb
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ...data import Dataset, as_dataset
from ...errors import InputError
from ..result import LearnResult
from .consistent import ComponentTable
from .ltci import ltci_masks
from .masks import component_masks, find_root
from .model import ThinJunctionTree
from .oracle import InformationOracle

__all__ = ["learn"]

@nb.njit(cache=True)
def _strength_values(tested):
    out = np.empty(len(tested))
    for i, strength in enumerate(tested.values()):
        out[i] = strength
    return out

# ------------------------------------------------------------------- LPACJT
@nb.njit(cache=True)
def _merge_events(tested, rest):
    """Kruskal over one separator's hyper-edges, strongest first: the unions that
    join two components, as (strength, position, position), in descending
    strength.  The components at any threshold are those of the events above it."""
    where = np.full(64, -1, dtype=np.int64)
    for i in range(rest.shape[0]):
        where[rest[i]] = i
    masks = np.empty(len(tested), dtype=np.int64)
    strengths = np.empty(len(tested))
    for j, (mask, strength) in enumerate(tested.items()):
        masks[j], strengths[j] = mask, strength
    parent = np.arange(rest.shape[0])
    ev_s = np.empty(rest.shape[0])
    ev_a = np.empty(rest.shape[0], dtype=np.int64)
    ev_b = np.empty(rest.shape[0], dtype=np.int64)
    n_ev = 0
    for j in np.argsort(-strengths, kind="mergesort"):
        first = -1
        m, v = masks[j], 0
        while m:
            if m & 1:
                if first < 0:
                    first = where[v]
                else:
                    ra, rb = find_root(parent, first), find_root(parent, where[v])
                    if ra != rb:
                        parent[rb] = ra
                        ev_s[n_ev], ev_a[n_ev], ev_b[n_ev] = strengths[j], first, where[v]
                        n_ev += 1
            m >>= 1
            v += 1
    return ev_s[:n_ev], ev_a[:n_ev], ev_b[:n_ev]


@nb.njit(cache=True)
def _event_roots(ev_s, ev_a, ev_b, size, delta):
    """Union-find roots (fully compressed) of the events stronger than ``delta``."""
    parent = np.arange(size)
    for j in range(ev_s.shape[0]):
        if ev_s[j] <= delta:
            break
        ra, rb = find_root(parent, ev_a[j]), find_root(parent, ev_b[j])
        if ra != rb:
            parent[rb] = ra
    for i in range(size):
        parent[i] = find_root(parent, i)
    return parent


@nb.njit(cache=True)
def _refresh(tested, ranked, events, rests, i):
    """Bring separator i's sorted strengths and merge events up to date."""
    if ranked[i].shape[0] != len(tested[i]):
        ranked[i] = np.sort(_strength_values(tested[i]))
        events[i] = _merge_events(tested[i], rests[i])


@nb.njit(cache=True)
def _separator_roots(tested, ranked, events, rests, i, delta):
    _refresh(tested, ranked, events, rests, i)
    ev_s, ev_a, ev_b = events[i]
    return _event_roots(ev_s, ev_a, ev_b, rests[i].shape[0], delta)


@nb.njit(cache=True)
def _all_components(tested, ranked, events, memo, comps, rests, delta):
    """Components of every separator at ``delta``, flattened to (separator index,
    mask) arrays.  ``ranked[i]`` keeps separator i's tested strengths sorted and
    ``events[i]`` its merge events (refreshed after new tests); ``memo[i]`` is the
    (edge count, active events) its ``comps[i]`` were computed for."""
    total = 0
    for i in range(len(tested)):
        _refresh(tested, ranked, events, rests, i)
        ev_s, ev_a, ev_b = events[i]
        active = 0
        while active < ev_s.shape[0] and ev_s[active] > delta:
            active += 1
        if memo[i, 0] != ranked[i].shape[0] or memo[i, 1] != active:
            roots = _event_roots(ev_s, ev_a, ev_b, rests[i].shape[0], delta)
            comps[i] = component_masks(rests[i], roots)
            memo[i, 0], memo[i, 1] = ranked[i].shape[0], active
        total += comps[i].shape[0]
    comp_sep = np.empty(total, dtype=np.int64)
    comp_mask = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(len(tested)):
        for m in comps[i]:
            comp_sep[k], comp_mask[k] = i, m
            k += 1
    return comp_sep, comp_mask


@nb.njit(cache=True)
def _smallest_above(ranked, delta, limit):
    """The distinct tested strengths above ``delta``, sorted, at most ``limit`` of
    them (the smallest)."""
    total = 0
    for r in ranked:
        total += r.shape[0] - np.searchsorted(r, delta, side="right")
    out = np.empty(total)
    k = 0
    for r in ranked:
        for j in range(np.searchsorted(r, delta, side="right"), r.shape[0]):
            out[k] = r[j]
            k += 1
    if total > limit:
        out = np.partition(out, limit - 1)[:limit]
    return np.unique(out)


class _Hypergraph:
    """The hyper-edges tested for every separator (set mask -> strength, one numba
    dict each) and their components at a threshold, all kept compiled-side."""

    def __init__(self, separators, n, oracle):
        self.oracle = oracle
        self.masks = [oracle.mask(s) for s in separators]
        dict_type = nb.types.DictType(nb.types.int64, nb.types.float64)
        self.tested = nb.typed.List.empty_list(dict_type)
        self.ranked = nb.typed.List.empty_list(nb.types.float64[::1])
        self.comps = nb.typed.List.empty_list(nb.types.int64[::1])
        self.rests = nb.typed.List.empty_list(nb.types.int64[::1])
        self.events = nb.typed.List.empty_list(nb.types.Tuple(
            (nb.types.float64[::1], nb.types.int64[::1], nb.types.int64[::1])))
        for s in separators:
            self.events.append((np.empty(0), np.empty(0, dtype=np.int64),
                                np.empty(0, dtype=np.int64)))
            self.tested.append(nb.typed.Dict.empty(nb.types.int64, nb.types.float64))
            self.ranked.append(np.empty(0))
            self.comps.append(np.empty(0, dtype=np.int64))
            self.rests.append(np.array(sorted(set(range(n)) - s), dtype=np.int64))
        self.memo = np.full((len(separators), 2), -1, dtype=np.int64)

    def components(self, delta):
        return _all_components(self.tested, self.ranked, self.events, self.memo, self.comps,
                               self.rests, delta)

    def strengths_above(self, delta, limit):
        self.components(delta)                      # brings the sorted strengths up to date
        return _smallest_above(self.ranked, delta, limit)

    def test_spanning_sets(self, i, delta, sizes, touching=-1):
        """Test separator i's untested sets that meet the mask ``touching`` and join
        two or more of its components at ``delta``; True if one of them is
        stronger than ``delta`` (the components change)."""
        rest, tested = self.rests[i], self.tested[i]
        parent = _separator_roots(self.tested, self.ranked, self.events, self.rests, i, delta)
        before = len(np.unique(parent))
        for size in sizes:
            if size <= len(rest):
                self.oracle.merge_pass(self.masks[i], rest, parent, size, delta, tested=tested,
                                       touching=touching)
        return len({find_root(parent, j) for j in range(len(parent))}) < before


def learn(data: Dataset | pd.DataFrame, k: int, *, q: int | None = None, ess: float = 1.0,
          search: str = "lazy", select: str = "likelihood", progress: bool = False,
          knowledge=None) -> LearnResult:
    """LPACJT: a junction tree of width ``k`` from data (Chechetka & Guestrin 2007).

    ``knowledge`` is refused by name: a junction tree has cliques, not arcs, so
    required or forbidden arcs and tiers say nothing about it.

    ``data``: a Dataset, a DataFrame, a 2-D array or a CSV path (see
    :func:`twlib.data.as_dataset`).

    ``search="lazy"`` raises the threshold over the strengths of the hyper-edges
    tested so far until a tree is found (bisecting over them rather than stepping
    edge by edge), testing only hyper-edges that join components, and re-testing,
    once a tree is found, those that touch the components it uses (section 5);
    ``"binary"`` bisects the threshold over ``[0, log R]``, running LTCI for every
    separator at each step (the baseline).  ``q`` is LTCI's largest set (default
    k + 2, as in the paper's Algorithm 3).  ``select="likelihood"`` (default) returns
    the tree of highest training likelihood among all the search met, as the
    paper's experiments report; ``"threshold"`` the tree at the final threshold
    (the one the guarantee is about).  ``ess`` is the pseudo-count the clique
    marginals are smoothed with.  ``progress=True`` shows a tqdm counter of the
    thresholds tried.  At most 62 variables (sets are 64-bit masks).

    Returns a :class:`~twlib.learn.LearnResult`: the junction tree in ``model``
    (a :class:`ThinJunctionTree`), the same distribution as a Bayesian network in
    ``network``, ``score`` its training log-likelihood, ``width`` = k with an
    elimination order, and in ``stats`` the threshold, the trees met, the number
    of hyper-edge strengths computed and of distinct entropies, and the time.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("iris"), 2)
    >>> res.width, len(res.model.cliques), res.status
    (2, 3, 'complete')
    """
    if knowledge:
        raise InputError("LPACJT learns a junction tree, which has no arcs: background "
                         "knowledge about arcs does not apply (learn.bounded takes it)")
    data = as_dataset(data)
    n = data.n_vars
    if not 1 <= k <= n - 2:
        raise InputError(f"a junction tree of width k over n = {n} variables needs "
                         f"1 <= k <= n - 2, got k={k}")
    if search not in ("lazy", "binary"):
        raise InputError(f"search must be 'lazy' or 'binary', got {search!r}")
    if select not in ("threshold", "likelihood"):
        raise InputError(f"select must be 'threshold' or 'likelihood', got {select!r}")
    if not ess > 0:
        raise InputError(f"the pseudo-count ess must be positive, got {ess}")
    q = k + 2 if q is None else q
    if q < 2:
        raise InputError(f"q must be at least 2, got {q}")
    widest = np.sort(np.log2(np.maximum(data.arities, 1)))[::-1][:k + q].sum()
    if widest >= 62:
        raise InputError(f"sets of k + q = {k + q} variables of these arities overflow "
                         "64-bit joint-state keys; lower q or k")
    started = time.perf_counter()
    oracle = InformationOracle(data)
    seps = [frozenset(c) for c in itertools.combinations(range(n), k)]
    best = _BestTree(oracle, tqdm(desc="LPACJT", unit="threshold", disable=not progress))
    if search == "lazy":
        tree, delta, rounds = _lazy(n, seps, oracle, q, k, best)
    else:
        tree, delta, rounds = _binary(n, seps, oracle, q, k, data, best)
    best.bar.close()
    if select == "likelihood":
        tree = best.tree
    stats = {"delta": delta, "trees_seen": best.seen, "select": select,
             "entropies": oracle.cached, "strengths": oracle.strengths,
             "rounds": rounds, "search": search, "q": q, "score": "log-likelihood"}
    model = ThinJunctionTree.fit(data, *tree, ess=ess, stats=stats)
    network = model.to_network()
    stats["seconds"] = time.perf_counter() - started
    return LearnResult(network=network, score=model.log_likelihood(data), status="complete",
                       stats=stats, parents=network.parent_map(),
                       elimination_order=[v for v, _, _ in model.introduction_order()][::-1],
                       width=model.width, model=model)


_GATHER = 4096                           # thresholds gathered per raise of delta


class _BestTree:
    """Every tree the search meets, scored by the training log-likelihood of its
    projection, ``-N (sum H(C) - sum H(S))`` (empirical entropies, cached)."""

    def __init__(self, oracle, bar):
        self.oracle, self.seen, self.bar = oracle, 0, bar
        self.tree = None
        self.score = -math.inf

    def offer(self, tree):
        self.bar.update()
        if tree is not None:
            cliques, edges = tree
            h = (sum(self.oracle.entropy(c) for c in cliques)
                 - sum(self.oracle.entropy(set(cliques[i]) & set(cliques[j])) for i, j in edges))
            score = -self.oracle.data.n_rows * h
            self.seen += 1
            if score > self.score:
                self.tree, self.score = tree, score
        return tree


def _lazy(n, seps, oracle, q, k, best):
    graph = _Hypergraph(seps, n, oracle)
    table = ComponentTable(seps)
    for i in range(len(seps)):         # pairs are cheap: test them all (none merges at +inf)
        graph.test_spanning_sets(i, math.inf, sizes=[2])
    delta, rounds = -math.inf, 0

    def tree_at(d):
        nonlocal rounds
        rounds += 1
        return best.offer(table.tree(flat=graph.components(d)))

    while True:
        tree = tree_at(delta)
        if tree is None:
            # the smallest tested strength at which a tree appears (one always does
            # once every edge is gone): gallop up from delta, then bisect
            above = graph.strengths_above(delta, _GATHER)
            if len(above) == _GATHER and tree_at(above[-1]) is None:
                delta = float(above[-1])       # beyond the smallest strengths gathered
                continue
            lo, step = 0, 1
            while lo + step < len(above) and tree_at(above[lo + step - 1]) is None:
                lo, step = lo + step, 2 * step
            hi = min(lo + step - 1, len(above) - 1)
            while lo < hi:
                mid = (lo + hi) // 2
                if tree_at(above[mid]) is None:
                    lo = mid + 1
                else:
                    hi = mid
            delta = float(above[lo])
            continue
        # only a set meeting a component the tree uses can change the tree
        changed = False
        for i, touching in table.used.items():
            changed |= graph.test_spanning_sets(i, delta, range(3, q + 1), touching)
        if not changed:
            return tree, delta, rounds


def _binary(n, seps, oracle, q, k, data, best, steps: int = 12):
    low, high = 0.0, math.log(max(int(data.arities.max()), 2))
    table = ComponentTable(seps)
    found = None
    for _ in range(steps):
        mid = (low + high) / 2
        masks = [ltci_masks(range(n), s, oracle, mid, q) for s in seps]
        tree = best.offer(table.tree(masks_per_separator=masks))
        if tree is None:
            low = mid
        else:
            found, high = (tree, mid), mid
    if found is None:                    # every separator's singletons always give a tree
        singletons = [np.array([1 << v for v in range(n) if v not in s], dtype=np.int64)
                      for s in seps]
        found = (best.offer(table.tree(masks_per_separator=singletons)), high)
    return found[0], found[1], steps
