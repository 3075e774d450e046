"""The fitted discretizer: MDLP against a plain recursive twin, cut points applied to
new rows, column kinds, and every bad input named."""
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twlib.discretize import Discretizer, column_kinds, for_learning, mdlp_cuts
from twlib.errors import InputError


def _entropy(labels):
    _, counts = np.unique(labels, return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum())


def _mdlp_twin(values, classes):
    """Fayyad & Irani's MDLP written out: every boundary tried in a loop, recursion."""
    order = np.argsort(values, kind="stable")
    values, classes = np.asarray(values, float)[order], np.asarray(classes)[order]
    n = len(values)
    splits = {i: i / n * _entropy(classes[:i]) + (n - i) / n * _entropy(classes[i:])
              for i in range(1, n) if values[i] != values[i - 1]}
    if not splits:
        return []
    least = min(splits.values())
    i = min(i for i, split in splits.items() if split <= least + 1e-12)   # first of a tie
    split = splits[i]
    whole, left, right = _entropy(classes), _entropy(classes[:i]), _entropy(classes[i:])
    c, c1, c2 = (len(np.unique(x)) for x in (classes, classes[:i], classes[i:]))
    delta = math.log2(3 ** c - 2) - (c * whole - c1 * left - c2 * right)
    if whole - split <= (math.log2(n - 1) + delta) / n:
        return []
    cut = (values[i - 1] + values[i]) / 2
    return sorted(_mdlp_twin(values[:i], classes[:i]) + [cut]
                  + _mdlp_twin(values[i:], classes[i:]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 80), n_classes=st.integers(1, 4),
       distinct=st.integers(1, 30))
def test_mdlp_cuts_are_those_of_the_plain_recursion(seed, n, n_classes, distinct):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, distinct, n) + rng.normal(0, 0.1, n) * (distinct > 10)
    classes = (values * n_classes / max(distinct, 1) + rng.normal(0, 0.7, n)).astype(int) % 4
    np.testing.assert_allclose(mdlp_cuts(values, classes), _mdlp_twin(values, classes))


def test_cuts_apply_to_new_rows_with_open_end_bins_and_missing_kept():
    train = pd.DataFrame({"x": np.linspace(0, 1, 40), "c": list("ab") * 20})
    cut = Discretizer(method="uniform", n_bins=4).fit(train)
    np.testing.assert_allclose(cut.cuts_["x"], [0.25, 0.5, 0.75])
    assert cut.states_["x"] == ["(-inf, 0.25]", "(0.25, 0.5]", "(0.5, 0.75]", "(0.75, inf)"]
    new = cut.transform(pd.DataFrame({"x": [-9.0, 0.25, 0.3, 9.0, np.nan],
                                      "c": ["b", "a", None, "a", "b"]}))
    assert new["x"].cat.codes.tolist() == [0, 0, 1, 3, -1]
    assert new["c"].cat.codes.tolist() == [1, 0, -1, 0, 1]
    assert list(new["x"].cat.categories) == cut.states_["x"]


@pytest.mark.parametrize("method", ["quantile", "uniform", "kmeans"])
def test_unsupervised_cuts_sort_the_values_into_at_most_n_bins(method):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.gamma(2.0, size=500)})
    cut = Discretizer(method=method, n_bins=4).fit(frame)
    codes = cut.transform(frame)["x"].cat.codes.to_numpy()
    assert 2 <= len(cut.states_["x"]) <= 4
    order = np.argsort(frame["x"].to_numpy())
    assert np.all(np.diff(codes[order]) >= 0)           # intervals follow the values


def test_column_kinds_follow_the_rule_and_take_overrides():
    frame = pd.DataFrame({"f": [0.5, 1.5, 2.5, 3.0], "i": [1, 2, 3, 1], "s": list("xyxy"),
                          "b": [True, False, True, True], "w": [1.0, 2.0, np.nan, 1.0],
                          "many": [1, 20, 300, 4000],
                          "cat": pd.Categorical(["u", "v", "u", "u"]), "num": ["1.5", "2", "3", "4"]})
    kinds = column_kinds(frame, max_categories=3)
    assert kinds == {"f": "numeric", "i": "categorical", "s": "categorical", "b": "categorical",
                     "w": "categorical", "many": "numeric", "cat": "categorical",
                     "num": "numeric"}
    assert column_kinds(frame, kinds={"i": "numeric"})["i"] == "numeric"
    with pytest.raises(InputError, match="not in the data"):
        column_kinds(frame, kinds={"zz": "numeric"})
    with pytest.raises(InputError, match="must be one of"):
        column_kinds(frame, kinds={"i": "ordinal"})


