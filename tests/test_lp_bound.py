"""twlib.learn.relaxation: the LP relaxation's bound against the full programme with every
cluster constraint, against the exact optimum, and inside learn.bounded."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from twlib.data import Dataset
from twlib.errors import InputError
from twlib.learn import bounded, order_graph
from twlib.learn.ilp.relaxation import lp_bound, scoring_seconds
from twlib.network import random_network
from twlib.scores import ParentSetScores


def _dataset(seed, n, rows):
    arities = np.random.default_rng(seed).integers(2, 4, n)
    net = random_network(n, max_in=2, arities=arities, random_state=seed)
    return net.sample(rows, random_state=seed)


def _full_relaxation(pss: ParentSetScores) -> float:
    """The LP over every kept family with every cluster constraint and every set-packing
    row of three and four variables written out."""
    n = pss.n_vars
    child, members, scores = [], [], []
    for v in range(n):
        for parents, score in pss.sets(v):
            child.append(v)
            members.append({pss.names.index(p) for p in parents})
            scores.append(score)
    a_eq = np.array([[c == v for c in child] for v in range(n)], dtype=float)
    rows = []
    for size in range(2, n + 1):
        for cluster in itertools.combinations(range(n), size):
            inside = set(cluster)
            rows.append([-(c in inside and not (m & inside)) for c, m in zip(child, members)])
    clusters = len(rows)
    for size in (3, 4):
        for packed in itertools.combinations(range(n), size):
            inside = set(packed)
            rows.append([c in inside and inside - {c} <= m for c, m in zip(child, members)])
    b_ub = np.r_[-np.ones(clusters), np.ones(len(rows) - clusters)]
    res = linprog(-np.array(scores), A_ub=np.array(rows, dtype=float), b_ub=b_ub, A_eq=a_eq,
                  b_eq=np.ones(n), bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 5), st.integers(1, 3), st.integers(30, 300),
       st.sampled_from(["bic", "bdeu"]), st.integers(0, 2**31))
def test_column_generation_reaches_the_full_relaxation(n, k, rows, score, seed):
    pss = ParentSetScores(_dataset(seed, n, rows), score=score, max_parents=k)
    out = lp_bound(pss, time_limit=60)
    full = _full_relaxation(pss)
    assert out["converged"]
    assert out["bound"] == pytest.approx(full, rel=1e-7, abs=1e-6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 9), st.integers(1, 3), st.integers(40, 400), st.integers(0, 2**31))
def test_bound_is_never_below_the_optimum_even_when_stopped_early(n, k, rows, seed):
    pss = ParentSetScores(_dataset(seed, n, rows), max_parents=k)
    optimum = order_graph.dp(pss).score
    for seconds in (1e-6, 60):
        out = lp_bound(pss, time_limit=seconds)
        assert out["bound"] >= optimum - 1e-6 * abs(optimum)
        assert out["bound"] >= out["lp"] - 1e-6 * abs(optimum)


def test_learn_reports_the_lp_bound_it_used():
    ds = _dataset(3, 24, 2000)            # beyond the exact start
    res = bounded.learn(ds, 2, time_limit=8, random_state=0, bound="lp")
    assert res.stats["bound"] == "lp" and res.stats["lp"]["rounds"] >= 1
    assert res.upper_bound >= res.score
    free = bounded.learn(ds, 2, time_limit=4, max_iter=1, random_state=0, bound="data-free")
    assert free.stats["bound"] == "data-free" and free.stats["lp"] is None
    assert res.upper_bound < free.upper_bound         # the relaxation is the tighter bound
    bdeu = bounded.learn(ds, 2, score="bdeu", time_limit=8, random_state=0, bound="lp")
    assert bdeu.stats["bound"] == "lp" and bdeu.upper_bound >= bdeu.score


def test_auto_uses_the_lp_only_when_its_scoring_fits():
    assert scoring_seconds(24, 2000, 2) < 0.25 * 8 < scoring_seconds(100, 15000, 3)
    res = bounded.learn(_dataset(4, 24, 2000), 2, time_limit=8, max_iter=2, random_state=0)
    assert res.stats["bound"] == "lp"


def test_bad_bound_is_named():
    frame = pd.DataFrame({c: [0, 1, 1, 0] for c in "abcd"})
    with pytest.raises(InputError, match="bound must be one of"):
        bounded.learn(frame, k=1, bound="cuts")
    with pytest.raises(InputError, match="time_limit"):
        lp_bound(ParentSetScores(Dataset.from_pandas(frame), max_parents=1), time_limit=0)
    with pytest.raises(InputError, match="packing must be 2, 3 or 4"):
        lp_bound(ParentSetScores(Dataset.from_pandas(frame), max_parents=1), packing=5)


def test_the_bound_under_required_arcs_holds_the_constrained_optimum():
    """A required class takes the empty family from every other variable, and
    here twins A and B each do best with the other as a parent: every column
    of A the restricted programme starts with holds B, and B's hold A, so the
    cluster {A, B} could not be met (SoPlex reported the programme unsolved).
    Its first columns now hold each variable's fewest parents, a network that
    meets every cut."""
    from twlib.knowledge import Knowledge

    rng = np.random.default_rng(3)
    rows = 400
    cls = rng.integers(0, 2, rows)
    noisy = lambda x, p: np.where(rng.random(rows) < p, 1 - x, x)
    frame = {"C": cls, "A": noisy(cls, 0.3)}
    frame["B"] = noisy(frame["A"], 0.02)
    for i in range(9):
        frame[f"X{i}"] = noisy(cls, 0.4)
    data = Dataset.from_pandas(pd.DataFrame(frame))
    know = Knowledge(required=[("C", v) for v in data.names if v != "C"])
    # unpruned, so that each twin's best columns all hold the other
    pss = ParentSetScores(data, max_parents=3, knowledge=know, prune=False)
    out = lp_bound(pss, time_limit=30)
    assert out["converged"]
    assert out["bound"] >= order_graph.dp(pss).score - 1e-6
