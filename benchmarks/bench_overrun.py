"""Do the anytime learners and inference routers return within their time limit, at every scale?

Each run is timed on :func:`twlib.clock.now` (wall time less compiling numba
kernels: a warm process) from the call to its return, and its overrun (seconds
past ``time_limit``) is set against :func:`twlib.clock.overrun_allowance`, the
library's stated contract: a tenth of the limit, at least 2 s.  The tables run
from alarm (37 variables) to samples of random binary networks of 1,359 and
10,000 variables (in-degree <= 3, width <= 30 by construction), the shape of
DEBD's large tables.  The routers (``mpe``: ``most_probable_explanation``,
``marginals``: ``posterior_marginals``) answer on those networks themselves,
a twentieth of the variables observed as one sample of the network shows them.

    python benchmarks/bench_overrun.py [--quick] [--save PATH]

Its last line: how many runs kept the contract, and the worst overrun.
"""
from __future__ import annotations

import argparse
import time
from functools import cache

import numpy as np
import pandas as pd

from twlib import clock
from twlib.data import Dataset, IncompleteDataset
from twlib.datasets import load_network
from twlib.errors import BudgetExceeded
from twlib.estimator import BoundedTreewidthNetwork
from twlib.inference import most_probable_explanation, posterior_marginals
from twlib.learn import bootstrap, bounded, em, exact_width, ilp, ktree
from twlib.network import random_network


@cache
def network(name: str):
    """A named network: a bnlearn one, or ``binary-N`` (N random binary variables)."""
    if name.startswith("binary-"):
        n = int(name.split("-")[1])
        return random_network(n, max_in=3, window=30, random_state=n)
    return load_network(name)


@cache
def table(name: str) -> Dataset:
    """A named network's sample: 1,214 rows of ``binary-N`` (1,000 from 5,000
    variables), else 5,000."""
    n = len(network(name).variables)
    rows = 5000 if not name.startswith("binary-") else 1214 if n < 5000 else 1000
    return network(name).sample(rows, random_state=0)


@cache
def query(name: str):
    """A named network and evidence on a twentieth of its variables."""
    net = network(name)
    row = net.sample(1, random_state=1).to_pandas().iloc[0]
    observed = np.random.default_rng(0).choice(len(net.variables), len(net.variables) // 20,
                                               replace=False)
    return net, {net.variables[i]: row[net.variables[i]] for i in observed}


