"""The width check of learn.bounded, incremental against from scratch, on the same moves.

A network is learned at bound k (``learn.bounded``, a short run), then every
candidate arc addition u -> v among a random sample (acyclic, in-degree < k)
is checked twice:

* **from scratch** (the check before hc-ET's idea was taken up): the new moral
  graph eliminated along the certificate order, and when that is too wide a
  min-fill order of the whole graph;
* **incremental** (``learn.bounded`` today): the new family closed into the
  certificate's filled graph (``close_fill``), and when that is too wide the
  certificate kept up to the first variable the move touches and min-fill on
  the rest (``min_fill_after``).

Both answer "fits" or "refused"; printed are checks and refusals per second of
each, and how often they agree (they differ only where the two min-fill orders
do).  The last line is the headline: checks per second, incremental over from
scratch, on the same moves.

    python benchmarks/bench_width_check.py [--quick] [--data moviereview] [--k 3]
        [--random 10000] [--moves 400]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from twlib.datasets import load_table
from twlib.learn import bounded
from twlib.learn.bounded.width import (close_fill, later_neighbours, min_fill,
                                       min_fill_after, moral_bits, parent_rows, reaches,
                                       width_along)
from twlib.network import random_network


def candidate_moves(parents, k, count, rng):
    """Random arc additions u -> v that keep the DAG acyclic and the in-degree <= k."""
    n = len(parents)
    pa = parent_rows(parents, k)
    moves = []
    while len(moves) < count:
        u, v = (int(x) for x in rng.integers(0, n, 2))
        if u != v and u not in parents[v] and len(parents[v]) < k and not reaches(pa, v, u, -1, -1):
            moves.append((u, v))
    return moves


def from_scratch(parents, order, k, move):
    u, v = move
    grown = list(parents)
    grown[v] = tuple(sorted(grown[v] + (u,)))
    adj = moral_bits(parent_rows(grown, k), (len(parents) + 63) // 64)
    if width_along(adj, order, k) <= k:
        return True
    return min_fill(adj, k)[1] <= k


def incremental(parents, order, rows, position, k, move, scratch, slot, touched):
    u, v = move
    family = (u, v, *parents[v])
    pairs = np.array([(v, u)] + [(u, p) for p in parents[v]], dtype=np.int64).reshape(-1, 2)
    count = close_fill(rows, position[pairs], k, scratch, slot, touched)
    if count >= 0:
        for i in range(count):                  # a check only: leave the rows as they were
            slot[touched[i]] = -1
        return True
    grown = list(parents)
    grown[v] = tuple(sorted(grown[v] + (u,)))
    adj = moral_bits(parent_rows(grown, k), (len(parents) + 63) // 64)
    start = int(np.flatnonzero(np.isin(order, family))[0])
    return min_fill_after(adj, order, start, k)[1] <= k


def measure(name, data, k, seconds, n_moves, seed=0):
    res = bounded.learn(data, k=k, time_limit=seconds, random_state=seed, max_iter=1)
    index = {v: i for i, v in enumerate(data.names)}
    parents = [tuple(sorted(index[p] for p in res.parents[v])) for v in data.names]
    order = np.array([index[v] for v in res.elimination_order], dtype=np.int64)
    n = len(parents)
    moves = candidate_moves(parents, k, n_moves, np.random.default_rng(seed))
    rows, position = later_neighbours(moral_bits(parent_rows(parents, k), (n + 63) // 64), order)
    scratch, slot, touched = np.zeros_like(rows), np.full(n, -1), np.zeros(n, dtype=np.int64)
    for check in (from_scratch, incremental):          # compile both before timing
        args = (parents, order, k, moves[0]) if check is from_scratch else (
            parents, order, rows, position, k, moves[0], scratch, slot, touched)
        check(*args)
    out = {}
    for label, check in (("from scratch", from_scratch), ("incremental", incremental)):
        started = time.perf_counter()
        if check is from_scratch:
            answers = [check(parents, order, k, m) for m in moves]
        else:
            answers = [check(parents, order, rows, position, k, m, scratch, slot, touched)
                       for m in moves]
        wall = time.perf_counter() - started
        refused = answers.count(False)
        out[label] = (answers, wall, refused)
        print(f"{name:>12s} n={n:6d} k={k} {label:>12s}: {len(moves) / wall:9.0f} checks/s, "
              f"{refused:4d} refused, {refused / wall:9.0f} refusals/s", flush=True)
    agree = np.mean(np.array(out["from scratch"][0]) == np.array(out["incremental"][0]))
    speedup = out["from scratch"][1] / out["incremental"][1]
    print(f"{name:>12s}: answers agree on {100 * agree:.1f} % of {len(moves)} moves; "
          f"incremental checks {speedup:.1f}x faster")
    return speedup


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="moviereview and a 2,000-variable random network, 200 moves")
    ap.add_argument("--data", default="moviereview")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--random", type=int, default=10000, help="variables of the random network")
    ap.add_argument("--moves", type=int, default=400)
    args = ap.parse_args()
    n_moves = 200 if args.quick else args.moves
    ratios = [measure(args.data, load_table(args.data), args.k, 5 if args.quick else 20,
                      n_moves)]
    n = 2000 if args.quick else args.random
    rng = np.random.default_rng(0)
    net = random_network(n, max_in=3, arities=rng.integers(2, 5, n), window=50, random_state=0)
    ratios.append(measure(f"random{n}", net.sample(3000, random_state=1), args.k,
                          10 if args.quick else 120, n_moves))
    print(f"bench_width_check: checks per second, incremental / from scratch: "
          f"{ratios[0]:.1f}x on {args.data}, {ratios[1]:.1f}x on {n:,} random variables")


if __name__ == "__main__":
    main()
