"""The exact optimum under a tree-width bound: branch and bound on obstructions
(twlib.learn.exact_width) beside the integer programme (twlib.learn.ilp, SCIP).

Table 1 of Nie et al. (2016): BDeu (ess 1) on the tables as the book prepares them
(median-binarised), k = 4.  Both solvers get the same candidate sets (at most k
parents), the same start (``learn.bounded`` after ``--start-seconds``) and the same
``--time-limit``; each row gives status, score, proved bound, gap and seconds.  The
last line is the headline: how many tables each proves, and the median gap.

    python benchmarks/bench_exact_width.py [--quick] [--time-limit 300] [--k 4]
"""
from __future__ import annotations

import argparse
import statistics
import time

from twlib import datasets
from twlib.learn import bounded, exact_width, ilp
from twlib.scores import ParentSetScores

QUICK = ["nursery", "breast", "adult"]
FULL = ["nursery", "breast", "housing", "adult", "zoo", "letter", "mushroom"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tables", nargs="*")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--start-seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    if args.quick:
        args.time_limit, args.start_seconds = min(args.time_limit, 15.0), 3.0
    names = args.tables or (QUICK if args.quick else FULL)
    print(f"{'data':<10}{'n':>4}{'sets':>8}{'start':>13} | {'obstructions':^36} | "
          f"{'integer programme':^36}")
    print(f"{'':<35} | {'status':<11}{'score':>12}{'gap %':>7}{'s':>6} | "
          f"{'status':<11}{'score':>12}{'gap %':>7}{'s':>6}")
    proved = {"exact_width": 0, "ilp": 0}
    gaps = {"exact_width": [], "ilp": []}
    for name in names:
        data = datasets.load_table(name, preset="nie2016")
        pss = ParentSetScores(data, score="bdeu", ess=1.0, max_parents=args.k)
        start = bounded.learn(data, args.k, score="bdeu", ess=1.0, random_state=0,
                              time_limit=args.start_seconds, bound="data-free")
        cells = []
        for method, solver in (("exact_width", exact_width.solve), ("ilp", ilp.solve)):
            t = time.perf_counter()
            res = solver(pss, k=args.k, time_limit=args.time_limit, start=start.parents)
            seconds = time.perf_counter() - t
            proved[method] += res.status == "optimal"
            gaps[method].append(res.gap_percent)
            cells.append(f"{res.status:<11}{res.score:>12.2f}{res.gap_percent:>7.3f}{seconds:>6.0f}")
        print(f"{name:<10}{pss.n_vars:>4}{len(pss):>8}{start.score:>13.2f} | {cells[0]} | "
              f"{cells[1]}", flush=True)
    print(f"k = {args.k}, {args.time_limit:.0f} s each: obstructions prove "
          f"{proved['exact_width']}/{len(names)} (median gap "
          f"{statistics.median(gaps['exact_width']):.3f} %), the integer programme "
          f"{proved['ilp']}/{len(names)} (median gap {statistics.median(gaps['ilp']):.3f} %)")


if __name__ == "__main__":
    main()