def test_declared_states_let_a_fold_lack_one():
    train = pd.DataFrame({"c": ["a", "a", "b"], "x": [1.5, 2.5, 3.5]})
    cut = Discretizer(categories={"c": ["a", "b", "z"]}).fit(train)
    assert cut.states_["c"] == ["a", "b", "z"]
    assert cut.transform(pd.DataFrame({"c": ["z"], "x": [0.0]}))["c"].cat.codes.tolist() == [2]
    pandas_declared = pd.DataFrame({"c": pd.Categorical(["a", "a"], categories=["a", "b"])})
    assert Discretizer().fit(pandas_declared).states_["c"] == ["a", "b"]
    with pytest.raises(InputError, match="outside its declared states"):
        Discretizer(categories={"c": ["a"]}).fit(train)


@pytest.mark.parametrize("frame, options, message", [
    (pd.DataFrame({"x": [1.5, np.inf, 2.5]}), {}, "infinite values"),
    (pd.DataFrame({"x": [1.5, 2.5, 3.5, 4.5, "?"] * 3}), {}, r"numbers and the text \['\?'\]"),
    (pd.DataFrame({"x": [1.5, 2.5, "high"]}), {"kinds": {"x": "numeric"}}, "holds text"),
    (pd.DataFrame({"x": [np.nan, np.nan]}), {"kinds": {"x": "numeric"}}, "no observed value"),
    (pd.DataFrame({"x": [1.5, 2.5]}), {"method": "mdlp"}, "pass y"),
    (pd.DataFrame({"x": [1.5, 2.5]}), {"n_bins": 1}, "n_bins must be"),
    (pd.DataFrame({"x": [1.5, 2.5]}), {"method": "chi2"}, "method must be"),
    (pd.DataFrame({"x": []}, dtype=float), {}, "no rows"),
])
def test_bad_input_is_named(frame, options, message):
    kinds = options.pop("kinds", None)
    with pytest.raises(InputError, match=message):
        Discretizer(**options, kinds=kinds).fit(frame)


def test_an_unseen_category_is_refused_or_taken_as_missing():
    cut = Discretizer().fit(pd.DataFrame({"c": ["a", "b"]}))
    new = pd.DataFrame({"c": ["a", "new"]})
    with pytest.raises(InputError, match=r"never seen in training: \['new'\]"):
        cut.transform(new)
    with pytest.warns(UserWarning, match="taken as missing"):
        assert cut.transform(new, unseen="missing")["c"].cat.codes.tolist() == [0, -1]


def test_more_bins_than_rows_and_a_single_value():
    few = Discretizer(method="quantile", n_bins=5).fit(pd.DataFrame({"x": [0.5, 1.5, 2.5]}))
    assert few.states_["x"] == ["(-inf, 1]", "(1, 2]", "(2, inf)"]       # between the values
    one = Discretizer(method="quantile").fit(pd.DataFrame({"x": [0.5] * 20,
                                                           "y": np.arange(20) / 3}))
    assert one.states_["x"] == ["(-inf, inf)"]
    with pytest.raises(InputError, match=r"constant column\(s\) \['x'\]"):
        from twlib.data import Dataset
        Dataset.from_pandas(one.transform(pd.DataFrame({"x": [0.5] * 20,
                                                        "y": np.arange(20) / 3})))


def test_for_learning_refuses_numbers_by_name_when_told_not_to_cut():
    frame = pd.DataFrame({"alcohol": np.linspace(11, 14, 30), "c": list("ab") * 15})
    with pytest.raises(InputError, match=r"numeric column\(s\) \['alcohol'\]"):
        for_learning(frame, discretize=None)
    same, fitted = for_learning(frame[["c"]], discretize=None)
    assert fitted is None and same.equals(frame[["c"]])
