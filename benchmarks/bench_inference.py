"""All-marginals exact inference under many evidence sets: twlib against pyAgrum.

For every bnlearn network of the data folder, evidence sets of 1-5 observed
variables are drawn by sampling a row from the network and revealing a random
subset of it (so every set has positive probability).  Per set, every
variable's posterior is computed by twlib's junction tree one set a call (one
thread), by ``posteriors_batch`` (the sets shared among the process's threads,
numba's thread count), and by pyAgrum's LazyPropagation (every posterior read,
on its default threads); the headline names both thread counts.  Printed per network: the order's width and table entries beside
pyAgrum's junction tree, ms per set for each (the fastest of up to five
passes over the sets, as many as fit in 0.2 s, for both), twlib's peak memory while
answering (its tables plus the numpy allocations of a batch, traced by
tracemalloc) and the largest posterior
difference.  pyAgrum runs in a forked process that may grow by ``--memory-gb``
at most; where it fails there, its column says so.  A network twlib refuses within ``--memory-gb`` is reported with
the size that did not fit.  Target: twlib at least 2x pyAgrum per set on every
network (the faster of twlib's two ways; the headline gives both), none refused that pyAgrum
answers.

The same sets then ask for the most probable explanation: twlib's ``mpe`` one set
per call and ``mpe_batch``, beside pyAgrum's ``LazyPropagation.mpe()`` on the sets
it answers (3.3 raises "Empty tensor" on most sets of most networks, even
without evidence; its attempts stop after 30 s per network), and the largest
difference between twlib's log P(x, e) and that of pyAgrum's assignment.

    python benchmarks/bench_inference.py [--quick] [--sets 200] [--networks alarm,munin]
"""
from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

from twlib import Dataset, datasets, interop
from twlib.errors import BudgetExceeded
from twlib.inference import JunctionTree

PEER_MPE_SECONDS = 30.0   # pyAgrum's MPE attempts stop after this much time per network
QUICK = ["asia", "child", "insurance", "alarm", "barley", "hepar2", "win95pts", "pathfinder"]


def evidence_sets(net, count, rng):
    rows = net.sample(count, random_state=rng)
    sets = []
    for row in rows.values:
        k = int(rng.integers(1, 6))
        chosen = rng.choice(len(net.variables), size=k, replace=False)
        sets.append({net.variables[j]: net.states(net.variables[j])[row[j]] for j in chosen})
    return sets


