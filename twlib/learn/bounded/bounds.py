"""A proved upper bound on the score of any network of tree-width at most ``k``."""
from __future__ import annotations

import math

import numpy as np

from ...errors import InputError
from ...scores import FamilyScorer


def upper_bound(scorer: FamilyScorer, k: int) -> float:
    """A score no network of tree-width <= k can exceed (BIC and log-likelihood).

    Width ``<= k`` implies in-degree ``<= k``.  For each variable the best
    family with at most one parent is found exactly; a larger parent set ``P``
    scores at most ``-penalty(P)`` because a log-likelihood is never positive
    (de Campos & Ji 2011), and the smallest penalty of ``j`` parents uses the
    ``j`` smallest arities.  The sum over variables bounds every network.
    Loose when the data have many rows, but proved.

    >>> import pandas as pd
    >>> from twlib.data import Dataset
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1] * 8, "b": [0, 0, 1, 1] * 4}))
    >>> fs = FamilyScorer(ds, score="bic")
    >>> upper_bound(fs, k=1) >= fs(0, ()) + fs(1, ())      # e.g. the empty network
    True
    """
    if scorer.score == "bdeu":
        raise InputError("a data-free upper bound is proved here for 'bic' and 'll' only")
    data = scorer.data
    n, arities = data.n_vars, np.asarray(data.arities)
    log_n = math.log(data.n_rows) if scorer.score == "bic" else 0.0
    ascending = np.sort(arities)[:k + 1]
    total = 0.0
    for v in range(n):
        best = max(scorer(v, ()), float(np.nanmax(scorer.growth_row(v, ()))))
        smallest = np.delete(ascending, np.flatnonzero(ascending == arities[v])[0]
                             if arities[v] in ascending else k)   # the others' k smallest
        for j in range(2, min(k, n - 1) + 1):
            q = float(np.prod(smallest[:j]))
            best = max(best, -0.5 * log_n * q * (arities[v] - 1))
        total += best
    return total

