"""twlib.learn.bounded: certificates, scores, the exact start, bad input, and its kernels
against networkx twins."""
from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twlib.data import Dataset
from twlib.datasets import load_network
from twlib.errors import InputError
from twlib.graphs import elimination_width, moral_graph, treewidth_exact
from twlib.learn import bounded, order_graph
from twlib.learn.bounded.width import (apply_fill, close_fill, filled_graph, later_neighbours,
                                       min_fill, min_fill_after, moral_bits, parent_rows, reaches,
                                       width_along)
from twlib.learn.bounded.starts import k_greedy, k_max, k_max_clique
from twlib.learn.bounded.windows import improve_window
from twlib.network import BayesianNetwork, random_network
from twlib.scores import FamilyScorer, ParentSetScores, local_score, network_score


def _random_dag(rng, n, k):
    order = rng.permutation(n)
    parents = {}
    for i, v in enumerate(order):
        earlier = order[:i]
        size = rng.integers(0, min(k, i) + 1)
        parents[int(v)] = sorted(int(u) for u in rng.choice(earlier, size, replace=False))
    return parents


def _bits_to_graph(adj, n):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for v in range(n):
        for u in range(n):
            if (int(adj[v, u >> 6]) >> (u & 63)) & 1:
                g.add_edge(v, u)
    return g


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 90), st.integers(1, 4), st.integers(0, 2**31))
def test_kernels_match_networkx(n, k, seed):
    rng = np.random.default_rng(seed)
    parents = _random_dag(rng, n, k)
    moral = moral_graph(parents)
    moral.add_nodes_from(range(n))
    adj = moral_bits(parent_rows(parents, k), (n + 63) // 64)
    assert nx.utils.graphs_equal(_bits_to_graph(adj, n), moral)
    order = [int(v) for v in rng.permutation(n)]
    true_width = elimination_width(moral, order)
    along = width_along(adj, np.array(order), n)
    assert along == true_width
    early = width_along(adj, np.array(order), 1)        # stops at the first clique over 1
    assert early == true_width if true_width <= 1 else 1 < early <= true_width
    fill_order, fill_width = min_fill(adj, n)
    assert sorted(fill_order.tolist()) == list(range(n))
    assert elimination_width(moral, fill_order.tolist()) == fill_width
    g = nx.DiGraph((u, v) for v, ps in parents.items() for u in ps)
    g.add_nodes_from(range(n))
    a, b = (int(x) for x in rng.integers(0, n, 2))
    assert reaches(parent_rows(parents, k), a, b, -1, -1) == (a != b and nx.has_path(g, a, b))


def _min_fill_twin(graph: nx.Graph, k: int, prefix=()):
    """Plain min-fill with the kernel's tie rules: least fill, then least degree, then index;
    after eliminating ``prefix`` as it stands."""
    g = graph.copy()
    order, width = [], 0
    for v in prefix:
        nb_ = list(g[v])
        g.add_edges_from((a, b) for i, a in enumerate(nb_) for b in nb_[i + 1:])
        g.remove_node(v)
        order.append(v)
        width = max(width, len(nb_))
        if width > k:
            return order, width
    while g.number_of_nodes():
        costs = []
        for v in sorted(g.nodes):
            nb_ = sorted(g[v])
            if len(nb_) > k:
                continue
            fill = sum(1 for i, a in enumerate(nb_) for b in nb_[i + 1:] if not g.has_edge(a, b))
            costs.append((fill, len(nb_), v))
        if not costs:
            return order, k + 1
        _, d, v = min(costs)
        nb_ = list(g[v])
        g.add_edges_from((a, b) for i, a in enumerate(nb_) for b in nb_[i + 1:])
        g.remove_node(v)
        order.append(v)
        width = max(width, d)
    return order, width


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 70), st.integers(1, 5), st.integers(0, 2**31))
def test_min_fill_kernel_equals_its_twin(n, k, seed):
    rng = np.random.default_rng(seed)
    parents = _random_dag(rng, n, 3)
    moral = moral_graph(parents)
    moral.add_nodes_from(range(n))
    order, width = min_fill(moral_bits(parent_rows(parents, 3), (n + 63) // 64), k)
    twin_order, twin_width = _min_fill_twin(moral, k)
    assert width == twin_width
    if width <= k:
        assert order.tolist() == twin_order


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 70), st.integers(1, 5), st.integers(0, 2**31), st.data())
def test_min_fill_after_a_kept_prefix_equals_its_twin(n, k, seed, draw):
    rng = np.random.default_rng(seed)
    parents = _random_dag(rng, n, 3)
    moral = moral_graph(parents)
    moral.add_nodes_from(range(n))
    certificate = rng.permutation(n)
    start = draw.draw(st.integers(0, n))
    order, width = min_fill_after(moral_bits(parent_rows(parents, 3), (n + 63) // 64),
                                  certificate, start, k)
    twin_order, twin_width = _min_fill_twin(moral, k, certificate[:start].tolist())
    assert (width <= k) == (twin_width <= k)
    if width <= k:
        assert width == twin_width == elimination_width(moral, order.tolist())
        assert order.tolist() == twin_order
        assert order[:start].tolist() == certificate[:start].tolist()


@settings(max_examples=30, deadline=None)
@given(st.integers(4, 40), st.integers(1, 4), st.integers(0, 2**31))
def test_a_move_leaves_the_prefix_before_its_vertices_unchanged(n, k, seed):
    """The incremental check's premise: changing edges among vertices placed at
    ``start`` or later leaves every clique of the prefix as it was."""
    rng = np.random.default_rng(seed)
    parents = _random_dag(rng, n, k)
    moral = moral_graph(parents)
    moral.add_nodes_from(range(n))
    order = [int(v) for v in rng.permutation(n)]
    start = int(rng.integers(0, n - 1))
    late = order[start:]
    changed = moral.copy()
    for _ in range(3):
        a, b = rng.choice(late, 2, replace=False)
        if changed.has_edge(a, b):
            changed.remove_edge(a, b)
        else:
            changed.add_edge(a, b)

    def cliques(g):
        g, out = g.copy(), []
        for v in order[:start]:
            out.append(sorted(g[v]))
            nb_ = list(g[v])
            g.add_edges_from((x, y) for i, x in enumerate(nb_) for y in nb_[i + 1:])
            g.remove_node(v)
        return out
    assert cliques(moral) == cliques(changed)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 140), st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**31))
