"""Bounded-tree-width learning against the best published learners and BLIP, same data.

Per density table (training split) and bound k: twlib's ``learn.bounded`` BIC
(textbook), seconds to its best network, achieved width and proved gap;
held-out log-likelihood per row on the test split; the published hc-ET and
k-MAX BIC with hc-ET's seconds (Benjumeda et al. 2019, supplement); and, when
``BLIP_JAR`` names a BLIP jar, BLIP's k-MAX run here on the same rows with the
same time (parent-set identification gets that time again, on top), scored with
the same textbook BIC.  twlib's time limit is max(10 s, 2 x hc-ET's seconds);
``s_to_hcET`` is when twlib first held a network scoring at least hc-ET's.

``--large``: the DEBD tables of 500+ variables whose training splits the public
snapshot holds -- nips (500 variables; no published hc-ET run) and moviereview
(1,001; hc-ET's published BIC and seconds at k = 3, 5, 7), twlib limited to
hc-ET's own seconds there -- and samples of random networks of 1,000-5,000
variables (3,000 rows, 2-4 states, in-degree <= 3) at k = 3; BLIP k-MAX beside each.
Its headline is the median of twlib's seconds to pass hc-ET as a fraction of
hc-ET's own seconds.

``--seeds``: twlib runs each cell once per random state and prints, per cell,
the worst and best BIC, their spread, and how far the worst falls below the
saved run (``data/results/ch09_bounded.csv``): the run-to-run noise a later
run is judged against.

    python benchmarks/bench_bounded.py [--quick] [--tables nltcs plants] [--ks 3 5 7]
        [--large] [--initial auto k-greedy k-max race] [--seeds 0 1 2]
        [--save data/results/ch09_bounded.csv] [--history PATH]
"""
from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from peers import run_blip
from twlib.datasets import DENSITY_SETS, LARGE_DENSITY_SETS, load_table
from twlib.learn import bounded
from twlib.network import random_network
from twlib.scores import network_score

PUBLISHED = (Path(__file__).resolve().parents[1] / "data" / "published"
             / "benjumeda2019_debd_bic.csv")
SAVED = PUBLISHED.parents[1] / "results" / "ch09_bounded.csv"
LARGE_LIMIT = 120.0          # seconds where no hc-ET run is published
RANDOM_SIZES = (1000, 2000, 5000)
HISTORIES: list = []         # every run's best score against seconds, for --history


def random_table(n: int, seed: int = 0):
    """Training and test rows of a random network of ``n`` variables (as bench_scale)."""
    rng = np.random.default_rng(seed)
    net = random_network(n, max_in=3, arities=rng.integers(2, 5, n), window=50,
                         random_state=seed)
    return net.sample(3000, random_state=seed + 1), net.sample(1000, random_state=seed + 2)


def run_cell(name, train, test, k, limit, published, blip_dir, initial="auto", seed=0) -> dict:
    """twlib (and BLIP k-MAX in ``blip_dir`` when given and BLIP_JAR is set) on one
    table at bound ``k``."""
    res = bounded.learn(train, k=k, time_limit=limit, random_state=seed, initial=initial)
    history = res.stats["history"]
    HISTORIES.extend({"data": name, "k": k, "initial": initial, "seed": seed, **h}
                     for h in history)
    row = {"data": name, "n": train.n_vars, "N": train.n_rows, "k": k, "initial": initial,
           "seed": seed, "twlib_bic": res.score, "twlib_s": history[-1]["seconds"],
           "limit_s": limit, "width": res.width, "gap_pct": res.gap_percent, "bound": res.stats["bound"],
           "test_ll": res.network.log_likelihood(test) / test.n_rows,
           "start_bic": next(h["score"] for h in history if h["event"] == "start")}
    for start, value in (res.stats["race"] or {}).items():
        row[f"race_{start}_bic"] = value           # where each climb of the race got to
    if (name, "hc-ET", k) in published.index:
        hc, kmax = published.loc[(name, "hc-ET", k)], published.loc[(name, "k-MAX", k)]
        row.update(hcET_bic=float(hc["bic"]), hcET_s=float(hc["seconds"]),
                   kMAX_pub_bic=float(kmax["bic"]),
                   s_to_hcET=next((h["seconds"] for h in history
                                   if h["score"] >= float(hc["bic"])), np.nan))
    blip = run_blip(train, k, limit, workdir=blip_dir) if blip_dir is not None else None
    if blip is not None:
        row["blip_kMAX_bic"] = network_score(train, blip[0], score="bic")
    return row


