"""Where the climb starts: the exact optimum on small problems, a user's network,
or a DAG grown inside a k-tree (k-greedy, k-MAX)."""
from __future__ import annotations

import math
from functools import partial

import numba as nb
import numpy as np

from ... import clock
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


def exact_start(data, k, score, ess, deadline, knowledge=None):
    """The order-graph optimum over in-degree <= k (among the networks ``knowledge``
    allows), when the problem is small enough."""
    n = data.n_vars
    families = n * sum(math.comb(n - 1, j) for j in range(min(k, n - 1) + 1))
    if n > DP_MAX_VARS or families > _DP_MAX_FAMILIES or clock.expired(deadline):
        return None
    pss = ParentSetScores(data, score=score, ess=ess, max_parents=k, knowledge=knowledge)
    res = order_graph.dp(pss)
    index = {name: i for i, name in enumerate(data.names)}
    parents = {index[v]: tuple(sorted(index[p] for p in ps)) for v, ps in res.parents.items()}
    return parents, res.score


def prune_to_width(parents, k, scorer, fixed=None):
    """Drop the arcs that cost least, one at a time, until the moral graph has width <= k
    (exact tree-width, the problem being small), and an order of that width; never
    an arc ``fixed[v, u]`` marks as required (those alone fit k: the knowledge was
    checked)."""
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
                for v, ps in parents.items() for u in ps if fixed is None or not fixed[v, u]]
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


def ktree_start(scorer, k: int, rng, seconds: float, method: str = "k-greedy",
                executor=None):
    """The best of repeated :func:`k_greedy` or :func:`k_max` runs (``method``;
    a new random order or first clique each) within ``seconds``, from every
    variable's :meth:`~twlib.scores.FamilyScorer.candidate_sets` (on ``executor``).

    Returns the parents by column, the certificate order, the score and the
    number of runs."""
    candidates = scorer.candidate_lists(k, executor=executor)
    if method == "k-max":
        grow = partial(k_max, candidates, k, rng, table=candidate_table(candidates, k))
    else:
        grow = partial(k_greedy, candidates, k, rng)
    deadline = clock.now() + seconds
    best, runs = None, 0
    while best is None or not clock.expired(deadline):
        got = grow()
        runs += 1
        if best is None or got[2] > best[2]:
            best = got
    parents, order, score = best
    return dict(enumerate(parents)), order, score, runs


def candidate_table(candidates, k: int):
    """Candidate lists as the arrays of :func:`k_max`'s kernel: ``offsets``
    (variable ``v``'s sets are rows ``offsets[v]:offsets[v + 1]``), ``parents``
    (``-1`` padded, sets of more than ``k`` parents left out), ``scores`` and
    ``closeness``, each set's score scaled to ``[0, 1]`` between the best (0)
    and the worst (1) of its variable's sets."""
    kept = [[(s, ps) for s, ps in cands if len(ps) <= k] for cands in candidates]
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(c) for c in kept])
    parents = np.full((offsets[-1], k), -1, dtype=np.int64)
    scores = np.empty(offsets[-1])
    closeness = np.zeros(offsets[-1])
    for v, cands in enumerate(kept):
        if not any(len(ps) == 0 for _, ps in cands):
            raise InputError(f"variable {v}'s candidate parent sets lack the empty set")
        at = offsets[v]
        for i, (s, ps) in enumerate(cands):
            parents[at + i, :len(ps)] = ps
            scores[at + i] = s
        best, worst = scores[at:offsets[v + 1]].max(), scores[at:offsets[v + 1]].min()
        if worst < best:
            closeness[at:offsets[v + 1]] = (best - scores[at:offsets[v + 1]]) / (best - worst)
    return offsets, parents, scores, closeness


@nb.njit(cache=True)
def _inside(parents, row, mark):
    """Whether every parent of candidate ``row`` is marked."""
    for p in parents[row]:
        if p < 0:
            return True
        if not mark[p]:
            return False
    return True


@nb.njit(cache=True)
def _holds(parents, row, v):
    for p in parents[row]:
        if p == v:
            return True
    return False


