import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twlib import BayesianNetwork, graphs
from twlib.graphs import (elimination_width, i_score, maximum_spanning_tree, moral_graph,
                          orient_tree, random_ktree, topological_order)
from twlib.information import entropy, mutual_information_matrix
from twlib.learn import chow_liu

from .test_information import random_dataset


def test_topological_order_and_cycle_error():
    assert topological_order({"c": ["a"], "a": [], "b": ["c"]}) == ["a", "c", "b"]
    with pytest.raises(ValueError, match="cyclic"):
        topological_order({"a": ["b"], "b": ["a"]})


def test_moral_graph_marries_parents():
    g = moral_graph({"a": [], "b": [], "c": ["a", "b"]})
    assert g.has_edge("a", "b") and g.number_of_edges() == 3


def test_elimination_width_matches_known_graphs():
    assert elimination_width(nx.path_graph(6), range(6)) == 1
    assert elimination_width(nx.complete_graph(5), range(5)) == 4
    grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 3))
    assert elimination_width(grid, range(9)) == 3          # row by row: width = columns
    with pytest.raises(ValueError, match="exactly once"):
        elimination_width(nx.path_graph(3), [0, 1])


def test_orient_tree_roots_every_component():
    forest = nx.Graph([(0, 1), (1, 2), (3, 4)])
    parents = orient_tree(forest, root=1)
    assert parents == {0: [1], 1: [], 2: [1], 3: [], 4: [3]}
    with pytest.raises(ValueError, match="not a tree"):
        orient_tree(nx.cycle_graph(3))


def test_chow_liu_likelihood_is_mutual_information_minus_entropies():
    ds = random_dataset(3, n_vars=6, n_rows=500)
    res = chow_liu.learn(ds, estimator="mle")
    n = ds.n_rows
    expected = n * res.stats["i_score"] - n * sum(entropy(ds, [v]) for v in ds.names)
    assert res.network.log_likelihood(ds) == pytest.approx(expected, rel=1e-10)
    assert res.width == 1


def test_chow_liu_tree_beats_every_spanning_tree():
    ds = random_dataset(9, n_vars=5, n_rows=400)
    mi = mutual_information_matrix(ds)
    best = chow_liu.learn(ds, estimator="mle").network.log_likelihood(ds)
    complete = nx.complete_graph(ds.names)
    count = 0
    for tree in nx.SpanningTreeIterator(complete):
        net = BayesianNetwork.fit(ds, orient_tree(tree, root=ds.names[0]))
        assert net.log_likelihood(ds) <= best + 1e-9
        count += 1
    assert count == 5 ** 3                                # Cayley: n^(n-2) trees
    tree = maximum_spanning_tree(mi, names=ds.names)
    assert i_score(tree, mi, names=ds.names) == pytest.approx(
        max(i_score(t, mi, names=ds.names)
            for t in itertools.islice(nx.SpanningTreeIterator(complete), 200)))


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_random_ktree_is_a_ktree(k, weighted):
    n = 9
    rng = np.random.default_rng(k)
    w = rng.random((n, n))
    w = w + w.T
    g = random_ktree(range(n), k, weights=w if weighted else None, random_state=k)
    assert g.number_of_edges() == k * (k + 1) // 2 + (n - k - 1) * k
    root, steps = g.graph["construction"]
    order = [v for v, _ in reversed(steps)] + list(root)
    assert elimination_width(g, order) == k
    for v, clique in steps:                       # each step attaches to a k-clique
        assert len(clique) == k and all(g.has_edge(a, b) for a, b in itertools.combinations(clique, 2))
    if weighted and k == 1:                       # greedy on weights = Prim's maximum spanning tree
        assert i_score(g, w) == pytest.approx(i_score(maximum_spanning_tree(w), w))
    with pytest.raises(ValueError, match="1 <= k < n"):
        random_ktree(range(3), 3)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_bit_tricks_equal_python_integers(x):
    from twlib.bitsets import lowest_index, popcount

    assert popcount(np.uint64(x)) == bin(x).count("1")
    if x:
        assert lowest_index(np.uint64(x)) == (x & -x).bit_length() - 1
    if x < 2**63:
        assert popcount(np.int64(x)) == bin(x).count("1")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6), st.integers(1, 200), st.integers(0, 2**31))
