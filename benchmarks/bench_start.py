"""Start-up: what a short time limit buys from a cold process, against a warm one.

Every run here is a fresh interpreter, as a user's command is:

* ``twlib learn`` on 2,000 rows sampled from ALARM (seed 0), ``-k 2 --time-limit 1``,
  first with an empty numba cache (a new ``NUMBA_CACHE_DIR``), then with the
  cache that run filled: wall seconds and BIC;
* the same learner in a process that has already run it once (a warm process),
  with ``time_limit=0.5``: the score the cold command must reach;
* the peer: pgmpy's ``HillClimbSearch`` (BIC, in-degree <= 2, no width bound) in
  a fresh process on the same CSV, its DAG scored with the same textbook BIC;
* import seconds of ``twlib``, of ``twlib.learn.bounded`` and of the CLI path;
* without ``--quick``: ``learn.bounded.learn(dna, k=3, time_limit=5)`` (DEBD dna:
  180 binary variables, 1,600 rows) from a cold process with an empty cache
  and in a warm process.

    python benchmarks/bench_start.py [--quick] [--save data/results/bench_start.csv]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

PYTHON = sys.executable

LEARN_IN_PROCESS = """
import json, sys, time
import pandas as pd
from twlib.learn import bounded
from twlib.datasets import load_table
data = load_table("dna") if sys.argv[1] == "dna" else pd.read_csv(sys.argv[1])
k, limit, warm = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "warm"
if warm:
    bounded.learn(data, k, time_limit=limit, random_state=0)
started = time.perf_counter()
res = bounded.learn(data, k, time_limit=limit, random_state=0)
print(json.dumps({"score": res.score, "seconds": time.perf_counter() - started,
                  "compile": res.stats["compile_seconds"], "arcs": len(res.network.arcs)}))
"""

PGMPY = """
import json, sys, time
started = time.perf_counter()
import pandas as pd
from pgmpy.estimators import HillClimbSearch
frame = pd.read_csv(sys.argv[1]).astype(str)
dag = HillClimbSearch(frame).estimate(scoring_method="bic-d", max_indegree=2,
                                      show_progress=False)
print(json.dumps({"parents": {v: list(dag.predecessors(v)) for v in frame.columns},
                  "seconds": time.perf_counter() - started}))
"""


def run(args, env, timeout=600) -> tuple[float, str]:
    started = time.perf_counter()
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    if out.returncode:
        raise RuntimeError(f"{args[:4]} failed: {out.stderr[-2000:]}")
    return time.perf_counter() - started, out.stdout


def median_wall(args, env, repeats) -> float:
    return sorted(run(args, env)[0] for _ in range(repeats))[repeats // 2]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--save", help="CSV of the measurements")
    args = ap.parse_args(argv)
    from twlib.datasets import load_network, load_table
    from twlib.io import bif
    from twlib.scores import network_score

    folder = Path(tempfile.mkdtemp(prefix="bench-start-"))
    csv = folder / "alarm.csv"
    sample = load_network("alarm").sample(2000, random_state=0)
    sample.to_pandas().to_csv(csv, index=False)
    cache = folder / "numba-cache"
    # as on a user's machine, where Python keeps the bytecode of what it imported
    # (some sandboxes and CI set PYTHONDONTWRITEBYTECODE, which adds ~0.3 s a run)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["NUMBA_CACHE_DIR"] = str(cache)
    run([PYTHON, "-c", "import twlib.cli, twlib.learn.bounded, twlib.learn.methods"], env)
    rows = []
    command = [PYTHON, "-m", "twlib", "learn", str(csv), "-k", "2", "--time-limit", "1",
               "--seed", "0", "--out", str(folder / "o.bif")]
    for cache_state in ("empty cache", "warm cache"):
        wall, printed = run(command, env)
        score = network_score(sample, bif.read(folder / "o.bif").parent_map())
        rows.append({"case": f"twlib learn ALARM k=2 --time-limit 1, {cache_state}",
                     "wall_s": wall, "bic": score})
        print(f"{rows[-1]['case']}: {wall:.2f} s, BIC {score:.1f}   [{printed.strip()}]")
    repeats = 3 if args.quick else 7
    warm_wall = median_wall(command, env, repeats)
    rows.append({"case": f"twlib learn ALARM --time-limit 1, warm cache, median of {repeats}",
                 "wall_s": warm_wall, "bic": None})
    print(f"{rows[-1]['case']}: {warm_wall:.2f} s")
    _, printed = run([PYTHON, "-c", LEARN_IN_PROCESS, str(csv), "2", "0.5", "warm"], env)
    warm = json.loads(printed)
    rows.append({"case": "bounded.learn ALARM k=2 time_limit=0.5, warm process",
                 "wall_s": warm["seconds"], "bic": warm["score"]})
    print(f"{rows[-1]['case']}: BIC {warm['score']:.1f}")
    for what, cli in [("import twlib", ["-c", "import twlib"]),
                      ("import twlib.learn.bounded", ["-c", "import twlib.learn.bounded"]),
                      ("twlib --help", ["-m", "twlib", "--help"])]:
        wall = median_wall([PYTHON, *cli], env, repeats)
        rows.append({"case": what, "wall_s": wall, "bic": None})
        print(f"{what}: {wall:.2f} s")
    wall, printed = run([PYTHON, "-c", PGMPY, str(csv)], env)
    peer = json.loads(printed)
    peer_bic = network_score(sample, peer["parents"])
    rows.append({"case": "pgmpy HillClimbSearch ALARM in-degree 2, fresh process",
                 "wall_s": wall, "bic": peer_bic})
    print(f"{rows[-1]['case']}: {wall:.2f} s, BIC {peer_bic:.1f}")
    dna = ""
    if not args.quick:
        load_table("dna")
        cold_cache = folder / "numba-cache-dna"
        cold_env = dict(env, NUMBA_CACHE_DIR=str(cold_cache))
        _, printed = run([PYTHON, "-c", LEARN_IN_PROCESS, "dna", "3", "5", "cold"], cold_env)
        cold = json.loads(printed)
        _, printed = run([PYTHON, "-c", LEARN_IN_PROCESS, "dna", "3", "5", "warm"], env)
        hot = json.loads(printed)
        for name, res in [("empty cache, fresh process", cold), ("warm process", hot)]:
            rows.append({"case": f"bounded.learn dna k=3 time_limit=5, {name}",
                         "wall_s": res["seconds"], "bic": res["score"]})
            print(f"{rows[-1]['case']}: {res['seconds']:.1f} s ({res['compile']:.1f} s "
                  f"compiling), BIC {res['score']:.1f}, {res['arcs']} arcs")
        gap = 100 * (hot["score"] - cold["score"]) / abs(hot["score"])
        dna = f"; dna k=3 5 s: cold {cold['score']:.0f} vs warm {hot['score']:.0f} ({gap:+.2f} %)"
    if args.save:
        pd.DataFrame(rows).to_csv(args.save, index=False)
    cold_bic, warm_cache_bic = rows[0]["bic"], rows[1]["bic"]
    print(f"cold start, ALARM k=2 --time-limit 1: BIC {cold_bic:.1f} (warm process at 0.5 s: "
          f"{warm['score']:.1f}; pgmpy hill climbing {peer_bic:.1f}); warm-cache command "
          f"{warm_wall:.2f} s (target 2.5){dna}")


if __name__ == "__main__":
    main()
