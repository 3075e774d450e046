"""The junction tree's compiled passes, and the flat factor arrays they read.

One evidence set is propagated by a single compiled pass (:func:`hugin_one_set`
for sums, :func:`max_product_one_set` for maxima) instead of a Python loop of
einsums; :func:`log_values` scores full assignments.

The passes walk each clique table once per use (:mod:`.table_walk`).
Cliques are in preorder (position 0 the root); clique ``t``'s variables are at
``cvar_ptr[t]:cvar_ptr[t + 1]`` of the per-slot arrays, and a stride row gives
each of its axes the stride of a target (0 for an axis the target lacks).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from .table_walk import add_factor, fan_out_observed, max_out

__all__ = ["flat_factors", "decode_assignments", "log_values", "hugin_one_set", "hugin_sets",
           "max_product_prior", "max_product_one_set", "max_product_sets"]


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
def _mark_up(start, parents, marks):
    """Mark ``start`` and its ancestors."""
    t = start
    while t >= 0 and not marks[t]:
        marks[t] = True
        t = parents[t]


@nb.njit(cache=True)
def _dirty(parents, reader, observed):
    """The cliques with evidence at or below them, and the observed variables
    each reads as a list: the first at ``first[t]``, the next at ``then[v]``
    (-1 ends it)."""
    n = parents.shape[0]
    dirty = np.zeros(n, dtype=np.bool_)
    first = np.full(n, -1, dtype=np.int64)
    then = np.full(observed.shape[0], -1, dtype=np.int64)
    for v in range(observed.shape[0]):
        if observed[v] >= 0:
            _mark_up(reader[v], parents, dirty)
            then[v] = first[reader[v]]
            first[reader[v]] = v
    return dirty, first, then


@nb.njit(cache=True)
def _hub(dirty, first, child_ptr, children):
    """The lowest clique every evidence clique's path to the root passes
    through: from the root down, while the clique reads no evidence and one
    child alone has evidence below it."""
    t = 0
    while first[t] < 0:
        below = -1
        for k in range(child_ptr[t], child_ptr[t + 1]):
            if dirty[children[k]]:
                if below >= 0:
                    return t
                below = children[k]
        if below < 0:
            return t
        t = below
    return t


@nb.njit(cache=True)
def _clear_child_separators(buffer, t, child_ptr, children, sep_off):
    """Zero what clique ``t``'s children's separators hold in ``buffer``, before
    its pass adds into them."""
    for k in range(child_ptr[t], child_ptr[t + 1]):
        buffer[sep_off[children[k]]:sep_off[children[k] + 1]] = 0.0


@nb.njit(cache=True)
def _inputs(t, cvar_ptr, child_ptr, children, dirty, down_ptr, down_stride, sep_off,
            from_child, first, then, rslot, from_evidence, marg_off, extra):
    """The factors clique ``t``'s table is multiplied by for one evidence set:
    what each child with evidence below it sent (over its separator, at
    ``from_child + sep_off[c]``) and the indicator of each observed variable
    it reads (at ``from_evidence + marg_off[v]``).  Returns ``(rows, offsets,
    F)`` with room for ``extra`` more rows after the ``F`` factors."""
    c0, m = cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t]
    F = 0
    for k in range(child_ptr[t], child_ptr[t + 1]):
        F += dirty[children[k]]
    v = first[t]
    while v >= 0:
        F += 1
        v = then[v]
    rows = np.zeros((F + extra) * m, dtype=np.int64)
    offsets = np.zeros(F + extra, dtype=np.int64)
    f = 0
    for k in range(child_ptr[t], child_ptr[t + 1]):
        c = children[k]
        if dirty[c]:
            rows[f * m:(f + 1) * m] = down_stride[down_ptr[c]:down_ptr[c] + m]
            offsets[f] = from_child + sep_off[c]
            f += 1
    v = first[t]
    while v >= 0:
        rows[f * m + rslot[v] - c0] = 1
        offsets[f] = from_evidence + marg_off[v]
        f += 1
        v = then[v]
    return rows, offsets, F


@nb.njit(cache=True)
def _indicators(observed, marg_off, zero, one):
    """Each observed variable's indicator over its states (``one`` at its
    state, ``zero`` elsewhere), end to end as the marginals are."""
    out = np.full(marg_off[-1], one)
    for v in range(observed.shape[0]):
        if observed[v] >= 0:
            out[marg_off[v]:marg_off[v + 1]] = zero
            out[marg_off[v] + observed[v]] = one
    return out


def hugin_work(sep_off, marg_off):
    """The scratch :func:`hugin_one_set` takes as ``work``, for a tree of these
    separators and marginals: its factors (two per separator entry, one per
    state), what the collect sent and what the distribute feeds."""
    S, M = int(sep_off[-1]), int(marg_off[-1])
    return np.ones((2 * S + M) + S + (S + M))


@nb.njit(cache=True)
def hugin_one_set(tables, table_off, cvar_ptr, cvar, ccard, up_stride, down_ptr, down_stride,
                  seps, sep_off, parents, child_ptr, children, reader, rslot, fan_ptr,
                  fan_row_ptr, fan_rows, fan_out, marg_off, prior_marg, sread, sread_stride,
                  observed, asked, marginals, work):
    """One evidence set's Hugin propagation on the calibrated prior tree, never
    copying a table.

    A clique's table with the evidence is its prior times the ratios its
    children with evidence below them sent up and the indicators of the
    evidence it reads; the passes read the prior and multiply those factors
    in as they go.  Collect runs only from the cliques holding evidence up to
    the root (the others would send their prior separators); each message is
    normalised, its total into ``log P(e)``.  From the hub (the lowest clique
    every evidence clique's path to the root passes through) up, a clique's
    table has all the evidence once it has collected, so its collect pass also
    feeds its children and marginals and it is not passed again: on a deep
    tree with evidence far from the root this halves the work on that path.
    Distribute runs only towards the
    readers of ``asked`` variables: each clique's table, times the ratio of its
    incoming message to what it sent, is fanned out in one pass to every
    child's separator and every variable read there (``fan_*``: per clique,
    ``fan_ptr[t]:fan_ptr[t + 1]`` targets with their stride rows at
    ``fan_row_ptr[t]:`` and offsets into one buffer, separators first,
    marginals after).  A clique without evidence whose incoming message equals
    its prior separator (relative 1e-13) keeps its prior, and so does its
    subtree.  A variable its reader shares with that clique's parent
    (``sread[v]`` the reader, ``sread_stride[v]`` its stride in the
    separator) is summed out of the message the parent sent down instead,
    which is the separator's posterior joint.  Every pass walks only the
    entries of a table that agree with the observed variables among its axes
    (:func:`fan_out_observed`).
    Returns ``log P(e)`` (``-inf`` when impossible) and fills ``marginals``
    for the asked variables.

    ``work`` (``hugin_work(sep_off, marg_off)``) is scratch kept between calls:
    on a large tree its separators run to millions of entries, and allocating
    them afresh costs a set as much as a pass over a mid-sized table.  Every
    entry is written before it is read, so nothing carries over."""
    n, S = parents.shape[0], sep_off[parents.shape[0]]
    dirty, first, then = _dirty(parents, reader, observed)
    needed = np.zeros(n, dtype=np.bool_)
    for v in range(observed.shape[0]):
        if asked[v]:
            _mark_up(reader[v] if sread[v] < 0 else parents[sread[v]], parents, needed)
    # factors end to end: each child's ratio up | each clique's ratio down | indicators
    f1 = 2 * S + marg_off[-1]
    factors, sent, buffer = work[:f1], work[f1:f1 + S], work[f1 + S:]
    factors[2 * S:] = _indicators(observed, marg_off, 0.0, 1.0)
    # sent: what each clique with evidence sent up, normalised (read only for those)
    buffer[S:] = 0.0                           # the marginals; separators as they are fed
    live = np.zeros(n, dtype=np.bool_)         # the table differs from the prior
    hub = _hub(dirty, first, child_ptr, children) if needed.any() and dirty[0] else -1
    # from the hub up, a clique's collect pass is also its distribute pass
    onward = np.zeros(n, dtype=np.bool_)
    if hub >= 0:
        _mark_up(hub, parents, onward)
    log_pe = 0.0
    for t in range(n - 1, -1, -1):                                # collect
        if not dirty[t]:
            continue
        c0, m, s0, s1 = cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t], sep_off[t], sep_off[t + 1]
        K = 1 + (fan_ptr[t + 1] - fan_ptr[t] if onward[t] else 0)
        rows, offsets, F = _inputs(t, cvar_ptr, child_ptr, children, dirty, down_ptr,
                                   down_stride, sep_off, 0, first, then, rslot, 2 * S, marg_off,
                                   K)
        rows[F * m:(F + 1) * m] = up_stride[c0:c0 + m]   # the root's: all zero, one entry
        targets = np.empty(K, dtype=np.int64)
        targets[0] = f1 + s0
        sent[s0:s1] = 0.0
        if onward[t]:
            rows[(F + 1) * m:] = fan_rows[fan_row_ptr[t]:fan_row_ptr[t + 1]]
            targets[1:] = f1 + S + fan_out[fan_ptr[t]:fan_ptr[t + 1]]
            _clear_child_separators(buffer, t, child_ptr, children, sep_off)
            live[t] = True
        fan_out_observed(tables, table_off[t], ccard, c0, m, rows, F, work, offsets, K, work,
                          targets, cvar, observed)
        total = sent[s0:s1].sum()
        if total <= 0.0:
            return -np.inf
        log_pe += np.log(total)
        for s in range(s0, s1):
            sent[s] /= total
            factors[s] = sent[s] / seps[s] if seps[s] > 0.0 else 0.0
    for t in range(n):                                            # distribute
        if not needed[t] or live[t] or hub < 0:   # without evidence every table is the prior
            continue
        s0, s1 = sep_off[t], sep_off[t + 1]
        if t > 0:
            if not live[parents[t]]:
                continue
            total = buffer[s0:s1].sum()
            held = not dirty[t]
            for s in range(s0, s1):
                buffer[s] /= total
                denominator = sent[s] if dirty[t] else seps[s]
                factors[S + s] = buffer[s] / denominator if denominator > 0.0 else 0.0
                held = held and abs(buffer[s] - seps[s]) <= 1e-13 * seps[s]
            if held:
                continue
        live[t] = True
        c0, m = cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t]
        K = fan_ptr[t + 1] - fan_ptr[t]
        if dirty[t]:
            inner, offsets, F = _inputs(t, cvar_ptr, child_ptr, children, dirty, down_ptr,
                                        down_stride, sep_off, 0, first, then, rslot, 2 * S,
                                        marg_off, 1)
        else:
            inner, offsets, F = np.zeros(m, dtype=np.int64), np.zeros(1, dtype=np.int64), 0
        F += 1                                        # the ratio down, over t's separator
        rows = np.empty((F + K) * m, dtype=np.int64)
        rows[:(F - 1) * m] = inner[:(F - 1) * m]
        rows[(F - 1) * m:F * m] = up_stride[c0:c0 + m]
        offsets[F - 1] = S + s0
        rows[F * m:] = fan_rows[fan_row_ptr[t]:fan_row_ptr[t + 1]]
        _clear_child_separators(buffer, t, child_ptr, children, sep_off)
        fan_out_observed(tables, table_off[t], ccard, c0, m, rows, F, factors, offsets, K,
                          buffer, fan_out[fan_ptr[t]:fan_ptr[t + 1]], cvar, observed)
    for v in range(observed.shape[0]):                            # read the marginals
        if not asked[v]:
            continue
        m0, m1 = marg_off[v], marg_off[v + 1]
        if not live[reader[v] if sread[v] < 0 else parents[sread[v]]]:
            marginals[m0:m1] = prior_marg[m0:m1]
            continue
        if sread[v] >= 0:
            marginals[m0:m1] = 0.0
            s0, r, stride = sep_off[sread[v]], m1 - m0, sread_stride[v]
            for s in range(sep_off[sread[v] + 1] - s0):
                marginals[m0 + (s // stride) % r] += buffer[s0 + s]
            marginals[m0:m1] /= marginals[m0:m1].sum()
            continue
        at = S + m0
        total = buffer[at:at + m1 - m0].sum()
        marginals[m0:m1] = buffer[at:at + m1 - m0] / total
    return log_pe


@nb.njit(cache=True, nogil=True)
def hugin_sets(tables, table_off, cvar_ptr, cvar, ccard, up_stride, down_ptr, down_stride,
               seps, sep_off, parents, child_ptr, children, reader, rslot, fan_ptr,
               fan_row_ptr, fan_rows, fan_out, marg_off, prior_marg, sread, sread_stride,
               observed, asked, marginals, log_pe, work):
    """:func:`hugin_one_set` for each row of ``observed`` (a matrix of state
    codes, -1 where missing), its marginals into that row of ``marginals`` and
    its ``log P(e)`` into ``log_pe``.  It holds no GIL, so threads of one
    process can share the rows of a batch, each with its own ``work``."""
    for b in range(observed.shape[0]):
        log_pe[b] = hugin_one_set(tables, table_off, cvar_ptr, cvar, ccard, up_stride,
                                  down_ptr, down_stride, seps, sep_off, parents, child_ptr,
                                  children, reader, rslot, fan_ptr, fan_row_ptr, fan_rows,
                                  fan_out, marg_off, prior_marg, sread, sread_stride,
                                  observed[b], asked, marginals[b], work)


@nb.njit(cache=True)
def max_product_prior(log_potentials, table_off, cvar_ptr, ccard, up_stride, down_ptr,
                      down_stride, sep_off, parents):
    """The evidence-free max-sum collect, kept for :func:`max_product_one_set`:
    ``(tables, messages, best)``, each clique's log-potential plus its
    children's messages, the message it sends up and the entry of its table
    that reaches each message entry."""
    n = parents.shape[0]
    tables = log_potentials.copy()
    msg = np.full(sep_off[n], -np.inf)
    best = np.full(sep_off[n], -1, dtype=np.int64)
    none = np.zeros(0, dtype=np.int64)
    for t in range(n - 1, 0, -1):
        p, c0, m = parents[t], cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t]
        max_out(tables, table_off[t], ccard, c0, m, up_stride[c0:c0 + m], 0, msg, none, msg,
                 best, sep_off[t])
        add_factor(tables, table_off[p], ccard, cvar_ptr[p], cvar_ptr[p + 1] - cvar_ptr[p],
               down_stride, down_ptr[t], msg, sep_off[t])
    return tables, msg, best


def max_product_work(sep_off, marg_off):
    """The scratch :func:`max_product_one_set` takes as ``(work, best)``."""
    S, M = int(sep_off[-1]), int(marg_off[-1])
    return np.zeros(2 * S + M + 1), np.full(S + 1, -1, dtype=np.int64)


@nb.njit(cache=True)
def max_product_one_set(prior_tables, prior_msg, prior_best, table_off, cvar_ptr, cvar, ccard,
                        up_stride, down_ptr, down_stride, sep_off, parents, child_ptr, children,
                        reader, rslot, marg_off, observed, states, work, best):
    """One evidence set's most probable explanation from the evidence-free pass
    of :func:`max_product_prior`, never copying a table: max-sum runs again
    only from the cliques holding evidence up to the root, each reading its
    prior table plus the change of each message its children with evidence
    below them sent and the log-indicators of the evidence it reads; decoding
    walks down from the root's best entry, a clique without evidence below it
    reading the prior's best entries.  Fills ``states``; False when the
    evidence is impossible.

    ``work`` and ``best`` (``max_product_work(sep_off, marg_off)``) are scratch
    kept between calls, as :func:`hugin_one_set`'s; an entry is reset or
    written before it is read."""
    n, S = parents.shape[0], sep_off[parents.shape[0]]
    dirty, first, then = _dirty(parents, reader, observed)
    # factors end to end: each child's change of message | log-indicators
    factors, msg = work[:S + marg_off[-1]], work[S + marg_off[-1]:]
    factors[S:] = _indicators(observed, marg_off, -np.inf, 0.0)
    # msg and best: each separator's entries, then the root's best value
    for t in range(n - 1, -1, -1):
        if not dirty[t]:
            continue
        c0, m, s0 = cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t], sep_off[t]
        rows, offsets, F = _inputs(t, cvar_ptr, child_ptr, children, dirty, down_ptr,
                                   down_stride, sep_off, 0, first, then, rslot, S, marg_off, 1)
        rows[F * m:] = up_stride[c0:c0 + m]
        o0, o1 = (s0, sep_off[t + 1]) if t > 0 else (S, S + 1)
        best[o0:o1] = -1                     # max_out then overwrites msg there
        max_out(prior_tables, table_off[t], ccard, c0, m, rows, F, factors, offsets, msg, best,
                 o0)
        for s in range(s0, sep_off[t + 1]):
            # an entry the prior already rules out is -inf in the parent and stays so
            factors[s] = msg[s] - prior_msg[s] if prior_msg[s] > -np.inf else 0.0
    chosen = np.zeros(n, dtype=np.int64)
    if dirty[0]:
        if msg[S] == -np.inf:
            return False
        chosen[0] = best[S]
    else:
        for e in range(table_off[1]):
            if prior_tables[e] > prior_tables[chosen[0]]:
                chosen[0] = e
    for t in range(n):                                            # decode, top down
        if t > 0:
            p = parents[t]
            rest, s = chosen[p], 0
            for j in range(cvar_ptr[p + 1] - 1, cvar_ptr[p] - 1, -1):
                s += (rest % ccard[j]) * down_stride[down_ptr[t] + j - cvar_ptr[p]]
                rest //= ccard[j]
            chosen[t] = best[sep_off[t] + s] if dirty[t] else prior_best[sep_off[t] + s]
        rest = chosen[t]
        for j in range(cvar_ptr[t + 1] - 1, cvar_ptr[t] - 1, -1):
            states[cvar[j]] = rest % ccard[j]
            rest //= ccard[j]
    return True


@nb.njit(cache=True, nogil=True)
def max_product_sets(prior_tables, prior_msg, prior_best, table_off, cvar_ptr, cvar, ccard,
                     up_stride, down_ptr, down_stride, sep_off, parents, child_ptr, children,
                     reader, rslot, marg_off, observed, states, possible, work, best):
    """:func:`max_product_one_set` for each row of ``observed`` (state codes,
    -1 where missing), its assignment into that row of ``states`` and whether
    the set is possible into ``possible``; it holds no GIL, so threads can
    share a batch's rows, each with its own ``work`` and ``best``."""
    for b in range(observed.shape[0]):
        possible[b] = max_product_one_set(prior_tables, prior_msg, prior_best, table_off,
                                          cvar_ptr, cvar, ccard, up_stride, down_ptr,
                                          down_stride, sep_off, parents, child_ptr, children,
                                          reader, rslot, marg_off, observed[b], states[b],
                                          work, best)
