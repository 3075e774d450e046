"""How twlib.learn.bounded scales with the number of variables, on one machine.

For each size n a random network (2-4 states, in-degree <= 3, arcs at most 50 apart
in a hidden order) gives 3,000 rows; ``bounded.learn`` runs with tree-width bound
k for ``--time-limit`` seconds in a fresh process.  Printed per run: the seconds
until the search is ready (every variable's row of single-parent gains scored:
n^2 families), to the first improvement it records, the score then and at the
limit, the families scored, and the process's peak resident memory (nan: no
improvement within the time limit).  The last line gives the largest n run,
its time to the first move and its peak memory.  Issue 17's targets: 10,000
variables, first certified improvement within 10 minutes, under 16 GiB.

    python benchmarks/bench_scale.py [--quick] [--sizes 500,1000,2000] [--k 3] [--time-limit 60]
        [--save data/results/ch09_scale.csv]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import resource
import time

ROWS = 3000


def run(n: int, k: int, time_limit: float, seed: int = 0) -> dict:
    import numpy as np

    from twlib.learn import bounded
    from twlib.network import random_network

    rng = np.random.default_rng(seed)
    net = random_network(n, max_in=3, arities=rng.integers(2, 5, n), window=50,
                         random_state=seed)
    data = net.sample(ROWS, random_state=seed + 1)
    started = time.perf_counter()
    res = bounded.learn(data, k, time_limit=time_limit, random_state=seed)
    history = res.stats["history"]            # [start, then improvements]
    first = history[1] if len(history) > 1 else {"seconds": float("nan"), "score": float("nan")}
    return {"n": n, "k": k, "ready_s": history[0]["seconds"], "first_s": first["seconds"],
            "first_score": first["score"],
            "score": res.score, "seconds": time.perf_counter() - started,
            "families": res.stats["families_scored"], "runs": res.stats["runs"],
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 300 and 1,000, 10 s each")
    ap.add_argument("--sizes", default=None, help="comma-separated numbers of variables")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--save", default=None, help="write the rows to this CSV (Chapter 9 reads it)")
    args = ap.parse_args()
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else [300, 1000] if args.quick else [500, 1000, 2000, 5000, 10000])
    limit = args.time_limit or (10.0 if args.quick else 120.0)
    print(f"{'n':>6s} {'k':>2s} {'ready s':>8s} {'first gain s':>12s} {'score then':>14s} "
          f"{'score at limit':>14s} {'families':>11s} {'peak GiB':>8s}")
    rows = []
    context = multiprocessing.get_context("spawn")          # a fresh process: its own peak
    for n in sizes:
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
            row = pool.submit(run, n, args.k, limit).result()
        rows.append(dict(row, time_limit=limit))
        print(f"{n:6d} {row['k']:2d} {row['ready_s']:8.1f} {row['first_s']:12.1f} "
              f"{row['first_score']:14.1f} "
              f"{row['score']:14.1f} {row['families']:11,d} {row['peak_gb']:8.2f}", flush=True)
    if args.save:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.save, index=False)
    last = rows[-1]
    print(f"bench_scale: n = {last['n']:,}, k = {last['k']}: search ready after "
          f"{last['ready_s']:.1f} s, first improvement after {last['first_s']:.1f} s, peak memory "
          f"{last['peak_gb']:.2f} GiB (targets at 10,000: 600 s, 16 GiB)")


if __name__ == "__main__":
    main()
