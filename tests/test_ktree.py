import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib import graphs
from twlib.errors import BudgetExceeded
from twlib.learn.ktree import best_ktree, guided_ktree, top_k_information


def random_mi(seed, n):
    rng = np.random.default_rng(seed)
    m = rng.random((n, n))
    m = m + m.T
    np.fill_diagonal(m, 0.0)
    return m


def brute_force_best(mi, k, root):
    """Largest I-score over every construction sequence from ``root`` (tiny n only)."""
    n = len(mi)
    best = -np.inf

    def grow(placed, cliques, score):
        nonlocal best
        if len(placed) == n:
            best = max(best, score)
            return
        for x in range(n):
            if x in placed:
                continue
            for c in cliques:
                new = {tuple(sorted(s + (x,))) for s in itertools.combinations(c, k - 1)}
                grow(placed | {x}, cliques | new, score + mi[x, list(c)].sum())

    base = sum(mi[a, b] for a, b in itertools.combinations(root, 2))
    grow(frozenset(root), frozenset(itertools.combinations(root, k)), base)
    return best


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(4, 6), st.integers(1, 3))
def test_exact_search_equals_brute_force_and_bounds_algorithm_1(seed, n, k):
    if k >= n:
        return
    mi = random_mi(seed, n)
    exact = best_ktree(mi, k)
    root = tuple(sorted(exact.root))
    assert exact.i_score == pytest.approx(brute_force_best(mi, k, root), abs=1e-9)
    guided = guided_ktree(mi, k, root=root)
    assert guided.i_score <= exact.i_score + 1e-9
    for res in (exact, guided):
        assert graphs.is_ktree(res.graph, k)
        assert graphs.i_score(res.graph, mi) == pytest.approx(res.i_score)


def test_width_one_search_finds_the_maximum_spanning_tree():
    mi = random_mi(3, 8)
    tree = graphs.maximum_spanning_tree(mi)
    assert best_ktree(mi, 1).i_score == pytest.approx(graphs.i_score(tree, mi))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_ktree_recognition_cliques_and_elimination_order(k):
    g = graphs.random_ktree(range(10), k, random_state=k)
    order = graphs.ktree_elimination_order(g, k)
    assert graphs.elimination_width(g, order) == k
    small, top = graphs.ktree_cliques(g, k)
    assert len(top) == 10 - k and all(len(c) == k + 1 for c in top)
    assert len(small) == (k + 1) + (10 - k - 1) * k      # root, then k new per vertex
    h = g.copy()
    h.remove_edge(*next(iter(h.edges)))
    assert not graphs.is_ktree(h, k)
    with pytest.raises(ValueError, match="not a"):
        graphs.ktree_cliques(h, k)
    assert not graphs.is_ktree(nx.cycle_graph(5), 1)


def test_heuristic_is_the_top_k_sum():
    mi = random_mi(1, 5)
    top = top_k_information(mi, 2)
    assert top[0] == pytest.approx(sum(sorted(mi[0, 1:])[-2:]))
    with pytest.raises(ValueError, match="k must satisfy"):
        guided_ktree(mi, 5)


def test_state_limit_gives_a_clear_error():
    mi = random_mi(2, 12)
    with pytest.raises(BudgetExceeded, match="passed 50 states"):
        best_ktree(mi, 3, max_states=50)


# ------------------------------------------------------- learning inside k-trees
from twlib.learn import ktree as kt                       # noqa: E402
from twlib.scores import ParentSetScores, network_score   # noqa: E402