def test_bool_rows_round_trip_through_bitsets_as_python_integers(rows, n, seed):
    from twlib.bitsets import from_bool_rows, to_bool_rows

    bools = np.random.default_rng(seed).random((rows, n)) < 0.3
    words = from_bool_rows(bools)
    assert words.shape == (rows, (n + 63) // 64)
    for row, packed in zip(bools, words):           # bit v of the set is element v
        value = sum(int(w) << (64 * i) for i, w in enumerate(packed))
        assert value == sum(1 << int(v) for v in np.flatnonzero(row))
    assert np.array_equal(to_bool_rows(words, n), bools)


def test_auto_order_gives_up_on_greedy_orders_far_over_the_budget():
    grid = nx.grid_2d_graph(20, 20)
    greedy = min(graphs.elimination_cost(grid, graphs.elimination_order(grid, method=method))[1]
                 for method in ("min-degree", "min-fill"))
    stopped = graphs.elimination_order(grid, method="auto", stop_above=1e3)
    assert sorted(stopped) == sorted(grid)
    assert graphs.elimination_cost(grid, stopped)[1] > 1e3
    # a stop above the greedy orders' tables keeps them, then sweeps (width near 20)
    kept = graphs.elimination_order(grid, method="auto", stop_above=2 * greedy)
    assert graphs.elimination_cost(grid, kept)[1] <= greedy


@settings(max_examples=30, deadline=None)
@given(st.integers(4, 60), st.floats(0.05, 0.4), st.floats(1.0, 4.0), st.integers(0, 2**31))
def test_a_budget_to_fit_changes_no_order_that_fits_it(n, density, spread, seed):
    """Sweeps and restarts that stop at their first clique past the budget lose
    only orders that could not fit it: the order found fits exactly when the
    full search's does, and is then the same order."""
    graph = nx.gnp_random_graph(n, density, seed=seed)
    weights = dict(enumerate(np.random.default_rng(seed).integers(2, 4, n)))
    full, _, entries = graphs.elimination_order(graph, weights=weights, with_cost=True)
    budget = entries * spread ** np.random.default_rng(seed + 1).uniform(-1, 1)
    fitted, _, fitted_entries = graphs.elimination_order(graph, weights=weights,
                                                         fit_within=budget, with_cost=True)
    assert sorted(fitted) == sorted(graph)
    assert (fitted_entries <= budget) == (entries <= budget)
    if entries <= budget:
        assert fitted == full and fitted_entries == entries


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.floats(0.05, 0.5), st.integers(0, 3), st.floats(1.0, 12.0),
       st.integers(0, 2**31))
def test_greedy_elimination_gives_up_only_past_its_cap_and_keeps_its_steps_until_then(
        n, density, kind, cap, seed):
    graph = nx.gnp_random_graph(n, density, seed=seed)
    adj = graphs._bitset_rows(graph, list(graph.nodes))
    weights = np.random.default_rng(seed).integers(2, 4, n).astype(float)
    whole, width, entries = graphs.greedy_elimination(adj, kind, weights, 0.0, 0,
                                                      graphs._NO_ORDER)
    capped, c_width, c_entries = graphs.greedy_elimination(
        adj, kind, weights, 0.0, 0, graphs._NO_ORDER, np.zeros(0, np.bool_), cap)
    assert sorted(capped) == list(range(n))
    sizes = [np.log(weights[v]) + sum(np.log(weights[u]) for u in nbrs)
             for v, nbrs in naive_cliques(graph, whole)]
    over = [k for k, size in enumerate(sizes) if size > cap + 1e-9]
    if not over:
        assert (list(capped), c_width, c_entries) == (list(whole), width, entries)
    elif all(size < cap - 1e-9 or size > cap + 1e-9 for size in sizes):
        assert (c_width, c_entries) == (n, np.inf)
        assert list(capped[:over[0] + 1]) == list(whole[:over[0] + 1])


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.floats(0.05, 0.6), st.integers(0, 2**31))
def test_min_fill_past_its_budget_goes_on_as_min_degree_on_the_graph_left(n, density, seed):
    graph = nx.gnp_random_graph(n, density, seed=seed)
    adj = graphs._bitset_rows(graph, list(graph.nodes))
    weights = np.full(n, 2.0)
    free = np.zeros(0, np.bool_)
    spent, _, _ = graphs.greedy_elimination(adj, 0, weights, 0.0, 0, graphs._NO_ORDER, free,
                                            np.inf, 0.0)
    unlimited, _, _ = graphs.greedy_elimination(adj, 0, weights, 0.0, 0, graphs._NO_ORDER)
    ample, _, _ = graphs.greedy_elimination(adj, 0, weights, 0.0, 0, graphs._NO_ORDER, free,
                                            np.inf, 1e12)
    assert list(ample) == list(unlimited) and spent[0] == unlimited[0]
    # the budget is checked after the first elimination: the rest is min-degree's
    _, left = next(naive_cliques(graph, [spent[0]]))
    rest = nx.Graph(graph)
    rest.add_edges_from(itertools.combinations(left, 2))
    rest.remove_node(spent[0])
    nodes = sorted(rest)
    by_degree, _, _ = graphs.greedy_elimination(graphs._bitset_rows(rest, nodes), 1,
                                                np.full(n - 1, 2.0), 0.0, 0, graphs._NO_ORDER)
    assert list(spent[1:]) == [nodes[k] for k in by_degree]


