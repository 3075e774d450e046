"""Discrete Bayesian networks: structure, CPTs, estimation, likelihood, sampling.

A CPT is a numpy array with the child's states on axis 0 and one axis per
parent, in the order of ``parents(child)``:
``cpt[x, u_1, ..., u_k] = P(X = x | U_1 = u_1, ..., U_k = u_k)``.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .counting import count, joint_keys
from .data import Dataset, code_dtype
from .errors import InputError, UnknownName
from .graphs import to_digraph, topological_order

__all__ = ["BayesianNetwork", "CPT_ATOL", "ESTIMATORS", "random_network"]

CPT_ATOL = 1e-4      # bnlearn files round CPT entries; their columns sum to 1 within 1e-6
ESTIMATORS = ("mle", "bdeu", "laplace")


class BayesianNetwork:
    """A DAG over discrete variables with a CPT per variable.

    Parameters
    ----------
    variables : list of str
    states : dict name -> list of state labels
    parents : dict name -> list of parent names (missing: no parents)
    cpts : dict name -> ndarray, shape ``(r_child, r_parent_1, ..., r_parent_k)``
    name : str

    Raises
    ------
    ValueError
        Cycles, unknown parents, CPT shapes that do not match the states,
        negative entries or columns that do not sum to one.

    Examples
    --------
    >>> net = BayesianNetwork(["rain", "wet"], {"rain": ["no", "yes"], "wet": ["no", "yes"]},
    ...                       {"wet": ["rain"]},
    ...                       {"rain": np.array([0.8, 0.2]),
    ...                        "wet": np.array([[0.9, 0.1], [0.1, 0.9]])})
    >>> net.parents("wet"), net.cpt("wet")[:, 1].tolist()
    (['rain'], [0.1, 0.9])
    """

    def __init__(self, variables, states: dict, parents: dict, cpts: dict, *,
                 name: str = "unknown"):
        self.name = name
        self.variables = [str(v) for v in variables]
        if len(set(self.variables)) != len(self.variables):
            raise InputError("variable names must be unique")
        vset = set(self.variables)
        for where, d in (("states", states), ("parents", parents), ("cpts", cpts)):
            extra = sorted(set(d) - vset)
            if extra:
                raise InputError(f"{where} given for unknown variables {extra}")
        self._states = {v: [str(s) for s in states[v]] for v in self.variables}
        self._parents = {v: [str(p) for p in parents.get(v, [])] for v in self.variables}
        self._order = topological_order(self._parents)   # raises on cycles / unknown parents
        self._cpts = {}
        for v in self.variables:
            if v not in cpts:
                raise InputError(f"no CPT for variable {v!r}")
            if len(self._states[v]) < 1:
                raise InputError(f"variable {v!r} has no states")
            if len(set(self._parents[v])) != len(self._parents[v]):
                raise InputError(f"repeated parents of {v!r}: {self._parents[v]}")
            shape = (self.arity(v),) + tuple(self.arity(p) for p in self._parents[v])
            table = np.asarray(cpts[v], dtype=np.float64)
            if table.shape != shape:
                raise InputError(f"CPT of {v!r} has shape {table.shape}; its states and parents "
                                 f"{self._parents[v]} need {shape}")
            if not np.all(np.isfinite(table)) or np.any(table < 0):
                raise InputError(f"CPT of {v!r} has negative or non-finite entries")
            sums = table.sum(axis=0)
            if np.any(np.abs(sums - 1) > CPT_ATOL):
                worst = float(np.max(np.abs(sums - 1)))
                raise InputError(f"CPT of {v!r} has columns that do not sum to 1 "
                                 f"(off by up to {worst:.3g})")
            table = table.copy()
            table.setflags(write=False)
            self._cpts[v] = table

    # --------------------------------------------------------------- access
    def __repr__(self):
        arcs = sum(len(p) for p in self._parents.values())
        return f"BayesianNetwork({self.name!r}, {len(self.variables)} variables, {arcs} arcs)"

    def states(self, v) -> list:
        return list(self._states[self._check(v)])

    def arity(self, v) -> int:
        return len(self._states[self._check(v)])

    def parents(self, v) -> list:
        return list(self._parents[self._check(v)])

    def cpt(self, v) -> np.ndarray:
        """The CPT of ``v`` (read-only), child states on axis 0."""
        return self._cpts[self._check(v)]

    def parent_map(self) -> dict:
        return {v: list(ps) for v, ps in self._parents.items()}

    def topological_order(self) -> list:
        return list(self._order)

    @property
    def arcs(self) -> list:
        return [(p, v) for v in self.variables for p in self._parents[v]]

    @property
    def n_parameters(self) -> int:
        """Free parameters: ``sum_i q_i (r_i - 1)``."""
        return int(sum((t.shape[0] - 1) * (t.size // t.shape[0]) for t in self._cpts.values()))

    def draw(self, *, ax=None, **options):
        """Draw the network (see :func:`twlib.drawing.draw_network` for the
        options: highlighted variables, evidence, an assignment, arcs compared
        with another network); returns the matplotlib axes."""
        from .drawing import draw_network

        return draw_network(self, ax=ax, **options)

    def _repr_png_(self):
        from .drawing import network_png

        return network_png(self)

    def to_networkx(self):
        return to_digraph(self._parents)

    def _check(self, v) -> str:
        if v not in self._states:
            raise UnknownName(f"no variable named {v!r} in network {self.name!r}")
        return v

    def allclose(self, other: "BayesianNetwork", *, atol: float = 0.0) -> bool:
        """Same variables, states, parents and CPTs (within ``atol``)."""
        return (self.variables == other.variables
                and all(self._states[v] == other._states[v] for v in self.variables)
                and all(self._parents[v] == other._parents[v] for v in self.variables)
                and all(np.allclose(self._cpts[v], other._cpts[v], rtol=0, atol=atol)
                        for v in self.variables))

    # ----------------------------------------------------------- estimation
    @classmethod
    def fit(cls, data: Dataset, parents: dict, *, estimator: str = "mle", ess: float = 1.0,
            alpha: float = 1.0, name: str = "fitted") -> "BayesianNetwork":
        """CPTs estimated from data for a given structure.

        ``estimator="mle"`` uses relative frequencies (a parent configuration
        never seen gets the uniform distribution); ``"bdeu"`` is the posterior
        mean under the BDeu prior of equivalent sample size ``ess``:
        ``(N_ijk + ess/(q r)) / (N_ij + ess/q)``; ``"laplace"`` adds ``alpha``
        to every cell (additive smoothing): ``(N_ijk + alpha) / (N_ij + r alpha)``.
        BDeu spreads ``ess`` over a family's ``q r`` cells, so a large family is
        barely smoothed; Laplace smooths every parent configuration alike.

        >>> from twlib.datasets import load_network
        >>> data = load_network("asia").sample(20, random_state=0)
        >>> net = BayesianNetwork.fit(data, {"lung": ["smoke"]}, estimator="laplace")
        >>> bool((net.cpt("lung") > 0).all())
        True
        """
        if estimator not in ESTIMATORS:
            raise InputError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
        if estimator == "bdeu" and not ess > 0:
            raise InputError(f"the BDeu equivalent sample size must be positive, got {ess}")
        if estimator == "laplace" and not alpha > 0:
            raise InputError(f"the Laplace pseudo-count alpha must be positive, got {alpha}")
        pm = {v: list(parents.get(v, [])) for v in data.names}
        extra = sorted(set(parents) - set(data.names))
        if extra:
            raise InputError(f"structure names variables that are not in the data: {extra}")
        topological_order(pm)
        cpts = {}
        for v in data.names:
            idx = data.indices(pm[v] + [v])
            table = count(data.values, idx, data.arities[idx]).to_dense().astype(np.float64)
            table = np.moveaxis(table, -1, 0)            # child first
            r = table.shape[0]
            q = table.size // r
            if estimator == "bdeu":
                table = table + ess / (q * r)
            elif estimator == "laplace":
                table = table + alpha
            totals = table.sum(axis=0, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                cpt = np.where(totals > 0, table / totals, 1.0 / r)
            cpts[v] = cpt
        states = {v: data.states[data.index(v)] for v in data.names}
        return cls(data.names, states, pm, cpts, name=name)

    # ------------------------------------------------------------ likelihood
    def _codes(self, data: Dataset) -> np.ndarray:
        """Data columns in network order, checking names and state labels."""
        missing = [v for v in self.variables if v not in data.names]
        if missing:
            raise InputError(f"data lacks the network's variables {missing}")
        for v in self.variables:
            if data.states[data.index(v)] != self._states[v]:
                raise InputError(f"states of {v!r} differ between data and network: "
                                 f"{data.states[data.index(v)]} vs {self._states[v]}")
        return data.values[:, data.indices(self.variables)]

    def log_likelihood(self, data: Dataset, *, per_row: bool = False):
        """Natural-log likelihood of the rows; ``per_row=True`` gives each row's value.

        Rows that the network gives probability zero score ``-inf``.
        """
        values = self._codes(data)
        arities = np.array([self.arity(v) for v in self.variables], dtype=np.int64)
        index = {v: i for i, v in enumerate(self.variables)}
        out = np.zeros(values.shape[0])
        with np.errstate(divide="ignore"):
            for v in self.variables:
                pcols = [index[p] for p in self._parents[v]]
                keys = joint_keys(values, pcols, arities[pcols])
                flat = self._cpts[v].reshape(self.arity(v), -1)
                out += np.log(flat[values[:, index[v]], keys])
        return out if per_row else float(out.sum())

    # --------------------------------------------------------------- sampling
    def sample(self, n: int, *, random_state=None) -> Dataset:
        """``n`` rows by ancestral (forward) sampling, as a :class:`Dataset`.

        >>> net = BayesianNetwork(["a"], {"a": ["x", "y"]}, {}, {"a": np.array([0.3, 0.7])})
        >>> ds = net.sample(1000, random_state=0)
        >>> bool(0.25 < (ds.values[:, 0] == 0).mean() < 0.35)
        True
        """
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise InputError(f"the number of samples must be a positive integer, got {n!r}")
        rng = np.random.default_rng(random_state)
        arities = np.array([self.arity(v) for v in self.variables], dtype=np.int64)
        index = {v: i for i, v in enumerate(self.variables)}
        values = np.zeros((n, len(self.variables)), dtype=code_dtype(int(arities.max())))
        for v in self._order:
            pcols = np.array([index[p] for p in self._parents[v]], dtype=np.int64)
            cumulative = np.ascontiguousarray(np.cumsum(self._cpts[v].reshape(self.arity(v), -1),
                                                        axis=0).T)
            _draw(values, index[v], pcols, arities, cumulative, rng.random(n))
        return Dataset(values, self.variables, [self._states[v] for v in self.variables])


@nb.njit(cache=True)
def _draw(values, col, pcols, arities, cumulative, uniforms):
    """Fill column ``col`` by inverting each row's conditional CDF at a uniform draw."""
    r = cumulative.shape[1]
    for i in range(values.shape[0]):
        key = 0
        for j in range(pcols.shape[0]):
            key = key * arities[pcols[j]] + values[i, pcols[j]]
        u = uniforms[i] * cumulative[key, r - 1]   # rescale: CPT columns sum to 1 only within rounding
        k = 0
        while k < r - 1 and cumulative[key, k] <= u:
            k += 1
        values[i, col] = k


