"""The junction tree's compiled passes, and the flat factor arrays they read.

One evidence set on a small tree is propagated by a single compiled pass
(:func:`hugin_single` for sums, :func:`max_product_single` for maxima) instead of
a Python loop of einsums; :func:`log_values` scores full assignments.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["flat_factors", "decode_assignments", "log_values", "hugin_single",
           "max_product_single"]


def flat_factors(model):
    """A model's factors as flat arrays for compiled kernels: ``(scopes, strides,
    offsets, values)``, row ``f`` of ``scopes`` the variable indices of factor
    ``f`` (-1 padded), of ``strides`` their strides in its flat table, which
    starts at ``offsets[f]`` in ``values``."""
    index = {v: k for k, v in enumerate(model.variables)}
    factors = model.factors
    width = max(len(f.variables) for f in factors)
    scopes = np.full((len(factors), width), -1, dtype=np.int64)
    strides = np.zeros((len(factors), width), dtype=np.int64)
    for k, f in enumerate(factors):
        scopes[k, :len(f.variables)] = [index[v] for v in f.variables]
        strides[k, :len(f.variables)] = [math.prod(f.values.shape[j + 1:])
                                         for j in range(len(f.variables))]
    offsets = np.cumsum([0] + [f.values.size for f in factors[:-1]]).astype(np.int64)
    values = np.concatenate([np.ascontiguousarray(f.values, dtype=float).ravel()
                             for f in factors])
    return scopes, strides, offsets, values


@nb.njit(cache=True)
def decode_assignments(sep_ptr, sep_var, sep_stride, sep_size, own_ptr, own_var, own_card,
                        offsets, best, prior_offsets, prior_best, out):
    """Walk the cliques in preorder, each reading its separator's states (set by
    the cliques above) and writing its own variables' best configuration: from
    this batch's table ``best`` where the clique saw evidence (``offsets >= 0``),
    else from the evidence-free ``prior_best``."""
    for b in range(out.shape[0]):
        for t in range(sep_size.shape[0]):
            s = 0
            for j in range(sep_ptr[t], sep_ptr[t + 1]):
                s += out[b, sep_var[j]] * sep_stride[j]
            if offsets[t] >= 0:
                r = best[offsets[t] + b * sep_size[t] + s]
            else:
                r = prior_best[prior_offsets[t] + s]
            for j in range(own_ptr[t + 1] - 1, own_ptr[t] - 1, -1):
                out[b, own_var[j]] = r % own_card[j]
                r //= own_card[j]


@nb.njit(cache=True)
def log_values(scopes, strides, offsets, logs, rows):
    """``sum over factors of log f(row)`` for each row of state indices."""
    out = np.zeros(rows.shape[0])
    for b in range(rows.shape[0]):
        total = 0.0
        for f in range(scopes.shape[0]):
            at = offsets[f]
            for j in range(scopes.shape[1]):
                if scopes[f, j] < 0:
                    break
                at += rows[b, scopes[f, j]] * strides[f, j]
            total += logs[at]
        out[b] = total
    return out


@nb.njit(cache=True)
def hugin_single(tables, table_off, seps, sep_off, child_map, parent_map, parent_map_off,
                  parents, reader, stride, card, marg_off, observed, marginals):
    """One full Hugin propagation of one evidence set over a small tree, cliques
    in preorder: evidence zeroes the excluded entries of each observed
    variable's reader clique; collect sends each clique's separator marginal
    (normalised, its total into the log-scale) to its parent as a ratio to the
    prior separator; distribute sends the parent's back the same way; every
    variable's marginal is read from its reader.  Returns ``log P(e)`` (``-inf``
    when impossible) and fills ``marginals``."""
    work = tables.copy()
    n = parents.shape[0]
    new = np.zeros(seps.shape[0])
    for v in range(observed.shape[0]):
        if observed[v] >= 0:
            t = reader[v]
            for e in range(table_off[t + 1] - table_off[t]):
                if (e // stride[v]) % card[v] != observed[v]:
                    work[table_off[t] + e] = 0.0
    log_pe = 0.0
    for t in range(n - 1, 0, -1):                                # collect
        p, base, s0 = parents[t], table_off[t], sep_off[t]
        size = sep_off[t + 1] - s0
        for s in range(size):
            new[s0 + s] = 0.0
        for e in range(table_off[t + 1] - base):
            new[s0 + child_map[base + e]] += work[base + e]
        total = 0.0
        for s in range(size):
            total += new[s0 + s]
        if total <= 0.0:
            return -np.inf
        log_pe += np.log(total)
        for s in range(size):
            new[s0 + s] /= total
        pm = parent_map_off[t]
        for e in range(table_off[p + 1] - table_off[p]):
            old = seps[s0 + parent_map[pm + e]]
            work[table_off[p] + e] = (work[table_off[p] + e] * new[s0 + parent_map[pm + e]] / old
                                      if old > 0.0 else 0.0)
    total = 0.0
    for e in range(table_off[1]):
        total += work[e]
    if total <= 0.0:
        return -np.inf
    log_pe += np.log(total)
    for e in range(table_off[1]):
        work[e] /= total
    msg = np.zeros(seps.shape[0])
    for t in range(1, n):                                         # distribute
        p, base, s0 = parents[t], table_off[t], sep_off[t]
        size = sep_off[t + 1] - s0
        pm = parent_map_off[t]
        for s in range(size):
            msg[s0 + s] = 0.0
        for e in range(table_off[p + 1] - table_off[p]):
            msg[s0 + parent_map[pm + e]] += work[table_off[p] + e]
        total = 0.0
        for s in range(size):
            total += msg[s0 + s]
        for s in range(size):
            msg[s0 + s] /= total
        for e in range(table_off[t + 1] - base):
            s = s0 + child_map[base + e]
            work[base + e] = work[base + e] * msg[s] / new[s] if new[s] > 0.0 else 0.0
    for v in range(observed.shape[0]):                            # read the marginals
        t, m0 = reader[v], marg_off[v]
        for e in range(table_off[t + 1] - table_off[t]):
            marginals[m0 + (e // stride[v]) % card[v]] += work[table_off[t] + e]
        total = 0.0
        for k in range(card[v]):
            total += marginals[m0 + k]
        for k in range(card[v]):
            marginals[m0 + k] /= total
    return log_pe


@nb.njit(cache=True)
def max_product_single(log_potentials, table_off, sep_off, child_map, parent_map,
                        parent_map_off, parents, reader, stride, card, observed,
                        cvar_ptr, cvar, cstride, ccard, states):
    """One evidence set's most probable explanation on a small tree (the layout
    of :func:`hugin_single`), max-sum in log space: each clique's
    log-potential plus its children's messages; each sends, per separator
    entry, its best value and the entry that reached it; decoding walks down
    from the root's best entry.  Fills ``states``; False when the evidence is
    impossible."""
    work = log_potentials.copy()
    n = parents.shape[0]
    for v in range(observed.shape[0]):
        if observed[v] >= 0:
            t = reader[v]
            for e in range(table_off[t + 1] - table_off[t]):
                if (e // stride[v]) % card[v] != observed[v]:
                    work[table_off[t] + e] = -np.inf
    msg = np.empty(sep_off[n])
    best = np.zeros(sep_off[n], dtype=np.int64)
    for t in range(n - 1, 0, -1):                                # collect, maximising
        p, base, s0 = parents[t], table_off[t], sep_off[t]
        for s in range(sep_off[t + 1] - s0):
            msg[s0 + s] = -np.inf
            best[s0 + s] = -1
        for e in range(table_off[t + 1] - base):
            s = s0 + child_map[base + e]
            if best[s] < 0 or work[base + e] > msg[s]:
                msg[s] = work[base + e]
                best[s] = e
        pm = parent_map_off[t]
        for e in range(table_off[p + 1] - table_off[p]):
            work[table_off[p] + e] += msg[s0 + parent_map[pm + e]]
    chosen = np.zeros(n, dtype=np.int64)
    for e in range(table_off[1]):
        if work[e] > work[chosen[0]]:
            chosen[0] = e
    if work[chosen[0]] == -np.inf:
        return False
    for t in range(n):                                            # decode, top down
        if t > 0:
            p = parents[t]
            chosen[t] = best[sep_off[t] + parent_map[parent_map_off[t] + chosen[p]]]
        for j in range(cvar_ptr[t], cvar_ptr[t + 1]):
            states[cvar[j]] = (chosen[t] // cstride[j]) % ccard[j]
    return True
