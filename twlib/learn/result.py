"""The record every learner returns."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..network import BayesianNetwork

__all__ = ["LearnResult"]


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
        ``"optimal"``, ``"complete"`` (a heuristic ran to its end),
        ``"time_limit"`` or ``"node_limit"``.
    stats : dict
        Search statistics (time in seconds under ``"seconds"``, counts, ...).
    parents : dict
        The structure: each variable's parent names.
    elimination_order, width, ktree
        For bounded-tree-width learners: an elimination order of the moral
        graph, its width (checked <= k before returning) and the k-tree.
    """

    network: BayesianNetwork | None
    score: float
    status: str
    stats: dict = field(default_factory=dict)
    parents: dict | None = None
    elimination_order: list | None = None
    width: int | None = None
    ktree: object | None = None
