"""Command line: ``python -m twlib ...`` or ``twlib ...``.

    twlib sample NETWORK N [--seed S] [--out FILE]      rows from a BIF file or bnlearn name
    twlib score DATA [--score bdeu|bic|ll] [--ess E] [--max-parents K] [--out FILE]
        parent-set scores of a data file (.csv or GOBNILP .dat) in GOBNILP's score format
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import datasets
from .data import Dataset
from .io import bif, dat
from .scores import SCORES, ParentSetScores

__all__ = ["main"]


def _network(spec: str):
    path = Path(spec)
    return bif.read(path) if path.exists() else datasets.load_network(spec)


def _data(spec: str) -> Dataset:
    path = Path(spec)
    if path.suffix == ".dat":
        return dat.read(path)
    return Dataset.from_csv(path)


def _sample(args) -> None:
    ds = _network(args.network).sample(args.n, random_state=args.seed)
    if args.out and args.out.endswith(".dat"):
        dat.write(ds, args.out)
    else:
        ds.to_pandas().to_csv(args.out or sys.stdout, index=False)


def _score(args) -> None:
    pss = ParentSetScores(_data(args.data), score=args.score, ess=args.ess,
                          max_parents=args.max_parents)
    out = args.out or "/dev/stdout"
    pss.to_file(out)
    print(f"{pss}", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="twlib", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample", help="draw rows from a network by ancestral sampling")
    s.add_argument("network", help="a .bif/.bif.gz file or a bnlearn network name")
    s.add_argument("n", type=int)
    s.add_argument("--seed", type=int, default=None)
    s.add_argument("--out", help="output file (.csv or .dat); default: CSV on stdout")
    s.set_defaults(run=_sample)
    c = sub.add_parser("score", help="write the parent-set scores of a data file")
    c.add_argument("data", help="a .csv (header row) or GOBNILP .dat file")
    c.add_argument("--score", choices=SCORES, default="bdeu")
    c.add_argument("--ess", type=float, default=1.0)
    c.add_argument("--max-parents", type=int, default=3)
    c.add_argument("--out", help="score file to write; default: stdout")
    c.set_defaults(run=_score)
    args = ap.parse_args(argv)
    try:
        args.run(args)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        print(f"twlib {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0
