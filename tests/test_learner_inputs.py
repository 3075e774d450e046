"""One learner contract: every ``learn`` takes whatever a user has in hand
(data.as_dataset), keeps its options keyword-only and returns a LearnResult."""
import inspect

import numpy as np
import pandas as pd
import pytest

import twlib.learn
from twlib import errors
from twlib.data import Dataset, as_dataset
from twlib.learn import (LearnResult, bounded, chow_liu, exact_width, greedy, ilp, ktree,
                         order_graph, thin_jt)
from twlib.network import BayesianNetwork

ROWS = 400


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, ROWS)
    b = (a ^ (rng.random(ROWS) < 0.1)).astype(int)
    c = (b ^ (rng.random(ROWS) < 0.2)).astype(int)
    d = rng.integers(0, 3, ROWS)
    return pd.DataFrame({"a": np.where(a, "yes", "no"), "b": b, "c": c, "d": d})


LEARNERS = {"chow_liu": lambda x: chow_liu.learn(x),
            "ktree": lambda x: ktree.learn(x, 2, max_iter=2, random_state=0),
            "thin_jt": lambda x: thin_jt.learn(x, 1),
            "bounded": lambda x: bounded.learn(x, 2, max_iter=2, random_state=0),
            "order_graph": lambda x: order_graph.learn(x, max_parents=2),
            "greedy": lambda x: greedy.learn(x, max_parents=2, restarts=4, random_state=0),
            "ilp": lambda x: ilp.learn(x, max_parents=2, time_limit=30),
            "exact_width": lambda x: exact_width.learn(x, 2, start=None, time_limit=30)}
# these certify a tree-width
BOUNDED = {"chow_liu", "ktree", "thin_jt", "bounded", "exact_width"}


def test_every_learner_of_the_package_is_listed_and_keeps_its_options_keyword_only():
    modules = {name for name in twlib.learn.__all__
               if callable(getattr(getattr(twlib.learn, name), "learn", None))}
    assert modules == set(LEARNERS)
    for name in LEARNERS:
        params = inspect.signature(getattr(twlib.learn, name).learn).parameters.values()
        positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert positional in (["data"], ["data", "k"]), (name, positional)


@pytest.mark.parametrize("name", LEARNERS)
def test_every_learner_returns_a_fitted_learn_result(name, frame):
    res = LEARNERS[name](frame)
    assert isinstance(res, LearnResult) and isinstance(res.network, BayesianNetwork)
    assert np.isfinite(res.score) and res.status in ("optimal", "complete", "time_limit")
    assert ({v: set(ps) for v, ps in res.parents.items()}
            == {v: set(res.network.parents(v)) for v in res.network.variables})
    assert res.stats["seconds"] >= 0 and res.stats["score"]
    if name in BOUNDED:
        assert res.width is not None and res.elimination_order is not None


@pytest.mark.parametrize("name", LEARNERS)
def test_a_dataframe_learns_what_its_dataset_learns(name, frame, tmp_path):
    from_frame = LEARNERS[name](frame)
    from_dataset = LEARNERS[name](Dataset.from_pandas(frame))
    frame.to_csv(tmp_path / "d.csv", index=False)
    from_csv = LEARNERS[name](str(tmp_path / "d.csv"))
    assert from_frame.score == from_dataset.score == from_csv.score
    assert from_frame.network.arcs == from_dataset.network.arcs


def test_as_dataset_codes_arrays_and_refuses_what_it_cannot(frame):
    ds = as_dataset(frame[["b", "c", "d"]].to_numpy())
    assert ds.names == ["x0", "x1", "x2"] and ds.arities.tolist() == [2, 2, 3]
    assert as_dataset(ds) is ds
    with pytest.raises(errors.WrongType, match="got list"):
        as_dataset([[0, 1]])
    with pytest.raises(errors.InputError, match="must be 2-D"):
        as_dataset(np.zeros(3))
    with pytest.raises(errors.InputError, match="already a Dataset"):
        as_dataset(ds, discretize="median")
    with pytest.raises(errors.DataNotFound, match="no such file"):
        as_dataset("no-such.csv")
