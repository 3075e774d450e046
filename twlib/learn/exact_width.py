"""The optimal network of tree-width at most ``k``, by branch and bound on obstructions.

A search node is a set ``F`` of *forbidden* pairs: no family may put both
variables of a pair in its moral graph (neither as child and parent nor as two
parents).  Its bound is the best network, of any width, that avoids ``F``: the
order-graph DP of Chapter 3 (:func:`~twlib.learn.order_graph.optimal_order`)
over the candidate sets that survive, which proves it exactly.  When that
network's moral graph has tree-width ``> k``, an *obstruction*, an
edge-minimal subgraph of tree-width ``> k``
(:func:`~twlib.graphs.width_obstruction`), names the branches: a network of
width ``<= k`` misses at least one of its edges (tree-width never grows when
edges go), so the children ``F + {e}``, one per edge ``e``, between them hold
every network of width ``<= k`` the node held.  The children's DPs are cheap:
each redoes only the subsets that hold both ends of its new pair, from the
node's own table and DP (:func:`~twlib.learn.order_graph.orders_without_pairs`).

Nodes are expanded best bound first.  The search ends when the best open bound
is no better than the incumbent, or when the node taken out holds a network of
width ``<= k``: its bound, the best of all, is then met.  Until then the best
open bound is a proved upper bound, so a run stopped by its time limit returns
the incumbent, that bound and the gap.

The DP over all ``2^n`` subsets limits this to about two dozen variables (the
tables take ``n 2^(n-1)`` floats).  When tiers of knowledge hold every
variable, the bound is the DP over the orders that list the tiers one after
the other (:mod:`twlib.learn.tier_orders`), a few thousand subsets; the
limits are then a 64-bit word per moral graph row (:data:`TIERED_MAX_VARS`
variables) and the exact tree-width decisions, which run on what is left once
simplicial vertices of degree ``<= k`` are removed
(:func:`~twlib.graphs.simplicial_reduction`), at most :data:`CORE_NODES`
vertices (a search that meets a larger core raises BudgetExceeded).  The
integer programme of
:mod:`twlib.learn.ilp` goes further, with a much weaker bound under ``k`` (up to
22 variables it takes the root DP's optimum as a cap, the bound this search
starts from).
Candidate sets are pruned only by proved rules; a pruned set's better subset
avoids every pair the set avoids and has no larger moral graph, so pruning stays
sound at every node.
"""
from __future__ import annotations

import heapq

import networkx as nx
import numba as nb
import numpy as np
import pandas as pd

from .. import clock
from ..data import Dataset, as_dataset
from ..errors import BudgetExceeded, InputError, InternalError
from ..graphs import (elimination_order, elimination_width, find_cycle, greedy_elimination,
                      moral_graph, simplicial_reduction, treewidth_at_most, treewidth_exact,
                      width_obstruction)
from ..scores import ParentSetScores
from .order_graph import best_cost_tables, chosen_for_order, optimal_order, orders_without_pairs
from .result import LearnResult, check_time_limit, check_width_bound, fit_to_scores, relative_gap
from .tier_orders import tier_entries, tier_order

__all__ = ["learn", "solve", "tiered", "MAX_VARS", "TIERED_MAX_VARS", "CORE_NODES"]

MAX_VARS = 24           # the DP tables: n 2^(n-1) floats, 1.6 GB at 24 variables
TIERED_MAX_VARS = 62    # with tiers: the moral graph as one 64-bit word per vertex
CORE_NODES = 28         # exact width decisions on the core left by the simplicial
                        # reduction: a flag per vertex subset, 256 MB at 28
_TIER_ENTRIES = 1 << 26     # the tier DP's best-cost table, 0.5 GB
_ONES = np.ones(TIERED_MAX_VARS)
_NO_ORDER = np.zeros(0, dtype=np.int64)
_TOL = 1e-9             # relative: a bound this close to the incumbent proves it


def _parent_map(masks, n) -> dict:
    """``{v: [parents]}`` of one chosen candidate bitset per variable."""
    return {v: [u for u in range(n) if (int(masks[v]) >> u) & 1] for v in range(n)}


