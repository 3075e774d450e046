"""Cutset conditioning and its bounds, against brute force, the junction tree and the
UAI 2014 reference solutions."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twlib import datasets, errors
from twlib.inference import (Factor, FactorModel, JunctionTree, conditioned_posteriors,
                              posterior_marginals)
from twlib.inference import conditioning as conditioned
from twlib.inference.conditioning import choose_cutset
from twlib.inference.costs import TREE_ENTRIES_PER_SECOND

from . import naive
from .test_minibucket import brute_force, random_model


def brute_posteriors(model, evidence):
    """``{variable: P(variable | evidence)}`` by summing the clamped joint."""
    names = model.variables
    rows = np.array(np.meshgrid(*(np.arange(model.arity(v)) for v in names),
                                indexing="ij")).reshape(len(names), -1).T
    keep = np.all([rows[:, names.index(v)] == s for v, s in evidence.items()], axis=0)
    rows = rows[keep] if evidence else rows
    p = np.exp(model.log_values(rows))
    return {v: np.bincount(rows[:, k], weights=p, minlength=model.arity(v)) / p.sum()
            for k, v in enumerate(names)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 7), zeros=st.sampled_from([0.0, 0.3]),
       budget=st.sampled_from([1e-9, 2e-8, 1.0]))
def test_conditioning_equals_brute_force(seed, n_vars, zeros, budget):
    model, evidence = random_model(seed, n_vars, zeros)
    _, log_z = brute_force(model, evidence)
    if log_z == -np.inf:
        with pytest.raises(errors.ZeroEvidenceError):
            conditioned_posteriors(model, evidence, max_memory_gb=budget)
        return
    cut = choose_cutset(model, evidence, max_memory_gb=budget)
    assert cut.gib <= budget or len(cut.variables) + len(evidence) == n_vars
    res = conditioned_posteriors(model, evidence, cut)
    assert res.exact and res.stats["runs_done"] == cut.runs
    assert res.log_z == pytest.approx(log_z, abs=1e-9 * max(1.0, abs(log_z)))
    expected = brute_posteriors(model, evidence)
    for v in model.variables:
        assert np.allclose(res.posteriors[v], expected[v], atol=1e-9)


@pytest.mark.parametrize("name", ["Grids_12", "DBN_11", "Segmentation_11"])
def test_conditioned_marginals_equal_the_tree(name):
    inst = datasets.load_uai(name)
    tree = JunctionTree(inst.model)
    exact = tree.posteriors(inst.evidence)
    res = posterior_marginals(inst.model, inst.evidence, max_memory_gb=tree.entries * 8 / 2**30 / 6)
    assert res.exact and res.method.startswith("cutset conditioning") and res.stats["cutset"]
    assert res.log_z == pytest.approx(tree.log_probability_of_evidence(inst.evidence), abs=1e-9)
    for v in inst.model.variables:
        assert np.abs(res.posteriors[v] - exact[v]).max() < 1e-9
        assert np.allclose(res.posteriors[v], inst.marginals[v], atol=1e-6)


def test_a_tree_that_cannot_be_filled_in_time_is_not_built():
    inst = datasets.load_uai("Grids_12")
    entries = JunctionTree(inst.model).entries
    res = posterior_marginals(inst.model, inst.evidence,
                              time_limit=entries / TREE_ENTRIES_PER_SECOND / 6)
    assert res.method != "junction tree" and not res.exact
    low, high = res.log_z_bounds
    assert low - 1e-5 <= inst.log_z <= high + 1e-5      # the reference has six digits


def test_a_cutset_of_too_many_runs_is_refused_by_name():
    inst = datasets.load_uai("Grids_12")
    with pytest.raises(errors.MemoryBudgetExceeded, match="more than 4 runs"):
        choose_cutset(inst.model, inst.evidence, max_memory_gb=1e-4, max_runs=4)


def test_bounds_alone_hold_the_exact_answer():
    net = datasets.load_network("alarm")
    evidence = {"HR": "HIGH", "BP": "LOW"}
    log_pe = JunctionTree(net).log_probability_of_evidence(evidence)
    res = conditioned.bounded_posteriors(net, evidence, i_bound=3)
    low, high = res.log_z_bounds
    assert not res.exact and low <= log_pe <= high and low < high
    assert res.posteriors["HR"].tolist() == [0.0, 0.0, 1.0]
    assert all(res.lower[v].min() >= 0 and res.upper[v].max() <= 1 for v in net.variables)


def test_with_factors_equals_a_new_tree():
    net = datasets.load_network("alarm")
    tree = JunctionTree(net)
    model = naive.random_factor_model(np.random.default_rng(3), 6, 9, 3)
    other = JunctionTree(model)
    doubled = FactorModel(model.variables, {v: model.states(v) for v in model.variables},
                          [Factor(f.variables, 2 * f.values) for f in model.factors])
    rebuilt = other.with_factors(doubled)
    assert rebuilt.log_z == pytest.approx(other.log_z + 9 * np.log(2), abs=1e-9)
    assert all(np.allclose(rebuilt.prior[v], other.prior[v]) for v in model.variables)
    assert tree.with_factors(net).log_z == pytest.approx(0.0, abs=1e-7)   # CPTs to 7 digits
    with pytest.raises(errors.InputError, match="variables and states"):
        tree.with_factors(model)


def test_runs_out_of_time_into_bounds_that_hold():
    inst = datasets.load_uai("Grids_11")
    # one run first, so that a fresh process compiles its kernels outside the half second
    conditioned_posteriors(inst.model, inst.evidence, max_memory_gb=3e-4, max_runs=1)
    res = conditioned_posteriors(inst.model, inst.evidence, max_memory_gb=3e-4, time_limit=0.5)
    assert not res.exact and 0 < res.stats["runs_done"] < res.stats["runs"]
    low, high = res.log_z_bounds
    assert low <= inst.log_z + 1e-5 and inst.log_z - 1e-5 <= high and low <= res.log_z <= high
    for v in inst.model.variables:
        assert np.all(res.lower[v] <= inst.marginals[v] + 1e-6)
        assert np.all(inst.marginals[v] <= res.upper[v] + 1e-6)
        assert res.posteriors[v].sum() == pytest.approx(1.0)


def test_a_sample_of_runs_is_reproducible_and_tightens_the_lower_bound():
    inst = datasets.load_uai("Grids_11")
    cut = choose_cutset(inst.model, inst.evidence, max_memory_gb=3e-4)
    few, more = (conditioned_posteriors(inst.model, inst.evidence, cut, i_bound=10, max_runs=k)
                 for k in (8, 64))
    again = conditioned_posteriors(inst.model, inst.evidence, cut, i_bound=10, max_runs=8)
    assert again.log_z_bounds == few.log_z_bounds and few.stats["runs_done"] == 8
    assert few.log_z_bounds[0] <= more.log_z_bounds[0] <= inst.log_z + 1e-5
    assert more.log_z_bounds[1] >= inst.log_z - 1e-5
    with pytest.raises(errors.InputError, match="max_runs must be a positive integer"):
        conditioned_posteriors(inst.model, inst.evidence, cut, max_runs=0)


def test_executor_runs_give_the_same_answer():
    inst = datasets.load_uai("Grids_12")
    alone = conditioned_posteriors(inst.model, inst.evidence, max_memory_gb=1e-4)
    with ThreadPoolExecutor(2) as ex:
        spread = conditioned_posteriors(inst.model, inst.evidence, max_memory_gb=1e-4,
                                        executor=ex)
    assert spread.log_z == pytest.approx(alone.log_z, abs=1e-9)
    assert all(np.allclose(spread.posteriors[v], alone.posteriors[v], atol=1e-12)
               for v in inst.model.variables)


def test_the_tree_answers_when_it_fits_and_bad_input_is_named():
    net = datasets.load_network("asia")
    res = posterior_marginals(net, {"dysp": "yes"})
    assert res.method == "junction tree" and res.exact
    assert res.log_z == pytest.approx(JunctionTree(net).log_probability_of_evidence({"dysp": "yes"}))
    with pytest.raises(errors.InputError, match="max_memory_gb must be positive"):
        posterior_marginals(net, max_memory_gb=0)
    with pytest.raises(errors.InputError, match="time_limit"):
        posterior_marginals(net, time_limit=0)
    with pytest.raises(errors.UnknownName):
        posterior_marginals(net, {"nope": "yes"})
