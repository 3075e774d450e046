"""Mini-bucket bounds and branch and bound MPE, against brute force and the junction tree."""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twlib import clock, datasets, errors
from twlib.factors import Factor, FactorModel, as_factor_model
from twlib.inference import JunctionTree
from twlib.inference.andor import AndOrSearch, pseudo_tree
from twlib.inference.flat import flat_tables, tables_total
from twlib.inference.cost_shifting import mplp, mplp_in_place
from twlib.inference.minibucket import (default_order, log_tables, message_bytes, mini_buckets,
                                        shifted_tables)
from twlib.inference.dive import DiveSearch
from twlib.inference.local_search import LocalSearch
from twlib.inference import (MPESearch, branch_and_bound_mpe, most_probable_explanation, routing,
                             search)
from twlib.inference.search import ShiftAndProbe, paying_mini_buckets

from . import naive


def random_model(seed, n_vars, zeros):
    rng = np.random.default_rng(seed)
    model = naive.random_factor_model(rng, n_vars, n_vars + 3, 4, scale=3.0, zeros=zeros)
    names = model.variables
    evidence = {v: int(rng.integers(model.arity(v)))
                for v in rng.choice(names, size=int(rng.integers(0, min(3, n_vars + 1))),
                                    replace=False)}
    return model, evidence


def brute_force(model, evidence):
    """``(log max, log Z)`` of the unnormalised product, evidence clamped."""
    names = model.variables
    rows = [row for row in itertools.product(*(range(model.arity(v)) for v in names))
            if all(row[names.index(v)] == s for v, s in evidence.items())]
    logs = model.log_values(np.array(rows))
    top = logs.max()
    log_z = top + np.log(np.exp(logs - top).sum()) if np.isfinite(top) else -np.inf
    return top, log_z


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6), st.booleans())
def test_one_row_scores_as_in_a_batch_to_the_last_bit(seed, n_vars, zeros):
    """``log_values`` of one row takes a scalar path; it must agree exactly with
    the same row scored among others, zeros (``-inf``) included."""
    model, _ = random_model(seed, n_vars, zeros)
    names = model.variables
    rows = np.array(list(itertools.product(*(range(model.arity(v)) for v in names))))
    together = model.log_values(rows)
    alone = np.array([model.log_values(row[None])[0] for row in rows])
    np.testing.assert_array_equal(alone, together)


def model_with_buckets(seed, n_vars, i_bound, zeros):
    """A random model, its MBE(``i_bound``) under its random evidence (None when
    that proves the evidence impossible, which brute force must agree with) and
    its brute-force log max."""
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    try:
        return model, mini_buckets(model, i_bound, evidence), top
    except errors.ZeroEvidenceError:
        assert top == -np.inf
        return model, None, top


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 6), i_bound=st.integers(1, 5),
       zeros=st.sampled_from([0.0, 0.3]), matching=st.booleans())
def test_mini_bucket_bounds_hold(seed, n_vars, i_bound, zeros, matching):
    model, evidence = random_model(seed, n_vars, zeros)
    top, log_z = brute_force(model, evidence)
    if top == -np.inf:                  # a bound may prove it, or stay above it
        for task in ("max", "sum"):
            try:
                assert not np.isnan(mini_buckets(model, i_bound, evidence, task=task).bound)
            except errors.ZeroEvidenceError:
                pass
        with pytest.raises(errors.ZeroEvidenceError):
            mini_buckets(model, n_vars, evidence, task="sum")
        return
    tol = 1e-9 * max(1.0, abs(log_z))
    assert mini_buckets(model, i_bound, evidence, task="max",
                        moment_matching=matching).bound >= top - tol
    assert mini_buckets(model, i_bound, evidence, task="sum").bound >= log_z - tol
    assert mini_buckets(model, i_bound, evidence, task="sum-lower").bound <= log_z + tol
    exact = mini_buckets(model, n_vars, evidence, task="sum").bound
    assert exact == pytest.approx(log_z, abs=tol)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 6), zeros=st.sampled_from([0.0, 0.3]))
