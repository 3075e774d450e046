"""Exact MAR and MAP on the UAI 2014 instances, against the competition's reference solutions.

For each instance: the width and table entries of a plain min-fill order beside
those of the order twlib's junction tree builds by default
(``graphs.elimination_order(method="auto")``: the least total size among greedy
heuristics, jittered restarts and spectral sweeps), the seconds to build the
tree and answer, and the largest absolute difference from the competition's
``.MAR`` reference (given to six digits) and from the ``.PR`` reference
``log10 P(e)``.  twlib answers by
:func:`twlib.inference.posterior_marginals`: the junction tree when it fits
``--memory-gb`` (the competition's 4 GiB by default), else cutset conditioning,
exact when its runs finish within ``--seconds`` and otherwise bounded; bounded
answers are checked to contain both references.

``--task MAP``: the most probable assignment (max-product on the same tree) of
every instance with a MAP reference, its log-value (the log of the product of
the model's factors, unnormalised, as the competition scores it) beside the
reference assignment's: ``equal`` within 1e-6, ``better`` where the reference
(found by subproblem-tree calibration, an approximate method) is not optimal;
``worse`` would be a bug.  ``--folder`` reads every ``*.uai`` with its
``.evid`` and ``.MAP`` from a folder instead, such as ``uai2014/MAP`` of the
public mroavi/uai repository (120 instances, 84 of them in its snapshot; the
data folder holds the ones that fit 4 GiB and one that does not).  twlib answers
by :func:`twlib.inference.most_probable_explanation`: the junction tree when it
fits, else branch and bound on mini-bucket bounds for ``--seconds``.  With
``pytoulbar2`` installed (the ``peers`` extra) toulbar2 solves each instance
too, in a fresh process with the same ``--seconds`` (after twlib, or with
``--side-by-side`` at the same time, each solver on one of two cores, both
solves starting once toulbar2 has read its model); the headline counts the
instances each proves optimal, those toulbar2 proves and twlib does not, the
instances where twlib's log-value is below toulbar2's, and the median of
toulbar2's seconds over twlib's on those both prove (and on those of them
toulbar2 proves in under a second).

    python benchmarks/bench_uai.py [--quick] [--memory-gb 4] [--seconds 120] [--instances ...]
    python benchmarks/bench_uai.py --task MAP [--quick] [--folder uai2014/MAP] [--seconds 60]
                                   [--side-by-side]
"""
from __future__ import annotations

import argparse
import gc
import gzip
import multiprocessing
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from twlib import datasets, graphs, metrics
from twlib.errors import BudgetExceeded, ZeroEvidenceError
from twlib.inference import most_probable_explanation, posterior_marginals
from twlib.io import uai

QUICK = ["Grids_11", "Grids_12", "Grids_13", "Grids_14", "CSP_12", "Segmentation_11",
         "ObjectDetection_11", "DBN_11"]
REFERENCE_DIGITS = 1e-5                # the .MAR files round to six digits


MAP_QUICK = ["Grids_11", "Grids_26", "Promedas_70", "CSP_12", "DBN_11", "Segmentation_11",
             "ObjectDetection_11"]


def map_instances(args):
    """``(name, model, evidence, reference states, path of the .uai)`` of the MAP
    task, lazily."""
    if args.folder:
        paths = sorted(Path(args.folder).glob("*.uai"))
        wanted = set(args.instances.split(",")) if args.instances else None
        for path in paths:
            name = path.name[:-len(".uai")]
            if (wanted is None or name in wanted) and path.stat().st_size > 0:
                yield (name, uai.read(path), uai.read_evidence(str(path) + ".evid"),
                       uai.read_map(str(path) + ".MAP"), path)
        return
    names = (args.instances.split(",") if args.instances
             else MAP_QUICK if args.quick else datasets.available_uai(task="MAP"))
    for name in names:
        inst = datasets.load_uai(name)
        path = datasets.data_file(f"uai/{inst.category}/{name}.uai")
        yield name, inst.model, inst.evidence, inst.map_state, path


def _toulbar2(path, evidence, seconds, answer, ready, go):
    import pytoulbar2

    cfn = pytoulbar2.CFN(verbose=-1)
    cfn.Read(str(path))
    # from the model read, as twlib's: the evidence and the solve count; the
    # solve starts when twlib's does, so that neither runs beside the other's
    # start-up (a fresh interpreter's imports and the file's reading)
    ready.set()
    go.wait()
    started = time.perf_counter()
    for var, state in evidence.items():
        cfn.Assign(cfn.VariableIndices[f"x{var}"], state)
    result = cfn.Solve(timeLimit=int(seconds))
    elapsed = time.perf_counter() - started
    answer.put(None if result is None else
               (list(result[0]), elapsed, float(cfn.GetDDualBound()), float(result[1])))


def toulbar2_map(path, model, evidence, seconds):
    """toulbar2's answer in a fresh process: ``(states, seconds, proved)``, or None
    when it found no assignment.  Evidence is assigned before the solve; the
    seconds run from the model read to the end of the solve, as twlib's do (the
    file's reading and the process's start-up are not counted)."""
    handle = toulbar2_start(path, model, evidence, seconds)
    toulbar2_go(handle)
    return toulbar2_finish(handle)


