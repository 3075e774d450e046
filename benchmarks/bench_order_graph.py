"""Exact structure learning on Wu's (2010) Table 4.1 data: DP and A* against pomegranate.

For each table (preprocessed as Wu did: variables with more than three states
binarised at the median, missing cells filled at random) this prints n, N, the
time to build the pruned BIC parent-set table, DP time, A* time and expanded
nodes with the simple and the pattern-database heuristic, and the time of
pomegranate's exact learner in the same run (if pomegranate is installed:
`make bench-peers`).  pomegranate optimises its own MDL variant (bits, its own
parameter count), so its optimum is reported but not expected to equal ours.

    python benchmarks/bench_order_graph.py [--quick] [--peer-timeout 120]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import time

import numpy as np

from twlib import datasets
from twlib.learn import order_graph as og
from twlib.scores import ParentSetScores, network_score

QUICK = ["iris", "bupa", "car", "acute", "abalone", "cmc", "wine", "zoo", "voting", "hepatitis"]
FULL = QUICK + ["adult", "crx", "letter", "spect_train", "parkinsons"]


def _pomegranate_worker(jobs, results):
    """Runs in its own process: imports torch once, then learns one structure per job."""
    import torch
    from pomegranate.bayesian_network import _learn_structure

    results.put("ready")
    while (values := jobs.get()) is not None:
        start = time.perf_counter()
        structure = _learn_structure(torch.tensor(values.astype(np.int64)), algorithm="exact")
        results.put((time.perf_counter() - start, [list(p) for p in structure]))


class Peer:
    """pomegranate's exact learner in a worker process, so a slow run can be cut off."""

    def __init__(self):
        try:
            import pomegranate  # noqa: F401
            self.available = True
        except ImportError:
            self.available = False
            return
        ctx = mp.get_context("spawn")
        self.jobs, self.results = ctx.Queue(), ctx.Queue()
        self.proc = ctx.Process(target=_pomegranate_worker, args=(self.jobs, self.results))
        self.proc.start()
        self.results.get(timeout=300)

    def run(self, ds, timeout):
        self.jobs.put(ds.values)
        try:
            seconds, structure = self.results.get(timeout=timeout)
        except queue.Empty:
            self.close()
            return None, f"> {timeout:.0f} s"
        parents = {ds.names[i]: [ds.names[p] for p in ps] for i, ps in enumerate(structure)}
        return seconds, f"{seconds:.2f} s (BIC {network_score(ds, parents, score='bic'):.1f})"

    def close(self):
        if self.available and self.proc.is_alive():
            self.jobs.put(None)
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.terminate()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tables with n <= 20 (under a minute)")
    ap.add_argument("--peer-timeout", type=float, default=None)
    args = ap.parse_args()
    names = QUICK if args.quick else FULL
    timeout = args.peer_timeout or (5 if args.quick else 600)
    header = (f"{'data':12s} {'n':>3s} {'N':>6s} {'scores':>7s} {'DP':>7s} {'A*':>7s} "
              f"{'A*-pd':>7s} {'exp(A*)':>9s} {'exp(pd)':>9s} {'2^n':>9s}  pomegranate")
    print(header)
    last_peer = None          # (table, n, speed-up) of the largest table pomegranate solved
    peer_gave_up = None
    peer = Peer()
    for name in names:
        ds = datasets.load_table(name, preset="wu2010")
        t0 = time.perf_counter()
        pss = ParentSetScores(ds, score="bic", max_parents=ds.n_vars)
        t_scores = time.perf_counter() - t0
        t0 = time.perf_counter()
        d = og.dp(pss)
        t_dp = time.perf_counter() - t0
        t0 = time.perf_counter()
        a = og.astar(pss, heuristic="simple")
        t_a = time.perf_counter() - t0
        t0 = time.perf_counter()
        p = og.astar(pss, heuristic="pd")
        t_p = time.perf_counter() - t0
        assert abs(a.score - d.score) < 1e-6 and abs(p.score - d.score) < 1e-6
        if not peer.available:
            peer_note = "not installed"
        elif peer_gave_up is None:
            peer_s, peer_note = peer.run(ds, timeout)
            if peer_s is not None:
                last_peer = (name, ds.n_vars, peer_s / (t_scores + min(t_dp, t_p)))
            else:
                peer_gave_up = ds.n_vars            # larger tables would only take longer
        else:
            peer_note = f"skipped (timed out at n = {peer_gave_up})"
        print(f"{name:12s} {ds.n_vars:3d} {ds.n_rows:6d} {t_scores:7.2f} {t_dp:7.2f} {t_a:7.2f} "
              f"{t_p:7.2f} {a.stats['expanded']:9d} {p.stats['expanded']:9d} {2 ** ds.n_vars:9d}  "
              f"{peer_note}", flush=True)
    peer.close()
    if last_peer:
        name, n, ratio = last_peer
        beyond = f"; pomegranate timed out from n = {peer_gave_up}" if peer_gave_up else ""
        print(f"bench_order_graph: on {name} (n = {n}, the largest pomegranate solved) twlib "
              f"(scores + fastest exact search) is {ratio:.0f}x faster{beyond}")
    elif peer.available:
        print(f"bench_order_graph: pomegranate timed out on every table ({timeout:.0f} s each); "
              "DP and both A* variants agree on every table")
    else:
        print("bench_order_graph: pomegranate not run (install it with `make bench-peers`); "
              "DP and both A* variants agree on every table")


if __name__ == "__main__":
    main()
