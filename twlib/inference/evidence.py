"""Evidence: what is observed, checked against the network once for every method."""
from __future__ import annotations

import numpy as np

from ..errors import InputError, UnknownName, ZeroEvidenceError

__all__ = ["evidence_indices", "likelihoods"]


def evidence_indices(net, evidence) -> dict:
    """Evidence ``{variable: state label or index}`` checked against ``net`` and
    turned into state indices.

    >>> from twlib.datasets import load_network
    >>> evidence_indices(load_network("asia"), {"smoke": "yes"})
    {'smoke': 0}
    """
    out = {}
    for v, s in (evidence or {}).items():
        if v not in net.variables:
            raise UnknownName(f"evidence on unknown variable {v!r}")
        states = net.states(v)
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            if not 0 <= s < len(states):
                raise InputError(f"state index {s} out of range for {v!r} ({len(states)} states)")
            out[v] = int(s)
        elif s in states:
            out[v] = states.index(s)
        else:
            raise InputError(f"unknown state {s!r} of {v!r}; its states are {states}")
    return out


def likelihoods(net, soft_evidence) -> dict:
    """Soft (virtual) evidence ``{variable: weights}``, one non-negative finite
    weight per state of the variable, checked and turned into float arrays.

    >>> from twlib.datasets import load_network
    >>> likelihoods(load_network("asia"), {"xray": [0.8, 0.2]})
    {'xray': array([0.8, 0.2])}
    """
    out = {}
    for v, weights in (soft_evidence or {}).items():
        if v not in net.variables:
            raise UnknownName(f"soft evidence on unknown variable {v!r}")
        try:
            w = np.asarray(weights, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"soft evidence on {v!r} must be numbers, got {weights!r}") from None
        if w.shape != (net.arity(v),):
            raise InputError(f"soft evidence on {v!r} needs {net.arity(v)} weights, one per "
                             f"state {net.states(v)}; got shape {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise InputError(f"soft evidence weights must be finite and non-negative; "
                             f"{v!r} has {w.tolist()}")
        if not w.any():
            raise ZeroEvidenceError(f"soft evidence on {v!r} gives every state weight 0")
        out[v] = w
    return out