def test_closing_the_fill_equals_eliminating_again(n, k, n_new, seed):
    """hc-ET's incremental check: the filled graph of an order, with edges added
    and closed by close_fill, is the filled graph of the grown graph."""
    rng = np.random.default_rng(seed)
    parents = _random_dag(rng, n, min(k, 3))
    words = (n + 63) // 64
    adj = moral_bits(parent_rows(parents, 3), words)
    order = rng.permutation(n)
    rows, position = later_neighbours(adj, order)
    grown = moral_graph(parents)
    grown.add_nodes_from(range(n))
    k = max(k, elimination_width(grown, order.tolist()))      # the rows start within k
    pairs = rng.integers(0, n, (n_new, 2))
    grown.add_edges_from((int(a), int(b)) for a, b in pairs if a != b)
    scratch, slot, touched = (np.zeros((n, words), dtype=np.uint64), np.full(n, -1),
                              np.zeros(n, dtype=np.int64))
    count = close_fill(rows, position[pairs], k, scratch, slot, touched)
    true_width = elimination_width(grown, order.tolist())
    assert (count >= 0) == (true_width <= k)
    if count < 0:
        assert (slot == -1).all()
        return
    apply_fill(rows, scratch, slot, touched, count)
    assert (slot == -1).all()
    g_adj = np.zeros((n, words), dtype=np.uint64)
    for a, b in grown.edges:
        g_adj[a, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
        g_adj[b, a >> 6] |= np.uint64(1) << np.uint64(a & 63)
    expected, _ = later_neighbours(g_adj, order)
    assert (rows == expected).all()
    sizes = [bin(int.from_bytes(r.tobytes(), "little")).count("1") for r in rows]
    assert max(sizes, default=0) == true_width


def _random_candidates(n, k, rng, empty_score):
    """Six random parent sets of 1 to k + 1 parents per variable with normal scores,
    and the empty set scored ``empty_score(rng)``, best first."""
    candidates = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        sets = {tuple(sorted(rng.choice(others, size=int(rng.integers(1, min(k + 1, n - 1) + 1)),
                                        replace=False).tolist())) for _ in range(6)}
        scored = [(float(rng.normal()), ps) for ps in sets] + [(empty_score(rng), ())]
        candidates.append(sorted(scored, key=lambda t: -t[0]))
    return candidates


def _k_greedy_twin(candidates, k, order):
    """k-greedy written plainly on a networkx k-tree, with the kernel's rules: the
    best candidate that is a clique of placed variables, joined to the oldest
    (k+1)-clique holding it, less that clique's first vertex outside the set."""
    tree, cliques, parents, total = nx.Graph(), [], {}, 0.0
    for i, v in enumerate(order):
        score, ps = next((s, ps) for s, ps in candidates[v]
                         if len(ps) <= k and all(p in tree for p in ps)
                         and (i <= k or all(tree.has_edge(a, b) for a, b in
                                            itertools.combinations(ps, 2))))
        parents[v], total = tuple(sorted(ps)), total + score
        tree.add_node(v)
        if i < k:
            continue
        if i == k:
            clique = tuple(order[:k + 1])
        else:
            held = next(c for c in cliques if set(ps) <= set(c))
            drop = next(x for x in held if x not in ps)
            clique = tuple(x for x in held if x != drop) + (v,)
        tree.add_edges_from(itertools.combinations(clique, 2))
        cliques.append(clique)
    return parents, total, tree


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(1, 4), st.integers(0, 2**31))
def test_k_greedy_equals_its_twin_and_is_certified(n, k, seed):
    candidates = _random_candidates(n, k, np.random.default_rng(seed), lambda rng: -5.0)
    parents, order, score = k_greedy(candidates, k, np.random.default_rng(seed))
    insertion = order[::-1].tolist()
    twin_parents, twin_score, tree = _k_greedy_twin(candidates, k, insertion)
    assert parents == [twin_parents[v] for v in range(n)] and score == pytest.approx(twin_score)
    place = {v: i for i, v in enumerate(insertion)}
    assert all(place[p] < place[v] for v in range(n) for p in parents[v])     # acyclic
    moral = moral_graph(dict(enumerate(parents)))
    moral.add_nodes_from(range(n))
    if n > k:                                         # a k-tree: chordal, k n - k(k+1)/2 edges
        assert nx.is_chordal(tree) and tree.number_of_edges() == k * n - k * (k + 1) // 2
        assert all(tree.has_edge(a, b) for a, b in moral.edges)
    assert elimination_width(moral, order.tolist()) <= k


