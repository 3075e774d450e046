import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib.counting import count, joint_keys

from .naive import joint_counts


@st.composite
def tables(draw):
    n_vars = draw(st.integers(1, 5))
    arities = draw(st.lists(st.integers(1, 6), min_size=n_vars, max_size=n_vars))
    n_rows = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    values = np.column_stack([rng.integers(0, r, n_rows) for r in arities]).astype(np.uint8)
    k = draw(st.integers(1, n_vars))
    cols = draw(st.permutations(range(n_vars)))[:k]
    return values, list(cols), [arities[c] for c in cols]


@settings(max_examples=150, deadline=None)
@given(tables(), st.sampled_from([0.001, 4.0]))
def test_counts_equal_naive_twin_dense_and_sparse(table, dense_factor):
    values, cols, arities = table
    c = count(values, cols, arities, dense_factor=dense_factor)
    expected = joint_counts(values, cols, arities)
    assert np.array_equal(c.to_dense().reshape(-1), expected)
    keys, counts = c.nonzero()
    assert np.all(np.diff(keys) > 0)
    assert counts.sum() == len(values)


def test_sparse_form_is_chosen_for_large_joint_spaces():
    values = np.random.default_rng(0).integers(0, 200, size=(50, 3)).astype(np.uint8)
    c = count(values, [0, 1, 2], [200, 200, 200])
    assert c.dense is None and c.counts.sum() == 50


def test_keys_are_mixed_radix_with_last_fastest():
    values = np.array([[1, 2], [0, 0]])
    assert joint_keys(values, [0, 1], [2, 3]).tolist() == [5, 0]
    assert joint_keys(values, [1, 0], [3, 2]).tolist() == [5, 0]


def test_overflowing_key_space_is_refused():
    with pytest.raises(ValueError, match="overflows"):
        count(np.zeros((2, 9), dtype=np.uint8), list(range(9)), [255] * 9)