def toulbar2_start(path, model, evidence, seconds):
    """toulbar2 started on the instance in its own process, up to its model read;
    :func:`toulbar2_go` starts its solve, :func:`toulbar2_finish` waits for it."""
    folder = tempfile.TemporaryDirectory()
    plain = Path(folder.name) / "model.uai"
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as src, open(plain, "wb") as out:
        shutil.copyfileobj(src, out)
    index = {v: k for k, v in enumerate(model.variables)}
    ev = {index[v]: s for v, s in evidence.items()}
    context = multiprocessing.get_context("spawn")
    answer, ready, go = context.Queue(), context.Event(), context.Event()
    worker = context.Process(target=_toulbar2, args=(plain, ev, seconds, answer, ready, go))
    worker.start()
    return worker, answer, folder, seconds, ready, go


def toulbar2_go(handle):
    """Start the solve of a toulbar2 :func:`toulbar2_start` began, once it has
    read its model (or its process has ended)."""
    worker, ready, go = handle[0], handle[4], handle[5]
    while not ready.wait(0.1) and worker.is_alive():
        pass
    go.set()


def toulbar2_finish(handle):
    """What :func:`toulbar2_map` returns, for a solve :func:`toulbar2_start` began."""
    worker, answer, folder, seconds = handle[:4]
    try:
        worker.join(seconds + 30)
        if worker.is_alive():
            worker.terminate()
            return None
        found = answer.get() if not answer.empty() else None
    finally:
        folder.cleanup()
    if found is None:
        return None
    states, solve_seconds, dual, primal = found
    proved = solve_seconds < 0.98 * seconds and dual >= primal - 1e-6 * max(1, abs(primal))
    return np.array(states), solve_seconds, proved


