"""How far learn.bounded's networks are from the best possible: proved gaps on the density tables.

For each density table and bound k, the network is the saved seven-table run
(``data/results/ch09_bounded.csv``, twlib's BIC).  Its gap is taken to the
tightest proved upper bound that fits the budget:

* ``exact start``: the order-graph optimum over in-degree <= k (up to 20 variables);
* ``lp``: the LP relaxation of the integer programme over every parent set of
  at most k parents (``learn.ilp.relaxation.lp_bound``), when scoring those sets is
  estimated to take at most ``--seconds``; the relaxation then gets ``--lp-seconds``;
* ``data-free``: ``learn.bounded.upper_bound``, always.

No other learner certifies its networks under a tree-width bound, so there is
no peer column; the data-free bound is the baseline.  The headline is the
median gap over the cells and how many cells each bound served.

    python benchmarks/bench_gap.py [--quick] [--seconds 240] [--lp-seconds 150]
        [--tables nltcs plants]
        [--ks 3 5 7] [--save data/results/ch09_gap.csv] [--history PATH]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from twlib.datasets import DENSITY_SETS, load_table
from twlib.learn import bounded, order_graph
from twlib.learn.ilp.relaxation import lp_bound, scoring_seconds
from twlib.scores import FamilyScorer, ParentSetScores

SAVED = Path(__file__).resolve().parents[1] / "data" / "results" / "ch09_bounded.csv"


def gap(bound: float, score: float) -> float:
    return 100.0 * max(bound - score, 0.0) / abs(score)


def run_cell(name, data, k, score, seconds, lp_seconds, histories) -> dict:
    bounds = {"data-free": bounded.upper_bound(FamilyScorer(data), k)}
    row = {"data": name, "n": data.n_vars, "k": k, "twlib_bic": score,
           "data_free_gap_pct": gap(bounds["data-free"], score),
           "scoring_estimate_s": scoring_seconds(data.n_vars, data.n_rows, k)}
    if row["scoring_estimate_s"] <= seconds:
        started = time.perf_counter()
        pss = ParentSetScores(data, score="bic", max_parents=k)
        row["scoring_s"] = time.perf_counter() - started
        if data.n_vars <= bounded.DP_MAX_VARS:
            bounds["exact start"] = order_graph.dp(pss).score
        out = lp_bound(pss, time_limit=lp_seconds)
        bounds["lp"] = out["bound"]
        row.update(lp_s=out["seconds"], lp_converged=out["converged"], lp_columns=out["columns"],
                   lp_candidates=out["candidates"], lp_cuts=out["cuts"],
                   lp_gap_pct=gap(out["bound"], score))
        histories.extend({"data": name, "k": k, **h} for h in out["history"])
    used = min(bounds, key=bounds.get)
    row.update(bound=used, upper_bound=bounds[used], gap_pct=gap(bounds[used], score))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="nltcs at k = 3, 5, 7 (LP 10 s)")
    parser.add_argument("--seconds", type=float, default=240.0,
                        help="the largest estimated seconds of scoring the parent sets")
    parser.add_argument("--lp-seconds", type=float, default=None,
                        help="seconds for the LP once scored (default: --seconds)")
    parser.add_argument("--tables", nargs="*", default=None)
    parser.add_argument("--ks", nargs="*", type=int, default=[3, 5, 7])
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--history", type=Path, default=None,
                        help="write the LP bound against seconds per cell here")
    args = parser.parse_args()
    saved = pd.read_csv(SAVED).set_index(["data", "k"])
    tables = ["nltcs"] if args.quick else (args.tables or list(DENSITY_SETS))
    seconds = 10.0 if args.quick else args.seconds
    rows, histories = [], []
    for name in tables:
        data = load_table(name)
        for k in args.ks:
            rows.append(run_cell(name, data, k, float(saved.loc[(name, k), "twlib_bic"]),
                                 seconds, args.lp_seconds or seconds, histories))
            print(pd.DataFrame([rows[-1]]).round(3).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    if args.save:
        table.to_csv(args.save, index=False)
    if args.history:
        pd.DataFrame(histories).to_csv(args.history, index=False)
    used = ", ".join(f"{kind} {count}" for kind, count in table.bound.value_counts().items())
    print(f"bench_gap: median proved gap {table.gap_pct.median():.2f} % over {len(table)} cells "
          f"(bound used: {used}); data-free bound alone {table.data_free_gap_pct.median():.2f} %")


if __name__ == "__main__":
    main()
