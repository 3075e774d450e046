"""EM and structural EM on data with missing cells, against pyAgrum and BLIP in one run.

Parameter EM: per network, ``--rows`` samples with a share ``--missing`` of the
cells hidden completely at random; twlib's :func:`twlib.learn.em.fit_parameters`
and pyAgrum's ``BNLearner`` EM fit the true structure from the same starting
CPTs (each family estimated from the rows where it is fully observed, with a
pseudo-count so no entry is zero; maximum-likelihood M-steps in both;
pyAgrum's noise off).  twlib runs until an iteration gains less than
``--tol`` per row, then pyAgrum runs exactly as many iterations (its own
log-likelihood rule stops child at the first step that lowers its
log-likelihood, which exact EM never does; pyAgrum may still stop early on a
"likelihood divergence" of its own, and then ``difference_same_iterations``
compares it with twlib's iterate after as many steps).  Both answers are
scored by the exact observed-data log-likelihood per row; the line reports the
difference and the time ratio per iteration (``--pyagrum-iterations`` caps
pyAgrum's run, compared then at the same iterate).

``--sem`` (needs ``BLIP_JAR``): per network, bound and missing share, BLIP's
structural EM (``imputation.sem -t 1``, which hard-imputes each missing cell by
its most probable value and relearns with k-MAX) runs first, and twlib's
:func:`twlib.learn.em.structural_em` gets the seconds BLIP took.  Complete-case
learning (``learn.bounded`` on the rows without a missing cell) and the
ceiling (``learn.bounded`` on the data before masking) get those seconds up to
30.  Each network is scored by its log-likelihood per row on test rows: 5,000
fresh samples of a bnlearn network, or a density table's own test split
(plants).  BLIP's parameter file
holds negative entries (its Bayesian estimate on imputed counts), so its
structure is scored with CPTs refitted by twlib's EM on the same masked data;
the column ``blip_cpts_valid`` says whether BLIP's own were usable.

    python benchmarks/bench_em.py [--quick] [--networks child,alarm] [--rows 10000]
    BLIP_JAR=../shared/peers/blip/blip.jar python benchmarks/bench_em.py --sem [--quick]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from twlib.data import mask_mcar
from twlib.datasets import available_tables, load_network, load_table
from twlib.interop import from_pyagrum, to_pyagrum
from twlib.learn import bounded
from twlib.learn.em import (fit_parameters, observed_bic, observed_log_likelihood,
                             start_parameters, structural_em)
from twlib.network import BayesianNetwork

EM_NETWORKS = ["child", "alarm", "insurance", "hepar2"]
SEM_NETWORKS = ["child", "alarm", "insurance", "plants"]


def pyagrum_em(data, start: BayesianNetwork, iterations: int):
    """pyAgrum's EM from ``start``'s CPTs for exactly ``iterations`` steps (its own
    stopping rules off: its log-likelihood criterion stops at the first step that
    lowers its log-likelihood, which happens on child); ``(network, seconds,
    iterations)``."""
    import pyagrum as gum
    frame = data.to_pandas().astype(object)
    frame = frame.where(frame.notna(), "?").astype(str)
    bn0 = to_pyagrum(start)
    began = time.perf_counter()
    learner = gum.BNLearner(frame, bn0, ["?"])
    learner.useEM(1e-3, noise=0.0)
    learner.EMdisableEpsilon()
    learner.EMdisableMinEpsilonRate()
    learner.EMdisableMaxTime()
    learner.EMsetMaxIter(iterations)
    learner.useNoPrior()
    bn = learner.learnParameters(bn0)
    seconds = time.perf_counter() - began
    got = from_pyagrum(bn)
    cpts = {v: np.transpose(got.cpt(v), [0] + [1 + got.parents(v).index(p)
                                               for p in start.parents(v)])
            for v in start.variables}
    net = BayesianNetwork(start.variables, {v: start.states(v) for v in start.variables},
                          start.parent_map(), cpts, name="pyagrum-em")
    return net, seconds, learner.EMnbrIterations()


def parameter_em(args) -> pd.DataFrame:
    rows = []
    for name in args.networks:
        truth = load_network(name)
        holes = mask_mcar(truth.sample(args.rows, random_state=0), args.missing, random_state=1)
        start = start_parameters(holes, truth.parent_map())
        began = time.perf_counter()
        ours = fit_parameters(holes, truth.parent_map(), parameter_ess=None, init=start,
                              tol=args.tol, max_iter=args.max_iter)
        twlib_s = time.perf_counter() - began
        asked = min(ours.n_iter, args.pyagrum_iterations or ours.n_iter)
        theirs, agrum_s, agrum_it = pyagrum_em(holes, start, asked)
        ll_ours = observed_log_likelihood(ours.network, holes) / holes.n_rows
        ll_theirs = observed_log_likelihood(theirs, holes) / holes.n_rows
        # where pyAgrum stopped early, twlib's iterate after as many steps
        same = ours if agrum_it == ours.n_iter else fit_parameters(
            holes, truth.parent_map(), parameter_ess=None, init=start, tol=0.0,
            max_iter=agrum_it)
        ll_same = observed_log_likelihood(same.network, holes) / holes.n_rows
        rows.append({"network": name, "rows": args.rows, "missing": args.missing,
                     "twlib_ll_per_row": ll_ours, "pyagrum_ll_per_row": ll_theirs,
                     "difference": abs(ll_ours - ll_theirs),
                     "difference_same_iterations": abs(ll_same - ll_theirs),
                     "twlib_iterations": ours.n_iter,
                     "pyagrum_iterations": agrum_it, "twlib_s": twlib_s, "pyagrum_s": agrum_s,
                     "speedup": (agrum_s / agrum_it) / (twlib_s / ours.n_iter)})
        print(pd.DataFrame(rows[-1:]).round(7).to_string(index=False, header=len(rows) == 1),
              flush=True)
        if args.csv:
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    return pd.DataFrame(rows)


def blip_sem(holes, k: int, workdir: Path):
    """BLIP's ``imputation.sem`` on the masked data: ``(parents, seconds, cpts_valid)``."""
    jar = os.environ["BLIP_JAR"]
    dat = workdir / "data.dat"
    with open(dat, "w") as fh:
        fh.write(" ".join(f"N{j}" for j in range(holes.n_vars)) + "\n")
        fh.write(" ".join(str(int(r)) for r in holes.arities) + "\n")
        for row in holes.values:
            fh.write(" ".join("?" if x < 0 else str(x) for x in row.tolist()) + "\n")
    tmp = workdir / "tmp"
    tmp.mkdir(exist_ok=True)
    began = time.perf_counter()
    subprocess.run(["java", "-Xmx8g", "-jar", jar, "imputation.sem", "-d", str(dat),
                    "-o", str(workdir / "imputed.dat"), "-r", str(workdir / "sem.net"),
                    "-tmp", f"{tmp}/", "-t", "1", "-w", str(k), "-seed", "1"],
                   check=True, capture_output=True)
    seconds = time.perf_counter() - began
    tokens = (tmp / "final.uai").read_text().split()
    n = int(tokens[1])
    at = 2 + n
    n_factors = int(tokens[at])
    at += 1
    parents = {}
    for _ in range(n_factors):
        size = int(tokens[at])
        scope = [holes.names[int(t)] for t in tokens[at + 1:at + 1 + size]]
        parents[scope[-1]] = scope[:-1]
        at += 1 + size
    values = np.array([float(t) for t in tokens[at:]])
    return parents, seconds, bool((values >= 0).all())


