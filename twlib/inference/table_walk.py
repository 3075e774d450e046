"""Walks over a clique table's entries, for the junction tree's compiled passes.

A pass walks each clique table once per use with an odometer over its axes,
carrying for every target (a separator, a variable's marginal, a factor it
multiplies in) the index that entry maps to: index arrays as large as the
tables would double the memory the tree needs and the bytes each pass reads.
Index ``r`` is described by a stride row, ``rows[r * m + j]`` the stride of
axis ``j`` (0 for an axis the index lacks).  :func:`fan_out` is the
sum-product walk, :func:`max_out` the max-sum one, :func:`add_factor` adds a
log-factor into a table in place, :func:`sum_factors` fills a table with the
sum of many log-factors (a clique's log-potential; :func:`summed_tables`
calls it on tables given by their variables).

Offsets inside a block are unsigned: numba gives a signed index the
negative-index wraparound test on every access, which keeps the compiler
from vectorising the block loops (measured: a copy loop 0.82 ns an entry
signed, 0.11 unsigned).  Mixing a signed and an unsigned integer makes a
float in numba, so each block's base offset is made unsigned before use.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["fan_out", "fan_out_observed", "max_out", "best_trailing_states", "add_factor",
           "sum_factors", "summed_tables"]


_BLOCK = 64     # entries the innermost axes of a table span at least, walked by offset tables
_SEGMENT = 4    # consecutive offsets from which a stretch is walked as a slice, not gathered


@nb.njit(cache=True)
def blocks(ccard, c0, m, rows, n_rows):
    """Split a clique table's axes into outer ones and a block of trailing
    ones spanning at least ``_BLOCK`` entries (or all): ``(q, B, inner, size,
    acc, digits)``, the block's first axis, its entries, ``inner[k, b]`` the
    offset of its entry ``b`` in index ``k`` (``rows[k * m + j]`` the stride of
    axis ``j`` in it), the table's entries, and the odometer of :func:`carry`
    at the first entry (each index's offset, the outer axes' digits).
    Walking the block by offset tables keeps the odometer's carries, which a
    run of two-state axes would otherwise pay at every other entry, to one per
    block."""
    q, B = m, 1
    while q > 0 and B < _BLOCK:
        q -= 1
        B *= ccard[c0 + q]
    inner = np.zeros((n_rows, B), dtype=np.uint64)
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
            inner[k, b] = np.uint64(at)
    size = B
    for j in range(q):
        size *= ccard[c0 + j]
    return q, B, inner, size, np.zeros(n_rows, dtype=np.int64), np.zeros(m, dtype=np.int64)


@nb.njit(cache=True)
def run_length(ccard, c0, m, rows, r, q):
    """How many consecutive entries share their entry of index ``r``: the
    product of the trailing axes of the block (from ``q``) that index lacks."""
    length, j = 1, m - 1
    while j >= q and rows[r * m + j] == 0:
        length *= ccard[c0 + j]
        j -= 1
    return length


@nb.njit(cache=True)
def carry(digits, acc, ccard, c0, q, m, rows, n_rows):
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


@nb.njit(cache=True)
def stretches(ccard, c0, m, rows, n_rows, q):
    """Per index, how many consecutive entries of a block its offset follows
    one by one (its strides are the table's own over those trailing axes):
    the block is walked in slices of that length, which vectorise, instead of
    gathering entry by entry."""
    out = np.ones(n_rows, dtype=np.uint64)
    for r in range(n_rows):
        length, j = 1, m - 1
        while j >= q and rows[r * m + j] == length:
            length *= ccard[c0 + j]
            j -= 1
        out[r] = length
    return out


@nb.njit(cache=True, fastmath={"reassoc", "nsz"})
def fan_out(src, base, ccard, c0, m, rows, F, factors, f_off, K, out, out_off):
    """For each entry ``e`` of a clique table (``m`` axes of sizes
    ``ccard[c0:c0 + m]``): ``x = src[base + i_s(e)]`` times
    ``factors[f_off[f] + i_f(e)]`` for each of the ``F`` factors, then
    ``out[out_off[k] + i_{F+k}(e)] += x`` for each of the ``K`` targets.
    ``rows[r * m + j]`` is axis ``j``'s stride in index ``i_r``, the source's
    index ``i_s`` last (the table's own strides, unless axes were fixed by
    :func:`fan_out_observed`).  A target that lacks the block's trailing axes
    gets each run of entries that share its index summed in registers first:
    added one by one into memory, they would wait on each other's stores."""
    n_rows = F + K + 1
    q, B, inner, size, acc, digits = blocks(ccard, c0, m, rows, n_rows)
    run = np.ones(K, dtype=np.uint64)
    for k in range(K):
        run[k] = run_length(ccard, c0, m, rows, F + k, q)
    flat = flat_rows(inner, F)
    stretch = stretches(ccard, c0, m, rows, n_rows, q)
    count, B = size // B, np.uint64(B)
    x = np.empty(B)
    for _ in range(count):
        gather(x, src, np.uint64(base + acc[F + K]), inner[F + K], stretch[F + K])
        for f in range(F):
            at = np.uint64(f_off[f] + acc[f])
            if flat[f]:
                y = factors[at]
                for b in range(B):
                    x[b] *= y
            elif stretch[f] >= _SEGMENT:
                w = stretch[f]
                for s0 in range(np.uint64(0), B, w):
                    a = at + inner[f, s0]
                    for b in range(w):
                        x[s0 + b] *= factors[a + b]
            else:
                for b in range(B):
                    x[b] *= factors[at + inner[f, b]]
        for k in range(K):
            at, z, w = np.uint64(out_off[k] + acc[F + k]), run[k], stretch[F + k]
            if z > 1:
                for b0 in range(np.uint64(0), B, z):
                    total = 0.0
                    for b in range(b0, b0 + z):
                        total += x[b]
                    out[at + inner[F + k, b0]] += total
            elif w >= _SEGMENT:
                for s0 in range(np.uint64(0), B, w):
                    a = at + inner[F + k, s0]
                    for b in range(w):
                        out[a + b] += x[s0 + b]
            else:
                for b in range(B):
                    out[at + inner[F + k, b]] += x[b]
        carry(digits, acc, ccard, c0, q, m, rows, n_rows)


@nb.njit(cache=True)
def gather(x, src, at, inner, stretch):
    """``x[b] = src[at + inner[b]]`` for the block, by slices of ``stretch``
    consecutive entries where they are long enough to pay."""
    B = np.uint64(x.shape[0])
    if stretch >= _SEGMENT:
        for s0 in range(np.uint64(0), B, stretch):
            a = at + inner[s0]
            for b in range(stretch):
                x[s0 + b] = src[a + b]
    else:
        for b in range(B):
            x[b] = src[at + inner[b]]


@nb.njit(cache=True)
def fan_out_observed(src, base, ccard, c0, m, rows, F, factors, f_off, K, out, out_off,
                      cvar, observed):
    """:func:`fan_out` over only the entries of a clique table that agree with
    the observed variables among its axes.  Every other entry is zero in the
    posterior (the evidence's indicator is idempotent, so multiplying it into
    one more clique leaves the joint as it was), and skipping them divides a
    pass's work by the observed variables' numbers of states.  ``rows`` holds
    the ``F + K`` index rows; the source's is made here."""
    n_rows = F + K
    fixed = 0
    for j in range(m):
        fixed += observed[cvar[c0 + j]] >= 0
    m2 = m - fixed
    card = np.empty(m2, dtype=np.int64)
    rows2 = np.empty((n_rows + 1) * m2, dtype=np.int64)
    shift = np.zeros(n_rows + 1, dtype=np.int64)
    stride, j2 = 1, m2
    for j in range(m - 1, -1, -1):
        state = observed[cvar[c0 + j]]
        if state >= 0:
            for r in range(n_rows):
                shift[r] += state * rows[r * m + j]
            shift[n_rows] += state * stride
        else:
            j2 -= 1
            card[j2] = ccard[c0 + j]
            for r in range(n_rows):
                rows2[r * m2 + j2] = rows[r * m + j]
            rows2[n_rows * m2 + j2] = stride
        stride *= ccard[c0 + j]
    f_at, out_at = f_off[:F] + shift[:F], out_off[:K] + shift[F:n_rows]
    fan_out(src, base + shift[n_rows], card, 0, m2, rows2, F, factors, f_at, K, out, out_at)


@nb.njit(cache=True)
def max_out(src, base, ccard, c0, m, rows, F, factors, f_off, out, best, o0):
    """Max-sum's :func:`fan_out`: ``x = src[base + e]`` plus the ``F`` factors
    (logs), and per entry ``s`` of the one target (row ``F``) the largest ``x``
    that maps to it into ``out[o0 + s]``, the entry reaching it into
    ``best[o0 + s]`` (the lowest among ties).  An empty ``best`` records no
    entries; ``out`` must then hold ``-inf`` where the target's entries go."""
    q, B, inner, size, acc, digits = blocks(ccard, c0, m, rows, F + 1)
    flat = flat_rows(inner, F)
    z = run_length(ccard, c0, m, rows, F, q)
    # when the run spans every axis the target lacks, each target entry is
    # reached by one run only, and its first value is its maximum
    lacked = 1
    for j in range(m):
        if rows[F * m + j] == 0:
            lacked *= ccard[c0 + j]
    once = lacked == z
    record = best.shape[0] > 0
    x = np.empty(B)
    uB = np.uint64(B)
    for e in range(0, size, B):
        x[:] = src[base + e:base + e + B]
        for f in range(F):
            at = np.uint64(f_off[f] + acc[f])
            if flat[f]:
                y = factors[at]
                for b in range(uB):
                    x[b] += y
            else:
                for b in range(uB):
                    x[b] += factors[at + inner[f, b]]
        at = o0 + acc[F]
        for b0 in range(0, B, z):
            top = run_max(x, b0, z)
            s = at + np.int64(inner[F, b0])
            if not record:
                if once or top > out[s]:
                    out[s] = top
            elif once or best[s] < 0 or top > out[s]:
                where = b0
                while x[where] < top:                 # the first entry reaching the maximum
                    where += 1
                out[s] = top
                best[s] = e + where
        carry(digits, acc, ccard, c0, q, m, rows, F + 1)


@nb.njit(cache=True)
def best_trailing_states(states, cvar, ccard, c0, m, shared, rows, F, factors, f_off):
    """The states of a clique's trailing variables that, with the states of
    its ``shared`` leading ones already in ``states``, give the largest sum of
    its ``F`` factors (logs; ``rows[f * m + j]`` axis ``j``'s stride in factor
    ``f``, ``f_off[f]`` its first entry in ``factors``), the lowest entry among
    ties, into ``states``.  This reads a max-sum pass back down without the
    best entries :func:`max_out` can keep for every separator entry: a few
    entries a clique instead."""
    digits = np.empty(m, dtype=np.int64)
    for j in range(shared):
        digits[j] = states[cvar[c0 + j]]
    lacked = 1
    for j in range(shared, m):
        lacked *= ccard[c0 + j]
    top, chosen = -np.inf, 0
    for k in range(lacked):
        rest = k
        for j in range(m - 1, shared - 1, -1):
            digits[j] = rest % ccard[c0 + j]
            rest //= ccard[c0 + j]
        value = 0.0
        for f in range(F):
            at = f_off[f]
            for j in range(m):
                at += digits[j] * rows[f * m + j]
            value += factors[at]
        if value > top:
            top, chosen = value, k
    for j in range(m - 1, shared - 1, -1):
        states[cvar[c0 + j]] = chosen % ccard[c0 + j]
        chosen //= ccard[c0 + j]


@nb.njit(cache=True, fastmath={"nnan"})
def run_max(x, start, count):
    """The largest of ``x[start:start + count]`` (no NaN there, so the compiler
    may keep several maxima in flight instead of one compare after another)."""
    top = x[start]
    for b in range(start + 1, start + count):
        top = max(top, x[b])
    return top


@nb.njit(cache=True)
def flat_rows(inner, F):
    """Which of the first ``F`` indices stay put over a whole block (the block's
    axes are not theirs): such a factor is one number per block."""
    flat = np.ones(F, dtype=np.bool_)
    for f in range(F):
        for b in range(inner.shape[1]):
            if inner[f, b] != 0:
                flat[f] = False
                break
    return flat


@nb.njit(cache=True, fastmath={"nsz"})
def sum_factors(out, ccard, c0, m, rows, F, factors, f_off):
    """``out[e]`` = the sum over the ``F`` factors of ``factors[f_off[f] +
    i_f(e)]``, for each entry ``e`` of a table of ``m`` axes of sizes
    ``ccard[c0:c0 + m]`` (``rows[f * m + j]`` axis ``j``'s stride in index
    ``i_f``): a clique's log-potential from the logs of its factors in one
    walk of the table, where numpy adds them one walk a factor.

    Within a block a factor takes one value per configuration of the block
    axes it has, often far fewer than the block's entries (a pairwise factor
    with one axis there: two).  So the factors are grouped by the block axes
    they have; per block each group's sum is made once per configuration of
    those axes and then spread over the block.  A group over no outer axis
    is the same in every block and is made once.

    >>> out = np.empty(4)
    >>> sum_factors(out, np.array([2, 2]), 0, 2, np.array([1, 0, 0, 1]), 2,
    ...             np.array([1.0, 2.0, 10.0, 20.0]), np.array([0, 2]))
    >>> out.tolist()
    [11.0, 21.0, 12.0, 22.0]
    """
    q, B, inner, size, acc, digits = blocks(ccard, c0, m, rows, F)
    stretch = stretches(ccard, c0, m, rows, F, q)
    fixed = np.zeros(B)                     # the factors over block axes alone
    group, config, first, shape = _block_groups(ccard, c0, m, rows, F, q, B)
    outer = np.zeros(F, dtype=np.bool_)
    for f in range(F):
        for j in range(q):
            outer[f] = outer[f] or rows[f * m + j] != 0
        if not outer[f]:
            for b in range(B):
                fixed[b] += factors[f_off[f] + inner[f, b]]
    todo = np.zeros(F, dtype=np.int64)      # the factors read per block, group by group
    n = 0
    for g in range(shape.shape[0]):
        for f in range(F):
            if outer[f] and group[f] == g:
                todo[n] = f
                n += 1
    sums = np.empty(B)
    count, B = size // B, np.uint64(B)
    e = np.uint64(0)
    for _ in range(count):
        for b in range(B):
            out[e + b] = fixed[b]
        k = 0
        while k < n:
            g = group[todo[k]]
            C = shape[g]
            if C == B:                      # every block axis: read entry by entry
                f = todo[k]
                at = np.uint64(f_off[f] + acc[f])
                if stretch[f] >= _SEGMENT:
                    w = stretch[f]
                    for s0 in range(np.uint64(0), B, w):
                        a = at + inner[f, s0]
                        for b in range(w):
                            out[e + s0 + b] += factors[a + b]
                else:
                    for b in range(B):
                        out[e + b] += factors[at + inner[f, b]]
                k += 1
                continue
            sums[:C] = 0.0
            while k < n and group[todo[k]] == g:
                f = todo[k]
                at = np.uint64(f_off[f] + acc[f])
                for c in range(C):
                    sums[c] += factors[at + inner[f, first[g, c]]]
                k += 1
            for b in range(B):
                out[e + b] += sums[config[g, b]]
        e += B
        carry(digits, acc, ccard, c0, q, m, rows, F)


def summed_tables(scope, card, tables) -> np.ndarray:
    """The sum of the log tables ``tables`` (pairs ``(variables, values)``,
    each over some of ``scope``) broadcast over ``scope``, whose axes have
    ``card`` states: one :func:`sum_factors` walk of the result.

    >>> summed_tables(("a", "b"), [2, 2], [(("b",), np.array([1.0, 2.0])),
    ...                                    (("a",), np.array([10.0, 20.0]))]).tolist()
    [[11.0, 12.0], [21.0, 22.0]]
    """
    rows, logs = [], []
    for variables, values in tables:
        values = np.asarray(values, dtype=float)
        strides = {v: math.prod(values.shape[k + 1:]) for k, v in enumerate(variables)}
        rows += [strides.get(v, 0) for v in scope]
        logs.append(values.ravel())
    out = np.empty(math.prod(card))
    sum_factors(out, np.array(card, dtype=np.int64), 0, len(scope),
                np.array(rows, dtype=np.int64), len(logs),
                np.concatenate(logs) if logs else np.zeros(1),
                np.cumsum([0] + [a.size for a in logs[:-1]]).astype(np.int64))
    return out.reshape(card)


@nb.njit(cache=True)
def _block_groups(ccard, c0, m, rows, F, q, B):
    """The factors' groups by the block axes they have (of axes ``q..m-1``):
    ``(group, config, first, shape)``, factor ``f``'s group ``group[f]``,
    ``config[g, b]`` the configuration of group ``g``'s axes at block entry
    ``b``, ``first[g, c]`` the first entry of configuration ``c`` and
    ``shape[g]`` the group's number of configurations."""
    # bit r: the factor has the r-th block axis of more than one state (at
    # most six, as the block stops growing at 64 entries)
    mask = np.zeros(F, dtype=np.int64)
    for f in range(F):
        r = 0
        for j in range(q, m):
            if ccard[c0 + j] > 1:
                if rows[f * m + j] != 0:
                    mask[f] |= 1 << r
                r += 1
    masks = np.zeros(F, dtype=np.int64)     # each mask once, in order of first use
    group = np.zeros(F, dtype=np.int64)
    G = 0
    for f in range(F):
        g = 0
        while g < G and masks[g] != mask[f]:
            g += 1
        if g == G:
            masks[G] = mask[f]
            G += 1
        group[f] = g
    config = np.zeros((G, B), dtype=np.uint64)
    first = np.zeros((G, B), dtype=np.uint64)
    shape = np.ones(G, dtype=np.uint64)
    for g in range(G):
        digits = np.zeros(m, dtype=np.int64)
        seen = np.zeros(B, dtype=np.bool_)
        for b in range(B):
            c, size = 0, 1                  # the configuration, the group's axes row-major
            r = 0
            for j in range(q, m):
                if ccard[c0 + j] > 1:
                    r += 1
            for j in range(m - 1, q - 1, -1):
                if ccard[c0 + j] > 1:
                    r -= 1
                    if masks[g] >> r & 1:
                        c += digits[j] * size
                        size *= ccard[c0 + j]
            config[g, b] = c
            if not seen[c]:
                seen[c] = True
                first[g, c] = b
            shape[g] = size
            j = m - 1                       # the next entry's digits
            while j >= q:
                digits[j] += 1
                if digits[j] < ccard[c0 + j]:
                    break
                digits[j] = 0
                j -= 1
    return group, config, first, shape


@nb.njit(cache=True)
def add_factor(table, base, ccard, c0, m, strides, s0, factor, f0):
    """Add ``factor[f0 + i(e)]`` to each entry ``e`` of a clique log-table in place
    (an entry already ``-inf`` stays so), ``strides[s0:s0 + m]`` the axes'
    strides in ``i``."""
    rows = strides[s0:s0 + m]
    q, B, inner, size, acc, digits = blocks(ccard, c0, m, rows, 1)
    uB = np.uint64(B)
    for e in range(base, base + size, B):
        at, ue = np.uint64(f0 + acc[0]), np.uint64(e)
        for b in range(uB):
            if table[ue + b] > -np.inf:
                table[ue + b] += factor[at + inner[0, b]]
        carry(digits, acc, ccard, c0, q, m, rows, 1)
