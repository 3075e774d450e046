"""The junction tree's compiled passes, and the flat factor arrays they read.

One evidence set is propagated by a single compiled pass (:func:`hugin_one_set`
for sums, :func:`max_product_one_set` for maxima) instead of a Python loop of
einsums; :func:`log_values` scores full assignments.

The passes walk each clique table once per use with an odometer over its
axes, carrying for every target (a separator, a variable's marginal) the
index that entry maps to: index arrays as large as the tables would double
the memory the tree needs and the bytes each pass reads.  Cliques are in
preorder (position 0 the root); clique ``t``'s variables are at
``cvar_ptr[t]:cvar_ptr[t + 1]`` of the per-slot arrays, and a stride row gives
each of its axes the stride of a target (0 for an axis the target lacks).
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["flat_factors", "decode_assignments", "log_values", "hugin_one_set",
           "max_product_prior", "max_product_one_set"]


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


_BLOCK = 64     # entries the innermost axes of a table span at least, walked by offset tables


@nb.njit(cache=True)
def _blocks(ccard, c0, m, rows, n_rows):
    """Split a clique table's axes into outer ones and a block of trailing
    ones spanning at least ``_BLOCK`` entries (or all): ``(q, B, inner, size,
    acc, digits)``, the block's first axis, its entries, ``inner[k, b]`` the
    offset of its entry ``b`` in index ``k`` (``rows[k * m + j]`` the stride of
    axis ``j`` in it), the table's entries, and the odometer of :func:`_carry`
    at the first entry (each index's offset, the outer axes' digits).
    Walking the block by offset tables keeps the odometer's carries, which a
    run of two-state axes would otherwise pay at every other entry, to one per
    block."""
    q, B = m, 1
    while q > 0 and B < _BLOCK:
        q -= 1
        B *= ccard[c0 + q]
    inner = np.zeros((n_rows, B), dtype=np.int64)
    digits = np.zeros(m, dtype=np.int64)
    for b in range(1, B):
        j = m - 1
        while True:
            digits[j] += 1
            if digits[j] < ccard[c0 + j]:
                break
            digits[j] = 0
            j -= 1
        for k in range(n_rows):
            at = 0
            for i in range(q, m):
                at += digits[i] * rows[k * m + i]
            inner[k, b] = at
    size = B
    for j in range(q):
        size *= ccard[c0 + j]
    return q, B, inner, size, np.zeros(n_rows, dtype=np.int64), np.zeros(m, dtype=np.int64)


@nb.njit(cache=True)
def _carry(digits, acc, ccard, c0, q, m, rows, n_rows):
    """Advance the odometer of the outer axes ``0..q-1`` by one, updating each
    index's offset ``acc[k]``."""
    j = q - 1
    while j >= 0:
        digits[j] += 1
        for k in range(n_rows):
            acc[k] += rows[k * m + j]
        if digits[j] < ccard[c0 + j]:
            return
        for k in range(n_rows):
            acc[k] -= rows[k * m + j] * ccard[c0 + j]
        digits[j] = 0
        j -= 1