def test_mplp_keeps_every_value_and_lowers_a_bound(seed, n_vars, zeros):
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    tables, arity, ev = log_tables(model, evidence)
    shifted, bounds, closed = mplp(tables, arity, max_sweeps=200, decode=True)
    if closed is not None:                      # it stopped on an assignment that is optimal
        closed[list(ev)] = list(ev.values())
        value = sum(float(t[tuple(closed[list(s)])]) for s, t in tables)
        assert value == pytest.approx(top, rel=1e-9, abs=1e-9)
    assert all(b <= a + 1e-9 * max(1.0, abs(a)) for a, b in zip(bounds, bounds[1:])
               if a > -np.inf)
    assert bounds[-1] >= top - 1e-9 * max(1.0, abs(top))
    free = [v for v in range(len(arity)) if v not in ev]
    for row in itertools.product(*(range(arity[v]) for v in free)):
        full = np.zeros(len(arity), dtype=np.int64)
        full[free] = row
        before = sum(float(t[tuple(full[list(s)])]) for s, t in tables)
        after = sum(float(t[tuple(full[list(s)])]) for s, t in shifted)
        assert after == pytest.approx(before, rel=1e-9, abs=1e-9) or before == after == -np.inf
    if top > -np.inf:
        assert mini_buckets(model, 2, evidence, mplp_time_limit=1).bound >= top - 1e-9 * abs(top)


def test_mplp_closes_a_chain_at_the_root():
    # the LP of a tree is tight: the beliefs alone give the optimum, with no search
    rng = np.random.default_rng(7)
    tables = [((k, k + 1), np.log(rng.random((3, 3)))) for k in range(5)]
    _, _, closed = mplp(tables, np.full(6, 3), decode=True)
    best = max(itertools.product(range(3), repeat=6),
               key=lambda x: sum(float(t[x[a], x[b]]) for (a, b), t in tables))
    assert closed is not None and tuple(closed) == best
    result = branch_and_bound_mpe(_chain_model(tables), i_bound=2, presolve=False)
    assert result.method == "MPLP, tight" and result.status == "optimal"


def _chain_model(tables):
    from twlib.factors import Factor, FactorModel

    names = [f"x{k}" for k in range(6)]
    return FactorModel(names, {v: ["a", "b", "c"] for v in names},
                       [Factor((names[a], names[b]), np.exp(t)) for (a, b), t in tables])


def test_tables_over_the_same_variables_are_added_into_one():
    from twlib.factors import Factor, FactorModel

    rng = np.random.default_rng(3)
    states = {"a": ["0", "1"], "b": ["0", "1", "2"], "c": ["0", "1"]}
    factors = [Factor(("a", "b"), rng.random((2, 3))), Factor(("b", "a"), rng.random((3, 2))),
               Factor(("c",), rng.random(2)), Factor(("a", "b"), rng.random((2, 3))),
               Factor(("c",), np.array([0.0, 1.0]))]
    model = FactorModel(["a", "b", "c"], states, factors)
    tables = shifted_tables(model, mplp_time_limit=0).tables
    assert sorted(scope for scope, _ in tables) == [(0, 1), (2,)]
    for row in itertools.product(range(2), range(3), range(2)):
        merged = sum(float(t[tuple(row[v] for v in scope)]) for scope, t in tables)
        assert merged == pytest.approx(model.log_values(np.array([row]))[0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 7), i_bound=st.integers(1, 4),
       zeros=st.sampled_from([0.0, 0.3]), shifted=st.booleans(), presolve=st.booleans())
def test_branch_and_bound_finds_the_brute_force_optimum(seed, n_vars, i_bound, zeros, shifted,
                                                        presolve):
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    shift = None if shifted else 0.0
    if top == -np.inf:
        with pytest.raises(errors.ZeroEvidenceError):
            branch_and_bound_mpe(model, evidence, i_bound=i_bound, mplp_time_limit=shift,
                                 presolve=presolve)
        return
    res = branch_and_bound_mpe(model, evidence, i_bound=i_bound, mplp_time_limit=shift,
                               presolve=presolve)
    assert res.status == "optimal" and res.log_gap == 0.0
    assert res.log_value == pytest.approx(top, rel=1e-12, abs=1e-12)
    row = [model.states(v).index(res.assignment[v]) for v in model.variables]
    assert model.log_values([row])[0] == pytest.approx(top, rel=1e-12, abs=1e-12)
    assert all(model.states(v).index(res.assignment[v]) == s for v, s in evidence.items())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 7), zeros=st.sampled_from([0.0, 0.3]),
       first_turns=st.integers(0, 2))
