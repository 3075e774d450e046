"""Width-bounded optima under expert knowledge: the search over the tiers'
orders against the integer programme with the same constraints and no tiers.

The held-out case's kind of knowledge on the bnlearn networks of 20-40
variables (CHILD, INSURANCE, ALARM): the true topological order cut into three
tiers, three true arcs required, five non-arcs forbidden, BIC, k = 3.  Each
network is sampled (``--rows``) and learned twice with ``twlib.learn.ilp.learn``
and the same time limit: once with the tiers (the programme then runs
``exact_width``'s search over the orders that list the tiers in turn first),
once with the tiers written as forbidden arcs (every pair that runs back
across them), which the programme alone must close.  Each row gives status,
score, gap and seconds; ``--draws`` repeats it with other required and
forbidden arcs.  The last line is the headline: proofs and median seconds of
each, and the largest score the first leaves above the second.

    python benchmarks/bench_tiers.py [--quick] [--rows 10000] [--time-limit 120]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from twlib import datasets
from twlib.knowledge import Knowledge, expert_knowledge
from twlib.learn import ilp

NETWORKS = ["child", "insurance", "alarm"]


def held_out_like(net, draw):
    """Three tiers of the true order, three true arcs required and five non-arcs
    forbidden (drawn with ``draw``); and the same without tiers."""
    truth = expert_knowledge(net.parent_map(), required_share=0.1, n_tiers=3,
                             random_state=draw)
    rng = np.random.default_rng(draw)
    arcs, names = set(net.arcs), net.variables
    tier = {v: t for t, members in enumerate(truth.tiers) for v in members}
    forbidden = []
    while len(forbidden) < 5:
        a, b = rng.choice(names, 2, replace=False)
        if (a, b) not in arcs and (b, a) not in arcs and tier[a] <= tier[b] \
                and (a, b) not in forbidden:
            forbidden.append((a, b))
    tiered = Knowledge(required=truth.required[:3], forbidden=forbidden, tiers=truth.tiers)
    back = [(a, b) for a in names for b in names if tier[a] > tier[b]]
    return tiered, Knowledge(required=tiered.required, forbidden=forbidden + back)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 rows, 10 s, one draw")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--draws", type=int, default=2)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.time_limit, args.draws = 1_000, 10.0, 1
    print(f"{'network':<10}{'n':>4}{'draw':>5} | {'with tiers':^38} | "
          f"{'tiers as forbidden arcs':^38}")
    print(f"{'':<19} | {'status':<11}{'score':>14}{'gap %':>7}{'s':>6} | "
          f"{'status':<11}{'score':>14}{'gap %':>7}{'s':>6}")
    proved, seconds, above = [0, 0], [[], []], []
    for name in NETWORKS:
        net = datasets.load_network(name)
        data = net.sample(args.rows, random_state=0)
        for draw in range(args.draws):
            cells, scores = [], []
            for side, know in enumerate(held_out_like(net, draw)):
                started = time.perf_counter()
                res = ilp.learn(data, k=3, knowledge=know, time_limit=args.time_limit)
                took = time.perf_counter() - started
                proved[side] += res.status == "optimal"
                seconds[side].append(took)
                scores.append(res.score)
                cells.append(f"{res.status:<11}{res.score:>14.2f}{res.gap_percent:>7.3f}"
                             f"{took:>6.1f}")
            above.append(scores[0] - scores[1])
            print(f"{name:<10}{len(net.variables):>4}{draw:>5} | {cells[0]} | {cells[1]}",
                  flush=True)
    runs = len(above)
    print(f"k = 3, {args.rows:,} rows, {args.time_limit:.0f} s: with tiers {proved[0]}/{runs} "
          f"proved (median {statistics.median(seconds[0]):.1f} s), as forbidden arcs "
          f"{proved[1]}/{runs} (median {statistics.median(seconds[1]):.1f} s); the tiers' "
          f"score is above by up to {max(above):.2f}")


if __name__ == "__main__":
    main()
