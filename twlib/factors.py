"""Factors (tables over named discrete variables) and models built from them.

A :class:`FactorModel` is a distribution proportional to a product of factors:
a Markov network, or a Bayesian network whose factors are its CPTs.
"""
from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass

import networkx as nx
import numpy as np

from .errors import InputError, ZeroEvidenceError
from .network import BayesianNetwork

__all__ = ["Factor", "FactorModel", "ZeroEvidenceError", "as_factor_model", "cpt_factor",
           "flat_layout", "labelled_einsum"]

# Entries of the index arrays that :meth:`FactorModel.log_values` fills per block of rows
_LOOKUP_ENTRIES = 2**22


def labelled_einsum(*args):
    """``np.einsum`` in sublist form with arbitrary hashable labels.

    numpy accepts at most 52 distinct integer labels per call; each call here
    relabels the ones it uses, so networks of any size work.

    >>> a, b = np.ones((2, 3)), np.ones(3)
    >>> labelled_einsum(a, ["rain", "wind"], b, ["wind"], ["rain"]).tolist()
    [3.0, 3.0]
    """
    *pairs, out = args
    local = {}
    ops = []
    for k in range(0, len(pairs), 2):
        ops += [pairs[k], [local.setdefault(x, len(local)) for x in pairs[k + 1]]]
    if len(local) > 52:
        raise InputError(f"a table over {len(local)} variables is beyond numpy's einsum")
    return np.einsum(*ops, [local[x] for x in out])


@dataclass(frozen=True)
class Factor:
    """A non-negative table over variables; axis ``i`` of ``values`` is ``variables[i]``.

    >>> f = Factor(("a",), np.array([0.2, 0.8]))
    >>> g = Factor(("a", "b"), np.array([[0.5, 0.5], [0.1, 0.9]]))
    >>> (f * g).marginalize(["a"]).values.round(2).tolist()
    [0.18, 0.82]
    """

    variables: tuple
    values: np.ndarray

    def __post_init__(self):
        if np.ndim(self.values) != len(self.variables):
            raise InputError(f"{len(self.variables)} variables but a {np.ndim(self.values)}-d table")
        if len(set(self.variables)) != len(self.variables):
            raise InputError(f"repeated variables in {self.variables}")

    def __mul__(self, other: "Factor") -> "Factor":
        out = tuple(dict.fromkeys(self.variables + other.variables))
        return Factor(out, labelled_einsum(self.values, list(self.variables),
                                   other.values, list(other.variables), list(out)))

    def marginalize(self, variables) -> "Factor":
        """Sum out ``variables``."""
        gone = [self.variables.index(v) for v in variables]
        keep = tuple(v for v in self.variables if v not in variables)
        return Factor(keep, self.values.sum(axis=tuple(gone)))

    def reduce(self, evidence: dict) -> "Factor":
        """Fix observed variables to their state indices (and drop those axes)."""
        index = tuple(evidence.get(v, slice(None)) for v in self.variables)
        keep = tuple(v for v in self.variables if v not in evidence)
        return Factor(keep, self.values[index])

    def normalize(self) -> "Factor":
        total = self.values.sum()
        if total <= 0:
            raise ZeroEvidenceError("the evidence has probability zero")
        return Factor(self.variables, self.values / total)


def cpt_factor(net: BayesianNetwork, v) -> Factor:
    return Factor((v,) + tuple(net.parents(v)), np.asarray(net.cpt(v)))


