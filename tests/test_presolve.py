"""Low-degree elimination before the MPE search, against brute force."""
import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twlib.errors import ZeroEvidenceError
from twlib.factors import Factor, FactorModel
from twlib.inference import most_probable_explanation
from twlib.inference.flat import flat_tables
from twlib.inference.minibucket import log_tables, merged_tables
from twlib.inference.presolve import eliminate_low_degree, reduced_and_merged

from . import naive


def _best(model, evidence=None):
    """Brute force: ``(log max, its row)`` of the unnormalised product."""
    evidence = evidence or {}
    names = model.variables
    rows = np.array([row for row in itertools.product(*(range(model.arity(v)) for v in names))
                     if all(row[names.index(v)] == s for v, s in evidence.items())])
    if not names:
        rows = np.zeros((1, 0), dtype=np.int64)
    logs = model.log_values(rows)
    return float(logs.max()), rows[int(np.argmax(logs))]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 7), zeros=st.sampled_from([0.0, 0.3]))
def test_the_model_left_keeps_the_optimum_and_its_completion_reaches_it(seed, n_vars, zeros):
    rng = np.random.default_rng(seed)
    model = naive.random_factor_model(rng, n_vars, n_vars + 3, 3, scale=3.0, zeros=zeros)
    evidence = {v: int(rng.integers(model.arity(v)))
                for v in model.variables[:int(rng.integers(0, 2))]}
    top, _ = _best(model, evidence)
    pre = eliminate_low_degree(model, evidence)
    if top == -np.inf:
        assert pre is None or _best(pre.model)[0] + pre.constant == -np.inf
        return
    left, row = _best(pre.model)
    assert left + pre.constant == pytest.approx(top, rel=1e-12, abs=1e-12)
    full = pre.completed(dict(zip(pre.model.variables, row.tolist())))
    assert model.log_values([[full[v] for v in model.variables]])[0] == pytest.approx(top)
    graph = pre.model.interaction_graph()
    assert all(graph.degree(v) > 2 for v in graph)      # nothing left to eliminate
    assert set(pre.fixed) == set(evidence)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 5), observed=st.integers(0, 3))
def test_evidence_and_merging_in_compiled_passes_give_the_python_route_bit_for_bit(
        seed, n_vars, observed):
    # many factors over few variables: scopes repeat in other axis orders, and
    # the evidence leaves some factors with no variable at all
    rng = np.random.default_rng(seed)
    model = naive.random_factor_model(rng, n_vars, 3 * n_vars + 2, 3, scale=3.0, zeros=0.2)
    evidence = {v: int(rng.integers(model.arity(v))) for v in model.variables[:observed]}
    tables, arity, ev = log_tables(model, evidence)
    merged = merged_tables(tables)
    want = flat_tables([(scope, logs) for scope, logs in merged if scope])
    constant = sum((float(logs) for scope, logs in merged if not scope), 0.0)
    ptr, var, offset, values, got = reduced_and_merged(model.flat_log_tables(), arity, ev)
    for ours, theirs in zip((ptr, var, offset, values), (want[0], want[1], want[3], want[4])):
        np.testing.assert_array_equal(ours, theirs)
    assert got == constant


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 6))
def test_each_assignment_left_is_worth_its_best_completion(seed, n_vars):
    # the compiled elimination against brute force, entry by entry: the model left
    # plus the constant gives each assignment of its variables the best value of
    # the variables maximised out, and it keeps the graph's low-degree core
    rng = np.random.default_rng(seed)
    model = naive.random_factor_model(rng, n_vars, n_vars + 3, 3, scale=3.0)
    evidence = {v: int(rng.integers(model.arity(v)))
                for v in model.variables[:int(rng.integers(0, 2))]}
    pre = eliminate_low_degree(model, evidence)
    graph = model.interaction_graph()
    graph.remove_nodes_from(evidence)
    assert set(pre.model.variables) == naive.low_degree_core(graph)
    names = model.variables
    rows = np.array(list(itertools.product(*(range(model.arity(v)) for v in names))))
    rows = rows[[all(r[names.index(v)] == s for v, s in evidence.items()) for r in rows]]
    full = model.log_values(rows)
    left = [names.index(v) for v in pre.model.variables]
    kept = pre.model.log_values(rows[:, left]) + pre.constant
    for key in {tuple(r) for r in rows[:, left]}:
        mine = np.all(rows[:, left] == key, axis=1)
        assert kept[mine][0] == pytest.approx(full[mine].max(), rel=1e-12, abs=1e-12)


