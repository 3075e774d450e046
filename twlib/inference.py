"""Exact inference in discrete Bayesian networks: variable elimination and junction trees.

* :class:`Factor`: a table over named variables (numpy), with product,
  marginalisation and reduction by evidence.
* :func:`variable_elimination`: ``P(Q | e)`` for one query set.
* :class:`JunctionTree`: built once per network and elimination order, then
  calibrated per evidence set by Shafer-Shenoy message passing (collect to a
  root, distribute back), giving every variable's posterior in two passes.
  Messages are normalised as they go and their scales accumulated in log
  space, so long chains do not underflow and ``P(e)`` is exact.
  :meth:`JunctionTree.posteriors_batch` calibrates many evidence sets at once,
  vectorised over a leading axis.

Evidence is a dict ``{variable: state}`` with the state given by its label or
its index.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import networkx as nx
import numba as nb
import numpy as np

from .errors import BudgetExceeded, InputError, UnknownName
from .factors import Factor, FactorModel, ZeroEvidenceError, labelled_einsum, cpt_factor
from .graphs import clique_tree, elimination_order, moral_graph
from .network import BayesianNetwork

__all__ = ["Factor", "FactorModel", "variable_elimination", "JunctionTree", "ZeroEvidenceError",
           "MemoryBudgetExceeded", "loopy_belief_propagation", "LoopyResult", "gibbs_sample"]


class MemoryBudgetExceeded(BudgetExceeded):
    """Exact inference would need more memory than allowed."""


def _evidence_indices(net: BayesianNetwork, evidence) -> dict:
    """Validate evidence and turn state labels into indices."""
    out = {}
    for v, s in (evidence or {}).items():
        if v not in net.variables:
            raise UnknownName(f"evidence on unknown variable {v!r}")
        states = net.states(v)
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            if not 0 <= s < len(states):
                raise InputError(f"state index {s} out of range for {v!r} ({len(states)} states)")
            out[v] = int(s)
        elif s in states:
            out[v] = states.index(s)
        else:
            raise InputError(f"unknown state {s!r} of {v!r}; its states are {states}")
    return out


def variable_elimination(net: BayesianNetwork, query, evidence=None, order=None) -> np.ndarray:
    """``P(query | evidence)`` by variable elimination.

    ``query`` is a variable or a list of them (the result then has one axis
    per query variable, in that order).  ``order`` eliminates the hidden
    variables; by default min-fill on the moral graph.

    >>> net = BayesianNetwork(["a", "b"], {"a": ["0", "1"], "b": ["0", "1"]}, {"b": ["a"]},
    ...     {"a": np.array([0.5, 0.5]), "b": np.array([[0.9, 0.2], [0.1, 0.8]])})
    >>> variable_elimination(net, "a", {"b": "1"}).round(3).tolist()
    [0.111, 0.889]
    """
    single = isinstance(query, str)
    query = [query] if single else list(query)
    for q in query:
        if q not in net.variables:
            raise UnknownName(f"unknown query variable {q!r}")
    ev = _evidence_indices(net, evidence)
    if set(query) & set(ev):
        raise InputError("a query variable cannot also be observed")
    factors = [cpt_factor(net, v).reduce(ev) for v in net.variables]
    hidden = [v for v in net.variables if v not in ev and v not in query]
    if order is None:
        graph = moral_graph(net.parent_map())
        order = [v for v in elimination_order(graph.subgraph(hidden + query)) if v in hidden]
    for v in order:
        if v not in hidden:
            continue
        touching = [f for f in factors if v in f.variables]
        factors = [f for f in factors if v not in f.variables]
        if touching:
            product = touching[0]
            for f in touching[1:]:
                product = product * f
            factors.append(product.marginalize([v]))
    result = factors[0]
    for f in factors[1:]:
        result = result * f
    result = result.normalize()
    axes = [result.variables.index(q) for q in query]
    values = np.transpose(result.values, axes)
    return values


# ----------------------------------------------------------------- junction tree
class JunctionTree:
    """A calibratable junction tree of a Bayesian network.

    Parameters
    ----------
    model : BayesianNetwork or FactorModel
    order : list, optional
        Elimination order of the moral (interaction) graph (default: min-fill).
        The tree's cliques are those of the order, so its width is the order's.
    max_memory_gb : float
        Refuse, with :class:`MemoryBudgetExceeded`, trees whose tables would
        need more memory than this.

    Examples
    --------
    >>> from twlib.datasets import load_network
    >>> jt = JunctionTree(load_network("asia"))
    >>> post = jt.posteriors({"xray": "yes"})
    >>> round(float(post["lung"][0]), 4)
    0.4887
    """

    def __init__(self, model, order=None, max_memory_gb: float = 4.0):
        model = FactorModel.from_network(model) if isinstance(model, BayesianNetwork) else model
        self.net = model
        graph = model.interaction_graph()
        self.order = list(order) if order is not None else elimination_order(graph, "min-fill")
        cliques, edges = clique_tree(graph, self.order)
        self.cliques = cliques
        self.width = max(len(c) for c in cliques) - 1
        self.arity = {v: model.arity(v) for v in model.variables}
        entries = sum(math.prod(self.arity[v] for v in c) for c in cliques)
        need = 3 * 8 * entries / 2**30          # potentials, beliefs and messages
        if need > max_memory_gb:
            raise MemoryBudgetExceeded(
                f"exact inference on {model.name!r} needs about {need:.1f} GiB (elimination width "
                f"{self.width}, {entries:.3g} table entries), over the budget of {max_memory_gb} GiB")
        potentials = [np.ones([self.arity[v] for v in c]) for c in cliques]
        self.log_const = 0.0        # potentials are rescaled to max 1; this keeps P(e) exact
        for f in model.factors:
            scope = set(f.variables)
            i = min((i for i, c in enumerate(cliques) if scope <= set(c)),
                    key=lambda i: len(cliques[i]))
            p = labelled_einsum(potentials[i], list(cliques[i]), f.values, list(f.variables),
                        list(cliques[i]))
            peak = p.max()
            if peak > 0:
                p = p / peak
                self.log_const += math.log(peak)
            potentials[i] = p
        self.potentials = potentials
        # rooted tree: collect order (children before parents)
        nbrs = {i: [] for i in range(len(cliques))}
        for i, j in edges:
            nbrs[i].append(j)
            nbrs[j].append(i)
        self.parent = {0: None}
        self.preorder = [0]
        for i in self.preorder:
            for j in nbrs[i]:
                if j not in self.parent:
                    self.parent[j] = i
                    self.preorder.append(j)
        self.neighbours = nbrs
        self.separators = {(i, j): tuple(v for v in cliques[i] if v in cliques[j])
                           for i in nbrs for j in nbrs[i]}
        # axes (after the batch axis) of clique i summed out in its message to j
        self._outside = {(i, j): tuple(1 + k for k, v in enumerate(cliques[i])
                                       if v not in cliques[j])
                         for i in nbrs for j in nbrs[i]}
        # each variable's posterior is read from (and its evidence attached to)
        # the smallest clique holding it
        self.reader = {v: min((i for i, c in enumerate(cliques) if v in c),
                              key=lambda i: len(cliques[i])) for v in model.variables}

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
            graph.add_node(i, variables=tuple(clique), entries=int(self.potentials[i].size))
        for i in self.neighbours:
            for j in self.neighbours[i]:
                if i < j:
                    graph.add_edge(i, j, separator=self.separators[(i, j)])
        return graph

    def __repr__(self):
        return (f"JunctionTree({self.net.name!r}: {len(self.cliques)} cliques, width {self.width}, "
                f"largest table {max(p.size for p in self.potentials)})")

    # ------------------------------------------------------------- internals
    def _run(self, evidence_sets, allow_zero: bool = False):
        """Calibrate a batch: returns (beliefs per clique, log P(e) per set).  Evidence
        of probability zero raises ZeroEvidenceError unless ``allow_zero``."""
        batch = len(evidence_sets)
        ev = [_evidence_indices(self.net, e) for e in evidence_sets]
        # evidence likelihoods, attached to each observed variable's home clique
        lam = {}
        for b, e in enumerate(ev):
            for v, s in e.items():
                if v not in lam:
                    lam[v] = np.ones((batch, self.arity[v]))
                lam[v][b] = 0.0
                lam[v][b, s] = 1.0
        attached = {i: [] for i in range(len(self.cliques))}
        for v in lam:
            attached[self.reader[v]].append(v)
        messages = {}
        log_scale = np.zeros(batch)

        def product(i, skip=None):
            """Clique potential times evidence and every incoming message but ``skip``'s."""
            clique = self.cliques[i]
            full = np.empty((batch,) + self.potentials[i].shape)
            full[...] = self.potentials[i]
            for v in attached[i]:
                full *= lam[v].reshape([batch] + [self.arity[u] if u == v else 1 for u in clique])
            for k in self.neighbours[i]:
                if k != skip:
                    full *= self._expand(messages[k, i], k, i)
            return full

        def normalised(m):
            total = m.reshape(batch, -1).sum(axis=1)
            return m / np.where(total > 0, total, 1.0).reshape((batch,) + (1,) * (m.ndim - 1)), total

        for i in reversed(self.preorder):          # collect: leaves to root
            j = self.parent[i]
            if j is None:
                continue
            full = product(i, skip=j)
            m = full.sum(axis=self._outside[i, j])
            messages[i, j], total = normalised(m)
            with np.errstate(divide="ignore"):
                log_scale += np.log(total)
        beliefs = {}
        for i in self.preorder:                    # distribute: root to leaves
            full = product(i)
            beliefs[i] = full
            for j in self.neighbours[i]:
                if self.parent.get(j) != i:
                    continue
                # divide out j's own message instead of re-multiplying all others
                # (Hugin's trick; 0/0 := 0 is exact here because j's message is zero
                # exactly where j's side of the tree makes the belief vanish)
                incoming = self._expand(messages[j, i], j, i)
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = np.where(incoming > 0, full / np.where(incoming > 0, incoming, 1.0), 0.0)
                messages[i, j], _ = normalised(ratio.sum(axis=self._outside[i, j]))
        root_total = beliefs[0].reshape(batch, -1).sum(axis=1)
        with np.errstate(divide="ignore"):
            log_pe = self.log_const + log_scale + np.log(root_total)
        zero = np.flatnonzero(~np.isfinite(log_pe))
        if zero.size and not allow_zero:
            which = "the evidence" if batch == 1 else f"evidence set {int(zero[0])}"
            raise ZeroEvidenceError(f"{which} has probability zero: "
                                    f"{evidence_sets[int(zero[0])]}")
        return beliefs, log_pe

    def _expand(self, message, j, i):
        """Message from j to i (batch x separator, in j's variable order) broadcast
        against clique i's axes."""
        sep = self.separators[j, i]
        order = sorted(range(len(sep)), key=lambda k: self.cliques[i].index(sep[k]))
        m = np.transpose(message, [0] + [1 + k for k in order])
        shape = [m.shape[0]] + [self.arity[v] if v in sep else 1 for v in self.cliques[i]]
        return m.reshape(shape)

    # ---------------------------------------------------------------- public
    def posteriors_batch(self, evidence_sets, chunk: int | None = None):
        """Posteriors of every variable for many evidence sets at once.

        Returns ``(posteriors, log_pe)``: ``posteriors[v]`` has shape
        ``(len(evidence_sets), r_v)`` (an observed variable gets its indicator)
        and ``log_pe`` the natural log of ``P(e)`` per set.  Sets are processed
        in chunks so that no clique table exceeds about 32 million entries.
        """
        evidence_sets = list(evidence_sets)
        if not evidence_sets:
            raise InputError("no evidence sets given")
        if chunk is None:
            chunk = max(1, int(32_000_000 // max(p.size for p in self.potentials)))
        posts = {v: [] for v in self.net.variables}
        logs = []
        for start in range(0, len(evidence_sets), chunk):
            beliefs, log_pe = self._run(evidence_sets[start:start + chunk])
            logs.append(log_pe)
            for v, i in self.reader.items():
                axes = tuple(k + 1 for k, u in enumerate(self.cliques[i]) if u != v)
                marginal = beliefs[i].sum(axis=axes)
                posts[v].append(marginal / marginal.sum(axis=1, keepdims=True))
        return {v: np.concatenate(p) for v, p in posts.items()}, np.concatenate(logs)

    def posteriors(self, evidence=None) -> dict:
        """``{variable: P(variable | evidence)}`` for every variable."""
        posts, _ = self.posteriors_batch([evidence or {}])
        return {v: p[0] for v, p in posts.items()}

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
        holders = [i for i, c in enumerate(self.cliques) if set(variables) <= set(c)]
        if not holders:
            raise InputError(f"{variables} share no clique of the junction tree; "
                             "joint() answers only within a clique")
        i = min(holders, key=lambda i: len(self.cliques[i]))
        beliefs, _ = self._run([evidence or {}])
        clique = list(self.cliques[i])
        table = beliefs[i][0].sum(axis=tuple(k for k, v in enumerate(clique) if v not in variables))
        kept = [v for v in clique if v in variables]
        table = np.transpose(table, [kept.index(v) for v in variables])
        return table / table.sum()

    def log_probability_of_evidence(self, evidence=None) -> float:
        """Natural log of ``P(evidence)``."""
        return float(self._run([evidence or {}])[1][0])

    def log_probabilities_of_evidence(self, evidence_sets, chunk: int | None = None) -> np.ndarray:
        """Natural log of ``P(e)`` for many evidence sets; ``-inf`` where impossible.

        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> np.round(jt.log_probabilities_of_evidence([{}, {"tub": "yes"}]), 3).tolist()
        [0.0, -4.566]
        """
        evidence_sets = list(evidence_sets)
        if chunk is None:
            chunk = max(1, int(32_000_000 // max(p.size for p in self.potentials)))
        return np.concatenate([self._run(evidence_sets[i:i + chunk], allow_zero=True)[1]
                               for i in range(0, len(evidence_sets), chunk)])

    def probability_of_evidence(self, evidence=None) -> float:
        """``P(evidence)`` (may underflow to 0 for very unlikely evidence; see the log form)."""
        return math.exp(self.log_probability_of_evidence(evidence))


# ------------------------------------------------------------ loopy belief propagation
@dataclass
class LoopyResult:
    """Approximate marginals from loopy belief propagation."""

    posteriors: dict
    converged: bool
    iterations: int
    max_change: float


def loopy_belief_propagation(model, evidence=None, damping: float = 0.5, tol: float = 1e-8,
                             max_iter: int = 500) -> LoopyResult:
    """Sum-product message passing on the factor graph (exact on trees).

    Messages are updated in parallel and damped: ``new = damping * old +
    (1 - damping) * update``.  Stops when no belief moves by more than ``tol``
    or after ``max_iter`` sweeps; ``converged`` says which.

    >>> from twlib.datasets import load_network
    >>> res = loopy_belief_propagation(load_network("asia"), {"xray": "yes"})
    >>> res.converged, round(float(res.posteriors["lung"][0]), 2)
    (True, 0.49)
    """
    if not 0 <= damping < 1:
        raise InputError(f"damping must lie in [0, 1), got {damping}")
    model = FactorModel.from_network(model) if isinstance(model, BayesianNetwork) else model
    ev = _evidence_indices(model, evidence)
    factors = [f.reduce(ev) for f in model.factors]
    factors = [f for f in factors if f.variables]
    free = [v for v in model.variables if v not in ev]
    arity = {v: model.arity(v) for v in free}
    to_var = {(k, v): np.full(arity[v], 1.0 / arity[v]) for k, f in enumerate(factors)
              for v in f.variables}
    to_fac = dict(to_var)
    holding = {v: [k for k, f in enumerate(factors) if v in f.variables] for v in free}

    def beliefs():
        out = {}
        for v in free:
            b = np.ones(arity[v])
            for k in holding[v]:
                b = b * to_var[k, v]
            total = b.sum()
            if total <= 0:
                raise ZeroEvidenceError("the evidence has probability zero (beliefs vanished)")
            out[v] = b / total
        return out

    current = beliefs()
    change, it = math.inf, 0
    for it in range(1, max_iter + 1):
        for (k, v) in to_fac:
            msg = np.ones(arity[v])
            for j in holding[v]:
                if j != k:
                    msg = msg * to_var[j, v]
            to_fac[k, v] = msg / msg.sum() if msg.sum() > 0 else msg
        new = {}
        for k, f in enumerate(factors):
            for v in f.variables:
                ops = [f.values, list(f.variables)]
                for u in f.variables:
                    if u != v:
                        ops += [to_fac[k, u], [u]]
                m = labelled_einsum(*ops, [v])
                total = m.sum()
                m = m / total if total > 0 else np.full(arity[v], 1.0 / arity[v])
                new[k, v] = damping * to_var[k, v] + (1 - damping) * m
        to_var = new
        updated = beliefs()
        change = max(float(np.abs(updated[v] - current[v]).max()) for v in free) if free else 0.0
        current = updated
        if change < tol:
            break
    posteriors = {}
    for v in model.variables:
        if v in ev:
            p = np.zeros(model.arity(v))
            p[ev[v]] = 1.0
            posteriors[v] = p
        else:
            posteriors[v] = current[v]
    return LoopyResult(posteriors, change < tol, it, change)


# --------------------------------------------------------------------- Gibbs sampling
@nb.njit(cache=True)
def _gibbs_chain(state, arity, scopes, sizes, strides, offsets, values, var_ptr, var_fac,
                 sweeps, burn_in, thin, uniforms, out, out_start):
    n = state.shape[0]
    probs = np.empty(arity.max())
    row = out_start
    u = 0
    for sweep in range(sweeps):
        for v in range(n):
            r = arity[v]
            total = 0.0
            for k in range(r):
                p = 1.0
                for t in range(var_ptr[v], var_ptr[v + 1]):
                    f = var_fac[t]
                    index = offsets[f]
                    for j in range(sizes[f]):
                        w = scopes[f, j]
                        index += (k if w == v else state[w]) * strides[f, j]
                    p *= values[index]
                probs[k] = p
                total += p
            x = uniforms[u] * total
            u += 1
            k = 0
            if total > 0.0:
                acc = probs[0]
                while k < r - 1 and acc <= x:
                    k += 1
                    acc += probs[k]
            else:                       # stuck in a zero-probability state: move uniformly
                k = min(int(uniforms[u - 1] * r), r - 1)
            state[v] = k
        if sweep >= burn_in and (sweep - burn_in) % thin == 0 and row < out.shape[0]:
            out[row] = state
            row += 1
    return row


def gibbs_sample(model, n_samples: int, burn_in: int = 1000, restarts: int = 10, thin: int = 1,
                 random_state=None):
    """Draw rows from a Markov network (or any factor model) by Gibbs sampling.

    ``restarts`` chains start from uniformly random states; each discards
    ``burn_in`` sweeps and then keeps every ``thin``-th sweep until it has
    contributed its share of the ``n_samples`` rows, as Nie et al. (2016)
    sampled the UAI competition networks.  Returns a :class:`~twlib.data.Dataset`.
    """
    from .data import Dataset

    model = FactorModel.from_network(model) if isinstance(model, BayesianNetwork) else model
    if n_samples < 1 or restarts < 1 or thin < 1 or burn_in < 0:
        raise InputError("n_samples, restarts and thin must be positive and burn_in >= 0")
    rng = np.random.default_rng(random_state)
    names = model.variables
    index = {v: i for i, v in enumerate(names)}
    arity = np.array([model.arity(v) for v in names], dtype=np.int64)
    width = max(len(f.variables) for f in model.factors)
    n_f = len(model.factors)
    scopes = np.zeros((n_f, width), dtype=np.int64)
    strides = np.zeros((n_f, width), dtype=np.int64)
    sizes = np.zeros(n_f, dtype=np.int64)
    offsets = np.zeros(n_f, dtype=np.int64)
    flat, pos = [], 0
    for k, f in enumerate(model.factors):
        sizes[k] = len(f.variables)
        scopes[k, :sizes[k]] = [index[v] for v in f.variables]
        offsets[k] = pos
        flat.append(np.ascontiguousarray(f.values, dtype=float).ravel())
        strides[k, :sizes[k]] = np.cumprod([1] + list(f.values.shape[::-1]))[:-1][::-1]
        pos += f.values.size
    values = np.concatenate(flat)
    holders = [[k for k, f in enumerate(model.factors) if v in f.variables] for v in names]
    var_ptr = np.concatenate([[0], np.cumsum([len(h) for h in holders])]).astype(np.int64)
    var_fac = np.array([k for h in holders for k in h], dtype=np.int64)
    out = np.zeros((n_samples, len(names)), dtype=np.int64)
    per_chain = -(-n_samples // restarts)
    row = 0
    for _ in range(restarts):
        sweeps = burn_in + per_chain * thin
        state = np.array([rng.integers(a) for a in arity], dtype=np.int64)
        uniforms = rng.random(sweeps * len(names))
        row = _gibbs_chain(state, arity, scopes, sizes, strides, offsets, values, var_ptr,
                           var_fac, sweeps, burn_in, thin, uniforms, out, row)
    return Dataset(out, names, [model.states(v) for v in names])
