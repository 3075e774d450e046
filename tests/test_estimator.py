"""twlib.BoundedTreewidthNetwork: scikit-learn conventions, data in every form, queries checked
against exact inference."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import estimator_checks as checks

import twlib
from twlib import BoundedTreewidthNetwork
from twlib.errors import InputError, UnknownName
from twlib.inference import variable_elimination


@pytest.fixture(scope="module")
def frame():
    net = twlib.datasets.load_network("asia")
    return net.sample(2000, random_state=0).to_pandas().astype(str)


@pytest.fixture(scope="module")
def fitted(frame):
    return BoundedTreewidthNetwork(k=2, time_limit=10, random_state=0).fit(frame)


@pytest.mark.parametrize("check", [checks.check_no_attributes_set_in_init,
                                   checks.check_get_params_invariance,
                                   checks.check_set_params,
                                   checks.check_parameters_default_constructible])
def test_scikit_learn_conventions(check):
    check("BoundedTreewidthNetwork", BoundedTreewidthNetwork())


def test_clone_keeps_parameters_and_drops_the_fit(fitted):
    copy = clone(fitted)
    assert copy.get_params() == fitted.get_params()
    assert not hasattr(copy, "network_")
    assert "k=2" in repr(fitted)


def test_not_fitted_is_refused(frame):
    model = BoundedTreewidthNetwork()
    for call in (lambda: model.score_samples(frame), lambda: model.sample(3),
                 lambda: model.predict_proba(frame, target="lung"), model.junction_tree):
        with pytest.raises(NotFittedError):
            call()


def test_fit_sets_the_certified_model(fitted, frame):
    assert fitted.width_ <= 2 and len(fitted.elimination_order_) == frame.shape[1]
    assert fitted.score_ == fitted.result_.score
    assert fitted.feature_names_in_ == list(frame.columns)


def test_likelihoods_match_the_network(fitted, frame):
    rows = frame.head(50)
    per_row = fitted.score_samples(rows)
    assert per_row.shape == (50,) and np.all(np.isfinite(per_row))
    assert fitted.score(rows) == pytest.approx(per_row.mean())
    net = fitted.network_
    for i in range(5):
        row = rows.iloc[i].to_dict()
        prob = 1.0
        for v in net.variables:
            cpt = net.cpt(v)
            index = (net.states(v).index(row[v]),) + tuple(
                net.states(p).index(row[p]) for p in net.parents(v))
            prob *= cpt[index]
        assert per_row[i] == pytest.approx(np.log(prob), rel=1e-12)


def test_predict_proba_equals_variable_elimination(fitted, frame):
    rows = frame.head(20)
    proba = fitted.predict_proba(rows, target="lung")
    assert proba.shape == (20, 2) and np.allclose(proba.sum(axis=1), 1.0)
    for i in range(20):
        evidence = {c: rows.iloc[i][c] for c in rows.columns if c != "lung"}
        exact = variable_elimination(fitted.network_, ["lung"], evidence)
        assert np.allclose(proba[i], exact, atol=1e-9)
    labels = fitted.predict(rows, target="lung")
    assert list(labels) == [fitted.classes("lung")[j] for j in proba.argmax(axis=1)]
    partial = fitted.predict_proba(rows[["smoke", "lung"]], target="lung")   # others unobserved
    exact = variable_elimination(fitted.network_, ["lung"], {"smoke": rows.iloc[0]["smoke"]})
    assert np.allclose(partial[0], exact, atol=1e-9)


def test_sampling_uses_the_training_labels(fitted, frame):
    drawn = fitted.sample(100, random_state=1)
    assert list(drawn.columns) == list(frame.columns) and len(drawn) == 100
    for c in frame.columns:
        assert set(drawn[c].astype(str)) <= set(frame[c])
    assert np.all(np.isfinite(fitted.score_samples(drawn.astype(str))))


def test_array_csv_and_dataset_learn_alike(frame, tmp_path):
    numeric = frame.apply(lambda c: c.astype("category").cat.codes)
    path = tmp_path / "asia.csv"
    numeric.to_csv(path, index=False)
    kwargs = dict(k=2, time_limit=10, random_state=0)
    from_frame = BoundedTreewidthNetwork(**kwargs).fit(numeric)
    from_csv = BoundedTreewidthNetwork(**kwargs).fit(path)
    from_dataset = BoundedTreewidthNetwork(**kwargs).fit(twlib.data.as_dataset(numeric))
    assert from_frame.score_ == from_csv.score_ == from_dataset.score_
    from_array = BoundedTreewidthNetwork(**kwargs).fit(numeric.to_numpy())
    assert from_array.feature_names_in_ == [f"x{j}" for j in range(numeric.shape[1])]
    assert from_array.score_ == pytest.approx(from_frame.score_)
    assert from_array.score_samples(numeric.to_numpy()[:3]).shape == (3,)


@pytest.mark.parametrize("method, k", [("ktree", 2), ("chow_liu", 1), ("bounded", 2),
                                      ("lpacjt", 2), ("order_graph", 2), ("ilp", 2)])
def test_every_method(frame, method, k):
    model = BoundedTreewidthNetwork(k=k, method=method, time_limit=10, random_state=0)
    model.fit(frame)
    moral = twlib.graphs.moral_graph(model.network_.parent_map())
    assert twlib.graphs.elimination_width(moral, model.elimination_order_) == model.width_
    assert model.junction_tree().width == model.width_ and np.isfinite(model.score(frame))
    if method == "order_graph":          # k bounds the in-degree; the width is measured
        assert max(map(len, model.network_.parent_map().values())) <= k
    else:
        assert model.width_ <= k


def test_bad_input_is_named(fitted, frame):
    with pytest.raises(InputError, match="method"):
        BoundedTreewidthNetwork(method="magic").fit(frame)
    with pytest.raises(InputError, match="Chow-Liu"):
        BoundedTreewidthNetwork(k=2, method="chow_liu").fit(frame)
    with ThreadPoolExecutor(1) as ex, pytest.raises(InputError, match="'bounded' and 'ilp'"):
        BoundedTreewidthNetwork(k=2, method="ktree").fit(frame, executor=ex)
    unseen = frame.head(2).copy()
    unseen.loc[:, "lung"] = "maybe"
    with pytest.raises(InputError, match="never seen"):
        fitted.score_samples(unseen)
    with pytest.raises(InputError, match="lack"):
        fitted.score_samples(frame.drop(columns=["lung"]))
    with pytest.raises(UnknownName, match="target"):
        fitted.predict_proba(frame, target="weather")


def test_the_junction_tree_is_built_once_per_fit(frame):
    model = BoundedTreewidthNetwork(k=2, time_limit=5, random_state=0).fit(frame)
    tree = model.junction_tree()
    assert model.junction_tree() is tree
    model.set_params(k=1).fit(frame)
    assert model.junction_tree() is not tree and model.junction_tree().width <= 1
