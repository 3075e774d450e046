"""Interventions: ``do(X = x)`` by graph surgery on a Bayesian network.

Observing ``X = x`` and setting it are different questions: an observation
tells us about ``X``'s causes, an intervention does not.  Pearl's truncated
factorisation answers ``P(Y | do(X = x), e)`` on the *mutilated* network, where
each intervened variable loses its parents and takes its value with probability
one; every other CPT stays as it was.  The mutilated network is an ordinary
Bayesian network, so every exact method (the junction tree, the search past it)
answers interventional queries unchanged.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError, WrongType
from ..network import BayesianNetwork
from .evidence import evidence_indices
from .junction_tree import JunctionTree
from .results import Marginals

__all__ = ["intervene", "do_posteriors", "check_do_apart"]


def intervene(net, do) -> BayesianNetwork:
    """The network after ``do`` (``{variable: state}``): each intervened variable
    loses its parents and is fixed at its state (graph surgery).

    >>> from twlib.datasets import load_network
    >>> cut = intervene(load_network("asia"), {"lung": "yes"})
    >>> cut.parents("lung"), cut.cpt("lung").tolist()
    ([], [1.0, 0.0])
    """
    if not isinstance(net, BayesianNetwork):
        raise WrongType(f"do() needs a Bayesian network (its arcs say what causes what), "
                        f"got {type(net).__name__}")
    fixed = evidence_indices(net, do)
    parents = {v: [] if v in fixed else net.parents(v) for v in net.variables}
    cpts = {}
    for v in net.variables:
        if v in fixed:
            cpts[v] = np.eye(net.arity(v))[fixed[v]]
        else:
            cpts[v] = net.cpt(v)
    states = {v: net.states(v) for v in net.variables}
    label = ", ".join(f"{v}={net.states(v)[k]}" for v, k in fixed.items())
    return BayesianNetwork(net.variables, states, parents, cpts, name=f"{net.name} | do({label})")


def check_do_apart(do, evidence) -> None:
    """InputError when a variable is both intervened on and observed.

    >>> check_do_apart({"lung": "yes"}, {"smoke": "no"})
    """
    both = sorted(set(do or {}) & set(evidence or {}))
    if both:
        raise InputError(f"{both} are both intervened on (do) and observed (evidence); "
                         "a variable can be one or the other")


def do_posteriors(net, do, evidence=None, variables=None, *, soft_evidence=None,
                  max_memory_gb: float = 4.0) -> Marginals:
    """``P(variable | do, evidence)`` for every variable (or those in
    ``variables``), exact, on the mutilated network, as :class:`Marginals`
    (read as ``{variable: posterior}``).

    A variable may not be both intervened on and observed: conditioning on the
    value you set is meaningless, so that raises InputError.

    >>> from twlib.datasets import load_network
    >>> net = load_network("asia")
    >>> seen = JunctionTree(net).posteriors({"either": "yes"}, ["smoke"])["smoke"]
    >>> done = do_posteriors(net, {"either": "yes"}, variables=["smoke"])["smoke"]
    >>> seen.round(3).tolist(), done.round(3).tolist()
    ([0.843, 0.157], [0.5, 0.5])
    """
    check_do_apart(do, evidence)
    cut = intervene(net, do)
    return JunctionTree(cut, max_memory_gb=max_memory_gb).posteriors(
        evidence, variables, soft_evidence=soft_evidence)
