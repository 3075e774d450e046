"""Every learner by name: the one dispatch the estimator and ``twlib learn`` share.

Each learner is imported when it is first asked for, so a command that learns
with one method loads neither the others nor their solvers (nor scikit-learn,
which only the estimator needs).

>>> from twlib.datasets import load_sklearn
>>> res, data = learn_by_name(load_sklearn("iris"), 1, method="chow_liu")
>>> res.width, data.n_vars
(1, 5)
"""
from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

from .. import clock
from ..clock import check_time_limit
from ..data import Dataset, IncompleteDataset, as_dataset, as_frame
from ..errors import InputError
from ..graphs import moral_graph, treewidth_upper_bound
from .result import LearnResult

__all__ = ["learn_by_name", "training_data", "METHODS", "KNOWLEDGE_METHODS", "MISSING"]

#: The learners ``method`` may name; ``"auto"`` is :func:`twlib.learn.bounded.learn`.
METHODS = ("auto", "bounded", "ktree", "chow_liu", "lpacjt", "order_graph", "ilp")
#: The methods that honour a :class:`twlib.knowledge.Knowledge` (``knowledge=``).
KNOWLEDGE_METHODS = ("auto", "bounded", "ktree", "chow_liu", "order_graph", "ilp")
#: What learning does with missing cells (NaN / None).
MISSING = ("em", "error")


def training_data(X, *, missing: str = "em"):
    """The training data as a Dataset, or an IncompleteDataset when cells are
    missing and ``missing="em"``."""
    if missing not in MISSING:
        raise InputError(f"missing must be one of {MISSING}, got {missing!r}")
    if isinstance(X, (Dataset, IncompleteDataset)):
        if isinstance(X, IncompleteDataset) and missing == "error":
            raise InputError(f"the data have {X.n_missing} missing cells and missing='error'")
        return X
    if isinstance(X, np.ndarray):
        X = as_frame(X)
    if isinstance(X, pd.DataFrame) and missing == "em" and X.isna().to_numpy().any():
        return IncompleteDataset.from_pandas(X)
    return as_dataset(X)


def _learner(name: str):
    return importlib.import_module(f"{__package__}.{name}")


def learn_by_name(X, k: int, *, method: str = "auto", score: str = "bic",
                  ess: float = 1.0, parameter_ess: float | None = 1.0,
                  time_limit: float = 60.0, max_iter: int | None = None, random_state=None,
                  progress: bool = False, missing: str = "em", executor=None,
                  knowledge=None) -> tuple[LearnResult, Dataset]:
    """Learn with the learner ``method`` names (see
    :class:`twlib.BoundedTreewidthNetwork` for the parameters); data with missing
    cells go to structural EM.  Returns the result, its ``width`` and
    ``elimination_order`` filled in for every method, and the data as learned from."""
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, got {method!r}")
    if knowledge and method not in KNOWLEDGE_METHODS:
        raise InputError(f"method {method!r} does not take background knowledge; "
                         f"these do: {KNOWLEDGE_METHODS}")
    if executor is not None and method not in ("auto", "bounded", "ilp"):
        raise InputError(f"executor= is used by methods 'bounded' and 'ilp' only, not "
                         f"{method!r}")
    check_time_limit(time_limit)
    started = clock.now()
    data = training_data(X, missing=missing)
    # the limit covers the whole call: coding a wide DataFrame takes seconds
    time_limit = clock.remaining(time_limit, started)
    if isinstance(data, IncompleteDataset):
        if method not in ("auto", "bounded"):
            raise InputError(f"method {method!r} needs complete data; data with "
                             "missing cells are learned by method 'bounded' (structural EM)")
        if score != "bic":
            raise InputError(f"structural EM scores by the observed-data BIC; score "
                             f"{score!r} needs complete data")
        res = _learner("em").structural_em(
            data, k, time_limit=time_limit, parameter_ess=parameter_ess, search_max_iter=max_iter,
            random_state=random_state, progress=progress, executor=executor,
            knowledge=knowledge)
    elif method in ("auto", "bounded"):
        res = _learner("bounded").learn(
            data, k, score=score, ess=ess, parameter_ess=parameter_ess,
            time_limit=time_limit, max_iter=max_iter, random_state=random_state,
            progress=progress, executor=executor, knowledge=knowledge)
    elif method == "ktree":
        res = _learner("ktree").learn(data, k, score=score, ess=ess, time_limit=time_limit,
                                      random_state=random_state, progress=progress,
                                      knowledge=knowledge)
    elif method == "chow_liu":
        if k != 1:
            raise InputError(f"a Chow-Liu tree has tree-width 1; got k={k}")
        res = _learner("chow_liu").learn(data, score=score, ess=ess, knowledge=knowledge)
    elif method == "lpacjt":
        if parameter_ess is None:
            raise InputError("lpacjt smooths its marginals: parameter_ess must be > 0")
        res = _learner("thin_jt").learn(data, k, ess=parameter_ess, progress=progress)
    elif method == "ilp":
        res = _learner("ilp").learn(data, score=score, ess=ess, k=k, time_limit=time_limit,
                                    executor=executor, knowledge=knowledge)
    else:
        res = _learner("order_graph").learn(data, score=score, ess=ess, max_parents=k,
                                            knowledge=knowledge)
    if res.width is None:          # order_graph, or a bound k >= n - 1 that binds nothing
        res.width, res.elimination_order = treewidth_upper_bound(
            moral_graph(res.network.parent_map()))
    return res, data
