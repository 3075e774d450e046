"""Exact MAR on the UAI 2014 instances of the data folder, against their reference marginals.

For each instance: the width and table entries of a plain min-fill order beside
those of the order twlib's junction tree builds by default
(``graphs.elimination_order(method="auto")``: the least total size among greedy
heuristics, jittered restarts and spectral sweeps), the seconds to build the
tree and answer, and the largest absolute difference from the competition's
``.MAR`` reference (given to six digits).  An instance whose tree does not fit
``--memory-gb`` (the competition's 4 GiB by default) is reported with the size
that did not fit.

    python benchmarks/bench_uai.py [--quick] [--memory-gb 4] [--instances Grids_11,...]
"""
from __future__ import annotations

import argparse
import time

from twlib import datasets, graphs, metrics
from twlib.errors import BudgetExceeded
from twlib.inference import JunctionTree

QUICK = ["Grids_11", "Grids_12", "Grids_13", "Grids_14", "CSP_12", "Segmentation_11",
         "ObjectDetection_11", "DBN_11"]
REFERENCE_DIGITS = 1e-5                # the .MAR files round to six digits


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the Grids and one of each other family")
    ap.add_argument("--memory-gb", type=float, default=4.0)
    ap.add_argument("--instances", default=None, help="comma-separated names (default: all)")
    args = ap.parse_args()
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
