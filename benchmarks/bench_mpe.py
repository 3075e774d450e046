"""The most probable explanation per evidence set on the bnlearn networks: twlib against toulbar2.

For every bnlearn network of the data folder, evidence sets of 1-5 observed
variables are drawn as in ``bench_inference.py`` (a sampled row, a random
subset revealed).  twlib answers three ways: with its junction tree (built
once per network, its build reported apart) one set per ``mpe`` call and all
sets in one ``mpe_batch``, and by ``MPESearch`` (the AND/OR branch and bound
prepared once per network, its preparation reported apart; a set it has not
proved in a quarter of the time the tree took on its last set goes to the
tree); toulbar2 (``pytoulbar2``, an exact weighted-CSP branch and bound)
reads the network as a UAI file afresh for each set, as it must (it has no
evidence without a fresh problem), assigns the evidence and solves; its
reading is not timed, as twlib's tree is built once.  Printed per network: ms
per set for each, the ratio toulbar2 / twlib for the first path a user reaches
(``JunctionTree(net).mpe(e)``, one set a call) and for the fastest of twlib's
three ways, how many sets the search answered itself, and the largest difference
between twlib's log P(x, e) (of each way) and that of
toulbar2's assignment (toulbar2 rounds costs to integers, so a tie within its
precision may pick another assignment).  toulbar2 stops trying new sets after
60 s on a network and gets 10 s a set.  Target: at least 1x on every network
with equal log-probabilities.

    python benchmarks/bench_mpe.py [--quick] [--sets 100] [--networks alarm,water] [--csv F]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from twlib import datasets
from twlib.factors import as_factor_model
from twlib.inference import JunctionTree, MPESearch
from twlib.io import uai

from bench_inference import evidence_sets

PEER_SECONDS = 60.0          # toulbar2 tries no new set after this long on a network
PEER_SECONDS_PER_SET = 10    # nor spends longer than this on one set
QUICK = ["asia", "child", "insurance", "alarm", "hepar2", "win95pts"]


def toulbar2_mpe(path, net, sets):
    """toulbar2's assignments (state indices, for the sets it tried) and seconds per
    set, the file read afresh for each set but not timed; it stops trying new sets after
    ``PEER_SECONDS`` on a network, and a set it does not prove in
    ``PEER_SECONDS_PER_SET`` counts at that time with no assignment (-1s)."""
    import pytoulbar2

    index = {v: k for k, v in enumerate(net.variables)}
    states, spent, started = [], 0.0, time.perf_counter()
    for evidence in sets:
        if time.perf_counter() - started > PEER_SECONDS:
            break
        cfn = pytoulbar2.CFN(verbose=-1)
        cfn.Read(str(path))                         # not timed, as twlib's tree is built once
        begun = time.perf_counter()
        for v, s in evidence.items():
            cfn.Assign(cfn.VariableIndices[f"x{index[v]}"], net.states(v).index(s))
        found = cfn.Solve(timeLimit=PEER_SECONDS_PER_SET)
        spent += time.perf_counter() - begun
        states.append(list(found[0]) if found else [-1] * len(net.variables))
    return np.array(states), spent / len(states)


def run(name, count, rng, folder):
    net = datasets.load_network(name)
    sets = evidence_sets(net, count, rng)
    row = {"network": name, "n": len(net.variables)}
    started = time.perf_counter()
    tree = JunctionTree(net)
    row["build_s"] = time.perf_counter() - started
    tree.mpe(sets[0])                                  # warm-up (and the prior pass)
    started = time.perf_counter()
    single = [tree.mpe(e).log_value for e in sets]
    row["single_ms"] = 1e3 * (time.perf_counter() - started) / count
    started = time.perf_counter()
    _, batched = tree.mpe_batch(sets)
    row["batched_ms"] = 1e3 * (time.perf_counter() - started) / count
    started = time.perf_counter()
    search = MPESearch(net)
    row["prepare_s"] = time.perf_counter() - started
    search.mpe(sets[0], fallback=tree)                 # warm-up (and the tree's timing)
    started = time.perf_counter()
    searched = [search.mpe(e, fallback=tree) for e in sets]
    row["search_ms"] = 1e3 * (time.perf_counter() - started) / count
    row["searched"] = sum(r.method != "junction tree" for r in searched)
    path = Path(folder) / f"{name}.uai"
    uai.write(path, net)
    theirs, seconds = toulbar2_mpe(path, net, sets)
    row["toulbar2_ms"] = 1e3 * seconds
    answered = (theirs >= 0).all(axis=1)
    row["toulbar2_answered"], row["toulbar2_tried"] = int(answered.sum()), len(theirs)
    their_log_p = as_factor_model(net).log_values(theirs[answered])
    row["diff"] = float(np.max(np.abs(np.array(single)[:len(theirs)][answered] - their_log_p),
                               initial=0.0))
    row["batch_diff"] = float(np.max(np.abs(np.array(single) - batched)))
    row["search_diff"] = float(np.max(np.abs(np.array(single)
                                             - [r.log_value for r in searched])))
    row["ratio"] = row["toulbar2_ms"] / row["single_ms"]
    row["best_ratio"] = row["toulbar2_ms"] / min(row["single_ms"], row["batched_ms"],
                                                 row["search_ms"])
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="six networks, 20 sets each")
    ap.add_argument("--sets", type=int, default=None)
    ap.add_argument("--networks", default=None, help="comma-separated (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--csv", default=None, help="write the table to this CSV file")
    args = ap.parse_args(argv)
    count = args.sets or (20 if args.quick else 100)
    names = (args.networks.split(",") if args.networks
             else QUICK if args.quick else datasets.available_networks())
    rng = np.random.default_rng(args.seed)
    print(f"{'network':12s} {'n':>5s} {'build s':>8s} {'one ms':>8s} {'batch ms':>8s} "
          f"{'search ms':>9s} {'searched':>8s} {'tb2 ms':>8s} {'ratio':>7s} {'best':>7s} "
          f"{'log-p diff':>10s} "
          f"{'tb2 answered':>12s}")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            row = run(name, count, rng, folder)
            rows.append(row)
            print(f"{name:12s} {row['n']:5d} {row['build_s']:8.2f} {row['single_ms']:8.3f} "
                  f"{row['batched_ms']:8.3f} {row['search_ms']:9.3f} {row['searched']:8d} "
                  f"{row['toulbar2_ms']:8.3f} {row['ratio']:6.1f}x {row['best_ratio']:6.1f}x "
                  f"{max(row['diff'], row['search_diff']):10.1e} "
                  f"{row['toulbar2_answered']:5d} of {row['toulbar2_tried']}", flush=True)
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.csv, index=False, float_format="%.6g")
    ratios = [r["ratio"] for r in rows]
    slowest = min(rows, key=lambda r: r["ratio"])
    print(f"bench_mpe ({count} sets a network): twlib (one set per JunctionTree.mpe call) / "
          f"toulbar2 (file reading excluded) speed {min(ratios):.1f}x to "
          f"{max(ratios):.1f}x, median {statistics.median(ratios):.1f}x (slowest: "
          f"{slowest['network']}); networks at least 1x: "
          f"{sum(r >= 1 for r in ratios)} of {len(rows)}; largest log-p difference "
          f"{max(max(r['diff'], r['search_diff']) for r in rows):.1e}")


if __name__ == "__main__":
    main()
