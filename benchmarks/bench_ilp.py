"""Exact learning by integer programming (twlib.learn.ilp, SCIP) beside the order-graph DP.

For each data set and score (BIC, BDeu; in-degree <= 3): n, the number of kept
candidate sets, the ILP's time to the proved optimum, its nodes and root gap,
and the DP's optimum and time in the same run.  Then, with ``--networks``,
10,000-row samples of larger bnlearn networks (in-degree <= 3, BIC) under
``--time-limit``: status, score, bound, gap, seconds.  The last line is the
headline: agreement with the DP, and the median ILP/DP time ratio at n = 15-25.

    python benchmarks/bench_ilp.py [--quick] [--networks alarm barley ...] [--time-limit 600]
"""
from __future__ import annotations

import argparse
import statistics
import time

from twlib import datasets
from twlib.learn import ilp
from twlib.learn import order_graph as og
from twlib.network import random_network
from twlib.scores import ParentSetScores

QUICK = ["asia", "sachs", "child", "zoo", "voting"]
FULL = ["cancer", "earthquake", "survey", "asia", "sachs", "iris", "wine", "adult", "zoo",
        "voting", "letter", "child", "hepatitis", "mushroom", "random25"]


def load(name):
    """Tables as bundled; bnlearn networks and a random 25-variable one as 10,000-row samples."""
    if name in ("iris", "wine"):
        return datasets.load_sklearn(name)
    if name == "random25":
        return random_network(25, random_state=0).sample(10_000, random_state=0)
    if name in datasets.NETWORKS:
        return datasets.load_network(name).sample(10_000, random_state=0)
    return datasets.load_table(name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--networks", nargs="*", default=[])
    parser.add_argument("--time-limit", type=float, default=600.0)
    args = parser.parse_args(argv)
    ratios, agree = [], []
    print(f"{'data':<12}{'score':<6}{'n':>4}{'sets':>8}{'ilp s':>9}{'nodes':>7}"
          f"{'root gap %':>11}{'dp s':>8}{'ratio':>8}{'same':>6}")
    for name in QUICK if args.quick else FULL:
        data = load(name)
        for score in ("bic", "bdeu"):
            pss = ParentSetScores(data, score=score, max_parents=3)
            t = time.perf_counter()
            res = ilp.solve(pss, time_limit=args.time_limit)
            ilp_s = time.perf_counter() - t
            t = time.perf_counter()
            dp = og.dp(pss)
            dp_s = time.perf_counter() - t
            same = res.status == "optimal" and abs(res.score - dp.score) <= 1e-6 * abs(dp.score)
            agree.append(same)
            ratio = ilp_s / max(dp_s, 1e-6)
            if 15 <= pss.n_vars <= 25:
                ratios.append(ratio)
            print(f"{name:<12}{score:<6}{pss.n_vars:>4}{len(pss):>8}{ilp_s:>9.2f}"
                  f"{res.stats['nodes']:>7}{res.stats['root_gap']:>11.3f}{dp_s:>8.2f}"
                  f"{ratio:>8.1f}{str(same):>6}", flush=True)
    proved = []
    for name in args.networks:
        data = datasets.load_network(name).sample(10_000, random_state=0)
        res = ilp.learn(data, max_parents=3, time_limit=args.time_limit)
        proved.append(f"{name} {res.stats['seconds']:.0f} s" if res.status == "optimal"
                      else f"{name} gap {res.gap_percent:.2f} %")
        print(f"{name:<12}{data.n_vars:>4} {res.status} score {res.score:.1f} bound "
              f"{res.upper_bound:.1f} gap {res.gap_percent:.3f} % in {res.stats['seconds']:.1f} s "
              f"(scoring {res.stats['scoring_seconds']:.1f} s), {res.stats['nodes']} nodes",
              flush=True)
    median = statistics.median(ratios) if ratios else float("nan")
    print(f"ILP vs DP: same optimum on {sum(agree)}/{len(agree)} (data, score) pairs; median "
          f"ILP/DP time ratio at n = 15-25: {median:.1f}x"
          + (f"; proved: {', '.join(proved)}" if proved else ""))


if __name__ == "__main__":
    main()
