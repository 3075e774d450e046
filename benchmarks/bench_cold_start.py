"""The first MPE of a fresh process: what loading twlib and its compiled kernels costs.

Each case runs in a new Python process (numba's on-disk cache as ``make``
leaves it, so kernels are loaded, not compiled, unless the cache is cold):
the seconds to import twlib, to read the instance, to answer the first MPE,
and the same MPE again in that process.  The first answer less the second is
the price of a cold process; ``compile_seconds`` is what twlib's clock set
aside as compiling or loading kernels (and did not count against the time
limit).  Cases: a bnlearn network by its junction tree, a UAI 2014 instance
that MPLP closes at the root, and one the branch and bound must search.

    python benchmarks/bench_cold_start.py [--quick]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

CASES = {"alarm": "network", "Segmentation_12": "uai", "Promedas_70": "uai", "wcsp_13": "uai"}
QUICK = ["alarm", "Segmentation_12"]

_CHILD = r"""
import json, sys, time
started = time.perf_counter()
import twlib
from twlib import clock, datasets
from twlib.inference import most_probable_explanation
imported = time.perf_counter()
name, kind = sys.argv[1], sys.argv[2]
if kind == "network":
    model, evidence = datasets.load_network(name), {}
else:
    instance = datasets.load_uai(name)
    model, evidence = instance.model, instance.evidence
read = time.perf_counter()
first = most_probable_explanation(model, evidence, time_limit=60)
answered = time.perf_counter()
compiled = clock.compile_seconds()
second = most_probable_explanation(model, evidence, time_limit=60)
again = time.perf_counter()
print(json.dumps({"import_s": imported - started, "read_s": read - imported,
                  "first_s": answered - read, "second_s": again - answered,
                  "compile_s": compiled, "method": first.method,
                  "equal": first.log_value == second.log_value}))
"""


def cold_run(name: str, kind: str) -> dict:
    """One fresh process answering ``name`` twice; its timings."""
    out = subprocess.run([sys.executable, "-c", _CHILD, name, kind], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two cases")
    args = ap.parse_args()
    names = QUICK if args.quick else list(CASES)
    print(f"{'case':16s} {'method':>28s} {'import s':>8s} {'read s':>7s} {'first s':>8s} "
          f"{'again s':>8s} {'cold s':>7s} {'kernels s':>9s}")
    colds = []
    for name in names:
        row = cold_run(name, CASES[name])
        cold = row["first_s"] - row["second_s"]
        colds.append((cold + row["import_s"], name))
        print(f"{name:16s} {row['method'][:28]:>28s} {row['import_s']:8.2f} {row['read_s']:7.2f} "
              f"{row['first_s']:8.2f} {row['second_s']:8.2f} {cold:7.2f} {row['compile_s']:9.2f}"
              f"{'' if row['equal'] else '  (answers differ!)'}", flush=True)
    worst = max(colds)
    print(f"bench_cold_start: a fresh process pays {worst[0]:.1f} s at most before its first MPE "
          f"({worst[1]}: import plus the first answer less the second)")


if __name__ == "__main__":
    main()
