"""Network classifiers: structures against their definitions, posteriors against the
junction tree, scikit-learn's machinery, raw tables through the density estimator,
and every bad input named."""
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from twlib import BoundedTreewidthNetwork
from twlib.classify import (BoundedTreewidthClassifier, class_mutual_information, kdb_parents,
                            leave_one_out_hits, naive_bayes_parents, tan_parents)
from twlib.data import Dataset
from twlib.errors import InputError
from twlib.inference import JunctionTree
from twlib.information import conditional_mutual_information, mutual_information
from twlib.network import BayesianNetwork


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True, as_frame=True)


def test_class_mutual_information_is_the_library_s(wine):
    data = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 1, 0, 2, 2, 1, 0] * 9,
                                             "b": [0, 1, 0, 0, 1, 1, 1, 0] * 9,
                                             "d": [1, 1, 0, 0, 2, 0, 1, 1] * 9,
                                             "c": [0, 1, 1, 0, 1, 1, 0, 0] * 9}))
    with_class, given = class_mutual_information(data.values.astype(np.int64), data.arities, 3)
    for i, a in enumerate("abd"):
        assert with_class[i] == pytest.approx(mutual_information(data, a, "c"))
        for j, b in enumerate("abd"):
            if i != j:
                assert given[i, j] == pytest.approx(
                    conditional_mutual_information(data, a, b, ["c"]))


@pytest.mark.parametrize("structure, k, width", [("naive_bayes", 2, 1), ("tan", 2, 2),
                                                 ("kdb", 1, 2), ("kdb", 2, None),
                                                 ("bounded", 2, 2), ("bounded", 3, 3)])
def test_each_structure_keeps_its_width_and_the_class_in_every_family(wine, structure, k, width):
    X, y = wine
    clf = BoundedTreewidthClassifier(structure=structure, k=k, time_limit=3,
                                     random_state=0).fit(X, y)
    net = clf.network_
    if width is not None:
        assert clf.width_ <= width
    if structure == "kdb":
        assert max(len(net.parents(v)) for v in clf.features_) <= k + 1
    assert net.parents(clf.class_name_) == []
    assert all(clf.class_name_ in net.parents(v) for v in clf.features_)
    if structure == "tan":      # a spanning tree of the features beside the class
        assert sum(len(net.parents(v)) - 1 for v in clf.features_) == len(clf.features_) - 1
    assert clf.score(X, y) > 0.9


def test_posteriors_from_the_blanket_equal_the_junction_tree_s_with_missing_cells(wine):
    X, y = wine
    clf = BoundedTreewidthClassifier(structure="kdb", k=2).fit(X, y)
    holes = X.mask(np.random.default_rng(0).random(X.shape) < 0.3)
    proba = clf.predict_proba(pd.concat([X, holes]))
    codes = clf._codes(pd.concat([X, holes]))
    tree = JunctionTree(clf.network_)
    names = clf.network_.variables
    evidence = [{names[j]: int(c) for j, c in enumerate(row) if c >= 0} for row in codes]
    posts, _ = tree.posteriors_batch(evidence, variables=[clf.class_name_])
    np.testing.assert_allclose(proba, posts[clf.class_name_], atol=1e-10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_scikit_learn_machinery_takes_it(wine):
    X, y = wine
    clf = BoundedTreewidthClassifier(structure="kdb", k=1)
    scores = cross_val_score(clf, X, y, cv=3, scoring="accuracy")
    assert scores.mean() > 0.85
    search = GridSearchCV(clf, {"k": [1, 2]}, cv=3).fit(X, y)
    assert search.best_params_["k"] in (1, 2)
    pipe = make_pipeline(FunctionTransformer(lambda frame: frame * 1.0), clone(clf)).fit(X, y)
    assert pipe.score(X, y) > 0.9
    calibrated = CalibratedClassifierCV(clone(clf), cv=3).fit(X, y)
    assert calibrated.predict_proba(X).shape == (len(X), 3)
    fitted = clone(clf).fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict_proba(X), fitted.predict_proba(X))
    assert list(fitted.classes_) == [0, 1, 2] and fitted.predict(X).dtype == y.dtype


