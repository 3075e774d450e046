"""How twlib.learn.bounded scales with the number of variables, on one machine and on Dask.

For each size n a random network (2-4 states, or binary with ``--binary``;
in-degree <= 3, arcs at most 50 apart in a hidden order) gives 3,000 rows;
``bounded.learn`` runs with tree-width bound k for ``--time-limit`` seconds in
a fresh process.  Printed per run: the seconds until the search is ready and
its phases (the candidate rows: every variable's row of single-parent scores,
n^2 families; the upper bound, which reads them), the first improvement and
the score then and at the limit, restarts run, and the peak resident memory of
the learning process (with ``--dask``, plus each worker's).  Issue 17's
targets: 10,000 variables, first certified improvement within 10 minutes,
under 16 GiB.

``--dask W`` runs each size twice, in one process and through a Dask
LocalCluster of W worker processes (one thread each, twlib loaded in each before
the clock starts, as in a long-lived cluster), and prints the ratio
of the times to a ready search and the two final scores.

    python benchmarks/bench_scale.py [--quick] [--sizes 500,1000,2000] [--k 3] [--binary]
        [--time-limit 60] [--dask 2] [--save data/results/ch09_scale.csv]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import resource
import time

ROWS = 3000


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _warm() -> None:
    """Load twlib and its compiled kernels in a worker, as a long-lived cluster has."""
    import numpy as np

    from twlib.learn import bounded
    from twlib.network import random_network
    data = random_network(8, max_in=2, arities=np.full(8, 2), random_state=0).sample(50)
    bounded.learn(data, 2, time_limit=5, max_iter=2, window=4, random_state=0)


def run(n: int, k: int, time_limit: float, binary: bool, dask_workers: int = 0,
        seed: int = 0) -> dict:
    import numpy as np

    from twlib.learn import bounded
    from twlib.network import random_network

    rng = np.random.default_rng(seed)
    arities = np.full(n, 2) if binary else rng.integers(2, 5, n)
    net = random_network(n, max_in=3, arities=arities, window=50, random_state=seed)
    data = net.sample(ROWS, random_state=seed + 1)
    cluster = client = None
    if dask_workers:
        from distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=dask_workers, threads_per_worker=1,
                               dashboard_address=None)
        client = Client(cluster)
        client.run(_warm)
    try:
        started = time.perf_counter()
        res = bounded.learn(data, k, time_limit=time_limit, random_state=seed,
                            executor=client)
        seconds = time.perf_counter() - started
        workers_gb = sum(client.run(_peak_gb).values()) if client is not None else 0.0
    finally:
        if client is not None:
            client.close()
            cluster.close()
    history = res.stats["history"]            # [start, then improvements]
    first = history[1] if len(history) > 1 else {"seconds": float("nan"), "score": float("nan")}
    phases = res.stats["phases"]
    return {"n": n, "k": k, "binary": binary, "executor": f"dask x{dask_workers}"
            if dask_workers else "in-process",
            "ready_s": history[0]["seconds"], "rows_s": phases["candidate rows"],
            "bound_s": phases["upper bound"], "first_s": first["seconds"],
            "first_score": first["score"], "score": res.score, "seconds": seconds,
            "families": res.stats["families_scored"], "runs": res.stats["runs"],
            "peak_gb": _peak_gb(), "workers_peak_gb": workers_gb}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 300 and 1,000, 10 s each")
    ap.add_argument("--sizes", default=None, help="comma-separated numbers of variables")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--binary", action="store_true", help="binary variables instead of 2-4 states")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--dask", type=int, default=0, metavar="W",
                    help="also run through a Dask LocalCluster of W worker processes")
    ap.add_argument("--save", default=None, help="write the rows to this CSV (Chapter 9 reads it)")
    args = ap.parse_args()
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else [300, 1000] if args.quick else [500, 1000, 2000, 5000, 10000])
    limit = args.time_limit or (10.0 if args.quick else 120.0)
    print(f"{'n':>6s} {'k':>2s} {'states':>6s} {'executor':>10s} {'ready s':>8s} {'rows s':>7s} "
          f"{'bound s':>7s} {'first gain s':>12s} {'score at limit':>14s} {'runs':>4s} "
          f"{'peak GiB':>8s} {'workers GiB':>11s}")
    rows = []
    context = multiprocessing.get_context("spawn")          # a fresh process: its own peak
    for n in sizes:
        for workers in ([0, args.dask] if args.dask else [0]):
            with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
                row = pool.submit(run, n, args.k, limit, args.binary, workers).result()
            rows.append(dict(row, time_limit=limit))
            print(f"{n:6d} {row['k']:2d} {'2' if args.binary else '2-4':>6s} "
                  f"{row['executor']:>10s} {row['ready_s']:8.1f} {row['rows_s']:7.1f} "
                  f"{row['bound_s']:7.1f} {row['first_s']:12.1f} {row['score']:14.1f} "
                  f"{row['runs']:4d} {row['peak_gb']:8.2f} {row['workers_peak_gb']:11.2f}",
                  flush=True)
    if args.save:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.save, index=False)
    last = rows[-1]
    if args.dask:
        here = rows[-2]
        print(f"bench_scale: n = {last['n']:,}, k = {last['k']}: Dask ({args.dask} workers) ready "
              f"after {last['ready_s']:.1f} s vs {here['ready_s']:.1f} s in one process "
              f"(x{here['ready_s'] / last['ready_s']:.2f}); score at {limit:.0f} s "
              f"{last['score']:.1f} vs {here['score']:.1f}")
    else:
        print(f"bench_scale: n = {last['n']:,}, k = {last['k']}: search ready after "
              f"{last['ready_s']:.1f} s, first improvement after {last['first_s']:.1f} s, peak "
              f"memory {last['peak_gb']:.2f} GiB (targets at 10,000: 600 s, 16 GiB)")


if __name__ == "__main__":
    main()
