"""Most probable explanations (max-product on the junction tree) against brute force
and pyAgrum; marginal MAP against brute force."""
import concurrent.futures

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib import Dataset, datasets, inference, interop
from twlib.factors import Factor, FactorModel
from twlib.errors import InputError, UnknownName
from twlib.inference import JunctionTree, MemoryBudgetExceeded, ZeroEvidenceError, marginal_map
from twlib.network import random_network

from . import naive
from .test_inference import a_run_of_sets, random_case


def joint_with_evidence(net, evidence):
    """The full joint table with every state the evidence rules out set to zero."""
    joint = naive.full_joint(net)
    for v, s in evidence.items():
        shape = [1] * len(net.variables)
        shape[net.variables.index(v)] = net.arity(v)
        mask = np.zeros(net.arity(v))
        mask[net.states(v).index(s)] = 1.0
        joint = joint * mask.reshape(shape)
    return joint


def log_joint(net, rows):
    """``log P(row)`` of complete rows of state indices, by the network's likelihood."""
    data = Dataset(np.asarray(rows, dtype=np.int64).reshape(-1, len(net.variables)),
                   net.variables, [net.states(v) for v in net.variables])
    return net.log_likelihood(data, per_row=True)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 7), st.integers(0, 3), st.booleans())
def test_mpe_equals_brute_force(seed, n_vars, n_evidence, zeros):
    net, evidence = random_case(seed, n_vars, n_evidence, zeros)
    joint = joint_with_evidence(net, evidence)
    jt = JunctionTree(net)
    if joint.max() == 0:
        with pytest.raises(ZeroEvidenceError):
            jt.mpe(evidence)
    else:
        answer = jt.mpe(evidence)                      # one set: the compiled pass
        best, log_p = answer.assignment, answer.log_value
        assert log_p == pytest.approx(np.log(joint.max()), rel=1e-10, abs=1e-12)
        at = tuple(net.states(v).index(best[v]) for v in net.variables)
        assert joint[at] == pytest.approx(joint.max(), rel=1e-9)     # a maximiser (ties allowed)
        assert all(best[v] == s for v, s in evidence.items())
    states, logs = jt.mpe_batch([evidence, {}], allow_zero=True)
    assert joint[tuple(states[0])] == pytest.approx(joint.max(), rel=1e-9)
    if joint.max() == 0:
        assert logs[0] == -np.inf
    else:
        assert logs[0] == pytest.approx(np.log(joint.max()), rel=1e-10, abs=1e-12)
    assert logs[1] == pytest.approx(np.log(naive.full_joint(net).max()), rel=1e-10, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 7))
def test_one_tree_answers_a_run_of_evidence_sets_as_brute_force(seed, n_vars):
    """The compiled max-product pass keeps its scratch between calls: a tree
    asked for the MPE of sets in turn answers each as if it were the first."""
    net, sets, _ = a_run_of_sets(seed, n_vars)
    jt = JunctionTree(net)
    for evidence in sets:
        joint = joint_with_evidence(net, evidence)
        if joint.max() == 0:
            with pytest.raises(ZeroEvidenceError):
                jt.mpe(evidence)
            continue
        answer = jt.mpe(evidence)
        assert answer.log_value == pytest.approx(np.log(joint.max()), rel=1e-10, abs=1e-12)
        at = tuple(net.states(v).index(answer.assignment[v]) for v in net.variables)
        assert joint[at] == pytest.approx(joint.max(), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 6))
def test_mpe_of_a_markov_network_maximises_the_product_of_its_factors(seed, n_vars):
    model = naive.random_factor_model(np.random.default_rng(seed), n_vars, n_vars + 2, 3,
                                      scale=5.0)
    names, factors = model.variables, model.factors
    states = {v: model.states(v) for v in names}
    value = np.ones([len(states[v]) for v in names])
    for f in factors:
        shape = [1] * n_vars
        axes = [names.index(v) for v in f.variables]
        for ax, size in zip(axes, f.values.shape):
            shape[ax] = size
        value = value * np.transpose(f.values, np.argsort(axes)).reshape(shape)
    jt = JunctionTree(model)
    answer = jt.mpe()
    best, log_p = answer.assignment, answer.log_value
    assert log_p == pytest.approx(np.log(value.max() / value.sum()), rel=1e-10)
    at = tuple(int(best[v]) for v in names)
    assert value[at] == pytest.approx(value.max(), rel=1e-9)


