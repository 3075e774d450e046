"""Inference queries for comparing two networks (Rosland 2019, section 4.2).

A query asks for ``P(variable | evidence)``.  Five kinds, each drawn with its own
seed:

* ``"random"``: a random query variable and 1-5 evidence variables drawn
  uniformly (Rosland's Algorithm 2);
* ``"marginal"``: a random variable, no evidence;
* ``"parent_child"``: a random non-root variable with one of its parents observed;
* ``"max_distance"`` / ``"min_distance"``: 1-5 evidence variables drawn with
  probability proportional to ``d^2`` / ``(d_max + 1 - d)^2``, where ``d`` is the
  length of the shortest path from the query variable in the skeleton
  (Algorithm 3 and its mirror); unreachable variables count as ``d_max + 1``.

Evidence states are drawn uniformly.  With ``reject_impossible`` (the default), a
query whose evidence has probability zero under the network is drawn again.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from .errors import InputError
from .inference import JunctionTree
from .network import BayesianNetwork

__all__ = ["Query", "QUERY_KINDS", "generate_queries", "query_set", "answer_queries"]

QUERY_KINDS = ("random", "marginal", "parent_child", "max_distance", "min_distance")


@dataclass(frozen=True)
class Query:
    """``P(variable | evidence)``; evidence maps variables to state labels."""

    kind: str
    variable: str
    evidence: tuple          # ((variable, state), ...) sorted, hashable

    @property
    def evidence_dict(self) -> dict:
        return dict(self.evidence)


def _evidence_weights(net, q, kind, skeleton):
    others = [v for v in net.variables if v != q]
    if kind == "random":
        return others, np.ones(len(others))
    dist = nx.single_source_shortest_path_length(skeleton, q)
    d_max = max(dist.values())
    d = np.array([dist.get(v, d_max + 1) for v in others], dtype=float)
    weights = d ** 2 if kind == "max_distance" else (d_max + 1 - d).clip(min=0) ** 2
    if weights.sum() == 0:
        weights = np.ones(len(others))
    return others, weights


def _draw(net, kind, rng, skeleton, max_evidence):
    variables = net.variables
    if kind == "parent_child":
        children = [v for v in variables if net.parents(v)]
        if not children:
            raise InputError("parent-child queries need a network with at least one arc")
        q = children[rng.integers(len(children))]
        observed = [net.parents(q)[rng.integers(len(net.parents(q)))]]
    else:
        q = variables[rng.integers(len(variables))]
        observed = []
        if kind != "marginal":
            others, weights = _evidence_weights(net, q, kind, skeleton)
            size = min(int(rng.integers(1, max_evidence + 1)), int((weights > 0).sum()))
            pick = rng.choice(len(others), size=size, replace=False, p=weights / weights.sum())
            observed = [others[i] for i in pick]
    evidence = tuple(sorted((v, net.states(v)[rng.integers(net.arity(v))]) for v in observed))
    return Query(kind, q, evidence)


def generate_queries(net: BayesianNetwork, kind: str, count: int, *, random_state=None,
                     max_evidence: int = 5, reject_impossible: bool = True,
                     jt: JunctionTree | None = None) -> list:
    """``count`` queries of one kind on ``net``.

    >>> from twlib.datasets import load_network
    >>> qs = generate_queries(load_network("asia"), "parent_child", 3, random_state=0)
    >>> [len(q.evidence) for q in qs]
    [1, 1, 1]
    """
    if kind not in QUERY_KINDS:
        raise InputError(f"kind must be one of {QUERY_KINDS}, got {kind!r}")
    if count < 0 or max_evidence < 1:
        raise InputError("count must be >= 0 and max_evidence >= 1")
    rng = np.random.default_rng(random_state)
    skeleton = net.to_networkx().to_undirected()
    if reject_impossible and jt is None:
        jt = JunctionTree(net)
    out, drawn = [], 0
    while len(out) < count:
        batch = [_draw(net, kind, rng, skeleton, max_evidence) for _ in range(count - len(out))]
        drawn += len(batch)
        if drawn > 100 * max(count, 1):
            raise InputError(f"could not draw {count} {kind} queries with possible evidence")
        if reject_impossible:
            possible = np.isfinite(jt.log_probabilities_of_evidence([q.evidence_dict for q in batch]))
            batch = [q for q, ok in zip(batch, possible) if ok]
        out.extend(batch)
    return out


def query_set(net: BayesianNetwork, *, per_kind: int = 500, random_state=None,
              jt: JunctionTree | None = None, **kw) -> list:
    """``per_kind`` queries of every kind, each kind from its own spawned seed
    (``jt``: a junction tree of ``net`` already built, for the evidence check)."""
    seeds = np.random.SeedSequence(random_state).spawn(len(QUERY_KINDS))
    jt = JunctionTree(net) if jt is None else jt
    return [q for kind, seed in zip(QUERY_KINDS, seeds)
            for q in generate_queries(net, kind, per_kind,
                                      random_state=np.random.default_rng(seed), jt=jt, **kw)]


def answer_queries(model, queries) -> list:
    """``P(variable | evidence)`` for every query, as a list of arrays.

    ``model`` is a BayesianNetwork or a JunctionTree; queries sharing evidence
    are answered by one batched propagation.
    """
    jt = model if isinstance(model, JunctionTree) else JunctionTree(model)
    sets = list(dict.fromkeys(q.evidence for q in queries))
    index = {e: i for i, e in enumerate(sets)}
    posts, _ = jt.posteriors_batch([dict(e) for e in sets])
    return [posts[q.variable][index[q.evidence]] for q in queries]
