import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib import graphs
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
    for search in (guided_ktree, best_ktree):
        assert search(mi, 1).i_score == pytest.approx(graphs.i_score(tree, mi))


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
    with pytest.raises(ValueError, match="more than 50 states"):
        guided_ktree(mi, 3, max_states=50)
