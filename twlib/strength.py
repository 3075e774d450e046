"""Dependency strength of arcs and networks (Rosland 2019, chapter 3).

The strength of an arc ``X -> Y`` is how much worse ``Y`` is predicted once
``X`` is dropped from its parents: the drop in ``Y``'s expected local
log-likelihood under the network's own distribution (Rosland's eq. 3.2/3.3),

    Strength(X, Y) = H(Y | Pa(Y) - X) - H(Y | Pa(Y)) = I(X; Y | Pa(Y) - X),

in nats.  It needs the joint distribution of ``Y``'s parents, which the CPTs do
not hold: ``method="exact"`` gets it by junction-tree inference;
``method="average"`` approximates it by averaging local CPDs as Nicholson and
Jitnah do -- every variable's marginal is propagated through the CPTs in
topological order as if parents were independent, and a parent set's joint is
the product of its marginals.  The network strength is the sum of the arc
strengths divided by the number of variables.
"""
from __future__ import annotations

import numpy as np
from scipy.special import xlogy

from .errors import InputError
from .inference import JunctionTree
from .network import BayesianNetwork

__all__ = ["arc_strengths", "network_strength", "average_marginals", "conditional_information",
           "STRENGTH_METHODS"]

STRENGTH_METHODS = ("exact", "average")


def _entropy(p) -> float:
    return float(-xlogy(p, p).sum())


def conditional_information(joint: np.ndarray, x_axis: int, y_axis: int) -> float:
    """``I(X; Y | rest)`` in nats from a joint table, ``rest`` being all other axes.

    >>> round(conditional_information(np.array([[0.5, 0.0], [0.0, 0.5]]), 0, 1), 4)
    0.6931
    """
    joint = np.asarray(joint, dtype=float)
    joint = joint / joint.sum()
    h_xyz = _entropy(joint)
    h_xz = _entropy(joint.sum(axis=y_axis))
    h_yz = _entropy(joint.sum(axis=x_axis))
    h_z = _entropy(joint.sum(axis=(x_axis, y_axis))) if joint.ndim > 2 else 0.0
    return max(0.0, h_xz + h_yz - h_xyz - h_z)


def average_marginals(net: BayesianNetwork) -> dict:
    """Every variable's marginal, propagated through the CPTs in topological order as
    if each variable's parents were independent (exact on polytrees)."""
    marginal = {}
    for v in net.topological_order():
        table = net.cpt(v)
        for p in reversed(net.parents(v)):          # contract the last parent axis first
            table = table @ marginal[p]
        marginal[v] = table / table.sum()
    return marginal


def _check_method(method):
    if method not in STRENGTH_METHODS:
        raise InputError(f"method must be one of {STRENGTH_METHODS}, got {method!r}")


def arc_strengths(net: BayesianNetwork, *, method: str = "exact", jt: JunctionTree | None = None,
                  max_memory_gb: float = 4.0) -> dict:
    """``{(X, Y): Strength(X, Y)}`` for every arc of ``net``, in nats.

    ``jt`` may pass a junction tree of ``net`` already built (exact method).

    >>> from twlib.datasets import load_network
    >>> s = arc_strengths(load_network("asia"))
    >>> round(s[("bronc", "dysp")], 4), round(s[("either", "dysp")], 4)
    (0.2585, 0.0283)
    """
    _check_method(method)
    if method == "exact" and jt is None:
        jt = JunctionTree(net, max_memory_gb=max_memory_gb)
    marginal = average_marginals(net) if method == "average" else None
    out = {}
    for y in net.variables:
        parents = net.parents(y)
        if not parents:
            continue
        if method == "exact":
            p_parents = jt.joint(parents)
        else:
            p_parents = marginal[parents[0]]
            for p in parents[1:]:
                p_parents = np.multiply.outer(p_parents, marginal[p])
        family = net.cpt(y) * p_parents[None, ...]          # axes: Y, parents...
        for k, x in enumerate(parents):
            out[(x, y)] = conditional_information(family, 1 + k, 0)
    return out


def network_strength(net: BayesianNetwork, *, method: str = "exact", **kw) -> float:
    """Sum of the arc strengths divided by the number of variables (Rosland, 3.2.1).

    >>> from twlib.datasets import load_network
    >>> round(network_strength(load_network("asia")), 4)
    0.097
    """
    return float(sum(arc_strengths(net, method=method, **kw).values()) / len(net.variables))