def test_a_search_given_a_head_start_finds_the_brute_force_optimum(seed, n_vars, zeros,
                                                                   first_turns):
    """Turns stopped early and handed on must end where a fresh search does:
    at the optimum, or at ZeroEvidenceError."""
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    turns = ShiftAndProbe(model, evidence).run(1.0, clock.now() + 10, turns=first_turns)
    if top == -np.inf:
        with pytest.raises(errors.ZeroEvidenceError):
            branch_and_bound_mpe(model, evidence, i_bound=2, presolve=False, head_start=turns)
        return
    res = branch_and_bound_mpe(model, evidence, i_bound=2, presolve=False, head_start=turns)
    assert res.status == "optimal"
    assert res.log_value == pytest.approx(top, rel=1e-12, abs=1e-12)


def test_the_larger_i_bound_is_computed_unless_a_search_has_proved_far_more_than_mbe4():
    net = datasets.load_network("alarm")
    evidence = {"HR": "HIGH"}
    shifted = shifted_tables(net, evidence, mplp_time_limit=0.1)
    lp = shifted.lp_bounds[-1]
    small = mini_buckets(net, 4, evidence, shifted=shifted)
    # a search that has proved over a hundred times what MBE(4) gains on the
    # LP keeps MBE(4)
    far = lp - 101 * (lp - small.bound) - 1.0
    kept = paying_mini_buckets(net, evidence, shifted, far)
    assert kept.i_bound == 4 and kept.bound == small.bound
    # one that has proved nothing past the LP does not
    larger = paying_mini_buckets(net, evidence, shifted, lp)
    assert larger.i_bound > 4
    exact = JunctionTree(net).mpe(evidence).log_value
    assert exact - 1e-9 <= larger.bound <= small.bound + 1e-9


def random_grid(seed, side):
    """A ``side`` x ``side`` grid of ternary variables with random log-normal
    tables: frustrated, so MPLP tightens it over many turns."""
    rng = np.random.default_rng(seed)
    names = [f"x{i}" for i in range(side * side)]
    factors = []
    for v in range(side * side):
        factors.append(Factor((names[v],), np.exp(rng.normal(size=3))))
        for w in ([v + 1] if (v + 1) % side else []) + ([v + side] if v + side < side * side
                                                        else []):
            factors.append(Factor((names[v], names[w]), np.exp(2 * rng.normal(size=(3, 3)))))
    return FactorModel(names, {v: ["0", "1", "2"] for v in names}, factors)


@pytest.mark.parametrize("worth", [0.0, np.inf])
def test_mplp_turns_stop_once_the_search_proves_more_than_they_tighten(monkeypatch, worth):
    # the search proves past the LP from its first turn: a turn of MPLP must
    # gain more than ``worth`` times that to be followed by another
    monkeypatch.setattr(search, "_LP_GAIN_WORTH", worth)
    calls = []
    monkeypatch.setattr(search, "mplp_in_place",
                        lambda *a, **k: calls.append(1) or mplp_in_place(*a, **k))
    turns = ShiftAndProbe(random_grid(0, 20)).run(10.0, clock.now() + 30, turns=4)
    assert not turns.ended and turns.probe.bound() < turns.bounds[-1]
    assert len(calls) == 1 if worth == np.inf else len(calls) > 1


def test_a_head_start_needs_the_model_as_given():
    net = datasets.load_network("asia")
    turns = ShiftAndProbe(net)
    with pytest.raises(errors.InputError, match="presolve=False"):
        branch_and_bound_mpe(net, head_start=turns)


