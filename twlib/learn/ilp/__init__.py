"""Exact learning by integer programming (GOBNILP's formulation, on SCIP).

A run of :func:`learn` goes through the package's modules in this order:
``relaxation`` solves the LP relaxation by column generation over a few families
at a time and returns the cuts it needed with a proved bound; ``clusters``
separates the cluster (acyclicity) and set-packing rows for it and for the
branch and cut; ``programme`` builds SCIP's model from the kept parent sets, with
an elimination-order formulation of the width bound when ``k`` is given, and
runs the branch and cut with a sink-finding primal heuristic; ``restricted`` is
the helper process that solves the programme over the relaxation's columns
alone on large tables.  Background knowledge (:class:`twlib.knowledge.Knowledge`)
enters as the filtered table of parent sets, which *is* the programme.

>>> from twlib.datasets import load_sklearn
>>> res = learn(load_sklearn("iris"), max_parents=2, time_limit=30)
>>> res.status
'optimal'
"""
from .clusters import SolverMissing
from .programme import learn, solve
from .relaxation import lp_bound, scoring_seconds

__all__ = ["learn", "solve", "SolverMissing", "lp_bound", "scoring_seconds"]
