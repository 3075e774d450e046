"""The single MPE's max-sum pass against brute force and the junction tree."""
import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib import datasets
from twlib.factors import Factor, FactorModel
from twlib.inference import JunctionTree, MemoryBudgetExceeded, ZeroEvidenceError
from twlib.inference import max_sum
from twlib.inference.max_sum import max_sum_mpe
from twlib.inference.table_walk import best_trailing_states

from . import naive


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 7), st.integers(0, 3), st.sampled_from([0.0, 0.4]),
       st.booleans(), st.booleans())
def test_max_sum_equals_brute_force(seed, n_vars, n_evidence, zeros, own_order, keep_all):
    """The value is the largest product of the factors over the assignments
    the evidence allows, whatever the order, and whether the cliques keep
    their best entries or sum them again on the way down; nothing is found
    only when all of them have probability zero."""
    rng = np.random.default_rng(seed)
    model = naive.random_factor_model(rng, n_vars, n_vars + 3, 4, scale=3.0, zeros=zeros)
    names = model.variables
    evidence = {v: model.states(v)[int(rng.integers(model.arity(v)))]
                for v in rng.choice(names, size=min(n_evidence, n_vars), replace=False)}
    rows = np.array([row for row in itertools.product(*(range(model.arity(v)) for v in names))
                     if all(model.states(v)[row[names.index(v)]] == s
                            for v, s in evidence.items())])
    best = model.log_values(rows).max()
    order = list(rng.permutation(names)) if own_order else None
    with mock.patch.object(max_sum, "KEPT_ABOVE_ENTRIES", 0 if keep_all else 10**18):
        if best == -np.inf:
            with pytest.raises(ZeroEvidenceError):
                max_sum_mpe(model, evidence, order=order)
            return
        res = max_sum_mpe(model, evidence, order=order)
    assert res.status == "optimal" and res.log_value == pytest.approx(best, abs=1e-9)
    assert all(res.assignment[v] == s for v, s in evidence.items())
    row = [model.states(v).index(res.assignment[v]) for v in names]
    assert model.log_values([row])[0] == res.log_value


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 4), st.integers(0, 4), st.integers(1, 3))
def test_best_trailing_states_take_the_first_largest_sum(seed, m, shared, n_factors):
    """The kernel's trailing states are numpy's argmax (the first of ties) of
    the summed factors over the entries the leading states allow."""
    rng = np.random.default_rng(seed)
    shared = min(shared, m)
    card = rng.integers(1, 4, size=m)
    # factors over a random subset of the clique's axes; ties come from rounding to halves
    tables, rows, f_off, flat = [], [], [], []
    for _ in range(n_factors):
        axes = np.flatnonzero(rng.random(m) < 0.6)
        table = np.round(rng.normal(size=tuple(card[axes])) * 2) / 2
        strides = dict(zip(axes.tolist(), np.zeros(table.shape).strides))
        rows += [strides.get(j, 0) // 8 for j in range(m)]
        f_off.append(sum(map(len, flat)))
        flat.append(table.ravel())
        tables.append((axes, table))
    factors = np.concatenate(flat)
    cvar = rng.permutation(m + 2)[:m]
    states = np.full(m + 2, -1, dtype=np.int64)
    states[cvar[:shared]] = [rng.integers(c) for c in card[:shared]]
    total = np.zeros(tuple(card))
    for axes, table in tables:
        total = total + np.expand_dims(table, tuple(j for j in range(m) if j not in axes))
    rest = total[tuple(states[cvar[:shared]])].ravel()
    best_trailing_states(states, cvar, card, 0, m, shared, np.array(rows, dtype=np.int64),
                         n_factors, factors, np.array(f_off, dtype=np.int64))
    expected = np.unravel_index(int(np.argmax(rest)), tuple(card[shared:]))
    assert states[cvar[shared:]].tolist() == [int(k) for k in expected]


@pytest.mark.parametrize("name", ["alarm", "hepar2", "win95pts", "barley"])
def test_max_sum_equals_the_junction_trees_mpe(name):
    net = datasets.load_network(name)
    tree = JunctionTree(net)
    for evidence in naive.sampled_evidence(net, 3, 6, np.random.default_rng(2)):
        mine = max_sum_mpe(net, evidence)
        assert mine.log_value == pytest.approx(tree.mpe(evidence).log_value, abs=1e-9)
        assert mine.stats["width"] >= 1


def test_max_sum_names_its_limits():
    net = datasets.load_network("asia")
    with pytest.raises(ZeroEvidenceError, match="probability zero"):
        max_sum_mpe(net, {"tub": "yes", "either": "no"})
    with pytest.raises(MemoryBudgetExceeded, match="largest clique table"):
        max_sum_mpe(datasets.load_network("barley"), max_memory_gb=1e-4)
    with pytest.raises(Exception, match="unknown variable"):
        max_sum_mpe(net, {"nope": "yes"})
    empty = FactorModel([], {}, [Factor((), np.array(2.0))])
    assert max_sum_mpe(empty).log_value == pytest.approx(np.log(2.0))


@pytest.mark.parametrize("constant", [0.0, 0.5])
def test_a_table_of_no_variable_counts(constant):
    """A constant table (a SAT encoding's empty clause is one of 0) multiplies
    every assignment: a zero there leaves none of non-zero probability."""
    rng = np.random.default_rng(0)
    plain = naive.random_factor_model(rng, 4, 5, 3, scale=1.0, zeros=0.0)
    model = FactorModel(plain.variables, {v: plain.states(v) for v in plain.variables},
                        [*plain.factors, Factor((), np.array(constant))])
    rows = list(itertools.product(*(range(model.arity(v)) for v in model.variables)))
    best = model.log_values(np.array(rows)).max()
    if constant == 0.0:
        with pytest.raises(ZeroEvidenceError, match="probability zero"):
            max_sum_mpe(model)
    else:
        assert max_sum_mpe(model).log_value == pytest.approx(best, abs=1e-9)