def test_a_grid_keeps_its_variables_and_a_chain_goes_whole():
    grid = nx.grid_2d_graph(4, 4)
    rng = np.random.default_rng(0)
    states = {v: ["a", "b"] for v in grid}
    model = FactorModel(list(grid), states, [Factor(e, rng.random((2, 2))) for e in grid.edges])
    pre = eliminate_low_degree(model)
    # only the four corners (two neighbours each) go; the rest keep three or more
    assert len(pre.eliminated) == pre.eliminated_count == 4 and len(pre.model.variables) == 12
    chain = FactorModel(list(range(6)), {v: ["a", "b"] for v in range(6)},
                        [Factor((k, k + 1), rng.random((2, 2))) for k in range(5)])
    res = most_probable_explanation(chain, {0: "b"})
    top, _ = _best(chain, {0: 1})
    assert res.method == "variable elimination" and res.stats["eliminated"] == 5
    assert res.log_value == pytest.approx(top) and res.assignment[0] == "b"


def test_tables_beyond_what_a_double_holds_are_left_to_the_search():
    # four variables, each next to the other three: none is eliminated, and the two
    # tables over (0, 1) add to entries 1e-600 below the largest
    clique = list(itertools.combinations(range(4), 2))
    tiny = np.array([[1.0, 1e-300], [1e-300, 1.0]])
    factors = [Factor(e, np.array([[1.0, 0.5], [0.25, 1.0]])) for e in clique]
    model = FactorModel(list(range(4)), {v: ["a", "b"] for v in range(4)},
                        factors + [Factor((0, 1), tiny), Factor((1, 0), tiny)])
    assert eliminate_low_degree(model) is None
    res = most_probable_explanation(model)
    assert res.status == "optimal" and res.log_value == pytest.approx(_best(model)[0])


def test_impossible_evidence_is_still_named():
    model = FactorModel(["a", "b"], {"a": ["0", "1"], "b": ["0", "1"]},
                        [Factor(("a", "b"), np.array([[1.0, 0.0], [1.0, 0.0]]))])
    assert eliminate_low_degree(model, {"b": "1"}) is None
    with pytest.raises(ZeroEvidenceError):
        most_probable_explanation(model, {"b": "1"})


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n_vars=st.integers(3, 7))
def test_the_model_left_scores_and_joins_alike_from_its_log_tables_and_its_factors(seed, n_vars):
    # the model left is made from flat log tables, its factors only when read
    rng = np.random.default_rng(seed)
    model = naive.random_factor_model(rng, n_vars, n_vars + 4, 3, scale=3.0, zeros=0.2)
    pre = eliminate_low_degree(model)
    if pre is None or not pre.model.variables:
        return
    left = pre.model
    assert left.flat_logs is not None
    graph = left.interaction_graph()              # read from the scopes: no factor made
    assert left._factors is None
    rebuilt = FactorModel(left.variables, {v: left.states(v) for v in left.variables},
                          left.factors)
    assert rebuilt.flat_logs is None
    rows = np.array(list(itertools.product(*(range(left.arity(v)) for v in left.variables))))
    np.testing.assert_allclose(left.log_values(rows), rebuilt.log_values(rows), rtol=1e-12,
                               atol=1e-12)
    assert nx.utils.graphs_equal(graph, rebuilt.interaction_graph())
    assert left.log_values(rows[:1])[0] == pytest.approx(rebuilt.log_values(rows[:1])[0],
                                                         rel=1e-12, abs=1e-12)
    # a model reduced by evidence has new factors, and no log tables of the old ones
    _, rest = left.reduced({left.variables[0]: 0})
    assert rest is None or rest.flat_logs is None


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6))
def test_the_flat_log_tables_hold_each_factor_entry_by_entry(seed, n_vars):
    """The model's flat tables, made for all the factors at once, read back
    each factor's log at each of its entries through the strides."""
    model = naive.random_factor_model(np.random.default_rng(seed), n_vars, n_vars + 3, 3,
                                      scale=2.0, zeros=0.2)
    ptr, var, stride, offset, values = model.flat_log_tables()
    index = {v: k for k, v in enumerate(model.variables)}
    for t, f in enumerate(model.factors):
        assert var[ptr[t]:ptr[t + 1]].tolist() == [index[v] for v in f.variables]
        for entry in itertools.product(*(range(side) for side in f.values.shape)):
            at = offset[t] + sum(a * s for a, s in zip(entry, stride[ptr[t]:ptr[t + 1]]))
            with np.errstate(divide="ignore"):
                assert values[at] == np.log(f.values[entry])
