"""The record every learner returns."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..clock import check_time_limit
from ..errors import InputError, InternalError
from ..network import BayesianNetwork

__all__ = ["LearnResult", "fit_to_scores", "relative_gap", "check_width_bound",
           "check_time_limit", "check_knowledge"]


@dataclass
class LearnResult:
    """A learned network with its score and how the search went.

    Attributes
    ----------
    network : BayesianNetwork or None
        None when the learner had no data to fit parameters to (for example
        scores read from a file).
    score : float
        The structure score that was maximised (its name in ``stats["score"]``).
    status : str
        ``"optimal"`` (proved), ``"complete"`` (a heuristic ran to its end),
        ``"time_limit"``, ``"node_limit"``, ``"gap_limit"`` (stopped once
        ``gap_percent`` fell below the gap asked for) or ``"interrupted"``
        (Ctrl-C).
    stats : dict
        Search statistics (time in seconds under ``"seconds"``, counts, ...).
    parents : dict
        The structure: each variable's parent names.
    elimination_order, width, ktree
        For bounded-tree-width learners: an elimination order of the moral
        graph, its width (checked <= k before returning) and the k-tree.
    model
        The learner's own model where it is not a network in the first place
        (LPACJT's :class:`~twlib.learn.thin_jt.ThinJunctionTree`); ``network``
        then holds the same distribution as a Bayesian network.
    upper_bound, gap_percent
        For learners that prove one: a score no admissible network exceeds, and
        the distance of ``score`` from it in percent of ``|score|`` (as MIP
        solvers report a relative gap; inference reports ``log_gap``, a
        difference of logs).
    knowledge
        The :class:`~twlib.knowledge.Knowledge` the learner honoured, or None;
        ``parents`` is checked against it when the record is made, as ``width``
        is against ``k``.
    """

    network: BayesianNetwork | None
    score: float
    status: str
    stats: dict = field(default_factory=dict)
    parents: dict | None = None
    elimination_order: list | None = None
    width: int | None = None
    ktree: object | None = None
    upper_bound: float | None = None
    gap_percent: float | None = None
    model: object | None = None
    knowledge: object | None = None

    def __post_init__(self):
        if self.knowledge is not None and self.parents is not None:
            check_knowledge(self.knowledge, self.parents)


def fit_to_scores(pss, parents: dict, name: str):
    """CPTs for a learned structure from the data behind a parent-set table.

    BDeu tables get Bayesian estimates with the same equivalent sample size;
    BIC and log-likelihood tables get maximum-likelihood ones.  None when the
    table was read from a file and has no data.
    """
    if pss.data is None:
        return None
    if pss.score == "bdeu":
        return BayesianNetwork.fit(pss.data, parents, estimator="bdeu", ess=pss.ess, name=name)
    return BayesianNetwork.fit(pss.data, parents, estimator="mle", name=name)


def relative_gap(score: float, bound: float) -> float:
    """How far ``bound`` lies above ``score``, in percent of ``|score|`` (0 when below).

    >>> relative_gap(-200.0, -199.0)
    0.5
    """
    return 100.0 * max(bound - score, 0.0) / max(abs(score), 1e-12)


def check_width_bound(k, *, n_vars: int | None = None) -> None:
    """Raise InputError unless ``k`` is an integer tree-width bound ``>= 1`` (and
    ``< n_vars`` when given: a bound of ``n - 1`` binds nothing).

    >>> check_width_bound(2, n_vars=3)
    >>> check_width_bound(3, n_vars=3)
    Traceback (most recent call last):
    ...
    twlib.errors.InputError: the tree-width bound must be an integer with 1 <= k < n = 3, got k=3
    """
    whole = not isinstance(k, bool) and isinstance(k, (int, np.integer))
    if n_vars is None and not (whole and k >= 1):
        raise InputError(f"the tree-width bound must be an integer k >= 1, got k={k!r}")
    if n_vars is not None and not (whole and 1 <= k < n_vars):
        raise InputError(f"the tree-width bound must be an integer with 1 <= k < n = {n_vars}, "
                         f"got k={k!r}")


def check_knowledge(knowledge, parents: dict) -> None:
    """Raise InternalError when a learned structure breaks ``knowledge`` (a bug:
    every learner that takes knowledge searches only what it allows)."""
    broken = knowledge.violations(parents) if knowledge else []
    if broken:
        raise InternalError("the learned network breaks the knowledge: " + "; ".join(broken))
