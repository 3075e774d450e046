"""The one exception family of twlib.

Every error the library raises on purpose derives from :class:`TwlibError`, so
``except twlib.errors.TwlibError`` catches them all.  Each branch also derives
from the built-in exception a Python user would expect, so existing
``except ValueError`` / ``except MemoryError`` code keeps working:

========================  =========================  ======================================
class                     also a                     raised when
========================  =========================  ======================================
``InputError``            ``ValueError``             an argument or data value is invalid
``UnknownName``           ``InputError, KeyError``   a variable or state name is unknown
``WrongType``             ``InputError, TypeError``  an argument has the wrong type
``FormatError``           ``InputError``             a file is malformed (names file, line)
``ZeroEvidenceError``     ``InputError``             the evidence has probability zero
``BudgetExceeded``        ``MemoryError``            a computation would pass its budget
``MemoryBudgetExceeded``  ``BudgetExceeded``         exact inference would pass its memory
``DataNotFound``          ``FileNotFoundError``      a file or bundled data set is absent
``InternalError``         ``AssertionError``         a self-check failed (a bug: report it)
========================  =========================  ======================================

>>> import twlib
>>> try:
...     twlib.datasets.load_network("no-such-network")
... except TwlibError as exc:
...     print(type(exc).__name__)
DataNotFound
"""
from __future__ import annotations

__all__ = ["TwlibError", "InputError", "UnknownName", "WrongType", "FormatError",
           "ZeroEvidenceError", "BudgetExceeded", "MemoryBudgetExceeded", "DataNotFound",
           "InternalError"]


class TwlibError(Exception):
    """Base of every error twlib raises on purpose."""


class InputError(TwlibError, ValueError):
    """An argument or a data value is invalid; the message names it."""


class UnknownName(InputError, KeyError):
    """A variable, state or parent set is not known to the object asked."""

    def __str__(self):          # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class WrongType(InputError, TypeError):
    """An argument has a type the function does not take."""


class FormatError(InputError):
    """A malformed file (BIF, UAI, ``.dat``, score file); the message names file and place."""


class ZeroEvidenceError(InputError):
    """The evidence has probability zero under the model, so no posterior exists."""


class BudgetExceeded(TwlibError, MemoryError):
    """The computation would need more memory (or search states) than its budget allows."""


class MemoryBudgetExceeded(BudgetExceeded):
    """Exact inference would need more memory than allowed."""


class DataNotFound(TwlibError, FileNotFoundError):
    """A file or a bundled data set is absent; the message says where we looked."""


class InternalError(TwlibError, AssertionError):
    """A self-check of a result failed: a bug in twlib, please report it."""