def _moral(masks, n) -> nx.Graph:
    graph = moral_graph(_parent_map(masks, n))
    graph.add_nodes_from(range(n))
    return graph


@nb.njit(cache=True)
def _moral_rows(masks):
    """The moral graph of one parent bitset per variable, as bitset rows (one word)."""
    n = masks.size
    rows = np.zeros((n, 1), dtype=np.uint64)
    one = np.uint64(1)
    for v in range(n):
        rows[v, 0] |= masks[v]
        for u in range(n):
            if (masks[v] >> np.uint64(u)) & one:
                rows[u, 0] |= (masks[v] & ~(one << np.uint64(u))) | (one << np.uint64(v))
    return rows


def _fits_heuristically(masks, k) -> bool:
    """Whether min-fill eliminates the network's moral graph with width ``<= k``."""
    _, width, _ = greedy_elimination(_moral_rows(masks), 0, _ONES[:masks.size], 0.0, 0,
                                     _NO_ORDER)
    return width <= k


class _Search:
    """The candidate sets as flat arrays, and the DP bound of a set of forbidden pairs."""

    def __init__(self, pss: ParentSetScores, tiers=None):
        self.n = pss.n_vars
        self.tiers = tiers
        self.masks, scores, offsets = pss.flat_arrays()
        self.costs = -scores
        self.child = np.repeat(np.arange(self.n), np.diff(offsets))
        self._hits = {}
        self.evaluated = 0

    def _hit(self, a, b):
        """Which candidate sets put the pair ``a < b`` into the moral graph."""
        if (a, b) not in self._hits:
            has_a = (self.masks >> np.uint64(a)) & np.uint64(1) == 1
            has_b = (self.masks >> np.uint64(b)) & np.uint64(1) == 1
            self._hits[a, b] = (((self.child == a) & has_b) | ((self.child == b) & has_a)
                                | (has_a & has_b))
        return self._hits[a, b]

    def _allowed(self, forbidden):
        """Which candidate sets avoid every pair in ``forbidden``."""
        keep = np.ones(len(self.masks), dtype=bool)
        for a, b in forbidden:
            keep &= ~self._hit(a, b)
        return keep

    def edge_losses(self, forbidden, masks, graph) -> dict:
        """For each edge of ``graph``, the moral graph of the network ``masks``: what
        its families lose when each takes its child's best candidate avoiding that
        pair too (acyclicity ignored), a cheap guess at the cost of forbidding it."""
        keep = self._allowed(forbidden)
        chosen = {}
        for v in range(self.n):
            rows = np.flatnonzero((self.child == v) & (self.masks == masks[v]) & keep)
            chosen[v] = -self.costs[rows[0]]
        losses = {}
        for a, b in graph.edges:
            pair = (min(a, b), max(a, b))
            fits = keep & ~self._hit(*pair)
            loss = 0.0
            for v in range(self.n):
                if (v in pair and (int(masks[v]) >> (a + b - v)) & 1) or (
                        (int(masks[v]) >> a) & 1 and (int(masks[v]) >> b) & 1):
                    # infinite when v keeps no candidate (the pair is a required arc)
                    loss += chosen[v] + self.costs[fits & (self.child == v)].min(
                        initial=np.inf)
            losses[pair] = loss
        return losses

    def _lists(self, keep):
        rows = np.flatnonzero(keep)
        return self.masks[rows], self.costs[rows], np.searchsorted(self.child[rows],
                                                                   np.arange(self.n + 1))

    def bound(self, forbidden):
        """``(score, masks)``: the best network avoiding ``forbidden`` and its families
        (``-inf`` and None when none does: a required parent is cut off)."""
        masks, costs, offsets = self._lists(self._allowed(forbidden))
        self.evaluated += 1
        if self.tiers is None:
            _, chosen, total = optimal_order(masks, costs, offsets, tables=True)
        else:
            total, order = tier_order(masks, costs, offsets, self.tiers)
            if not np.isfinite(total):
                return -np.inf, None
            chosen = chosen_for_order(order, masks, costs, offsets)
        return -total, masks[chosen]

    def child_bounds(self, forbidden, pairs):
        """``(pair, score, masks)``: :meth:`bound` of ``forbidden + {pair}`` for each
        pair.  The node's table of best costs is built once; each child's DP reads
        it with its new pair left out (every best cost it needs is a minimum of the
        node's over a subset or two), the children's DPs in parallel."""
        if self.tiers is not None:
            # the tiers' DP is small enough to run afresh for each child
            return [(pair, *self.bound(set(forbidden) | {pair})) for pair in pairs]
        if not pairs:
            return []
        keep = self._allowed(forbidden)
        table = best_cost_tables(self.n, *self._lists(keep))
        totals, orders = orders_without_pairs(table, np.array(pairs))
        out = []
        for pair, total, order in zip(pairs, totals, orders):
            masks, costs, offsets = self._lists(keep & ~self._hit(*pair))
            out.append((pair, -total, masks[chosen_for_order(order, masks, costs, offsets)]))
        self.evaluated += len(pairs)
        return out


