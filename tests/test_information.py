import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from twlib import Dataset
from twlib.information import (conditional_mutual_information, entropy,
                               mutual_information, mutual_information_matrix)
from twlib.scores import local_score

from . import naive


def random_dataset(seed, n_vars=5, n_rows=300, max_arity=4):
    rng = np.random.default_rng(seed)
    arities = rng.integers(2, max_arity + 1, n_vars)
    base = rng.integers(0, 2, n_rows)
    cols = {f"v{j}": np.where(rng.random(n_rows) < 0.6, base % a, rng.integers(0, a, n_rows))
            for j, a in enumerate(arities)}
    return Dataset.from_pandas(pd.DataFrame(cols))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_mi_matrix_equals_definition_and_is_symmetric_nonnegative(seed):
    ds = random_dataset(seed)
    mi = mutual_information_matrix(ds)
    assert np.allclose(mi, mi.T)
    assert np.all(mi >= 0) and np.all(np.diag(mi) == 0)
    for i in range(ds.n_vars):
        for j in range(i + 1, ds.n_vars):
            assert mi[i, j] == pytest.approx(naive.mutual_information(ds.values, i, j), abs=1e-12)


def test_mi_times_n_is_the_log_likelihood_gain_of_a_single_parent(alarm_5000):
    ds = alarm_5000
    for x, y in [("HR", "HRBP"), ("CO", "BP"), ("PVSAT", "SAO2"), ("MINVOL", "VENTLUNG")]:
        gain = local_score(ds, y, [x], score="ll") - local_score(ds, y, [], score="ll")
        assert mutual_information(ds, x, y) * ds.n_rows == pytest.approx(gain, rel=1e-9)


def test_entropy_and_conditional_mi_equal_naive_twins():
    ds = random_dataset(7, n_vars=6)
    v = ds.values
    assert entropy(ds, ["v0", "v1", "v2"]) == pytest.approx(naive.entropy(v, [0, 1, 2]))
    cmi = conditional_mutual_information(ds, ["v0"], ["v1", "v2"], ["v3", "v4"])
    expected = (naive.entropy(v, [0, 3, 4]) + naive.entropy(v, [1, 2, 3, 4])
                - naive.entropy(v, [0, 1, 2, 3, 4]) - naive.entropy(v, [3, 4]))
    assert cmi == pytest.approx(max(expected, 0.0), abs=1e-12)
    assert entropy(ds, ["v0"], base=2) == pytest.approx(entropy(ds, ["v0"]) / math.log(2))


def test_conditional_mi_rejects_overlapping_sets():
    ds = random_dataset(1)
    with pytest.raises(ValueError, match="disjoint"):
        conditional_mutual_information(ds, ["v0"], ["v0"], [])
