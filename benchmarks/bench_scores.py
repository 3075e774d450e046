"""Time the full parent-set score table of ALARM against pgmpy scoring the same sets.

twlib scores every candidate parent set (size <= 3) of all 37 variables on
10,000 sampled rows; pgmpy scores a random subset of the same (child, parents)
pairs and its time is extrapolated per set.  Targets (issue 2): the whole table
in under 10 s and at least 50x faster than pgmpy per set.

    python benchmarks/bench_scores.py [--quick] [--score bdeu|bic] [--rows 10000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from peers import pgmpy_frame, quiet_import

from twlib import datasets
from twlib.scores import ParentSetScores


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer pgmpy sets (under a minute)")
    ap.add_argument("--score", default="bdeu", choices=["bdeu", "bic"])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--max-parents", type=int, default=3)
    ap.add_argument("--peer-sets", type=int, default=None,
                    help="number of sets pgmpy scores (default 300 quick, 3000 full)")
    args = ap.parse_args()
    peer_sets = args.peer_sets or (300 if args.quick else 3000)

    net = datasets.load_network("alarm")
    ds = net.sample(args.rows, random_state=0)

    t0 = time.perf_counter()
    ParentSetScores(ds.take(np.arange(50)), score=args.score, max_parents=1, prune=False)
    compile_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    pss = ParentSetScores(ds, score=args.score, max_parents=args.max_parents, prune=False)
    twlib_s = time.perf_counter() - t0
    n_sets = pss.stats["scored"]
    print(f"alarm, {args.rows} rows, {args.score}, max {args.max_parents} parents")
    print(f"twlib: {n_sets} parent sets scored in {twlib_s:.2f} s "
          f"({twlib_s / n_sets * 1e6:.2f} us/set; first-call JIT {compile_s:.1f} s)")
    t0 = time.perf_counter()
    pruned = ParentSetScores(ds, score=args.score, max_parents=args.max_parents)
    print(f"twlib with pruning: {len(pruned)} sets kept of {pruned.stats['candidates']} "
          f"in {time.perf_counter() - t0:.2f} s")

    BDeu, BIC = quiet_import("pgmpy.estimators", "BDeu", "BIC")
    frame, state_names = pgmpy_frame(ds)
    peer = (BDeu(frame, equivalent_sample_size=1.0, state_names=state_names)
            if args.score == "bdeu" else BIC(frame, state_names=state_names))
    rng = np.random.default_rng(1)
    picks = []
    for _ in range(peer_sets):
        child = int(rng.integers(ds.n_vars))
        others = [v for v in range(ds.n_vars) if v != child]
        size = int(rng.integers(0, args.max_parents + 1))
        picks.append((ds.names[child], [ds.names[p] for p in rng.choice(others, size, replace=False)]))
    t0 = time.perf_counter()
    theirs = [peer.local_score(c, ps) for c, ps in picks]
    peer_s = time.perf_counter() - t0
    ours = [pss.score_of(c, ps) for c, ps in picks]
    worst = max(abs(a - b) for a, b in zip(ours, theirs))
    per_peer = peer_s / peer_sets
    per_twlib = twlib_s / n_sets
    print(f"pgmpy: {peer_sets} random sets in {peer_s:.2f} s ({per_peer * 1e6:.0f} us/set); "
          f"extrapolated to the full table: {per_peer * n_sets:.0f} s")
    print(f"largest |twlib - pgmpy| over those sets: {worst:.2e}")
    print(f"bench_scores: {n_sets} sets in {twlib_s:.2f} s, {per_peer / per_twlib:.0f}x faster "
          f"than pgmpy per set")


if __name__ == "__main__":
    main()
