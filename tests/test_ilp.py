"""Exact learning by integer programming: checked against the order-graph DP and
brute force on small cases, and against the bounded heuristic."""
import builtins

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twlib.data import Dataset
from twlib.errors import InputError
from twlib.graphs import elimination_width, moral_graph, treewidth_exact
from twlib.learn import bounded, ilp, order_graph
from twlib.learn.ilp import clusters, relaxation
from twlib.scores import ParentSetScores

from .naive import best_network_of_width, dense_binary_data


def _random_data(seed, n_vars, rows=300):
    rng = np.random.default_rng(seed)
    cols = {}
    prev = rng.integers(0, 2, rows)
    for i in range(n_vars):
        flip = rng.random(rows) < rng.uniform(0.05, 0.5)
        noise = rng.integers(0, 2 + i % 2, rows)
        prev = np.where(flip, noise, prev % (2 + i % 2))
        cols[f"v{i}"] = prev
    return Dataset.from_pandas(pd.DataFrame(cols))


@pytest.mark.parametrize("share", [0.0, 0.1], ids=["cold", "warm cuts"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_vars=st.integers(3, 7),
       score=st.sampled_from(["bic", "bdeu"]))
def test_same_optimum_as_the_order_graph(share, seed, n_vars, score):
    data = _random_data(seed, n_vars)
    pss = ParentSetScores(data, score=score, max_parents=3)
    exact = order_graph.dp(pss)
    res = ilp.solve(pss, time_limit=60, relaxation_share=share)
    assert res.status == "optimal"
    assert res.score == pytest.approx(exact.score, rel=1e-9, abs=1e-7)
    assert res.upper_bound >= res.score - 1e-7
    assert res.stats["root_bound"] >= res.upper_bound - 1e-6     # bounds only tighten
    if share:
        assert res.stats["relaxation"]["bound"] >= exact.score - 1e-6
    assert nx.is_directed_acyclic_graph(nx.DiGraph(
        [(u, v) for v, ps in res.parents.items() for u in ps]))


def _random_lp_point(seed, n, per_child=4):
    """Random families (child, parent row) with values summing to 1 per child."""
    rng = np.random.default_rng(seed)
    child = np.repeat(np.arange(n), per_child)
    members = rng.random((n * per_child, n)) < 0.35
    members[np.arange(n * per_child), child] = False
    members[::per_child] = False                       # every child keeps the empty set
    values = rng.dirichlet(np.full(per_child, 0.3), size=n).ravel()
    return child, members, values


def _all_violations(child, members, values, n):
    from itertools import combinations
    out = {}
    for size in range(2, n + 1):
        for combo in combinations(range(n), size):
            cluster = np.zeros(n, dtype=bool)
            cluster[list(combo)] = True
            out[combo] = clusters.cluster_violation(cluster, child, members, values)
    return out


@pytest.mark.parametrize("search_nodes", [200_000, 0], ids=["compiled search", "sub-IP"])
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(2, 7))
def test_separation_reports_only_violated_clusters_and_misses_none(search_nodes, seed, n):
    child, members, values = _random_lp_point(seed, n)
    brute = _all_violations(child, members, values, n)
    found, proved = clusters.violated_clusters(child, members, values, n, exact=True,
                                               report_proof=True, search_nodes=search_nodes)
    for violation, cluster in found:
        true = brute[tuple(np.flatnonzero(cluster))]
        assert violation == pytest.approx(true, abs=1e-5) and true > 0
    if max(brute.values()) > 1e-4:
        assert found, "the exact separation missed a violated cluster"
    # a small sub-IP runs to its end, so an empty answer is a proof; the peeling's is not
    assert proved
    peeled, peeling_proved = clusters.violated_clusters(child, members, values, n, exact=False,
                                                        report_proof=True)
    assert peeling_proved == bool(peeled)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(2, 8), keep=st.integers(1, 6))
def test_compiled_separation_keeps_exactly_the_most_violated_clusters(seed, n, keep):
    child, members, values = _random_lp_point(seed, n)
    brute = _all_violations(child, members, values, n)
    costs, rows, found, finished = clusters._search_clusters(child, members, values, n, keep,
                                                             10**6)
    assert finished
    for cost, row in zip(costs[:found], rows[:found]):
        assert 1.0 - cost == pytest.approx(brute[tuple(np.flatnonzero(row))], abs=1e-9)
    assert len({row.tobytes() for row in rows[:found]}) == found
    best = sorted((v for v in brute.values() if v > 1e-6), reverse=True)[:keep]
    assert sorted(1.0 - costs[:found], reverse=True) == pytest.approx(best, abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(3, 7), largest=st.integers(3, 4))
