"""Exact learning by integer programming (twlib.learn.ilp, SCIP) beside the order-graph DP.

For each data set: n, the number of kept candidate sets, the time to the proved
optimum, branch-and-bound nodes, the root gap, and the DP's optimum and time in
the same run (where the DP fits in memory).  Then, with ``--networks``, 10,000-row
samples of bnlearn networks (in-degree <= 3, BIC) under ``--time-limit``: status,
score, bound and gap.  The last line is the headline.

    python benchmarks/bench_ilp.py [--quick] [--networks alarm ...] [--time-limit 600]
"""
from __future__ import annotations

import argparse
import time

from twlib import datasets
from twlib.learn import ilp
from twlib.learn import order_graph as og
from twlib.scores import ParentSetScores

QUICK = ["iris", "wine", "zoo", "voting"]
FULL = QUICK + ["hepatitis", "letter", "adult"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--networks", nargs="*", default=[])
    parser.add_argument("--time-limit", type=float, default=600.0)
    args = parser.parse_args(argv)
    ratios, agree = [], []
    print(f"{'data':<12}{'n':>4}{'sets':>7}{'ilp s':>9}{'nodes':>7}{'root gap %':>11}"
          f"{'dp s':>8}{'same':>6}")
    for name in QUICK if args.quick else FULL:
        data = datasets.load_sklearn(name) if name in ("iris", "wine") else \
            datasets.load_table(name)
        pss = ParentSetScores(data, score="bic", max_parents=3)
        t = time.perf_counter()
        res = ilp.solve(pss, time_limit=args.time_limit)
        ilp_s = time.perf_counter() - t
        t = time.perf_counter()
        dp = og.dp(pss)
        dp_s = time.perf_counter() - t
        same = abs(res.score - dp.score) <= 1e-6 * abs(dp.score)
        ratios.append(ilp_s / max(dp_s, 1e-6))
        agree.append(same)
        print(f"{name:<12}{pss.n_vars:>4}{len(pss):>7}{ilp_s:>9.2f}{res.stats['nodes']:>7}"
              f"{res.stats['root_gap']:>11.3f}{dp_s:>8.2f}{str(same):>6}", flush=True)
    for name in args.networks:
        data = datasets.load_network(name).sample(10_000, random_state=0)
        res = ilp.learn(data, max_parents=3, time_limit=args.time_limit)
        print(f"{name:<12}{data.n_vars:>4} {res.status} score {res.score:.1f} bound "
              f"{res.upper_bound:.1f} gap {res.gap:.3f} % in {res.stats['seconds']:.1f} s, "
              f"{res.stats['nodes']} nodes", flush=True)
    ratios.sort()
    print(f"ILP vs DP: same optimum on {sum(agree)}/{len(agree)} tables; median time ratio "
          f"ILP/DP {ratios[len(ratios) // 2]:.1f}x")


if __name__ == "__main__":
    main()
