import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from twlib import Dataset
from twlib import datasets, scores
from twlib.scores import (FamilyScorer, ParentSetScores, local_score, max_parents_bound,
                          network_score)

from . import naive
from .test_information import random_dataset


@pytest.mark.parametrize("score", ["bdeu", "bic"])
def test_local_scores_equal_pgmpy(alarm_5000, score):
    pgmpy = pytest.importorskip("pgmpy.estimators")
    ds = alarm_5000
    data = ds.to_pandas().astype(str)
    state_names = {v: ds.states[i] for i, v in enumerate(ds.names)}
    peer = (pgmpy.BDeu(data, equivalent_sample_size=1.0, state_names=state_names)
            if score == "bdeu" else pgmpy.BIC(data, state_names=state_names))
    rng = np.random.default_rng(0)
    for _ in range(40):
        child = ds.names[rng.integers(ds.n_vars)]
        others = [v for v in ds.names if v != child]
        parents = list(rng.choice(others, size=rng.integers(0, 4), replace=False))
        assert local_score(ds, child, parents, score=score) == pytest.approx(
            peer.local_score(child, parents), abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["bic", "bdeu", "ll"]))
def test_local_score_equals_naive_twin(seed, score):
    ds = random_dataset(seed, n_vars=4, n_rows=120)
    for child in range(4):
        parents = [p for p in range(4) if p != child][: seed % 4]
        assert local_score(ds, child, parents, score=score, ess=2.0) == pytest.approx(
            naive.family_score(ds.values, ds.arities, child, parents, score, ess=2.0), abs=1e-9)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["bic", "bdeu", "ll"]),
       st.integers(2, 40))
def test_single_parent_matrix_equals_family_by_family(seed, score, block_states):
    """The blocked matrix products give, bit for bit, the scores of the per-family kernel
    and of the naive twin, whatever the block size."""
    ds = random_dataset(seed, n_vars=9, n_rows=150, max_arity=5)
    old, scores.PAIR_BLOCK_STATES = scores.PAIR_BLOCK_STATES, block_states
    try:
        matrix = FamilyScorer(ds, score=score, ess=2.0).single_parent_matrix()
    finally:
        scores.PAIR_BLOCK_STATES = old
    fs = FamilyScorer(ds, score=score, ess=2.0)
    for v in range(9):
        assert np.isnan(matrix[v, v])
        for u in range(9):
            if u != v:
                assert matrix[v, u] == fs(v, (u,))
                assert matrix[v, u] == pytest.approx(naive.family_score(
                    ds.values, ds.arities, v, [u], score, ess=2.0), abs=1e-9)


def test_sparse_path_equals_dense_path():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({f"v{j}": rng.integers(0, 12, 60) for j in range(4)})
    ds = Dataset.from_pandas(df)       # 12^4 joint states >> 4 * 1024: sorted-key path
    for score in ("bic", "bdeu"):
        assert local_score(ds, "v0", ["v1", "v2", "v3"], score=score) == pytest.approx(
            naive.family_score(ds.values, ds.arities, 0, [1, 2, 3], score), abs=1e-9)


def test_sum_of_local_scores_is_the_network_score(alarm, alarm_5000):
    pm = alarm.parent_map()
    total = sum(local_score(alarm_5000, v, pm[v], score="bdeu") for v in alarm.variables)
    assert network_score(alarm_5000, pm, score="bdeu") == pytest.approx(total)
    pss = ParentSetScores(alarm_5000, score="bic", max_parents=2, prune=False)
    for v in ["HR", "PVSAT", "LVFAILURE"]:
        if len(pm[v]) <= 2:
            assert pss.score_of(v, pm[v]) == pytest.approx(local_score(alarm_5000, v, pm[v],
                                                                       score="bic"))


@pytest.mark.parametrize("score", ["bic", "bdeu"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_pruning_rule_keeps_the_optimum(score, seed):
    ds = random_dataset(seed, n_vars=5, n_rows=80, max_arity=3)
    full = ParentSetScores(ds, score=score, max_parents=4, prune=False)

    def optimum(pss):
        sets = [[(s, frozenset(ds.index(p) for p in ps)) for ps, s in pss.sets(v)]
                for v in ds.names]
        return naive.best_network_score(sets)

    best = optimum(full)
    for rules in (["size"], ["bound"], ["subset"], True):
        pruned = ParentSetScores(ds, score=score, max_parents=4, prune=rules)
        assert len(pruned) <= len(full)
        assert optimum(pruned) == pytest.approx(best, abs=1e-9)
    assert len(ParentSetScores(ds, score=score, max_parents=4)) < len(full)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 100_000), ess=st.sampled_from([0.1, 1.0, 10.0]))
