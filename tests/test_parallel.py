"""The parallel parts on executors: same answers as in one process, on threads and on a
Dask cluster of two worker processes; clear errors for executors that cannot work."""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

from twlib.datasets import load_network
from twlib.errors import InputError
from twlib.inference import JunctionTree
from twlib.learn import bounded
from twlib.network import random_network
from twlib.parallel import blocks, run_tasks, task_count, worker_count
from twlib.scores import FamilyScorer


@pytest.fixture(scope="module")
def sample():
    net = random_network(60, max_in=3, arities=np.random.default_rng(3).integers(2, 5, 60),
                         window=20, random_state=3)
    return net.sample(800, random_state=4)


def _learn(data, executor=None):
    return bounded.learn(data, 3, time_limit=600, max_iter=4, restarts_per_round=2,
                         random_state=7, executor=executor)


@pytest.fixture(scope="module")
def in_process(sample):
    return _learn(sample)


@pytest.fixture(scope="module")
def evidence_sets():
    net = load_network("alarm")
    rows = net.sample(300, random_state=5)
    observed = ["HR", "BP", "SAO2", "CO", "PRESS"]
    cols = [rows.names.index(v) for v in observed]
    return net, [{v: int(r[c]) for v, c in zip(observed, cols)} for r in rows.values]


@pytest.mark.parametrize("n,parts", [(0, 3), (1, 3), (7, 3), (7, 10), (12, 4)])
def test_blocks_cover_items_in_order(n, parts):
    got = blocks(range(n), parts)
    assert [x for b in got for x in b] == list(range(n))
    assert len(got) == max(1, min(parts, n))
    assert max(map(len, got)) - min(map(len, got)) <= 1


def test_run_tasks_keeps_task_order_on_threads():
    with ThreadPoolExecutor(2) as ex:
        assert worker_count(ex) == task_count(ex) == 2
        assert run_tasks(ex, divmod, 100, [(7,), (9,), (11,)]) == [(14, 2), (11, 1), (9, 1)]


def test_bad_executors_are_named():
    with pytest.raises(InputError, match="submit"):
        run_tasks(object(), divmod, 1, [(1,)])
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as ex:
        with pytest.raises(InputError, match="spawn"):
            worker_count(ex)


def test_prefetch_on_threads_matches_scoring_here(sample):
    families = [(v, ()) for v in range(sample.n_vars)] + [(0, (1, 2)), (5, (3,))]
    here, there = FamilyScorer(sample), FamilyScorer(sample)
    with ThreadPoolExecutor(2) as ex:
        there.prefetch(families, executor=ex)
    for child, parents in families:
        assert there(child, parents) == here(child, parents)
        np.testing.assert_array_equal(there.growth_row(child, parents),
                                      here.growth_row(child, parents))


def test_restarts_on_threads_match_the_in_process_run(sample, in_process):
    with ThreadPoolExecutor(2) as ex:
        res = _learn(sample, ex)
    assert res.parents == in_process.parents
    assert res.score == in_process.score and res.stats["runs"] == 4


def test_restarts_per_round_is_checked(sample):
    with pytest.raises(InputError, match="restarts_per_round"):
        bounded.learn(sample, 2, time_limit=5, restarts_per_round=0)


def test_posteriors_batch_on_threads_matches(evidence_sets):
    net, sets = evidence_sets
    jt = JunctionTree(net)
    want, want_log = jt.posteriors_batch(sets, chunk=40)
    with ThreadPoolExecutor(2) as ex:
        got, got_log = jt.posteriors_batch(sets, chunk=40, executor=ex)
    np.testing.assert_array_equal(got_log, want_log)
    for v in net.variables:
        np.testing.assert_array_equal(got[v], want[v])
    with ThreadPoolExecutor(2) as ex:
        np.testing.assert_array_equal(
            jt.log_probabilities_of_evidence(sets, chunk=40, executor=ex), want_log)


def test_dask_local_cluster_learns_and_infers(sample, in_process, evidence_sets):
    """Two worker processes: the data scattered once, the same network and posteriors."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert worker_count(client) == 2 and task_count(client.get_executor()) == 8
        res = _learn(sample, client.get_executor())
        assert res.parents == in_process.parents
        assert res.elimination_order == in_process.elimination_order
        assert res.width <= 3
        net, sets = evidence_sets
        jt = JunctionTree(net)
        want, _ = jt.posteriors_batch(sets, chunk=25, variables=["LVFAILURE", "HYPOVOLEMIA"])
        got, _ = jt.posteriors_batch(sets, chunk=25, variables=["LVFAILURE", "HYPOVOLEMIA"],
                                     executor=client)
        for v in want:
            np.testing.assert_array_equal(got[v], want[v])