from . import naive                                        # noqa: E402
from .test_information import random_dataset               # noqa: E402


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 6), st.integers(1, 3), st.sampled_from(["bdeu", "bic"]))
def test_exact_dag_in_ktree_equals_brute_force(seed, n, k, score):
    if k >= n:
        return
    ds = random_dataset(seed, n_vars=n, n_rows=200, max_arity=3)
    tree = graphs.random_ktree(ds.names, k, random_state=seed)
    res = kt.best_dag_in_ktree(ds, tree, k, score=score, method="exact")
    sets_of = []
    for v, fams in kt.clique_families(tree, k).items():
        subsets = {frozenset(s) for f in fams for r in range(len(f) + 1)
                   for s in itertools.combinations(f, r)}
        col = {nm: i for i, nm in enumerate(ds.names)}
        sets_of.append([(naive.family_score(ds.values, ds.arities, col[v], [col[p] for p in s],
                                            score), {col[p] for p in s}) for s in subsets])
    assert res.score == pytest.approx(naive.best_network_score(sets_of), rel=1e-9)
    assert res.score == pytest.approx(network_score(ds, res.parents, score=score))
    greedy_res = kt.best_dag_in_ktree(ds, tree, k, score=score, method="greedy", random_state=0)
    assert greedy_res.score <= res.score + 1e-9
    assert greedy_res.width <= k


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 9), st.integers(1, 4),
       st.sampled_from(list(kt.KTREE_SEARCHES)))
def test_learned_networks_have_certified_width_and_true_scores(seed, n, k, search):
    if k >= n:
        return
    ds = random_dataset(seed, n_vars=n, n_rows=250, max_arity=3)
    res = kt.learn(ds, k, max_iter=3, ktree_search=search, random_state=seed,
                   dag_method="greedy" if seed % 2 else "auto")
    assert graphs.elimination_width(graphs.moral_graph(res.parents), res.elimination_order) <= k
    assert res.width <= k and graphs.is_ktree(res.ktree, k)
    assert res.score == pytest.approx(network_score(ds, res.parents, score="bic"))
    assert res.network.log_likelihood(ds) < 0
    assert max(h["best"] for h in res.stats["history"]) == pytest.approx(res.score)


def test_learning_is_reproducible_and_anytime():
    ds = random_dataset(5, n_vars=8, n_rows=300)
    a = kt.learn(ds, 2, max_iter=4, random_state=1)
    b = kt.learn(ds, 2, max_iter=4, random_state=1)
    assert a.parents == b.parents and a.score == b.score
    best = [h["best"] for h in a.stats["history"]]
    assert best == sorted(best)
    quick = kt.learn(ds, 2, max_iter=50, time_limit=1e-9, random_state=1)
    assert quick.status == "time_limit" and quick.stats["iterations"] == 1


def test_clique_restricted_table_keeps_only_sets_inside_cliques():
    ds = random_dataset(3, n_vars=7, n_rows=200)
    tree = graphs.random_ktree(ds.names, 2, random_state=3)
    pss = ParentSetScores.from_candidates(ds, kt.clique_families(tree, 2), score="bdeu")
    for v in ds.names:
        for parents, _ in pss.sets(v):
            assert all(tree.has_edge(v, p) for p in parents)
            assert all(tree.has_edge(a, b) for a, b in itertools.combinations(parents, 2))


def test_bad_input_is_named():
    ds = random_dataset(0, n_vars=4)
    with pytest.raises(ValueError, match="1 <= k < n = 4"):
        kt.learn(ds, 0)
    with pytest.raises(ValueError, match="1 <= k < n = 4"):
        kt.learn(ds, 4)
    with pytest.raises(ValueError, match="at least two variables"):
        kt.learn(ds.select(["v0"]), 1)
    with pytest.raises(ValueError, match="ktree_search"):
        kt.learn(ds, 1, ktree_search="beam")
    with pytest.raises(TypeError, match="Dataset, a pandas DataFrame"):
        kt.learn(ds.values.tolist(), 1)


def test_exact_search_trace_shows_a_consistent_heuristic():
    res = best_ktree(random_mi(4, 7), 2)
    assert res.trace["largest_h_drop_over_cost"] <= 1e-12
    assert np.all(np.diff(res.trace["f"]) >= -1e-9)