def solve(pss: ParentSetScores, k: int, *, time_limit: float = 60.0, start: dict | None = None,
          gap_limit: float = 0.0, max_nodes: int | None = None) -> LearnResult:
    """The optimal network of tree-width ``<= k`` over the candidate sets of ``pss``.

    Parameters
    ----------
    pss : ParentSetScores
        The candidate parent sets.  At most ``k`` parents per set is enough (a
        network of width ``k`` has no more); larger sets only slow the search.
    k : int
        The tree-width bound, ``>= 1``.
    time_limit : float
        Seconds; on expiry the incumbent returns with ``status="time_limit"``,
        the best open bound as ``upper_bound`` and the gap.
    start : dict, optional
        ``{variable: parents}`` of width ``<= k``, a first incumbent (each family
        replaced by its best kept subset); the empty network otherwise.
    gap_limit : float
        Stop at this relative gap in percent (0: prove the optimum).
    max_nodes : int, optional
        Stop after this many DP bounds (``status="node_limit"``).

    ``stats`` holds the DP bounds computed (``nodes``), nodes expanded, the
    open nodes left, the obstructions' sizes and the ``history`` of incumbent
    and bound against seconds.

    >>> from twlib.datasets import load_sklearn
    >>> res = solve(ParentSetScores(load_sklearn("wine"), max_parents=2), k=2)
    >>> res.status, res.width <= 2, res.gap_percent
    ('optimal', True, 0.0)
    """
    started = clock.now()
    check_width_bound(k)
    check_time_limit(time_limit)
    if not gap_limit >= 0:
        raise InputError(f"gap_limit must be >= 0 (percent), got {gap_limit!r}")
    n = pss.n_vars
    tiers = _tiers(pss.names, pss.knowledge)
    _check_size(n, tiers)
    with clock.interruptible():
        search = _Search(pss, tiers)
        if pss.knowledge is not None:
            start = pss.knowledge.start(pss.names, start or None)
        best_score, best_masks = _start(pss, k, start or {})
        history = []

        def note(bound):
            # the bound moves at almost every node: keep a point per 1e-5 of the score
            if not history or history[-1]["score"] != best_score or (
                    history[-1]["bound"] - bound > 1e-5 * abs(best_score)):
                history.append({"seconds": clock.now() - started, "score": best_score,
                                "bound": bound})

        def consider(score, masks):
            nonlocal best_score, best_masks
            if masks is not None and score > best_score and _fits_heuristically(masks, k):
                best_score, best_masks = score, masks

        score, masks = search.bound(())
        consider(score, masks)
        heap = [(-score, 0, frozenset(), masks)]
        seen = {frozenset()}
        waiting = {frozenset()}           # the forbidden sets of the open nodes
        expanded = 0
        sizes = []
        status = "optimal"
        while True:
            bound = max(-heap[0][0], best_score) if heap else best_score
            note(bound)
            if bound <= best_score + _TOL * max(1.0, abs(best_score)):
                break
            if relative_gap(best_score, bound) <= gap_limit and gap_limit > 0:
                status = "gap_limit"
                break
            if clock.interrupted():
                status = "interrupted"
                break
            if clock.now() - started > time_limit:
                status = "time_limit"
                break
            if max_nodes is not None and search.evaluated >= max_nodes:
                status = "node_limit"
                break
            neg, _, forbidden, masks = heapq.heappop(heap)
            waiting.discard(forbidden)
            graph = _moral(masks, n)
            if treewidth_at_most(graph, k, max_nodes=CORE_NODES):
                best_score, best_masks = -neg, masks      # the best bound of all, met
                continue
            expanded += 1
            obstruction = width_obstruction(graph, k, max_nodes=CORE_NODES,
                                            weights=search.edge_losses(forbidden, masks, graph))
            sizes.append(obstruction.number_of_edges())
            pairs = []
            for a, b in obstruction.edges:
                pair = (min(a, b), max(a, b))
                child = forbidden | {pair}
                # an open node that forbids fewer pairs holds all of this one (a sibling
                # forbidding the other pair, most often): its expansion covers it.  Only
                # children bounded here count as seen: a child left to an open node must
                # still be bounded when that node's expansion makes it again
                if child in seen or any(child - {old} in waiting for old in forbidden):
                    continue
                seen.add(child)
                pairs.append(pair)
            for pair, score, child_masks in search.child_bounds(forbidden, pairs):
                child = forbidden | {pair}
                consider(score, child_masks)
                if score > best_score:
                    heapq.heappush(heap, (-score, search.evaluated, child, child_masks))
                    waiting.add(child)
        upper = max(-heap[0][0], best_score) if heap and status != "optimal" else best_score
        history.append({"seconds": clock.now() - started, "score": best_score,
                        "bound": upper})
        graph = _moral(best_masks, n)
        order = _certificate(graph, k)
        parents = {pss.names[v]: tuple(pss.names[u] for u in ps)
                   for v, ps in _parent_map(best_masks, n).items()}
        if find_cycle({v: list(ps) for v, ps in parents.items()}) is not None:
            raise InternalError("the search returned a cyclic graph")
        stats = {"seconds": clock.now() - started, "nodes": search.evaluated,
                 "expanded": expanded, "open": len(heap),
                 "obstruction_edges": (min(sizes), max(sizes)) if sizes else None,
                 "in_degree_limit": pss.max_parents, "score": pss.score,
                 "method": "obstruction branch and bound", "history": history}
        return LearnResult(network=fit_to_scores(pss, parents, "exact-width"), score=best_score,
                           status=status, stats=stats, parents=parents,
                           elimination_order=[pss.names[v] for v in order],
                           width=elimination_width(graph, order), upper_bound=upper,
                           gap_percent=relative_gap(best_score, upper), knowledge=pss.knowledge)


