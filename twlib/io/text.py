"""Reading text files that may be gzip-compressed, and refusing what is not text.

Every reader in :mod:`twlib.io` (and :meth:`twlib.data.Dataset.from_csv`) goes
through :func:`read_text`, so any format can be given as ``name.ext`` or
``name.ext.gz`` (the data bundled in the repository is stored compressed), and
a binary file, a file in another encoding or an empty file is a
:class:`~twlib.errors.FormatError` that says so, never a decoding traceback.
:func:`read_table` adds the checks of a data table: a header and at least one
row, every row as long as the header.

>>> import gzip, pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = gzip.open(folder / "a.txt.gz", "wt").write("hello")
>>> read_text(folder / "a.txt.gz")
'hello'
>>> read_text(folder / "a.txt")            # the compressed twin is found
'hello'
>>> _ = (folder / "t.csv").write_text("a,b\\n1,2\\n3\\n")
>>> read_table(folder / "t.csv")
Traceback (most recent call last):
...
twlib.errors.FormatError: ...t.csv:3: 1 field where the header has 2
"""
from __future__ import annotations

import csv
import gzip
import io
import zlib
from pathlib import Path

from ..errors import DataNotFound, FormatError

__all__ = ["read_text", "read_table", "resolve", "plain_name"]

# Bytes looked at for NUL characters: text files have none, binary ones soon do.
_SNIFF = 8192


def resolve(path) -> Path:
    """``path`` if it exists, else ``path.gz`` if that exists; otherwise FileNotFoundError."""
    path = Path(path)
    if path.exists():
        return path
    packed = path.with_name(path.name + ".gz")
    if packed.exists():
        return packed
    raise DataNotFound(f"no such file: {path} (nor {packed.name})")


def read_text(path, *, encoding: str = "utf-8") -> str:
    """The text of ``path`` (or of ``path.gz``), decompressed when the name ends in ``.gz``.

    Raises FormatError for a directory, an empty or binary file, a broken gzip
    stream, or bytes that are not ``encoding`` (with the line and column of
    the first bad byte)."""
    path = resolve(path)
    if path.is_dir():
        raise FormatError(f"{path}: a directory, not a file")
    raw = path.read_bytes()
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as err:
            raise FormatError(f"{path}: not a readable gzip file ({err})") from None
    if not raw.strip():
        raise FormatError(f"{path}: the file is empty")
    nul = raw.find(b"\0", 0, _SNIFF)
    if nul >= 0 and not encoding.lower().replace("-", "").startswith("utf16"):
        raise FormatError(f"{path}: a binary file, not text (a NUL byte at offset {nul})")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        raise FormatError(f"{path}:{line}: not {encoding} text: byte 0x{raw[err.start]:02x} "
                          f"at column {column}; convert the file to {encoding} or name its "
                          f"encoding") from None
    except LookupError:
        raise FormatError(f"unknown text encoding {encoding!r}") from None


def read_table(path, *, encoding: str = "utf-8", sep: str = ",", **read_csv):
    """A delimited table with a header row as a pandas DataFrame.

    Beyond :func:`read_text`'s checks: the header must be followed by at least
    one row, and every non-blank row must have as many fields as the header
    (pandas would fill a short row with missing cells).  Other keywords go to
    :func:`pandas.read_csv`."""
    import pandas as pd

    text = read_text(path, encoding=encoding)
    lines = csv.reader(io.StringIO(text), delimiter=sep)
    header = next(lines)
    rows = 0
    for row in lines:
        if not row:             # a blank line
            continue
        rows += 1
        if len(row) != len(header):
            raise FormatError(f"{path}:{lines.line_num}: {len(row)} field"
                              f"{'s' if len(row) != 1 else ''} where the header has "
                              f"{len(header)}")
    if rows == 0:
        raise FormatError(f"{path}: a header ({len(header)} columns) but no rows")
    try:
        return pd.read_csv(io.StringIO(text), sep=sep, **read_csv)
    except (pd.errors.ParserError, ValueError) as err:
        raise FormatError(f"{path}: {err}") from None


def plain_name(path) -> str:
    """The file name without a trailing ``.gz``: ``"x.uai.gz"`` -> ``"x.uai"``."""
    name = Path(path).name
    return name[:-3] if name.endswith(".gz") else name
