"""Reading text files that may be gzip-compressed.

Every reader in :mod:`twlib.io` goes through :func:`read_text`, so any format
can be given as ``name.ext`` or ``name.ext.gz`` (the data bundled in the
repository is stored compressed).

>>> import gzip, pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = gzip.open(folder / "a.txt.gz", "wt").write("hello")
>>> read_text(folder / "a.txt.gz")
'hello'
>>> read_text(folder / "a.txt")            # the compressed twin is found
'hello'
"""
from __future__ import annotations

import gzip
from pathlib import Path

from ..errors import DataNotFound

__all__ = ["read_text", "resolve", "plain_name"]


def resolve(path) -> Path:
    """``path`` if it exists, else ``path.gz`` if that exists; otherwise FileNotFoundError."""
    path = Path(path)
    if path.exists():
        return path
    packed = path.with_name(path.name + ".gz")
    if packed.exists():
        return packed
    raise DataNotFound(f"no such file: {path} (nor {packed.name})")


def read_text(path, encoding: str = "utf-8") -> str:
    """The text of ``path`` (or of ``path.gz``), decompressed when the name ends in ``.gz``."""
    path = resolve(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding=encoding) as fh:
        return fh.read()


def plain_name(path) -> str:
    """The file name without a trailing ``.gz``: ``"x.uai.gz"`` -> ``"x.uai"``."""
    name = Path(path).name
    return name[:-3] if name.endswith(".gz") else name