def test_mplp_tolerance_shrinks_to_a_hundredth_of_a_narrow_gap_to_the_incumbent():
    """On a tight LP MPLP nears the optimum by a steady share of the gap, so
    its tolerance (relative to the bound) becomes a hundredth of the gap when
    that is smaller than its own; with no incumbent, or a wide gap, it keeps
    its own."""
    from twlib.inference.cost_shifting import MPLP_TOL
    turns = ShiftAndProbe(datasets.load_network("asia"))
    assert turns._tol() == MPLP_TOL
    turns.bounds = [-9.0, -10.0]
    turns._scalars[0] = -10.0 - 1e-6
    assert turns._tol() == pytest.approx(0.01 * 1e-6 / 10.0)
    turns._scalars[0] = -11.0
    assert turns._tol() == MPLP_TOL


def test_the_router_lets_the_search_answer_first_when_the_tree_would_be_slower(monkeypatch):
    """With every tree deemed slow enough, MPLP and the propagation search get
    the first turns, and their answer is the tree's."""
    net = datasets.load_network("alarm")
    evidence = {"HR": "HIGH", "BP": "LOW"}
    tree = most_probable_explanation(net, evidence)
    monkeypatch.setattr(routing, "SEARCH_FROM_QUERY_SECONDS", 0.0)
    monkeypatch.setattr(routing, "MAX_SUM_TYPICAL_ENTRIES_PER_SECOND", 1e4)
    first = most_probable_explanation(net, evidence)
    assert tree.method == "junction tree" and first.method != "junction tree"
    assert first.status == "optimal" and first.log_value == pytest.approx(tree.log_value)


@pytest.mark.parametrize("name", ["asia", "alarm", "insurance", "barley"])
@pytest.mark.parametrize("typical", [1e5, 1e6, 1e8])
def test_the_quick_pass_test_stopped_early_agrees_with_the_whole_greedy_tree(name, typical,
                                                                           monkeypatch):
    """Stopping the elimination at the first clique over the entries the time
    allows changes no answer: the whole min-degree tree, sized at the same
    rate, is quick exactly when the test says so."""
    from twlib.graphs import greedy_entries
    monkeypatch.setattr(routing, "MAX_SUM_TYPICAL_ENTRIES_PER_SECOND", typical)
    model = as_factor_model(datasets.load_network(name))
    index = {v: k for k, v in enumerate(model.variables)}
    entries = greedy_entries([[index[v] for v in f.variables] for f in model.factors],
                             [model.arity(v) for v in model.variables])
    seconds = entries / typical + len(model.factors) * routing.SECONDS_PER_FACTOR
    assert routing._pass_is_quick(model, 4.0, np.inf) == (
        seconds < routing.SEARCH_FROM_QUERY_SECONDS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 7), i_bound=st.integers(1, 4),
       zeros=st.sampled_from([0.0, 0.3]))
def test_a_prepared_search_answers_each_evidence_set_as_brute_force(seed, n_vars, i_bound,
                                                                   zeros):
    model, evidence = random_model(seed, n_vars, zeros)
    try:
        search = MPESearch(model, i_bound=i_bound)
    except errors.ZeroEvidenceError:        # when the bound sees it; else each query says so
        assert brute_force(model, {})[0] == -np.inf
        return
    rng = np.random.default_rng(seed)
    other = {v: int(rng.integers(model.arity(v))) for v in model.variables[:1]}
    # the same set twice: a query leaves the prepared tables as it found them
    for ev in (evidence, {}, other, evidence):
        top, _ = brute_force(model, ev)
        if top == -np.inf:
            with pytest.raises(errors.ZeroEvidenceError):
                search.mpe(ev)
            continue
        res = search.mpe(ev)
        assert res.status == "optimal"
        assert res.log_value == pytest.approx(top, rel=1e-12, abs=1e-12)
        assert all(model.states(v).index(res.assignment[v]) == s for v, s in ev.items())


def possible_evidence(net, tree, sets, size, seed):
    """``(evidence, log P of its MPE)`` for the sets of ``size`` random observed
    variables among ``sets`` drawn that the tree finds possible."""
    rng = np.random.default_rng(seed)
    for _ in range(sets):
        chosen = rng.choice(net.variables, size=size, replace=False)
        evidence = {v: net.states(v)[rng.integers(len(net.states(v)))] for v in chosen}
        try:
            yield evidence, tree.mpe(evidence).log_value
        except errors.ZeroEvidenceError:
            continue