def test_numpy_arrays_and_string_classes_work():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = BoundedTreewidthClassifier(structure="tan").fit(X, names)
    assert set(clf.predict(X)) <= set(names) and clf.score(X, names) > 0.9


def test_a_categorical_value_never_seen_is_summed_out_with_a_warning():
    X = pd.DataFrame({"a": ["x", "y"] * 20, "b": ["u", "v", "v", "u"] * 10})
    y = np.array([0, 1] * 20)
    clf = BoundedTreewidthClassifier(structure="naive_bayes").fit(X, y)
    with pytest.warns(UserWarning, match=r"'b'.*\['w'\]"):
        proba = clf.predict_proba(pd.DataFrame({"a": ["x"], "b": ["w"]}))
    np.testing.assert_allclose(proba, clf.predict_proba(pd.DataFrame({"a": ["x"],
                                                                      "b": [None]})))


@pytest.mark.parametrize("X, y, message", [
    (pd.DataFrame({"a": [1.5, 2.5, 3.5]}), [1, 1, 1], "one class only"),
    (pd.DataFrame({"a": [1.5, 2.5, 3.5]}), [None, None, None], "every class label is missing"),
    (pd.DataFrame({"a": [1.5, np.inf, 3.5, 4.5]}), [0, 1, 0, 1], "infinite values"),
    (pd.DataFrame({"a": [1.5, 2.5, 3.5, 4.5, "x"] * 4}), [0, 1] * 10, "numbers and the text"),
    (pd.DataFrame({"a": [2.0] * 6}), [0, 1] * 3, "no feature takes two values"),
    (pd.DataFrame({"a": [1.5, 2.5]}), [0, 1, 0], "3 labels for 2 rows"),
    (pd.DataFrame({"a": [1.5, 2.5, 3.5]}), [0.5, 1.5, 2.5], "Unknown label type"),
])
def test_bad_training_input_is_named(X, y, message):
    with pytest.raises(ValueError, match=message):
        BoundedTreewidthClassifier(structure="naive_bayes").fit(X, np.array(y, dtype=object))


def test_a_numeric_column_with_one_value_is_left_out():
    X = pd.DataFrame({"flat": [2.5] * 40, "x": np.r_[np.zeros(20), np.ones(20)] + 0.5})
    clf = BoundedTreewidthClassifier(structure="naive_bayes", discretize="quantile")
    clf.fit(X, [0] * 20 + [1] * 20)
    assert clf.features_ == ["x"] and clf.score(X, [0] * 20 + [1] * 20) == 1.0


def test_rows_with_a_missing_class_are_left_out_and_missing_features_fitted_by_em():
    X, y = load_iris(return_X_y=True, as_frame=True)
    holes = X.mask(np.random.default_rng(1).random(X.shape) < 0.2)
    labels = y.astype(object).copy()
    labels[:5] = None
    clf = BoundedTreewidthClassifier(structure="tan").fit(holes, labels)
    assert clf.score(X, y) > 0.85


@pytest.mark.parametrize("loader", [load_wine, load_breast_cancer])
def test_raw_tables_fit_end_to_end_through_the_density_estimator(loader):
    frame = loader(as_frame=True).frame
    train, test = train_test_split(frame, test_size=0.3, random_state=0)
    model = BoundedTreewidthNetwork(k=2, time_limit=5, random_state=0).fit(train)
    assert model.discretizer_ is not None and len(model.network_.arcs) > 5
    empty = BayesianNetwork.fit(model._encode(train), {}, estimator="bdeu", ess=1.0)
    held_out = model.score(test)                       # raw rows, cut by the fitted cuts
    assert held_out > np.mean(empty.log_likelihood(model._encode(test), per_row=True)) + 1
    assert np.isfinite(model.score_samples(test.mask(test > test.median()))).all()
    assert model.predict_proba(test.head(3), target="target").shape[0] == 3
    with pytest.raises(InputError, match="numeric column"):
        BoundedTreewidthNetwork(k=2, discretize=None).fit(train)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n_rows=st.integers(4, 25),
       structure=st.sampled_from(["naive_bayes", "tan", "kdb"]), bdeu=st.booleans())