def test_packing_separation_finds_exactly_the_violated_sets(seed, n, largest):
    from itertools import combinations
    child, members, values = _random_lp_point(seed, n)
    members[values > 0.3] |= np.random.default_rng(seed).random((int((values > 0.3).sum()), n)) < .5
    members[np.arange(len(child)), child] = False
    values[values <= 1e-6] = 0.0        # the separation reads these as outside the support
    brute = {}                          # every set of 3..largest, written out plainly
    for size in range(3, largest + 1):
        for combo in combinations(range(n), size):
            total = sum(values[j] for j in range(len(child)) if child[j] in combo
                        and all(members[j, u] for u in combo if u != child[j]))
            brute[combo] = total - 1.0
    found = clusters.violated_packings(child, members, values, n, largest=largest, max_cuts=10**6)
    reported = {tuple(np.flatnonzero(row)): violation for violation, row in found}
    assert reported == pytest.approx({s: v for s, v in brute.items() if v > 1e-6}, abs=1e-9)
    for members_set in reported:
        row = np.zeros(n, dtype=bool)
        row[list(members_set)] = True
        summed = clusters.packing_families(row, child, members)
        assert values[summed].sum() - 1.0 == pytest.approx(reported[members_set])


def test_packing_rows_tighten_the_relaxation_of_a_deterministic_triple():
    # c = a xor b: any two of a, b, c determine the third and one alone says nothing, so
    # each one's best family is the other two; the cluster constraints allow half of each
    # (1.5 > 1 of the packing row of {a, b, c}), a network only one
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, (2, 400))
    frame = pd.DataFrame({"a": a, "b": b, "c": a ^ b, "d": rng.integers(0, 2, 400)})
    pss = ParentSetScores(Dataset.from_pandas(frame), max_parents=2)
    optimum = order_graph.dp(pss).score
    clusters_only = relaxation.lp_bound(pss, packing=2)
    packed = relaxation.lp_bound(pss, packing=3)
    assert clusters_only["converged"] and packed["converged"]
    assert optimum - 1e-6 <= packed["bound"] < clusters_only["bound"] - 1.0
    assert len(packed["packings"]) >= 1 and not len(clusters_only["packings"])


def _sink_order_twin(fam, values):
    """GOBNILP's sink rule written plainly: from the last place back, each unplaced
    variable's most weighted family with no placed parent (ties: better score); the
    variable with the heaviest (then best scoring) such family is the sink."""
    placed, order = set(), []
    while len(placed) < fam.n:
        best = {}
        for j in range(len(fam.score)):
            v = int(fam.child[j])
            if v in placed or placed & set(np.flatnonzero(fam.members[j]).tolist()):
                continue
            old = best.get(v, (-1.0, -np.inf))
            if values[j] > old[0] + 1e-9 or (values[j] > old[0] - 1e-9 and fam.score[j] > old[1]):
                best[v] = (values[j], fam.score[j])
        sink = None
        for v in sorted(best):
            if sink is None or best[v][0] > best[sink][0] + 1e-9 or (
                    best[v][0] > best[sink][0] - 1e-9 and best[v][1] > best[sink][1]):
                sink = v
        placed.add(sink)
        order.append(sink)
    return order[::-1]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(2, 8))
def test_sink_heuristic_gives_an_acyclic_network_best_for_its_order(seed, n):
    data = _random_data(seed, n)
    pss = ParentSetScores(data, max_parents=2)
    fam = ilp.programme._Families(pss)
    values = np.random.default_rng(seed).random(len(fam.score))
    order = ilp.programme._sink_order(fam.child, fam.parents, fam.score, values, fam.n)
    assert order.tolist() == _sink_order_twin(fam, values)
    rows = ilp.programme._best_rows_for_order(fam, order)
    position = {int(v): i for i, v in enumerate(order)}
    for v, j in enumerate(rows):
        assert all(position[int(u)] < position[v] for u in np.flatnonzero(fam.members[j]))
        fits = [i for i in fam.of_child[v]
                if all(position[int(u)] < position[v] for u in np.flatnonzero(fam.members[i]))]
        assert fam.score[j] == max(fam.score[fits])