@nb.njit(cache=True, fastmath={"reassoc", "nsz"})
def _fan_out(src, base, ccard, c0, m, rows, K, ratio, r0, out, out_off):
    """For each entry ``e`` of a clique table (``m`` axes of sizes
    ``ccard[c0:c0 + m]``) at ``src[base:]``: ``x = src[base + e] * ratio[r0 +
    i_0(e)]`` (no factor when ``r0 < 0``), then ``out[out_off[k] + i_{k+1}(e)] +=
    x`` for each of the ``K`` targets.  ``rows[k * m + j]`` is axis ``j``'s stride
    in index ``i_k`` (row 0 the ratio's).  A target that lacks the block's
    trailing axes gets each run of entries that share its index summed in
    registers first: added one by one into memory, they would wait on each
    other's stores."""
    q, B, inner, size, acc, digits = _blocks(ccard, c0, m, rows, K + 1)
    run = np.ones(K + 1, dtype=np.int64)
    for k in range(1, K + 1):
        j = m - 1
        while j >= q and rows[k * m + j] == 0:
            run[k] *= ccard[c0 + j]
            j -= 1
    x = np.empty(B)
    for e in range(base, base + size, B):
        if r0 >= 0:
            at = r0 + acc[0]
            for b in range(B):
                x[b] = src[e + b] * ratio[at + inner[0, b]]
        else:
            x[:] = src[e:e + B]
        for k in range(K):
            at, z = out_off[k] + acc[k + 1], run[k + 1]
            if z == 1:
                for b in range(B):
                    out[at + inner[k + 1, b]] += x[b]
            else:
                for b0 in range(0, B, z):
                    total = 0.0
                    for b in range(b0, b0 + z):
                        total += x[b]
                    out[at + inner[k + 1, b0]] += total
        _carry(digits, acc, ccard, c0, q, m, rows, K + 1)


@nb.njit(cache=True)
def _scale(table, base, ccard, c0, m, strides, s0, factor, f0, log_space):
    """Multiply each entry ``e`` of a clique table in place by
    ``factor[f0 + i(e)]`` (add it in ``log_space``; an entry already ``-inf``
    stays so), ``strides[s0:s0 + m]`` the axes' strides in ``i``."""
    rows = strides[s0:s0 + m]
    q, B, inner, size, acc, digits = _blocks(ccard, c0, m, rows, 1)
    for e in range(base, base + size, B):
        at = f0 + acc[0]
        if log_space:
            for b in range(B):
                if table[e + b] > -np.inf:
                    table[e + b] += factor[at + inner[0, b]]
        else:
            for b in range(B):
                table[e + b] *= factor[at + inner[0, b]]
        _carry(digits, acc, ccard, c0, q, m, rows, 1)


@nb.njit(cache=True)
def _slot_row(cvar_ptr, t, slot):
    """The stride row of clique ``t`` that picks the axis at ``slot`` alone."""
    row = np.zeros(cvar_ptr[t + 1] - cvar_ptr[t], dtype=np.int64)
    row[slot - cvar_ptr[t]] = 1
    return row


@nb.njit(cache=True)
def _enter_evidence(work, table_off, cvar_ptr, ccard, reader, rslot, observed, zero):
    """Multiply each observed variable's indicator into its reader clique
    (``zero`` its value for the excluded states: 0, or ``-inf`` in log space)."""
    for v in range(observed.shape[0]):
        if observed[v] >= 0:
            t, slot = reader[v], rslot[v]
            indicator = np.full(ccard[slot], zero)
            indicator[observed[v]] = 0.0 if zero == -np.inf else 1.0
            _scale(work, table_off[t], ccard, cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t],
                   _slot_row(cvar_ptr, t, slot), 0, indicator, 0, zero == -np.inf)


@nb.njit(cache=True)
def _mark_up(start, parents, marks):
    """Mark ``start`` and its ancestors."""
    t = start
    while t >= 0 and not marks[t]:
        marks[t] = True
        t = parents[t]


