"""The two results every inference path returns: :class:`MPEResult` and :class:`Marginals`.

Whichever method answered (the junction tree, variable elimination, the
search portfolio, cutset conditioning, loopy belief propagation), a most
probable explanation comes back as an :class:`MPEResult` and posterior
marginals as a :class:`Marginals`, each saying which method answered
(``method``), what is proved (``status`` and ``bound``, or ``exact`` and the
bounds) and what it cost (``stats``).  The gap between a value and its proved
bound is ``log_gap``, a difference of natural logs (the learners' ``LearnResult``
reports ``relative_gap``, a fraction of the score).

Many evidence sets answered in one batched pass come back as an
:class:`MPEBatch` or a :class:`MarginalsBatch`: arrays with a row per set for
bulk use, and each set's :class:`MPEResult` or :class:`Marginals` on demand.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .. import clock
from ..errors import BudgetExceeded, ZeroEvidenceError

__all__ = ["MPEResult", "Marginals", "MPEBatch", "MarginalsBatch"]


@dataclass
class MPEResult:
    """The most probable explanation found, and what is proved about it.

    ``assignment`` maps every variable to a state label (evidence included;
    for a marginal MAP, every query variable), ``log_value`` is the natural log
    of its joint probability (of the model's unnormalised product for a Markov
    network; of the query's marginal for a marginal MAP), ``bound`` a proved
    upper bound on the optimum's, ``status`` ``"optimal"``, ``"time_limit"``
    or ``"interrupted"``, and ``method`` says which method answered.
    ``stats["seconds"]`` is the time it took; a search's
    ``stats["history"]`` holds ``(seconds, log_value, bound)`` each time the
    incumbent improved, at most every quarter second while only the bound
    falls, and at the end.

    >>> res = MPEResult({"a": "yes"}, -1.5, -1.2, "time_limit", "search")
    >>> round(res.log_gap, 3)
    0.3
    """

    assignment: dict
    log_value: float
    bound: float
    status: str
    method: str
    stats: dict = field(default_factory=dict)

    @property
    def log_gap(self) -> float:
        """``bound - log_value``: 0 when the assignment is proved optimal."""
        return max(self.bound - self.log_value, 0.0)

    @classmethod
    def exact(cls, assignment, log_value, method, **stats) -> "MPEResult":
        """An optimal answer (its bound is its value)."""
        return cls(assignment, float(log_value), float(log_value), "optimal", method, stats)

    @classmethod
    def of_search(cls, model, states, value, evidence, log_value, status, bound, time_limit,
                  method, history, started, stats) -> "MPEResult":
        """The result of a search of ``model`` that ended with ``status``,
        incumbent ``states`` (state indices) of value ``value`` and proved
        ``bound``: the evidence ({variable index: state}) written in and the
        value recomputed from the model by ``log_value``."""
        if not np.isfinite(value):
            if status == "optimal":
                raise ZeroEvidenceError("the evidence has probability zero")
            raise BudgetExceeded(f"no assignment of non-zero probability was found in "
                                 f"{time_limit} s")
        for v, s in evidence.items():
            states[v] = s
        value = float(log_value(states))
        bound = value if status == "optimal" else max(bound, value)
        history.append((clock.now() - started, value, bound))
        assignment = model.labelled(states)
        return cls(assignment, value, float(bound), status, method, {**stats, "history": history})


@dataclass
class Marginals(Mapping):
    """Posterior marginals and ``log P(e)``, exact or bounded.

    ``posteriors[v]`` is ``P(v | e)`` (exact, or estimated: see ``exact``), and
    the result reads as that mapping too (``result[v]``, ``list(result)``);
    ``log_z`` is the natural log of ``P(e)`` (of ``Z(e)``, the sum of the
    unnormalised product, for a Markov network; ``nan`` where the method does
    not compute it).  When ``exact`` is False, ``lower``/``upper`` bound each
    posterior where the method proves bounds (``None`` where it does not) and
    ``log_z_bounds`` bounds ``log_z``.  ``method`` names the method that
    answered and ``stats`` what it cost.

    >>> m = Marginals({"a": np.array([0.25, 0.75])}, np.log(0.5), True, "junction tree")
    >>> m["a"].tolist(), list(m), m.log_z_bounds == (m.log_z, m.log_z)
    ([0.25, 0.75], ['a'], True)
    """

    posteriors: dict
    log_z: float
    exact: bool
    method: str
    log_z_bounds: tuple | None = None
    lower: dict | None = None
    upper: dict | None = None
    stats: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.log_z_bounds is None:
            self.log_z_bounds = ((self.log_z, self.log_z) if self.exact
                                 else (-np.inf, np.inf))

    def __getitem__(self, variable):
        return self.posteriors[variable]

    def __iter__(self):
        return iter(self.posteriors)

    def __len__(self):
        return len(self.posteriors)


class _Pair(tuple):
    """A two-item tuple that also carries named fields, so that a batch result
    unpacks as the ``(arrays, logs)`` pair it used to be; a subclass says what
    ``result(i)``, set ``i``'s answer, is."""

    _extra = ()

    def __new__(cls, first, second, **extra):
        pair = super().__new__(cls, (first, second))
        for name in cls._extra:
            setattr(pair, name, extra[name])
        return pair

    def __reduce__(self):
        return _rebuild, (type(self), tuple(self), {n: getattr(self, n) for n in self._extra})

    @property
    def sets(self) -> int:
        """How many evidence sets the batch answers."""
        return len(self[1])

    def results(self) -> list:
        """Every set's answer, in the order the sets were given."""
        return [self.result(i) for i in range(self.sets)]


def _rebuild(cls, pair, extra):
    return cls(*pair, **extra)


class MPEBatch(_Pair):
    """The most probable explanations of many evidence sets, from one batched pass.

    ``states`` (sets x variables, state indices in ``variables`` order) and
    ``log_values`` (the natural log of ``P(x, e)`` per set, ``-inf`` for an
    impossible set when allowed) serve bulk use, and the batch unpacks as that
    pair.  ``result(i)`` is set ``i``'s answer as the :class:`MPEResult` every
    MPE path returns, ``results()`` all of them; ``sets`` counts them.

    >>> batch = MPEBatch(np.array([[0, 1]]), np.array([-1.5]), variables=["a", "b"],
    ...                  labels=[["no", "yes"], ["no", "yes"]], method="junction tree")
    >>> states, log_values = batch
    >>> batch.result(0).assignment, batch.result(0).status, batch.sets
    ({'a': 'no', 'b': 'yes'}, 'optimal', 1)
    """

    _extra = ("variables", "labels", "method")

    @property
    def states(self) -> np.ndarray:
        """State indices, sets x variables."""
        return self[0]

    @property
    def log_values(self) -> np.ndarray:
        """``log P(x, e)`` per set."""
        return self[1]

    def result(self, i: int) -> MPEResult:
        """Set ``i``'s MPE; an impossible set (kept by ``allow_zero``) raises
        :class:`ZeroEvidenceError`."""
        if not np.isfinite(self.log_values[i]):
            raise ZeroEvidenceError(f"evidence set {i} has probability zero")
        row = self.states[i]
        assignment = {v: self.labels[j][row[j]] for j, v in enumerate(self.variables)}
        return MPEResult.exact(assignment, self.log_values[i], self.method)


class MarginalsBatch(_Pair):
    """Posterior marginals of many evidence sets, from one batched pass.

    ``posteriors[v]`` (sets x states of ``v``) and ``log_z`` (the natural log
    of ``P(e)`` per set) serve bulk use, and the batch unpacks as that pair.
    ``result(i)`` is set ``i``'s answer as the :class:`Marginals` every
    marginal path returns, ``results()`` all of them; ``sets`` counts them.

    >>> batch = MarginalsBatch({"a": np.array([[0.25, 0.75]])}, np.array([-0.7]),
    ...                        method="junction tree")
    >>> posteriors, log_z = batch
    >>> batch.result(0)["a"].tolist(), batch.result(0).exact, batch.sets
    ([0.25, 0.75], True, 1)
    """

    _extra = ("method",)

    @property
    def posteriors(self) -> dict:
        """Per variable, its posterior in each set (sets x states)."""
        return self[0]

    @property
    def log_z(self) -> np.ndarray:
        """``log P(e)`` per set."""
        return self[1]

    def result(self, i: int) -> Marginals:
        """Set ``i``'s posteriors and ``log P(e)``."""
        return Marginals({v: p[i] for v, p in self.posteriors.items()},
                         float(self.log_z[i]), True, self.method)
