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


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 7))
def test_queyranne_equals_brute_force_on_mutual_information_splits(seed, n):
    ds = random_dataset(seed, n_vars=n + 1, n_rows=200, max_arity=3)
    oracle = thin_jt.InformationOracle(ds)
    a = frozenset(range(n))
    f = lambda x: oracle(x, a - x, {n}) if x != a else 0.0
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