def _k_max_twin(candidates, k, clique):
    """k-MAX written plainly: the best DAG on the first clique by trying every
    order; then, each step, every waiting variable's first candidate inside a
    (k+1)-clique made so far, the one closest to its own best (scaled by its
    candidates' range; ties to the lowest variable) joined to the oldest clique
    holding its set, less that clique's first vertex outside the set."""
    usable = [[(s, ps) for s, ps in c if len(ps) <= k] for c in candidates]
    head = max((sum(next(s for s, ps in usable[v] if set(ps) <= set(perm[:i]))
                    for i, v in enumerate(perm)), perm)
               for perm in itertools.permutations(clique.tolist()))[1]
    parents, total = {}, 0.0
    for i, v in enumerate(head):
        score, ps = next((s, ps) for s, ps in usable[v] if set(ps) <= set(head[:i]))
        parents[v], total = tuple(sorted(ps)), total + score
    cliques = [tuple(clique.tolist())]
    tree = nx.complete_graph(head)
    while len(parents) < len(candidates):
        options = []
        for u in sorted(set(range(len(candidates))) - set(parents)):
            scores = [s for s, _ in usable[u]]
            score, ps = next((s, ps) for s, ps in usable[u]
                             if any(set(ps) <= set(c) for c in cliques))
            spread = max(scores) - min(scores)
            options.append(((max(scores) - score) / spread if spread > 0 else 0.0, u, score, ps))
        _, v, score, ps = min(options)
        parents[v], total = tuple(sorted(ps)), total + score
        held = next(c for c in cliques if set(ps) <= set(c))
        drop = next(x for x in held if x not in ps)
        cliques.append(tuple(x for x in held if x != drop) + (v,))
        tree.add_edges_from((v, x) for x in cliques[-1][:-1])
    return parents, total, tree


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 14), st.integers(1, 4), st.integers(0, 2**31))
def test_k_max_equals_its_twin_and_is_certified(n, k, seed):
    k = min(k, n - 1)
    candidates = _random_candidates(n, k, np.random.default_rng(seed),
                                    lambda rng: float(rng.normal()) - 3)
    parents, order, score = k_max(candidates, k, np.random.default_rng(seed))
    clique = k_max_clique(candidates, k, np.random.default_rng(seed))
    twin_parents, twin_score, tree = _k_max_twin(candidates, k, clique)
    assert parents == [twin_parents[v] for v in range(n)] and score == pytest.approx(twin_score)
    place = {v: i for i, v in enumerate(order[::-1].tolist())}
    assert all(place[p] < place[v] for v in range(n) for p in parents[v])     # acyclic
    moral = moral_graph(dict(enumerate(parents)))
    moral.add_nodes_from(range(n))
    assert nx.is_chordal(tree) and tree.number_of_edges() == k * n - k * (k + 1) // 2
    assert all(tree.has_edge(a, b) for a, b in moral.edges)
    assert elimination_width(moral, order.tolist()) <= k


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 8), st.integers(1, 3), st.sampled_from(["bic", "bdeu"]), st.integers(0, 2**31))
def test_candidate_sets_are_scored_exactly_and_beat_their_kept_subsets(n, m, score, seed):
    ds = _dataset(seed, n, 300)
    scorer = FamilyScorer(ds, score=score)
    for v in range(n):
        found = scorer.candidate_sets(v, m, budget=64)
        assert () in [ps for _, ps in found]
        assert [s for s, _ in found] == sorted((s for s, _ in found), reverse=True)
        kept = dict((ps, s) for s, ps in found)
        for ps, s in kept.items():
            assert len(ps) <= m and v not in ps
            assert s == pytest.approx(local_score(ds, ds.names[v], [ds.names[p] for p in ps],
                                                  score=score))
            for r in range(len(ps)):
                for sub in itertools.combinations(ps, r):
                    if sub in kept:
                        assert s > kept[sub]