def structural(args) -> pd.DataFrame:
    rows = []
    cells = [(k, name, fraction) for k in args.ks for name in args.networks
             for fraction in args.fractions]
    for k, name, fraction in cells:
        full, test = _train_and_test(name, args.rows)
        holes = mask_mcar(full, fraction, random_state=1)
        with tempfile.TemporaryDirectory(prefix="blip-sem-") as work:
            parents, seconds, valid = blip_sem(holes, k, Path(work))
        blip = fit_parameters(holes, parents, parameter_ess=1.0, max_iter=50).network
        began = time.perf_counter()
        ours = structural_em(holes, k, time_limit=seconds, random_state=0)
        twlib_s = time.perf_counter() - began
        complete = int(holes.complete_rows.sum())
        short = min(seconds, 30.0)
        cc = (bounded.learn(holes.complete_cases(), k, time_limit=short,
                            random_state=0).network if complete >= 2 else None)
        ceiling = bounded.learn(full, k, time_limit=short, random_state=0).network

        def held_out(net):
            return None if net is None else net.log_likelihood(test) / test.n_rows

        rows.append({"network": name, "missing": fraction, "k": k, "seconds": seconds,
                     "twlib_s": twlib_s,
                     "twlib_sem": held_out(ours.network), "blip_sem": held_out(blip),
                     "complete_case": held_out(cc), "complete_rows": complete,
                     "ceiling": held_out(ceiling), "twlib_width": ours.width,
                     "twlib_bic": ours.score, "blip_bic": observed_bic(blip, holes),
                     "blip_cpts_valid": valid})
        print(pd.DataFrame(rows[-1:]).round(4).to_string(index=False, header=len(rows) == 1),
              flush=True)
        if args.csv:
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    return pd.DataFrame(rows)