def in_child(fn, *args, memory_gb):
    """``fn(*args)`` in a forked process whose address space may grow by
    ``memory_gb`` GiB at most (pyAgrum took 24 GB on LINK and the kernel killed the
    whole benchmark); the exception it raised, or None when it died."""
    import multiprocessing
    import resource

    def target(pipe):
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        limit = used + int(memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            pipe.send(fn(*args))
        except BaseException as exc:                     # MemoryError, pyAgrum's own
            pipe.send(RuntimeError(f"{type(exc).__name__}: {exc}"))

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    worker = context.Process(target=target, args=(send,))
    worker.start()
    send.close()
    try:
        return receive.recv()
    except EOFError:
        return None
    finally:
        worker.join()


def per_set_ms(one_pass, count, budget=0.2, most=5):
    """``(ms per set, answer)`` of the fastest of up to ``most`` passes over
    ``count`` sets, as many as fit in ``budget`` seconds (at least one): one
    pass of a few microseconds a set is mostly noise, so both solvers get
    the same repeats."""
    best, spent, passes = float("inf"), 0.0, 0
    while passes < most and (passes == 0 or spent < budget):
        t0 = time.perf_counter()
        answer = one_pass()
        took = time.perf_counter() - t0
        best, spent, passes = min(best, took), spent + took, passes + 1
    return 1e3 * best / count, answer


def agrum_posteriors(net, sets):
    """pyAgrum's ms per set for every posterior, and its posteriors of the last set."""
    import pyagrum as gum

    ie = gum.LazyPropagation(interop.to_pyagrum(net))
    ie.makeInference()

    def one_pass():
        for e in sets:
            ie.setEvidence(e)
            ie.makeInference()
            agrum = {v: ie.posterior(v).toarray() for v in net.variables}
        return agrum

    return per_set_ms(one_pass, len(sets))


def run(name, count, memory_gb, rng):
    import pyagrum as gum

    net = datasets.load_network(name)
    sets = evidence_sets(net, count, rng)
    ie = gum.LazyPropagation(interop.to_pyagrum(net))
    row = {"network": name, "n": len(net.variables),
           "agrum_entries": interop.pyagrum_tree_entries(ie)}
    agrum = None
    if 8 * row["agrum_entries"] <= memory_gb * 2**30:     # else pyAgrum would not fit either
        answer = in_child(agrum_posteriors, net, sets, memory_gb=memory_gb)
        if isinstance(answer, tuple):
            row["agrum_ms"], agrum = answer
        else:
            row["agrum_failed"] = str(answer or "killed")
    t0 = time.perf_counter()
    try:
        jt = JunctionTree(net, max_memory_gb=memory_gb)
    except BudgetExceeded as exc:
        row["refused"] = str(exc)
        return row
    row["build_s"] = time.perf_counter() - t0
    row["width"], row["entries"] = jt.width, jt.entries
    jt.posteriors(sets[0])                                    # warm-up
    row["single_ms"], single = per_set_ms(lambda: [jt.posteriors(e) for e in sets], count)
    row["batched_ms"], (batched, _) = per_set_ms(lambda: jt.posteriors_batch(sets), count)
    tracemalloc.start()                       # apart from the timings, which it would slow
    jt.posteriors_batch(sets[:10])
    row["peak_mb"] = (tracemalloc.get_traced_memory()[1] + 8 * jt.entries) / 2**20
    tracemalloc.stop()
    # the last set's pyAgrum answers against twlib's single and batched ones
    row["max_diff"] = max(max(float(np.abs(agrum[v] - single[-1][v]).max()) if agrum else 0.0,
                              float(np.abs(batched[v][-1] - single[-1][v]).max()))
                          for v in net.variables)
    row.update(run_mpe(net, jt, sets, memory_gb))
    return row


def agrum_mpe(net, sets):
    """pyAgrum's ``mpe()`` on each set until ``PEER_MPE_SECONDS`` have passed:
    ``(answers {set index: state indices}, seconds, sets tried)``."""
    import pyagrum as gum

    ie = gum.LazyPropagation(interop.to_pyagrum(net))
    answered, spent, tried = {}, 0.0, 0
    for k, e in enumerate(sets):
        if spent > PEER_MPE_SECONDS:       # pyAgrum's mpe() takes seconds a set on link, munin
            break
        tried += 1
        t0 = time.perf_counter()
        ie.setEvidence(e)
        try:
            theirs = ie.mpe()
        except gum.FatalError:
            continue
        finally:
            spent += time.perf_counter() - t0
        answered[k] = [theirs[v] for v in net.variables]
    return answered, spent, tried


def run_mpe(net, jt, sets, memory_gb):
    """Most probable explanations: twlib one set per call and batched, pyAgrum's
    ``mpe()`` on the sets it answers (3.3 fails on many with "Empty tensor"), and
    the largest difference between twlib's log P(x, e) and that of pyAgrum's
    assignment."""
    jt.mpe(sets[0])                                           # warm-up (and the prior pass)
    t0 = time.perf_counter()
    single = [jt.mpe(e) for e in sets]
    out = {"mpe_single_ms": 1e3 * (time.perf_counter() - t0) / len(sets)}
    t0 = time.perf_counter()
    states, log_p = jt.mpe_batch(sets)
    out["mpe_batched_ms"] = 1e3 * (time.perf_counter() - t0) / len(sets)
    found = in_child(agrum_mpe, net, sets, memory_gb=memory_gb)
    answered, spent, tried = found if isinstance(found, tuple) else ({}, 0.0, 0)
    diff = 0.0
    for k, theirs in answered.items():
        ds = Dataset(np.array([theirs]), net.variables, [net.states(v) for v in net.variables])
        diff = max(diff, abs(float(net.log_likelihood(ds)) - single[k].log_value),
                   abs(log_p[k] - single[k].log_value))
    out["mpe_agrum_answered"], out["mpe_agrum_tried"] = len(answered), tried
    if answered:
        out["mpe_agrum_ms"] = 1e3 * spent / tried
        out["mpe_diff"] = diff
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="eight networks, 30 sets each")
    ap.add_argument("--sets", type=int, default=None, help="evidence sets per network")
    ap.add_argument("--networks", default=None, help="comma-separated names (default: all)")
    ap.add_argument("--memory-gb", type=float, default=4.0)
    ap.add_argument("--csv", default=None, help="write the table to this CSV file")
    args = ap.parse_args()
    names = (args.networks.split(",") if args.networks
             else QUICK if args.quick else datasets.available_networks())
    count = args.sets or (30 if args.quick else 200)
    rng = np.random.default_rng(0)
    print(f"{'network':10s} {'n':>5s} {'width':>5s} {'entries':>9s} {'pyAgrum':>9s} "
          f"{'single':>9s} {'batched':>9s} {'pyAgrum':>9s} {'ratio':>6s} {'peak MB':>8s} "
          f"{'diff':>7s} | {'MPE':>8s} {'MPE':>8s} {'pyAgrum':>8s} {'answered':>8s} "
          f"{'log P':>7s}\n{'':10s} {'':>5s} {'':>5s} {'':>9s} {'entries':>9s} "
          f"{'ms/set':>9s} {'ms/set':>9s} {'ms/set':>9s} {'':>6s} {'':>8s} {'':>7s} | "
          f"{'single':>8s} {'batched':>8s} {'ms/set':>8s} {'sets':>8s} {'diff':>7s}")
    ratios, singles, refused, rows = [], [], [], []
    mpe_ratios, mpe_singles, mpe_failed, mpe_tried = [], [], 0, 0
    for name in names:
        row = run(name, count, args.memory_gb, rng)
        rows.append(row)
        agrum = (f"{row['agrum_ms']:9.3f}" if "agrum_ms" in row
                 else f"{'failed':>9s}" if "agrum_failed" in row
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
        mpe_agrum = f"{row['mpe_agrum_ms']:8.3f}" if "mpe_agrum_ms" in row else f"{'-':>8s}"
        mpe_diff = f"{row['mpe_diff']:7.1e}" if "mpe_diff" in row else f"{'-':>7s}"
        answered = f"{row['mpe_agrum_answered']}/{row['mpe_agrum_tried']}"
        mpe_failed += row["mpe_agrum_tried"] - row["mpe_agrum_answered"]
        mpe_tried += row["mpe_agrum_tried"]
        if "mpe_agrum_ms" in row:
            mpe_ratios.append(row["mpe_agrum_ms"] / min(row["mpe_single_ms"],
                                                        row["mpe_batched_ms"]))
            mpe_singles.append(row["mpe_agrum_ms"] / row["mpe_single_ms"])
        print(f"{name:10s} {row['n']:5d} {row['width']:5d} {row['entries']:9.3g} "
              f"{row['agrum_entries']:9.3g} {row['single_ms']:9.3f} {row['batched_ms']:9.3f} "
              f"{agrum} {ratio} {row['peak_mb']:8.1f} {row['max_diff']:7.1e} | "
              f"{row['mpe_single_ms']:8.3f} {row['mpe_batched_ms']:8.3f} {mpe_agrum} "
              f"{answered:>8s} {mpe_diff}", flush=True)
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.csv, index=False, float_format="%.6g")
    import numba
    import pyagrum as gum

    tenfold = sum(r >= 10 for r in singles)
    print(f"bench_inference: {len(ratios)} networks answered, {len(refused)} refused "
          f"{refused or ''}; threads: twlib's batch {numba.config.NUMBA_NUM_THREADS}, pyAgrum "
          f"{gum.getNumberOfThreads()}; twlib / pyAgrum speed per set: worst {min(ratios):.2f}x, "
          f"median {statistics.median(ratios):.2f}x, at least 10x on "
          f"{sum(r >= 10 for r in ratios)} of {len(ratios)} "
          f"(one set per call: worst {min(singles):.2f}x, "
          f"median {statistics.median(singles):.2f}x, at least 10x on {tenfold} of "
          f"{len(singles)}); MPE: pyAgrum answered "
          f"{mpe_tried - mpe_failed} of the {mpe_tried} sets it was given, twlib / pyAgrum "
          f"speed on the {len(mpe_ratios)} networks it answered: worst "
          f"{min(mpe_ratios, default=np.nan):.2f}x "
          f"(one set per call: worst {min(mpe_singles, default=np.nan):.2f}x)")


if __name__ == "__main__":
    main()
