"""The learners that read data take whatever a user has in hand (data.as_dataset)."""
import numpy as np
import pandas as pd
import pytest

from twlib import errors
from twlib.data import Dataset, as_dataset
from twlib.learn import chow_liu, ktree, thin_jt

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
            "thin_jt": lambda x: thin_jt.learn(x, 1)}


@pytest.mark.parametrize("name", LEARNERS)
def test_a_dataframe_learns_what_its_dataset_learns(name, frame, tmp_path):
    from_frame = LEARNERS[name](frame)
    from_dataset = LEARNERS[name](Dataset.from_pandas(frame))
    frame.to_csv(tmp_path / "d.csv", index=False)
    from_csv = LEARNERS[name](str(tmp_path / "d.csv"))
    if name == "thin_jt":
        assert from_frame.cliques == from_dataset.cliques == from_csv.cliques
    else:
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
    with pytest.raises(errors.DataNotFound, match="no such data file"):
        as_dataset("no-such.csv")
