"""Bounded-tree-width learning against the best published learners and BLIP, same data.

Per density table (training split) and bound k: twlib's ``learn.bounded`` BIC
(textbook), seconds to its best network, achieved width and proved gap;
held-out log-likelihood per row on the test split; the published hc-ET and
k-MAX BIC with hc-ET's seconds (Benjumeda et al. 2019, supplement); and, when
``BLIP_JAR`` names a BLIP jar, BLIP's k-MAX run here on the same rows with the
same time (parent-set identification gets that time again, on top), scored with
the same textbook BIC.  twlib's time limit is max(10 s, 2 x hc-ET's seconds);
``s_to_hcET`` is when twlib first held a network scoring at least hc-ET's.

    python benchmarks/bench_bounded.py [--quick] [--tables nltcs plants] [--ks 3 5 7]
        [--save data/results/ch09_bounded.csv]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from peers import run_blip
from twlib.datasets import DENSITY_SETS, load_table
from twlib.learn import bounded
from twlib.scores import network_score

PUBLISHED = (Path(__file__).resolve().parents[1] / "data" / "published"
             / "benjumeda2019_debd_bic.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="nltcs and plants at k = 3 only, 5 s each")
    ap.add_argument("--tables", nargs="+", default=list(DENSITY_SETS))
    ap.add_argument("--ks", nargs="+", type=int, default=[3, 5, 7])
    ap.add_argument("--save", type=Path, help="write the table as CSV")
    args = ap.parse_args()
    tables, ks = (["nltcs", "plants"], [3]) if args.quick else (args.tables, args.ks)
    published = pd.read_csv(PUBLISHED).set_index(["dataset", "method", "bound"])
    rows = []
    for name in tables:
        train, test = load_table(name), load_table(name, split="test")
        blip_dir = Path(tempfile.mkdtemp(prefix=f"blip-{name}-"))
        for k in ks:
            hc = published.loc[(name, "hc-ET", k)]
            kmax = published.loc[(name, "k-MAX", k)]
            limit = 5.0 if args.quick else max(10.0, 2 * float(hc["seconds"]))
            res = bounded.learn(train, k=k, time_limit=limit, random_state=0)
            row = {"data": name, "n": train.n_vars, "N": train.n_rows, "k": k,
                   "twlib_bic": res.score, "twlib_s": res.stats["history"][-1]["seconds"],
                   "s_to_hcET": next((h["seconds"] for h in res.stats["history"]
                                      if h["score"] >= float(hc["bic"])), np.nan),
                   "limit_s": limit, "width": res.width, "gap_pct": res.gap,
                   "test_ll": res.network.log_likelihood(test) / test.n_rows,
                   "hcET_bic": float(hc["bic"]), "hcET_s": float(hc["seconds"]),
                   "kMAX_pub_bic": float(kmax["bic"])}
            blip = run_blip(train, k, limit, workdir=blip_dir)
            if blip is not None:
                row["blip_kMAX_bic"] = network_score(train, blip[0], "bic")
            rows.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1,
                                                float_format=lambda x: f"{x:.1f}"), flush=True)
    table = pd.DataFrame(rows)
    if args.save:
        table.to_csv(args.save, index=False)
    above_hc = int((table.twlib_bic >= table.hcET_bic).sum())
    tail = ""
    if "blip_kMAX_bic" in table:
        above_blip = int((table.twlib_bic >= table.blip_kMAX_bic).sum())
        tail = f", above BLIP k-MAX on {above_blip}/{len(table)}"
    else:
        tail = ", BLIP not run (set BLIP_JAR)"
    print(f"bench_bounded: above hc-ET on {above_hc}/{len(table)}{tail}, "
          f"median gain over hc-ET {np.median(table.twlib_bic - table.hcET_bic):.1f} BIC, "
          f"median gap {np.median(table.gap_pct):.1f} %")


if __name__ == "__main__":
    main()