@nb.njit(cache=True)
def _best_dag_on(clique, offsets, parents, scores):
    """The best DAG on the variables of ``clique`` from their candidate sets (a DP
    over subsets).  Returns each member's candidate row and an insertion order."""
    m = clique.shape[0]
    n = offsets.shape[0] - 1
    mark = np.zeros(n, dtype=np.bool_)
    pick = np.full((m, 1 << m), -1, dtype=np.int64)      # best row of member i inside subset
    for i in range(m):
        for subset in range(1 << m):
            if subset >> i & 1:
                continue
            for j in range(m):
                mark[clique[j]] = subset >> j & 1 == 1
            for row in range(offsets[clique[i]], offsets[clique[i] + 1]):
                if _inside(parents, row, mark):
                    pick[i, subset] = row          # rows are sorted best first
                    break
    best = np.full(1 << m, -np.inf)
    sink = np.full(1 << m, -1, dtype=np.int64)
    best[0] = 0.0
    for subset in range(1, 1 << m):
        for i in range(m):
            if subset >> i & 1:
                rest = subset & ~(1 << i)
                row = pick[i, rest]
                if row >= 0 and best[rest] + scores[row] > best[subset]:
                    best[subset] = best[rest] + scores[row]
                    sink[subset] = i
    rows = np.empty(m, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    subset = (1 << m) - 1
    for at in range(m - 1, -1, -1):
        i = sink[subset]
        subset &= ~(1 << i)
        rows[i] = pick[i, subset]
        order[at] = clique[i]
    return rows, order


@nb.njit(cache=True)
def _offer(clique, new, parents, offsets, placed, best, joins):
    """Tell every waiting variable about the (k+1)-clique ``clique``: its first
    candidate (before its best so far) inside the clique, and holding vertex
    ``new`` unless ``new < 0``, becomes its best, joined to the clique less the
    clique's first member outside the set."""
    n = offsets.shape[0] - 1
    mark = np.zeros(n, dtype=np.bool_)
    for x in clique:
        mark[x] = True
    for u in range(n):
        if placed[u]:
            continue
        for row in range(offsets[u], best[u] if best[u] >= 0 else offsets[u + 1]):
            if (new < 0 or _holds(parents, row, new)) and _inside(parents, row, mark):
                best[u] = row              # at most k parents: misses a member
                at = 0
                skip = True
                for x in clique:
                    if skip and not _holds(parents, row, x):
                        skip = False
                        continue
                    joins[u, at] = x
                    at += 1
                break


@nb.njit(cache=True)
def _k_max(clique, offsets, parents, scores, closeness):
    n = offsets.shape[0] - 1
    k = clique.shape[0] - 1
    chosen = np.full(n, -1, dtype=np.int64)
    rows, head = _best_dag_on(clique, offsets, parents, scores)
    insertion = np.empty(n, dtype=np.int64)
    placed = np.zeros(n, dtype=np.bool_)
    for i in range(k + 1):
        chosen[clique[i]] = rows[i]
        insertion[i] = head[i]
        placed[clique[i]] = True
    # Each waiting variable's best fitting set so far and the k-clique it joins.
    best = np.full(n, -1, dtype=np.int64)
    joins = np.empty((n, k), dtype=np.int64)
    _offer(clique, -1, parents, offsets, placed, best, joins)
    members = np.empty(k + 1, dtype=np.int64)
    for step in range(k + 1, n):
        v = -1
        for u in range(n):                         # the closest to its own best set
            if not placed[u] and (v < 0 or closeness[best[u]] < closeness[best[v]]):
                v = u
        chosen[v] = best[v]
        placed[v] = True
        insertion[step] = v
        members[:k] = joins[v]
        members[k] = v
        # Only sets holding v can fit the new k-cliques (the others fitted before).
        _offer(members, v, parents, offsets, placed, best, joins)
    return chosen, insertion


def k_max_clique(candidates, k: int, rng) -> np.ndarray:
    """The (k+1)-clique a :func:`k_max` run starts from, as BLIP draws it: a random
    variable, then random variables from the candidate parents of those drawn
    (a random variable when there are none)."""
    n = len(candidates)
    drawn = [int(rng.integers(n))]
    pool = sorted({p for _, ps in candidates[drawn[0]] for p in ps})
    while len(drawn) < k + 1:
        if pool:
            new = pool.pop(int(rng.integers(len(pool))))
        else:
            new = int(rng.choice([u for u in range(n) if u not in drawn]))
        drawn.append(new)
        pool = sorted(set(pool) | {p for _, ps in candidates[new] for p in ps} - set(drawn))
    return np.array(drawn, dtype=np.int64)


def k_max(candidates, k: int, rng, table=None):
    """Scanagatta et al.'s k-MAX (2018): a DAG grown inside a k-tree, the next
    variable chosen by how good a set it can take rather than at random.

    A (k+1)-clique is drawn (:func:`k_max_clique`) and given the best DAG on its
    variables.  Then, while variables wait, each one's best candidate set that
    lies inside a k-clique of the tree is known; the variable whose set comes
    closest to its own best candidate, relative to the range of its candidates'
    scores (BLIP's rule), is added with that set and joined to that k-clique.
    Every family is then a clique of the k-tree, so the reverse insertion order
    certifies tree-width at most ``k``.  Sets of more than ``k`` parents are not
    used.

    ``candidates[v]`` lists ``(score, parents)`` best first, the empty set among
    them; ``table`` is their :func:`candidate_table` when already built.
    Returns the parent tuples, the certificate order and the score.

    >>> cands = [[(-1.0, (1,)), (-2.0, ())], [(-1.0, ())], [(-1.0, (0, 1)), (-3.0, ())]]
    >>> parents, order, score = k_max(cands, 1, np.random.default_rng(0))
    >>> parents, score     # 2 cannot have both parents at k = 1
    ([(1,), (), ()], -5.0)
    """
    offsets, pa, scores, closeness = table if table is not None else candidate_table(candidates, k)
    chosen, insertion = _k_max(k_max_clique(candidates, k, rng), offsets, pa, scores, closeness)
    parents = [tuple(sorted(int(p) for p in pa[row] if p >= 0)) for row in chosen]
    return parents, insertion[::-1].copy(), float(scores[chosen].sum())
