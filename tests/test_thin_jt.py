import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib.information import conditional_mutual_information
from twlib.learn import thin_jt

from .test_information import random_dataset


def brute_min(f, elements):
    elements = list(elements)
    best = np.inf
    for r in range(1, len(elements)):
        for x in itertools.combinations(elements, r):
            best = min(best, f(frozenset(x)))
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 10))
def test_queyranne_equals_brute_force_on_cut_functions(seed, n):
    rng = np.random.default_rng(seed)
    w = rng.random((n, n)) * (rng.random((n, n)) < 0.6)
    w = w + w.T
    cut = lambda x: sum(w[a, b] for a in x for b in range(n) if b not in x)
    value, subset = thin_jt.queyranne(cut, range(n))
    assert value == pytest.approx(brute_min(cut, range(n)))
    assert value == pytest.approx(cut(subset)) and 0 < len(subset) < n


def information_split(seed, size, n_rows):
    """An oracle over ``size + 1`` random variables and ``f(X) = I(X; A - X | last)``
    on ``A`` = the first ``size`` of them."""
    ds = random_dataset(seed, n_vars=size + 1, n_rows=n_rows, max_arity=3)
    oracle = thin_jt.InformationOracle(ds)
    a = frozenset(range(size))
    return oracle, a, lambda x: oracle(x, a - x, {size}) if x != a else 0.0


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 7))
def test_queyranne_equals_brute_force_on_mutual_information_splits(seed, n):
    _, a, f = information_split(seed, n, 200)
    assert thin_jt.queyranne(f, sorted(a))[0] == pytest.approx(brute_min(f, sorted(a)), abs=1e-12)


def test_oracle_equals_the_information_module_and_caches():
    ds = random_dataset(4, n_vars=5, n_rows=300)
    oracle = thin_jt.InformationOracle(ds)
    assert oracle({0, 1}, {2}, {3}) == pytest.approx(
        conditional_mutual_information(ds, [0, 1], [2], [3]))
    before = oracle.cached
    oracle({0, 1}, {2}, {3})
    assert oracle.cached == before
    with pytest.raises(ValueError, match="disjoint"):
        oracle({0}, {0}, {1})


def test_ltci_separates_independent_blocks():
    rng = np.random.default_rng(0)
    n = 4000
    import pandas as pd
    from twlib import Dataset
    s = rng.integers(0, 2, n)
    a = s ^ (rng.random(n) < 0.1)
    b = a ^ (rng.random(n) < 0.1)
    c = s ^ (rng.random(n) < 0.1)
    d = c ^ (rng.random(n) < 0.1)
    ds = Dataset.from_pandas(pd.DataFrame({"s": s, "a": a, "b": b, "c": c, "d": d}))
    groups = thin_jt.ltci(range(5), {0}, thin_jt.InformationOracle(ds), delta=0.01, q=3)
    assert sorted(map(sorted, groups)) == [[1, 2], [3, 4]]
    one = thin_jt.ltci(range(5), {0}, thin_jt.InformationOracle(ds), delta=-1.0, q=2)
    assert one == [frozenset({1, 2, 3, 4})]


def sample_from_ktree(n, k, rows, seed, noise=0.05):
    """Rows from a width-k junction tree whose cliques are strongly tied (parity of
    each new variable's clique, flipped with probability ``noise``), and its cliques."""
    import pandas as pd
    from twlib import Dataset, graphs
    g = graphs.random_ktree(range(n), k, random_state=seed)
    root, steps = g.graph["construction"]
    rng = np.random.default_rng(seed)
    x = {}
    for i, r in enumerate(root):
        par = root[:i]
        x[r] = (np.bitwise_xor.reduce([x[p] for p in par]) ^ (rng.random(rows) < noise)
                if par else rng.integers(0, 2, rows))
    for v, c in steps:
        x[v] = np.bitwise_xor.reduce([x[p] for p in c]) ^ (rng.random(rows) < noise)
    ds = Dataset.from_pandas(pd.DataFrame({f"v{v}": x[v].astype(int) for v in range(n)}))
    _, top = graphs.ktree_cliques(g, k)
    return ds, {tuple(f"v{u}" for u in sorted(c)) for c in top}


@pytest.mark.parametrize("n, k, search, select", [(7, 2, "lazy", "threshold"),
                                                  (8, 3, "lazy", "likelihood"),
                                                  (7, 2, "binary", "likelihood"),
                                                  (9, 2, "binary", "threshold")])
def test_lpacjt_recovers_a_strongly_connected_junction_tree(n, k, search, select):
    from twlib import graphs
    ds, truth = sample_from_ktree(n, k, 5000, seed=1)
    jt = thin_jt.learn(ds, k, search=search, select=select).model
    assert {tuple(sorted(c)) for c in jt.cliques} == truth
    assert jt.width == k and graphs.has_running_intersection(jt.cliques, jt.edges)
    assert all(len(s) == k for s in jt.separators)


def test_projection_is_a_normalised_distribution_and_matches_inference():
    from twlib.inference import JunctionTree
    ds, _ = sample_from_ktree(6, 2, 400, seed=3)
    jt = thin_jt.learn(ds, 2, ess=2.0).model
    states = [np.arange(2)] * 6
    grid = np.array(list(itertools.product(*states)))
    from twlib import Dataset
    every = Dataset(grid.astype(np.uint8), ds.names, [ds.states[i] for i in range(6)])
    probs = np.exp([jt.log_likelihood(every.take([i])) for i in range(len(grid))])
    assert probs.sum() == pytest.approx(1.0)
    post = JunctionTree(jt.to_factor_model()).posteriors()
    for c, table in zip(jt.cliques, jt.tables):
        axis = tuple(range(1, len(c)))
        assert np.allclose(post[c[0]], table.sum(axis=axis))
    assert np.allclose(jt.log_likelihood(ds, per_row=True),
                       [jt.log_likelihood(ds.take([i])) for i in range(ds.n_rows)])


