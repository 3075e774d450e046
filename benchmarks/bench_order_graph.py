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
import time

import numpy as np

from twlib import datasets
from twlib.learn import order_graph as og
from twlib.scores import ParentSetScores, network_score

QUICK = ["iris", "bupa", "car", "acute", "abalone", "cmc", "wine", "zoo", "voting", "hepatitis"]
FULL = QUICK + ["adult", "crx", "letter", "spect_train", "parkinsons"]


def _pomegranate(values, queue):
    import torch
    from pomegranate.bayesian_network import _learn_structure

    start = time.perf_counter()
    structure = _learn_structure(torch.tensor(values.astype(np.int64)), algorithm="exact")
    queue.put((time.perf_counter() - start, [list(p) for p in structure]))


def run_peer(ds, timeout):
    try:
        import pomegranate  # noqa: F401
    except ImportError:
        return None, "not installed"
    queue = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=_pomegranate, args=(ds.values, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.terminate()
        return None, f"> {timeout:.0f} s"
    seconds, structure = queue.get()
    parents = {ds.names[i]: [ds.names[p] for p in ps] for i, ps in enumerate(structure)}
    return seconds, f"{seconds:.2f} s (BIC {network_score(ds, parents, 'bic'):.1f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tables with n <= 20 (under a minute)")
    ap.add_argument("--peer-timeout", type=float, default=None)
    args = ap.parse_args()
    names = QUICK if args.quick else FULL
    timeout = args.peer_timeout or (10 if args.quick else 600)
    available = set(datasets.available_tables())
    header = (f"{'data':12s} {'n':>3s} {'N':>6s} {'scores':>7s} {'DP':>7s} {'A*':>7s} "
              f"{'A*-pd':>7s} {'exp(A*)':>9s} {'exp(pd)':>9s} {'2^n':>9s}  pomegranate")
    print(header)
    speedups = []
    for name in names:
        if name not in available:
            print(f"{name:12s} not available (set TWLIB_DATA)")
            continue
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
        peer_s, peer = run_peer(ds, timeout)
        ours = t_scores + min(t_dp, t_p)
        if peer_s is not None:
            speedups.append(peer_s / ours)
        print(f"{name:12s} {ds.n_vars:3d} {ds.n_rows:6d} {t_scores:7.2f} {t_dp:7.2f} {t_a:7.2f} "
              f"{t_p:7.2f} {a.stats['expanded']:9d} {p.stats['expanded']:9d} {2 ** ds.n_vars:9d}  "
              f"{peer}", flush=True)
    if speedups:
        print(f"bench_order_graph: twlib (scores + best exact search) is "
              f"{np.median(speedups):.0f}x faster than pomegranate's exact learner "
              f"(median over {len(speedups)} tables)")
    else:
        print("bench_order_graph: pomegranate not run (install it with `make bench-peers`); "
              "DP and both A* variants agree on every table")


if __name__ == "__main__":
    main()
