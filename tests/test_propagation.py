"""The propagation search on shifted tables, against brute force and a direct
computation of its reduced costs and of its test of dominated values."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twlib.factors import Factor, FactorModel
from twlib.inference.cost_shifting import mplp_in_place
from twlib.inference.dominance import dominates
from twlib.inference.flat import flat_tables, slack, tables_total, to_beat
from twlib.inference.minibucket import shifted_tables
from twlib.inference import JunctionTree, propagation
from twlib.inference.propagation import PropagationSearch
from twlib.inference.propagation_kernels import floor_of

from .test_minibucket import brute_force, random_model


def search_over(model, evidence, mplp_time_limit, **options):
    shifted = shifted_tables(model, evidence, mplp_time_limit=mplp_time_limit)
    tab = flat_tables(shifted.tables)
    search = PropagationSearch(tab, len(shifted.tables), shifted.arity, np.array([-np.inf]),
                               np.zeros(len(shifted.arity), dtype=np.int64), **options)
    return shifted, tab, search


def direct_reduced_costs(shifted, search):
    """Each allowed value's reduced cost from the tables and the domains alone."""
    dom = search.dom
    out = {}
    for y in range(len(shifted.arity)):
        around = [(scope, t) for scope, t in shifted.tables if y in scope]
        if search.dsize[y] < 2 or not around:
            continue
        for b in range(shifted.arity[y]):
            if not dom[y, b]:
                continue
            total = 0.0
            for scope, t in around:
                allowed = np.ix_(*(dom[v, :shifted.arity[v]] for v in scope))
                inside = t[allowed]
                at_b = np.take(inside, list(np.flatnonzero(dom[y, :shifted.arity[y]])).index(b),
                               axis=scope.index(y))
                total += inside.max() - (at_b.max() if at_b.size else -np.inf)
            out[y, b] = total
    return out


def close(a, b):
    return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 7), zeros=st.sampled_from([0.0, 0.3]),
       mplp=st.sampled_from([0.0, 1.0]), budget=st.sampled_from([1, 3, 1000]))
def test_the_search_ends_at_the_brute_force_optimum_and_its_bound_always_holds(
        seed, n_vars, zeros, mplp, budget):
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    shifted, tab, search = search_over(model, evidence, mplp)
    while not search.finished:
        assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
        search.run(budget)
    assert close(search.incumbent, top)
    if top > -np.inf:
        assert close(tables_total(search.best, len(shifted.tables), tab), top)
        row = search.best.copy()
        for v, s in shifted.evidence.items():
            row[v] = s
        assert close(model.log_values([row])[0], top)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 8), zeros=st.sampled_from([0.0, 0.3]))
def test_a_run_that_ends_above_its_target_ends_the_search(seed, n_vars, zeros):
    # it has refuted everything better than its incumbent: a restart below
    # would only prove the incumbent again
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    _, _, search = search_over(model, evidence, 0.0)
    while not search.finished:
        target, restarts = search.target[0], search.counted
        search.run(1)
        if search.counted > restarts:
            assert search.incumbent < target
    assert close(search.incumbent, top)


def test_an_incumbent_that_meets_the_bound_ends_the_search():
    # every assignment of a SAT-like model of constant tables is optimal: the
    # first leaf meets the root's bound, and the search ends there rather than
    # list the other 4,095
    n = 12
    model = FactorModel(list(range(n)), {v: ["0", "1"] for v in range(n)},
                        [Factor((v, v + 1), np.ones((2, 2))) for v in range(n - 1)])
    _, _, search = search_over(model, {}, 0.0)
    while not search.finished:
        search.run(1000)
    assert search.incumbent == 0.0 and search.work_done <= n


def tied_model(seed, n_vars, zeros):
    """A random model whose factors take a few levels only: many values tie
    or dominate one another."""
    model, evidence = random_model(seed, n_vars, zeros)
    factors = [Factor(f.variables, np.ceil(f.values)) for f in model.factors]
    return FactorModel(model.variables, {v: model.states(v) for v in model.variables},
                       factors), evidence


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 8), zeros=st.sampled_from([0.0, 0.3]),
       mplp=st.sampled_from([0.0, 1.0]))