def test_mpe_batches_chunks_threads_and_executors_agree(monkeypatch):
    monkeypatch.setattr(inference.costs, "THREADED_FROM_ENTRIES", 0)
    net = datasets.load_network("alarm")
    rows = net.sample(60, random_state=1)
    rng = np.random.default_rng(1)
    sets = [{net.variables[j]: net.states(net.variables[j])[row[j]]
             for j in rng.choice(len(net.variables), size=3, replace=False)}
            for row in rows.values]
    jt = JunctionTree(net)
    single = [jt.mpe(e) for e in sets]
    states, logs = jt.mpe_batch(sets, chunk=7)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        threaded, threaded_logs = jt.mpe_batch(sets, executor=pool)
    assert np.array_equal(states, threaded) and np.allclose(logs, threaded_logs, rtol=0, atol=0)
    own, own_logs = jt.mpe_batch(sets, threads=2)            # this process's threads
    assert np.array_equal(states, own) and np.array_equal(logs, own_logs)
    for one, row, lg in zip(single, states, logs):
        best, log_p = one.assignment, one.log_value
        assert [net.states(v).index(best[v]) for v in net.variables] == row.tolist()
        assert lg == pytest.approx(log_p, rel=1e-12)
        # the log-probability is that of the assignment, by the network's own likelihood
        assert log_joint(net, row)[0] == pytest.approx(log_p, rel=1e-10)


def test_a_tree_with_slow_queries_hands_them_to_a_search_with_the_same_answers(monkeypatch):
    """With the thresholds at zero the tree prepares the search after its first
    query; with the search given far more than the tree's time it answers
    the queries itself, each equal to max-product's; a pickled tree leaves
    the search (and its lock) behind and still answers."""
    import pickle

    from twlib.inference import search
    from twlib.inference.junction_tree import max_product

    monkeypatch.setattr(max_product, "SEARCH_AFTER_TREE_SECONDS", 0.0)
    monkeypatch.setattr(max_product, "SEARCH_FROM_QUERY_SECONDS", 0.0)
    monkeypatch.setattr(search, "SEARCH_SHARE_OF_TREE", 1e4)
    net = datasets.load_network("alarm")
    rng = np.random.default_rng(2)
    sets = [{net.variables[j]: net.states(net.variables[j])[row[j]]
             for j in rng.choice(len(net.variables), size=3, replace=False)}
            for row in net.sample(6, random_state=rng).values]
    routed, plain = JunctionTree(net), JunctionTree(net)
    answers = [routed.mpe(e) for e in sets]
    assert {a.method for a in answers[2:]} == {"AND/OR branch and bound, MBE(10)"}
    for e, a in zip(sets, answers):
        assert a.status == "optimal"
        assert a.log_value == pytest.approx(plain.mpe(e, method="junction tree").log_value,
                                            abs=1e-9)
    copy = pickle.loads(pickle.dumps(routed))
    assert copy.mpe(sets[0]).log_value == pytest.approx(answers[0].log_value, abs=1e-9)
    with pytest.raises(InputError, match="method"):
        routed.mpe(sets[0], method="search")


@pytest.mark.parametrize("name", ["child", "insurance", "alarm", "hepar2", "win95pts"])
def test_mpe_equals_max_product_elimination(name):
    net = datasets.load_network(name)
    jt = JunctionTree(net)
    for evidence in naive.sampled_evidence(net, 4, 5, np.random.default_rng(5)):
        answer = jt.mpe(evidence)
        best, log_p = answer.assignment, answer.log_value
        assert log_p == pytest.approx(np.log(naive.max_product_elimination(net, evidence)),
                                      abs=1e-9)
        assert log_joint(net, [net.states(v).index(best[v]) for v in net.variables])[0] \
            == pytest.approx(log_p, abs=1e-12)


# pyAgrum 3.3's mpe() answers on these; on the larger bnlearn networks it fails
# ("Empty tensor") for most evidence sets, even none (see bench_inference)
@pytest.mark.parametrize("name", ["asia", "cancer", "earthquake", "sachs", "survey"])
def test_mpe_equals_pyagrum(name):
    gum = pytest.importorskip("pyagrum")
    net = datasets.load_network(name)
    ie = gum.LazyPropagation(interop.to_pyagrum(net))
    jt = JunctionTree(net)
    rng = np.random.default_rng(3)
    rows = net.sample(len(net.variables), random_state=rng)
    compared = 0
    for v, row in zip(net.variables, rows.values):        # pyAgrum answers one observation best
        evidence = {v: net.states(v)[row[net.variables.index(v)]]}
        if rng.random() < 0.3:
            u = net.variables[int(rng.integers(len(net.variables)))]
            evidence[u] = net.states(u)[row[net.variables.index(u)]]
        ie.setEvidence(evidence)
        try:
            theirs = ie.mpe()
        except gum.FatalError:      # pyAgrum 3.3's mpe() fails ("Empty tensor") on some sets
            continue
        compared += 1
        log_p = jt.mpe(evidence).log_value
        assert log_joint(net, [theirs[v] for v in net.variables])[0] == pytest.approx(log_p,
                                                                                     abs=1e-9)
    assert compared >= len(net.variables) // 2


