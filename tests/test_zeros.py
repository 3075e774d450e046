"""The zeros of a model as clauses: a SAT solver's assignment against brute force,
and the MPE search handing a fruitless first turn to it."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib.errors import ZeroEvidenceError
from twlib.factors import Factor, FactorModel
from twlib.inference import search
from twlib.inference.flat import flat_tables, tables_total
from twlib.inference.zeros import ZeroClauses


def zero_tables(seed, n_vars, density):
    """Random log tables over one to three of ``n_vars`` variables of one to
    four states, each entry zero (``-inf``) with probability ``density``."""
    rng = np.random.default_rng(seed)
    arity = rng.integers(1, 5, n_vars)
    tables = []
    for _ in range(int(rng.integers(1, 2 * n_vars + 2))):
        scope = tuple(int(x) for x in rng.choice(n_vars, size=int(rng.integers(1, min(3, n_vars)
                                                                                  + 1)),
                                                   replace=False))
        logs = rng.normal(size=tuple(arity[list(scope)]))
        logs[rng.random(logs.shape) < density] = -np.inf
        tables.append((scope, logs))
    return tables, arity


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 7), st.sampled_from([0.2, 0.5, 0.8]))
def test_the_assignment_found_avoids_every_zero_and_none_is_found_only_when_none_exists(
        seed, n_vars, density):
    tables, arity = zero_tables(seed, n_vars, density)
    tab = flat_tables(tables)
    possible = any(tables_total(np.array(row), len(tables), tab) > -np.inf
                   for row in itertools.product(*(range(r) for r in arity)))
    clauses = ZeroClauses(tab, len(tables), arity)
    if not possible:
        with pytest.raises(ZeroEvidenceError, match="probability zero"):
            clauses.solve(5.0)
        return
    states = clauses.solve(5.0)
    if not clauses.usable:                      # no zero at all: nothing to ask
        assert states is None
        return
    assert ((states >= 0) & (states < arity)).all()
    assert tables_total(states, len(tables), tab) > -np.inf


def reference_clauses(tables, arity, first):
    """One clause per zero entry, table by table in C order, each literal from
    its variable's state; variables of one state left out."""
    clauses, impossible = [], False
    for scope, logs in tables:
        for entry in zip(*np.nonzero(logs == -np.inf)):
            clause = [-(first[x] + a) if arity[x] > 2 else (-first[x] if a == 1 else first[x])
                      for x, a in zip(scope, entry) if arity[x] > 1]
            if clause:
                clauses.append([int(literal) for literal in clause])
            else:
                impossible = True
    return clauses, impossible


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 7), st.sampled_from([0.2, 0.5, 0.8]))
def test_the_clauses_are_the_zero_entries_one_by_one(seed, n_vars, density):
    tables, arity = zero_tables(seed, n_vars, density)
    clauses = ZeroClauses(flat_tables(tables), len(tables), arity)
    expected, impossible = reference_clauses(tables, arity, clauses.first)
    assert clauses.impossible == impossible
    assert clauses.clauses[:len(expected)] == expected
    # and a clause per variable of more than two states, that one of them holds
    assert len(clauses.clauses) == len(expected) + (int((arity > 2).sum()) if clauses.usable
                                                    else 0)


def test_a_turn_that_finds_no_assignment_hands_over_to_the_sat_solver(monkeypatch):
    """A pure constraint problem (each table 1 or 0): the assignment of the SAT
    solver is optimal, and the search's next turn proves it."""
    rng = np.random.default_rng(3)
    variables = [f"x{i}" for i in range(12)]
    factors = []
    for _ in range(30):
        scope = list(rng.choice(variables, size=3, replace=False))
        values = np.ones((2, 2, 2))
        values[tuple(rng.integers(0, 2, 3))] = 0.0          # one clause of three literals
        factors.append(Factor(scope, values))
    model = FactorModel(variables, {v: ["0", "1"] for v in variables}, factors)
    turns_run = []
    real_turn = search._probe_turn

    def fruitless_first(probe, end, started, history):
        turns_run.append(probe.incumbent)
        return None if len(turns_run) == 1 else real_turn(probe, end, started, history)

    monkeypatch.setattr(search, "_probe_turn", fruitless_first)
    turns = search.ShiftAndProbe(model).run(mplp_cap=0.0, until=search.clock.now() + 30)
    assert turns.satisfied and turns_run[0] == -np.inf and turns_run[1] > -np.inf
    assert turns.status == "optimal" and turns.probe.incumbent == pytest.approx(0.0, abs=1e-9)
