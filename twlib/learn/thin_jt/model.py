"""The model LPACJT returns: a junction tree with the data projected on it."""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from ...counting import count
from ...data import Dataset
from ...errors import InputError, UnknownName
from ...factors import Factor, FactorModel
from ...graphs import has_running_intersection
from ...network import BayesianNetwork

__all__ = ["ThinJunctionTree"]

@dataclass
class ThinJunctionTree:
    """A junction tree over a data set's variables with the empirical distribution
    projected on it: ``P(x) = prod_C P(x_C) / prod_S P(x_S)`` (clique and
    separator marginals of the training data with a total pseudo-count ``ess``
    spread uniformly over each table's cells, which keeps all marginals mutually
    consistent).

    Attributes: ``cliques`` and ``separators`` (tuples of variable names), ``edges``
    (index pairs), ``width``, the fitted ``tables`` and search ``stats``.

    >>> from twlib.datasets import load_sklearn
    >>> iris = load_sklearn("iris")
    >>> jt = ThinJunctionTree.fit(iris, [(0, 1, 2), (1, 2, 3), (2, 3, 4)], [(0, 1), (1, 2)])
    >>> jt.width, jt.separators
    (2, [('sepal_length_(cm)', 'sepal_width_(cm)'), ('sepal_width_(cm)', 'petal_length_(cm)')])
    >>> net = jt.to_network()
    >>> round(net.log_likelihood(iris) - jt.log_likelihood(iris), 9)
    0.0
    """

    names: list
    states: dict
    cliques: list
    edges: list
    tables: list = field(repr=False)
    separator_tables: list = field(repr=False)
    stats: dict = field(default_factory=dict, repr=False)

    @classmethod
    def fit(cls, data: Dataset, cliques, edges, *, ess: float = 1.0, stats=None):
        """Project ``data`` on the junction tree ``(cliques, edges)`` (variable indices)."""
        if not ess > 0:
            raise InputError(f"the pseudo-count ess must be positive, got {ess}")
        if not has_running_intersection(cliques, edges):
            raise InputError("the cliques and edges do not form a junction tree")

        def marginal(vs):
            vs = sorted(vs)
            shape = [int(data.arities[v]) for v in vs]
            c = (count(data.values, vs, shape).to_dense() if vs
                 else np.array(float(data.n_rows)))
            return (c + ess / max(1, int(np.prod(shape)))) / (data.n_rows + ess)

        tables = [marginal(c) for c in cliques]
        seps = [tuple(sorted(set(cliques[i]) & set(cliques[j]))) for i, j in edges]
        names = list(data.names)
        return cls(names, {v: list(data.states[i]) for i, v in enumerate(names)},
                   [tuple(names[v] for v in sorted(c)) for c in cliques], list(edges), tables,
                   [marginal(s) for s in seps], dict(stats or {}))

    @property
    def separators(self) -> list:
        return [tuple(v for v in self.cliques[i] if v in self.cliques[j]) for i, j in self.edges]

    @property
    def width(self) -> int:
        return max(len(c) for c in self.cliques) - 1

    def log_likelihood(self, data: Dataset, per_row: bool = False):
        """Natural-log likelihood of the rows of ``data`` (matched by variable name);
        ``per_row=True`` gives each row's value, as ``BayesianNetwork.log_likelihood``."""
        index = {v: i for i, v in enumerate(data.names)}
        missing = set(self.names) - set(index)
        if missing:
            raise UnknownName(f"the data lack variables {sorted(missing)[:5]}")
        cols = data.columns
        out = np.zeros(data.n_rows)
        for scope, table, sign in ([(c, t, 1.0) for c, t in zip(self.cliques, self.tables)]
                                   + [(s, t, -1.0) for s, t in zip(self.separators,
                                                                   self.separator_tables)]):
            idx = tuple(cols[index[v]].astype(np.int64) for v in scope)
            out += sign * np.log(table[idx])
        return out if per_row else float(out.sum())

    def to_factor_model(self) -> FactorModel:
        """The tree as a Markov network (clique marginals over separator marginals)."""
        factors = [Factor(c, t) for c, t in zip(self.cliques, self.tables)]
        factors += [Factor(s, 1.0 / t) for s, t in zip(self.separators, self.separator_tables)
                    if s]
        return FactorModel(self.names, self.states, factors, name="thin-junction-tree")

    def introduction_order(self) -> list:
        """``(variable, parents, clique)`` triples, each variable after its parents: the
        first clique's variables in turn, then, walking the tree breadth first,
        each clique's new variables given its separator (and the clique's
        earlier new ones).  Reversed, the variables are a perfect elimination
        order of the tree's chordal graph."""
        tree = nx.Graph(list(self.edges))
        tree.add_nodes_from(range(len(self.cliques)))
        placed, out = set(), []
        for component in nx.connected_components(tree):
            root = min(component)
            walk = [root] + [child for _, child in nx.bfs_edges(tree, root)]
            for c in walk:
                for v in self.cliques[c]:
                    if v not in placed:
                        out.append((v, [u for u in self.cliques[c] if u in placed], c))
                        placed.add(v)
        return out

    def to_network(self) -> BayesianNetwork:
        """The same distribution as a Bayesian network of the same tree-width.

        Each variable takes as parents the variables of the clique that
        introduces it which come earlier (:meth:`introduction_order`), and as
        CPT that clique's marginal conditioned on them; the marginals are
        consistent, so the product of these CPTs is the tree's distribution.
        """
        parents, cpts = {}, {}
        for v, pa, c in self.introduction_order():
            scope = self.cliques[c]
            keep = [v] + pa
            joint = self.tables[c].sum(axis=tuple(i for i, u in enumerate(scope)
                                                  if u not in keep))
            kept = [u for u in scope if u in keep]
            joint = np.transpose(joint, [kept.index(u) for u in keep])
            parents[v], cpts[v] = pa, joint / joint.sum(axis=0, keepdims=True)
        return BayesianNetwork(self.names, self.states, parents, cpts,
                               name="thin-junction-tree")


