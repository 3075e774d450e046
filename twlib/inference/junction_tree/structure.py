"""The junction tree's structure: cliques, separators, the rooted tree, the calibrated prior.

Built once per model: the cliques of an elimination order, rooted at the
tree's centre, each clique listing the variables it shares with its parent
first; then one full Hugin propagation without evidence leaves every clique's
prior marginal ``P(C)`` and every separator's ``P(S)``, normalised, with the
log partition function kept apart.  The flat layouts the compiled passes read
(:mod:`twlib.inference.kernels`) are built from them on first use.
"""
from __future__ import annotations

import copy
import math

import networkx as nx
import numpy as np

from ...errors import InputError, MemoryBudgetExceeded, UnknownName
from ...factors import FactorModel, ZeroEvidenceError
from ...graphs import clique_tree, elimination_order
from ...network import BayesianNetwork
from ..costs import tables_gib
from ..evidence import evidence_indices
from ..kernels import flat_factors
from ..table_walk import summed_tables

__all__ = ["TreeStructure", "per_set_normalised", "separator_ratio"]


class TreeStructure:
    """The structure part of :class:`~twlib.inference.junction_tree.JunctionTree`."""

    def __init__(self, model, *, order=None, max_memory_gb: float = 4.0,
                 order_method: str = "auto"):
        normalised = isinstance(model, BayesianNetwork)       # its partition function is 1
        model = FactorModel.from_network(model) if normalised else model
        self.net = model
        self.arity = {v: model.arity(v) for v in model.variables}
        self._variable_index = {v: k for k, v in enumerate(model.variables)}
        graph = model.interaction_graph()
        self.order = (list(order) if order is not None
                      else elimination_order(graph, method=order_method, weights=self.arity))
        cliques, edges = clique_tree(graph, self.order)
        self.cliques = cliques
        self.width = max(len(c) for c in cliques) - 1
        sizes = [math.prod(self.arity[v] for v in c) for c in cliques]
        self.entries = int(sum(sizes))
        need = tables_gib(self.entries, max(sizes))
        if need > max_memory_gb:
            raise MemoryBudgetExceeded(
                f"exact inference on {model.name!r} needs about {need:.3g} GiB (elimination width "
                f"{self.width}, {self.entries:.3g} table entries, largest {max(sizes):.3g}), over "
                f"the budget of {max_memory_gb} GiB")
        self._shape_tree(edges, sizes)
        self._calibrate_prior(model)
        if normalised:
            self.log_z = 0.0

    def with_factors(self, model):
        """A tree of the same cliques calibrated on ``model``'s factors instead:
        ``model`` has this tree's variables and states, and each of its factors
        lies within a clique (as a model conditioned on evidence or a cutset
        does).  Skips the order and the clique tree; this tree is unchanged.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> twice = FactorModel(jt.net.variables, {v: jt.net.states(v) for v in jt.net.variables},
        ...                     jt.net.factors + jt.net.factors)
        >>> round(jt.with_factors(twice).log_z, 4)
        -1.7973
        """
        model = FactorModel.from_network(model) if isinstance(model, BayesianNetwork) else model
        if list(model.variables) != list(self.net.variables) or any(
                model.arity(v) != self.arity[v] for v in model.variables):
            raise InputError("with_factors needs a model of the tree's variables and states")
        tree = copy.copy(self)
        tree.net = model
        tree._calibrate_prior(model)
        return tree

    def _shape_tree(self, edges, sizes):
        """Root the tree at its largest table, the one nearest the tree's
        centre among equals; precompute each edge's summing axes and broadcast
        shapes (separators are kept in the child's variable order).

        The root's collect and distribute are one pass over its table, while a
        clique between the evidence and the root is walked twice, so rooting
        at the largest table takes its second walk out of the posteriors of
        most evidence sets (on barley the expected entries walked a set fall
        from 1.55 to 1.30 times the tree's).  Max-product then walks the root
        on every set, where a leaf without evidence below it is not walked."""
        nbrs = {i: [] for i in range(len(self.cliques))}
        for i, j in edges:
            nbrs[i].append(j)
            nbrs[j].append(i)
        self.neighbours = nbrs
        tree = nx.Graph(list(edges))
        tree.add_nodes_from(nbrs)
        far = max(nx.single_source_shortest_path_length(tree, 0).items(), key=lambda x: x[1])[0]
        path = nx.single_source_shortest_path(tree, far)
        other = max(path, key=lambda v: len(path[v]))
        from_centre = nx.single_source_shortest_path_length(
            tree, path[other][(len(path[other]) - 1) // 2])
        self.root = max(nbrs, key=lambda i: (sizes[i], -from_centre[i], -i))
        self.parent = {self.root: None}
        self.preorder = [self.root]
        for i in self.preorder:
            for j in nbrs[i]:
                if j not in self.parent:
                    self.parent[j] = i
                    self.preorder.append(j)
        self.children = {i: [j for j in nbrs[i] if self.parent.get(j) == i] for i in nbrs}
        # a clique lists the variables it shares with its parent first, in the
        # parent's order: maximising out its own ones is then over the trailing
        # axes, without a copy, and the separator's strides fall along the
        # parent's axes, so a pass over the parent's table feeds the separator
        # in runs instead of a cache line per entry
        for i in self.preorder[1:]:
            here = set(self.cliques[i])
            shared = [v for v in self.cliques[self.parent[i]] if v in here]
            self.cliques[i] = type(self.cliques[i])(
                shared + [v for v in self.cliques[i] if v not in shared])
        self.separators = {(i, j): tuple(v for v in self.cliques[i] if v in self.cliques[j])
                           for i in nbrs for j in nbrs[i]}
        self._up, self._down = {}, {}
        for i in self.preorder[1:]:
            p, child, up = self.parent[i], self.cliques[i], self.cliques[self.parent[i]]
            sep = self.separators[i, p]
            self._up[i] = (tuple(1 + k for k, v in enumerate(child) if v not in sep),
                           tuple(1 + k for k, v in enumerate(up) if v not in sep),
                           [sorted(sep, key=up.index).index(v) + 1 for v in sep])
            self._down[i] = ([-1] + [self.arity[v] if v in sep else 1 for v in child],
                             [-1] + [self.arity[v] if v in sep else 1 for v in up],
                             [0] + [1 + sep.index(v) for v in up if v in sep])
        # each variable's posterior is read from (and its evidence enters) the
        # smallest clique holding it
        self._holding = {v: set() for v in self.net.variables}     # variable -> its cliques
        for i, c in enumerate(self.cliques):
            for v in c:
                self._holding[v].add(i)
        self.reader = {v: self._smallest_clique_holding({v}) for v in self.net.variables}
        self._readers = {i: [] for i in nbrs}
        for v, i in self.reader.items():
            self._readers[i].append(v)

    def _smallest_clique_holding(self, scope):
        """Index of the smallest clique that holds every variable of ``scope``
        (None if none does)."""
        found = (set.intersection(*(self._holding[v] for v in scope)) if scope
                 else range(len(self.cliques)))
        return min(found, key=lambda i: (len(self.cliques[i]), i)) if found else None

    def _child_to_sep(self, i, table):
        return table.sum(axis=self._up[i][0])

    def _parent_to_sep(self, i, table):
        summed = table.sum(axis=self._up[i][1])
        return np.transpose(summed, [0] + self._up[i][2])

    def _sep_on_child(self, i, sep):
        return sep.reshape(self._down[i][0])

    def _sep_on_parent(self, i, sep):
        return np.transpose(sep, self._down[i][2]).reshape(self._down[i][1])

    def _calibrate_prior(self, model):
        """Clique potentials from the factors, then one full Hugin propagation:
        ``tables[i] = P(C_i)`` and ``seps[i] = P(S_i)`` (the separator to i's
        parent), normalised; ``log_z`` is the log partition function (0 for a
        Bayesian network).  The layouts built on first use from the tables (the
        max-product pass, the compiled single-set passes, the flat factors) are
        dropped, and so is the MPE's search, which was prepared on the old factors."""
        self._layout = self._max_cache = self._flat = self._max_prior_flat = None
        self._search_route, self._tree_mpe_seconds, self._tree_mpe_queries = None, 0.0, 0
        self._factors_flat = None
        home = {i: [] for i in range(len(self.cliques))}
        for f in model.factors:
            i = self._smallest_clique_holding(set(f.variables))
            if i is None:           # only a model given to with_factors can do this
                raise InputError(f"a factor over {f.variables} lies in no clique of this tree")
            home[i].append(f)
        self._home = home
        # each clique's potential from its log-potential, scaled to peak 1 with
        # the scale kept in log space, so that long products do not underflow
        tables, scale = [], np.zeros(len(self.cliques))
        for i in range(len(self.cliques)):
            table = self._log_potential(i)
            top = table.max()
            if top > -np.inf:
                scale[i] = top
                table -= top
            tables.append(np.exp(table, out=table)[None])
        seps = {}
        for i in reversed(self.preorder[1:]):                 # collect
            p = self.parent[i]
            new = self._child_to_sep(i, tables[i])
            total = new.sum()
            if total <= 0:
                raise ZeroEvidenceError(f"the model {model.name!r} gives every state probability "
                                        "zero")
            seps[i] = new / total
            tables[p] *= self._sep_on_parent(i, seps[i])
            scale[p] += scale[i] + math.log(total)
        total = tables[self.root].sum()
        if total <= 0:
            raise ZeroEvidenceError(f"the model {model.name!r} gives every state probability zero")
        self.log_z = float(scale[self.root] + math.log(total))
        tables[self.root] = tables[self.root] / total
        for i in self.preorder[1:]:                           # distribute
            p = self.parent[i]
            new = self._parent_to_sep(i, tables[p])
            tables[i] *= self._sep_on_child(i, separator_ratio(new, seps[i]))
            tables[i] /= tables[i].sum()
            seps[i] = new / new.sum()
        self.tables = [t[0] for t in tables]
        self.seps = {i: s[0] for i, s in seps.items()}
        self.prior = {v: self._marginal(self.tables[i][None], i, v)[0]
                      for v, i in self.reader.items()}

    def _log_potential(self, i):
        """Clique ``i``'s log-potential: the sum of the logs of the model's
        factors that live there, in one compiled walk of the table
        (:func:`~twlib.inference.table_walk.summed_tables`); nothing
        underflows however unlikely a configuration is."""
        clique = self.cliques[i]
        with np.errstate(divide="ignore"):
            logs = [(f.variables, np.log(np.asarray(f.values, dtype=float)))
                    for f in self._home[i]]
        return summed_tables(clique, [self.arity[v] for v in clique], logs)

    def _project(self, i, base, ratio, scope):
        """``sum over clique i's other variables of base * ratio`` onto ``scope``,
        batch axis first; ``ratio`` is over the separator to i's parent (None:
        no factor) and ``base`` has one row or one per batch member."""
        clique = self.cliques[i]
        batch_label = len(clique)
        axes = list(range(len(clique)))
        ops = [base[0], axes] if base.shape[0] == 1 else [base, [batch_label] + axes]
        if ratio is not None:
            sep = self.separators[i, self.parent[i]]
            ops += [ratio, [batch_label] + [clique.index(v) for v in sep]]
        out = [clique.index(v) for v in scope]
        if base.shape[0] == 1 and ratio is None:
            return np.einsum(*ops, out)[None]
        return np.einsum(*ops, [batch_label] + out)

    def _marginal(self, table, i, v):
        others = tuple(k + 1 for k, u in enumerate(self.cliques[i]) if u != v)
        return per_set_normalised(np.add.reduce(table, axis=others))[0]

    def _factor_index(self):
        """The model's factors as flat arrays for :func:`log_values`: scopes
        (variable indices, -1 padded), strides, offsets and the log entries."""
        if self._factors_flat is None:
            scopes, strides, offsets, values = flat_factors(self.net)
            with np.errstate(divide="ignore"):
                self._factors_flat = scopes, strides, offsets, np.log(values)
        return self._factors_flat

    def _compiled_layout(self):
        """The tree as flat arrays for :func:`hugin_one_set` (built once), cliques in
        preorder: tables and separators end to end, each clique's variables with
        their strides in the separator to its parent and in each child's, what
        each clique's distribute pass feeds (its children's separators, the
        marginals of the variables read there), and for a variable read from
        the separator above its reader (``sread``, -1 for none) its stride there."""
        if self._flat is None:
            position = {i: t for t, i in enumerate(self.preorder)}
            index = self._variable_index
            tables = [self.tables[i].ravel() for i in self.preorder]
            seps = [np.ones(1) if self.parent[i] is None else self.seps[i].ravel()
                    for i in self.preorder]
            sep_off = np.cumsum([0] + [s.size for s in seps]).astype(np.int64)
            card = [self.arity[v] for v in self.net.variables]
            marg_off = np.cumsum([0] + card).astype(np.int64)
            cvar, ccard, up, down, down_ptr = [], [], [], [], [0]
            fan_rows, fan_out, fan_ptr, fan_row_ptr = [], [], [0], [0]
            for t, i in enumerate(self.preorder):
                clique, p = self.cliques[i], self.parent[i]
                cvar += [index[v] for v in clique]
                ccard += [self.arity[v] for v in clique]
                up += self._sep_strides(clique, None if p is None else self.separators[i, p])
                if p is not None:
                    down += self._sep_strides(self.cliques[p], self.separators[i, p])
                down_ptr.append(len(down))
                for c in self.children[i]:
                    fan_rows += self._sep_strides(clique, self.separators[c, i])
                    fan_out.append(sep_off[position[c]])
                for v in self._readers[i]:
                    if not self._from_separator(v):
                        fan_rows += [int(u == v) for u in clique]
                        fan_out.append(sep_off[-1] + marg_off[index[v]])
                fan_ptr.append(len(fan_out))
                fan_row_ptr.append(len(fan_rows))
            as_int = lambda a: np.array(a, dtype=np.int64)   # noqa: E731
            # the separator above its reader, of each variable read from one
            above = {v: self.separators[i, self.parent[i]] for v, i in self.reader.items()
                     if self._from_separator(v)}
            cvar_ptr = np.cumsum([0] + [len(self.cliques[i]) for i in self.preorder])
            self._flat = dict(
                tables=np.concatenate(tables),
                table_off=np.cumsum([0] + [t.size for t in tables]).astype(np.int64),
                cvar_ptr=cvar_ptr.astype(np.int64), cvar=as_int(cvar), ccard=as_int(ccard),
                up_stride=as_int(up), down_ptr=as_int(down_ptr), down_stride=as_int(down),
                seps=np.concatenate(seps), sep_off=sep_off,
                parents=as_int([-1 if self.parent[i] is None else position[self.parent[i]]
                                for i in self.preorder]),
                reader=as_int([position[self.reader[v]] for v in self.net.variables]),
                rslot=as_int([cvar_ptr[position[self.reader[v]]]
                              + self.cliques[self.reader[v]].index(v)
                              for v in self.net.variables]),
                child_ptr=as_int(np.cumsum([0] + [len(self.children[i])
                                                   for i in self.preorder])),
                children=as_int([position[c] for i in self.preorder for c in self.children[i]]),
                fan_ptr=as_int(fan_ptr), fan_row_ptr=as_int(fan_row_ptr),
                fan_rows=as_int(fan_rows), fan_out=as_int(fan_out), marg_off=marg_off,
                prior_marg=np.concatenate([self.prior[v] for v in self.net.variables]),
                sread=as_int([position[self.reader[v]] if v in above else -1
                              for v in self.net.variables]),
                sread_stride=as_int([self._sep_strides((v,), above[v])[0] if v in above else 0
                                     for v in self.net.variables]))
            self._marginal_slices = {v: slice(marg_off[k], marg_off[k + 1])
                                     for k, v in enumerate(self.net.variables)}
        return self._flat

    def _from_separator(self, v) -> bool:
        """Whether the compiled pass reads ``v``'s posterior from the separator
        between its reader clique and that clique's parent: the message there
        is the calibrated joint of the separator, so summing it costs its
        entries instead of one more target on every entry of the clique."""
        i = self.reader[v]
        return self.parent[i] is not None and v in self.separators[i, self.parent[i]]

    def _sep_strides(self, clique, sep):
        """Each of ``clique``'s variables' stride in the flat separator ``sep``
        (variables in that order; 0 for a variable not in it)."""
        sep = () if sep is None else sep
        sizes = [self.arity[v] for v in sep]
        return [math.prod(sizes[sep.index(v) + 1:]) if v in sep else 0 for v in clique]

    def _observed(self, evidence, into=None):
        """The evidence as one state index per variable (-1: not observed), for the
        compiled passes and the batches' indicators, written ``into`` a row of -1
        when given."""
        observed = np.full(len(self.net.variables), -1, dtype=np.int64) if into is None else into
        for v, k in evidence_indices(self.net, evidence).items():
            observed[self._variable_index[v]] = k
        return observed

    def _asked(self, variables) -> list:
        """The variables a query asks about (all by default), each checked."""
        variables = list(self.net.variables) if variables is None else list(variables)
        unknown = [v for v in variables if v not in self.arity]
        if unknown:
            raise UnknownName(f"unknown variables {unknown}")
        return variables

    def _coded_rows(self, rows) -> np.ndarray:
        """``rows`` checked as a matrix of codes, a column per model variable, -1 missing."""
        rows = np.asarray(rows)
        if (rows.ndim != 2 or rows.shape[1] != len(self.net.variables)
                or not np.issubdtype(rows.dtype, np.integer)):
            raise InputError(f"rows must be an integer matrix with one column per variable "
                             f"({len(self.net.variables)}), got shape {rows.shape}")
        arity = np.array([self.arity[v] for v in self.net.variables])
        if rows.size and (rows.min() < -1 or np.any(rows.max(axis=0) >= arity)):
            raise InputError("rows hold codes outside -1 .. states - 1")
        return rows

    def to_networkx(self):
        """The tree as a networkx Graph: node i has ``variables`` (its clique) and
        ``entries`` (its table size); each edge has its ``separator``.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> g = JunctionTree(load_network("asia")).to_networkx()
        >>> nx.is_tree(g), max(len(d["variables"]) for _, d in g.nodes(data=True)) - 1
        (True, 2)
        """
        graph = nx.Graph()
        for i, clique in enumerate(self.cliques):
            graph.add_node(i, variables=tuple(clique), entries=int(self.tables[i].size))
        for i in self.neighbours:
            for j in self.neighbours[i]:
                if i < j:
                    graph.add_edge(i, j, separator=self.separators[(i, j)])
        return graph

    def draw(self, *, ax=None, **options):
        """Draw the tree (see :func:`twlib.drawing.draw_junction_tree`); returns
        the matplotlib axes."""
        from ...drawing import draw_junction_tree

        return draw_junction_tree(self, ax=ax, **options)

    def __repr__(self):
        return (f"JunctionTree({self.net.name!r}: {len(self.cliques)} cliques, "
                f"width {self.width}, {self.entries} entries, "
                f"largest table {max(t.size for t in self.tables)})")


def per_set_normalised(table):
    """``(table / each batch member's total, the totals)``, batch axis first; a
    member whose total is zero keeps its zeros."""
    flat = table.reshape(table.shape[0], -1)
    totals = np.add.reduce(flat, axis=1)
    safe = totals if totals.all() else np.where(totals > 0, totals, 1.0)
    return (flat / safe[:, None]).reshape(table.shape), totals


def separator_ratio(new, old):
    """``new / old`` with ``0 / 0 = 0``: a separator state the old marginal
    rules out stays ruled out."""
    # the operands are a batch and one row of the same table, or a row and a scalar
    shape = new.shape if new.size >= old.size else old.shape
    return np.divide(new, old, out=np.zeros(shape), where=old > 0)