@pytest.mark.parametrize("score", ["bic", "bdeu"])
def test_candidate_lists_on_an_executor_are_the_ones_of_this_process(score):
    ds = _dataset(5, 12, 400)
    here = FamilyScorer(ds, score=score).candidate_lists(3)
    with ThreadPoolExecutor(3) as ex:
        there = FamilyScorer(ds, score=score).candidate_lists(3, executor=ex)
    assert there == here == [FamilyScorer(ds, score=score).candidate_sets(v, 3)
                             for v in range(12)]


@pytest.mark.parametrize("initial", ["k-greedy", "k-max"])
def test_ktree_start_certifies_its_network(initial):
    ds = _dataset(3, 40, 600, max_arity=2)
    res = bounded.learn(ds, k=2, time_limit=20, max_iter=1, window=0, initial=initial,
                        random_state=0)
    assert res.stats["history"][0]["event"] == f"{initial} start"
    assert res.stats["history"][1]["event"] == "start"
    assert res.width <= 2 and res.score >= res.stats["history"][0]["score"]


def test_race_goes_on_from_the_better_climb():
    ds = _dataset(4, 40, 600, max_arity=2)
    res = bounded.learn(ds, k=2, time_limit=20, max_iter=1, window=0, initial="race",
                        random_state=0)
    race = res.stats["race"]
    assert set(race) == {"k-max", "empty"} and res.width <= 2
    assert res.score >= max(race.values()) - 1e-6 * abs(res.score)


def test_width_check_stops_early_above_k():
    clique = {v: list(range(v)) for v in range(6)}        # moral graph K6: width 5
    adj = moral_bits(parent_rows(clique, 5), 1)
    assert width_along(adj, np.arange(6), 5) == 5
    assert width_along(adj, np.arange(6), 2) > 2
    assert min_fill(adj, 2)[1] == 3                      # k + 1: nothing fits


