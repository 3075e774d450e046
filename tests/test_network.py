import numpy as np
import pytest
from scipy import stats

from twlib import BayesianNetwork
from twlib.counting import count

from .test_information import random_dataset


def tiny(**over):
    kw = dict(variables=["a", "b"], states={"a": ["0", "1"], "b": ["x", "y", "z"]},
              parents={"b": ["a"]},
              cpts={"a": np.array([0.25, 0.75]),
                    "b": np.array([[0.2, 0.5], [0.3, 0.5], [0.5, 0.0]])})
    kw.update(over)
    return BayesianNetwork(**kw)


def test_validation_errors_name_the_problem():
    with pytest.raises(ValueError, match="cyclic: .*a -> b -> a|cyclic: .*b -> a -> b"):
        tiny(parents={"a": ["b"], "b": ["a"]},
             cpts={"a": np.full((2, 3), 0.5), "b": np.full((3, 2), 1 / 3)})
    with pytest.raises(ValueError, match=r"shape \(3,\).*need \(3, 2\)"):
        tiny(cpts={"a": np.array([0.25, 0.75]), "b": np.full(3, 1 / 3)})
    with pytest.raises(ValueError, match="do not sum to 1"):
        tiny(cpts={"a": np.array([0.5, 0.6]), "b": np.full((3, 2), 1 / 3)})
    with pytest.raises(ValueError, match="not nodes of the graph"):
        tiny(parents={"b": ["c"]})
    with pytest.raises(ValueError, match="no CPT"):
        tiny(cpts={"a": np.array([0.25, 0.75])})


def test_sampled_frequencies_converge_to_the_cpts(alarm):
    """Chi-square goodness of fit of every CPT column with enough samples, fixed seed."""
    ds = alarm.sample(50_000, random_state=2024)
    p_values = []
    for v in alarm.variables:
        ps = alarm.parents(v)
        idx = ds.indices(ps + [v])
        table = count(ds.values, idx, ds.arities[idx]).to_dense().reshape(-1, alarm.arity(v))
        cpt = alarm.cpt(v).reshape(alarm.arity(v), -1).T
        for observed, probs in zip(table, cpt):
            n = observed.sum()
            if n < 200:
                continue
            support = probs > 0
            assert observed[~support].sum() == 0          # impossible states never drawn
            expected = probs[support] / probs[support].sum() * n
            if support.sum() > 1 and expected.min() >= 5:
                p_values.append(stats.chisquare(observed[support], expected).pvalue)
    assert len(p_values) > 100
    # under the null the p-values are uniform: no extreme ones, and a KS test passes
    assert min(p_values) > 1e-4
    assert stats.kstest(p_values, "uniform").pvalue > 1e-3


def test_sampling_is_deterministic_given_a_seed(alarm):
    a = alarm.sample(500, random_state=7)
    b = alarm.sample(500, random_state=7)
    assert np.array_equal(a.values, b.values)
    with pytest.raises(ValueError, match="positive integer"):
        alarm.sample(0)


def test_mle_fit_returns_relative_frequencies_and_bdeu_and_laplace_smooth():
    ds = random_dataset(4, n_vars=3, n_rows=400)
    parents = {"v2": ["v0", "v1"]}
    net = BayesianNetwork.fit(ds, parents)
    table = count(ds.values, [0, 1, 2], ds.arities).to_dense().astype(float)
    freq = table / table.sum(axis=2, keepdims=True)
    assert np.allclose(np.moveaxis(net.cpt("v2"), 0, -1), freq)
    smooth = BayesianNetwork.fit(ds, parents, estimator="bdeu", ess=5.0)
    q, r = ds.arities[0] * ds.arities[1], ds.arities[2]
    expected = (table + 5.0 / (q * r)) / (table.sum(axis=2, keepdims=True) + 5.0 / q)
    assert np.allclose(np.moveaxis(smooth.cpt("v2"), 0, -1), expected)
    laplace = BayesianNetwork.fit(ds, parents, estimator="laplace", alpha=0.5)
    expected = (table + 0.5) / (table.sum(axis=2, keepdims=True) + 0.5 * r)
    assert np.allclose(np.moveaxis(laplace.cpt("v2"), 0, -1), expected)
    with pytest.raises(ValueError, match="estimator"):
        BayesianNetwork.fit(ds, parents, estimator="k2")
    with pytest.raises(ValueError, match="alpha"):
        BayesianNetwork.fit(ds, parents, estimator="laplace", alpha=0.0)


def test_log_likelihood_equals_sum_of_log_cpt_entries():
    net = tiny()
    ds = net.sample(200, random_state=0)
    expected = sum(np.log(net.cpt("a")[a]) + np.log(net.cpt("b")[b, a]) for a, b in ds.values)
    assert net.log_likelihood(ds) == pytest.approx(expected)
    assert net.log_likelihood(ds, per_row=True).shape == (200,)


def test_mle_log_likelihood_is_the_ll_score(alarm, alarm_5000):
    from twlib.scores import network_score
    fitted = BayesianNetwork.fit(alarm_5000, alarm.parent_map())
    assert fitted.log_likelihood(alarm_5000) == pytest.approx(
        network_score(alarm_5000, alarm.parent_map(), score="ll"))