def test_mpe_refuses_impossible_evidence_and_unknown_names():
    net = datasets.load_network("asia")
    jt = JunctionTree(net)
    with pytest.raises(ZeroEvidenceError):
        jt.mpe({"tub": "yes", "either": "no"})
    with pytest.raises(Exception, match="unknown variable"):
        jt.mpe({"nope": "yes"})
    with pytest.raises(Exception, match="no evidence sets"):
        jt.mpe_batch([])


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 7), st.integers(0, 2), st.booleans())
def test_marginal_map_equals_brute_force(seed, n_vars, n_evidence, zeros):
    net, evidence = random_case(seed, n_vars, n_evidence, zeros)
    rng = np.random.default_rng(seed + 1)
    free = [v for v in net.variables if v not in evidence]
    query = list(rng.choice(free, size=int(rng.integers(1, len(free) + 1)), replace=False))
    joint = joint_with_evidence(net, evidence)
    summed = joint.sum(axis=tuple(k for k, v in enumerate(net.variables) if v not in query))
    kept = [v for v in net.variables if v in query]           # summed's axes, in that order
    if summed.max() == 0:
        with pytest.raises(ZeroEvidenceError):
            marginal_map(net, query, evidence)
        return
    answer = marginal_map(net, query, evidence)
    best, log_p = answer.assignment, answer.log_value
    assert log_p == pytest.approx(np.log(summed.max()), rel=1e-10, abs=1e-12)
    at = tuple(net.states(v).index(best[v]) for v in kept)
    assert summed[at] == pytest.approx(summed.max(), rel=1e-9)
    if len(query) == len(free):                               # marginal MAP over all is MPE
        assert log_p == pytest.approx(JunctionTree(net).mpe(evidence).log_value, rel=1e-10, abs=1e-12)


def test_marginal_map_refuses_wide_orders_and_bad_queries():
    net = datasets.load_network("alarm")
    with pytest.raises(MemoryBudgetExceeded, match=r"marginal MAP over 3 variables needs about"):
        marginal_map(net, ["HR", "BP", "CO"], max_memory_gb=1e-9)
    with pytest.raises(InputError, match="also be observed"):
        marginal_map(net, ["HR"], {"HR": "HIGH"})
    with pytest.raises(UnknownName, match="unknown query"):
        marginal_map(net, ["nope"])
    with pytest.raises(InputError, match="at least one"):
        marginal_map(net, [])
    with pytest.raises(InputError, match="query variables last"):
        marginal_map(net, ["HR"], order=["HR"] + [v for v in net.variables if v != "HR"])


def test_marginal_map_of_a_markov_network_uses_its_normalised_distribution():
    names = ["a", "b", "c"]
    states = {v: ["0", "1"] for v in names}
    model = FactorModel(names, states, [Factor(("a", "b"), np.array([[4.0, 1.0], [1.0, 4.0]])),
                                        Factor(("b", "c"), np.array([[1.0, 3.0], [2.0, 1.0]]))])
    value = np.einsum("ab,bc->abc", model.factors[0].values, model.factors[1].values)
    answer = marginal_map(model, ["a"])
    best, log_p = answer.assignment, answer.log_value
    assert best == {"a": str(int(value.sum(axis=(1, 2)).argmax()))}
    assert log_p == pytest.approx(np.log(value.sum(axis=(1, 2)).max() / value.sum()))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6))
def test_compiled_log_values_equal_the_models_own(seed):
    net = random_network(6, n_arcs=8, max_in=3, arities=[2, 3, 2, 4, 2, 3], random_state=seed)
    model = FactorModel.from_network(net)
    rows = net.sample(20, random_state=seed).values.astype(np.int64)
    fast = inference.kernels.log_values(*JunctionTree(net)._factor_index(), rows)
    assert np.allclose(fast, model.log_values(rows), rtol=0, atol=1e-12)
    assert np.allclose(fast, log_joint(net, rows), atol=1e-12)
    with pytest.raises(InputError, match="out of range"):
        model.log_values(np.full((1, 6), 5))


def test_cli_query_mpe_and_marginal_map(capsys):
    import json

    from twlib.cli import main

    assert main(["query", "asia", "--evidence", "dysp=yes", "--mpe", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    expected = JunctionTree(datasets.load_network("asia")).mpe({"dysp": "yes"})
    assert answer["assignment"] == expected.assignment
    assert answer["log_probability"] == pytest.approx(expected.log_value)
    assert main(["query", "asia", "--evidence", "dysp=yes", "--map", "lung", "bronc"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("marginal MAP: log P") and "lung=no  bronc=yes" in text
    assert main(["query", "asia", "--map", "nope"]) == 2
    with pytest.raises(SystemExit):                      # argparse: one task at a time
        main(["query", "asia", "--mpe", "--map", "lung"])