def test_removing_dominated_values_keeps_an_optimum_when_values_tie(seed, n_vars, zeros, mplp):
    model, evidence = tied_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    _, _, search = search_over(model, evidence, mplp)
    while not search.finished:
        assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
        search.run(1)
    assert close(search.incumbent, top)


def direct_gain(shifted, dom, y, a, b):
    """Per table around ``y``, the least of its value at ``y = b`` minus at
    ``y = a`` over the other variables' allowed values (where ``y = a`` is
    possible), summed: ``b`` dominates ``a`` when it is at least 0."""
    total = 0.0
    for scope, t in shifted.tables:
        if y not in scope:
            continue
        axis = scope.index(y)
        others = [v for v in scope if v != y]
        at_a, at_b = np.take(t, a, axis=axis), np.take(t, b, axis=axis)
        allowed = np.ix_(*(dom[v, :shifted.arity[v]] for v in others))
        at_a, at_b = at_a[allowed].ravel(), at_b[allowed].ravel()
        possible = at_a > -np.inf
        if possible.any():
            total += (at_b[possible] - at_a[possible]).min()
    return total


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 7), zeros=st.sampled_from([0.0, 0.3]))
def test_the_test_of_dominated_values_agrees_with_a_direct_computation(seed, n_vars, zeros):
    model, evidence = tied_model(seed, n_vars, zeros)
    shifted, _, search = search_over(model, evidence, 0.5)
    ptr, var, stride, offset, _, values, arity, inc_ptr, inc_table, _ = search.static
    for _ in range(20):
        if search.finished:
            break
        for y in range(len(arity)):
            for a in range(arity[y]):
                for b in range(arity[y]):
                    if a == b or not (search.dom[y, a] and search.dom[y, b]):
                        continue
                    want = direct_gain(shifted, search.dom, y, a, b)
                    if abs(want) > 1e-9:            # else rounding may decide
                        assert dominates(y, a, b, ptr, var, stride, offset, values, arity,
                                         inc_ptr, inc_table, search.work[4], search.dom,
                                         search.work[20]) == (want >= 0)
        search.run(1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 7), zeros=st.sampled_from([0.0, 0.3]))
def test_the_reduced_costs_kept_up_to_date_equal_a_direct_computation(seed, n_vars, zeros):
    model, evidence = random_model(seed, n_vars, zeros)
    shifted, _, search = search_over(model, evidence, 0.5)
    reduced_costs_agree_along(shifted, search)


def reduced_costs_agree_along(shifted, search, nodes=30):
    """Node after node, the search's reduced costs equal a direct computation."""
    red = search.work[5]
    for _ in range(nodes):
        if search.finished:
            break
        for (y, b), cost in direct_reduced_costs(shifted, search).items():
            assert cost == np.inf or close(red[y, b], cost)
        search.run(1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 7), zeros=st.sampled_from([0.0, 0.3]))
def test_maxima_kept_by_their_supports_and_stopped_scans_equal_a_direct_computation(
        seed, n_vars, zeros):
    # tables of a few levels tie at many entries: a removal leaves most maxima
    # to their supports, and a rescan stops once it has reached them again
    model, evidence = tied_model(seed, n_vars, zeros)
    shifted, _, search = search_over(model, evidence, 0.0)
    reduced_costs_agree_along(shifted, search)


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 8), zeros=st.sampled_from([0.3, 0.6]))
def test_restarts_before_the_first_assignment_still_reach_the_optimum(seed, n_vars, zeros,
                                                                     monkeypatch):
    # a run with no assignment found restarts after one node, then two, three...
    # (the same patience for every example: the fixture is not reset between them)
    monkeypatch.setattr(propagation, "_FIRST_PATIENCE", 1)
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    _, _, search = search_over(model, evidence, 0.0)
    while not search.finished:
        assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
        search.run(1)
    assert close(search.incumbent, top)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(3, 7),
       trail_bytes=st.sampled_from([20, 200, 2000, 20000]))
def test_a_search_whose_trail_fills_stalls_with_a_bound_that_still_holds(seed, n_vars,
                                                                        trail_bytes):
    model, evidence = random_model(seed, n_vars, 0.0)
    top, _ = brute_force(model, evidence)
    _, _, search = search_over(model, evidence, 0.0, trail_bytes=trail_bytes)
    while not search.finished and not search.stalled:
        search.run(5)
    assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
    if search.finished:
        assert close(search.incumbent, top)
    else:                                       # stalled: it stays where it stopped
        nodes = search.work_done
        assert search.run(5) == 0 and search.stalled and search.work_done == nodes


