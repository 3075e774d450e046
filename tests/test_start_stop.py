"""Starting and stopping learners: compile time outside the clock, the first climb
always finished, Ctrl-C keeping the best network, unreadable files refused."""
import gzip
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numba as nb
import numpy as np
import pytest

from twlib import clock, errors
from twlib.cli import INTERRUPTED, main
from twlib.data import Dataset
from twlib.io import bif, dat, text, uai
from twlib.learn import bounded, em, exact_width, ilp, ktree
from twlib.scores import FamilyScorer


def test_compiling_is_not_search_time():
    @nb.njit                      # a fresh kernel, compiled on its first call
    def poly(x):
        total = 0.0
        for i in range(x.shape[0]):
            total += x[i] ** 3 - 2.0 * x[i]
        return total

    wall, search, compiled = time.perf_counter(), clock.now(), clock.compile_seconds()
    poly(np.arange(5.0))
    spent = clock.compile_seconds() - compiled
    assert spent > 0.01
    assert time.perf_counter() - wall - (clock.now() - search) == pytest.approx(spent, abs=1e-3)


def test_first_ctrl_c_requests_a_stop_the_second_raises():
    before = signal.getsignal(signal.SIGINT)        # pytest-xdist's workers ignore SIGINT
    with clock.interruptible():
        with clock.interruptible():                  # nested scopes are one scope
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)                         # the handler runs in this thread
            assert clock.interrupted() and clock.expired(clock.now() + 1e9)
        assert clock.interrupted()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
    assert not clock.interrupted()
    assert signal.getsignal(signal.SIGINT) == before


def _stop_after(seconds):
    timer = threading.Timer(seconds, clock.request_stop)    # what the first Ctrl-C does
    timer.start()
    return timer


def test_bounded_learn_returns_its_best_when_interrupted(alarm_5000):
    bounded.learn(alarm_5000, k=3, time_limit=1, max_iter=1)   # compiled before the timer
    _stop_after(1.5)
    started = time.perf_counter()
    res = bounded.learn(alarm_5000, k=3, time_limit=300, random_state=0)
    assert time.perf_counter() - started < 60
    assert res.status == "interrupted" and res.width <= 3
    assert res.score == pytest.approx(max(h["score"] for h in res.stats["history"]))
    empty = sum(FamilyScorer(alarm_5000)(v, ()) for v in range(alarm_5000.n_vars))
    assert res.score > empty
    assert not clock.interrupted()            # the request ends with the run


def test_first_climb_finishes_however_short_the_limit(alarm_5000):
    res = bounded.learn(alarm_5000, k=2, time_limit=1e-3, random_state=0, bound="data-free")
    empty = sum(FamilyScorer(alarm_5000)(v, ()) for v in range(alarm_5000.n_vars))
    assert res.stats["first_climb_overran"] and res.status == "time_limit"
    assert len(res.network.arcs) > 20 and res.score > empty + 1000
    assert res.stats["compile_seconds"] >= 0


@pytest.mark.parametrize("learner", ["ktree", "em", "exact_width", "ilp"])
def test_every_anytime_learner_stops_on_request(learner, alarm):
    data = alarm.sample(2000, random_state=3)
    _stop_after(2.0)
    started = time.perf_counter()
    if learner == "ktree":
        res = ktree.learn(data, 2, max_iter=10**6, time_limit=600, random_state=0)
    elif learner == "em":
        holes = data.values.astype(np.int64)
        holes[np.random.default_rng(0).random(holes.shape) < 0.2] = -1
        from twlib.data import IncompleteDataset
        res = em.structural_em(IncompleteDataset(holes, data.names, data.states), 2,
                               time_limit=600, max_iter=10**6, random_state=0)
    elif learner == "exact_width":
        small = Dataset(data.values[:, :18], data.names[:18], data.states[:18])
        res = exact_width.learn(small, 2, time_limit=600, start=None)
    else:
        res = ilp.learn(data, max_parents=2, time_limit=600)
    assert time.perf_counter() - started < 120
    assert res.status in ("interrupted", "optimal")   # a fast proof may beat the request
    assert res.width is None or res.width <= 2


@pytest.fixture(scope="module")
def alarm_csv(tmp_path_factory, alarm):
    path = tmp_path_factory.mktemp("cli") / "alarm.csv"
    alarm.sample(2000, random_state=0).to_pandas().to_csv(path, index=False)
    return path


def test_ctrl_c_in_the_cli_writes_the_best_network(alarm_csv, tmp_path):
    out = tmp_path / "o.bif"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "twlib", "learn", str(alarm_csv), "-k", "3",
                             "--time-limit", "300", "--progress", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen = b""
    while b"bounded learning" not in seen:       # the search has begun: its bar is drawn
        chunk = os.read(proc.stderr.fileno(), 4096)
        assert chunk, "the learner ended before its search began"
        seen += chunk
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    stdout, rest = proc.communicate(timeout=120)
    stdout, stderr = stdout.decode(), (seen + rest).decode()
    assert proc.returncode == INTERRUPTED, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr and str(out) in stderr
    net = bif.read(out)
    assert len(net.arcs) > 0 and "tree-width <= " in stdout


