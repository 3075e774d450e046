"""EM on data with missing cells: expected counts, posterior draws, parameter EM,
structural EM, the estimator's front door, and the errors."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from twlib import BoundedTreewidthNetwork
from twlib.data import IncompleteDataset, mask_mar, mask_mcar
from twlib.datasets import load_network
from twlib.errors import InputError
from twlib.graphs import elimination_width, moral_graph
from twlib.inference import JunctionTree
from twlib.learn import bounded
from twlib.learn.em import (fit_parameters, observed_bic, observed_log_likelihood,
                            start_parameters, structural_em)
from twlib.network import BayesianNetwork, random_network

from .naive import full_joint


def _arities(n_vars, seed):
    return np.random.default_rng(seed).integers(2, 4, n_vars).tolist()


def _holes(net, n_rows, fraction, seed):
    return mask_mcar(net.sample(n_rows, random_state=seed), fraction, random_state=seed + 1)


def _posterior_joint(net, row):
    """``(P(x | observed cells of row) as a table, P(observed))`` by enumeration."""
    joint = full_joint(net)
    index = tuple(slice(None) if c < 0 else int(c) for c in row)
    mask = np.zeros_like(joint)
    mask[index] = 1.0
    part = joint * mask
    total = part.sum()
    return part / total, total


def _family_posterior(net, row, scope):
    """``P(scope | observed cells of row)`` by enumeration, axes in ``scope``'s order."""
    post, _ = _posterior_joint(net, row)
    keep = [net.variables.index(v) for v in scope]
    summed = post.sum(axis=tuple(i for i in range(len(net.variables)) if i not in keep))
    return np.transpose(summed, np.argsort(np.argsort(keep)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_vars=st.integers(2, 6), fraction=st.floats(0.0, 0.9))
def test_expected_counts_equal_enumeration_of_the_missing_cells(seed, n_vars, fraction):
    net = random_network(n_vars, n_arcs=2 * n_vars, max_in=3, arities=_arities(n_vars, seed),
                         random_state=seed)
    rows = net.sample(12, random_state=seed).values.astype(np.int64)
    rows[np.random.default_rng(seed).random(rows.shape) < fraction] = -1
    weights = np.random.default_rng(seed).random(len(rows)) + 0.5
    scopes = [(v, *net.parents(v)) for v in net.variables]
    tables, log_p = JunctionTree(net).expected_counts(rows, scopes, weights)
    for scope, table in zip(scopes, tables):
        want = sum(w * _family_posterior(net, row, scope) for row, w in zip(rows, weights))
        np.testing.assert_allclose(table, want, atol=1e-10)
    want_log = [np.log(_posterior_joint(net, row)[1]) for row in rows]
    np.testing.assert_allclose(log_p, want_log, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_vars=st.integers(2, 6), fraction=st.floats(0.0, 0.5))
def test_an_em_step_equals_enumeration_whatever_the_rows_miss(seed, n_vars, fraction):
    # rows missing one cell take a shortcut past the junction tree; the others do not
    net = random_network(n_vars, n_arcs=2 * n_vars, max_in=3, arities=_arities(n_vars, seed),
                         random_state=seed)
    data = net.sample(15, random_state=seed)
    rows = data.values.astype(np.int64)
    rows[np.random.default_rng(seed).random(rows.shape) < fraction] = -1
    holes = IncompleteDataset(rows.astype(np.int32), data.names, data.states)
    want_log = sum(np.log(_posterior_joint(net, row)[1]) for row in rows)
    assert observed_log_likelihood(net, holes) == pytest.approx(want_log, abs=1e-9)
    start = start_parameters(holes, net.parent_map(), parameter_ess=1.0)
    step = fit_parameters(holes, net.parent_map(), parameter_ess=1.0, max_iter=1, tol=0).network
    for v in start.variables:
        scope = (v, *start.parents(v))
        counts = 1.0 / start.cpt(v).size                      # BDeu's ess / (q r)
        for row in rows[(rows >= 0).any(axis=1)]:     # a blank row adds nothing to EM
            counts = counts + _family_posterior(start, row, scope)
        np.testing.assert_allclose(step.cpt(v), counts / counts.sum(axis=0, keepdims=True),
                                   atol=1e-10)


def test_posterior_draws_keep_observed_cells_and_follow_the_posterior():
    net = random_network(5, n_arcs=7, max_in=2, arities=_arities(5, 3), random_state=3)
    row = np.array([-1, 1, -1, -1, 0])
    drawn = JunctionTree(net).sample_missing(np.tile(row, (40_000, 1)), random_state=0)
    assert (drawn[:, 1] == 1).all() and (drawn[:, 4] == 0).all()
    post, _ = _posterior_joint(net, row)
    seen = np.zeros(post.shape)
    np.add.at(seen, tuple(drawn.T), 1.0)
    assert np.abs(seen / len(drawn) - post).max() < 0.01


def test_em_never_decreases_and_reports_the_exact_observed_likelihood():
    net = random_network(6, n_arcs=9, max_in=3, arities=_arities(6, 5), random_state=5)
    holes = _holes(net, 400, 0.4, 11)
    for ess, alpha in ((1.0, None), (None, None), (None, 0.5)):     # BDeu, ML, Laplace
        fit = fit_parameters(holes, net.parent_map(), parameter_ess=ess, parameter_alpha=alpha,
                             max_iter=60, init="random", random_state=0)
        assert np.all(np.diff(fit.history) >= -1e-9 * abs(fit.history[0]))
        exact = sum(np.log(_posterior_joint(fit.network, row)[1]) for row in holes.values)
        assert fit.log_likelihood == pytest.approx(exact, abs=1e-8)


def test_em_on_complete_data_is_the_closed_form_estimate():
    net = load_network("asia")
    data = net.sample(3000, random_state=0)
    fit = fit_parameters(data, net.parent_map(), parameter_ess=2.0, max_iter=5)
    want = BayesianNetwork.fit(data, net.parent_map(), estimator="bdeu", ess=2.0)
    assert fit.converged and fit.n_iter == 1
    assert all(np.allclose(fit.network.cpt(v), want.cpt(v)) for v in net.variables)
    fit = fit_parameters(data, net.parent_map(), parameter_alpha=0.5, max_iter=5)
    want = BayesianNetwork.fit(data, net.parent_map(), estimator="laplace", alpha=0.5)
    assert all(np.allclose(fit.network.cpt(v), want.cpt(v)) for v in net.variables)


def test_em_reaches_the_same_fixed_point_from_different_starts():
    net = load_network("asia")
    holes = _holes(net, 3000, 0.3, 2)
    a = fit_parameters(holes, net.parent_map(), max_iter=500, tol=1e-10)
    b = fit_parameters(holes, net.parent_map(), max_iter=500, tol=1e-10, init="random",
                       random_state=1)
    assert a.log_likelihood / 3000 == pytest.approx(b.log_likelihood / 3000, abs=1e-5)


def test_structural_em_keeps_the_bound_and_never_loses_score():
    net = load_network("child")
    holes = _holes(net, 3000, 0.3, 4)
    res = structural_em(holes, 2, time_limit=15, random_state=0)
    moral = moral_graph(res.network.parent_map())
    moral.add_nodes_from(res.network.variables)
    assert elimination_width(moral, res.elimination_order) == res.width <= 2
    kept = [h["score"] for h in res.stats["history"] if h["kept"]]
    assert all(b >= a for a, b in zip(kept, kept[1:]))
    assert res.score == pytest.approx(observed_bic(res.network, holes), rel=1e-9)
    assert res.score == kept[-1]


def test_structural_em_without_missing_cells_is_complete_data_learning():
    data = load_network("asia").sample(2000, random_state=0)
    inc = IncompleteDataset(data.values.astype(np.int32), data.names, data.states)
    a = structural_em(inc, 2, time_limit=5, random_state=0)
    b = bounded.learn(data, 2, time_limit=5, random_state=0)
    assert a.parents == b.parents and a.score == b.score


def test_estimator_learns_scores_predicts_and_imputes_with_missing_cells():
    net = load_network("asia")
    frame = net.sample(3000, random_state=0).to_pandas().astype(object)
    rng = np.random.default_rng(0)
    holes = rng.random(frame.shape) < 0.2
    masked = frame.mask(holes)
    model = BoundedTreewidthNetwork(k=2, time_limit=10, random_state=0).fit(masked)
    assert model.width_ <= 2 and model.result_.stats["missing"] == pytest.approx(0.2, abs=0.01)
    scores = model.score_samples(masked.head(50))
    tree = model.junction_tree()
    for i in range(5):
        evidence = {v: masked.iloc[i][v] for v in net.variables if not pd.isna(masked.iloc[i][v])}
        assert scores[i] == pytest.approx(tree.log_probability_of_evidence(evidence))
    proba = model.predict_proba(masked.head(50), target="lung")
    for i in range(5):
        evidence = {v: masked.iloc[i][v] for v in net.variables
                    if v != "lung" and not pd.isna(masked.iloc[i][v])}
        assert np.allclose(proba[i], tree.posteriors(evidence)["lung"])
    without = model.predict_proba(masked.head(50).drop(columns="lung"), target="lung")
    assert np.allclose(without, proba)
    with pytest.raises(KeyError, match="unknown target"):
        model.predict_proba(masked.head(5), target="nope")
    filled = model.impute(masked)
    assert not filled.isna().any().any()
    got, truth = filled.to_numpy(dtype=str), frame.to_numpy(dtype=str)
    assert (got[~holes] == truth[~holes]).all()
    accuracy = (got[holes] == truth[holes]).mean()
    assert accuracy > 0.8
    drawn = model.impute(masked.head(20), method="sample", random_state=0)
    best = model.impute(masked.head(20), method="mpe")
    assert not drawn.isna().any().any() and not best.isna().any().any()


def test_estimator_with_complete_data_ignores_the_missing_policy():
    frame = load_network("asia").sample(1500, random_state=0).to_pandas()
    a = BoundedTreewidthNetwork(k=2, time_limit=5, random_state=0).fit(frame)
    b = BoundedTreewidthNetwork(k=2, time_limit=5, random_state=0, missing="error").fit(frame)
    assert a.network_.allclose(b.network_)


def test_masks_hide_about_the_fraction_asked():
    data = load_network("alarm").sample(4000, random_state=0)
    for mask in (mask_mcar, mask_mar):
        inc = mask(data, 0.3, random_state=1)
        assert inc.n_missing / inc.observed.size == pytest.approx(0.3, abs=0.02)
        assert (inc.values[inc.observed] == data.values.astype(np.int32)[inc.observed]).all()


def test_bad_input_gets_named_errors():
    net = load_network("asia")
    holes = _holes(net, 200, 0.3, 0)
    frame = pd.DataFrame({"a": [None, None, None], "b": ["x", "y", "x"]})
    with pytest.raises(InputError, match="no observed value"):
        IncompleteDataset.from_pandas(frame)
    with pytest.raises(InputError, match="no observed value"):
        BoundedTreewidthNetwork(k=1).fit(frame)
    with pytest.raises(InputError, match="max_iter"):
        fit_parameters(holes, net.parent_map(), max_iter=0)
    with pytest.raises(InputError, match="tol"):
        fit_parameters(holes, net.parent_map(), tol=-1.0)
    with pytest.raises(InputError, match="not in the data"):
        fit_parameters(holes, {"nope": ["asia"]})
    with pytest.raises(InputError, match="unique"):
        BoundedTreewidthNetwork(k=1).fit(pd.DataFrame([[0, 1, None], [1, 0, 1]],
                                                      columns=["a", "a", "b"]))
    with pytest.raises(InputError, match="missing"):
        BoundedTreewidthNetwork(k=1, missing="error").fit(
            pd.DataFrame({"a": [0, 1, None, 1], "b": [0, 1, 1, 0]}))
    with pytest.raises(InputError, match="needs complete data"):
        BoundedTreewidthNetwork(k=1, method="ktree").fit(
            pd.DataFrame({"a": [0, 1, None, 1], "b": [0, 1, 1, 0]}))
    with pytest.raises(InputError, match="rows must be"):
        JunctionTree(net).expected_counts(np.zeros((2, 3), dtype=int), [("asia",)])


def test_a_row_with_every_cell_missing_carries_no_information():
    net = load_network("asia")
    holes = _holes(net, 500, 0.2, 3)
    blank = np.full((1, holes.n_vars), -1)
    more = IncompleteDataset(np.vstack([holes.values, blank]), holes.names, holes.states)
    a = fit_parameters(holes, net.parent_map())
    b = fit_parameters(more, net.parent_map())
    assert a.log_likelihood == pytest.approx(b.log_likelihood, abs=1e-9)


def test_cli_learns_from_a_csv_with_question_marks_na_and_empty_cells(tmp_path, capsys):
    from twlib.cli import main
    from twlib.io import bif
    frame = load_network("asia").sample(1500, random_state=0).to_pandas().astype(str)
    rng = np.random.default_rng(0)
    for token in ("?", "NA", ""):
        frame = frame.mask(rng.random(frame.shape) < 0.05, token)
    path = tmp_path / "holes.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "net.bif"
    assert main(["learn", str(path), "-k", "2", "--out", str(out), "--time-limit", "5",
                 "--seed", "0"]) == 0
    said = capsys.readouterr().out
    assert "cells missing" in said and "tree-width <= 2" in said
    assert sorted(bif.read(out).variables) == sorted(frame.columns)


def test_estimator_max_iter_makes_structural_em_reproducible():
    net = load_network("asia")
    frame = net.sample(1500, random_state=0).to_pandas().astype(object)
    masked = frame.mask(np.random.default_rng(0).random(frame.shape) < 0.2)
    fits = [BoundedTreewidthNetwork(k=2, time_limit=120, max_iter=1, random_state=0).fit(masked)
            for _ in range(2)]
    assert fits[0].network_.allclose(fits[1].network_)
    with pytest.raises(InputError, match="observed-data BIC"):
        BoundedTreewidthNetwork(k=2, criterion="bdeu").fit(masked)
