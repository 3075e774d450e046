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

