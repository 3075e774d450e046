"""Exact MAR and MAP on the UAI 2014 instances, against the competition's reference solutions.

For each instance: the width and table entries of a plain min-fill order beside
those of the order twlib's junction tree builds by default
(``graphs.elimination_order(method="auto")``: the least total size among greedy
heuristics, jittered restarts and spectral sweeps), the seconds to build the
tree and answer, and the largest absolute difference from the competition's
``.MAR`` reference (given to six digits).  An instance whose tree does not fit
``--memory-gb`` (the competition's 4 GiB by default) is reported with the size
that did not fit.

``--task MAP``: the most probable assignment (max-product on the same tree) of
every instance with a MAP reference, its log-value (the log of the product of
the model's factors, unnormalised, as the competition scores it) beside the
reference assignment's: ``equal`` within 1e-6, ``better`` where the reference
(found by subproblem-tree calibration, an approximate method) is not optimal;
``worse`` would be a bug.  ``--folder`` reads every ``*.uai`` with its
``.evid`` and ``.MAP`` from a folder instead, such as ``uai2014/MAP`` of the
public mroavi/uai repository (120 instances, 84 of them in its snapshot; the
data folder holds the ones that fit 4 GiB and one that does not).

    python benchmarks/bench_uai.py [--quick] [--memory-gb 4] [--instances Grids_11,...]
    python benchmarks/bench_uai.py --task MAP [--quick] [--folder uai2014/MAP]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from twlib import datasets, graphs, metrics
from twlib.errors import BudgetExceeded
from twlib.inference import JunctionTree
from twlib.io import uai

QUICK = ["Grids_11", "Grids_12", "Grids_13", "Grids_14", "CSP_12", "Segmentation_11",
         "ObjectDetection_11", "DBN_11"]
REFERENCE_DIGITS = 1e-5                # the .MAR files round to six digits


MAP_QUICK = ["Grids_11", "Grids_26", "Promedas_70", "CSP_12", "DBN_11", "Segmentation_11",
             "ObjectDetection_11"]
MAP_TOLERANCE = 1e-6


def map_instances(args):
    """``(name, model, evidence, reference states)`` of the MAP task, lazily."""
    if args.folder:
        paths = sorted(Path(args.folder).glob("*.uai"))
        wanted = set(args.instances.split(",")) if args.instances else None
        for path in paths:
            name = path.name[:-len(".uai")]
            if (wanted is None or name in wanted) and path.stat().st_size > 0:
                yield (name, uai.read(path), uai.read_evidence(str(path) + ".evid"),
                       uai.read_map(str(path) + ".MAP"))
        return
    names = (args.instances.split(",") if args.instances
             else MAP_QUICK if args.quick else datasets.available_uai(task="MAP"))
    for name in names:
        inst = datasets.load_uai(name)
        yield name, inst.model, inst.evidence, inst.map_state


def main_map(args):
    print(f"{'instance':20s} {'n':>5s} {'width':>5s} {'entries':>9s} {'seconds':>8s} "
          f"{'twlib log-value':>16s} {'reference':>16s} {'verdict':>8s}")
    verdicts, refused, total, rows = {"equal": [], "better": [], "worse": []}, [], 0, []
    for name, model, evidence, reference in map_instances(args):
        total += 1
        start = time.perf_counter()
        try:
            tree = JunctionTree(model, max_memory_gb=args.memory_gb)
            best, _ = tree.mpe(evidence)
        except BudgetExceeded as exc:
            refused.append(name)
            rows.append({"instance": name, "n": len(model.variables), "verdict": "refused",
                         "note": str(exc)})
            print(f"{name:20s} {len(model.variables):5d} refused: {exc}", flush=True)
            continue
        seconds = time.perf_counter() - start
        ours, theirs = model.log_values(np.array([[model.states(v).index(best[v])
                                                   for v in model.variables], reference]))
        verdict = ("equal" if abs(ours - theirs) <= MAP_TOLERANCE * max(1.0, abs(theirs))
                   else "better" if ours > theirs else "worse")
        verdicts[verdict].append(name)
        rows.append({"instance": name, "n": len(model.variables), "width": tree.width,
                     "entries": tree.entries, "seconds": round(seconds, 2), "twlib": ours,
                     "reference": theirs, "verdict": verdict})
        print(f"{name:20s} {len(model.variables):5d} {tree.width:5d} {tree.entries:9.3g} "
              f"{seconds:8.2f} {ours:16.6f} {theirs:16.6f} {verdict:>8s}", flush=True)
    print(f"bench_uai MAP: {total} instances; {len(verdicts['equal'])} equal to the reference, "
          f"{len(verdicts['better'])} better {verdicts['better'] or ''}, "
          f"{len(verdicts['worse'])} worse, {len(refused)} refused over {args.memory_gb} GiB")
    if args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the Grids and one of each other family")
    ap.add_argument("--memory-gb", type=float, default=4.0)
    ap.add_argument("--instances", default=None, help="comma-separated names (default: all)")
    ap.add_argument("--task", choices=["MAR", "MAP"], default="MAR")
    ap.add_argument("--folder", default=None,
                    help="MAP: a folder of .uai files with .evid and .MAP "
                         "(default: the data folder)")
    ap.add_argument("--csv", default=None, help="MAP: write the table to this CSV file")
    args = ap.parse_args()
    if args.task == "MAP":
        main_map(args)
        return
    names = (args.instances.split(",") if args.instances
             else QUICK if args.quick else datasets.available_uai())
    print(f"{'instance':20s} {'n':>4s} {'min-fill':>16s} {'twlib order':>16s} {'seconds':>8s} "
          f"{'max |error|':>11s}\n{'':20s} {'':>4s} {'width  entries':>16s} "
          f"{'width  entries':>16s}")
    exact, refused, grids = [], [], []
    for name in names:
        instance = datasets.load_uai(name)
        model = instance.model
        graph = model.interaction_graph()
        arity = {v: model.arity(v) for v in model.variables}
        plain = graphs.elimination_cost(graph, graphs.elimination_order(graph, "min-fill"), arity)
        start = time.perf_counter()
        try:
            tree = JunctionTree(model, max_memory_gb=args.memory_gb)
            post = tree.posteriors(instance.evidence)
        except BudgetExceeded as exc:
            refused.append(name)
            print(f"{name:20s} {len(model.variables):4d} {plain[0]:5d} {plain[1]:10.3g}   "
                  f"refused: {exc}", flush=True)
            continue
        seconds = time.perf_counter() - start
        error = metrics.max_absolute_error(instance.marginals, post, reduce="max")
        if error <= REFERENCE_DIGITS:
            exact.append(name)
        if name.startswith("Grids"):
            grids.append(f"{name} {tree.width} (min-fill {plain[0]})")
        print(f"{name:20s} {len(model.variables):4d} {plain[0]:5d} {plain[1]:10.3g} "
              f"{tree.width:5d} {tree.entries:10.3g} {seconds:8.2f} {error:11.1e}", flush=True)
    print(f"bench_uai: {len(exact)} of {len(names)} instances exact to the references, "
          f"{len(refused)} refused {refused or ''}; Grids width: {', '.join(grids)}")


if __name__ == "__main__":
    main()
