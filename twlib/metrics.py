"""Distances between inference results and test-set scores.

Posteriors are compared variable by variable; ``p`` is the reference (the
exact or data-generating model), ``q`` the approximation.  Mappings (dicts,
:class:`~twlib.inference.Marginals`) map variables to probability vectors; arrays may carry a leading batch axis.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .errors import InputError, UnknownName

__all__ = ["hellinger", "max_absolute_error", "kl_divergence", "absolute_error", "rmse",
           "test_log_likelihood"]


def _pairs(p, q):
    if isinstance(p, Mapping):             # a dict, or Marginals
        missing = set(p) - set(q)
        if missing:
            raise UnknownName(f"variables missing from the second result: {sorted(missing)[:5]}")
        return [(np.asarray(p[v], float), np.asarray(q[v], float)) for v in p]
    return [(np.asarray(p, float), np.asarray(q, float))]


def hellinger(p, q) -> float:
    """Hellinger distance ``sqrt(1/2 sum (sqrt p - sqrt q)^2)``, averaged over variables
    (Nie et al. 2016's measure of marginal accuracy).

    >>> round(hellinger({"a": [0.5, 0.5]}, {"a": [1.0, 0.0]}), 4)
    0.5412
    """
    return float(np.mean([np.sqrt(0.5 * ((np.sqrt(a) - np.sqrt(b)) ** 2).sum(axis=-1)).mean()
                          for a, b in _pairs(p, q)]))


def max_absolute_error(p, q, *, reduce: str = "mean") -> float:
    """Per variable the largest ``|p(x) - q(x)|``; averaged over variables
    (``reduce="mean"``, Nie et al. 2016's A_err) or their maximum (``"max"``)."""
    per = [np.abs(a - b).max(axis=-1).mean() for a, b in _pairs(p, q)]
    if reduce == "mean":
        return float(np.mean(per))
    if reduce == "max":
        return float(np.max([np.abs(a - b).max() for a, b in _pairs(p, q)]))
    raise InputError(f"reduce must be 'mean' or 'max', got {reduce!r}")


def absolute_error(p, q) -> float:
    """Mean over variables of the summed absolute difference ``sum_x |p(x) - q(x)|``."""
    return float(np.mean([np.abs(a - b).sum(axis=-1).mean() for a, b in _pairs(p, q)]))


def rmse(p, q) -> float:
    """Root mean squared difference over all variables and states."""
    diffs = np.concatenate([(a - b).ravel() for a, b in _pairs(p, q)])
    return float(np.sqrt(np.mean(diffs ** 2)))


def kl_divergence(p, q) -> float:
    """``KL(p || q) = sum_x p(x) log(p(x) / q(x))`` in nats, averaged over variables.

    Terms with ``p(x) = 0`` contribute 0; ``q(x) = 0`` where ``p(x) > 0`` gives
    ``inf`` (Rosland 2019, section 2.6).
    """
    out = []
    for a, b in _pairs(p, q):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * (np.log(a) - np.log(b)), 0.0)
        out.append(terms.sum(axis=-1).mean())
    return float(np.mean(out))


def test_log_likelihood(network, data) -> float:
    """Average log-likelihood per row of held-out data (nats)."""
    return network.log_likelihood(data) / data.n_rows