@pytest.mark.parametrize("dp_vars", [0, 22], ids=["programme alone", "DP cap"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(1, 2), n_vars=st.integers(4, 5))
def test_bounded_optimum_is_the_exhaustive_optimum(dp_vars, seed, k, n_vars):
    pss = ParentSetScores(dense_binary_data(seed, n_vars), max_parents=k + 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ilp.programme, "_DP_BOUND_VARS", dp_vars)
        res = ilp.solve(pss, k=k, time_limit=60)
    assert res.status == "optimal"
    assert res.score == pytest.approx(best_network_of_width(pss, k), rel=1e-9, abs=1e-7)
    assert ("unbounded_optimum" in res.stats) == (dp_vars > 0)


def test_unbounded_optimum_caps_the_bound_under_k():
    from twlib.datasets import load_sklearn
    pss = ParentSetScores(load_sklearn("wine"), max_parents=2)
    unbounded = order_graph.dp(pss)
    g = moral_graph({v: list(ps) for v, ps in unbounded.parents.items()})
    g.add_nodes_from(pss.names)
    assert treewidth_exact(g)[0] > 1             # the cap is not met at k = 1
    res = ilp.solve(pss, k=1, time_limit=0.5, relaxation_share=0)
    assert res.stats["unbounded_optimum"] == pytest.approx(unbounded.score)
    assert res.score - 1e-7 <= res.upper_bound <= unbounded.score + 1e-7
    exact = ilp.solve(pss, k=1, time_limit=60)
    assert exact.status == "optimal"
    assert exact.score <= res.upper_bound + 1e-7


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(1, 2))
def test_bounded_optimum_matches_brute_force_and_beats_the_heuristic(seed, k):
    data = _random_data(seed, 6)
    pss = ParentSetScores(data, max_parents=k)
    res = ilp.solve(pss, k=k, time_limit=60)
    assert res.status == "optimal"
    assert res.width <= k
    moral = moral_graph({v: list(ps) for v, ps in res.parents.items()})
    moral.add_nodes_from(data.names)
    assert treewidth_exact(moral)[0] <= k
    assert elimination_width(moral, res.elimination_order) <= k
    # brute force: the best order-consistent network of width <= k over every order
    import itertools
    best = -np.inf
    names = data.names
    for order in itertools.permutations(range(len(names))):
        parents = {}
        total = 0.0
        for i, v in enumerate(order):
            s, ps = pss.best(names[v], candidates=[names[u] for u in order[:i]])
            parents[names[v]] = ps
            total += s
        if total <= best:
            continue
        g = moral_graph({v: list(ps) for v, ps in parents.items()})
        g.add_nodes_from(names)
        if treewidth_exact(g)[0] <= k:
            best = total
    assert res.score >= best - 1e-7      # greedy per order is a lower bound on the optimum
    unbounded = order_graph.dp(pss)
    assert res.score <= unbounded.score + 1e-7
    g = moral_graph({v: list(ps) for v, ps in unbounded.parents.items()})
    g.add_nodes_from(names)
    if treewidth_exact(g)[0] <= k:
        assert res.score == pytest.approx(unbounded.score, rel=1e-9, abs=1e-7)
    heuristic = bounded.learn(data, k, time_limit=2, max_iter=2, random_state=0)
    assert res.score >= heuristic.score - 1e-6


def test_time_limited_run_returns_incumbent_with_valid_bound():
    from twlib.datasets import load_sklearn
    data = load_sklearn("wine")
    pss = ParentSetScores(data, max_parents=3)
    res = ilp.solve(pss, time_limit=0.05)
    assert res.status in ("optimal", "time_limit")
    assert res.upper_bound >= res.score - 1e-7
    assert res.upper_bound >= order_graph.dp(pss).score - 1e-6


def test_bad_input_is_named():
    data = _random_data(0, 4)
    with pytest.raises(InputError, match="tree-width bound"):
        ilp.learn(data, k=0)
    with pytest.raises(InputError, match="max_parents"):
        ilp.learn(data, max_parents=-1)
    with pytest.raises(InputError, match="score"):
        ilp.learn(data, score="aic")
    with pytest.raises(InputError, match="time_limit"):
        ilp.learn(data, time_limit=0)
    with pytest.raises(InputError, match="relaxation_share"):
        ilp.solve(ParentSetScores(data, max_parents=2), relaxation_share=1.0)
    with pytest.raises(InputError, match="relaxation_share"):
        ilp.learn(data, relaxation_share=-0.1)
    with pytest.raises(InputError, match="helper_share"):
        ilp.solve(ParentSetScores(data, max_parents=2), helper_share=1.5)
    pss = ParentSetScores(data, max_parents=2)
    with pytest.raises(InputError, match="no parameter 'separating/nonsense'"):
        ilp.solve(pss, solver_params={"separating/nonsense": 1})
    with pytest.raises(InputError, match="separating/maxroundsroot = 'many'"):
        ilp.solve(pss, solver_params={"separating/maxroundsroot": "many"})


def test_missing_solver_is_named(monkeypatch):
    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "pyscipopt":
            raise ImportError("no")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(ilp.SolverMissing, match="pyscipopt"):
        ilp.learn(_random_data(0, 3))


