"""The junction tree: built once per network, calibrated once, updated per evidence set.

The tree is built along an elimination order of small total table size and
calibrated once without evidence; each evidence set then runs Hugin propagation
that touches only the cliques the evidence and the question reach.  Tables are
normalised as they go and their scales accumulated in log space, so long chains
do not underflow and ``P(e)`` is exact.  One evidence set goes through one
compiled pass (:mod:`twlib.inference.kernels`) that reads the calibrated tables
and copies none; :meth:`JunctionTree.posteriors_batch` answers many evidence
sets at once, vectorised over a leading axis; MPE is the same tree with maxima
(:meth:`JunctionTree.mpe`).
"""
from __future__ import annotations

import copy
import math

import networkx as nx
import numpy as np
from tqdm.auto import tqdm

from ..errors import InputError, MemoryBudgetExceeded, UnknownName
from ..factors import FactorModel, ZeroEvidenceError
from ..graphs import clique_tree, elimination_order
from ..network import BayesianNetwork
from ..parallel import blocks, run_tasks, task_count
from .evidence import evidence_indices, likelihoods
from .kernels import (decode_assignments, flat_factors, hugin_one_set, log_values,
                      max_product_one_set, max_product_prior)

__all__ = ["JunctionTree", "tables_gib", "WORK_ENTRIES", "FUSED_FROM_ENTRIES"]

WORK_ENTRIES = 1 << 20       # a batch is cut so that one clique table of it stays about this size
FUSED_FROM_ENTRIES = 1 << 14  # from this table size (times the batch) messages are fused einsums


def tables_gib(entries, largest) -> float:
    """GiB a junction tree's tables take: every clique table (8 bytes an entry)
    plus two working copies of the largest.

    >>> tables_gib(2**27, 0)
    1.0
    """
    return 8 * (entries + 2 * largest) / 2**30