def test_consistent_tree_is_none_without_decomposable_components():
    comps = {frozenset({0}): [frozenset({1, 2, 3})], frozenset({1}): [frozenset({0, 2, 3})],
             frozenset({2}): [frozenset({0, 1, 3})], frozenset({3}): [frozenset({0, 1, 2})]}
    assert thin_jt.find_consistent_tree(comps, 1) is None


def test_bad_input_is_named():
    ds, _ = sample_from_ktree(5, 1, 100, seed=0)
    with pytest.raises(ValueError, match="1 <= k <= n - 2"):
        thin_jt.learn(ds, 4)
    with pytest.raises(ValueError, match="search"):
        thin_jt.learn(ds, 1, search="exhaustive")
    with pytest.raises(ValueError, match="ess must be positive"):
        thin_jt.learn(ds, 1, ess=0)
    with pytest.raises(ValueError, match="select"):
        thin_jt.learn(ds, 1, select="best")
    with pytest.raises(ValueError, match="at most 62 variables"):
        thin_jt.learn(random_dataset(0, n_vars=63, n_rows=20, max_arity=2), 1)


def test_likelihood_selection_fits_the_training_data_at_least_as_well():
    ds = random_dataset(7, n_vars=9, n_rows=400, max_arity=3)
    chosen = thin_jt.learn(ds, 2, ess=1e-9)
    last = thin_jt.learn(ds, 2, ess=1e-9, select="threshold")
    assert chosen.stats["trees_seen"] >= 1
    assert chosen.score >= last.score - 1e-6


@pytest.mark.parametrize("seed, k", [(0, 1), (1, 2), (2, 3)])
def test_the_result_network_is_the_junction_tree_distribution(seed, k):
    from twlib import graphs
    ds = random_dataset(seed, n_vars=8, n_rows=300, max_arity=3)
    res = thin_jt.learn(ds, k)
    jt, net = res.model, res.network
    assert np.allclose(net.log_likelihood(ds, per_row=True), jt.log_likelihood(ds, per_row=True))
    assert res.score == pytest.approx(jt.log_likelihood(ds))
    moral = graphs.moral_graph(net.parent_map())
    assert graphs.elimination_width(moral, res.elimination_order) <= k == res.width


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 7))
def test_compiled_split_strength_is_the_weakest_split(seed, size):
    # up to five variables every split is tried; six and seven go through the
    # compiled Queyranne rounds; the reference is the information module
    ds = random_dataset(seed, n_vars=size + 1, n_rows=150, max_arity=3)
    a = list(range(size))
    reference = brute_min(lambda x: conditional_mutual_information(
        ds, sorted(x), sorted(set(a) - x), [size]), a)
    oracle = thin_jt.InformationOracle(ds)
    assert oracle.strength(a, separator={size}) == pytest.approx(reference, abs=1e-12)
    assert oracle.strengths == 1


def test_oracle_refuses_bad_sets():
    oracle = thin_jt.InformationOracle(random_dataset(1, n_vars=4, n_rows=50))
    with pytest.raises(ValueError, match="at least two"):
        oracle.strength([0])
    with pytest.raises(ValueError, match="disjoint"):
        oracle.strength([0, 1], separator={1})
    with pytest.raises(ValueError, match="indices"):
        oracle.entropy([7])


def reference_consistent_tree(components, k):
    """Algorithm 4 written plainly on frozensets: the twin of the compiled DP."""
    order = sorted(((s, q) for s, groups in components.items() for q in groups),
                   key=lambda c: (len(c[1]), sorted(c[0]), sorted(c[1])))
    decomposable, recipe = {}, {}
    for sep, group in order:
        for x in sorted(group):
            rest, chosen, covered = group - {x}, [], frozenset()
            for y in sorted(sep):
                sub_sep = (sep - {y}) | {x}
                for sub in decomposable.get(sub_sep, ()):
                    if sub <= rest and not sub & covered:
                        chosen.append((sub_sep, sub))
                        covered |= sub
            if covered == rest:
                recipe[sep, group] = (x, chosen)
                decomposable.setdefault(sep, []).append(group)
                break
    for sep in sorted(components, key=sorted):
        groups = components[sep]
        if groups and all((sep, g) in recipe for g in groups):
            cliques = set()
            stack = [(sep, g) for g in groups]
            while stack:
                s, g = stack.pop()
                x, subs = recipe[s, g]
                cliques.add(tuple(sorted(s | {x})))
                stack += subs
            return cliques
    return None


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 2), st.floats(0.0, 0.3))
def test_compiled_tree_search_equals_the_plain_algorithm(seed, k, delta):
    from twlib import graphs
    ds = random_dataset(seed, n_vars=7, n_rows=200, max_arity=3)
    oracle = thin_jt.InformationOracle(ds)
    comps = {frozenset(s): thin_jt.ltci(range(7), s, oracle, delta, q=k + 2)
             for s in itertools.combinations(range(7), k)}
    found = thin_jt.find_consistent_tree(comps, k)
    expected = reference_consistent_tree(comps, k)
    if expected is None:
        assert found is None
    else:
        cliques, edges = found
        assert set(cliques) == expected
        assert graphs.has_running_intersection(cliques, edges)
        assert all(len(c) == k + 1 for c in cliques)


def test_consistent_tree_checks_separator_sizes():
    with pytest.raises(ValueError, match="k = 2"):
        thin_jt.find_consistent_tree({frozenset({0}): [frozenset({1, 2})]}, 2)