def test_bdeu_bound_holds_for_every_superset(seed, ess):
    """de Campos & Ji: BDeu(X | T) <= -|J+(S)| log r for every superset T of S."""
    from itertools import combinations
    ds = random_dataset(seed, n_vars=5, n_rows=40, max_arity=3)
    child, others = 0, range(1, 5)
    frame = ds.to_pandas()
    for size in range(4):
        for small in combinations(others, size):
            seen = len(frame.iloc[:, list(small)].drop_duplicates()) if small else 1
            bound = -seen * math.log(ds.arities[child])
            for extra in range(4 - size + 1):
                for more in combinations(sorted(set(others) - set(small)), extra):
                    names = [ds.names[u] for u in (*small, *more)]
                    assert local_score(ds, ds.names[child], names, score="bdeu",
                                       ess=ess) <= bound + 1e-9


def test_bdeu_bound_skips_sets_without_scoring_them():
    ds = datasets.load_table("zoo")
    plain = ParentSetScores(ds, score="bdeu", max_parents=3, prune=["subset"])
    bounded = ParentSetScores(ds, score="bdeu", max_parents=3)
    assert bounded.stats["scored"] < plain.stats["scored"]
    assert bounded.stats["pruned_bound"] > 0


def test_parent_set_scores_equal_local_scores_and_best_queries():
    ds = random_dataset(11, n_vars=5, n_rows=200)
    pss = ParentSetScores(ds, score="bdeu", max_parents=3, prune=False)
    for v in ds.names:
        listed = pss.sets(v)
        assert [s for _, s in listed] == sorted((s for _, s in listed), reverse=True)
        for ps, s in listed[:5]:
            assert s == pytest.approx(local_score(ds, v, list(ps), score="bdeu"))
        cand = [u for u in ds.names if u != v][:2]
        expected = max((s, ps) for ps, s in listed if set(ps) <= set(cand))
        assert pss.best(v, candidates=cand)[0] == pytest.approx(expected[0])


def test_theorem_3_bound():
    assert max_parents_bound(10_000) == math.floor(math.log2(20_000 / math.log2(10_000)))
    ds = random_dataset(0, n_vars=6, n_rows=20)
    assert ParentSetScores(ds, score="bic", max_parents=5).max_parents == max_parents_bound(20)


def test_size_rule_keeps_two_parents_on_three_rows():
    """v = a AND b on three rows: neither parent alone beats no parents, the pair
    does, and floor(log2(2N / log2 N)) = 1 would have pruned it."""
    ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 1], "b": [1, 0, 1], "v": [0, 0, 1]}))
    assert max_parents_bound(3) == 2
    assert ParentSetScores(ds, score="bic", max_parents=2).best("v")[1] == ("a", "b")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 100_000), st.integers(2, 45))
def test_size_rule_never_prunes_an_optimal_family(seed, n_rows):
    """The most parents an optimal BIC family has, found by scoring every set, is
    within the bound, and the pruned candidate lists keep each variable's best."""
    from itertools import combinations
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 3, size=(n_rows, 5)) * (rng.random((n_rows, 5)) < 0.7)
    values[:2] = [[0] * 5, [1] * 5]          # no constant column
    ds = Dataset.from_pandas(pd.DataFrame(values, columns=list("abcde")))
    pruned = ParentSetScores(ds, score="bic", max_parents=4)
    for child in ds.names:
        others = [u for u in ds.names if u != child]
        scored = [(local_score(ds, child, list(ps), score="bic"), -len(ps))
                  for size in range(5) for ps in combinations(others, size)]
        best, fewest = max(scored)
        assert -fewest <= max_parents_bound(n_rows)
        assert pruned.best(child)[0] == pytest.approx(best, abs=1e-9)


def test_score_file_round_trip(tmp_path):
    ds = random_dataset(5, n_vars=4)
    pss = ParentSetScores(ds, score="bic", max_parents=2)
    path = tmp_path / "scores.txt"
    pss.to_file(path)
    back = ParentSetScores.from_file(path)
    assert back.names == pss.names
    for v in ds.names:
        assert back.sets(v) == pss.sets(v)
    lines = path.read_text().splitlines()
    assert lines[0] == "4"


def test_score_file_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("2\na 1\n-3.5 1 b\nb 1\n-2.0 2 a\n")
    with pytest.raises(ValueError, match=r"bad.txt:5: size 2 but 1 parents"):
        ParentSetScores.from_file(path)


def test_bad_score_arguments():
    ds = random_dataset(0)
    with pytest.raises(ValueError, match="unknown score"):
        local_score(ds, "v0", [], score="aic")
    with pytest.raises(ValueError, match="equivalent sample size"):
        ParentSetScores(ds, score="bdeu", ess=0)
    with pytest.raises(ValueError, match="own parent"):
        local_score(ds, "v0", ["v0"])
    with pytest.raises(ValueError, match="unknown pruning"):
        ParentSetScores(ds, prune=["magic"])


def test_parent_set_scores_on_an_executor_equal_the_serial_run():
    from concurrent.futures import ThreadPoolExecutor
    ds = datasets.load_table("zoo")
    serial = ParentSetScores(ds, score="bdeu", max_parents=2)
    with ThreadPoolExecutor(2) as ex:
        spread = ParentSetScores(ds, score="bdeu", max_parents=2, executor=ex)
    assert serial.stats == spread.stats
    for v in ds.names:
        assert serial.sets(v) == spread.sets(v)
