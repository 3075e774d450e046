"""Search time, and stopping a search on Ctrl-C: the clock every anytime learner reads.

A fresh process spends seconds compiling numba kernels (or loading them from
numba's cache) on their first call.  :func:`now` is wall time less those
seconds, so a ``time_limit`` buys the same search in a cold process as in a
warm one; :func:`compile_seconds` says how much was set aside, and learners
report it as ``stats["compile_seconds"]``.

:func:`interruptible` turns the first SIGINT (Ctrl-C) into a request that the
searches inside it see at their next look at the clock (:func:`expired`): they
stop and return their best network with status ``"interrupted"`` instead of
raising from the middle of a compiled kernel.  A second Ctrl-C raises
:class:`KeyboardInterrupt` at once.

>>> start = now()
>>> with interruptible():
...     expired(start + 60.0), interrupted()
(False, False)
"""
from __future__ import annotations

import numbers
import signal
import threading
import time
from contextlib import contextmanager

from numba.core import event

from .errors import InputError

__all__ = ["now", "compile_seconds", "remaining", "expired", "interruptible", "interrupted", "request_stop",
           "check_time_limit", "overrun_allowance"]


class _CompilerTimer(event.Listener):
    """Seconds during which some thread held or awaited numba's compiler lock
    (compilation and cache loading both happen under it)."""

    def __init__(self):
        self.depth = 0
        self.since = 0.0
        self.total = 0.0

    def on_start(self, ev):
        if self.depth == 0:
            self.since = time.perf_counter()
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0:
            self.total += time.perf_counter() - self.since

    def seconds(self) -> float:
        running = time.perf_counter() - self.since if self.depth else 0.0
        return self.total + running


_TIMER = _CompilerTimer()
event.register("numba:compiler_lock", _TIMER)

_STOP = threading.Event()
_scopes = 0
_previous = None


def compile_seconds() -> float:
    """Seconds this process has spent compiling or loading numba kernels."""
    return _TIMER.seconds()


def now() -> float:
    """Search time in seconds: ``time.perf_counter()`` less :func:`compile_seconds`."""
    return time.perf_counter() - _TIMER.seconds()


def remaining(time_limit: float, started: float) -> float:
    """What is left of ``time_limit`` seconds since ``started`` (a :func:`now`
    reading), at least a millisecond: the limit a later step gets when earlier
    ones (coding the data, cutting numeric columns) count against it.

    >>> remaining(10.0, now()) > 9.9, remaining(1.0, now() - 5.0)
    (True, 0.001)
    """
    return max(time_limit - (now() - started), 1e-3)


def interrupted() -> bool:
    """Whether a stop was requested (Ctrl-C inside :func:`interruptible`)."""
    return _STOP.is_set()


def expired(deadline: float) -> bool:
    """Whether the search must stop: ``deadline`` (in :func:`now` seconds) has passed
    or a stop was requested."""
    return _STOP.is_set() or now() >= deadline


def request_stop() -> None:
    """Ask every search inside :func:`interruptible` to stop at its next clock check
    (what the first Ctrl-C does; also for a solver that caught SIGINT itself)."""
    _STOP.set()


def _on_sigint(signum, frame):
    if _STOP.is_set():
        raise KeyboardInterrupt
    _STOP.set()


@contextmanager
def interruptible():
    """Within this block the first SIGINT requests a stop (see the module's
    docstring); the stop request is cleared when the outermost block ends.
    Outside the main thread, where Python cannot take signals, it changes nothing."""
    global _scopes, _previous
    main = threading.current_thread() is threading.main_thread()
    if main and _scopes == 0:
        _STOP.clear()
        _previous = signal.signal(signal.SIGINT, _on_sigint)
    _scopes += main
    try:
        yield
    finally:
        _scopes -= main
        if main and _scopes == 0:
            signal.signal(signal.SIGINT, _previous if _previous is not None
                          else signal.default_int_handler)
            _STOP.clear()


def overrun_allowance(time_limit: float) -> float:
    """Seconds an anytime search may run past ``time_limit``: a tenth of it, at least 2 s.

    Some steps cannot stop at any instant (a first climb that must reach its local
    optimum before a 1-second limit returns the start, fitting the result); they
    end by ``time_limit`` plus this allowance, whatever the table's size.

    >>> overrun_allowance(1.0), overrun_allowance(600.0)
    (2.0, 60.0)
    """
    return max(2.0, 0.1 * float(time_limit))


def check_time_limit(time_limit) -> None:
    """Raise InputError unless ``time_limit`` is a positive number of seconds.

    >>> check_time_limit(0)
    Traceback (most recent call last):
    ...
    twlib.errors.InputError: time_limit must be a positive number of seconds, got 0
    """
    number = not isinstance(time_limit, bool) and isinstance(time_limit, numbers.Real)
    if not (number and time_limit > 0):
        raise InputError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