def tiered(pss: ParentSetScores) -> bool:
    """Whether :func:`solve` bounds ``pss`` by the DP over the tiers' orders:
    the knowledge's tiers hold every variable, their DP fits, and there are
    at most :data:`TIERED_MAX_VARS` variables."""
    return pss.n_vars <= TIERED_MAX_VARS and _tiers(pss.names, pss.knowledge) is not None


def _tiers(names, know):
    """The tiers of the knowledge ``know`` as lists of indices into ``names``
    when they hold every variable and their DP fits :data:`_TIER_ENTRIES`,
    else None."""
    if know is None or not know.tiers:
        return None
    tier = [know.tier_of(name) for name in names]
    if any(t is None for t in tier):
        return None
    tiers = [[v for v in range(len(names)) if tier[v] == t] for t in range(max(tier) + 1)]
    tiers = [members for members in tiers if members]
    return tiers if tier_entries([len(m) for m in tiers]) <= _TIER_ENTRIES else None


def _check_size(n, tiers):
    if n > MAX_VARS and (tiers is None or n > TIERED_MAX_VARS):
        gigabytes = n * 2.0 ** (n - 1) * 8 / 1e9
        raise BudgetExceeded(f"the DP bound over {n} variables needs {gigabytes:.1f} GB per node; "
                             f"exact_width takes at most {MAX_VARS} variables, or "
                             f"{TIERED_MAX_VARS} when tiers of knowledge hold every variable "
                             "(twlib.learn.ilp.learn(k=...) goes further)")