def test_a_root_that_fills_the_trail_stalls_without_claiming_a_bound():
    """A trail too small for the root's own propagation (its removed zeros)
    leaves the search stalled, neither finished nor with a bound below the
    optimum."""
    stalled_at_root = 0
    for seed in range(20):
        model, evidence = random_model(seed, 6, 0.3)
        top, _ = brute_force(model, evidence)
        _, _, search = search_over(model, evidence, 0.0, trail_bytes=20)
        if search.stalled:
            stalled_at_root += 1
            assert not search.finished and search.work_done == 0
            assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
    assert stalled_at_root > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 7), zeros=st.sampled_from([0.0, 0.3]))
def test_a_reset_after_the_tables_change_searches_the_new_tables(seed, n_vars, zeros):
    # the restarts reuse the root's first rescan; a reset must not, since the
    # engines' contract lets the tables change before it (MPLP between turns)
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    shifted, tab, search = search_over(model, evidence, 0.0)
    search.run(3)
    mplp_in_place(tab, shifted.arity, max_sweeps=5)
    search.reset()
    # with the incumbent the first search found: the root prunes by it
    fresh = PropagationSearch(tab, len(shifted.tables), shifted.arity, search.scalars.copy(),
                              search.best.copy())
    for k in (3, 5, 6):                 # the tables' maxima, the reduced costs, their infinities
        np.testing.assert_array_equal(search.work[k], fresh.work[k])
    while not search.finished:
        search.run(5)
    assert close(search.incumbent, top)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 7), zeros=st.sampled_from([0.0, 0.3]),
       budget=st.sampled_from([1, 4]))
def test_a_reread_after_the_tables_change_keeps_what_it_learnt(seed, n_vars, zeros, budget):
    # MPLP between the turns shifts the tables, which changes no assignment's
    # value: the bound proved still holds, and the weights still guide
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    shifted, tab, search = search_over(model, evidence, 0.0)
    for sweeps in (2, 5, 9):
        search.run(budget)
        if search.finished:
            break
        proved, weight, done = search.bound(), search.weight.copy(), search.work_done
        mplp_in_place(tab, shifted.arity, max_sweeps=sweeps)
        search.reread()
        assert top - 1e-9 * max(1.0, abs(top)) <= search.bound() <= proved
        # a wipe-out at the new root adds to its variable's weight
        assert (search.weight >= weight).all() and search.work_done == done
    while not search.finished:
        assert search.bound() >= top - 1e-9 * max(1.0, abs(top))
        search.run(budget)
    assert close(search.incumbent, top)


def test_an_incumbent_given_by_another_search_prunes_and_is_kept():
    model, evidence = random_model(7, 6, 0.0)
    top, _ = brute_force(model, evidence)
    _, _, search = search_over(model, evidence, 0.0)
    scalars, best = np.array([top]), np.full(len(search.arity), -1, dtype=np.int64)
    search.share(scalars, best)
    while not search.finished:
        search.run(100)
    assert scalars[0] == top and (best == -1).all()     # nothing beats it, nothing replaced it


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 9), zeros=st.sampled_from([0.0, 0.3]))
def test_the_tree_of_largest_reduced_costs_holds_each_variables_largest(seed, n_vars, zeros):
    """Each variable not marked since the tree was last read has its largest
    reduced cost over its values left at its leaf (-inf once it has one value
    or no table), and each node whose leaves are all read is their maximum."""
    model, evidence = random_model(seed, n_vars, zeros)
    _, _, search = search_over(model, evidence, 0.5)
    dom, dsize, red, infs = search.dom, search.dsize, search.work[5], search.work[6]
    dirty, seg = search.work[15], search.work[17]
    inc_ptr = search.static[7]
    leaves = len(seg) // 2
    for _ in range(30):
        if search.finished:
            break
        stale = np.zeros(2 * leaves, dtype=bool)
        for y in range(len(search.arity)):
            stale[leaves + y] = dirty[y]
            if dirty[y]:
                continue
            costs = [np.inf if infs[y, b] > 0 else red[y, b]
                     for b in range(search.arity[y]) if dom[y, b]]
            free = dsize[y] >= 2 and inc_ptr[y + 1] > inc_ptr[y]
            assert seg[leaves + y] == (max(costs) if free else -np.inf)
        for at in range(leaves - 1, 0, -1):
            stale[at] = stale[2 * at] or stale[2 * at + 1]
            if not stale[at]:
                assert seg[at] == max(seg[2 * at], seg[2 * at + 1])
        search.run(1)