def test_scoring_on_an_executor_gives_the_same_optimum():
    from concurrent.futures import ThreadPoolExecutor
    data = _random_data(3, 6)
    plain = ilp.learn(data, max_parents=2, start=None)
    with ThreadPoolExecutor(2) as ex:
        spread = ilp.learn(data, max_parents=2, start=None, executor=ex)
    assert spread.status == plain.status == "optimal"
    assert spread.score == pytest.approx(plain.score) and spread.parents == plain.parents


def test_helper_process_solves_the_restricted_programme(monkeypatch):
    """The second process, given every family, returns the optimum once, and a
    solve that starts it (threshold lowered) still proves the same optimum."""
    data = _random_data(3, 8)
    pss = ParentSetScores(data, max_parents=2)
    fam = ilp.programme._Families(pss)
    start_rows = ilp.programme._start_rows(fam, {}, pss)
    helper = ilp.programme._Helper(pss, fam, np.arange(len(fam.score)), start_rows, seconds=30)
    helper._process.wait()
    parents = helper.receive()
    assert helper.receive() is None                       # handed over once
    helper.stop()
    assert helper.stats["exit"] == 0
    optimum = order_graph.dp(pss).score
    score = sum(pss.score_of(v, list(ps)) for v, ps in parents.items())
    assert score == pytest.approx(optimum, abs=1e-6)
    monkeypatch.setattr(ilp.programme, "_HELPER_FAMILIES", 0)
    res = ilp.solve(pss, time_limit=60, start={})
    assert res.score == pytest.approx(optimum, abs=1e-6) and "helper" in res.stats


@pytest.mark.parametrize("k", [None, 2])
def test_restricted_programme_keeps_a_valid_bound(monkeypatch, k):
    """Past the family threshold the branch and cut sees the relaxation's columns and
    the start's families only: the network is one of the whole programme's, the
    bound holds for the whole programme, and "optimal" only when the two meet."""
    data = _random_data(5, 8)
    pss = ParentSetScores(data, max_parents=2)
    optimum = (order_graph.dp(pss).score if k is None
               else ilp.solve(pss, k=k, time_limit=60).score)
    monkeypatch.setattr(ilp.programme, "_BRANCH_AND_CUT_FAMILIES", 0)
    res = ilp.solve(pss, k=k, time_limit=60, start={})
    assert res.stats["restricted"]["families"] < len(pss) == res.stats["candidate_sets"]
    assert res.score == pytest.approx(
        sum(pss.score_of(v, list(ps)) for v, ps in res.parents.items()))
    assert res.score <= optimum + 1e-6 <= res.upper_bound + 2e-6
    assert res.status in ("optimal", "complete")
    assert (res.status == "optimal") == (res.score >= res.upper_bound - 1e-6)
    if k is not None:
        assert res.width <= k
    assert res.stats["history"][-1]["bound"] == pytest.approx(res.upper_bound)


def test_scoring_past_the_time_limit_is_announced():
    data = _random_data(0, 6)
    with pytest.warns(RuntimeWarning, match=r"at most 3 parents .* max_parents=2"):
        res = ilp.learn(data, time_limit=1e-7)
    assert res.score <= res.upper_bound


def test_sink_heuristic_skips_an_order_that_places_a_required_parent_late():
    from twlib.knowledge import Knowledge

    data = _random_data(5, 4)
    know = Knowledge(required=["v0 -> v2"])
    fam = ilp.programme._Families(ParentSetScores(data, max_parents=2, knowledge=know))
    assert ilp.programme._best_rows_for_order(fam, np.array([2, 0, 1, 3])) is None
    rows = ilp.programme._best_rows_for_order(fam, np.array([0, 1, 2, 3]))
    assert fam.members[rows[2], 0]


def test_a_failing_callback_stops_the_solve_with_its_own_error(monkeypatch, capfd):
    def broken(*args):
        raise ValueError("a bug in the heuristic")

    monkeypatch.setattr(ilp.programme, "_sink_order", broken)
    monkeypatch.setattr(ilp.programme, "_DP_BOUND_VARS", 0)      # no optimum given up front
    pss = ParentSetScores(_random_data(3, 10, rows=400), max_parents=3)
    with pytest.raises(ilp.programme.SolverCallbackError,
                       match="Sinks.heurexec raised ValueError: a bug in the heuristic") as err:
        ilp.solve(pss, k=2, time_limit=30, relaxation_share=0.0)
    assert isinstance(err.value.__cause__, ValueError)
    assert "unspecified error" not in str(err.value) + capfd.readouterr().err
