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
