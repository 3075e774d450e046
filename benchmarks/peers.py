"""Shared set-up for the peer libraries the benchmarks time against."""
from __future__ import annotations

import warnings


def pgmpy_frame(ds):
    """``(DataFrame of state labels, state_names)`` as pgmpy's estimators expect them,
    with every state listed even if the sample never shows it."""
    frame = ds.to_pandas().astype(str)
    return frame, {v: ds.states[i] for i, v in enumerate(ds.names)}


def quiet_import(module: str, *names):
    """Import names from a peer module with its import-time warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = __import__(module, fromlist=list(names))
    return [getattr(mod, n) for n in names]


def run_blip(ds, k: int, seconds: float, solver: str = "kmax", workdir=None, seed: int = 1):
    """Run BLIP (``$BLIP_JAR``) on a Dataset: parent-set identification for
    ``seconds``, then ``solver.<solver>`` with bound ``k`` for ``seconds``.

    Returns ``(parents, solver_seconds)`` with parents named as in ``ds``, or
    None when ``BLIP_JAR`` is unset.  BLIP optimises its own smoothed BIC, so
    score the structure with twlib (textbook BIC) to compare.
    """
    import os
    import re
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    jar = os.environ.get("BLIP_JAR")
    if not jar:
        return None
    work = Path(workdir or tempfile.mkdtemp(prefix="blip-"))
    work.mkdir(parents=True, exist_ok=True)
    dat, jkl, res = work / "data.dat", work / "data.jkl", work / f"{solver}.w{k}.res"
    if not jkl.exists():
        with open(dat, "w") as fh:
            fh.write(" ".join(f"N{j}" for j in range(ds.n_vars)) + "\n")
            fh.write(" ".join(str(int(r)) for r in ds.arities) + "\n")
            for row in ds.values:
                fh.write(" ".join(map(str, row.tolist())) + "\n")
        subprocess.run(["java", "-Xmx8g", "-jar", jar, "scorer.is", "-d", str(dat), "-j", str(jkl),
                        "-t", str(round(seconds)), "-b", "1", "-c", "bic", "-seed", str(seed)],
                       check=True, capture_output=True)
        if not jkl.exists():
            raise RuntimeError(f"BLIP scorer.is wrote no {jkl}")
    started = time.perf_counter()
    subprocess.run(["java", "-Xmx8g", "-jar", jar, f"solver.{solver}", "-w", str(k), "-j", str(jkl),
                    "-r", str(res), "-t", str(round(seconds)), "-b", "1", "-seed", str(seed)],
                   check=True, capture_output=True)
    wall = time.perf_counter() - started
    if not res.exists():
        raise RuntimeError(f"BLIP solver.{solver} wrote no {res}")
    parents = {v: [] for v in ds.names}
    pattern = re.compile(r"^\s*(\d+):\s*\S+\s*(?:\(([\d,\s]*)\))?\s*$")
    for line in res.read_text().splitlines():
        m = pattern.match(line)
        if m and m.group(2) and m.group(2).strip():
            parents[ds.names[int(m.group(1))]] = [ds.names[int(p)] for p in m.group(2).split(",")]
    return parents, wall