def _certificate(graph, k) -> list:
    """An elimination order of width ``<= k``: min-fill's if it is one, else the
    simplicial vertices first and an exact order of the core."""
    order = elimination_order(graph, method="min-fill")
    if elimination_width(graph, order) > k:
        removed, core = simplicial_reduction(graph, k)
        width, order = treewidth_exact(core, max_nodes=CORE_NODES)
        if width > k:
            raise InternalError(f"the incumbent has tree-width {width} > k = {k}")
        order = removed + order
    return order


def _start(pss, k, start: dict):
    """The start's score and family bitsets, each family its best kept subset."""
    unknown = sorted({u for v, ps in start.items() for u in [v, *ps]} - set(pss.names))
    if unknown:
        raise InputError(f"the start names variables that are not in the data: {unknown}")
    masks = np.zeros(pss.n_vars, dtype=np.uint64)
    score = 0.0
    for v, name in enumerate(pss.names):
        s, parents = pss.best(name, candidates=list(start.get(name, ())))
        score += s
        masks[v] = pss.mask_of(parents)[0] if parents else 0
    if find_cycle(_parent_map(masks, pss.n_vars)) is not None:
        raise InputError("the start has a directed cycle")
    if not treewidth_at_most(_moral(masks, pss.n_vars), k, max_nodes=CORE_NODES):
        raise InputError(f"the start's tree-width is over k = {k}")
    return score, masks


def learn(data: Dataset | pd.DataFrame, k: int, *, score: str = "bic", ess: float = 1.0,
          time_limit: float = 60.0, start="auto", gap_limit: float = 0.0,
          executor=None, knowledge=None) -> LearnResult:
    """The optimal network of tree-width ``<= k`` from data (at most 24 variables,
    or 62 when tiers of ``knowledge`` hold every variable).

    Scores every candidate set of at most ``k`` parents
    (:class:`~twlib.scores.ParentSetScores`, proved pruning only) and runs
    :func:`solve`.  ``start="auto"`` takes a first incumbent from a run of
    :func:`twlib.learn.bounded.learn` (a quarter of the time, at most 60 s:
    :func:`~twlib.learn.bounded.first_incumbent`);
    ``None`` starts from the empty network; a dict gives the start.
    ``knowledge`` (:class:`twlib.knowledge.Knowledge`) filters the parent sets
    before scoring: the proof is then of the optimum among the networks it allows.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("iris"), k=1, score="bdeu")
    >>> res.status, res.width
    ('optimal', 1)
    """
    data = as_dataset(data)
    check_width_bound(k)
    check_time_limit(time_limit)
    _check_size(data.n_vars, _tiers(data.names, knowledge))
    with clock.interruptible():
        started = clock.now()
        if knowledge:
            knowledge.validate(data.names, k)
        pss = ParentSetScores(data, score=score, ess=ess, max_parents=min(k, data.n_vars - 1),
                              executor=executor, knowledge=knowledge)
        scoring = clock.now() - started
        if isinstance(start, str):
            if start != "auto":
                raise InputError(f"start must be 'auto', None or a dict of parents, got {start!r}")
            from . import bounded
            start = bounded.first_incumbent(data, k, score=score, ess=ess, time_limit=time_limit,
                                            knowledge=knowledge)
        left = max(time_limit - (clock.now() - started), 1.0)
        res = solve(pss, k, time_limit=left, start=start, gap_limit=gap_limit)
        res.stats["scoring_seconds"] = scoring
        res.stats["seconds"] = clock.now() - started
        return res
