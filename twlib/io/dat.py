"""GOBNILP's ``.dat`` data format (Rosland 2019, section 4.2).

Line 1: the variable names; line 2: their numbers of states; then one line per
row of state labels, all separated by single spaces.

>>> import pandas as pd
>>> from twlib.data import Dataset
>>> ds = Dataset.from_pandas(pd.DataFrame({"a": ["x", "y"], "b": [0, 1]}))
>>> print(dumps(ds))
a b
2 2
x 0
y 1
<BLANKLINE>
>>> loads(dumps(ds)).values.tolist()
[[0, 0], [1, 1]]
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..data import Dataset
from ..errors import FormatError, InputError
from .text import read_text

__all__ = ["read", "write", "loads", "dumps"]


def dumps(data: Dataset) -> str:
    for name, states in zip(data.names, data.states):
        for token in [name] + list(states):
            if not token or any(ch.isspace() for ch in token):
                raise InputError(f"{token!r} (variable {name!r}) holds whitespace and cannot be "
                                 "written to a .dat file")
    labels = [np.array(s, dtype=object) for s in data.states]
    lines = [" ".join(data.names), " ".join(str(a) for a in data.arities)]
    columns = [labels[j][data.values[:, j]] for j in range(data.n_vars)]
    lines += [" ".join(row) for row in zip(*columns)]
    return "\n".join(lines) + "\n"


def loads(text: str, *, source: str = "<string>") -> Dataset:
    lines = [ln.split() for ln in text.splitlines()]
    if len(lines) < 3:
        raise FormatError(f"{source}: a .dat file needs a names line, an arities line and data rows")
    names, arities = lines[0], lines[1]
    if len(arities) != len(names) or not all(a.isdigit() for a in arities):
        raise FormatError(f"{source}, line 2: expected {len(names)} integer arities, got {arities}")
    rows = []
    for no, row in enumerate(lines[2:], start=3):
        if not row:
            continue
        if len(row) != len(names):
            raise FormatError(f"{source}, line {no}: {len(row)} values for {len(names)} variables")
        rows.append(row)
    if not rows:
        raise FormatError(f"{source}: the names and arities lines but no data rows")
    table = np.array(rows, dtype=object)
    values, states = np.zeros(table.shape, dtype=np.int64), []
    for j, name in enumerate(names):
        labels = sorted(set(table[:, j]), key=lambda s: (not s.lstrip("-").isdigit(),
                                                         int(s) if s.lstrip("-").isdigit() else 0, s))
        if len(labels) > int(arities[j]):
            raise FormatError(f"{source}: variable {name!r} shows {len(labels)} states but "
                              f"line 2 declares {arities[j]}")
        # states declared but never observed get placeholder labels
        labels += [f"s{k}" for k in range(len(labels), int(arities[j]))]
        index = {s: k for k, s in enumerate(labels)}
        values[:, j] = [index[s] for s in table[:, j]]
        states.append(labels)
    return Dataset(values, names, states)


def read(path) -> Dataset:
    """A ``.dat`` file (or ``.dat.gz``) as a Dataset."""
    return loads(read_text(path), source=str(path))


def write(data: Dataset, path) -> None:
    Path(path).write_text(dumps(data))