class JunctionTree:
    """A junction tree of a Bayesian network or factor model, calibrated once
    without evidence and then updated per evidence set (Hugin propagation).

    Parameters
    ----------
    model : BayesianNetwork or FactorModel
    order : list, optional
        Elimination order of the moral (interaction) graph.  By default
        :func:`twlib.graphs.elimination_order` with ``order_method`` and the
        variables' numbers of states as weights: the order of least total table
        size among the greedy heuristics it tries.
    max_memory_gb : float
        Refuse, with :class:`MemoryBudgetExceeded`, trees whose tables would
        need more memory than this: the calibrated clique tables (8 bytes an
        entry) plus two working copies of the largest one.
    order_method : str
        The method of :func:`twlib.graphs.elimination_order` used when no
        order is given.

    How a query runs: the tree holds every clique's prior marginal ``P(C)``
    and every separator's ``P(S)``.  Evidence multiplies indicators into the
    smallest clique holding each observed variable; only the cliques on the
    paths from those to the root send messages up (collect), then messages go
    down (distribute) only into the parts of the tree that hold a variable
    asked about, and a part whose incoming separator marginal did not change
    keeps its prior marginals.  Each message replaces a separator ``S`` and
    rescales the receiving table by ``new(S) / old(S)``; tables are kept
    normalised with their log-scales counted, so ``P(e)`` does not underflow.

    Examples
    --------
    >>> from twlib.datasets import load_network
    >>> jt = JunctionTree(load_network("asia"))
    >>> post = jt.posteriors({"xray": "yes"})
    >>> round(float(post["lung"][0]), 4)
    0.4887
    """

    def __init__(self, model, order=None, max_memory_gb: float = 4.0, *,
                 order_method: str = "auto"):
        normalised = isinstance(model, BayesianNetwork)       # its partition function is 1
        model = FactorModel.from_network(model) if normalised else model
        self.net = model
        self.arity = {v: model.arity(v) for v in model.variables}
        graph = model.interaction_graph()
        self.order = (list(order) if order is not None
                      else elimination_order(graph, order_method, weights=self.arity))
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
        self._shape_tree(edges)
        self._calibrate_prior(model)
        if normalised:
            self.log_z = 0.0

    def with_factors(self, model) -> "JunctionTree":
        """A tree of the same cliques calibrated on ``model``'s factors instead:
        ``model`` has this tree's variables and states, and each of its factors
        lies within a clique (as a model conditioned on evidence or a cutset
        does).  Skips the order and the clique tree; this tree is unchanged.

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

    # ------------------------------------------------------------- structure
    def _shape_tree(self, edges):
        """Root the tree at its centre; precompute each edge's summing axes and
        broadcast shapes (separators are kept in the child's variable order)."""
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
        self.root = path[other][(len(path[other]) - 1) // 2]
        self.parent = {self.root: None}
        self.preorder = [self.root]
        for i in self.preorder:
            for j in nbrs[i]:
                if j not in self.parent:
                    self.parent[j] = i
                    self.preorder.append(j)
        self.children = {i: [j for j in nbrs[i] if self.parent.get(j) == i] for i in nbrs}
        # a clique lists the variables it shares with its parent first: maximising
        # out its own ones is then over the trailing axes, without a copy
        for i in self.preorder[1:]:
            up = set(self.cliques[self.parent[i]])
            self.cliques[i] = type(self.cliques[i])(
                [v for v in self.cliques[i] if v in up] + [v for v in self.cliques[i]
                                                            if v not in up])
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

    # ------------------------------------------------------------ calibration
    def _calibrate_prior(self, model):
        """Clique potentials from the factors, then one full Hugin propagation:
        ``tables[i] = P(C_i)`` and ``seps[i] = P(S_i)`` (the separator to i's
        parent), normalised; ``log_z`` is the log partition function (0 for a
        Bayesian network).  The layouts built on first use from the tables (the
        max-product pass, the compiled single-set passes, the flat factors) are
        dropped."""
        self._layout = self._max_cache = self._flat = self._max_prior_flat = None
        self._factors_flat = None
        tables = [np.ones([1] + [self.arity[v] for v in c]) for c in self.cliques]
        scale = np.zeros(len(self.cliques))
        home = {i: [] for i in range(len(self.cliques))}
        for f in model.factors:
            i = self._smallest_clique_holding(set(f.variables))
            if i is None:           # only a model given to with_factors can do this
                raise InputError(f"a factor over {f.variables} lies in no clique of this tree")
            home[i].append(f)
        self._home = home
        for i, factors in home.items():
            for k, f in enumerate(factors):
                # in place, each factor scaled to peak 1, the table every 16 factors,
                # so that long products neither allocate nor underflow
                peak = f.values.max()
                if peak > 0:
                    scale[i] += math.log(peak)
                tables[i] *= self._on_clique(i, f, f.values / (peak if peak > 0 else 1.0))[None]
                if k % 16 == 15:
                    top = tables[i].max()
                    if top > 0:
                        tables[i] /= top
                        scale[i] += math.log(top)
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
            tables[i] *= self._sep_on_child(i, _ratio(new, seps[i]))
            tables[i] /= tables[i].sum()
            seps[i] = new / new.sum()
        self.tables = [t[0] for t in tables]
        self.seps = {i: s[0] for i, s in seps.items()}
        self.prior = {v: self._marginal(self.tables[i][None], i, v)[0]
                      for v, i in self.reader.items()}

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
        return _per_set_normalised(np.add.reduce(table, axis=others))[0]

    def _indicators(self, evidence_sets, soft=None) -> dict:
        """``{observed variable: (batch, states) indicator}``; a set that does not
        observe the variable gets ones.  ``evidence_sets`` is a list of dicts or
        a matrix of state codes, a column per model variable, -1 where missing;
        ``soft`` maps variables to likelihood weights (from
        :func:`~twlib.inference.evidence.likelihoods`) multiplied into every set's."""
        batch = len(evidence_sets)
        lam = {}
        for v, weights in (soft or {}).items():
            lam[v] = np.repeat(weights[None], batch, axis=0)
        if isinstance(evidence_sets, np.ndarray):
            rows = np.arange(batch)
            for j, v in enumerate(self.net.variables):
                seen = evidence_sets[:, j] >= 0
                if seen.any():
                    lam[v] = np.ones((batch, self.arity[v]))
                    lam[v][seen] = 0.0
                    lam[v][rows[seen], evidence_sets[seen, j]] = 1.0
            return lam
        for b, e in enumerate(evidence_sets):
            for v, s in evidence_indices(self.net, e).items():
                if v not in lam:
                    lam[v] = np.ones((batch, self.arity[v]))
                lam[v][b, np.arange(self.arity[v]) != s] = 0.0
        return lam

    def _paths_to_root(self, cliques) -> set:
        """The cliques on the paths from ``cliques`` up to the root."""
        found = set()
        for i in cliques:
            while i is not None and i not in found:
                found.add(i)
                i = self.parent[i]
        return found

    def _collect(self, evidence_sets, soft=None):
        """Enter a batch's evidence and collect along the paths from it to the root.
        Returns ``(work, seps, log P(e) per set)``: ``work[i]`` is clique i's table
        ``P(C_i, evidence below i)`` up to a factor per set, for the cliques on
        those paths (the others keep their prior), and ``seps[i]`` the new
        separator marginals they sent up."""
        batch = len(evidence_sets)
        lam = self._indicators(evidence_sets, soft)
        work, scale = {}, {}
        for v, indicator in lam.items():
            i = self.reader[v]
            if i not in work:
                work[i] = np.repeat(self.tables[i][None], batch, axis=0)
                scale[i] = np.zeros(batch)
            work[i] *= indicator.reshape([batch] + [self.arity[u] if u == v else 1
                                                    for u in self.cliques[i]])
        dirty = self._paths_to_root(work)           # the cliques whose subtree holds evidence
        seps = {}
        for i in reversed(self.preorder[1:]):                # collect
            if i not in dirty:
                continue
            p = self.parent[i]
            seps[i], total = _per_set_normalised(self._child_to_sep(i, work[i]))
            if p not in work:
                work[p] = np.repeat(self.tables[p][None], batch, axis=0)
                scale[p] = np.zeros(batch)
            work[p] *= self._sep_on_parent(i, _ratio(seps[i], self.seps[i][None]))
            with np.errstate(divide="ignore"):
                scale[p] += scale[i] + np.log(total)
        log_pe = np.zeros(batch)
        if self.root in work:
            work[self.root], total = _per_set_normalised(work[self.root])
            with np.errstate(divide="ignore"):
                log_pe = scale[self.root] + np.log(total)
        log_pe = log_pe + self.log_z
        return work, seps, log_pe

    def _propagate(self, evidence_sets, asked=(), keep=(), allow_zero: bool = False,
                   soft=None):
        """One batch: enter the evidence, collect along the paths from the
        evidence to the root, distribute along the paths from the root to the
        cliques that read the ``asked`` variables (and to the cliques ``keep``).
        Returns ``(log P(e) per set, {asked variable: (batch, states) posterior,
        or None where it is still the prior}, {kept clique: its unnormalised
        posterior table, with one row where it is still the prior})``."""
        batch = len(evidence_sets)
        work, seps, log_pe = self._collect(evidence_sets, soft)
        zero = np.flatnonzero(~np.isfinite(log_pe))
        if zero.size and not allow_zero:
            which = "the evidence" if batch == 1 else f"evidence set {int(zero[0])}"
            raise ZeroEvidenceError(f"{which} has probability zero: "
                                    f"{evidence_sets[int(zero[0])]}")
        if zero.size:
            return log_pe, {}, {}
        needed = self._paths_to_root({self.reader[v] for v in asked} | set(keep))
        # distribute: msg[c] is the new separator marginal sent to c, None where
        # the sender's table is still its prior (then so is c's, unless c is dirty)
        msg, marginals, kept = {}, {}, {}
        for i in self.preorder:
            if i not in needed:
                continue
            ratio = None
            if i == self.root:
                base = work.get(i)
            else:
                new, old = msg.pop(i), seps.get(i, self.seps[i][None])
                if i not in seps and (new is None or _held(new, old)):
                    base = None                               # the separator marginal held
                else:
                    ratio = _ratio(new, old)
                    base = work.pop(i) if i in seps else self.tables[i][None]
            kids = [c for c in self.children[i] if c in needed]
            here = [v for v in self._readers[i] if v in asked]
            if base is None:
                msg.update((c, None) for c in kids)
                marginals.update((v, None) for v in here)
                if i in keep:
                    kept[i] = self.tables[i][None]
                continue
            if i in keep:
                kept[i] = base if ratio is None else base * self._sep_on_child(i, ratio)
            # messages and marginals come out unnormalised: normalising them is
            # cheaper than normalising the table.  On large tables each is one
            # fused multiply-and-sum (einsum) and the product is never built.
            table = None
            if base[0].size * batch < FUSED_FROM_ENTRIES:
                table = base if ratio is None else base * self._sep_on_child(i, ratio)
            for c in kids:
                msg[c], _ = _per_set_normalised(
                    self._parent_to_sep(c, table) if table is not None
                    else self._project(i, base, ratio, self.separators[c, i]))
            for v in here:
                marginals[v] = (self._marginal(table, i, v) if table is not None
                                else _per_set_normalised(self._project(i, base, ratio, (v,)))[0])
        return log_pe, marginals, kept

    def _chunk(self, chunk):
        return chunk or max(1, WORK_ENTRIES // max(t.size for t in self.tables))

    def _run_chunks(self, task, evidence_sets, extra, chunk, executor, progress, desc) -> list:
        """``task(tree, group, *extra)`` over the groups of chunks of the evidence
        sets (see :func:`twlib.parallel.run_tasks`), with a tqdm bar over the sets
        when ``progress``; each answer's second item has one entry per set."""
        bar = tqdm(total=len(evidence_sets), unit="set", desc=desc, disable=not progress)
        answers = run_tasks(executor, task, self,
                            [(group, *extra)
                             for group in self._chunk_groups(evidence_sets, chunk, executor)],
                            progress=lambda answer: bar.update(len(answer[1])))
        bar.close()
        return answers

    def _chunk_groups(self, evidence_sets, chunk, executor) -> list:
        """The evidence sets cut into chunks, the chunks grouped into tasks: one
        chunk per task in this process (so progress shows per chunk), else as
        :func:`twlib.parallel.task_count` says."""
        chunk = self._chunk(chunk)
        parts = [evidence_sets[i:i + chunk] for i in range(0, len(evidence_sets), chunk)]
        return blocks(parts, len(parts) if executor is None else task_count(executor))

    # ------------------------------------------------------------- max-product
    def _max_layout(self):
        """Per clique: its separator variables and its own ones (those its parent
        lacks; every variable is own to exactly one clique), as arrays for
        :func:`decode_assignments`, in preorder.  Built once."""
        if self._layout is None:
            index = {v: k for k, v in enumerate(self.net.variables)}
            sep_ptr, sep_var, sep_stride, sep_size = [0], [], [], []
            own_ptr, own_var, own_card = [0], [], []
            self._own, self._sep_axes = {}, {}
            for i in self.preorder:
                clique, p = self.cliques[i], self.parent[i]
                sep = [] if p is None else list(self.separators[i, p])
                own = [v for v in clique if v not in sep]
                self._sep_axes[i] = [clique.index(v) for v in sep]
                self._own[i] = [clique.index(v) for v in own]
                sizes = [self.arity[v] for v in sep]
                sep_var += [index[v] for v in sep]
                sep_stride += [math.prod(sizes[k + 1:]) for k in range(len(sep))]
                own_var += [index[v] for v in own]
                own_card += [self.arity[v] for v in own]
                sep_ptr.append(len(sep_var))
                own_ptr.append(len(own_var))
                sep_size.append(math.prod(sizes))
            self._layout = tuple(np.array(a, dtype=np.int64) for a in
                                 (sep_ptr, sep_var, sep_stride, sep_size, own_ptr, own_var,
                                  own_card))
        return self._layout

    def _log_potential(self, i):
        """Clique ``i``'s log-potential: the sum of the logs of the model's factors
        that live there (no calibration, so nothing underflows however unlikely
        a configuration is)."""
        table = np.zeros([self.arity[v] for v in self.cliques[i]])
        with np.errstate(divide="ignore"):
            for f in self._home[i]:
                table += self._on_clique(i, f, np.log(f.values))
        return table

    def _on_clique(self, i, factor, values):
        """``values`` (a table over ``factor``'s variables, in its order) with its
        axes in clique ``i``'s order and size-1 axes for the clique's other
        variables, ready to broadcast against the clique's table."""
        clique = self.cliques[i]
        on_clique = sorted(factor.variables, key=clique.index)
        values = np.transpose(values, [factor.variables.index(v) for v in on_clique])
        return values.reshape([self.arity[v] if v in factor.variables else 1 for v in clique])

    def _max_out(self, i, table):
        """Maximise clique ``i``'s log-table (batch first) over its own variables:
        ``(message to the parent, shifted to peak 0, the best own configuration
        per separator state (batch, separator states), the peaks (batch,))``."""
        batch = table.shape[0]
        seps, own = self._sep_axes[i], self._own[i]
        flat = np.transpose(table, [0] + [1 + k for k in seps] + [1 + k for k in own]
                            ).reshape(batch, -1, math.prod(table.shape[1 + k] for k in own))
        best = flat.argmax(axis=2)
        values = np.take_along_axis(flat, best[:, :, None], axis=2)[:, :, 0]
        peak = values.max(axis=1)
        values -= np.where(np.isfinite(peak), peak, 0.0)[:, None]
        return values.reshape([batch] + [table.shape[1 + k] for k in seps]), best, peak

    def _max_collect(self, todo, lam, batch, prior=None):
        """Max-sum in log space from the leaves up over the cliques ``todo``: each
        clique's log-potential plus the logs of the evidence indicators read
        there and its children's messages (those outside ``todo`` send their
        evidence-free message from ``prior``).  Returns ``(messages, best own
        configurations, the root's peak or None when the root is not in
        todo)``."""
        self._max_layout()
        msgs, best, peak = {}, {}, None
        at = {}
        for v, indicator in lam.items():
            at.setdefault(self.reader[v], []).append((v, indicator))
        for i in reversed(self.preorder):
            if i not in todo:
                continue
            clique = self.cliques[i]
            table = self._log_potential(i)[None]
            with np.errstate(divide="ignore"):
                for v, indicator in at.get(i, ()):
                    table = table + np.log(indicator).reshape(
                        [batch] + [self.arity[u] if u == v else 1 for u in clique])
            for c in self.children[i]:
                message = self._sep_on_parent(c, msgs[c] if c in msgs else prior[0][c])
                if message.shape[0] <= table.shape[0]:
                    table += message                    # in place: the tables are large
                else:
                    table = table + message
            msgs[i], best[i], top = self._max_out(i, table)
            if i == self.root:
                peak = top
        return msgs, best, peak

    def _max_prior(self):
        """The evidence-free max-sum pass, computed once and kept: what every
        subtree without evidence sends, and how it decodes (the best own
        configurations of all cliques in one flat array, with offsets)."""
        if self._max_cache is None:
            msgs, best, _ = self._max_collect(set(self.preorder), {}, 1)
            flat = [best[i].ravel() for i in self.preorder]
            offsets = np.cumsum([0] + [b.size for b in flat[:-1]]).astype(np.int64)
            self._max_cache = msgs, np.concatenate(flat), offsets
        return self._max_cache

    def _mpe(self, evidence_sets, allow_zero: bool = False, soft=None):
        """One batch of MPE queries: ``(state indices (batch, variables), log P(x, e))``,
        ``soft`` likelihood weights multiplied in (and into ``log P``)."""
        batch = len(evidence_sets)
        lam = self._indicators(evidence_sets, soft)
        prior = self._max_prior()
        dirty = self._paths_to_root({self.reader[v] for v in lam})
        _, best, peak = self._max_collect(dirty, lam, batch, prior)
        zero = np.flatnonzero(~np.isfinite(np.broadcast_to(peak, (batch,)))) if lam else []
        if len(zero) and not allow_zero:
            which = "the evidence" if batch == 1 else f"evidence set {int(zero[0])}"
            raise ZeroEvidenceError(f"{which} has probability zero: "
                                    f"{evidence_sets[int(zero[0])]}")
        offsets, parts, pos = np.full(len(self.preorder), -1, dtype=np.int64), [], 0
        for t, i in enumerate(self.preorder):
            if i in best:
                offsets[t] = pos
                parts.append(np.broadcast_to(best[i], (batch, best[i].shape[1])).ravel())
                pos += parts[-1].size
        out = np.zeros((batch, len(self.net.variables)), dtype=np.int64)
        decode_assignments(*self._max_layout(), offsets,
                            np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64),
                            prior[2], prior[1], out)
        log_p = np.zeros(batch)
        log_p[zero] = -np.inf
        with np.errstate(divide="ignore"):
            for v, weights in (soft or {}).items():
                log_p += np.log(weights[out[:, self.net.variables.index(v)]])
        return out, log_p + log_values(*self._factor_index(), out) - self.log_z

    def _factor_index(self):
        """The model's factors as flat arrays for :func:`log_values`: scopes
        (variable indices, -1 padded), strides, offsets and the log entries."""
        if self._factors_flat is None:
            scopes, strides, offsets, values = flat_factors(self.net)
            with np.errstate(divide="ignore"):
                self._factors_flat = scopes, strides, offsets, np.log(values)
        return self._factors_flat

    # ---------------------------------------------------------------- public
    def to_networkx(self):
        """The tree as a networkx Graph: node i has ``variables`` (its clique) and
        ``entries`` (its table size); each edge has its ``separator``.

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

    def draw(self, ax=None, **options):
        """Draw the tree (see :func:`twlib.drawing.draw_junction_tree`); returns
        the matplotlib axes."""
        from ..drawing import draw_junction_tree

        return draw_junction_tree(self, ax, **options)

    def __repr__(self):
        return (f"JunctionTree({self.net.name!r}: {len(self.cliques)} cliques, "
                f"width {self.width}, {self.entries} entries, "
                f"largest table {max(t.size for t in self.tables)})")

    def posteriors_batch(self, evidence_sets, chunk: int | None = None, variables=None,
                         progress: bool = False, executor=None):
        """Posteriors for many evidence sets at once.

        Returns ``(posteriors, log_pe)``: ``posteriors[v]`` has shape
        ``(len(evidence_sets), r_v)`` (an observed variable gets its indicator)
        and ``log_pe`` the natural log of ``P(e)`` per set.  ``variables``
        limits the answer (and the work) to those variables.  Sets are processed
        in chunks so that one clique table of a chunk holds about a million
        entries; ``progress=True`` shows a tqdm bar over the sets.  With an
        ``executor`` (see :mod:`twlib.parallel`) the chunks are shared out among
        its workers, the tree sent once per worker; the answers are the same.

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> posts, log_pe = jt.posteriors_batch([{}, {"smoke": "yes"}], variables=["lung"])
        >>> posts["lung"].round(3).tolist(), log_pe.round(3).tolist()
        ([[0.055, 0.945], [0.1, 0.9]], [0.0, -0.693])
        """
        evidence_sets = list(evidence_sets)
        if not evidence_sets:
            raise InputError("no evidence sets given")
        variables = self._asked(variables)
        answers = self._run_chunks(_posteriors_of_parts, evidence_sets, (variables,), chunk,
                                   executor, progress, "posteriors")
        return ({v: np.concatenate([a[0][v] for a in answers]) for v in variables},
                np.concatenate([a[1] for a in answers]))

    def posteriors(self, evidence=None, variables=None, soft_evidence=None) -> dict:
        """``{variable: P(variable | evidence)}`` for every variable (or those in
        ``variables``, which saves the work for the others).

        ``soft_evidence`` maps variables to likelihood weights, one per state
        (virtual evidence: as if an observed child had ``P(seen | state)``
        proportional to them).

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> post = jt.posteriors(variables=["lung"], soft_evidence={"xray": [0.8, 0.2]})
        >>> post["lung"].round(4).tolist()
        [0.1628, 0.8372]
        """
        every = variables is None
        variables = self._asked(variables)
        if soft_evidence is not None:
            _, posts, _ = self._propagate([evidence or {}], asked=set(variables),
                                               soft=likelihoods(self.net, soft_evidence))
            return {v: self.prior[v] if posts[v] is None else posts[v][0] for v in variables}
        marginals, _ = self._compiled_posteriors(evidence, None if every else variables)
        return {v: marginals[self._marginal_slices[v]] for v in variables}

    def _asked(self, variables) -> list:
        """The variables a query asks about (all by default), each checked."""
        variables = list(self.net.variables) if variables is None else list(variables)
        unknown = [v for v in variables if v not in self.arity]
        if unknown:
            raise UnknownName(f"unknown variables {unknown}")
        return variables

    def _compiled_layout(self):
        """The tree as flat arrays for :func:`hugin_one_set` (built once), cliques in
        preorder: tables and separators end to end, each clique's variables with
        their strides in the separator to its parent and in each child's, and
        what each clique's distribute pass feeds (its children's separators, the
        marginals of the variables read there)."""
        if self._flat is None:
            position = {i: t for t, i in enumerate(self.preorder)}
            index = {v: k for k, v in enumerate(self.net.variables)}
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
                    fan_rows += [int(u == v) for u in clique]
                    fan_out.append(sep_off[-1] + marg_off[index[v]])
                fan_ptr.append(len(fan_out))
                fan_row_ptr.append(len(fan_rows))
            as_int = lambda a: np.array(a, dtype=np.int64)   # noqa: E731
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
                prior_marg=np.concatenate([self.prior[v] for v in self.net.variables]))
            self._marginal_slices = {v: slice(marg_off[k], marg_off[k + 1])
                                     for k, v in enumerate(self.net.variables)}
            self._variable_index = index
        return self._flat

    def _sep_strides(self, clique, sep):
        """Each of ``clique``'s variables' stride in the flat separator ``sep``
        (variables in that order; 0 for a variable not in it)."""
        sep = () if sep is None else sep
        sizes = [self.arity[v] for v in sep]
        return [math.prod(sizes[sep.index(v) + 1:]) if v in sep else 0 for v in clique]

    def _compiled_mpe(self, evidence):
        """``(state indices, log P(x, e))`` of one evidence set by
        :func:`max_product_one_set`, from the evidence-free pass of
        :func:`max_product_prior` (computed once)."""
        flat = self._compiled_layout()
        keys = ("table_off", "cvar_ptr", "ccard", "up_stride", "down_ptr", "down_stride",
                "sep_off", "parents")
        if self._max_prior_flat is None:
            log_potentials = np.concatenate([self._log_potential(i).ravel()
                                             for i in self.preorder])
            self._max_prior_flat = max_product_prior(log_potentials, *(flat[k] for k in keys))
        states = np.zeros((1, len(self.net.variables)), dtype=np.int64)
        if not max_product_one_set(*self._max_prior_flat, *(flat[k] for k in (
                "table_off", "cvar_ptr", "cvar", "ccard", "up_stride", "down_ptr", "down_stride",
                "sep_off", "parents", "child_ptr", "children", "reader", "rslot", "marg_off")),
                self._observed(evidence), states[0]):
            raise ZeroEvidenceError(f"the evidence has probability zero: {evidence}")
        return states[0], float(log_values(*self._factor_index(), states)[0] - self.log_z)

    def _observed(self, evidence):
        """The evidence as one state index per variable (-1: not observed), for the
        compiled single-set passes (after :meth:`_compiled_layout`)."""
        observed = np.full(len(self.net.variables), -1, dtype=np.int64)
        for v, k in evidence_indices(self.net, evidence).items():
            observed[self._variable_index[v]] = k
        return observed

    def _compiled_posteriors(self, evidence, variables=None):
        """The posteriors of ``variables`` (all by default) end to end, see
        ``_marginal_slices``, and ``log P(e)`` for one evidence set, by
        :func:`hugin_one_set`."""
        flat = self._compiled_layout()
        asked = np.ones(len(self.net.variables), dtype=np.bool_)
        if variables is not None:
            asked[:] = False
            asked[[self._variable_index[v] for v in variables]] = True
        marginals = np.zeros(flat["marg_off"][-1])
        log_pe = hugin_one_set(
            *(flat[k] for k in ("tables", "table_off", "cvar_ptr", "ccard", "up_stride",
                                "down_ptr", "down_stride", "seps", "sep_off", "parents",
                                "child_ptr", "children", "reader", "rslot", "fan_ptr",
                                "fan_row_ptr", "fan_rows", "fan_out", "marg_off", "prior_marg")),
            self._observed(evidence), asked, marginals)
        if not np.isfinite(log_pe):
            raise ZeroEvidenceError(f"the evidence has probability zero: {evidence}")
        return marginals, log_pe + self.log_z

    def mpe_batch(self, evidence_sets, chunk: int | None = None, progress: bool = False,
                  executor=None, allow_zero: bool = False):
        """The most probable explanation of each evidence set: the complete
        assignment ``x`` (observed variables at their states) that maximises
        ``P(x, e)``, by max-product on the tree.

        Returns ``(states, log_p)``: ``states`` is an int array (sets x variables,
        in the model's variable order) of state indices and ``log_p`` the natural
        log of ``P(x, e)`` per set (for a factor model: of the normalised
        distribution).  Ties go to the lowest state index of each clique's
        variables, so the answer is deterministic.  Batching, ``chunk``,
        ``progress`` and ``executor`` work as in :meth:`posteriors_batch`.  An
        impossible evidence set raises :class:`ZeroEvidenceError`, or with
        ``allow_zero`` gets ``log_p = -inf`` (and meaningless states).

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> states, log_p = jt.mpe_batch([{}, {"xray": "yes"}])
        >>> states.shape, log_p.round(3).tolist()
        ((2, 8), [-1.237, -3.652])
        """
        evidence_sets = list(evidence_sets)
        if not evidence_sets:
            raise InputError("no evidence sets given")
        answers = self._run_chunks(_mpe_of_parts, evidence_sets, (allow_zero,), chunk, executor,
                                   progress, "MPE")
        return (np.concatenate([a[0] for a in answers]),
                np.concatenate([a[1] for a in answers]))

    def mpe(self, evidence=None, soft_evidence=None) -> tuple[dict, float]:
        """``(assignment, log P(assignment))``: the most probable complete
        assignment given ``evidence`` as ``{variable: state label}``, with the
        natural log of its joint probability (evidence included); with
        ``soft_evidence`` (as in :meth:`posteriors`) the assignment maximises
        ``P(x) * prod_v weights_v(x_v)`` and that is the value returned.

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> best, log_p = jt.mpe({"dysp": "yes", "smoke": "no"})
        >>> best["bronc"], best["lung"], round(log_p, 4)
        ('yes', 'no', -2.2017)
        """
        if soft_evidence is not None:
            states, log_p = self._mpe([evidence or {}],
                                      soft=likelihoods(self.net, soft_evidence))
            states, log_p = states[0], float(log_p[0])
        else:
            states, log_p = self._compiled_mpe(evidence)
        return ({v: self.net.states(v)[k] for v, k in zip(self.net.variables, states)}, log_p)

    def joint(self, variables, evidence=None) -> np.ndarray:
        """``P(variables | evidence)`` as an array with one axis per variable (in the
        order given), for variables that share a clique of the tree, such as a
        family of the network (its moral graph joins it into one clique).

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> jt.joint(["either", "tub", "lung"]).shape
        (2, 2, 2)
        """
        variables = list(variables)
        unknown = [v for v in variables if v not in self.arity]
        if unknown:
            raise UnknownName(f"unknown variables {unknown}")
        if len(set(variables)) != len(variables):
            raise InputError(f"variables repeat: {variables}")
        target = self._smallest_clique_holding(set(variables))
        if target is None:
            raise InputError(f"{variables} share no clique of the junction tree; "
                             "joint() answers only within a clique")
        _, _, belief = self._propagate([evidence or {}], keep={target})
        clique = list(self.cliques[target])
        table = belief[target][0].sum(
            axis=tuple(k for k, v in enumerate(clique) if v not in variables))
        kept = [v for v in clique if v in variables]
        table = np.transpose(table, [kept.index(v) for v in variables])
        return table / table.sum()

    def log_probability_of_evidence(self, evidence=None, soft_evidence=None) -> float:
        """Natural log of ``P(evidence)``; with ``soft_evidence`` (as in
        :meth:`posteriors`), of ``sum_x P(x, evidence) prod_v weights_v(x_v)``."""
        if soft_evidence is not None:
            return float(self._propagate([evidence or {}],
                                         soft=likelihoods(self.net, soft_evidence))[0][0])
        return float(self._compiled_posteriors(evidence, ())[1])

    def log_probabilities_of_evidence(self, evidence_sets, chunk: int | None = None,
                                      executor=None) -> np.ndarray:
        """Natural log of ``P(e)`` for many evidence sets; ``-inf`` where impossible.
        The sets are dicts, or rows of codes as in :meth:`expected_counts`.
        ``executor`` shares the chunks out as in :meth:`posteriors_batch`.

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> (np.round(jt.log_probabilities_of_evidence([{}, {"tub": "yes"}]), 3) + 0.0).tolist()
        [0.0, -4.566]
        """
        evidence_sets = (self._coded_rows(evidence_sets) if isinstance(evidence_sets, np.ndarray)
                         else list(evidence_sets))
        if not len(evidence_sets):
            return np.empty(0)
        return np.concatenate(run_tasks(
            executor, _log_pe_of_parts, self,
            [(group,) for group in self._chunk_groups(evidence_sets, chunk, executor)]))

    def expected_counts(self, rows, scopes, weights=None, chunk: int | None = None,
                        executor=None):
        """Expected counts of variable sets over rows with missing cells: for each
        scope, ``sum over rows of weight * P(scope | the row's observed cells)``,
        the E-step of EM.

        ``rows`` is a matrix of state codes, one column per model variable in
        ``self.net.variables`` order, ``-1`` where a cell is missing; each scope
        (a family of the network, say) must lie in one clique.  Returns the
        tables (one axis per scope variable, in the scope's order) and the
        natural log of each row's ``P(observed cells)``.  Rows of probability
        zero raise :class:`ZeroEvidenceError`.

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> jt.net.variables[6], jt.net.states("xray")
        ('xray', ['yes', 'no'])
        >>> rows = np.array([[-1] * 8, [-1] * 6 + [0, -1]])        # nothing seen; xray = yes
        >>> tables, log_p = jt.expected_counts(rows, [("lung",)])
        >>> tables[0].round(4).tolist(), log_p.round(3).tolist()
        ([0.5437, 1.4563], [0.0, -2.205])
        """
        rows = self._coded_rows(rows)
        weights = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
        if weights.shape != (len(rows),):
            raise InputError(f"expected {len(rows)} weights, got shape {weights.shape}")
        homes = []
        for scope in scopes:
            unknown = [v for v in scope if v not in self.arity]
            if unknown:
                raise UnknownName(f"unknown variables {unknown}")
            home = self._smallest_clique_holding(set(scope))
            if home is None:
                raise InputError(f"{list(scope)} share no clique of the junction tree")
            homes.append(home)
        cliques = sorted(set(homes))
        if not len(rows):
            totals = {i: np.zeros(self.tables[i].shape) for i in cliques}
            log_p = np.empty(0)
        else:
            groups = self._chunk_groups(np.arange(len(rows)), chunk, executor)
            answers = run_tasks(executor, _expected_of_parts, self,
                                [([rows[p] for p in group], [weights[p] for p in group],
                                  cliques) for group in groups])
            totals = {i: sum(a[0][i] for a in answers) for i in cliques}
            log_p = np.concatenate([a[1] for a in answers])
        out = []
        for scope, i in zip(scopes, homes):
            clique = self.cliques[i]
            table = totals[i].sum(axis=tuple(k for k, v in enumerate(clique) if v not in scope))
            kept = [v for v in clique if v in scope]
            out.append(np.transpose(table, [kept.index(v) for v in scope]))
        return out, log_p

    def sample_missing(self, rows, random_state=None, chunk: int | None = None) -> np.ndarray:
        """Each row's missing cells (``-1``) filled by one joint draw from
        ``P(missing cells | the row's observed cells)``, exactly: evidence is
        collected to the root, then every clique draws its own variables given
        its separator's, root first (forward filtering, backward sampling).
        ``rows`` is coded as in :meth:`expected_counts`.

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> rows = np.array([[-1] * 5 + [0, -1, -1]] * 1000)         # either = yes
        >>> drawn = jt.sample_missing(rows, random_state=0)
        >>> bool(((drawn[:, 1] == 0) | (drawn[:, 3] == 0)).all())   # tub or lung
        True
        """
        rows = self._coded_rows(rows)
        rng = np.random.default_rng(random_state)
        out = np.empty(rows.shape, dtype=np.int64)
        step = self._chunk(chunk)
        column = {v: j for j, v in enumerate(self.net.variables)}
        for first in range(0, len(rows), step):
            part = rows[first:first + step]
            work, _, log_pe = self._collect(part)
            zero = np.flatnonzero(~np.isfinite(log_pe))
            if zero.size:
                raise ZeroEvidenceError(f"row {first + int(zero[0])} has probability zero: "
                                        f"{part[int(zero[0])].tolist()}")
            drawn = out[first:first + step]
            for i in self.preorder:
                clique, p = self.cliques[i], self.parent[i]
                sep = () if p is None else self.separators[i, p]
                own = [v for v in clique if v not in sep]
                if not own:
                    continue
                table = work.get(i, self.tables[i][None])
                order = [clique.index(v) + 1 for v in (*sep, *own)]
                own_shape = [self.arity[v] for v in own]
                flat = np.transpose(table, [0] + order).reshape(table.shape[0], -1,
                                                                math.prod(own_shape))
                at = (np.ravel_multi_index(tuple(drawn[:, column[v]] for v in sep),
                                           [self.arity[v] for v in sep]) if sep
                      else np.zeros(len(part), dtype=np.int64))
                sub = flat[np.arange(len(part)) if flat.shape[0] > 1 else 0, at]
                cumulative = np.cumsum(sub, axis=1)
                u = rng.random(len(part)) * cumulative[:, -1]
                pick = np.minimum((cumulative <= u[:, None]).sum(axis=1), sub.shape[1] - 1)
                for v, states in zip(own, np.unravel_index(pick, own_shape)):
                    drawn[:, column[v]] = states
        return out

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

    def probability_of_evidence(self, evidence=None) -> float:
        """``P(evidence)`` (may underflow to 0 for very unlikely evidence; see the log form)."""
        return math.exp(self.log_probability_of_evidence(evidence))


def _posteriors_of_parts(tree, parts, variables):
    """Posteriors of ``variables`` and ``log P(e)`` over consecutive chunks of evidence
    sets: a task of :meth:`JunctionTree.posteriors_batch`."""
    posts, logs = {v: [] for v in variables}, []
    for part in parts:
        log_pe, marginals, _ = tree._propagate(part, asked=set(variables))
        logs.append(log_pe)
        for v in variables:
            m = marginals[v]
            posts[v].append(np.broadcast_to(tree.prior[v], (len(part), tree.arity[v]))
                            if m is None else m)
    return {v: np.concatenate(p) for v, p in posts.items()}, np.concatenate(logs)


def _mpe_of_parts(tree, parts, allow_zero):
    """MPE states and ``log P(x, e)`` over consecutive chunks of evidence sets: a
    task of :meth:`JunctionTree.mpe_batch`."""
    answers = [tree._mpe(part, allow_zero) for part in parts]
    return np.concatenate([a[0] for a in answers]), np.concatenate([a[1] for a in answers])


def _expected_of_parts(tree, parts, weights, cliques):
    """Weighted sums of the posterior tables of ``cliques`` and ``log P(e)`` over
    consecutive chunks of rows: a task of :meth:`JunctionTree.expected_counts`."""
    totals = {i: np.zeros(tree.tables[i].shape) for i in cliques}
    logs = []
    for part, w in zip(parts, weights):
        log_pe, _, kept = tree._propagate(part, keep=cliques)
        logs.append(log_pe)
        for i in cliques:
            table = kept[i]
            if table.shape[0] == 1:                  # still the prior in every row
                totals[i] += w.sum() * table[0] / table[0].sum()
            else:
                totals[i] += np.tensordot(w, _per_set_normalised(table)[0], axes=(0, 0))
    return totals, np.concatenate(logs)


def _log_pe_of_parts(tree, parts):
    """``log P(e)`` over consecutive chunks of evidence sets: a task of
    :meth:`JunctionTree.log_probabilities_of_evidence`."""
    return np.concatenate([tree._propagate(part, allow_zero=True)[0] for part in parts])


def _held(new, old) -> bool:
    """Whether a separator marginal is unchanged (relative tolerance 1e-13):
    ``np.allclose`` without its overhead, which dominates on small trees."""
    return bool((np.abs(new - old) <= 1e-13 * np.abs(old)).all())


def _per_set_normalised(table):
    """``(table / each batch member's total, the totals)``, batch axis first; a
    member whose total is zero keeps its zeros."""
    flat = table.reshape(table.shape[0], -1)
    totals = np.add.reduce(flat, axis=1)
    safe = totals if totals.all() else np.where(totals > 0, totals, 1.0)
    return (flat / safe[:, None]).reshape(table.shape), totals


def _ratio(new, old):
    """``new / old`` with ``0 / 0 = 0``: a separator state the old marginal
    rules out stays ruled out."""
    # the operands are a batch and one row of the same table, or a row and a scalar
    shape = new.shape if new.size >= old.size else old.shape
    return np.divide(new, old, out=np.zeros(shape), where=old > 0)