@pytest.mark.parametrize("case, content, message", [
    ("binary", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "binary file"),
    ("latin-1", "a,b\ncaf\xe9,x\nthé,y\n".encode("latin-1"), "not utf-8 text: byte 0xe9"),
    ("empty", b"", "empty"),
    ("blank", b"\n \n", "empty"),
    ("header only", b"a,b,c\n", "header (3 columns) but no rows"),
    ("ragged", b"a,b,c\n1,2,3\n4,5\n", ":3: 2 fields where the header has 3"),
    ("too long", b"a,b\n1,2\n3,4,5\n", ":3: 3 fields where the header has 2"),
])
def test_unreadable_data_files_are_named_errors(tmp_path, capsys, case, content, message):
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    with pytest.raises(errors.FormatError, match=re.escape(message)):
        Dataset.from_csv(path)
    assert main(["learn", str(path), "-k", "1", "--out", str(tmp_path / "o.bif")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert main(["score", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_every_reader_refuses_binary_and_foreign_text(tmp_path):
    for reader, suffix in [(bif.read, ".bif"), (uai.read, ".uai"), (dat.read, ".dat"),
                           (uai.read_evidence, ".evid")]:
        path = tmp_path / f"x{suffix}"
        path.write_bytes(b"\0\1\2binary")
        with pytest.raises(errors.FormatError, match="binary file"):
            reader(path)
        path.write_bytes("network caf\xe9 {}".encode("cp1252"))
        with pytest.raises(errors.FormatError, match="not utf-8 text"):
            reader(path)
        path.write_bytes(b"")
        with pytest.raises(errors.FormatError, match="empty"):
            reader(path)
    broken = tmp_path / "y.csv.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(errors.FormatError, match="not a readable gzip file"):
        text.read_text(broken)
    packed = tmp_path / "z.csv.gz"
    packed.write_bytes(gzip.compress(b"a,b\n0,1\n1,0\n"))
    assert text.read_table(packed).shape == (2, 2)
    assert text.read_table(packed, encoding="latin-1").shape == (2, 2)
    with pytest.raises(errors.FormatError, match="unknown text encoding"):
        text.read_table(packed, encoding="no-such-codec")
    header_only = tmp_path / "h.dat"
    header_only.write_text("a b\n2 2\n")
    with pytest.raises(errors.FormatError, match="a .dat file needs"):
        dat.read(header_only)


@pytest.mark.parametrize("threads", [False, True])
def test_bootstrap_keeps_a_time_limit_for_the_whole_call(alarm, threads):
    from concurrent.futures import ThreadPoolExecutor

    from twlib.learn import bootstrap

    data = alarm.sample(2000, random_state=3)
    bootstrap(data, 2, n_resamples=1, max_iter=1, random_state=0)      # kernels compiled
    executor = ThreadPoolExecutor(2) if threads else None
    started = clock.now() if not threads else time.perf_counter()
    boot = bootstrap(data, 2, n_resamples=40, max_iter=None, resample_time_limit=0.5,
                     time_limit=2.0, random_state=0, executor=executor)
    took = (clock.now() if not threads else time.perf_counter()) - started
    if executor is not None:
        executor.shutdown()
    assert 1 <= boot.n_resamples < 40 and boot.stats["time_limit_reached"]
    assert took <= 2.0 + clock.overrun_allowance(2.0)
    assert boot.counts.max() <= boot.n_resamples
    whole = bootstrap(data, 2, n_resamples=2, max_iter=1, time_limit=600.0, random_state=0)
    assert whole.n_resamples == 2 and not whole.stats["time_limit_reached"]
    with pytest.raises(errors.InputError, match="time_limit"):
        bootstrap(data, 2, n_resamples=3, time_limit=0)


def test_bootstrap_counts_arcs_and_keeps_the_width(alarm):
    from twlib.learn import bootstrap
    from twlib.learn.resampling import averaged_structure

    data = alarm.sample(1000, random_state=5)
    boot = bootstrap(data, 2, n_resamples=6, random_state=1)
    again = bootstrap(data, 2, n_resamples=6, random_state=1)
    assert np.array_equal(boot.counts, again.counts)
    assert boot.counts.max() <= 6 and not np.diag(boot.counts).any()
    assert ((boot.counts + boot.counts.T) <= 6).all()          # one direction per resample
    arcs = boot.arcs
    assert arcs.strength.between(0, 1).all() and arcs.direction.between(0, 1).all()
    assert list(arcs.strength) == sorted(arcs.strength, reverse=True)
    strong = arcs[arcs.in_network]
    assert (strong.strength >= 0.5).all()
    assert set(zip(strong["from"], strong["to"])) == set(boot.network.arcs)
    from twlib.graphs import elimination_width, moral_graph
    moral = moral_graph(boot.network.parent_map())
    moral.add_nodes_from(data.names)
    assert elimination_width(moral, boot.elimination_order) == boot.width <= 2
    looser = boot.averaged(0.2)
    assert set(boot.network.arcs) <= set(looser.network.arcs) or looser.width == 2
    everything = averaged_structure(np.ones((4, 4), int) - np.eye(4, dtype=int), 1,
                                    list("abcd"), 1, 0.0)
    assert everything[2] == 1                                  # a tree: width 1 kept
    with pytest.raises(errors.InputError, match="threshold"):
        boot.averaged(1.5)
    with pytest.raises(errors.InputError, match="n_resamples"):
        bootstrap(data, 2, n_resamples=0)


def test_bootstrap_on_a_dask_cluster_counts_the_same(alarm):
    distributed = pytest.importorskip("distributed")
    from twlib.learn import bootstrap

    data = alarm.sample(800, random_state=6)
    here = bootstrap(data, 2, n_resamples=4, random_state=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        there = bootstrap(data, 2, n_resamples=4, random_state=3, executor=client)
    assert np.array_equal(here.counts, there.counts)
    assert here.arcs.equals(there.arcs)


def test_cli_bootstrap_writes_the_arc_table(alarm_csv, tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "o.bif"
    assert main(["learn", str(alarm_csv), "-k", "2", "--time-limit", "2", "--seed", "0",
                 "--bootstrap", "3", "--out", str(out)]) == 0
    table = pd.read_csv(tmp_path / "o.arcs.csv")
    assert list(table.columns) == ["from", "to", "strength", "direction", "in_network"]
    assert "arcs seen over 3 resamples" in capsys.readouterr().out


def test_a_first_climb_on_1500_variables_is_cut_at_the_limit_plus_the_allowance():
    from twlib.network import random_network

    data = random_network(1500, max_in=3, window=30, random_state=0).sample(1200, random_state=0)
    small = Dataset(data.values[:, :30], data.names[:30], data.states[:30])
    bounded.learn(small, k=3, time_limit=1, max_iter=1)       # kernels compiled first
    started = clock.now()
    res = bounded.learn(data, k=3, time_limit=5, random_state=0)
    assert clock.now() - started <= 5 + clock.overrun_allowance(5)
    assert res.stats["first_climb_overran"] and res.status == "time_limit"
    empty = sum(FamilyScorer(data)(v, ()) for v in range(data.n_vars))
    assert res.width <= 3 and res.score > empty + 10_000      # the cut climb kept its moves


def _reference_averaged(counts, n_resamples, names, k, threshold):
    """The averaged structure the plain way: rebuild the moral graph for every arc."""
    from twlib.graphs import find_cycle, moral_graph, treewidth_upper_bound

    n = len(names)
    chosen = sorted((-(counts[u, v] + counts[v, u]), -abs(int(counts[u, v]) - int(counts[v, u])),
                     *((u, v) if counts[u, v] >= counts[v, u] else (v, u)))
                    for u in range(n) for v in range(u + 1, n) if counts[u, v] + counts[v, u])
    parents = {name: [] for name in names}
    for neg_total, _, parent, child in chosen:
        if -neg_total < threshold * n_resamples:
            break
        trial = {v: list(ps) for v, ps in parents.items()}
        trial[names[child]].append(names[parent])
        if find_cycle(trial) is not None:
            continue
        moral = moral_graph(trial)
        moral.add_nodes_from(names)
        if treewidth_upper_bound(moral)[0] <= k:
            parents = trial
    return parents


@pytest.mark.parametrize("seed", range(6))
def test_averaged_structure_is_acyclic_certified_and_the_plain_one_when_width_is_free(seed):
    from twlib.graphs import elimination_width, find_cycle, moral_graph
    from twlib.learn.resampling import averaged_structure

    rng = np.random.default_rng(seed)
    n, resamples = 12, 10
    counts = rng.integers(0, 6, size=(n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(counts, 0)
    names = [f"x{i}" for i in range(n)]
    for k in (1, 2, 3, n - 1):
        parents, order, width = averaged_structure(counts, resamples, names, k, 0.3)
        assert find_cycle(parents) is None
        moral = moral_graph(parents)
        moral.add_nodes_from(names)
        assert elimination_width(moral, order) == width <= k
        for v, ps in parents.items():
            for u in ps:
                a, b = names.index(u), names.index(v)
                assert counts[a, b] + counts[b, a] >= 0.3 * resamples
                assert counts[a, b] >= counts[b, a]
        if k == n - 1:                  # no width bound binds: only cycles refuse an arc
            assert parents == _reference_averaged(counts, resamples, names, k, 0.3)