def seed_spread(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the seeds' worst, best and spread of BIC, and the saved run's BIC beside them."""
    spread = table.groupby(["data", "k", "initial"]).twlib_bic.agg(["min", "max"])
    spread["spread"] = spread["max"] - spread["min"]
    saved = pd.read_csv(SAVED).set_index(["data", "k"]).twlib_bic
    spread["saved"] = [saved.get((d, k), np.nan) for d, k, _ in spread.index]
    spread["worst_below_saved"] = spread["saved"] - spread["min"]
    return spread.round(1)


def cells(args, published):
    """(name, train, test, k, limit) for the tables asked for."""
    if args.large:
        tables = (["moviereview"] if args.quick else list(LARGE_DENSITY_SETS)
                  if args.tables is None else args.tables)
        ks = [3] if args.quick else args.ks
        for name in tables:
            train, test = load_table(name), load_table(name, split="test")
            for k in ks:
                hc = (name, "hc-ET", k)
                limit = (20.0 if args.quick else float(published.loc[hc]["seconds"])
                         if hc in published.index else LARGE_LIMIT)
                yield name, train, test, k, limit
        for n in RANDOM_SIZES[:1] if args.quick else args.sizes:
            train, test = random_table(n)
            yield f"random{n}", train, test, 3, 15.0 if args.quick else LARGE_LIMIT
        return
    tables = (["nltcs", "plants"] if args.quick else list(DENSITY_SETS) if args.tables is None
              else args.tables)
    for name in tables:
        train, test = load_table(name), load_table(name, split="test")
        for k in [3] if args.quick else args.ks:
            hc = published.loc[(name, "hc-ET", k)]
            yield name, train, test, k, 5.0 if args.quick else max(10.0, 2 * float(hc["seconds"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="nltcs and plants at k = 3 only, 5 s each (with --large: moviereview "
                         "for 20 s and a 1,000-variable random network for 15 s, k = 3)")
    ap.add_argument("--tables", nargs="*", default=None,
                    help="density tables (default: the seven, or with --large nips and "
                         "moviereview; none: random networks only)")
    ap.add_argument("--sizes", nargs="*", type=int, default=list(RANDOM_SIZES),
                    help="with --large: variables of the random networks")
    ap.add_argument("--ks", nargs="+", type=int, default=[3, 5, 7])
    ap.add_argument("--large", action="store_true",
                    help="nips, moviereview and random networks of 1,000-5,000 variables")
    ap.add_argument("--initial", nargs="+", default=["auto"],
                    choices=list(bounded.INITIALS),
                    help="twlib's starts to run (see bounded.learn's initial)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0],
                    help="twlib's random states; with several, the spread per cell is printed "
                         "beside the saved run (BLIP runs with the first only)")
    ap.add_argument("--save", type=Path, help="write the table as CSV")
    ap.add_argument("--history", type=Path, help="write each run's score against time as CSV")
    args = ap.parse_args()
    published = pd.read_csv(PUBLISHED).set_index(["dataset", "method", "bound"])
    rows = []
    blip_dirs = {}
    for name, train, test, k, limit in cells(args, published):
        blip_dir = blip_dirs.setdefault(name, Path(tempfile.mkdtemp(prefix=f"blip-{name}-")))
        for initial, seed in itertools.product(args.initial, args.seeds):
            first = initial == args.initial[0] and seed == args.seeds[0]
            rows.append(run_cell(name, train, test, k, limit, published,
                                 blip_dir if first else None, initial, seed))
            print(pd.DataFrame([rows[-1]]).to_string(index=False, header=len(rows) == 1,
                                                     float_format=lambda x: f"{x:.1f}"),
                  flush=True)
            if args.save:
                pd.DataFrame(rows).to_csv(args.save, index=False)
            if args.history:
                pd.DataFrame(HISTORIES).to_csv(args.history, index=False)
    table = pd.DataFrame(rows)
    if len(args.seeds) > 1:
        print(seed_spread(table))
    table = table[(table.initial == args.initial[0])          # the headline: the first start
                  & (table.seed == args.seeds[0])]            # and seed
    if "blip_kMAX_bic" in table:
        mine = table.dropna(subset=["blip_kMAX_bic"])
        tail = f", above BLIP k-MAX on {int((mine.twlib_bic >= mine.blip_kMAX_bic).sum())}/" \
               f"{len(mine)}"
    else:
        tail = ", BLIP not run (set BLIP_JAR)"
    pub = table.dropna(subset=["hcET_bic"]) if "hcET_bic" in table else table.iloc[:0]
    above_hc = f"above hc-ET on {int((pub.twlib_bic >= pub.hcET_bic).sum())}/{len(pub)}"
    if args.large:
        fraction = (np.median((pub.s_to_hcET / pub.hcET_s).fillna(np.inf)) if len(pub)
                    else np.nan)                          # never passed: infinite
        print(f"bench_bounded --large: {above_hc}{tail}; median seconds to pass hc-ET "
              f"{fraction:.3f} of hc-ET's own seconds (moviereview)")
    else:
        print(f"bench_bounded: {above_hc}{tail}, median gain over hc-ET "
              f"{np.median(pub.twlib_bic - pub.hcET_bic):.1f} BIC, "
              f"median gap {np.median(table.gap_pct):.1f} %")


if __name__ == "__main__":
    main()
