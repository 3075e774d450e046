"""Command line: ``python -m twlib ...`` or ``twlib ...``.

    twlib sample NETWORK N [--seed S] [--out FILE]      rows from a BIF file or bnlearn name
    twlib score DATA [--score bdeu|bic|ll] [--ess E] [--max-parents K] [--out FILE]
        parent-set scores of a data file (.csv or GOBNILP .dat) in GOBNILP's score format
    twlib uai MODEL.uai EVIDENCE.evid SEED MAR [--memory-gb G]
        the UAI competition's solver convention: exact marginals into ./MODEL.uai.MAR
        (MODEL.uai.gz and EVIDENCE.evid.gz are read too)

Exit codes: 0 done; 2 bad input (a malformed file, an unknown name, an invalid
option: any :class:`twlib.errors.TwlibError` but a budget one, or a missing
file); 3 over a memory or state budget (:class:`twlib.errors.BudgetExceeded`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import datasets
from .data import Dataset
from .errors import BudgetExceeded, InputError, TwlibError
from .inference import JunctionTree
from .io import bif, dat, uai
from .io.text import plain_name
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


def _uai(args) -> None:
    if args.task != "MAR":
        raise InputError(f"only the MAR task is supported, got {args.task!r}")
    model = uai.read(args.model)
    evidence = uai.read_evidence(args.evidence)
    tree = JunctionTree(model, max_memory_gb=args.memory_gb)
    posteriors = tree.posteriors(evidence)
    out = Path(plain_name(args.model) + ".MAR")
    uai.write_mar(out, posteriors, model.variables)
    print(f"{out}: {len(model.variables)} marginals (width {tree.width})", file=sys.stderr)


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
    u = sub.add_parser("uai", help="UAI competition convention: write MODEL.uai.MAR here")
    u.add_argument("model")
    u.add_argument("evidence")
    u.add_argument("seed", type=int, help="accepted for the harness; exact inference ignores it")
    u.add_argument("task", help="MAR")
    u.add_argument("--memory-gb", type=float, default=4.0,
                   help="refuse (exit 3) when exact inference needs more (default 4)")
    u.set_defaults(run=_uai)
    args = ap.parse_args(argv)
    try:
        args.run(args)
    except BudgetExceeded as exc:
        print(f"twlib {args.command}: {exc}", file=sys.stderr)
        return 3
    except (TwlibError, FileNotFoundError) as exc:
        print(f"twlib {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0