def test_a_prepared_search_falls_back_to_the_tree_it_has_timed():
    net = datasets.load_network("alarm")
    tree, search = JunctionTree(net), MPESearch(net, i_bound=6)
    methods = []
    for evidence, log_p in possible_evidence(net, tree, 4, 3, seed=5):
        res = search.mpe(evidence, fallback=tree)
        methods.append(res.method)
        assert res.status == "optimal" and res.log_value == pytest.approx(log_p, rel=1e-10)
    assert methods[0] == "junction tree"            # the tree's first query times it
    with pytest.raises(errors.InputError, match="fallback junction tree"):
        search.mpe({}, fallback=JunctionTree(datasets.load_network("asia")))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 8), i_bound=st.integers(1, 3),
       zeros=st.sampled_from([0.0, 0.3]), capacity=st.sampled_from([16, 1 << 12]),
       backtracks=st.sampled_from([1, 3]))
def test_hybrid_best_first_search_is_exact_with_parking_and_a_full_store(
        seed, n_vars, i_bound, zeros, capacity, backtracks):
    # parking after every backtrack or every third, into a store that fills or not
    model, mb, top = model_with_buckets(seed, n_vars, i_bound, zeros)
    if mb is None:
        return
    kernel = DiveSearch(mb, flat_tables(mb.tables), capacity=capacity,
                        backtracks_per_dive=backtracks)
    while not kernel.finished:
        assert kernel.bound() >= top - 1e-9 * max(1.0, abs(top))
        kernel.run(2)                   # stops and resumes between and within dives
    assert kernel.incumbent == pytest.approx(top, abs=1e-9 * max(1.0, abs(top)))
    if top > -np.inf:
        found = kernel.best.copy()
        for v, s in mb.evidence.items():
            found[v] = s
        assert model.log_values([found])[0] == pytest.approx(top, rel=1e-9, abs=1e-9)


def local_search(mb, tab):
    """The local search over mini-buckets ``mb``, with an incumbent of its own."""
    seq = np.array(mb.order[::-1], dtype=np.int64)
    return LocalSearch(tab, mb.originals, seq, mb.arity, np.array([-np.inf]),
                       np.zeros(len(mb.arity), dtype=np.int64))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 7))
def test_conditional_modes_end_where_no_single_move_helps(seed, n_vars):
    model, evidence = random_model(seed, n_vars, 0.0)
    mb = mini_buckets(model, 2, evidence)
    kernel = local_search(mb, flat_tables(mb.tables))
    rng = np.random.default_rng(seed)
    start = np.array([rng.integers(a) for a in mb.arity])
    for v, s in mb.evidence.items():
        start[v] = s
    kernel.best[:] = start
    kernel.polish()
    found = kernel.best.copy() if kernel.incumbent > -np.inf else start
    value = model.log_values([found])[0]
    assert value >= model.log_values([start])[0] - 1e-9
    for v in mb.order:                  # a local optimum: no variable alone improves it
        for a in range(mb.arity[v]):
            moved = found.copy()
            moved[v] = a
            assert model.log_values([moved])[0] <= value + 1e-9 * max(1.0, abs(value))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 6), zeros=st.sampled_from([0.0, 0.3]))
def test_the_local_search_only_raises_the_incumbent_and_keeps_its_value(seed, n_vars, zeros):
    model, evidence = random_model(seed, n_vars, zeros)
    top, _ = brute_force(model, evidence)
    if top == -np.inf:
        return
    mb = mini_buckets(model, 2, evidence)
    tab = flat_tables(mb.tables)
    kernel = local_search(mb, tab)
    assert kernel.run(5) == 0                   # nothing to start from
    rng = np.random.default_rng(seed)
    kernel.best[:] = [rng.integers(a) for a in mb.arity]
    for v, s in mb.evidence.items():
        kernel.best[v] = s
    kernel.scalars[0] = tables_total(kernel.best, mb.originals, tab)
    for _ in range(3):
        before = kernel.incumbent
        kernel.run(20)
        assert kernel.incumbent >= before
        assert kernel.incumbent == tables_total(kernel.best, mb.originals, tab)
        assert kernel.incumbent <= top + 1e-9 * max(1.0, abs(top))
        assert all(kernel.best[v] == s for v, s in mb.evidence.items())
        value = kernel.incumbent
        for v in mb.order if value > -np.inf else ():   # kicks end at local optima
            for a in range(mb.arity[v]):
                moved = kernel.best.copy()
                moved[v] = a
                assert tables_total(moved, mb.originals, tab) <= value + 1e-9 * max(1.0, abs(value))


