"""The parallel parts of twlib on any ``concurrent.futures``-style executor.

Three pieces of work split into independent tasks: scoring the first rows of
candidate parents (one block of variables per task), the restarts of the
bounded learner's iterated local search, and batched inference over many
evidence sets (one chunk per task).  Each takes an ``executor=`` argument:

* ``None``: in this process, one task after another (the default);
* a ``concurrent.futures`` executor, e.g. ``ProcessPoolExecutor(2,
  mp_context=multiprocessing.get_context("spawn"))`` (spawned, not forked:
  numba's OpenMP runtime does not survive ``fork``);
* a Dask ``Client`` or its ``client.get_executor()`` (any machine of a
  cluster); Ray's executor works through the same ``submit`` interface.

The large object every task reads (the data, or a junction tree) travels once
per worker: Dask scatters it to every worker (``broadcast=True``) and tasks
receive a reference.  A plain executor has no scatter, so the work is then cut
into exactly one task per worker.  Results come back in task order, so they
are the same as the in-process run's.

>>> from concurrent.futures import ThreadPoolExecutor
>>> with ThreadPoolExecutor(2) as ex:
...     run_tasks(ex, pow, 2, [(3,), (10,)])     # pow(2, 3), pow(2, 10)
[8, 1024]
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed

from .errors import InputError

__all__ = ["run_tasks", "worker_count", "task_count", "blocks"]

# Tasks per Dask worker when the shared object is scattered (finer tasks balance load).
TASKS_PER_WORKER = 4


def _dask_client(executor):
    """The Dask client behind ``executor`` (a Client or its get_executor()), else None."""
    if type(executor).__module__.split(".")[0] != "distributed":
        return None
    return getattr(executor, "_client", executor)       # ClientExecutor keeps its client there


def _check(executor):
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise InputError(f"executor must be None or have a submit(fn, *args) method like "
                         f"concurrent.futures executors and Dask clients, got "
                         f"{type(executor).__name__}")
    context = getattr(executor, "_mp_context", None)
    if isinstance(executor, ProcessPoolExecutor) and context.get_start_method() == "fork":
        raise InputError("a ProcessPoolExecutor that forks its workers cannot run numba's "
                         "parallel kernels (their OpenMP runtime does not survive fork); create "
                         "it with mp_context=multiprocessing.get_context('spawn')")


def worker_count(executor) -> int:
    """How many tasks ``executor`` runs at once (1 for None).

    >>> worker_count(None)
    1
    """
    _check(executor)
    if executor is None:
        return 1
    client = _dask_client(executor)
    if client is not None:
        return max(1, sum(w.get("nthreads", 1)
                          for w in client.scheduler_info()["workers"].values()))
    return int(getattr(executor, "_max_workers", None) or os.cpu_count() or 1)


def task_count(executor) -> int:
    """How many tasks to cut a piece of work into for ``executor``: one per worker
    (so that the shared object travels once per worker), more on Dask, which
    scatters it.

    >>> task_count(None)
    1
    """
    if _dask_client(executor) is not None:
        return TASKS_PER_WORKER * worker_count(executor)
    return worker_count(executor)


def blocks(items, parts: int) -> list:
    """``items`` cut into at most ``parts`` contiguous lists of near-equal length.

    >>> blocks(range(5), 2)
    [[0, 1, 2], [3, 4]]
    """
    items = list(items)
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + size + (i < extra)
        out.append(items[start:stop])
        start = stop
    return out


def run_tasks(executor, fn, shared, args, *, progress=None) -> list:
    """``[fn(shared, *a) for a in args]``, on ``executor``'s workers when one is given.

    ``shared`` is sent once per worker (scattered on Dask); each ``a`` is a
    tuple or list of the task's own arguments.  ``progress`` is called with
    each task's result as it finishes (in any order).
    """
    _check(executor)
    args = [tuple(a) for a in args]
    if executor is None:
        results = []
        for a in args:
            results.append(fn(shared, *a))
            if progress is not None:
                progress(results[-1])
        return results
    client = _dask_client(executor)
    if client is not None:
        shared = client.scatter(shared, broadcast=True, hash=False)
        futures = [client.submit(fn, shared, *a, pure=False) for a in args]
    else:
        futures = [executor.submit(fn, shared, *a) for a in args]
    if progress is not None:
        if client is not None:
            from distributed import as_completed as dask_as_completed
            for fut in dask_as_completed(futures):
                progress(fut.result())
        else:
            for fut in as_completed(futures):
                progress(fut.result())
    return [fut.result() for fut in futures]
