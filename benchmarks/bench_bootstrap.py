"""Arc confidence by the bootstrap: twlib against pgmpy's hill climbing on the same resamples.

pgmpy has no bootstrap of its own; its users loop ``HillClimbSearch`` over
resamples, which is what the peer column does here (BIC, in-degree <= k, the
same resamples drawn with the same seeds).  On 5,000 rows sampled from CHILD
(seed 0), k = 3: seconds per resample, the averaged networks (strength >= 0.5)
against the true network (SHD between the patterns) and the share of true arcs
whose strength reaches 0.5.  twlib runs all ``--resamples`` (200 by default) on
two spawned worker processes, the peer the first ``--peer-resamples`` of them in
this process.  Without ``--quick``, the in-process and the Dask LocalCluster
frequencies are compared too.

    python benchmarks/bench_bootstrap.py [--quick] [--resamples 200] [--peer-resamples 20]
"""
from __future__ import annotations

import argparse
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from twlib.data import Dataset
from twlib.datasets import load_network
from twlib.graphs import structural_hamming_distance
from twlib.learn import bootstrap
from twlib.learn.resampling import averaged_structure


def pgmpy_counts(data: Dataset, k: int, seeds) -> tuple[np.ndarray, float]:
    """Arc counts of pgmpy's HillClimbSearch over the resamples ``seeds`` draw, and seconds."""
    from pgmpy.estimators import HillClimbSearch

    index = {name: i for i, name in enumerate(data.names)}
    counts = np.zeros((data.n_vars, data.n_vars), dtype=np.int64)
    frame = data.to_pandas().astype(str)
    started = time.perf_counter()
    for seed in seeds:
        rows = np.random.default_rng(int(seed)).integers(data.n_rows, size=data.n_rows)
        dag = HillClimbSearch(frame.iloc[rows].reset_index(drop=True)).estimate(
            scoring_method="bic-d", max_indegree=k, show_progress=False)
        for u, v in dag.edges:
            counts[index[u], index[v]] += 1
    return counts, time.perf_counter() - started


def summary(name, counts, n_resamples, truth, names, k, seconds) -> dict:
    parents, _, width = averaged_structure(counts, n_resamples, names, k, 0.5)
    strength = (counts + counts.T) / n_resamples
    index = {v: i for i, v in enumerate(names)}
    true_arcs = [(index[p], index[v]) for v, ps in truth.items() for p in ps]
    return {"learner": name, "resamples": n_resamples, "s_per_resample": seconds / n_resamples,
            "averaged_arcs": sum(len(ps) for ps in parents.values()), "width": width,
            "shd_to_truth": structural_hamming_distance(truth, parents),
            "true_arcs_found": float(np.mean([strength[a] >= 0.5 for a in true_arcs]))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--peer-resamples", type=int, default=20)
    ap.add_argument("-k", type=int, default=3)
    args = ap.parse_args(argv)
    resamples = 20 if args.quick else args.resamples
    peer_resamples = 4 if args.quick else args.peer_resamples
    child = load_network("child")
    data = child.sample(5000, random_state=0)
    truth = child.parent_map()
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    bootstrap(data, args.k, n_resamples=2, random_state=1, executor=pool)   # workers warmed
    started = time.perf_counter()
    ours = bootstrap(data, args.k, n_resamples=resamples, random_state=0, executor=pool)
    seconds = time.perf_counter() - started
    pool.shutdown()
    print(f"twlib: {resamples} resamples of 5,000 CHILD rows at k = {args.k} in {seconds:.1f} s "
          f"(2 worker processes)")
    rows = [summary("twlib bounded", ours.counts, resamples, truth, data.names, args.k,
                    seconds)]
    seeds = np.random.SeedSequence(0).generate_state(peer_resamples, dtype=np.uint64)
    theirs, peer_seconds = pgmpy_counts(data, args.k, seeds)
    rows.append(summary("pgmpy HillClimbSearch", theirs, peer_resamples, truth, data.names,
                        len(data.names) - 1, peer_seconds))
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    same = ""
    if not args.quick:
        from distributed import Client, LocalCluster
        here = bootstrap(data, args.k, n_resamples=8, random_state=7)
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            there = bootstrap(data, args.k, n_resamples=8, random_state=7, executor=client)
        same = f"; Dask counts identical: {bool(np.array_equal(here.counts, there.counts))}"
    ratio = rows[1]["s_per_resample"] / rows[0]["s_per_resample"]
    print(f"bootstrap, CHILD 5,000 rows, k = {args.k}: {resamples} resamples in {seconds:.1f} s "
          f"(target 120 s for 200); {ratio:.1f}x pgmpy's seconds per resample on two workers "
          f"against its one process ({ratio / 2:.1f}x per core); averaged SHD "
          f"{rows[0]['shd_to_truth']} vs pgmpy's {rows[1]['shd_to_truth']}{same}")


if __name__ == "__main__":
    main()