def and_or_to_the_end(mb, incumbent, cache_entries):
    search = AndOrSearch(mb, cache_entries)
    search.restart(incumbent)
    while not search.finished:
        assert search.bound() >= incumbent
        search.run(7)                   # stops and resumes mid-tree
    return search


def contexts_by_sets(order, scopes):
    """Each variable's later neighbours in the graph ``order`` fills in, by sets."""
    position = {v: k for k, v in enumerate(order)}
    neighbours = {v: set() for v in order}
    for scope in scopes:
        free = [v for v in scope if v in position]
        for v in free:
            neighbours[v].update(u for u in free if u != v)
    context = {}
    for v in order:
        later = neighbours.pop(v)
        context[v] = tuple(sorted(later, key=position.__getitem__))
        for u in later:
            neighbours[u].discard(v)
            neighbours[u].update(w for w in later if w != u)
    return context


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 90), n_scopes=st.integers(0, 60),
       dropped=st.integers(0, 5))
def test_the_compiled_pseudo_tree_has_the_contexts_sets_give(seed, n_vars, n_scopes, dropped):
    # over 64 variables, so that the bitsets take more than one word
    rng = np.random.default_rng(seed)
    scopes = [tuple(rng.choice(n_vars, size=min(n_vars, int(rng.integers(1, 4))),
                               replace=False).tolist()) for _ in range(n_scopes)]
    order = rng.permutation(n_vars).tolist()[:max(0, n_vars - dropped)]
    tree = pseudo_tree(order, scopes, n_vars)
    expected = contexts_by_sets(order, scopes)
    for v in range(n_vars):
        assert tree.context[v] == expected.get(v, ())
        assert tree.parent[v] == (expected[v][0] if expected.get(v) else n_vars)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(1, 8), i_bound=st.integers(1, 4),
       zeros=st.sampled_from([0.0, 0.3]), cache=st.sampled_from([0, 10**6]))
def test_and_or_search_finds_the_brute_force_optimum(seed, n_vars, i_bound, zeros, cache):
    model, mb, top = model_with_buckets(seed, n_vars, i_bound, zeros)
    if mb is None:
        return
    tree = pseudo_tree(mb.order, [scope for scope, _ in mb.tables], len(mb.arity))
    for scope, _ in mb.tables:          # every scope lies on one root-to-leaf path
        free = [v for v in scope if v not in mb.evidence]
        for v in free:
            ancestors, u = set(), v
            while u != len(mb.arity):
                ancestors.add(u)
                u = tree.parent[u]
            assert all(w in ancestors for w in free if mb.order.index(w) >= mb.order.index(v))
    found = and_or_to_the_end(mb, -np.inf, cache)
    if top == -np.inf:
        assert not found.improved
        return
    assert found.improved and found.value == pytest.approx(top, rel=1e-12, abs=1e-12)
    row = found.assign.copy()
    for v, s in mb.evidence.items():
        row[v] = s
    assert model.log_values([row])[0] == pytest.approx(top, rel=1e-12, abs=1e-12)
    assert not and_or_to_the_end(mb, top, cache).improved      # the optimum is proved
    below = and_or_to_the_end(mb, top - 0.5, cache)
    assert below.improved and below.value == pytest.approx(top, rel=1e-12, abs=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_vars=st.integers(2, 8), i_bound=st.integers(1, 3))