def random_network(n_vars: int, *, n_arcs: int | None = None, max_in: int = 3,
                   max_out: int | None = None, arities=2, concentration: float = 0.5,
                   window: int | None = None, random_state=None,
                   name: str = "random") -> BayesianNetwork:
    """A random Bayesian network, as Nie et al. (2016) built rand50 and rand60.

    Arcs are drawn uniformly among pairs ``i -> j`` with ``i < j`` in a random
    order (so the graph is acyclic) that keep every in-degree ``<= max_in`` and
    out-degree ``<= max_out``; CPT columns are drawn from a symmetric
    Dirichlet(``concentration``) (Beta(0.5, 0.5) for binary variables).

    Parameters
    ----------
    n_vars : int
    n_arcs : int, optional
        Number of arcs (default ``2 * n_vars``); fewer if the degree limits bind.
    arities : int or sequence of int
        Number of states of every variable, or one per variable.
    window : int, optional
        Only join variables at most this far apart in the hidden order; this
        bounds the tree-width by ``window`` (uniform arcs give widths near n/2).

    >>> net = random_network(10, n_arcs=15, max_in=3, random_state=0)
    >>> len(net.arcs), max(len(net.parents(v)) for v in net.variables) <= 3
    (15, True)
    """
    if n_vars < 1:
        raise InputError("a network needs at least one variable")
    rng = np.random.default_rng(random_state)
    n_arcs = 2 * n_vars if n_arcs is None else n_arcs
    max_out = n_vars if max_out is None else max_out
    arity = np.broadcast_to(np.asarray(arities, dtype=np.int64), (n_vars,))
    if np.any(arity < 2):
        raise InputError("every variable needs at least two states")
    names = [f"X{i}" for i in range(n_vars)]
    order = rng.permutation(n_vars)
    reach = n_vars if window is None else window
    pairs = [(order[a], order[b]) for a in range(n_vars)
             for b in range(a + 1, min(n_vars, a + 1 + reach))]
    rng.shuffle(pairs)
    parents = {v: [] for v in names}
    out_degree = np.zeros(n_vars, dtype=np.int64)
    added = 0
    for u, v in pairs:
        if added == n_arcs:
            break
        if len(parents[names[v]]) < max_in and out_degree[u] < max_out:
            parents[names[v]].append(names[u])
            out_degree[u] += 1
            added += 1
    states = {v: [f"s{k}" for k in range(arity[i])] for i, v in enumerate(names)}
    index = {v: i for i, v in enumerate(names)}
    cpts = {}
    for v in names:
        shape = (arity[index[v]],) + tuple(arity[index[p]] for p in parents[v])
        q = int(np.prod(shape[1:], dtype=np.int64))
        table = rng.dirichlet(np.full(shape[0], concentration), size=q).T
        cpts[v] = table.reshape(shape)
    return BayesianNetwork(names, states, parents, cpts, name=name)
