"""Where the climb starts: the exact optimum on small problems, or a user's network."""
from __future__ import annotations

import math
import time

import numpy as np

from ...data import Dataset
from ...errors import InputError
from ...graphs import moral_graph, treewidth_exact, treewidth_upper_bound
from ...scores import ParentSetScores
from .. import order_graph
from .width import min_fill, moral_bits, parent_rows

#: Problems with at most this many variables start from the exact optimum.
DP_MAX_VARS = 20
# Family-count ceiling for the exact start: above it the candidate table
# would take longer to score than the local search needs.
_DP_MAX_FAMILIES = 300_000


def exact_start(data, k, score, ess, deadline):
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


def prune_to_width(parents, k, scorer):
    """Drop the arcs that cost least, one at a time, until the moral graph has width <= k
    (exact tree-width, the problem being small), and an order of that width."""
    n = len(parents)
    names = list(range(n))
    parents = {v: list(ps) for v, ps in parents.items()}
    while True:
        order, width = min_fill(moral_bits(parent_rows(parents, k), (n + 63) // 64), k)
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

def given_start(data: Dataset, parents: dict, k: int):
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



def k_greedy(candidates, k: int, rng):
    """Scanagatta et al.'s k-greedy (2016): a DAG grown inside a k-tree.

    Variables are taken in a random order.  The first ``k + 1`` form a clique,
    each taking its best candidate parent set among the earlier ones; every
    later variable ``v`` takes its best candidate set ``P`` that is a clique of
    the k-tree built so far, and joins the k-tree on a k-clique holding ``P``
    (the oldest (k+1)-clique holding ``P``, less its first vertex outside ``P``).
    Each family ``{v} + P`` is then a clique of the k-tree, so the moral graph
    lies inside it: the tree-width is at most ``k`` and the reverse insertion
    order, a perfect elimination order of the k-tree, is the certificate.

    ``candidates[v]`` lists ``(score, parents)`` best first, the empty set
    among them.  Returns the parent tuples, the certificate order and the score.

    >>> cands = [[(-1.0, (1,)), (-2.0, ())], [(-1.0, ())], [(-1.0, (0, 1)), (-3.0, ())]]
    >>> k_greedy(cands, 2, np.random.default_rng(1))   # order 0, 1, 2: 0 comes before 1
    ([(), (), (0, 1)], array([2, 1, 0]), -4.0)
    """
    n = len(candidates)
    order = [int(v) for v in rng.permutation(n)]
    placed = np.zeros(n, dtype=bool)
    adjacent = [set() for _ in range(n)]
    cliques, holding = [], [[] for _ in range(n)]      # (k+1)-cliques; their ids per vertex
    parents, total = [()] * n, 0.0
    head = order[:k + 1]
    for i, v in enumerate(order):
        for score, ps in candidates[v]:
            if len(ps) > k or not all(placed[p] for p in ps):
                continue
            if i <= k or all(adjacent[p].issuperset(x for x in ps if x != p) for p in ps):
                break
        else:
            raise InputError(f"variable {v} has no candidate parent set that fits, "
                             f"not even the empty set")
        parents[v], total = tuple(sorted(ps)), total + score
        placed[v] = True
        if i < k:
            continue
        if i == k:
            clique = tuple(head)
        else:
            ids = holding[ps[0]] if ps else range(len(cliques))
            held = next(c for c in ids if set(ps) <= set(cliques[c]))
            drop = next(x for x in cliques[held] if x not in ps)
            clique = tuple(x for x in cliques[held] if x != drop) + (v,)
        for x in clique:
            holding[x].append(len(cliques))
            adjacent[x].update(y for y in clique if y != x)
        cliques.append(clique)
    return parents, np.array(order[::-1], dtype=np.int64), total


def k_greedy_start(scorer, k: int, rng, seconds: float, executor=None):
    """The best of repeated :func:`k_greedy` runs (a new random order each) within
    ``seconds``, from every variable's :meth:`~twlib.scores.FamilyScorer.candidate_sets`.

    Returns the parents by column, the certificate order, the score and the
    number of runs."""
    n = scorer.data.n_vars
    scorer.prefetch([(v, ()) for v in range(n)], executor)
    candidates = [scorer.candidate_sets(v, k) for v in range(n)]
    deadline = time.perf_counter() + seconds
    best, runs = None, 0
    while best is None or time.perf_counter() < deadline:
        got = k_greedy(candidates, k, rng)
        runs += 1
        if best is None or got[2] > best[2]:
            best = got
    parents, order, score = best
    return dict(enumerate(parents)), order, score, runs
