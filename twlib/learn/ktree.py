"""k-trees of high Informative score (Nie, de Campos & Ji 2016).

A k-tree is grown from a root (k+1)-clique by adding one variable at a time,
joined to an existing k-clique.  Its I-score is the mutual information summed
over its edges.  :func:`guided_ktree` is the paper's Algorithm 1: best-first
search over (variable, k-clique) moves with ``g`` = minus the I-score so far and
``h`` = minus, for every unplaced variable, the sum of its k largest mutual
informations; popping a move that adds ``X`` closes every other move of ``X``.
:func:`best_ktree` is an exact A* over partial k-trees (with duplicate
detection) for small problems, the yardstick for Algorithm 1.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .. import clock
from ..data import Dataset, as_dataset
from ..errors import BudgetExceeded, InputError, InternalError
from ..graphs import (elimination_width, greedy_clique, i_score, induced_graph, ktree_cliques,
                      ktree_elimination_order, moral_graph, random_ktree, treewidth_exact,
                      treewidth_upper_bound)
from ..knowledge import KnowledgeConflict
from ..information import mutual_information_matrix
from ..scores import ParentSetScores
from . import greedy, order_graph
from .result import LearnResult, check_time_limit, check_width_bound

__all__ = ["KTreeSearch", "guided_ktree", "best_ktree", "top_k_information", "clique_families",
           "best_dag_in_ktree", "required_frame", "learn", "KTREE_SEARCHES"]

KTREE_SEARCHES = ("guided", "greedy", "random")


@dataclass
class KTreeSearch:
    """A k-tree found by search, with its construction and statistics."""

    graph: nx.Graph
    i_score: float
    root: tuple
    steps: list            # (variable, k-clique it joined), in order
    expanded: int
    generated: int
    trace: dict | None = None  # exact search only: popped f values, consistency slack


def top_k_information(mi: np.ndarray, k: int) -> np.ndarray:
    """Per variable, the sum of its k largest mutual informations with the others."""
    mi = np.asarray(mi, dtype=float)
    off = mi.copy()
    np.fill_diagonal(off, -np.inf)
    return np.sort(off, axis=1)[:, ::-1][:, :k].sum(axis=1)


def _check(mi, k, root, names):
    mi = np.asarray(mi, dtype=float)
    n = mi.shape[0]
    if mi.shape != (n, n) or not np.allclose(mi, mi.T):
        raise InputError("mutual information must be a symmetric square matrix")
    if not 1 <= k < n:
        raise InputError(f"k must satisfy 1 <= k < n = {n}, got k={k}")
    names = list(range(n)) if names is None else list(names)
    index = {v: i for i, v in enumerate(names)}
    if root is None:
        root = greedy_clique(mi, k + 1)
    root = tuple(sorted(index[r] if r in index else int(r) for r in root))
    if len(set(root)) != k + 1:
        raise InputError(f"the root must hold k + 1 = {k + 1} distinct variables")
    return mi, n, names, root


def _new_cliques(clique, x, k):
    return [tuple(sorted(s + (x,))) for s in itertools.combinations(clique, k - 1)]


def _result(mi, names, root, steps, expanded, generated):
    graph = nx.Graph()
    graph.add_nodes_from(names)
    graph.add_edges_from((names[a], names[b]) for a, b in itertools.combinations(root, 2))
    graph.add_edges_from((names[x], names[u]) for x, c in steps for u in c)
    score = sum(mi[a, b] for a, b in itertools.combinations(root, 2))
    score += sum(mi[x, u] for x, c in steps for u in c)
    named = [(names[x], tuple(names[u] for u in c)) for x, c in steps]
    graph.graph["construction"] = ([names[r] for r in root], named)
    return KTreeSearch(graph, float(score), tuple(names[r] for r in root), named, expanded,
                       generated)


def guided_ktree(mi, k: int, *, root=None, names=None, priority: str = "f",
                 contains: nx.Graph | None = None) -> KTreeSearch:
    """Algorithm 1 of Nie et al. (2016): a k-tree of high I-score from a root clique.

    The open set holds every move ``(X, C)`` -- an unplaced variable and a k-clique
    of the k-tree grown so far -- ranked by ``f = g + h`` with ``g`` = minus the
    I-score after the move and ``h`` = minus the top-k sums of the variables still
    unplaced.  All moves in the open set extend the same graph, so ``f`` ranks them
    by ``top_k(X) - I(X; C)``: the move that loses least against the optimistic
    estimate.  Popping a move adds ``X`` and closes every other move of ``X`` (step 8);
    the new vertex's k-cliques bring new moves.  The search never backtracks, which
    is what the paper's worst-case count ``sum_m C(m, k) (n - m)`` describes.

    Parameters
    ----------
    mi : (n, n) array
        Pairwise mutual information.
    k : int
    root : k+1 variables (names or indices), optional
        Default: a greedy (k+1)-clique of high I-score.
    names : list, optional
        Variable names (default: indices).
    priority : {"f", "gain"}
        ``"f"`` is Algorithm 1; ``"gain"`` ranks moves by ``I(X; C)`` alone, the
        plain greedy growth, for comparison.
    contains : nx.Graph, optional
        A chordal graph over (some of) the variables, of clique size at most
        ``k + 1``, that the k-tree must contain (:func:`required_frame` builds it
        from background knowledge).  Its vertices are then placed in a maximum
        cardinality search order, so each one's placed neighbours form a clique
        of the k-tree, and only moves whose k-clique holds them all are taken;
        ``root`` is kept where that order allows and completed greedily.

    >>> rng = np.random.default_rng(0)
    >>> m = rng.random((6, 6)); m = m + m.T; np.fill_diagonal(m, 0)
    >>> res = guided_ktree(m, 2)
    >>> res.graph.number_of_edges()
    9
    >>> frame = nx.path_graph([0, 3, 5])
    >>> tree = guided_ktree(m, 1, contains=frame).graph
    >>> all(tree.has_edge(a, b) for a, b in frame.edges)
    True
    """
    if priority not in ("f", "gain"):
        raise InputError(f"priority must be 'f' or 'gain', got {priority!r}")
    mi, n, names, root = _check(mi, k, root, names)
    frame = _MaximumCardinality(contains, names, n)
    root = frame.root(root, mi, k)
    top = top_k_information(mi, k) if priority == "f" else np.zeros(n)
    unplaced = np.ones(n, dtype=bool)
    unplaced[list(root)] = False
    heap, generated = [], 0

    def open_moves(clique):
        nonlocal generated
        rest = np.flatnonzero(unplaced)
        for x, gap in zip(rest, top[rest] - mi[np.ix_(rest, clique)].sum(axis=1)):
            heapq.heappush(heap, (float(gap), generated, int(x), clique))
            generated += 1

    for c in itertools.combinations(root, k):
        open_moves(c)
    steps = []
    while len(steps) < n - k - 1:
        move = heapq.heappop(heap)
        _, _, x, c = move
        if not unplaced[x] or not frame.fits(x, c):
            continue               # closed: x was placed, or c misses a placed neighbour
        if not frame.ready(x):
            frame.defer(x, move)
            continue
        unplaced[x] = False
        steps.append((x, c))
        for again in frame.place(x):
            heapq.heappush(heap, again)
        for new in _new_cliques(c, x, k):
            open_moves(new)
    return _result(mi, names, root, steps, len(steps), generated)


class _MaximumCardinality:
    """The order in which :func:`guided_ktree` may place a frame's vertices.

    Maximum cardinality search on a chordal graph places each vertex after a
    clique of its neighbours (Tarjan & Yannakakis 1984), so growing the k-tree in
    such an order, each vertex joined to a k-clique holding its placed frame
    neighbours, keeps every frame edge.  Vertices outside the frame's edges are
    free at any time.
    """

    def __init__(self, contains, names, n):
        index = {v: i for i, v in enumerate(names)}
        self.neighbours = [set() for _ in range(n)]
        for a, b in (() if contains is None else contains.edges):
            if a not in index or b not in index:
                raise InputError(f"the frame names {a if a not in index else b!r}, which is "
                                 "not a variable")
            self.neighbours[index[a]].add(index[b])
            self.neighbours[index[b]].add(index[a])
        self.framed = np.array([bool(s) for s in self.neighbours])
        self.count = np.zeros(n, dtype=np.int64)
        self.open = self.framed.copy()
        self.waiting = {}
        self.highest = 0

    def ready(self, x) -> bool:
        return not self.framed[x] or self.count[x] == self.highest

    def fits(self, x, clique) -> bool:
        return all(u in clique for u in self.neighbours[x] if not self.open[u])

    def defer(self, x, move):
        self.waiting.setdefault(x, []).append(move)

    def place(self, x) -> list:
        """Place ``x``; returns the deferred moves that became ready."""
        self.open[x] = False
        for u in self.neighbours[x]:
            self.count[u] += 1
        self.highest = int(self.count[self.open].max()) if self.open.any() else 0
        freed = []
        for u in [u for u in self.waiting if self.ready(u)]:
            freed.extend(self.waiting.pop(u))
        return freed

    def root(self, seed, mi, k) -> tuple:
        """``seed`` kept in order while each vertex is ready, then completed with the
        ready vertex of most mutual information with those chosen."""
        if not self.framed.any():
            return seed
        chosen = []
        for v in seed:
            if self.ready(v):
                chosen.append(v)
                self.place(v)
        while len(chosen) < k + 1:
            ready = [v for v in range(len(self.framed)) if v not in chosen and self.ready(v)]
            v = max(ready, key=lambda u: mi[u, chosen].sum() if chosen else 0.0)
            chosen.append(v)
            self.place(v)
        return tuple(sorted(chosen))


def required_frame(knowledge, k: int) -> nx.Graph:
    """A chordal graph of clique size at most ``k + 1`` holding the moral graph of
    the required arcs: a k-tree containing it has a clique for every required
    family.  KnowledgeConflict when no elimination order found keeps it within
    ``k``.

    >>> from twlib.knowledge import Knowledge
    >>> sorted(map(sorted, required_frame(Knowledge(required=["a -> c", "b -> c"]), 2).edges))
    [['a', 'b'], ['a', 'c'], ['b', 'c']]
    """
    moral = knowledge.required_moral_graph()
    if moral.number_of_nodes() == 0:
        return moral
    width, order = (treewidth_exact(moral) if moral.number_of_nodes() <= 20
                    else treewidth_upper_bound(moral))
    if width > k:
        raise KnowledgeConflict(f"the moral graph of the required arcs has tree-width "
                                f"{'' if moral.number_of_nodes() <= 20 else 'at most '}"
                                f"{width} by the orders tried, over k = {k}")
    return induced_graph(moral, order)


def best_ktree(mi, k: int, *, root=None, names=None, max_states: int = 2_000_000) -> KTreeSearch:
    """The k-tree of maximum I-score containing ``root``, by exact A* (small n only).

    States are identified by their set of k-cliques, so each distinct partial
    k-tree is expanded once; the heuristic of Algorithm 1 is consistent, so the
    first complete state popped is optimal.  ``trace`` records the ``f`` of every
    state popped (non-decreasing under a consistent heuristic) and the largest
    ``h(s) - h(s') - c(s, s')`` over all moves generated (never positive).
    """
    mi, n, names, root = _check(mi, k, root, names)
    top = top_k_information(mi, k)
    start = frozenset(tuple(c) for c in itertools.combinations(root, k))
    base_g = -sum(mi[a, b] for a, b in itertools.combinations(root, 2))
    best_g = {start: base_g}
    info = {start: (frozenset(root), None, None, None)}     # placed, parent key, x, clique
    heap = [(base_g - sum(top[x] for x in range(n) if x not in root), 0, start)]
    closed, counter, expanded = set(), 1, 0
    popped_f, worst_slack = [], -np.inf
    while heap:
        f, _, key = heapq.heappop(heap)
        if key in closed:
            continue
        popped_f.append(f)
        placed = info[key][0]
        if len(placed) == n:
            steps = []
            while info[key][1] is not None:
                _, prev, x, c = info[key]
                steps.append((x, c))
                key = prev
            res = _result(mi, names, root, steps[::-1], expanded, len(info))
            res.trace = {"f": np.array(popped_f), "largest_h_drop_over_cost": worst_slack}
            return res
        closed.add(key)
        expanded += 1
        h_now = -sum(top[x] for x in range(n) if x not in placed)
        for x in range(n):
            if x in placed:
                continue
            for c in key:
                new = key | frozenset(_new_cliques(c, x, k))
                gain = mi[x, list(c)].sum()
                worst_slack = max(worst_slack, gain - top[x])     # consistency: <= 0
                if new in closed:
                    continue
                g = best_g[key] - gain
                if g < best_g.get(new, np.inf) - 1e-12:
                    best_g[new] = g
                    info[new] = (placed | {x}, key, x, c)
                    heapq.heappush(heap, (g + h_now + top[x], counter, new))
                    counter += 1
        if len(info) > max_states:
            raise BudgetExceeded(f"exact k-tree search passed {max_states} states; it is meant for "
                                 "small problems (n <= 9)")
    raise InternalError("the search ran out of states before placing every variable")


# ------------------------------------------------------------- a DAG in a k-tree
def clique_families(ktree: nx.Graph, k: int) -> dict:
    """Each variable's largest admissible parent sets in a k-tree: ``C - {X}`` for
    every (k+1)-clique ``C`` holding ``X``.  Any subset of one of them keeps the
    family inside the clique, hence the moral graph inside the k-tree.

    >>> fam = clique_families(nx.complete_graph(3), 2)
    >>> fam[0]
    [(1, 2)]
    """
    _, top = ktree_cliques(ktree, k)
    families = {v: [] for v in ktree.nodes}
    for clique in top:
        for v in clique:
            families[v].append(tuple(u for u in clique if u != v))
    return families


def _order_from_construction(ktree: nx.Graph) -> list:
    root, steps = ktree.graph["construction"]
    return list(root) + [x for x, _ in steps]


def best_dag_in_ktree(data, ktree: nx.Graph, k: int, *, score: str = "bic", ess: float = 1.0,
                      method: str = "auto", restarts: int = 20, max_swaps: int | None = None,
                      random_state=None, exact_max_vars: int = 16,
                      knowledge=None) -> LearnResult:
    """The best-scoring DAG whose families lie in (k+1)-cliques of ``ktree``.

    ``data`` is a Dataset or a ParentSetScores already restricted to the k-tree.
    ``method="exact"`` runs the order-graph dynamic programme on the clique-
    restricted parent sets (optimal; ``2^n`` memory); ``"greedy"`` runs order-based
    greedy search over them, restarted from the k-tree's construction order, FAS
    orders and random orders (anytime, any n; ``max_swaps`` per run, default
    n^2); ``"auto"`` is exact up to ``exact_max_vars`` variables.  ``knowledge``
    drops the parent sets it rules out; the k-tree must then hold every required
    family in a clique (:func:`required_frame`).

    >>> from twlib.datasets import load_sklearn
    >>> from twlib.graphs import random_ktree
    >>> ds = load_sklearn("iris")
    >>> res = best_dag_in_ktree(ds, random_ktree(ds.names, 2, random_state=0), 2)
    >>> res.status, res.width <= 2
    ('optimal', True)
    """
    started = clock.now()
    if method not in ("auto", "exact", "greedy"):
        raise InputError(f"method must be 'auto', 'exact' or 'greedy', got {method!r}")
    if isinstance(data, ParentSetScores):
        pss = data
    else:
        pss = ParentSetScores.from_candidates(data, clique_families(ktree, k), score=score, ess=ess,
                                              knowledge=knowledge)
    n = pss.n_vars
    if method == "exact" or (method == "auto" and n <= exact_max_vars):
        res = order_graph.dp(pss)
    else:
        rng = np.random.default_rng(random_state)
        index = {v: i for i, v in enumerate(pss.names)}
        first = [index[v] for v in _order_from_construction(ktree)]
        fas = greedy.initial_orders(pss, method="fas", count=max(1, restarts // 2),
                                    random_state=rng.integers(2**32))
        rand = greedy.initial_orders(pss, method="random", count=max(1, restarts - len(fas) - 1),
                                     random_state=rng.integers(2**32))
        orders = np.vstack([np.array([first]), fas, rand])
        res = greedy.order_search(pss, init=orders, max_swaps=max_swaps or n * n)
    order = ktree_elimination_order(ktree, k)
    width = elimination_width(moral_graph(res.parents), order)
    if width > k:
        raise InternalError(f"a DAG inside the {k}-tree has width {width} under its order")
    res.elimination_order, res.width, res.ktree = order, width, ktree
    res.stats["seconds"] = clock.now() - started
    res.stats["dag_method"] = "exact" if res.status == "optimal" else "greedy"
    return res


# ----------------------------------------------------------------- Algorithm 2
def _check_learn(data, k, ktree_search, time_limit):
    if data.n_vars < 2:
        raise InputError(f"learning a network needs at least two variables, got {data.n_vars}")
    check_width_bound(k, n_vars=data.n_vars)
    check_time_limit(time_limit)
    if ktree_search not in KTREE_SEARCHES:
        raise InputError(f"ktree_search must be one of {KTREE_SEARCHES}, got {ktree_search!r}")


def learn(data: Dataset | pd.DataFrame, k: int, *, score: str = "bic", ess: float = 1.0,
          time_limit: float = 600.0, max_iter: int = 100, ktree_search: str = "guided",
          dag_method: str = "auto", restarts: int = 20, random_state=None,
          progress: bool = False, knowledge=None) -> LearnResult:
    """Learn a Bayesian network of tree-width at most ``k`` (Algorithm 2 of Nie et al.).

    ``data``: a Dataset, a DataFrame, a 2-D array or a CSV path (see
    :func:`twlib.data.as_dataset`).

    Each iteration picks a root (k+1)-clique -- first the greedy clique of largest
    I-score, then cliques drawn uniformly -- grows a k-tree from it, and finds the
    best DAG inside (:func:`best_dag_in_ktree`); the best DAG found is kept.  The
    loop stops after ``max_iter`` iterations or ``time_limit`` seconds of search
    (:func:`twlib.clock.now`; checked between iterations, so the first always
    completes), whichever comes first; Ctrl-C stops it there too, with status
    ``"interrupted"``.

    ``ktree_search`` chooses how the k-tree grows: ``"guided"`` is Algorithm 1,
    ``"greedy"`` always adds the move of largest I-score gain, and ``"random"``
    draws random k-trees by Definition 1, ignoring the data (the S2-style
    baseline; its root is drawn too).

    ``knowledge`` (:class:`twlib.knowledge.Knowledge`) drops the parent sets it
    rules out before scoring, and every k-tree grown contains
    :func:`required_frame`, so each required family lies in one of its cliques
    (random k-trees then come from random weights under the same rule).

    Returns a LearnResult whose ``elimination_order`` (a perfect elimination order
    of the k-tree) certifies ``width <= k``; ``stats["history"]`` lists per
    iteration the root, the k-tree's I-score, the DAG's score and the time.

    >>> from twlib.datasets import load_sklearn
    >>> res = learn(load_sklearn("wine"), k=2, max_iter=3, random_state=0)
    >>> res.width <= 2, res.stats["iterations"]
    (True, 3)
    """
    data = as_dataset(data)
    _check_learn(data, k, ktree_search, time_limit)
    knowledge = knowledge.validate(data.names, k) if knowledge else None
    frame = None if knowledge is None else required_frame(knowledge, k)
    with clock.interruptible():
        return _learn(data, k, score, ess, time_limit, max_iter, ktree_search, dag_method,
                      restarts, random_state, progress, knowledge, frame)


def _learn(data, k, score, ess, time_limit, max_iter, ktree_search, dag_method, restarts,
           random_state, progress, knowledge, frame):
    compiled = clock.compile_seconds()
    started = clock.now()
    rng = np.random.default_rng(random_state)
    mi = mutual_information_matrix(data)
    n, names = data.n_vars, list(data.names)
    best, history, seen = None, [], set()
    status = "complete"
    bar = tqdm(total=max_iter, desc="k-tree learning", unit="k-tree", disable=not progress)
    for it in range(max_iter):
        if it and clock.interrupted():
            status = "interrupted"
            break
        if it and clock.expired(started + time_limit):
            status = "time_limit"
            break
        root = greedy_clique(mi, k + 1) if it == 0 else sorted(rng.choice(n, k + 1, replace=False))
        if ktree_search == "guided":
            tree = guided_ktree(mi, k, root=root, names=names, contains=frame).graph
        elif ktree_search == "greedy":
            tree = guided_ktree(mi, k, root=root, names=names, priority="gain",
                                contains=frame).graph
        elif frame is None:
            tree = random_ktree(names, k, random_state=rng.integers(2**32))
        else:
            noise = rng.random((n, n))
            tree = guided_ktree(noise + noise.T, k, root=rng.choice(n, k + 1, replace=False),
                                names=names, priority="gain", contains=frame).graph
        key = frozenset(frozenset(e) for e in tree.edges)
        dag_score = np.nan                       # a k-tree seen before is not searched again
        if key not in seen:
            seen.add(key)
            res = best_dag_in_ktree(data, tree, k, score=score, ess=ess, method=dag_method,
                                    restarts=restarts, random_state=rng.integers(2**32),
                                    knowledge=knowledge)
            dag_score = res.score
            if best is None or res.score > best.score:
                best = res
        history.append({"iteration": it, "root": [names[r] for r in root],
                        "i_score": i_score(tree, mi, names=names), "score": dag_score,
                        "best": best.score, "seconds": clock.now() - started})
        bar.set_postfix({score: f"{best.score:.2f}"}, refresh=False)
        bar.update()
    bar.close()
    best.network.name = f"ktree-{k}"       # fitted by the DAG search with the same score
    best.status = status
    best.stats = {"score": score, "seconds": clock.now() - started,
                  "compile_seconds": clock.compile_seconds() - compiled,
                  "iterations": len(history), "distinct_ktrees": len(seen),
                  "history": history, "ktree_search": ktree_search,
                  "dag_method": best.stats["dag_method"]}
    return best

