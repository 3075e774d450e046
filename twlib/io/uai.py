"""The UAI inference-competition formats: models (``.uai``), evidence (``.evid``),
marginal solutions (``.MAR``), MAP solutions (``.MAP``: one state per variable)
and partition functions (``.PR``: ``log10 P(e)``).

A model file holds ``MARKOV`` or ``BAYES``, the number of variables, their
numbers of states, the number of factors, each factor's scope, and then each
factor's table (the last variable of a scope varies fastest).  In ``BAYES``
files the last variable of a scope is the child of a CPT.

>>> text = "MARKOV\\n2\\n2 2\\n1\\n2 0 1\\n4\\n1 2 3 4\\n"
>>> model = loads(text)
>>> model.factors[0].values.tolist()
[[1.0, 2.0], [3.0, 4.0]]
"""
from __future__ import annotations

import math

from pathlib import Path

import numpy as np

from ..errors import DataNotFound, FormatError
from ..factors import Factor, FactorModel
from .text import plain_name, read_text, resolve

__all__ = ["read", "loads", "dumps", "write", "read_evidence", "read_mar", "write_mar", "read_map", "write_map",
           "read_pr", "write_pr", "UAIError"]


class UAIError(FormatError):
    """A malformed UAI file; the message gives the token position."""


class _Tokens:
    def __init__(self, text: str, source: str):
        self.items = text.split()
        self.pos = 0
        self.source = source

    def next(self, what: str):
        if self.pos >= len(self.items):
            raise UAIError(f"{self.source}: file ends early (token {self.pos}), expected {what}")
        tok = self.items[self.pos]
        self.pos += 1
        return tok

    def integer(self, what: str) -> int:
        tok = self.next(what)
        try:
            return int(tok)
        except ValueError:
            raise UAIError(f"{self.source}: token {self.pos - 1} is {tok!r}, expected {what}") from None

    def numbers(self, count: int, what: str) -> np.ndarray:
        if self.pos + count > len(self.items):
            raise UAIError(f"{self.source}: file ends inside {what} (token {len(self.items)}): "
                           f"{count} entries expected, {len(self.items) - self.pos} left")
        try:
            out = np.array(self.items[self.pos:self.pos + count], dtype=float)
        except ValueError:
            raise UAIError(f"{self.source}: non-numeric entry in {what} "
                           f"(tokens {self.pos}..{self.pos + count - 1})") from None
        self.pos += count
        return out


def loads(text: str, *, source: str = "<string>") -> FactorModel:
    """Parse a UAI model; variables are named ``"0" .. "n-1"``, states ``"0" .. "r-1"``."""
    tok = _Tokens(text, source)
    kind = tok.next("MARKOV or BAYES").upper()
    if kind not in ("MARKOV", "BAYES"):
        raise UAIError(f"{source}: first token is {kind!r}, expected MARKOV or BAYES")
    n = tok.integer("the number of variables")
    cards = [tok.integer(f"the number of states of variable {i}") for i in range(n)]
    if any(c < 1 for c in cards):
        raise UAIError(f"{source}: every variable needs at least one state")
    n_factors = tok.integer("the number of factors")
    scopes = []
    for f in range(n_factors):
        size = tok.integer(f"the scope size of factor {f}")
        scope = [tok.integer(f"a variable of factor {f}") for _ in range(size)]
        bad = [v for v in scope if not 0 <= v < n]
        if bad:
            raise UAIError(f"{source}: factor {f} names variables {bad} outside 0..{n - 1}")
        scopes.append(scope)
    factors = []
    for f, scope in enumerate(scopes):
        start = tok.pos
        count = tok.integer(f"the table size of factor {f}")
        expected = int(np.prod([cards[v] for v in scope], dtype=np.int64))
        if count != expected:
            raise UAIError(f"{source}: factor {f} (token {start}) declares {count} entries, but its "
                           f"scope {scope} has {expected} joint states")
        values = tok.numbers(count, f"the table of factor {f}")
        if np.any(values < 0):
            raise UAIError(f"{source}: factor {f} has negative entries")
        factors.append(Factor(tuple(str(v) for v in scope),
                              values.reshape([cards[v] for v in scope])))
    names = [str(i) for i in range(n)]
    model = FactorModel(names, {v: [str(k) for k in range(c)] for v, c in zip(names, cards)},
                        factors, name=plain_name(source))
    model.kind = kind
    return model