def naive_cliques(graph, order):
    """Each vertex of ``order`` with its neighbours when it is eliminated."""
    g = nx.Graph(graph)
    for v in order:
        nbrs = list(g[v])
        g.add_edges_from((a, b) for i, a in enumerate(nbrs) for b in nbrs[i + 1:])
        g.remove_node(v)
        yield v, nbrs


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.floats(0.05, 0.6), st.sampled_from([1.0, 2.0, 3.0]),
       st.integers(0, 2**31))
def test_equal_weights_make_weighted_min_fill_and_min_size_repeat_min_fill_and_min_degree(
        n, density, weight, seed):
    graph = nx.gnp_random_graph(n, density, seed=seed)
    adj = graphs._bitset_rows(graph, list(graph.nodes))
    weights = np.full(n, weight)

    def run(kind):
        order, width, entries = graphs.greedy_elimination(adj, kind, weights, 0.0, 0,
                                                          graphs._NO_ORDER)
        return list(order), width, entries

    assert run(graphs._KIND["weighted-min-fill"]) == run(graphs._KIND["min-fill"])
    assert run(graphs._KIND["min-size"]) == run(graphs._KIND["min-degree"])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 30), st.floats(0.05, 0.5), st.sampled_from(graphs.ORDER_METHODS),
       st.integers(0, 2**31))
def test_an_order_with_its_cost_is_the_cost_measured_again(n, density, method, seed):
    graph = nx.gnp_random_graph(n, density, seed=seed)
    weights = {v: int(k) for v, k in zip(graph, np.random.default_rng(seed).integers(2, 4, n))}
    order, width, entries = graphs.elimination_order(graph, method=method, weights=weights,
                                                     with_cost=True)
    assert order == graphs.elimination_order(graph, method=method, weights=weights)
    assert (width, entries) == pytest.approx(graphs.elimination_cost(graph, order, weights))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 14), method=st.sampled_from(
    graphs.ORDER_HEURISTICS))
def test_greedy_entries_from_scopes_equal_the_order_of_the_graph(seed, n, method):
    """The tree size from scopes alone is that of the same greedy order on the
    graph the scopes make, and a cap below it gives up with ``inf``."""
    rng = np.random.default_rng(seed)
    scopes = [sorted(rng.choice(n, size=int(rng.integers(1, min(n, 4) + 1)), replace=False)
                     .tolist()) for _ in range(int(rng.integers(1, 2 * n + 1)))]
    weights = rng.integers(1, 4, size=n).tolist()
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((a, b) for s in scopes for i, a in enumerate(s) for b in s[i + 1:])
    _, _, entries = graphs.elimination_order(graph, method=method, weights=weights,
                                             with_cost=True)
    assert graphs.greedy_entries(scopes, weights, method=method) == pytest.approx(entries)
    assert graphs.greedy_entries(scopes, weights, method=method,
                                 stop_above=0.5) == np.inf