def main_map(args):
    try:
        import pytoulbar2  # noqa: F401
        peer = True
    except ImportError:
        peer = False
    seconds = args.seconds or (10.0 if args.quick else 60.0)
    print(f"{'instance':20s} {'n':>5s} {'method':>24s} {'status':>10s} {'seconds':>8s} "
          f"{'twlib log-value':>16s} {'reference':>14s} {'toulbar2':>14s} {'tb2 s':>7s}")
    rows = []
    for name, model, evidence, reference, path in map_instances(args):
        # the garbage of the instances before (a full collection over a process
        # holding a model of ten thousand variables takes about 0.1 s) is not
        # charged to this one, as timeit keeps collections out of its timings
        gc.collect()
        # side by side, each solver has one of the two cores for the same seconds
        handle = toulbar2_start(path, model, evidence, seconds) if peer and args.side_by_side \
            else None
        if handle is not None:
            toulbar2_go(handle)
        start = time.perf_counter()
        row = {"instance": name, "n": len(model.variables)}
        try:
            res = most_probable_explanation(model, evidence, max_memory_gb=args.memory_gb,
                                            time_limit=seconds)
            ours = [model.states(v).index(res.assignment[v]) for v in model.variables]
            row.update(method=res.method, status=res.status,
                       seconds=time.perf_counter() - start,
                       twlib=float(model.log_values([ours])[0]), bound=res.bound)
        except BudgetExceeded as exc:
            row.update(method="refused", status="refused", note=str(exc))
        except ZeroEvidenceError as exc:
            # a proof that no assignment has non-zero probability, not an optimum
            row.update(method="no non-zero assignment", status="infeasible",
                       seconds=time.perf_counter() - start, note=str(exc))
        row["reference"] = float(model.log_values([reference])[0])
        if peer:
            found = (toulbar2_finish(handle) if handle is not None
                     else toulbar2_map(path, model, evidence, seconds))
            if found is not None:
                states, tb_seconds, proved = found
                row.update(toulbar2=float(model.log_values([states])[0]),
                           toulbar2_seconds=tb_seconds, toulbar2_proved=proved)
        rows.append(row)
        print(f"{name:20s} {row['n']:5d} {row['method'][:24]:>24s} {row['status']:>10s} "
              f"{row.get('seconds', np.nan):8.2f} {row.get('twlib', np.nan):16.6f} "
              f"{row['reference']:14.4f} {row.get('toulbar2', np.nan):14.4f} "
              f"{row.get('toulbar2_seconds', np.nan):7.2f}"
              f"{' proved' if row.get('toulbar2_proved') else ''}", flush=True)
    table = pd.DataFrame(rows)
    if args.csv:
        table.to_csv(args.csv, index=False)
    ours_proved = table["status"].eq("optimal")
    verdict = (f"bench_uai MAP ({seconds:g} s each): twlib proves {int(ours_proved.sum())} of "
               f"{len(table)}")
    if peer and "toulbar2" in table:
        theirs = table["toulbar2_proved"].fillna(False).astype(bool)
        missed = table.loc[theirs & ~ours_proved, "instance"].tolist()
        below = table.loc[table["twlib"].fillna(-np.inf) < table["toulbar2"] - 1e-6
                          * table["toulbar2"].abs().clip(lower=1), "instance"].tolist()
        both = ours_proved & theirs
        speed = table.loc[both, "toulbar2_seconds"] / table.loc[both, "seconds"]
        quick = table.loc[both, "toulbar2_seconds"] < 1.0
        verdict += (f", toulbar2 {int(theirs.sum())}; toulbar2 proves and twlib does not: "
                    f"{len(missed)}; twlib's log-value below toulbar2's: {len(below)}; "
                    f"median toulbar2 seconds / twlib seconds where both prove: "
                    f"{speed.median():.2f}x ({int(both.sum())} instances; "
                    f"{speed[quick].median():.2f}x on the {int(quick.sum())} toulbar2 proves "
                    f"in under a second)")
    print(verdict)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the Grids and one of each other family")
    ap.add_argument("--memory-gb", type=float, default=4.0)
    ap.add_argument("--instances", default=None, help="comma-separated names (default: all)")
    ap.add_argument("--task", choices=["MAR", "MAP"], default="MAR")
    ap.add_argument("--folder", default=None,
                    help="MAP: a folder of .uai files with .evid and .MAP "
                         "(default: the data folder)")
    ap.add_argument("--csv", default=None, help="write the table to this CSV file")
    ap.add_argument("--side-by-side", action="store_true",
                    help="MAP: run toulbar2 in its process while twlib solves (half the wall "
                         "time on two cores; each solver has one)")
    ap.add_argument("--seconds", type=float, default=None,
                    help="time limit per instance (MAP: for twlib and toulbar2, default 60, "
                         "--quick 10; MAR: past the tree, default 120, --quick 10)")
    args = ap.parse_args()
    if args.task == "MAP":
        main_map(args)
        return
    names = (args.instances.split(",") if args.instances
             else QUICK if args.quick else datasets.available_uai())
    seconds_limit = args.seconds or (10.0 if args.quick else 120.0)
    print(f"{'instance':20s} {'n':>4s} {'min-fill':>16s} {'twlib order':>16s} {'seconds':>8s} "
          f"{'max |error|':>11s} {'|d log10 Z|':>11s}  method\n{'':20s} {'':>4s} "
          f"{'width  entries':>16s} {'width  entries':>16s}")
    exact, bounded, held, conditioned, rows = [], [], [], [], []
    for name in names:
        instance = datasets.load_uai(name)
        model = instance.model
        graph = model.interaction_graph()
        arity = {v: model.arity(v) for v in model.variables}
        plain = graphs.elimination_cost(graph, graphs.elimination_order(graph,
                                                                        method="min-fill"), arity)
        ours = graphs.elimination_cost(graph, graphs.elimination_order(graph, method="auto",
                                                                        weights=arity), arity)
        gc.collect()
        start = time.perf_counter()
        res = posterior_marginals(model, instance.evidence, max_memory_gb=args.memory_gb,
                                  time_limit=seconds_limit)
        seconds = time.perf_counter() - start
        error = metrics.max_absolute_error(instance.marginals, res.posteriors, reduce="max")
        log10_error = (abs(res.log_z - instance.log_z) / np.log(10)
                       if instance.log_z is not None else np.nan)
        if res.exact:
            exact += [name] if error <= REFERENCE_DIGITS else []
            conditioned += [name] if res.method.startswith("cutset") else []
        else:
            bounded.append(name)
            low, high = res.log_z_bounds
            slack = REFERENCE_DIGITS * max(1.0, abs(instance.log_z))
            holds = (low - slack <= instance.log_z <= high + slack and all(
                np.all(res.lower[v] - REFERENCE_DIGITS <= instance.marginals[v])
                and np.all(instance.marginals[v] <= res.upper[v] + REFERENCE_DIGITS)
                for v in model.variables))
            held += [name] if holds else []
        rows.append({"instance": name, "variables": len(model.variables), "width": ours[0],
                     "entries": ours[1], "memory_gb": args.memory_gb, "seconds": seconds,
                     "method": res.method, "exact": res.exact, "max_error": error,
                     "log10_z": res.log_z / np.log(10),
                     "log10_z_low": res.log_z_bounds[0] / np.log(10),
                     "log10_z_high": res.log_z_bounds[1] / np.log(10),
                     "reference_log10_z": instance.log_z / np.log(10),
                     "bounds_hold": None if res.exact else name in held})
        print(f"{name:20s} {len(model.variables):4d} {plain[0]:5d} {plain[1]:10.3g} "
              f"{ours[0]:5d} {ours[1]:10.3g} {seconds:8.2f} {error:11.1e} {log10_error:11.1e}  "
              f"{res.method}", flush=True)
    if args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False)
    print(f"bench_uai: {len(exact)} of {len(names)} instances exact to the references "
          f"({len(conditioned)} by cutset conditioning past {args.memory_gb} GiB), "
          f"{len(bounded)} bounded within {seconds_limit:g} s (bounds hold on {len(held)}), "
          f"none refused")


if __name__ == "__main__":
    main()