def dumps(model) -> str:
    """A Bayesian network or factor model as ``MARKOV`` text (variables in the
    model's order, a factor per CPT or factor), for solvers that read UAI files.

    >>> from twlib.datasets import load_network
    >>> again = loads(dumps(load_network("asia")))
    >>> len(again.variables), len(again.factors)
    (8, 8)
    """
    from ..factors import as_factor_model

    model = as_factor_model(model)
    index = {v: k for k, v in enumerate(model.variables)}
    lines = ["MARKOV", str(len(model.variables)),
             " ".join(str(model.arity(v)) for v in model.variables), str(len(model.factors))]
    lines += [" ".join(map(str, [len(f.variables)] + [index[v] for v in f.variables]))
              for f in model.factors]
    for f in model.factors:
        values = np.asarray(f.values, dtype=float).ravel()
        lines += ["", str(values.size), " ".join(repr(float(x)) for x in values)]
    return "\n".join(lines) + "\n"


def write(path, model) -> None:
    """Write ``model`` as a ``.uai`` file (see :func:`dumps`)."""
    Path(path).write_text(dumps(model))


def read(path) -> FactorModel:
    """A ``.uai`` model file (or ``.uai.gz``)."""
    try:
        path = resolve(path)
    except FileNotFoundError:
        raise DataNotFound(f"no such UAI model: {path}") from None
    return loads(read_text(path), source=str(path))


def read_evidence(path) -> dict:
    """Evidence of a ``.evid`` file as ``{variable name: state index}``.

    Accepts the 2014 form (``N v1 x1 ...``) and the older one with a leading
    count of evidence samples (the first sample is used).
    """
    items = read_text(path).split()
    if not items:
        return {}
    numbers = [int(x) for x in items]
    if len(numbers) >= 2 and len(numbers) == 2 + 2 * numbers[1] and numbers[0] == 1:
        numbers = numbers[1:]
    n = numbers[0]
    if len(numbers) < 1 + 2 * n:
        raise UAIError(f"{path}: {n} observations announced but {len(numbers) - 1} numbers follow")
    return {str(numbers[1 + 2 * i]): numbers[2 + 2 * i] for i in range(n)}


def write_mar(path, marginals: dict, variables) -> None:
    """Write marginals in the competition's MAR format."""
    parts = ["MAR", str(len(variables))]
    for v in variables:
        p = np.asarray(marginals[v], dtype=float)
        parts.append(" ".join([str(len(p))] + [f"{x:.10g}" for x in p]))
    Path(path).write_text(parts[0] + "\n" + " ".join(parts[1:]) + "\n")


def read_mar(path) -> list:
    """Marginals of a ``.MAR`` file as a list of arrays (one per variable)."""
    items = read_text(path).split()
    if not items or items[0] != "MAR":
        raise UAIError(f"{path}: expected a MAR header")
    n, pos, out = int(items[1]), 2, []
    for _ in range(n):
        k = int(items[pos])
        out.append(np.array(items[pos + 1:pos + 1 + k], dtype=float))
        pos += 1 + k
    return out


def write_pr(path, log_z: float) -> None:
    """Write ``log P(e)`` (natural log) in the competition's PR format, which
    holds its base-10 logarithm."""
    Path(path).write_text(f"PR\n{log_z / math.log(10):.12g}\n")


def read_pr(path) -> float:
    """The natural log of ``P(e)`` (or ``Z(e)``) in a ``.PR`` file.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.PR")
    >>> write_pr(path, -2.5)
    >>> round(read_pr(path), 6)
    -2.5
    """
    items = read_text(path).split()
    if len(items) < 2 or items[0] != "PR":
        raise UAIError(f"{path}: expected a PR header and one number")
    return float(items[1]) * math.log(10)


def write_map(path, states) -> None:
    """Write an assignment (one state index per variable) in the competition's MAP
    format."""
    states = [int(k) for k in states]
    Path(path).write_text("MAP\n" + " ".join(map(str, [len(states)] + states)) + "\n")


def read_map(path) -> np.ndarray:
    """The assignment of a ``.MAP`` file as an int array (one state per variable).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "m.MAP")
    >>> write_map(path, [1, 0, 2])
    >>> read_map(path).tolist()
    [1, 0, 2]
    """
    items = read_text(path).split()
    if not items or items[0] != "MAP":
        raise UAIError(f"{path}: expected a MAP header")
    n = int(items[1])
    if len(items) < 2 + n:
        raise UAIError(f"{path}: {n} states announced but {len(items) - 2} follow")
    return np.array(items[2:2 + n], dtype=np.int64)
