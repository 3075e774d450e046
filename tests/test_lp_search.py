"""The LP relaxation conditioned on a partial assignment, its rounding, and the
LP-based best-first search, against brute force."""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twlib import errors
from twlib.inference.flat import flat_tables, tables_total
from twlib.inference.cost_shifting import (branching_variable, conditioned_bound,
                                           rounded_assignment)
from twlib.inference.lp_search import LPSearch, lp_arrays
from twlib.inference.minibucket import mini_buckets
from twlib.inference.dive import DiveSearch

from .test_minibucket import model_with_buckets, random_model


def best_completion(tables, arity, free, fixed_values):
    """Brute force: the largest sum of ``tables`` over the assignments of the
    variables ``free`` that agree with ``fixed_values``."""
    best = -np.inf
    for combo in itertools.product(*(range(arity[v]) for v in free)):
        row = dict(zip(free, combo))
        if any(row[v] != a for v, a in fixed_values.items()):
            continue
        best = max(best, sum(float(t[tuple(row[v] for v in scope)]) for scope, t in tables))
    return best


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 6), zeros=st.sampled_from([0.0, 0.3]),
       sweeps=st.sampled_from([0, 1, 50]), share=st.floats(0.0, 1.0))
def test_conditioned_bound_holds_and_rounding_keeps_the_clamps(seed, n_vars, zeros, sweeps,
                                                                share):
    model, evidence = random_model(seed, n_vars, zeros)
    try:
        mb = mini_buckets(model, 2, evidence)
    except errors.ZeroEvidenceError:
        return
    tab = flat_tables(mb.tables)
    fixed, count, offset, size, work, inc_ptr, gather_ptr, gather, _, trial = \
        lp_arrays(tab, mb.originals, mb.arity, sweeps)
    arity = mb.arity.astype(np.int64)
    free = [v for v in range(len(arity)) if v not in mb.evidence]
    rng = np.random.default_rng(seed)
    chosen = {int(v): int(rng.integers(arity[v])) for v in free if rng.random() < share}
    for v, a in chosen.items():
        fixed[v], trial[v] = True, a
    exact = best_completion(mb.tables[:mb.originals], arity, free, chosen)
    bound = conditioned_bound(fixed, trial, count, offset, size, tab[4], work, arity, inc_ptr,
                              gather_ptr, gather, sweeps, -np.inf)
    assert bound >= exact - 1e-9 * max(1.0, abs(exact))
    x = branching_variable(fixed, work, arity, inc_ptr, gather_ptr, gather)
    assert x == -1 or not fixed[x]
    rounded_assignment(fixed, trial, work, arity, inc_ptr, gather_ptr, gather, 1)
    assert all(trial[v] == a for v, a in chosen.items())
    assert fixed.sum() == len(chosen)                   # the caller's mask is left alone
    value = tables_total(trial, count, tab)
    assert value == -np.inf or value <= exact + 1e-9 * max(1.0, abs(exact))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 8), zeros=st.sampled_from([0.0, 0.3]),
       capacity=st.sampled_from([3, 1 << 12]), sweeps=st.sampled_from([1, 50]))
def test_lp_search_ends_at_the_optimum_or_stalls_with_a_true_bound(seed, n_vars, zeros,
                                                                   capacity, sweeps):
    model, mb, top = model_with_buckets(seed, n_vars, 1, zeros)
    if mb is None:
        return
    tab = flat_tables(mb.tables)
    n = len(mb.arity)
    search = LPSearch(lp_arrays(tab, mb.originals, mb.arity, sweeps), tab, mb.arity,
                      np.array([-np.inf]), np.zeros(n, dtype=np.int64), root_bound=mb.bound,
                      capacity=capacity)
    while not (search.finished or search.stalled):
        assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
        search.run(1)
    assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
    if search.finished:
        assert search.incumbent == pytest.approx(top, abs=1e-9 * max(1.0, abs(top)))
    if search.incumbent > -np.inf:
        found = search.best.copy()
        for v, s in mb.evidence.items():
            found[v] = s
        assert model.log_values([found])[0] == pytest.approx(search.incumbent, rel=1e-9,
                                                              abs=1e-9)


def test_the_dive_bounds_open_nodes_by_the_lp_and_stays_exact():
    # a chain of ties: the static heuristic is flat, so open nodes are parked, and
    # the LP is tested on them when they are popped
    model, mb, top = model_with_buckets(11, 8, 1, 0.0)
    kernel = DiveSearch(mb, flat_tables(mb.tables), capacity=1 << 12, backtracks_per_dive=1)
    while not kernel.finished:
        kernel.run(2)
    assert kernel.lp_tests > 0
    assert kernel.incumbent == pytest.approx(top, abs=1e-9 * max(1.0, abs(top)))