def _train_and_test(name: str, n_rows: int):
    """A density table's train and test splits, or ``n_rows`` samples of a
    bnlearn network and 5,000 fresh test rows."""
    if name in available_tables():
        return load_table(name, split="train"), load_table(name, split="test")
    truth = load_network(name)
    return truth.sample(n_rows, random_state=0), truth.sample(5000, random_state=7)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sem", action="store_true", help="structural EM against BLIP")
    parser.add_argument("--networks", type=lambda s: s.split(","))
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--missing", type=float, default=0.3)
    parser.add_argument("--tol", type=float, default=1e-7, help="stop gain per row")
    parser.add_argument("--max-iter", type=int, default=500)
    parser.add_argument("--pyagrum-iterations", type=int,
                        help="cap pyAgrum's iterations (it takes minutes each on hepar2)")
    parser.add_argument("--csv", help="write the table here")
    args = parser.parse_args()
    if args.sem:
        if not os.environ.get("BLIP_JAR"):
            raise SystemExit("--sem runs BLIP: set BLIP_JAR to its jar")
        args.networks = args.networks or (["child"] if args.quick else SEM_NETWORKS)
        args.rows = 2000 if args.quick else args.rows
        args.fractions = [0.3] if args.quick else [0.1, 0.3]
        args.ks = [3] if args.quick else [3, 5]
        table = structural(args)
        if args.csv:
            table.to_csv(args.csv, index=False)
        wins = int((table.twlib_sem > table.blip_sem).sum())
        beats_cc = int((table.twlib_sem > table.complete_case.fillna(-np.inf)).sum())
        print(f"structural EM: twlib above BLIP SEM in {wins}/{len(table)} cells (held-out LL per "
              f"row, median margin {np.median(table.twlib_sem - table.blip_sem):+.4f}), above "
              f"complete-case learning in {beats_cc}/{len(table)}, in BLIP's own seconds")
        return
    if args.quick:
        args.networks, args.rows = args.networks or ["asia", "child"], 600
    args.networks = args.networks or EM_NETWORKS
    table = parameter_em(args)
    ended = table.pyagrum_iterations == table.twlib_iterations
    fixed = int((table.difference[ended] <= 1e-6).sum())
    iterate = int((table.difference_same_iterations <= 1e-6).sum())
    print(f"parameter EM ({args.rows} rows, {args.missing:.0%} MCAR): pyAgrum at twlib's fixed "
          f"point on {fixed}/{int(ended.sum())} networks it ran to the end, at twlib's iterate "
          f"on {iterate}/{len(table)} (largest difference "
          f"{table.difference_same_iterations.max():.1e} per row); twlib "
          f"{table.speedup.min():.1f}x-{table.speedup.max():.1f}x faster per iteration")


if __name__ == "__main__":
    main()