def test_the_search_proves_within_a_billionth_of_the_value_with_the_constant_left_out():
    """A grid of tables whose logs lie within 1e-8 of one another: on tables
    that leave out a log value of -1000, as a presolved model's do, the LP's
    gap is within a billionth of the value and the search ends soon after its
    first assignment; without the constant it must refute the gap."""
    rng = np.random.default_rng(2)
    names = list(range(9))
    edges = [(v, v + 1) for v in names if v % 3 < 2] + [(v, v + 3) for v in names[:6]]
    model = FactorModel(names, {v: ["0", "1"] for v in names},
                        [Factor(e, np.exp(1e-8 * rng.random((2, 2)))) for e in edges])
    top, _ = brute_force(model, {})
    ended = {}
    for constant in (0.0, -1000.0):
        _, _, search = search_over(model, None, 0.0, constant=constant)
        while not search.finished:
            search.run(1)
        ended[constant] = search
    exact, loose = ended[0.0], ended[-1000.0]
    assert abs(exact.incumbent - top) < 1e-15 and top - loose.incumbent <= 1e-6
    assert loose.work_done < exact.work_done
    assert 1e-9 < loose.proved - loose.incumbent <= 1e-9 * abs(loose.incumbent - 1000.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 7), zeros=st.sampled_from([0.0, 0.3]),
       mplp=st.sampled_from([0.0, 1.0]))
def test_pruning_within_the_slack_with_the_constant_keeps_the_answer_within_it(
        seed, n_vars, zeros, mplp):
    # a constant of -1e8 makes the slack a tenth of a nat: branches whose bound
    # lies that close to the incumbent are pruned inside the tree, and the
    # answer may fall short of the optimum by no more
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    _, _, search = search_over(model, evidence, mplp, constant=-1e8)
    while not search.finished:
        search.run(3)
    assert top - slack(top, -1e8) <= search.incumbent <= top + 1e-9
    target = np.array([-np.inf, -1e8])
    assert floor_of(np.array([search.incumbent]), target) == to_beat(search.incumbent, -1e8)


def test_assignments_that_tie_with_the_incumbent_are_not_searched():
    # sixteen variables whose tables do not depend on them: 2**16 completions
    # of each assignment of the cycle tie, and a search that went into ties
    # would list them, as it would a network's near-irrelevant variables
    rng = np.random.default_rng(0)
    core, free = 6, 16
    factors = [Factor((v, (v + 1) % core), rng.random((2, 2)) + 0.1) for v in range(core)]
    factors += [Factor((v % core, core + v), np.repeat(rng.random((2, 1)) + 0.1, 2, axis=1))
                for v in range(free)]
    names = list(range(core + free))
    model = FactorModel(names, {v: ["0", "1"] for v in names}, factors)
    _, _, search = search_over(model, {}, 0.0)
    while not search.finished:
        search.run(1000)
    best = JunctionTree(model).mpe().assignment
    assert close(search.incumbent, model.log_values([[int(best[v]) for v in names]])[0])
    assert search.work_done <= 2 * len(names)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_sums_made_afresh_after_many_updates_equal_a_direct_computation(seed):
    """Past the updates after which the reduced costs are summed afresh, they
    still equal a direct computation."""
    model, evidence = random_model(seed, 40, 0.0)
    shifted, _, search = search_over(model, evidence, 0.0)
    made_afresh, last = 0, search.state[11]
    for _ in range(20_000):
        if search.finished or made_afresh == 2:
            break
        search.run(1)
        made_afresh += search.state[11] < last
        last = search.state[11]
    assert made_afresh == 2 or search.finished
    reduced_costs_agree_along(shifted, search, nodes=3)
