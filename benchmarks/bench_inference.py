"""All-marginals exact inference under many evidence sets: twlib against pyAgrum.

For every bnlearn network of the data folder, evidence sets of 1-5 observed
variables are drawn by sampling a row from the network and revealing a random
subset of it (so every set has positive probability).  Per set, every
variable's posterior is computed by twlib's junction tree one set at a time,
by its batched calibration, and by pyAgrum's LazyPropagation (every posterior
read).  Printed per network: the order's width and table entries beside
pyAgrum's junction tree, ms per set for each, twlib's peak memory while
answering (its tables plus the numpy allocations of a batch, traced by
tracemalloc) and the largest posterior
difference.  A network twlib refuses within ``--memory-gb`` is reported with
the size that did not fit.  Target: twlib at least 2x pyAgrum per set on every
network (the faster of twlib's two ways; the headline gives both), none refused that pyAgrum
answers.

    python benchmarks/bench_inference.py [--quick] [--sets 200] [--networks alarm,munin]
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

from twlib import datasets, interop
from twlib.errors import BudgetExceeded
from twlib.inference import JunctionTree

QUICK = ["asia", "child", "insurance", "alarm", "barley", "hepar2", "win95pts", "pathfinder"]


def evidence_sets(net, count, rng):
    rows = net.sample(count, random_state=rng)
    sets = []
    for row in rows.values:
        k = int(rng.integers(1, 6))
        chosen = rng.choice(len(net.variables), size=k, replace=False)
        sets.append({net.variables[j]: net.states(net.variables[j])[row[j]] for j in chosen})
    return sets


def run(name, count, memory_gb, rng):
    import pyagrum as gum

    net = datasets.load_network(name)
    sets = evidence_sets(net, count, rng)
    bn = interop.to_pyagrum(net)
    ie = gum.LazyPropagation(bn)
    row = {"network": name, "n": len(net.variables),
           "agrum_entries": interop.pyagrum_tree_entries(ie)}
    agrum = None
    if 8 * row["agrum_entries"] <= memory_gb * 2**30:     # else pyAgrum would not fit either
        ie.makeInference()
        t0 = time.perf_counter()
        for e in sets:
            ie.setEvidence(e)
            ie.makeInference()
            agrum = {v: ie.posterior(v).toarray() for v in net.variables}
        row["agrum_ms"] = 1e3 * (time.perf_counter() - t0) / count
    t0 = time.perf_counter()
    try:
        jt = JunctionTree(net, max_memory_gb=memory_gb)
    except BudgetExceeded as exc:
        row["refused"] = str(exc)
        return row
    row["build_s"] = time.perf_counter() - t0
    row["width"], row["entries"] = jt.width, jt.entries
    jt.posteriors(sets[0])                                    # warm-up
    t0 = time.perf_counter()
    single = [jt.posteriors(e) for e in sets]
    row["single_ms"] = 1e3 * (time.perf_counter() - t0) / count
    t0 = time.perf_counter()
    batched, _ = jt.posteriors_batch(sets)
    row["batched_ms"] = 1e3 * (time.perf_counter() - t0) / count
    tracemalloc.start()                       # apart from the timings, which it would slow
    jt.posteriors_batch(sets[:10])
    row["peak_mb"] = (tracemalloc.get_traced_memory()[1] + 8 * jt.entries) / 2**20
    tracemalloc.stop()
    # the last set's pyAgrum answers against twlib's single and batched ones
    row["max_diff"] = max(max(float(np.abs(agrum[v] - single[-1][v]).max()) if agrum else 0.0,
                              float(np.abs(batched[v][-1] - single[-1][v]).max()))
                          for v in net.variables)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="eight networks, 30 sets each")
    ap.add_argument("--sets", type=int, default=None, help="evidence sets per network")
    ap.add_argument("--networks", default=None, help="comma-separated names (default: all)")
    ap.add_argument("--memory-gb", type=float, default=4.0)
    args = ap.parse_args()
    names = (args.networks.split(",") if args.networks
             else QUICK if args.quick else datasets.available_networks())
    count = args.sets or (30 if args.quick else 200)
    rng = np.random.default_rng(0)
    print(f"{'network':10s} {'n':>5s} {'width':>5s} {'entries':>9s} {'pyAgrum':>9s} "
          f"{'single':>9s} {'batched':>9s} {'pyAgrum':>9s} {'ratio':>6s} {'peak MB':>8s} "
          f"{'diff':>7s}\n{'':10s} {'':>5s} {'':>5s} {'':>9s} {'entries':>9s} "
          f"{'ms/set':>9s} {'ms/set':>9s} {'ms/set':>9s}")
    ratios, singles, refused = [], [], []
    for name in names:
        row = run(name, count, args.memory_gb, rng)
        agrum = (f"{row['agrum_ms']:9.3f}" if "agrum_ms" in row
                 else f"{'over ' + str(args.memory_gb) + ' GiB':>16s}")
        if "refused" in row:
            refused.append(name)
            print(f"{name:10s} {row['n']:5d} refused ({row['refused']}); pyAgrum {agrum} on "
                  f"{row['agrum_entries']:.3g} entries", flush=True)
            continue
        best = min(row["single_ms"], row["batched_ms"])
        ratio = f"{row['agrum_ms'] / best:6.2f}" if "agrum_ms" in row else "   n/a"
        if "agrum_ms" in row:
            ratios.append(row["agrum_ms"] / best)
            singles.append(row["agrum_ms"] / row["single_ms"])
        print(f"{name:10s} {row['n']:5d} {row['width']:5d} {row['entries']:9.3g} "
              f"{row['agrum_entries']:9.3g} {row['single_ms']:9.3f} {row['batched_ms']:9.3f} "
              f"{agrum} {ratio} {row['peak_mb']:8.1f} {row['max_diff']:7.1e}", flush=True)
    print(f"bench_inference: {len(ratios)} networks answered, {len(refused)} refused "
          f"{refused or ''}; twlib / pyAgrum speed per set: worst {min(ratios):.2f}x, "
          f"median {statistics.median(ratios):.2f}x (one set per call: worst {min(singles):.2f}x, "
          f"median {statistics.median(singles):.2f}x)")


if __name__ == "__main__":
    main()