def test_leave_one_out_hits_equal_refitting_without_each_row(seed, n_rows, structure, bdeu):
    rng = np.random.default_rng(seed)
    arities = [2, 3, 2, 3]
    names, cls = ["a", "b", "d", "c"], "c"
    codes = np.column_stack([rng.integers(0, r, n_rows) for r in arities])
    with_class, given = class_mutual_information(codes, arities, 3)
    parents = {"naive_bayes": naive_bayes_parents(names, cls),
               "tan": tan_parents(names, cls, given),
               "kdb": kdb_parents(names, cls, 2, with_class, given)}[structure]
    arity = dict(zip(names, arities))
    pseudo = ({v: 2.0 / (arity[v] * np.prod([arity[p] for p in ps]))
               for v, ps in parents.items()} if bdeu else dict.fromkeys(names, 0.7))
    states = [[str(s) for s in range(r)] for r in arities]
    sure, tied = 0, 0                   # a tie at the top may fall either way in rounding
    for i in range(n_rows):             # the reference: fit without row i, classify it
        rest = Dataset(np.delete(codes, i, axis=0), names, states)
        net = (BayesianNetwork.fit(rest, parents, estimator="bdeu", ess=2.0) if bdeu else
               BayesianNetwork.fit(rest, parents, estimator="laplace", alpha=0.7))
        joint = []
        for c in range(arities[3]):
            row = dict(zip(names, codes[i]), c=c)
            joint.append(sum(np.log(net.cpt(v)[tuple(row[u] for u in [v] + net.parents(v))])
                             for v in names))
        top = np.flatnonzero(np.isclose(joint, max(joint), rtol=0, atol=1e-9))
        sure += int(len(top) == 1 and top[0] == codes[i, 3])
        tied += int(len(top) > 1 and codes[i, 3] in top)
    hits = leave_one_out_hits(codes, arities, names, parents, cls, pseudo)
    assert sure <= hits <= sure + tied


@pytest.mark.parametrize("structure", ["auto", "naive_bayes", "tan", "kdb", "bounded"])
def test_every_scikit_learn_estimator_check_passes(structure):
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(BoundedTreewidthClassifier(structure=structure, time_limit=1, max_iter=2,
                                               random_state=0))


def test_auto_takes_the_candidate_of_best_leave_one_out_accuracy(wine):
    from twlib.classify import CANDIDATES

    X, y = wine
    clf = BoundedTreewidthClassifier().fit(X, y)
    assert len(clf.selection_) == len(CANDIDATES)
    assert clf.structure_ == max(clf.selection_, key=clf.selection_.get)
    assert clf.network_.name == clf.structure_ and clf.score(X, y) > 0.9


def test_cpts_are_laplace_smoothed_or_bdeu_and_a_bad_alpha_is_named(wine):
    X, y = wine
    laplace = BoundedTreewidthClassifier(structure="tan", alpha=0.5).fit(X, y)
    bdeu = BoundedTreewidthClassifier(structure="tan", alpha=None, parameter_ess=2.0).fit(X, y)
    net = laplace.network_
    feature = next(v for v in net.variables if len(net.parents(v)) == 2)
    cls = laplace.class_name_
    data = laplace.discretizer_.transform(X)[laplace.features_].assign(
        **{cls: pd.Categorical([str(c) for c in y], categories=[str(c) for c in laplace.classes_])})
    ds = Dataset.from_pandas(data)
    for fitted, options in ((laplace, dict(estimator="laplace", alpha=0.5)),
                            (bdeu, dict(estimator="bdeu", ess=2.0))):
        parents = fitted.network_.parent_map()
        want = BayesianNetwork.fit(ds, parents, **options)
        np.testing.assert_allclose(fitted.network_.cpt(feature), want.cpt(feature))
    for bad in (0.0, -1.0, "one", True):
        with pytest.raises(InputError, match="alpha"):
            BoundedTreewidthClassifier(structure="tan", alpha=bad).fit(X, y)
