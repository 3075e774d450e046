import numpy as np
import pandas as pd
import pytest

from twlib import Dataset


def frame():
    return pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                         "c": ["a", "b", "a", "c", "b", "a"],
                         "y": [0, 1, 0, 1, 1, 0]})


def test_codes_and_smallest_dtype():
    ds = Dataset.from_pandas(frame())
    assert ds.values.dtype == np.uint8
    assert ds.arities.tolist() == [6, 3, 2]
    assert ds.states[1] == ["a", "b", "c"]
    assert ds.values[:, 1].tolist() == [0, 1, 0, 2, 1, 0]
    wide = pd.DataFrame({"w": np.arange(300) % 300})
    ds = Dataset.from_pandas(wide, max_states=1000)
    assert ds.values.dtype == np.uint16


def test_median_binarisation_splits_at_the_median():
    ds = Dataset.from_pandas(frame(), discretize="median")
    assert ds.values[:, 0].tolist() == [0, 0, 0, 1, 1, 1]
    assert ds.states[0] == ["<=3", ">3"]
    # a categorical column with three states is split on its sorted codes
    assert ds.arities.tolist() == [2, 2, 2]
    # binary columns are untouched
    assert ds.values[:, 2].tolist() == [0, 1, 0, 1, 1, 0]


def test_median_equal_to_maximum_splits_below_it():
    ds = Dataset.from_pandas(pd.DataFrame({"x": [1, 2, 3, 3, 3, 3]}), discretize="median")
    assert ds.values[:, 0].tolist() == [0, 0, 1, 1, 1, 1]


def test_quantile_bins():
    df = pd.DataFrame({"x": np.arange(100.0)})
    ds = Dataset.from_pandas(df, discretize="quantile", bins=4)
    assert np.bincount(ds.values[:, 0]).tolist() == [25, 25, 25, 25]


def test_missing_values_error_names_columns_and_counts():
    df = frame()
    df.loc[[0, 2], "x"] = np.nan
    df.loc[1, "c"] = None
    with pytest.raises(ValueError, match=r"missing values.*'x': 2.*'c': 1"):
        Dataset.from_pandas(df)
    ds = Dataset.from_pandas(df, missing="drop")
    assert ds.n_rows == 3
    ds = Dataset.from_pandas(df, missing="state")
    assert ds.states[1][-1] == "missing"


@pytest.mark.parametrize("df, message", [
    (pd.DataFrame({"a": [1, 1, 1], "b": [0, 1, 0]}), "constant column"),
    (pd.DataFrame({"a": [1.0, np.inf, 2.0]}), "non-finite"),
    (pd.DataFrame({"a": np.arange(400.0)}), "more than max_states=255"),
    (pd.DataFrame({"a": []}), "empty"),
])
def test_bad_tables_raise_clear_errors(df, message):
    with pytest.raises(ValueError, match=message):
        Dataset.from_pandas(df)


def test_constant_columns_can_be_dropped():
    ds = Dataset.from_pandas(pd.DataFrame({"a": [1, 1, 1], "b": [0, 1, 0]}), drop_constant=True)
    assert ds.names == ["b"]


def test_unknown_options_are_rejected():
    with pytest.raises(ValueError, match="discretize"):
        Dataset.from_pandas(frame(), discretize="mean")
    with pytest.raises(ValueError, match="missing"):
        Dataset.from_pandas(frame(), missing="ignore")


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match="out of range"):
        Dataset(np.array([[0], [2]]), ["a"], [["x", "y"]])
    with pytest.raises(ValueError, match="unique"):
        Dataset(np.zeros((2, 2), int), ["a", "a"], [["x"], ["x"]])
    with pytest.raises(ValueError, match="empty"):
        Dataset(np.zeros((0, 1), int), ["a"], [["x"]])


def test_csv_round_trip(tmp_path):
    path = tmp_path / "t.csv"
    frame().to_csv(path, index=False)
    ds = Dataset.from_csv(path, discretize="median")
    assert ds.names == ["x", "c", "y"]
    back = ds.to_pandas()
    assert list(back["c"].astype(str)) == ["<=a", ">a", "<=a", ">a", ">a", "<=a"]
    with pytest.raises(FileNotFoundError, match="no such file"):
        Dataset.from_csv(tmp_path / "absent.csv")


def test_split_and_select():
    ds = Dataset.from_pandas(frame())
    train, test = ds.split(0.5, random_state=0)
    assert len(train) + len(test) == len(ds)
    assert ds.select(["y", "x"]).names == ["y", "x"]
    with pytest.raises(KeyError, match="no variable named 'z'"):
        ds.index("z")