@nb.njit(cache=True)
def hugin_one_set(tables, table_off, cvar_ptr, ccard, up_stride, down_ptr, down_stride, seps,
                  sep_off, parents, reader, rslot, fan_ptr, fan_row_ptr, fan_rows, fan_out,
                  marg_off, prior_marg, observed, asked, work, marginals):
    """One evidence set's Hugin propagation on the calibrated prior tree.

    Collect runs only from the cliques holding evidence up to the root (the
    others would send their prior separators); each message is normalised, its
    total into ``log P(e)``, and multiplies the parent by its ratio to the
    prior separator.  Distribute runs only towards the readers of ``asked``
    variables: each clique's table times the ratio of its incoming message is
    never stored, but fanned out in one pass to every child's separator and
    every variable read there (``fan_*``: per clique, ``fan_ptr[t]:fan_ptr[t + 1]``
    targets with their stride rows at ``fan_row_ptr[t]:`` and offsets into one
    buffer, separators first, marginals after).  A clique without evidence whose incoming message
    equals its prior separator (relative 1e-13) keeps its prior, and so does
    its subtree.  ``work`` (as large as ``tables``) holds the cliques with
    evidence below them.  Returns ``log P(e)`` (``-inf`` when impossible) and
    fills ``marginals`` for the asked variables."""
    n = parents.shape[0]
    dirty = np.zeros(n, dtype=np.bool_)
    needed = np.zeros(n, dtype=np.bool_)
    for v in range(observed.shape[0]):
        if observed[v] >= 0:
            _mark_up(reader[v], parents, dirty)
        if asked[v]:
            _mark_up(reader[v], parents, needed)
    for t in range(n):
        if dirty[t]:
            work[table_off[t]:table_off[t + 1]] = tables[table_off[t]:table_off[t + 1]]
    _enter_evidence(work, table_off, cvar_ptr, ccard, reader, rslot, observed, 0.0)
    sent = seps.copy()                  # what each clique with evidence sent up, normalised
    ratio = np.zeros(seps.shape[0])
    log_pe = 0.0
    one = np.zeros(1, dtype=np.int64)
    for t in range(n - 1, 0, -1):                                 # collect
        if not dirty[t]:
            continue
        p, c0, m, s0, s1 = parents[t], cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t], sep_off[t], \
            sep_off[t + 1]
        sent[s0:s1] = 0.0
        one[0] = s0
        rows = np.zeros(2 * m, dtype=np.int64)        # no ratio; the separator to p
        rows[m:] = up_stride[c0:c0 + m]
        _fan_out(work, table_off[t], ccard, c0, m, rows, 1, ratio, -1, sent, one)
        total = sent[s0:s1].sum()
        if total <= 0.0:
            return -np.inf
        log_pe += np.log(total)
        sent[s0:s1] /= total
        for s in range(s0, s1):
            ratio[s] = sent[s] / seps[s] if seps[s] > 0.0 else 0.0
        _scale(work, table_off[p], ccard, cvar_ptr[p], cvar_ptr[p + 1] - cvar_ptr[p],
               down_stride, down_ptr[t], ratio, s0, False)
    if dirty[0]:
        total = work[0:table_off[1]].sum()
        if total <= 0.0:
            return -np.inf
        log_pe += np.log(total)
        work[0:table_off[1]] /= total
    buffer = np.zeros(sep_off[n] + marg_off[-1])
    live = np.zeros(n, dtype=np.bool_)         # the table differs from the prior
    live[0] = dirty[0]
    for t in range(n):                                            # distribute
        if not needed[t] or not dirty[0]:      # without evidence every table is the prior
            continue
        s0, s1 = sep_off[t], sep_off[t + 1]
        r0 = -1
        if t > 0:
            if not live[parents[t]]:
                continue
            total = buffer[s0:s1].sum()
            held = not dirty[t]
            for s in range(s0, s1):
                buffer[s] /= total
                denominator = sent[s] if dirty[t] else seps[s]
                ratio[s] = buffer[s] / denominator if denominator > 0.0 else 0.0
                held = held and abs(buffer[s] - seps[s]) <= 1e-13 * seps[s]
            if held:
                continue
            r0 = 0
        live[t] = True
        c0, m = cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t]
        K = fan_ptr[t + 1] - fan_ptr[t]
        rows = np.empty((K + 1) * m, dtype=np.int64)
        rows[:m] = up_stride[c0:c0 + m]
        rows[m:] = fan_rows[fan_row_ptr[t]:fan_row_ptr[t + 1]]
        _fan_out(work if dirty[t] else tables, table_off[t], ccard, c0, m, rows, K,
                 ratio, s0 if r0 == 0 else -1, buffer, fan_out[fan_ptr[t]:fan_ptr[t + 1]])
    for v in range(observed.shape[0]):                            # read the marginals
        if not asked[v]:
            continue
        m0, m1 = marg_off[v], marg_off[v + 1]
        if not live[reader[v]]:
            marginals[m0:m1] = prior_marg[m0:m1]
            continue
        at = sep_off[n] + m0
        total = buffer[at:at + m1 - m0].sum()
        marginals[m0:m1] = buffer[at:at + m1 - m0] / total
    return log_pe