def varying(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns a sample shows in two states or more (the estimator refuses constants)."""
    return frame.loc[:, frame.nunique() > 1]


def with_holes(data: Dataset, share: float = 0.2) -> IncompleteDataset:
    values = data.values.astype(np.int64)
    values[np.random.default_rng(0).random(values.shape) < share] = -1
    return IncompleteDataset(values, data.names, data.states)


# learner: (the input it takes, made from the table's name outside the timing; the call)
RUNNERS = {
    "bounded": (table, lambda data, t: bounded.learn(data, 3, time_limit=t, random_state=0)),
    "estimator": (lambda name: varying(table(name).to_pandas()),
                  lambda frame, t: BoundedTreewidthNetwork(k=3, time_limit=t, random_state=0)
                  .fit(frame)),
    "ktree": (table, lambda data, t: ktree.learn(data, 2, time_limit=t, max_iter=10**6,
                                                random_state=0)),
    "structural_em": (lambda name: with_holes(table(name)), lambda data, t: em.structural_em(
        data, 2, time_limit=t, max_iter=10**6, random_state=0)),
    "ilp": (table, lambda data, t: ilp.learn(data, max_parents=2, time_limit=t)),
    "exact_width": (table, lambda data, t: exact_width.learn(data, 2, time_limit=t)),
    # more resamples than fit: the call's limit, not their number, ends it
    "bootstrap": (table, lambda data, t: bootstrap(data, 2, n_resamples=10**4, max_iter=None,
                                                   resample_time_limit=max(1.0, t / 10),
                                                   time_limit=t, random_state=0)),
    "mpe": (query, lambda q, t: most_probable_explanation(*q, time_limit=t)),
    "marginals": (query, lambda q, t: posterior_marginals(*q, time_limit=t)),
}

QUICK = [("bounded", "alarm", 1), ("bounded", "binary-1500", 5), ("estimator", "binary-1500", 5),
         ("ktree", "alarm", 2), ("structural_em", "alarm", 4), ("ilp", "alarm", 4),
         ("exact_width", "child", 3), ("bootstrap", "alarm", 4), ("mpe", "binary-1500", 5),
         ("marginals", "binary-1500", 5)]
FULL = [("bounded", "alarm", 1), ("bounded", "alarm", 10), ("bounded", "alarm", 60),
        ("bounded", "binary-1359", 60), ("bounded", "binary-1359", 400),
        ("bounded", "binary-10000", 60), ("bounded", "binary-10000", 600),
        ("estimator", "binary-1359", 60), ("ktree", "alarm", 10), ("ktree", "alarm", 60),
        ("structural_em", "alarm", 10), ("structural_em", "alarm", 60),
        ("structural_em", "binary-1359", 60), ("ilp", "alarm", 10), ("ilp", "alarm", 60),
        ("exact_width", "child", 10), ("exact_width", "child", 60), ("bootstrap", "alarm", 60),
        ("bootstrap", "binary-1359", 60), ("mpe", "binary-1359", 10), ("mpe", "binary-1359", 60),
        ("mpe", "binary-10000", 10), ("mpe", "binary-10000", 60), ("marginals", "binary-1359", 10),
        ("marginals", "binary-1359", 60), ("marginals", "binary-10000", 10),
        ("marginals", "binary-10000", 60)]


def warm_up() -> None:
    """Every runner once on child, so that no run below pays for compiling."""
    for prepare, run in RUNNERS.values():
        run(prepare("child"), 1)


def status(result) -> str:
    """A run's status; a bootstrap's says whether its limit skipped resamples,
    marginals whether they are exact or bounded."""
    if isinstance(result, BudgetExceeded):
        return f"refused: {result}"
    if hasattr(result, "status"):
        return result.status
    if hasattr(result, "exact"):
        return "exact" if result.exact else "bounded"
    return "time_limit" if result.stats["time_limit_reached"] else "complete"


def measure(cases) -> pd.DataFrame:
    rows = []
    for learner, name, limit in cases:
        prepare, run = RUNNERS[learner]
        given = prepare(name)
        started, wall = clock.now(), time.perf_counter()
        try:
            res = run(given, limit)
        except BudgetExceeded as refusal:    # a clear refusal is an answer, if in time
            res = refusal
        seconds = clock.now() - started
        result = getattr(res, "result_", res)
        rows.append({"learner": learner, "table": name,
                     "variables": len(network(name).variables),
                     "rows": table(name).n_rows if prepare is not query else 0,
                     "time_limit": limit, "seconds": round(seconds, 2),
                     "wall_seconds": round(time.perf_counter() - wall, 2),
                     "overrun": round(seconds - limit, 2),
                     "allowed": clock.overrun_allowance(limit), "status": status(result)})
        print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1), flush=True)
    out = pd.DataFrame(rows)
    out["kept"] = out["overrun"] <= out["allowed"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--save", help="CSV to write the runs to")
    args = parser.parse_args()
    warm_up()
    out = measure(QUICK if args.quick else FULL)
    if args.save:
        out.to_csv(args.save, index=False)
    worst = out.loc[(out["overrun"] / out["time_limit"]).idxmax()]
    print(f"{int(out['kept'].sum())} of {len(out)} runs within time_limit + max(2 s, 10 %); "
          f"worst overrun {worst['overrun']:.1f} s at {worst['time_limit']} s "
          f"({worst['learner']} on {worst['table']})")


if __name__ == "__main__":
    main()