def _dataset(seed, n, rows, max_arity=3):
    arities = np.random.default_rng(seed).integers(2, max_arity + 1, n)
    net = random_network(n, max_in=2, arities=arities, random_state=seed)
    return net.sample(rows, random_state=seed)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 9), st.integers(40, 300), st.integers(0, 2**31), st.data())
def test_result_is_certified_and_scored(n, rows, seed, draw):
    ds = _dataset(seed, n, rows)
    k = draw.draw(st.integers(1, n - 1))
    score = draw.draw(st.sampled_from(["bic", "bdeu", "ll"]))
    res = bounded.learn(ds, k=k, score=score, time_limit=10, max_iter=3, random_state=seed)
    moral = moral_graph(res.parents)
    moral.add_nodes_from(ds.names)
    assert sorted(res.elimination_order) == sorted(ds.names)
    assert elimination_width(moral, res.elimination_order) == res.width <= k
    assert math.isclose(res.score, network_score(ds, res.parents, score=score), rel_tol=1e-9,
                        abs_tol=1e-7)
    assert res.upper_bound >= res.score - 1e-7 * abs(res.score)
    assert res.gap_percent >= 0
    assert np.isfinite(res.network.log_likelihood(ds))


def test_family_scorer_matches_local_score():
    ds = _dataset(3, 7, 400)
    fs = FamilyScorer(ds, score="bdeu", ess=2.0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        child = int(rng.integers(7))
        others = [u for u in range(7) if u != child]
        ps = tuple(int(u) for u in rng.choice(others, rng.integers(0, 3), replace=False))
        expect = local_score(ds, ds.names[child], [ds.names[p] for p in ps], score="bdeu", ess=2.0)
        assert math.isclose(fs(child, ps), expect, rel_tol=1e-12)
        rest = [u for u in others if u not in ps]
        batch = fs.with_each_added(child, ps, rest)
        for u, got in zip(rest, batch):
            names = [ds.names[p] for p in ps + (u,)]
            assert math.isclose(got, local_score(ds, ds.names[child], names, score="bdeu", ess=2.0),
                                rel_tol=1e-12)


SMALL_NETWORKS = ["asia", "cancer", "earthquake", "sachs", "survey", "child"]


@pytest.mark.parametrize("name", SMALL_NETWORKS)
def test_small_networks_reach_the_exact_optimum(name):
    """Whenever the optimum over in-degree <= 4 has tree-width <= k, the learner returns
    a network of that score (and says it is optimal)."""
    ds = load_network(name).sample(2000, random_state=1)
    reference = order_graph.dp(ParentSetScores(ds, score="bic", max_parents=4))
    moral = moral_graph(reference.parents)
    moral.add_nodes_from(ds.names)
    tw = treewidth_exact(moral)[0]
    for k in (2, 3, 4):
        if k >= ds.n_vars:
            continue
        res = bounded.learn(ds, k=k, time_limit=30, max_iter=2, random_state=0)
        assert res.width <= k
        if tw <= k:
            assert math.isclose(res.score, reference.score, rel_tol=1e-9)
            assert res.status == "optimal" and res.gap_percent == 0
        else:
            assert res.score <= reference.score + 1e-6


def test_search_beats_its_start_and_keeps_history():
    ds = _dataset(5, 30, 1500, max_arity=2)
    res = bounded.learn(ds, k=2, time_limit=20, max_iter=4, random_state=0)
    history = res.stats["history"]
    assert history[0]["event"] == "start" and history[0]["score"] < res.score
    assert [h["score"] for h in history] == sorted(h["score"] for h in history)
    assert res.stats["runs"] == 4 and res.status == "complete"
    assert not res.stats["exact_start"]
    phases = res.stats["phases"]
    assert list(phases) == ["start", "candidate rows", "first climb", "upper bound", "search"]
    assert 0 < sum(phases.values()) <= res.stats["seconds"]


def test_same_seed_same_network():
    ds = _dataset(7, 25, 800)
    a = bounded.learn(ds, k=3, time_limit=30, max_iter=3, random_state=4)
    b = bounded.learn(ds, k=3, time_limit=30, max_iter=3, random_state=4)
    assert a.parents == b.parents and a.score == b.score


def test_parameters_are_bayesian_by_default():
    frame = pd.DataFrame({"a": [0, 0, 1, 1] * 10, "b": [0, 0, 1, 1] * 10,
                          "c": [0, 1, 0, 1] * 10})
    ds = Dataset.from_pandas(frame)
    res = bounded.learn(frame, k=1, time_limit=5, max_iter=1, random_state=0)
    assert res.parents["b"] == ["a"] or res.parents["a"] == ["b"]
    unseen = Dataset(np.array([[0, 1, 0]], dtype=np.uint8), ds.names, ds.states)
    assert np.isfinite(res.network.log_likelihood(unseen))
    mle = bounded.learn(frame, k=1, time_limit=5, max_iter=1, random_state=0, parameter_ess=None)
    assert mle.network.log_likelihood(unseen) == -np.inf
    assert mle.network.allclose(BayesianNetwork.fit(ds, mle.parents, estimator="mle"))


@pytest.mark.parametrize("kwargs, message", [
    ({"k": 0}, "1 <= k < n"),
    ({"k": 4}, "1 <= k < n"),
    ({"k": 2.5}, "1 <= k < n"),
    ({"k": 2, "time_limit": 0}, "time_limit"),
    ({"k": 2, "max_iter": 0}, "max_iter"),
    ({"k": 2, "parameter_ess": 0}, "parameter_ess"),
    ({"k": 2, "perturbation": 0}, "perturbation"),
    ({"k": 2, "score": "aic"}, "unknown score"),
    ({"k": 2, "initial": "kmax"}, "initial"),
])
def test_bad_input_is_named(kwargs, message):
    frame = pd.DataFrame({c: [0, 1, 1, 0] for c in "abcd"})
    with pytest.raises(InputError, match=message):
        bounded.learn(frame, **kwargs)


def test_missing_values_are_refused():
    frame = pd.DataFrame({"a": [0, 1, None, 0], "b": [0, 1, 1, 0], "c": [1, 1, 0, 0]})
    with pytest.raises(InputError, match="missing"):
        bounded.learn(frame, k=1)


def test_upper_bound_is_refused_for_bdeu():
    ds = _dataset(1, 4, 50)
    with pytest.raises(InputError, match="bic"):
        bounded.upper_bound(FamilyScorer(ds, score="bdeu"), 2)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(4, 24), st.integers(1, 3), st.integers(2, 12), st.integers(0, 2**31))