@nb.njit(cache=True)
def _max_to_sep(table, base, ccard, c0, m, strides, msg, best, s0):
    """Per separator entry ``s`` (``strides`` the axes' strides in it): the
    largest entry of the clique table that maps to it into ``msg[s0 + s]`` and
    that entry's index into ``best[s0 + s]`` (the lowest index among ties)."""
    q, B, inner, size, acc, digits = _blocks(ccard, c0, m, strides, 1)
    for e in range(0, size, B):
        at = s0 + acc[0]
        for b in range(B):
            s = at + inner[0, b]
            if best[s] < 0 or table[base + e + b] > msg[s]:
                msg[s] = table[base + e + b]
                best[s] = e + b
        _carry(digits, acc, ccard, c0, q, m, strides, 1)


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
    for t in range(n - 1, 0, -1):
        p, c0, m = parents[t], cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t]
        _max_to_sep(tables, table_off[t], ccard, c0, m, up_stride[c0:c0 + m], msg, best,
                    sep_off[t])
        _scale(tables, table_off[p], ccard, cvar_ptr[p], cvar_ptr[p + 1] - cvar_ptr[p],
               down_stride, down_ptr[t], msg, sep_off[t], True)
    return tables, msg, best


@nb.njit(cache=True)
def max_product_one_set(prior_tables, prior_msg, prior_best, table_off, cvar_ptr, cvar, ccard,
                        up_stride, down_ptr, down_stride, sep_off, parents, reader, rslot,
                        observed, work, states):
    """One evidence set's most probable explanation from the evidence-free pass
    of :func:`max_product_prior`: max-sum runs again only from the cliques
    holding evidence up to the root, each correcting its parent by the change
    of its message; decoding walks down from the root's best entry, a clique
    without evidence below it reading the prior's best entries.  ``work`` (as
    large as the tables) holds the cliques with evidence below them.  Fills
    ``states``; False when the evidence is impossible."""
    n = parents.shape[0]
    dirty = np.zeros(n, dtype=np.bool_)
    for v in range(observed.shape[0]):
        if observed[v] >= 0:
            _mark_up(reader[v], parents, dirty)
    for t in range(n):
        if dirty[t]:
            work[table_off[t]:table_off[t + 1]] = prior_tables[table_off[t]:table_off[t + 1]]
    _enter_evidence(work, table_off, cvar_ptr, ccard, reader, rslot, observed, -np.inf)
    msg = np.full(sep_off[n], -np.inf)
    best = np.full(sep_off[n], -1, dtype=np.int64)
    change = np.zeros(sep_off[n])
    for t in range(n - 1, 0, -1):
        if not dirty[t]:
            continue
        p, c0, m, s0 = parents[t], cvar_ptr[t], cvar_ptr[t + 1] - cvar_ptr[t], sep_off[t]
        _max_to_sep(work, table_off[t], ccard, c0, m, up_stride[c0:c0 + m], msg, best, s0)
        for s in range(s0, sep_off[t + 1]):
            # an entry the prior already rules out is -inf in the parent and stays so
            change[s] = msg[s] - prior_msg[s] if prior_msg[s] > -np.inf else 0.0
        _scale(work, table_off[p], ccard, cvar_ptr[p], cvar_ptr[p + 1] - cvar_ptr[p],
               down_stride, down_ptr[t], change, s0, True)
    root = work if dirty[0] else prior_tables
    chosen = np.zeros(n, dtype=np.int64)
    for e in range(table_off[1]):
        if root[e] > root[chosen[0]]:
            chosen[0] = e
    if root[chosen[0]] == -np.inf:
        return False
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