class FactorModel:
    """A distribution proportional to a product of non-negative factors.

    Markov networks (UAI ``MARKOV`` files) are such models; a Bayesian network
    is one whose factors are its CPTs (:meth:`from_network`).  Each factor is
    checked (known variables, their shape, finite and non-negative) unless
    ``check=False``, for a caller that derives them from a checked model's.

    ``flat_logs`` is None, or the log tables of the factors as flat arrays over
    variable indices (:func:`twlib.inference.flat.flat_tables`) when the model
    was made from them (:meth:`from_flat_logs`): the solvers read those
    directly, and the factors are made only when first read.  Either way
    :meth:`flat_log_tables` gives them, made once.
    """

    def __init__(self, variables, states: dict, factors, *, name: str = "model",
                 check: bool = True):
        self.variables = list(variables)
        self._states = {v: list(states[v]) for v in self.variables}
        self.factors = factors              # the setter also sets flat_logs to None
        self.name = name
        if check:
            self._check()

    @classmethod
    def from_flat_logs(cls, variables, states: dict, tab, *, name: str = "model"
                       ) -> "FactorModel":
        """The model whose factors are the exponentials of the flat log tables
        ``tab`` (``(ptr, var, stride, offset, values)`` over indices into
        ``variables``, each table over distinct variables with their numbers
        of states), unchecked: for a caller that derived them from a checked
        model's (the presolve of :mod:`twlib.inference.presolve`).

        >>> tab = (np.array([0, 2]), np.array([1, 0]), np.array([2, 1]), np.array([0]),
        ...        np.log([1.0, 2.0, 3.0, 4.0]))
        >>> model = FactorModel.from_flat_logs(["a", "b"], {"a": [0, 1], "b": [0, 1]}, tab)
        >>> model.factors[0].variables, model.factors[0].values.round(9).tolist()
        (('b', 'a'), [[1.0, 2.0], [3.0, 4.0]])
        """
        model = cls(variables, states, (), name=name, check=False)
        model._factors, model.flat_logs = None, tab
        return model

    @property
    def factors(self) -> list:
        """The factors, made from :attr:`flat_logs` when first read if the model
        was made from them."""
        if self._factors is None:
            ptr, var, _, offset, values = self.flat_logs
            ends = np.append(offset[1:], len(values))
            scopes, names = var.tolist(), self.variables
            self._factors = [
                Factor(tuple([names[v] for v in scopes[ptr[t]:ptr[t + 1]]]),
                       np.exp(values[offset[t]:ends[t]]).reshape(
                           [self.arity(names[v]) for v in scopes[ptr[t]:ptr[t + 1]]]))
                for t in range(len(offset))]
        return self._factors

    @factors.setter
    def factors(self, factors) -> None:
        self._factors = list(factors)
        self.flat_logs = self._flat_made = None

    def flat_log_tables(self) -> tuple:
        """The factors' log tables as flat arrays ``(ptr, var, stride, offset,
        values)`` over variable indices, in factor order (the form of
        :func:`twlib.inference.flat.flat_tables`): :attr:`flat_logs` when the
        model was made from them, else made at the first call and kept.  Do not
        change them: every later call returns the same arrays.

        >>> model = FactorModel(["a", "b"], {"a": [0, 1], "b": [0, 1, 2]},
        ...                     [Factor(("b", "a"), np.ones((3, 2)))])
        >>> [a.tolist() for a in model.flat_log_tables()[:4]]
        [[0, 2], [1, 0], [2, 1], [0]]
        """
        if self.flat_logs is not None:
            return self.flat_logs
        if self._flat_made is None:
            self._flat_made = _flat_logs_of(self)
        return self._flat_made

    def _check(self):
        """Every factor over known variables, of their shape, non-negative and finite."""
        known = set(self.variables)
        for f in self.factors:
            unknown = set(f.variables) - known
            if unknown:
                raise InputError(f"factor over unknown variables {sorted(unknown)}")
            shape = tuple(len(self._states[v]) for v in f.variables)
            if f.values.shape != shape:
                raise InputError(f"factor over {f.variables} has shape {f.values.shape}, "
                                 f"expected {shape}")
            if np.any(f.values < 0) or not np.all(np.isfinite(f.values)):
                raise InputError(f"factor over {f.variables} has negative or non-finite entries")

    @classmethod
    def from_network(cls, net: BayesianNetwork) -> "FactorModel":
        return cls(net.variables, {v: net.states(v) for v in net.variables},
                   [cpt_factor(net, v) for v in net.variables], name=net.name)

    def states(self, v) -> list:
        return list(self._states[v])

    def arity(self, v) -> int:
        return len(self._states[v])

    def labelled(self, row) -> dict:
        """State indices ``row`` (one per variable, in model order) as
        ``{variable: state}``, the form of an answer.

        >>> model = FactorModel(["a", "b"], {"a": ["no", "yes"], "b": ["lo", "hi"]}, [])
        >>> model.labelled([1, 0])
        {'a': 'yes', 'b': 'lo'}
        """
        return {v: self._states[v][s] for v, s in zip(self.variables, np.asarray(row).tolist())}

    def state_indices(self, assignment: dict) -> dict:
        """``{variable: state}`` as ``{variable: state index}`` (the inverse of
        :meth:`labelled`, for any subset of the variables).

        >>> model = FactorModel(["a"], {"a": ["no", "yes"]}, [])
        >>> model.state_indices({"a": "yes"})
        {'a': 1}
        """
        return {v: self._states[v].index(s) for v, s in assignment.items()}

    def log_values(self, states) -> np.ndarray:
        """``sum over factors of log f(x)`` (the unnormalised log-probability) of
        each row of state indices (one column per variable, in model order);
        ``-inf`` where a factor is zero.

        >>> model = FactorModel(["a", "b"], {"a": ["0", "1"], "b": ["0", "1"]},
        ...                     [Factor(("a", "b"), np.array([[1.0, 2.0], [3.0, 4.0]]))])
        >>> np.exp(model.log_values([[0, 1], [1, 1]])).tolist()
        [2.0, 4.0]
        """
        rows = np.atleast_2d(np.asarray(states, dtype=np.int64))
        if rows.shape[1] != len(self.variables):
            raise InputError(f"rows have {rows.shape[1]} states, the model {len(self.variables)} "
                             "variables")
        arity = np.array([len(self._states[v]) for v in self.variables])
        if (rows < 0).any() or (rows >= arity).any():
            raise InputError("a state index is out of range for its variable")
        return _flat_log_values(rows, self.flat_log_tables())

    def reduced(self, fixed: dict) -> tuple:
        """``(log constant, model)``: this model with the variables of ``fixed``
        (variable -> state index) set to those states and dropped.  A factor left
        with no variable goes into the constant; when one of them is zero the
        constant is ``-inf`` and the model None.

        >>> model = FactorModel(["a", "b"], {"a": ["0", "1"], "b": ["0", "1"]},
        ...                     [Factor(("a", "b"), np.array([[1.0, 2.0], [3.0, 4.0]])),
        ...                      Factor(("a",), np.array([0.5, 2.0]))])
        >>> constant, rest = model.reduced({"a": 1})
        >>> round(float(np.exp(constant)), 6), rest.variables, rest.factors[0].values.tolist()
        (2.0, ['b'], [3.0, 4.0])
        """
        factors, constant = [], 0.0
        for f in self.factors:
            g = f.reduce(fixed) if any(v in fixed for v in f.variables) else f
            if g.variables:
                factors.append(g)
            elif g.values > 0:
                constant += math.log(float(g.values))
            else:
                return -math.inf, None
        # slices of factors this model checked when it was made: not checked again
        # (conditioning builds one such model per assignment of its cutset)
        out = copy.copy(self)
        out.variables = [v for v in self.variables if v not in fixed]
        out._states = {v: self._states[v] for v in out.variables}
        out.factors = factors
        return constant, out

    def interaction_graph(self):
        """Undirected graph joining every pair of variables that share a factor
        (for a Bayesian network: its moral graph)."""
        graph = nx.Graph()
        graph.add_nodes_from(self.variables)
        if self._factors is None:           # the scopes, without making the tables
            ptr, var = self.flat_logs[0].tolist(), self.flat_logs[1].tolist()
            scopes = ([self.variables[v] for v in var[ptr[t]:ptr[t + 1]]]
                      for t in range(len(ptr) - 1))
        else:
            scopes = (f.variables for f in self.factors)
        # one call for every pair: a call per factor costs more than its pairs
        graph.add_edges_from(itertools.chain.from_iterable(
            itertools.combinations(scope, 2) for scope in scopes))
        return graph


