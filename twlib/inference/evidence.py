"""Evidence: what is observed, checked against the network once for every method."""
from __future__ import annotations

import numpy as np

from ..errors import InputError, UnknownName

__all__ = ["evidence_indices"]


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
