"""Command line: ``python -m twlib ...`` or ``twlib ...``.

    twlib learn DATA -k K --out MODEL.bif
        [--method auto|bounded|ktree|chow_liu|lpacjt|order_graph|ilp] [--score bic|bdeu|ll]
        [--ess E] [--time-limit S] [--seed S] [--progress] [--scheduler local|HOST:PORT]
        a network of tree-width <= K from a data file (.csv with a header, or .dat);
        CSV cells that are ?, NA or empty are missing and learned from by structural EM;
        --scheduler runs the parallel parts on a Dask cluster (twlib[scale]);
        [--bootstrap N [--arcs FILE]] also writes each arc's strength and direction
        over N bootstrap resamples (default file: OUT with .arcs.csv);
        Ctrl-C writes the best network found so far and exits with code 130;
        [--require A->B ...] [--forbid A->B ...] [--tiers FILE] [--knowledge FILE]:
        background knowledge (methods auto, bounded, order_graph, ilp)
    twlib query MODEL [--evidence A=x B=y ...] [--do C=z ...] [--target C ...]
                [--mpe | --map C ...] [--json]
        exact posteriors given evidence, and log P(evidence); --mpe: the most probable
        state of every variable; --map C ...: the most probable joint state of C ...,
        the others summed out (marginal MAP)
    twlib info MODEL                                    variables, arcs, tree-width, junction tree
    twlib sample NETWORK N [--seed S] [--out FILE]      rows from a BIF file or bnlearn name
    twlib score DATA [--score bdeu|bic|ll] [--ess E] [--max-parents K] [--out FILE]
        parent-set scores of a data file (.csv or GOBNILP .dat) in GOBNILP's score format
    twlib uai MODEL.uai EVIDENCE.evid SEED MAR|PR|MAP [--memory-gb G] [--time-limit S]
        the UAI competition's solver convention: marginals into ./MODEL.uai.MAR,
        log10 P(e) into ./MODEL.uai.PR, or the most probable assignment into
        ./MODEL.uai.MAP; when the junction tree passes G GiB, MAR and PR condition
        on a cutset (bounded if the runs do not finish in S s) and MAP searches by
        branch and bound on mini-bucket bounds (anytime within S s)
        (MODEL.uai.gz and EVIDENCE.evid.gz are read too)

Exit codes: 0 done; 2 bad input (a malformed file, an unknown name, an invalid
option: any :class:`twlib.errors.TwlibError` but a budget one, or a missing
file); 3 over a memory or state budget (:class:`twlib.errors.BudgetExceeded`);
130 interrupted (Ctrl-C; ``learn`` has written its best network).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import sys
import time
from pathlib import Path

from .errors import BudgetExceeded, InputError, TwlibError

__all__ = ["main", "run"]

# The modules a command needs are imported inside it: a short `twlib learn`
# should not spend a second loading inference, scikit-learn or SCIP.
#: Exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


def _network(spec: str):
    from . import datasets
    from .io import bif

    path = Path(spec)
    return bif.read(path) if path.exists() else datasets.load_network(spec)


def _data(spec: str):
    from .data import Dataset
    from .io import dat

    path = Path(spec)
    if path.suffix == ".dat":
        return dat.read(path)
    return Dataset.from_csv(path)


def _training_data(spec: str):
    """A .dat file as a Dataset; a CSV as a DataFrame in which ``?``, ``NA`` and
    empty cells are missing (the estimator learns from them by structural EM)."""
    from .io import dat, text

    path = Path(spec)
    if path.suffix == ".dat":
        return dat.read(path)
    return text.read_table(path, na_values=["?"])


def _dask_client(address: str | None):
    """A Dask client for ``--scheduler`` (``local``: a cluster of this machine's cores)."""
    if address is None:
        return contextlib.nullcontext(None)
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--scheduler needs Dask: pip install 'twlib[scale]'") from None
    if address == "local":
        return Client(dashboard_address=None)
    try:
        return Client(address, timeout="10s")
    except OSError as err:
        raise InputError(f"no Dask scheduler answers at {address!r}: {err}") from None


def _learn(args) -> int:
    from . import clock
    from .io import bif
    from .learn.methods import learn_by_name

    data = _training_data(args.data)
    cut = None
    if Path(args.data).suffix != ".dat":           # a CSV's raw columns
        from .discretize import for_learning

        data, cut = for_learning(data,
                                 discretize=None if args.discretize == "none" else args.discretize,
                                 n_bins=args.bins or "auto")
    knowledge = _knowledge(args)
    started = time.perf_counter()
    # One stop request for the whole run: Ctrl-C ends the search, which
    # returns its best network, and that network is written.
    with clock.interruptible(), _dask_client(args.scheduler) as client:
        res, _ = learn_by_name(data, args.k, method=args.method, score=args.score,
                               ess=args.ess, time_limit=args.time_limit,
                               random_state=args.seed, progress=args.progress,
                               executor=client, knowledge=knowledge)
    bif.write(res.network, args.out)
    bound = ("" if res.upper_bound is None
             else f", upper bound {res.upper_bound:.2f} (gap {res.gap_percent:.2f} %)")
    missing = res.stats.get("missing")
    how = "" if missing is None else f" (observed-data BIC, {missing:.1%} of cells missing)"
    compiled = res.stats.get("compile_seconds")
    setup = "" if not compiled else f" ({compiled:.1f} s of it compiling)"
    print(f"{args.out}: {args.score} {res.score:.2f}{how}, tree-width <= {res.width}{bound}, "
          f"{time.perf_counter() - started:.1f} s{setup}")
    if cut is not None:
        print(f"numeric columns cut by {cut.method} into intervals: "
              + "; ".join(f"{c} {len(cut.states_[c])}" for c in cut.cuts_))
    if res.status == "interrupted":
        print(f"twlib learn: interrupted; the best network found so far is in {args.out}",
              file=sys.stderr)
        return INTERRUPTED
    if args.bootstrap:
        _bootstrap(args, data)
    return 0


def _knowledge(args):
    """``--knowledge FILE``, ``--tiers FILE`` (a tier per line, earliest first),
    ``--require`` and ``--forbid`` arcs, as one Knowledge (None when none given)."""
    if not (args.knowledge or args.tiers or args.require or args.forbid):
        return None
    from .io.text import read_text
    from .knowledge import Knowledge

    base = Knowledge.from_file(args.knowledge) if args.knowledge else Knowledge()
    tiers = list(base.tiers)
    if args.tiers:
        for line in read_text(args.tiers).splitlines():
            names = line.split("#", 1)[0].replace(",", " ").split()
            if names:
                tiers.append(names)
    return Knowledge(required=base.required + list(args.require or []),
                     forbidden=base.forbidden + list(args.forbid or []), tiers=tiers,
                     forbid_within_tiers=base.forbid_within_tiers, no_parents=base.no_parents,
                     no_children=base.no_children, max_indegree=base.max_indegree)


def _bootstrap(args, data) -> None:
    """``learn --bootstrap N``: each arc's strength and direction over N resamples,
    learned like the network (bounded learner, the same k and score), as CSV."""
    from .learn.methods import training_data
    from .learn.resampling import bootstrap

    with _dask_client(args.scheduler) as client:
        boot = bootstrap(training_data(data, missing="error"), args.k, n_resamples=args.bootstrap,
                         score=args.score, ess=args.ess, random_state=args.seed,
                         executor=client, progress=args.progress)
    table = args.arcs or str(Path(args.out).with_suffix(".arcs.csv"))
    boot.arcs.to_csv(table, index=False)
    print(f"{table}: {len(boot.arcs)} arcs seen over {args.bootstrap} resamples; the "
          f"averaged network (strength >= {boot.threshold}) has {len(boot.network.arcs)} arcs, "
          f"tree-width <= {boot.width}")


def _evidence(pairs, what: str = "evidence") -> dict:
    evidence = {}
    for pair in pairs or ():
        name, sep, state = pair.partition("=")
        if not sep or not name or not state:
            raise InputError(f"{what} must look like VARIABLE=STATE, got {pair!r}")
        evidence[name] = state
    return evidence


def _explain(args, net, evidence) -> None:
    """``query --mpe`` and ``query --map``: an assignment and its log-probability."""
    from .inference import JunctionTree, marginal_map

    if args.map:
        answer = marginal_map(net, args.map, evidence, max_memory_gb=args.memory_gb)
        best, log_p = answer.assignment, answer.log_value
        kind = "marginal MAP"
    else:
        answer = JunctionTree(net, max_memory_gb=args.memory_gb).mpe(evidence)
        best, log_p = answer.assignment, answer.log_value
        kind = "MPE"
    if args.json:
        print(json.dumps({"evidence": evidence, "task": kind, "assignment": best,
                          "log_probability": log_p}, indent=1))
        return
    print(f"{kind}: log P(assignment, evidence) = {log_p:.6f}")
    print("  ".join(f"{v}={s}" for v, s in best.items()))


def _query(args) -> None:
    from .inference import JunctionTree
    from .inference.interventions import check_do_apart, intervene

    net = _network(args.model)
    evidence = _evidence(args.evidence)
    do = _evidence(args.do, "--do")
    if do:
        check_do_apart(do, evidence)
        net = intervene(net, do)
    if args.mpe or args.map:
        _explain(args, net, evidence)
        return
    tree = JunctionTree(net, max_memory_gb=args.memory_gb)
    targets = args.target or [v for v in net.variables if v not in evidence]
    unknown = [t for t in targets if t not in net.variables]
    if unknown:
        raise InputError(f"unknown target variables {unknown}")
    posts, log_pe = tree.posteriors_batch([evidence], variables=targets)
    answer = {"evidence": evidence, **({"do": do} if do else {}),
              "log_probability_of_evidence": float(log_pe[0]),
              "posteriors": {t: dict(zip(net.states(t), map(float, posts[t][0])))
                             for t in targets}}
    if args.json:
        print(json.dumps(answer, indent=1))
        return
    print(f"log P(evidence) = {answer['log_probability_of_evidence']:.6f}")
    for t, dist in answer["posteriors"].items():
        print(f"{t}: " + "  ".join(f"{s}={p:.6f}" for s, p in dist.items()))


def _info(args) -> None:
    from .graphs import moral_graph, treewidth_exact, treewidth_upper_bound
    from .inference import JunctionTree

    net = _network(args.model)
    moral = moral_graph(net.parent_map())
    moral.add_nodes_from(net.variables)
    width, order = treewidth_upper_bound(moral)
    kind = "upper bound of the greedy heuristics"
    if len(net.variables) <= 20:
        width, order = treewidth_exact(moral)
        kind = "exact"
    tree = JunctionTree(net, order=order, max_memory_gb=args.memory_gb)
    entries = tree.entries
    print(f"{net.name}: {len(net.variables)} variables, {len(net.arcs)} arcs, "
          f"{net.n_parameters} free parameters")
    print(f"tree-width {width} ({kind}); elimination order: {' '.join(order)}")
    print(f"junction tree: {len(tree.cliques)} cliques, {entries} table entries, "
          f"largest {max(t.size for t in tree.tables)}")


def _sample(args) -> None:
    from .io import dat

    ds = _network(args.network).sample(args.n, random_state=args.seed)
    if args.out and args.out.endswith(".dat"):
        dat.write(ds, args.out)
    else:
        ds.to_pandas().to_csv(args.out or sys.stdout, index=False)


def _score(args) -> None:
    from .scores import ParentSetScores

    pss = ParentSetScores(_data(args.data), score=args.score, ess=args.ess,
                          max_parents=args.max_parents)
    out = args.out or "/dev/stdout"
    pss.to_file(out)
    print(f"{pss}", file=sys.stderr)


def _uai(args) -> None:
    from .inference import most_probable_explanation, posterior_marginals
    from .io import uai
    from .io.text import plain_name

    if args.task not in ("MAR", "MAP", "PR"):
        raise InputError(f"the tasks are MAR, MAP and PR, got {args.task!r}")
    if not args.time_limit > 0:
        raise InputError(f"--time-limit must be positive, got {args.time_limit}")
    model = uai.read(args.model)
    evidence = uai.read_evidence(args.evidence)
    out = Path(plain_name(args.model) + "." + args.task)
    if args.task == "MAP":
        res = most_probable_explanation(model, evidence, max_memory_gb=args.memory_gb,
                                        time_limit=args.time_limit)
        uai.write_map(out, [model.states(v).index(res.assignment[v]) for v in model.variables])
        proof = ("optimal" if res.status == "optimal"
                 else f"{res.status}, bound {res.bound:.6f}, log gap {res.log_gap:.6f}")
        print(f"{out}: the most probable assignment, log P = {res.log_value:.6f} "
              f"(unnormalised; {res.method}; {proof})", file=sys.stderr)
        return
    res = posterior_marginals(model, evidence, max_memory_gb=args.memory_gb,
                              time_limit=args.time_limit)
    if args.task == "MAR":
        uai.write_mar(out, res.posteriors, model.variables)
        what = f"{len(model.variables)} marginals"
    else:
        uai.write_pr(out, res.log_z)
        what = f"log10 P(e) = {res.log_z / math.log(10):.6f}"
    if res.exact:
        print(f"{out}: {what} (exact; {res.method})", file=sys.stderr)
    else:
        low, high = (x / math.log(10) for x in res.log_z_bounds)
        widest = max(float((res.upper[v] - res.lower[v]).max()) for v in model.variables)
        print(f"{out}: {what}, estimated (bounded: log10 P(e) in [{low:.6f}, {high:.6f}], "
              f"marginals within {widest:.3g}; {res.method})", file=sys.stderr)


def main(argv=None) -> int:
    from .learn.methods import METHODS
    from .scores import SCORES

    ap = argparse.ArgumentParser(prog="twlib", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    le = sub.add_parser("learn", help="learn a network of bounded tree-width from data")
    le.add_argument("data", help="a .csv (header row) or GOBNILP .dat file")
    le.add_argument("-k", type=int, required=True, help="tree-width bound")
    le.add_argument("--out", required=True, help="BIF file to write")
    le.add_argument("--method", choices=METHODS, default="auto")
    le.add_argument("--score", choices=SCORES, default="bic")
    le.add_argument("--ess", type=float, default=1.0)
    le.add_argument("--time-limit", type=float, default=60.0)
    le.add_argument("--discretize", choices=("auto", "quantile", "uniform", "kmeans", "none"),
                    default="auto", help="how numeric columns are cut into intervals "
                    "(auto: quantile; none: refuse them)")
    le.add_argument("--bins", type=int, default=None, help="intervals per numeric column "
                    "(default: log2(rows) / 2, between 2 and 5)")
    le.add_argument("--seed", type=int, default=None)
    le.add_argument("--progress", action="store_true", help="a progress bar on stderr")
    le.add_argument("--scheduler", metavar="ADDRESS", default=None,
                    help="a Dask scheduler (HOST:PORT), or 'local' for a cluster of this machine")
    le.add_argument("--require", nargs="+", metavar="A->B", help="arcs the network must have")
    le.add_argument("--forbid", nargs="+", metavar="A->B", help="arcs it must not have")
    le.add_argument("--tiers", metavar="FILE",
                    help="a tier of variables per line, earliest first: no arc back in time")
    le.add_argument("--knowledge", metavar="FILE",
                    help="background knowledge, one constraint per line (twlib.knowledge)")
    le.add_argument("--bootstrap", type=int, metavar="N", default=0,
                    help="also learn on N bootstrap resamples and write each arc's strength "
                         "and direction (complete data only)")
    le.add_argument("--arcs", metavar="FILE",
                    help="where --bootstrap writes its arc table (default: OUT with .arcs.csv)")
    le.set_defaults(run=_learn)
    q = sub.add_parser("query", help="exact posteriors of a network given evidence")
    q.add_argument("model", help="a .bif/.bif.gz file or a bnlearn network name")
    q.add_argument("--evidence", nargs="*", metavar="VAR=STATE")
    q.add_argument("--target", nargs="*", help="variables to report (default: all unobserved)")
    q.add_argument("--do", nargs="*", metavar="VAR=STATE",
                   help="interventions: each variable is set, its parents cut (graph surgery)")
    q.add_argument("--json", action="store_true")
    task = q.add_mutually_exclusive_group()
    task.add_argument("--mpe", action="store_true",
                      help="the most probable explanation: a state for every variable")
    task.add_argument("--map", nargs="+", metavar="VAR",
                      help="marginal MAP: the most probable joint state of these variables")
    q.add_argument("--memory-gb", type=float, default=4.0)
    q.set_defaults(run=_query)
    i = sub.add_parser("info", help="variables, arcs, tree-width and junction-tree size")
    i.add_argument("model", help="a .bif/.bif.gz file or a bnlearn network name")
    i.add_argument("--memory-gb", type=float, default=4.0)
    i.set_defaults(run=_info)
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
    u = sub.add_parser("uai", help="UAI competition convention: write MODEL.uai.MAR or .MAP here")
    u.add_argument("model")
    u.add_argument("evidence")
    u.add_argument("seed", type=int, help="accepted for the harness; exact inference ignores it")
    u.add_argument("task", help="MAR (marginals), PR (log10 P(e)) or MAP (the most probable "
                                "assignment)")
    u.add_argument("--memory-gb", type=float, default=4.0,
                   help="past this the junction tree is not built: MAR and PR condition on a "
                        "cutset, MAP searches by branch and bound (default 4)")
    u.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds past the junction tree (default 60): MAP writes the best "
                        "assignment found, MAR and PR bounds when conditioning does not finish")
    u.set_defaults(run=_uai)
    args = ap.parse_args(argv)
    try:
        return args.run(args) or 0
    except KeyboardInterrupt:
        print(f"twlib {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BudgetExceeded as exc:
        print(f"twlib {args.command}: {exc}", file=sys.stderr)
        return 3
    except (TwlibError, FileNotFoundError) as exc:
        print(f"twlib {args.command}: error: {exc}", file=sys.stderr)
        return 2


def run() -> None:
    """The ``twlib`` command: :func:`main`, then exit with its code.

    Importing numba, pandas and networkx and loading cached kernels allocate
    hundreds of thousands of long-lived objects, and Python's default
    collector thresholds walk them again and again; with a first generation
    of 100,000 a short command starts faster.  The objects left at the end
    are frozen, so the interpreter's last collection skips them too."""
    gc.set_threshold(100_000, 50, 50)
    code = main()
    gc.freeze()
    sys.exit(code)