def flat_layout(scopes, arrays) -> tuple:
    """Tables over the variable indices ``scopes``, with C-ordered ``arrays``
    (one axis per variable of the scope), as flat arrays ``(ptr, var, stride,
    offset, values)``: table ``t`` has variables ``var[ptr[t]:ptr[t + 1]]`` with
    those strides, from ``offset[t]`` in ``values``.  No Python step per table
    but reading its scope and shape: with a thousand small tables, a stride
    loop and an append per table cost more than the entries.  The form every
    compiled search reads (:func:`twlib.inference.flat.flat_tables`).

    >>> [a.tolist() for a in flat_layout([(1, 0)], [np.arange(6.0).reshape(3, 2)])]
    [[0, 2], [1, 0], [2, 1], [0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    """
    var = np.fromiter(itertools.chain.from_iterable(scopes), dtype=np.int64)
    lengths = np.fromiter(map(len, scopes), dtype=np.int64, count=len(scopes))
    sides = np.fromiter(itertools.chain.from_iterable(map(np.shape, arrays)), dtype=np.int64,
                        count=len(var))
    return _layout(var, lengths, sides, arrays)


def _layout(var, lengths, sides, arrays) -> tuple:
    """:func:`flat_layout` of tables whose scopes are ``var`` cut into
    ``lengths``, with ``sides`` states in each slot."""
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    stride = np.ones(len(var), dtype=np.int64)
    sizes = np.ones(len(lengths), dtype=np.int64)
    # C order: a slot's stride is the product of the sides after it in its
    # table, taken at once for all the tables of one length
    for length in np.unique(lengths[lengths > 0]).tolist():
        tables = np.flatnonzero(lengths == length)
        slots = ptr[tables][:, None] + np.arange(length)
        after = np.cumprod(sides[slots][:, ::-1], axis=1)[:, ::-1]
        stride[slots[:, :-1]] = after[:, 1:]
        sizes[tables] = after[:, 0]
    offset = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(sizes[:-1], out=offset[1:])
    # one copy: the tables can be large
    values = (np.concatenate(arrays, axis=None, dtype=float) if len(arrays) else np.empty(0))
    return ptr, var, stride, offset, values