def test_and_or_search_caches_bounds_of_exactly_zero(seed, n_vars, i_bound):
    # entries of 1/2, 1 and 2: many subproblems are worth exactly log 1 = 0, the
    # value that also marks a cache entry not yet written
    rng = np.random.default_rng(seed)
    names = [f"x{i}" for i in range(n_vars)]
    states = {v: ["0", "1"] for v in names}
    factors = []
    for _ in range(n_vars + 3):
        scope = tuple(rng.choice(names, size=min(n_vars, 2), replace=False))
        factors.append(Factor(scope, rng.choice([0.5, 1.0, 1.0, 2.0], size=(2, 2))))
    model = FactorModel(names, states, factors)
    top, _ = brute_force(model, {})
    mb = mini_buckets(model, i_bound, {}, moment_matching=False)
    found = and_or_to_the_end(mb, -np.inf, 10**6)
    assert found.value == pytest.approx(top, rel=1e-12, abs=1e-12)
    assert not and_or_to_the_end(mb, top, 10**6).improved      # the optimum is proved


@pytest.mark.parametrize("name", ["alarm", "insurance", "win95pts", "andes"])
def test_and_or_search_equals_the_junction_tree_on_bnlearn_networks(name):
    net = datasets.load_network(name)
    tree = JunctionTree(net)
    rng = np.random.default_rng(5)
    chosen = rng.choice(net.variables, size=3, replace=False)
    evidence = {v: net.states(v)[0] for v in chosen}
    log_p = tree.mpe(evidence).log_value
    found = and_or_to_the_end(mini_buckets(net, 10, evidence), -np.inf, 10**6)
    assert found.improved and found.value == pytest.approx(log_p, rel=1e-10)


@pytest.mark.parametrize("name", ["alarm", "insurance", "win95pts", "andes"])
def test_branch_and_bound_equals_the_junction_tree_on_bnlearn_networks(name):
    net = datasets.load_network(name)
    tree = JunctionTree(net)
    for evidence, log_p in possible_evidence(net, tree, 3, 4, seed=3):
        res = branch_and_bound_mpe(net, evidence, i_bound=8, time_limit=60)
        assert res.status == "optimal"
        assert res.log_value == pytest.approx(log_p, rel=1e-10)
        assert mini_buckets(net, 3, evidence).bound >= log_p - 1e-9


def test_the_search_is_anytime_under_a_time_limit():
    inst = datasets.load_uai("Grids_26")
    res = branch_and_bound_mpe(inst.model, inst.evidence, i_bound=4, time_limit=0.5)
    assert res.status == "time_limit"
    assert res.bound >= res.log_value > -np.inf
    assert res.stats["history"] and res.stats["history"][-1][1] == res.log_value


def test_most_probable_explanation_picks_the_method_that_fits():
    net = datasets.load_network("alarm")
    evidence = {"HR": "HIGH", "BP": "LOW"}
    tree = most_probable_explanation(net, evidence)
    small = most_probable_explanation(net, evidence, max_memory_gb=2e-6)
    # past the tree: MPLP closes alarm's LP at the root, or the branch and bound searches
    assert tree.method == "junction tree"
    assert small.method == "MPLP, tight" or "branch and bound" in small.method
    assert small.status == "optimal" and small.log_value == pytest.approx(tree.log_value)
    assert message_bytes(net, 2, evidence) <= message_bytes(net, 6, evidence)


@pytest.mark.parametrize("call, message", [
    (lambda net: mini_buckets(net, 0), "i-bound must be an integer >= 1"),
    (lambda net: mini_buckets(net, 2.5), "i-bound must be an integer >= 1"),
    (lambda net: mini_buckets(net, 3, task="min"), "task must be one of"),
    (lambda net: mini_buckets(net, 3, max_memory_gb=0), "max_memory_gb must be positive"),
    (lambda net: branch_and_bound_mpe(net, time_limit=0), "time_limit must be a positive"),
    (lambda net: branch_and_bound_mpe(net, time_limit=-1), "time_limit must be a positive"),
    (lambda net: MPESearch(net).mpe(time_limit=0), "time_limit must be a positive"),
    (lambda net: MPESearch(net, i_bound=0), "i-bound must be an integer >= 1"),
    (lambda net: MPESearch(net).mpe({"nope": "yes"}), "unknown variable"),
    (lambda net: mini_buckets(net, 3, {"nope": 0}), "unknown variable"),
    (lambda net: mini_buckets(net, 3, order=["asia"]), "every variable without evidence"),
    (lambda net: shifted_tables(net, order=["asia"] * 8), "every variable without evidence"),
    (lambda net: mini_buckets(net, 1, max_memory_gb=1e-12), "lower the i-bound"),
    (lambda net: mini_buckets(net, 3, task="sum", mplp_time_limit=1), "task 'max' only"),
    (lambda net: mini_buckets(net, 3, mplp_time_limit=-1), "mplp_time_limit must be >= 0"),
])
def test_bad_input_is_a_named_error(call, message):
    with pytest.raises(errors.TwlibError, match=message):
        call(datasets.load_network("asia"))


