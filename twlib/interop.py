"""pgmpy and pyAgrum models to and from :class:`~twlib.network.BayesianNetwork`, in memory.

State names and CPT axes are preserved: a twlib CPT has the child's axis first,
then one axis per parent in ``net.parents(v)`` order.  The peers are optional
(the ``peers`` extra); a missing one raises a :class:`~twlib.errors.WrongType`
naming the package to install.

>>> from twlib.datasets import load_network
>>> net = load_network("asia")
>>> back = from_pgmpy(to_pgmpy(net))
>>> back.allclose(net)
True
"""
from __future__ import annotations

import importlib

import numpy as np

from .errors import InputError, WrongType
from .network import BayesianNetwork

__all__ = ["to_pgmpy", "from_pgmpy", "to_pyagrum", "from_pyagrum", "pyagrum_tree_entries"]


def _peer(module: str, package: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise WrongType(f"{module} is not installed: pip install {package} "
                        "(or twlib's 'peers' extra)") from None


def to_pgmpy(net: BayesianNetwork):
    """A ``pgmpy.models.DiscreteBayesianNetwork`` with the same structure, states and CPTs."""
    models = _peer("pgmpy.models", "pgmpy")
    factors = _peer("pgmpy.factors.discrete", "pgmpy")
    model = models.DiscreteBayesianNetwork()
    model.add_nodes_from(net.variables)
    model.add_edges_from(net.arcs)
    for v in net.variables:
        parents = net.parents(v)
        table = net.cpt(v).reshape(net.arity(v), -1)
        model.add_cpds(factors.TabularCPD(
            v, net.arity(v), table, evidence=parents or None,
            evidence_card=[net.arity(p) for p in parents] or None,
            state_names={u: list(net.states(u)) for u in [v] + parents}))
    model.check_model()
    return model


def from_pgmpy(model, *, name: str = "pgmpy") -> BayesianNetwork:
    """A twlib network from a pgmpy discrete Bayesian network with all its CPDs."""
    variables = list(model.nodes())
    states, parents, cpts = {}, {}, {}
    for v in variables:
        cpd = model.get_cpds(v)
        if cpd is None:
            raise InputError(f"the pgmpy model has no CPD for {v!r}")
        names = list(cpd.variables)                  # child first, then evidence
        states[v] = [str(s) for s in cpd.state_names[v]]
        parents[v] = names[1:]
        cpts[v] = np.asarray(cpd.values, dtype=float)
    return BayesianNetwork(variables, states, parents, cpts, name=name)


def to_pyagrum(net: BayesianNetwork):
    """A ``pyagrum.BayesNet`` with the same structure, labels and CPTs."""
    gum = _peer("pyagrum", "pyagrum")
    bn = gum.BayesNet(net.name)
    for v in net.variables:
        bn.add(gum.LabelizedVariable(v, v, list(net.states(v))))
    for u, v in net.arcs:
        bn.addArc(u, v)
    for v in net.variables:
        bn.cpt(v)[:] = _to_pyagrum_axes(bn.cpt(v), [v, *net.parents(v)], np.asarray(net.cpt(v)))
    return bn


def _to_pyagrum_axes(potential, axes, table):
    """``table`` (axes named by ``axes``) laid out as pyAgrum's array of ``potential``:
    one axis per variable of its sequence, the first variable's last."""
    sequence = [var.name() for var in potential.variablesSequence()]
    return np.ascontiguousarray(np.transpose(table, [axes.index(name)
                                                     for name in reversed(sequence)]))


def from_pyagrum(bn, *, name: str | None = None) -> BayesianNetwork:
    """A twlib network from a ``pyagrum.BayesNet``."""
    variables = [bn.variable(i).name() for i in sorted(bn.nodes())]     # in insertion order
    states, parents, cpts = {}, {}, {}
    for v in variables:
        var = bn.variableFromName(v)
        states[v] = [var.label(i) for i in range(var.domainSize())]
        sequence = [u.name() for u in bn.cpt(v).variablesSequence()]
        parents[v] = sequence[1:]
        # pyAgrum's array has the sequence's axes in reverse
        cpts[v] = np.transpose(np.asarray(bn.cpt(v)[:], dtype=float),
                               list(range(len(sequence)))[::-1])
    return BayesianNetwork(variables, states, parents, cpts, name=name or "pyagrum")


def pyagrum_tree_entries(engine) -> int:
    """Total table size of the junction tree a pyAgrum inference engine (such as
    ``LazyPropagation``) builds: pyAgrum's triangulation beside
    ``JunctionTree.entries``.  Triangulates without running inference.

    >>> import pyagrum as gum
    >>> from twlib.datasets import load_network
    >>> pyagrum_tree_entries(gum.LazyPropagation(to_pyagrum(load_network("asia"))))
    40
    """
    tree, bn = engine.junctionTree(), engine.BN()
    return int(sum(np.prod([bn.variable(v).domainSize() for v in tree.clique(c)], dtype=float)
                   for c in tree.nodes()))