def test_window_keeps_certificate_and_acyclicity(n, k, size, seed):
    k = min(k, n - 1)
    ds = _dataset(seed, n, 300)
    rng = np.random.default_rng(seed)
    scorer = FamilyScorer(ds, score="bic")
    res = bounded.learn(ds, k=k, time_limit=10, max_iter=1, window=0, random_state=seed)
    index = {name: i for i, name in enumerate(ds.names)}
    parents = {index[v]: sorted(index[p] for p in ps) for v, ps in res.parents.items()}
    order = np.array([index[v] for v in res.elimination_order])
    plist = [tuple(parents[v]) for v in range(n)]
    new, gain = improve_window(plist, order, k, scorer, size, rng)
    before = sum(scorer(v, plist[v]) for v in range(n))
    after = sum(scorer(v, new[v]) for v in range(n))
    assert gain >= 0 and np.isclose(after, before + gain)
    g = nx.DiGraph((u, v) for v, ps in enumerate(new) for u in ps)
    assert nx.is_directed_acyclic_graph(g)
    new_adj = moral_bits(parent_rows(new, k), 1)
    hull = filled_graph(moral_bits(parent_rows(parents, k), 1), order)
    assert np.all(new_adj & ~hull == 0)                  # the moral graph stays inside H
    assert width_along(new_adj, order, n) <= k


def test_progress_bar_reports_to_stderr(capsys):
    ds = _dataset(2, 6, 200)
    bounded.learn(ds, k=2, time_limit=5, max_iter=2, random_state=0, progress=True)
    assert "bounded learning" in capsys.readouterr().err