def test_shifted_tables_order_their_variables_by_min_fill_when_first_asked():
    net = datasets.load_network("alarm")
    shifted = shifted_tables(net, {"HR": "HIGH"}, mplp_time_limit=0)
    assert "order" not in vars(shifted)         # a search that ends early never pays for it
    assert [net.variables[v] for v in shifted.order] == default_order(net, {"HR": "HIGH"})
    given = list(reversed(default_order(net, {"HR": "HIGH"})))
    assert [net.variables[v] for v in shifted_tables(net, {"HR": "HIGH"}, order=given).order] \
        == given


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 8), st.integers(0, 12))
def test_star_incidence_lists_each_variables_tables_in_table_order(seed, n_vars, n_tables):
    from twlib.inference.cost_shifting import star_incidence

    rng = np.random.default_rng(seed)
    scopes = [tuple(rng.choice(n_vars, size=int(rng.integers(1, min(3, n_vars) + 1)),
                               replace=False).tolist()) for _ in range(n_tables)]
    tab = flat_tables([(scope, np.zeros([2] * len(scope))) for scope in scopes])
    count = int(rng.integers(0, n_tables + 1))
    got = star_incidence(tab[0], tab[1], n_vars, count)
    want = naive.star_incidence(tab[0], tab[1], n_vars, count)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def _random_tables(rng, n_vars, n_tables, zeros):
    """Log tables over variables of two or three values (both kinds of star
    update), some entries zero."""
    arity = rng.integers(2, 4, size=n_vars)
    tables = []
    for _ in range(n_tables):
        scope = tuple(rng.choice(n_vars, size=int(rng.integers(1, min(3, n_vars) + 1)),
                                 replace=False).tolist())
        table = rng.random(tuple(arity[list(scope)]))
        table[rng.random(table.shape) < zeros] = 0.0
        with np.errstate(divide="ignore"):
            tables.append((scope, np.log(table)))
    return tables, arity


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6), st.integers(0, 10))
def test_star_gathers_list_each_tables_entries_by_the_variables_value(seed, n_vars, n_tables):
    from twlib.inference.cost_shifting import star_gathers

    rng = np.random.default_rng(seed)
    tables, arity = _random_tables(rng, n_vars, n_tables, 0.0)
    count = int(rng.integers(0, n_tables + 1))
    inc_ptr, gather_ptr, gather = star_gathers(flat_tables(tables), arity, count)
    assert gather.tolist() == naive.star_gathers(tables, arity, count)
    assert inc_ptr[-1] == len(gather_ptr) - 1 and gather_ptr[-1] == len(gather)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6), st.integers(1, 10),
       st.sampled_from([0.0, 0.3]))
def test_an_mplp_sweep_matches_the_sweep_written_with_numpy(seed, n_vars, n_tables, zeros):
    rng = np.random.default_rng(seed)
    tables, arity = _random_tables(rng, n_vars, n_tables, zeros)
    shifted, _ = mplp(tables, arity, max_sweeps=1)
    for (_, got), (_, want) in zip(shifted, naive.mplp_sweep(tables, arity)):
        assert np.array_equal(got == -np.inf, want == -np.inf)
        assert np.allclose(got[got > -np.inf], want[want > -np.inf], rtol=1e-12, atol=1e-12)
