"""Approximate inference where no exact method fits: loopy belief propagation and Gibbs sampling."""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..errors import InputError
from ..factors import ZeroEvidenceError, as_factor_model, labelled_einsum
from .evidence import evidence_indices
from .kernels import flat_factors
from .results import Marginals

__all__ = ["loopy_belief_propagation", "gibbs_sample"]


def loopy_belief_propagation(model, evidence=None, *, damping: float = 0.5, tol: float = 1e-8,
                             max_iter: int = 500) -> Marginals:
    """Sum-product message passing on the factor graph (exact on trees).

    Messages are updated in parallel and damped: ``new = damping * old +
    (1 - damping) * update``.  Stops when no belief moves by more than ``tol``
    or after ``max_iter`` sweeps; ``stats["converged"]`` says which, and
    ``stats["iterations"]`` and ``stats["max_change"]`` how far it went.  The
    :class:`Marginals` are not exact and carry no bounds or ``log_z``.

    >>> from twlib.datasets import load_network
    >>> res = loopy_belief_propagation(load_network("asia"), {"xray": "yes"})
    >>> res.stats["converged"], round(float(res["lung"][0]), 2)
    (True, 0.49)
    """
    if not 0 <= damping < 1:
        raise InputError(f"damping must lie in [0, 1), got {damping}")
    model = as_factor_model(model)
    ev = evidence_indices(model, evidence)
    factors = [f.reduce(ev) for f in model.factors]
    factors = [f for f in factors if f.variables]
    free = [v for v in model.variables if v not in ev]
    arity = {v: model.arity(v) for v in free}
    to_var = {(k, v): np.full(arity[v], 1.0 / arity[v]) for k, f in enumerate(factors)
              for v in f.variables}
    to_fac = dict(to_var)
    holding = {v: [k for k, f in enumerate(factors) if v in f.variables] for v in free}

    def beliefs():
        out = {}
        for v in free:
            b = np.ones(arity[v])
            for k in holding[v]:
                b = b * to_var[k, v]
            total = b.sum()
            if total <= 0:
                raise ZeroEvidenceError("the evidence has probability zero (beliefs vanished)")
            out[v] = b / total
        return out

    current = beliefs()
    change, it = math.inf, 0
    for it in range(1, max_iter + 1):
        for (k, v) in to_fac:
            msg = np.ones(arity[v])
            for j in holding[v]:
                if j != k:
                    msg = msg * to_var[j, v]
            to_fac[k, v] = msg / msg.sum() if msg.sum() > 0 else msg
        new = {}
        for k, f in enumerate(factors):
            for v in f.variables:
                ops = [f.values, list(f.variables)]
                for u in f.variables:
                    if u != v:
                        ops += [to_fac[k, u], [u]]
                m = labelled_einsum(*ops, [v])
                total = m.sum()
                m = m / total if total > 0 else np.full(arity[v], 1.0 / arity[v])
                new[k, v] = damping * to_var[k, v] + (1 - damping) * m
        to_var = new
        updated = beliefs()
        change = max(float(np.abs(updated[v] - current[v]).max()) for v in free) if free else 0.0
        current = updated
        if change < tol:
            break
    posteriors = {}
    for v in model.variables:
        if v in ev:
            p = np.zeros(model.arity(v))
            p[ev[v]] = 1.0
            posteriors[v] = p
        else:
            posteriors[v] = current[v]
    return Marginals(posteriors, math.nan, False, "loopy belief propagation",
                     stats={"converged": bool(change < tol), "iterations": it,
                            "max_change": float(change)})


# --------------------------------------------------------------------- Gibbs sampling
@nb.njit(cache=True)
def _gibbs_chain(state, arity, scopes, sizes, strides, offsets, values, var_ptr, var_fac,
                 sweeps, burn_in, thin, uniforms, out, out_start):
    n = state.shape[0]
    probs = np.empty(arity.max())
    row = out_start
    u = 0
    for sweep in range(sweeps):
        for v in range(n):
            r = arity[v]
            total = 0.0
            for k in range(r):
                p = 1.0
                for t in range(var_ptr[v], var_ptr[v + 1]):
                    f = var_fac[t]
                    index = offsets[f]
                    for j in range(sizes[f]):
                        w = scopes[f, j]
                        index += (k if w == v else state[w]) * strides[f, j]
                    p *= values[index]
                probs[k] = p
                total += p
            x = uniforms[u] * total
            u += 1
            k = 0
            if total > 0.0:
                acc = probs[0]
                while k < r - 1 and acc <= x:
                    k += 1
                    acc += probs[k]
            else:                       # stuck in a zero-probability state: move uniformly
                k = min(int(uniforms[u - 1] * r), r - 1)
            state[v] = k
        if sweep >= burn_in and (sweep - burn_in) % thin == 0 and row < out.shape[0]:
            out[row] = state
            row += 1
    return row


def gibbs_sample(model, n_samples: int, *, burn_in: int = 1000, restarts: int = 10, thin: int = 1,
                 random_state=None):
    """Draw rows from a Markov network (or any factor model) by Gibbs sampling.

    ``restarts`` chains start from uniformly random states; each discards
    ``burn_in`` sweeps and then keeps every ``thin``-th sweep until it has
    contributed its share of the ``n_samples`` rows, as Nie et al. (2016)
    sampled the UAI competition networks.  Returns a :class:`~twlib.data.Dataset`.
    """
    from ..data import Dataset

    model = as_factor_model(model)
    if n_samples < 1 or restarts < 1 or thin < 1 or burn_in < 0:
        raise InputError("n_samples, restarts and thin must be positive and burn_in >= 0")
    rng = np.random.default_rng(random_state)
    names = model.variables
    arity = np.array([model.arity(v) for v in names], dtype=np.int64)
    scopes, strides, offsets, values = flat_factors(model)
    sizes = (scopes >= 0).sum(axis=1)
    holders = [[k for k, f in enumerate(model.factors) if v in f.variables] for v in names]
    var_ptr = np.concatenate([[0], np.cumsum([len(h) for h in holders])]).astype(np.int64)
    var_fac = np.array([k for h in holders for k in h], dtype=np.int64)
    out = np.zeros((n_samples, len(names)), dtype=np.int64)
    per_chain = -(-n_samples // restarts)
    row = 0
    for _ in range(restarts):
        sweeps = burn_in + per_chain * thin
        state = np.array([rng.integers(a) for a in arity], dtype=np.int64)
        uniforms = rng.random(sweeps * len(names))
        row = _gibbs_chain(state, arity, scopes, sizes, strides, offsets, values, var_ptr,
                           var_fac, sweeps, burn_in, thin, uniforms, out, row)
    return Dataset(out, names, [model.states(v) for v in names])