def _flat_logs_of(model) -> tuple:
    """:meth:`FactorModel.flat_log_tables` made from the factors, with one
    logarithm over all their entries rather than one per factor."""
    index = {v: k for k, v in enumerate(model.variables)}
    factors = model.factors
    # no list per factor: a model read from a file can have tens of thousands
    var = np.fromiter(map(index.__getitem__,
                          itertools.chain.from_iterable(f.variables for f in factors)),
                      dtype=np.int64)
    lengths = np.fromiter((len(f.variables) for f in factors), dtype=np.int64,
                          count=len(factors))
    arity = np.array([model.arity(v) for v in model.variables], dtype=np.int64)
    ptr, var, stride, offset, values = _layout(var, lengths, arity[var],
                                               [f.values for f in factors])
    with np.errstate(divide="ignore"):
        np.log(values, out=values)
    return ptr, var, stride, offset, values


def _flat_log_values(rows, tab) -> np.ndarray:
    """``FactorModel.log_values`` of ``rows`` from the flat log tables ``tab``,
    a block of rows at a time so that the work arrays stay small."""
    ptr, var, stride, offset, values = tab
    out = np.empty(len(rows))
    block = max(1, _LOOKUP_ENTRIES // (len(var) + 1))
    for start in range(0, len(rows), block):
        part = rows[start:start + block]
        # each table's entry at each row: its offset plus the row's states at its strides
        steps = np.zeros((len(part), len(var) + 1), dtype=np.int64)
        np.cumsum(part[:, var] * stride, axis=1, out=steps[:, 1:])
        entries = offset + steps[:, ptr[1:]] - steps[:, ptr[:-1]]
        # added table after table, as a running sum: one row alone gets the same
        # last bit as among others (a row sum's pairwise order depends on the shape)
        out[start:start + block] = (np.cumsum(values[entries], axis=1)[:, -1] if len(offset)
                                    else 0.0)
    return out


def as_factor_model(model) -> FactorModel:
    """``model`` as a :class:`FactorModel`: a Bayesian network becomes its CPTs;
    anything else but a FactorModel is an InputError.

    >>> from twlib.datasets import load_network
    >>> len(as_factor_model(load_network("asia")).factors)
    8
    """
    if isinstance(model, BayesianNetwork):
        return FactorModel.from_network(model)
    if not isinstance(model, FactorModel):
        raise InputError(f"expected a BayesianNetwork or FactorModel, got {type(model).__name__}")
    return model
