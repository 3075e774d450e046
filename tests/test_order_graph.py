import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib.errors import BudgetExceeded
from twlib.graphs import topological_order
from twlib.learn import order_graph as og
from twlib.scores import ParentSetScores, network_score

from . import naive
from .test_information import random_dataset


def brute_force(pss):
    sets = [[(s, frozenset(pss.names.index(p) for p in ps)) for ps, s in pss.sets(v)]
            for v in pss.names]
    return naive.best_network_score(sets)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 100_000), st.integers(3, 6), st.sampled_from(["bic", "bdeu"]))
def test_astar_and_dp_reach_the_brute_force_optimum(seed, n_vars, score):
    ds = random_dataset(seed, n_vars=n_vars, n_rows=60 + seed % 200, max_arity=3)
    pss = ParentSetScores(ds, score=score, max_parents=3)
    best = brute_force(pss)
    d = og.dp(pss)
    assert d.score == pytest.approx(best, abs=1e-9)
    for h in og.HEURISTICS:
        a = og.astar(pss, heuristic=h, group_size=2)
        assert a.status == "optimal"
        assert a.score == pytest.approx(best, abs=1e-9)
        topological_order(a.parents)                     # acyclic, or it raises
        assert network_score(ds, a.parents, score=score) == pytest.approx(a.score, abs=1e-9)


def test_real_table_dp_equals_astar_and_recomputed_score():
    from twlib.datasets import load_sklearn
    ds = load_sklearn("wine")
    pss = ParentSetScores(ds, score="bic", max_parents=ds.n_vars)
    d, a, p = og.dp(pss), og.astar(pss, heuristic="simple"), og.astar(pss, heuristic="pd")
    assert d.score == pytest.approx(a.score, abs=1e-9) == pytest.approx(p.score, abs=1e-9)
    assert network_score(ds, a.parents, score="bic") == pytest.approx(a.score, abs=1e-9)
    assert a.network is not None and set(a.network.variables) == set(ds.names)
    # the tighter heuristic never expands more than the simple one
    assert p.stats["expanded"] <= a.stats["expanded"] < d.stats["nodes"]


def test_compiled_best_score_query_equals_simple_enumeration():
    ds = random_dataset(8, n_vars=7, n_rows=300)
    pss = ParentSetScores(ds, score="bdeu", max_parents=3, prune=False)
    rng = np.random.default_rng(0)
    for _ in range(200):
        v = ds.names[rng.integers(7)]
        cand = [u for u in ds.names if u != v and rng.random() < 0.5]
        expected = max((s, ps) for ps, s in pss.sets(v) if set(ps) <= set(cand))
        score, parents = og.best_parents(pss, v, cand)
        assert score == pytest.approx(expected[0]) and set(parents) <= set(cand)


def test_heuristics_are_admissible_and_consistent_along_a_run():
    ds = random_dataset(21, n_vars=8, n_rows=250)
    pss = ParentSetScores(ds, score="bic", max_parents=3)
    exact = og.remaining_cost_table(pss)
    for h in ("simple", "pd"):
        res = og.astar(pss, heuristic=h, group_size=4, trace=True)
        f = res.stats["trace_f"]
        assert np.all(np.diff(f) >= -1e-9)                            # f never decreases
        masks, g, hvals, _ = res.stats["trace_nodes"]
        assert np.all(hvals <= exact[masks.astype(np.int64)] + 1e-9)  # h never overestimates
    assert exact[0] == pytest.approx(-og.dp(pss).score)


def test_node_limit_returns_bounds_not_a_crash():
    ds = random_dataset(5, n_vars=9, n_rows=300)
    pss = ParentSetScores(ds, score="bic", max_parents=3)
    optimum = og.dp(pss).score
    res = og.astar(pss, heuristic="simple", max_nodes=40)
    assert res.status == "node_limit"
    low, high = res.stats["score_bounds"]
    assert low <= optimum + 1e-9 and optimum <= high + 1e-9
    assert res.score == pytest.approx(low)
    topological_order(res.parents)


def test_bad_arguments():
    ds = random_dataset(1, n_vars=4)
    pss = ParentSetScores(ds, score="bic", max_parents=2)
    with pytest.raises(ValueError, match="heuristic"):
        og.astar(pss, heuristic="magic")
    with pytest.raises(BudgetExceeded, match="max_memory_gb"):
        og.dp(pss, max_memory_gb=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**31))
def test_optimal_order_equals_brute_force_over_permutations(n, seed):
    """The raw-candidate DP against trying every order."""
    import itertools

    rng = np.random.default_rng(seed)
    masks, costs, offsets = [], [], [0]
    for v in range(n):
        m = int(rng.integers(1, 5))
        need = [int(x) & ~(1 << v) for x in rng.integers(0, 1 << n, m)]
        if rng.random() < 0.7:
            need[-1] = 0                                  # usually one candidate with no need
        c = np.sort(rng.random(m) * 10)
        masks += need
        costs += c.tolist()
        offsets.append(len(costs))
    best = np.inf
    for perm in itertools.permutations(range(n)):
        placed, total = 0, 0.0
        for v in perm:
            admissible = [costs[t] for t in range(offsets[v], offsets[v + 1])
                          if masks[t] & ~placed == 0]
            total += min(admissible, default=np.inf)
            placed |= 1 << v
        best = min(best, total)
    order, chosen, total = og.optimal_order(np.array(masks, dtype=np.uint64), np.array(costs),
                                            np.array(offsets))
    assert np.isclose(total, best) or (np.isinf(total) and np.isinf(best))
    if np.isfinite(total):
        placed = 0
        for v in order:
            assert offsets[v] <= chosen[v] < offsets[v + 1] and masks[chosen[v]] & ~placed == 0
            placed |= 1 << v
        assert np.isclose(sum(costs[chosen[v]] for v in range(n)), total)
