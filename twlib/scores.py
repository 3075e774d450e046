"""Decomposable scores of Bayesian network families, and tables of them.

A score is maximised.  For a child ``X`` with ``r`` states and a parent set of
``q`` joint states, with counts ``N_jk`` (parent state ``j``, child state ``k``):

* ``"ll"``: log-likelihood ``sum_jk N_jk log(N_jk / N_j)``;
* ``"bic"`` (= minus MDL): ``ll - log(N)/2 * q (r - 1)``;
* ``"bdeu"``: log BDeu marginal likelihood with equivalent sample size ``ess``,
  ``sum_j [lgamma(a_j) - lgamma(a_j + N_j)] + sum_jk [lgamma(a_jk + N_jk) - lgamma(a_jk)]``
  with ``a_j = ess / q`` and ``a_jk = ess / (q r)``.

All logarithms are natural.  :class:`ParentSetScores` enumerates candidate
parent sets for every variable with the pruning rules of Wu (2010, ch. 3.3).
"""
from __future__ import annotations

import copy
import heapq
import math
from itertools import combinations
from pathlib import Path

import numba as nb
import numpy as np

from .counting import dense_limit
from .data import Dataset
from .errors import FormatError, InputError, UnknownName
from .parallel import blocks, run_tasks, task_count

__all__ = ["SCORES", "local_score", "network_score", "ParentSetScores", "PRUNING_RULES",
           "max_parents_bound", "FamilyScorer"]

SCORES = ("bic", "bdeu", "ll")
_KIND = {"ll": 0, "bic": 1, "bdeu": 2}
PRUNING_RULES = ("size", "bound", "subset")
# Ties: a parent set survives "subset" pruning only if it beats every subset by
# more than this relative margin, so equal scores keep the smaller set.
TIE_TOLERANCE = 1e-10


def _check_score(score: str, ess: float) -> int:
    if score not in _KIND:
        raise InputError(f"unknown score {score!r}; choose one of {SCORES}")
    if score == "bdeu" and not ess > 0:
        raise InputError(f"the BDeu equivalent sample size must be positive, got {ess}")
    return _KIND[score]


# --------------------------------------------------------------------------- kernels
@nb.njit(cache=True)
def _bdeu_prior(q, r, ess):
    """Dirichlet pseudo-counts per parent state and per cell, and their log-gammas."""
    a_j = ess / q
    a_jk = ess / (q * r)
    return a_j, a_jk, math.lgamma(a_j), math.lgamma(a_jk)


@nb.njit(cache=True)
def _with_penalty(total, kind, q, r, n):
    """Subtract the BIC penalty ``log(N)/2 * q (r - 1)`` when the score is BIC."""
    if kind == 1:
        return total - 0.5 * math.log(n) * q * (r - 1)
    return total


@nb.njit(cache=True)
def _family_from_dense(c, q, r, kind, ess, n):
    """Score of a family from its dense count table c[j * r + k]."""
    total = 0.0
    a_j, a_jk, lg_aj, lg_ajk = _bdeu_prior(q, r, ess)
    for j in range(q):
        nj = 0
        for k in range(r):
            nj += c[j * r + k]
        if nj == 0:
            continue
        if kind == 2:
            total += lg_aj - math.lgamma(a_j + nj)
            for k in range(r):
                njk = c[j * r + k]
                if njk > 0:
                    total += math.lgamma(a_jk + njk) - lg_ajk
        else:
            lnj = math.log(nj)
            for k in range(r):
                njk = c[j * r + k]
                if njk > 0:
                    total += njk * (math.log(njk) - lnj)
    return _with_penalty(total, kind, q, r, n)


@nb.njit(cache=True)
def _family_from_sorted_keys(keys, q, r, kind, ess, n):
    """Score of a family from the sorted keys (parent_state * r + child_state) of all rows."""
    total = 0.0
    a_j, a_jk, lg_aj, lg_ajk = _bdeu_prior(q, r, ess)
    m = keys.shape[0]
    i = 0
    while i < m:
        j = keys[i] // r
        # one parent configuration: rows i .. e-1
        e = i
        while e < m and keys[e] // r == j:
            e += 1
        nj = e - i
        if kind == 2:
            total += lg_aj - math.lgamma(a_j + nj)
        t = i
        while t < e:
            u = t
            while u < e and keys[u] == keys[t]:
                u += 1
            njk = u - t
            if kind == 2:
                total += math.lgamma(a_jk + njk) - lg_ajk
            else:
                total += njk * (math.log(njk) - math.log(nj))
            t = u
        i = e
    return _with_penalty(total, kind, q, r, n)


@nb.njit(cache=True)
def _count_child(keys, child_values, q, r, kind, ess, n, max_dense):
    """Score of a family from the parents' joint keys and the child's column."""
    if q * r <= max_dense:
        c = np.zeros(q * r, dtype=np.int64)
        for i in range(n):
            c[keys[i] * r + child_values[i]] += 1
        return _family_from_dense(c, q, r, kind, ess, n)
    fam = np.empty(n, dtype=np.int64)
    for i in range(n):
        fam[i] = keys[i] * r + child_values[i]
    fam.sort()
    return _family_from_sorted_keys(fam, q, r, kind, ess, n)


@nb.njit(cache=True)
def _parent_keys(values_t, arities, parents):
    """Mixed-radix joint state of ``parents`` in every row, and their number of joint states."""
    n = values_t.shape[1]
    keys = np.zeros(n, dtype=np.int64)
    q = 1
    for j in range(parents.shape[0]):
        p = parents[j]
        q *= arities[p]
        for i in range(n):
            keys[i] = keys[i] * arities[p] + values_t[p, i]
    return keys, q


@nb.njit(cache=True)
def _family_score(values_t, arities, child, parents, kind, ess, max_dense):
    keys, q = _parent_keys(values_t, arities, parents)
    return _count_child(keys, values_t[child], q, arities[child], kind, ess, keys.shape[0],
                        max_dense)


@nb.njit(parallel=True, cache=True)
def _scores_by_parent_set(values_t, arities, parent_sets, todo, kind, ess, max_dense):
    """Scores of (child c, parent_sets[t]) for every (t, c) with todo[t, c]; NaN elsewhere.

    The parents' joint keys are computed once per parent set and shared by all
    children, which halves the row passes compared with scoring family by family.
    """
    m = parent_sets.shape[0]
    n_vars, n = values_t.shape
    out = np.full((m, n_vars), np.nan)
    for t in nb.prange(m):
        any_todo = False
        for c in range(n_vars):
            any_todo = any_todo or todo[t, c]
        if not any_todo:
            continue
        keys = np.zeros(n, dtype=np.int64)
        q = 1
        for j in range(parent_sets.shape[1]):
            p = parent_sets[t, j]
            q *= arities[p]
            for i in range(n):
                keys[i] = keys[i] * arities[p] + values_t[p, i]
        for c in range(n_vars):
            if todo[t, c]:
                out[t, c] = _count_child(keys, values_t[c], q, arities[c], kind, ess, n,
                                         max_dense)
    return out


@nb.njit(parallel=True, cache=True)
def _observed_configurations(values_t, arities, parent_sets, rows):
    """For each parent set ``parent_sets[t]`` with ``rows[t]``: how many of its
    joint states occur in the data (de Campos & Ji's ``|J+|``); 0 elsewhere."""
    m = parent_sets.shape[0]
    n = values_t.shape[1]
    out = np.zeros(m, dtype=np.int64)
    for t in nb.prange(m):
        if not rows[t]:
            continue
        keys, _ = _parent_keys(values_t, arities, parent_sets[t])
        keys.sort()
        count = 1 if n > 0 else 0
        for i in range(1, n):
            if keys[i] != keys[i - 1]:
                count += 1
        out[t] = count
    return out


@nb.njit(parallel=True, cache=True)
def _scores_with_each_added(values_t, arities, child, parents, extra, kind, ess, max_dense):
    """Scores of ``child`` given ``parents`` plus ``extra[t]``, for every t.

    The joint keys of ``parents`` are computed once and extended per candidate.
    """
    n = values_t.shape[1]
    base, q = _parent_keys(values_t, arities, parents)
    out = np.empty(extra.shape[0])
    for t in nb.prange(extra.shape[0]):
        u = extra[t]
        keys = np.empty(n, dtype=np.int64)
        for i in range(n):
            keys[i] = base[i] * arities[u] + values_t[u, i]
        out[t] = _count_child(keys, values_t[child], q * arities[u], arities[child], kind, ess,
                              n, max_dense)
    return out


@nb.njit(cache=True)
def _first_subset(masks, cand):
    """Index of the first row of ``masks`` that is a subset of ``cand`` (or -1)."""
    for t in range(masks.shape[0]):
        ok = True
        for w in range(masks.shape[1]):
            if masks[t, w] & ~cand[w] != 0:
                ok = False
                break
        if ok:
            return t
    return -1


# --------------------------------------------------------------------------- API
def local_score(data: Dataset, child, parents=(), *, score: str = "bic", ess: float = 1.0) -> float:
    """Score of one family: ``child`` given the parent set ``parents``.

    >>> import pandas as pd
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 0, 1]}))
    >>> round(local_score(ds, "b", ["a"], score="ll"), 6)
    0.0
    """
    kind = _check_score(score, ess)
    c = data.index(child)
    p = np.array(data.indices(parents), dtype=np.int64)
    if c in p.tolist():
        raise InputError(f"{data.names[c]!r} cannot be its own parent")
    if len(set(p.tolist())) != len(p):
        raise InputError(f"repeated parents in {list(parents)}")
    values_t = data.columns
    return float(_family_score(values_t, data.arities, c, p, kind, float(ess),
                               dense_limit(data.n_rows)))


def network_score(data: Dataset, parents: dict, *, score: str = "bic", ess: float = 1.0) -> float:
    """Sum of the local scores of every variable given its parents.

    ``parents`` maps each variable of ``data`` to its parent list (missing
    variables have no parents).
    """
    unknown = [v for v in parents if v not in data.names]
    if unknown:
        raise UnknownName(f"variables not in the data: {unknown}")
    return float(sum(local_score(data, v, parents.get(v, ()), score=score, ess=ess)
                     for v in data.names))


class FamilyScorer:
    """Local scores of any family, computed on demand and remembered.

    The scorer a local search needs: ``scorer(child, parents)`` for one family
    and :meth:`with_each_added` for a parent set grown by each of many
    candidates in one parallel pass.  Variables are column indices of the
    data; every score computed is cached.

    >>> import pandas as pd
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 0, 1],
    ...                                        "c": [0, 0, 1, 1]}))
    >>> fs = FamilyScorer(ds, score="ll")
    >>> fs(1, ()) < fs(1, (0,)) == 0.0
    True
    >>> fs.with_each_added(1, (), [0, 2]).round(3).tolist()
    [0.0, -2.773]
    """

    def __init__(self, data: Dataset, *, score: str = "bic", ess: float = 1.0):
        self.kind = _check_score(score, ess)
        self.score = score
        self.ess = float(ess)
        self.data = data
        self._values_t = data.columns
        self._arities = np.asarray(data.arities, dtype=np.int64)
        self._dense = dense_limit(data.n_rows)
        self._cache: dict = {}
        self._rows: dict = {}
        self._row_entries = 0

    def __len__(self) -> int:
        """Families scored so far."""
        return len(self._cache) + self._row_entries

    def __call__(self, child: int, parents) -> float:
        key = (child, tuple(sorted(parents)))
        got = self._cache.get(key)
        if got is None:
            got = float(_family_score(self._values_t, self._arities, child,
                                      np.array(key[1], dtype=np.int64), self.kind, self.ess,
                                      self._dense))
            self._cache[key] = got
        return got

    def with_each_added(self, child: int, parents, candidates) -> np.ndarray:
        """Scores of ``child`` given ``parents + (u,)`` for each ``u`` in ``candidates``.

        Remembered as one row per ``(child, parents)`` over all variables, which
        is what a local search asks again after undoing a move.
        """
        base = tuple(sorted(parents))
        candidates = np.asarray(candidates, dtype=np.int64)
        row = self._rows.get((child, base))
        if row is None:
            row = self._rows[(child, base)] = np.full(self.data.n_vars, np.nan)
        out = row[candidates]
        todo = np.flatnonzero(np.isnan(out))
        if todo.size:
            out[todo] = _scores_with_each_added(self._values_t, self._arities, child,
                                                np.array(base, dtype=np.int64), candidates[todo],
                                                self.kind, self.ess, self._dense)
            row[candidates[todo]] = out[todo]
            self._row_entries += todo.size
        return out

    def growth_row(self, child: int, parents) -> np.ndarray:
        """Scores of ``child`` given ``parents + (u,)`` for every variable ``u``
        (NaN where ``u`` is the child or one of the parents); remembered.

        >>> import pandas as pd
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 0, 1]}))
        >>> FamilyScorer(ds, score="ll").growth_row(1, ()).tolist()
        [0.0, nan]
        """
        parents = tuple(sorted(parents))
        self.with_each_added(child, parents, _others(self.data.n_vars, child, parents))
        return self._rows[(child, parents)].copy()

    def candidate_sets(self, child: int, max_parents: int, *, top: int = 8,
                       budget: int = 32) -> list:
        """Good parent sets of ``child`` of at most ``max_parents`` parents, best first,
        as ``[(score, parents)]``; the empty set is always among them.

        The selection is heuristic, after BLIP's independence selection
        (Scanagatta et al. 2015): a best-first search from the best single
        parents grows the best set found so far by each of the ``top`` best
        single parents, scoring at most ``budget`` sets beyond the singles.  The
        pruning is proved: a set that scores no better than one of its subsets
        is dropped (the subset fits wherever the set fits, and scores more), and
        for BIC a set is not grown once one more parent's penalty alone exceeds
        what a subset already scores, since a log-likelihood is never positive
        and every superset is penalised more (de Campos & Ji 2011).

        >>> import pandas as pd
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1] * 4,
        ...                                        "b": [0, 1, 0, 1] * 4, "c": [0, 0, 1, 1] * 4}))
        >>> [ps for _, ps in FamilyScorer(ds).candidate_sets(1, 2)]
        [(0,), ()]
        """
        empty = self(child, ())
        row = self.growth_row(child, ())
        singles = [int(u) for u in np.argsort(-np.nan_to_num(row, nan=-np.inf))[:top]
                   if row[u] > empty]
        best = {(): empty}                        # set -> the best score of it and its subsets
        kept = {(): empty}
        heap = []
        for u in singles:
            best[(u,)] = kept[(u,)] = float(row[u])
            heapq.heappush(heap, (-row[u], (u,)))
        log_pen = (0.5 * math.log(self.data.n_rows) * (self._arities[child] - 1)
                   if self.kind == _KIND["bic"] else 0.0)
        spent = 0
        while heap and spent < budget:
            _, ps = heapq.heappop(heap)
            if len(ps) >= max_parents:
                continue
            for u in singles:
                grown = tuple(sorted(ps + (u,)))
                if u in ps or grown in best:
                    continue
                floor = max(best.get(sub, -np.inf) for size in range(len(grown))
                            for sub in combinations(grown, size))
                if log_pen and -log_pen * np.prod(self._arities[list(grown)]) <= floor:
                    best[grown] = floor           # penalty alone: no superset can win
                    continue
                score = self(child, grown)
                spent += 1
                best[grown] = max(floor, score)
                if score > floor + TIE_TOLERANCE * max(1.0, abs(floor)):
                    kept[grown] = score
                    heapq.heappush(heap, (-score, grown))
        dominated = {ps for ps, s in kept.items()         # by a subset scored after them
                     if any(kept.get(sub, -np.inf) >= s for size in range(len(ps))
                            for sub in combinations(ps, size))}
        return sorted(((s, ps) for ps, s in kept.items() if ps not in dominated),
                      key=lambda t: (-t[0], len(t[1])))

    def candidate_lists(self, max_parents: int, *, executor=None, top: int = 8,
                        budget: int = 32) -> list:
        """:meth:`candidate_sets` of every variable, in blocks of variables on the
        workers of ``executor`` when one is given (each block sent with its
        variables' rows of single-parent scores); the lists are the same as in
        this process, and their sets' scores are remembered here.

        >>> import pandas as pd
        >>> from concurrent.futures import ThreadPoolExecutor
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1] * 4,
        ...                                        "b": [0, 1, 0, 1] * 4, "c": [0, 0, 1, 1] * 4}))
        >>> with ThreadPoolExecutor(2) as ex:
        ...     lists = FamilyScorer(ds).candidate_lists(2, executor=ex)
        >>> lists == [FamilyScorer(ds).candidate_sets(v, 2) for v in range(3)]
        True
        """
        n = self.data.n_vars
        self.prefetch([(v, ()) for v in range(n)], executor=executor)
        if executor is None:
            return [self.candidate_sets(v, max_parents, top=top, budget=budget) for v in range(n)]
        parts = blocks(list(range(n)), task_count(executor))
        results = run_tasks(executor, _candidate_block,
                            (self.data, self.score, self.ess, max_parents, top, budget),
                            [([(v, self._cache[(v, ())], self._rows[(v, ())]) for v in part],)
                             for part in parts])
        lists = [found for scored in results for found in scored]
        for v, found in enumerate(lists):
            for value, parents in found:
                self._cache.setdefault((v, parents), value)
        return lists

    def prefetch(self, families, *, executor=None) -> None:
        """Score each family ``(child, parents)`` and its growths by every other
        variable -- the rows a local search reads first -- and remember them as
        :meth:`with_each_added` would.

        With an ``executor`` (see :mod:`twlib.parallel`) the families are split
        in blocks over its workers, the data sent once per worker; the scores
        are the same as in this process.

        >>> import pandas as pd
        >>> from concurrent.futures import ThreadPoolExecutor
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 0, 1],
        ...                                        "c": [0, 0, 1, 1]}))
        >>> fs = FamilyScorer(ds, score="ll")
        >>> with ThreadPoolExecutor(2) as ex:
        ...     fs.prefetch([(0, ()), (1, ()), (2, ())], executor=ex)
        >>> len(fs), fs.with_each_added(1, (), [0, 2]).round(3).tolist()
        (9, [0.0, -2.773])
        """
        todo = {}
        for child, parents in families:
            key = (int(child), tuple(sorted(int(p) for p in parents)))
            if key not in self._rows:
                todo[key] = None
        empty = [key for key in todo if not key[1]]
        if (2 * len(empty) > self.data.n_vars
                and int(self._arities.max()) ** 2 <= self._dense):
            matrix = self.single_parent_matrix(executor=executor)
            for child, parents in empty:
                self(child, parents)
                self._rows[(child, parents)] = matrix[child]      # a view: no copy
                self._row_entries += self.data.n_vars - 1
                del todo[(child, parents)]
        if not todo:
            return
        parts = blocks(list(todo), task_count(executor))
        results = run_tasks(executor, _score_rows, (self.data, self.score, self.ess),
                            [(part,) for part in parts])
        for part, scored in zip(parts, results):
            for key, (value, row) in zip(part, scored):
                self._cache[key] = value
                self._rows[key] = row
                self._row_entries += int(np.count_nonzero(~np.isnan(row)))

    def single_parent_matrix(self, *, executor=None) -> np.ndarray:
        """``M[v, u]``: the score of ``v`` with the single parent ``u``, for every pair
        (NaN on the diagonal).

        The pairwise count tables come in blocks of variables, one matrix
        product of indicator columns per pair of blocks (exact: counts stay
        below 2^24 in float32, else float64).  A variable's last state needs no
        column (its counts are the marginal minus the others'), and each table
        serves both directions, ``v`` given ``u`` and ``u`` given ``v``.  With an
        ``executor`` the block pairs are shared out among its workers.

        >>> import pandas as pd
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 0, 1],
        ...                                        "c": [0, 0, 1, 1]}))
        >>> FamilyScorer(ds, score="ll").single_parent_matrix().round(3).tolist()
        [[nan, 0.0, -2.773], [0.0, nan, -2.773], [-2.773, -2.773, nan]]
        """
        spans = _state_blocks(self._arities, PAIR_BLOCK_STATES)
        pairs = [(a, b) for i, a in enumerate(spans) for b in spans[i:]]
        groups = blocks(pairs, task_count(executor))
        results = run_tasks(executor, _pair_block_scores,
                            (self._values_t, self._arities, self.kind, self.ess),
                            [(group,) for group in groups])
        n = self.data.n_vars
        matrix = np.empty((n, n))
        for group, scored in zip(groups, results):
            for (a, b), (ab, ba) in zip(group, scored):
                matrix[a[0]:a[1], b[0]:b[1]] = ab
                if ba is not None:
                    matrix[b[0]:b[1], a[0]:a[1]] = ba
        return matrix


# States (summed arities) per block of FamilyScorer.single_parent_matrix: a block's
# one-hot columns and one pair's count table stay a few tens of MB.
PAIR_BLOCK_STATES = 2048


def _state_blocks(arities, states) -> list:
    """Contiguous spans ``(start, stop)`` of variables holding about ``states`` states each."""
    spans, start, total = [], 0, 0
    for v, r in enumerate(arities):
        if total and total + r > states:
            spans.append((start, v))
            start, total = v, 0
        total += int(r)
    spans.append((start, len(arities)))
    return spans


def _one_hot(values_t, arities, span, dtype):
    """The rows' indicators of every state but the last of each variable in ``span``
    (the last follows from the marginal counts), with each variable's first column,
    and the marginal counts of all states with each variable's first entry."""
    ar = arities[span[0]:span[1]]
    offsets = np.concatenate([[0], np.cumsum(ar - 1)[:-1]]).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(ar)[:-1]]).astype(np.int64)
    x = np.empty((values_t.shape[1], int((ar - 1).sum())), dtype=dtype)
    marginals = np.zeros(int(ar.sum()), dtype=np.int64)
    _fill_one_hot(values_t[span[0]:span[1]], ar, offsets, starts, x, marginals)
    return x, offsets, marginals, starts


@nb.njit(cache=True)
def _fill_one_hot(values_t, ar, offsets, starts, x, marginals):
    for i in range(x.shape[0]):
        x[i] = 0
        for v in range(values_t.shape[0]):
            s = values_t[v, i]
            marginals[starts[v] + s] += 1
            if s < ar[v] - 1:
                x[i, offsets[v] + s] = 1


@nb.njit(parallel=True, cache=True)
def _child_given_parent(counts, child, parent, kind, ess, n, diagonal):
    """``out[i, j]``: score of child ``i`` given the single parent ``j``, from
    ``counts[child state, parent state]`` (whole numbers stored as floats) of all
    states but the last; the last row and column follow from the marginals.
    ``child`` and ``parent`` are :func:`_one_hot`'s offsets, marginals and starts,
    plus the arities."""
    off_c, marg_c, start_c, ar_c = child
    off_p, marg_p, start_p, ar_p = parent
    out = np.empty((ar_c.shape[0], ar_p.shape[0]))
    widest = ar_p.max()
    for i in nb.prange(ar_c.shape[0]):
        r = ar_c[i]
        c = np.empty(r * widest, dtype=np.int64)
        for j in range(ar_p.shape[0]):
            if diagonal and i == j:
                out[i, j] = np.nan
                continue
            q = ar_p[j]
            corner = n
            for s in range(q - 1):
                last = marg_p[start_p[j] + s]
                for t in range(r - 1):
                    njk = np.int64(counts[off_c[i] + t, off_p[j] + s])
                    c[s * r + t] = njk
                    last -= njk
                c[s * r + r - 1] = last
                corner -= marg_p[start_p[j] + s]
            for t in range(r - 1):
                last = marg_c[start_c[i] + t]
                for s in range(q - 1):
                    last -= c[s * r + t]
                c[(q - 1) * r + t] = last
                corner -= last
            c[q * r - 1] = corner
            out[i, j] = _family_from_dense(c, q, r, kind, ess, n)
    return out


def _pair_block_scores(shared, pairs):
    """A task of :meth:`FamilyScorer.single_parent_matrix`: per pair of spans ``(a, b)``,
    the scores of a's children given b's parents and (unless ``a == b``) the reverse."""
    values_t, arities, kind, ess = shared
    n = values_t.shape[1]
    dtype = np.float32 if n < 2**24 else np.float64
    out, last = [], None
    for a, b in pairs:                     # pairs come grouped by a: build its columns once
        if a != last:
            xa, *more_a = _one_hot(values_t, arities, a, dtype)
            side_a = (*more_a, arities[a[0]:a[1]])
            last = a
        if a == b:
            counts = xa.T @ xa
            out.append((_child_given_parent(counts, side_a, side_a, kind, ess, n, True), None))
            continue
        xb, *more_b = _one_hot(values_t, arities, b, dtype)
        side_b = (*more_b, arities[b[0]:b[1]])
        counts = xa.T @ xb
        out.append((_child_given_parent(counts, side_a, side_b, kind, ess, n, False),
                    _child_given_parent(np.ascontiguousarray(counts.T), side_b, side_a, kind,
                                        ess, n, False)))
    return out


def _others(n_vars, child, parents) -> np.ndarray:
    """The variables that could join ``parents`` as a parent of ``child``."""
    keep = np.ones(n_vars, dtype=bool)
    keep[child] = False
    keep[list(parents)] = False
    return np.flatnonzero(keep)


def _score_rows(shared, families):
    """A worker's block of :meth:`FamilyScorer.prefetch`: ``(score, row)`` per family."""
    data, score, ess = shared
    scorer = FamilyScorer(data, score=score, ess=ess)
    return [(scorer(child, parents), scorer.growth_row(child, parents))
            for child, parents in families]


def _candidate_block(shared, rows):
    """A worker's block of :meth:`FamilyScorer.candidate_lists`, from each child's
    ``(child, empty-set score, single-parent row)``."""
    data, score, ess, max_parents, top, budget = shared
    scorer = FamilyScorer(data, score=score, ess=ess)
    for child, value, row in rows:
        scorer._cache[(child, ())] = value
        scorer._rows[(child, ())] = row
    return [scorer.candidate_sets(child, max_parents, top=top, budget=budget) for child, _,
            _ in rows]


def _score_block(shared, combos, todo):
    values_t, arities, kind, ess, max_dense = shared
    return _scores_by_parent_set(values_t, arities, combos, todo, kind, ess, max_dense)


def max_parents_bound(n_rows: int) -> int:
    """The most parents a variable has in an optimal BIC network (after Tian 2000,
    Wu's Theorem 3; de Campos & Ji 2011).

    A set ``S`` of ``s`` parents costs at least ``(r-1)(2^s - 1) ln(N)/2`` more
    penalty than no parents, and gains at most ``N ln r`` of log-likelihood; as
    ``ln(r)/(r-1) <= ln 2``, it can beat the empty set only if
    ``2^s - 1 < 2N / log2 N``.  The bound is the largest such ``s`` (often quoted
    as ``floor(log2(2N / log2 N))``, which is one too small for some ``N``, such
    as 3 and 13).

    >>> max_parents_bound(10_000), max_parents_bound(3)
    (10, 2)
    """
    if n_rows < 2:
        return 0                    # one row: every family has likelihood 1 and no penalty
    ceiling = 2 * n_rows / math.log2(n_rows)
    size = 0
    while 2 ** (size + 1) - 1 < ceiling:
        size += 1
    return size


def _binomials(n: int, k: int) -> np.ndarray:
    table = np.zeros((n + 1, k + 2), dtype=np.int64)
    for a in range(n + 1):
        table[a, 0] = 1
        for b in range(1, min(a, k + 1) + 1):
            table[a, b] = table[a - 1, b - 1] + (table[a - 1, b] if b <= a - 1 else 0)
    return table


def _colex_rank(combos: np.ndarray, binom: np.ndarray) -> np.ndarray:
    """Colex rank of each sorted combination (row) of ``combos``."""
    if combos.shape[1] == 0:
        return np.zeros(combos.shape[0], dtype=np.int64)
    pos = np.arange(1, combos.shape[1] + 1)
    return binom[combos, pos].sum(axis=1)


def _masks(parent_sets: np.ndarray, n_vars: int) -> np.ndarray:
    words = (n_vars + 63) // 64
    out = np.zeros((parent_sets.shape[0], words), dtype=np.uint64)
    for col in range(parent_sets.shape[1]):
        v = parent_sets[:, col]
        ok = v >= 0
        np.bitwise_or.at(out, (np.flatnonzero(ok), v[ok] // 64),
                         np.left_shift(np.uint64(1), (v[ok] % 64).astype(np.uint64)))
    return out


def _beating_subsets(found: dict, prune: bool, width: int):
    """Of ``found`` (sorted parent tuples -> score), the sets that score above every
    subset in ``found`` that drops one parent, and those subsets' best in turn (the
    "subset" rule over a family that need not hold every subset); all with
    ``prune`` off.  Returns the kept sets as rows padded with -1 to ``width``, and
    their scores."""
    best_sub, keep = {}, []
    for t in sorted(found, key=len):
        below = max((max(found[s], best_sub[s])
                     for s in (t[:i] + t[i + 1:] for i in range(len(t))) if s in found),
                    default=-np.inf)
        best_sub[t] = below
        margin = TIE_TOLERANCE * max(1.0, abs(below)) if np.isfinite(below) else 0.0
        if not prune or found[t] > below + margin:
            keep.append(t)
    padded = np.full((len(keep), width), -1, dtype=np.int64)
    for r, t in enumerate(keep):
        padded[r, :len(t)] = t
    return padded, np.array([found[t] for t in keep])


def _extend(combos: np.ndarray, extendable: np.ndarray, n_vars: int) -> np.ndarray:
    """Next-level combinations: each extendable row plus one larger index."""
    rows = combos[extendable]
    last = rows[:, -1] if rows.shape[1] else np.full(rows.shape[0], -1)
    counts = n_vars - 1 - last
    base = np.repeat(rows, counts, axis=0)
    starts = np.repeat(last + 1, counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.column_stack([base, starts + offsets]).astype(np.int64)


class ParentSetScores:
    """Candidate parent sets of every variable with their scores, pruned.

    For each variable all parent sets of size ``<= max_parents`` are considered,
    smallest first.  The pruning rules of Wu (2010, ch. 3.3), each switchable:

    * ``"size"`` (Theorem 3, BIC only): no set larger than ``log2(2N / log2 N)``;
    * ``"bound"``: a set that, with all its supersets, cannot beat its best
      subset's score is skipped, and so, implicitly, are its supersets.  For
      BIC (Wu's Theorems 4-5) the complexity penalty alone decides, *without
      counting*; for BDeu (de Campos & Ji 2011) every joint parent state seen
      in the data stays a non-empty cell of any superset, and each non-empty
      cell costs at least ``log r`` (its first row has prior predictive
      ``1/r``), so ``-|J+| log r`` bounds the set and all its supersets;
    * ``"subset"`` (Theorem 7): a set that does not beat every one of its
      subsets is dropped.

    None of them can remove a parent set that an optimal network needs.  The
    survivors of each variable are kept sorted by score (best first) with
    bitset masks, so :meth:`best` answers "best parent set inside a candidate
    set" with one linear scan.

    Parameters
    ----------
    data : Dataset
    score : {"bic", "bdeu", "ll"}
    ess : float
        BDeu equivalent sample size.
    max_parents : int
    prune : bool or iterable of str
        True for every applicable rule, False for none, or a subset of
        ``PRUNING_RULES``.
    executor : optional
        Score each level's sets in blocks on this executor's workers (see
        :mod:`twlib.parallel`); the scores are the same as in this process.
    knowledge : :class:`twlib.knowledge.Knowledge`, optional
        Only the parent sets it allows are listed (and scored): no forbidden
        parent, none against the tiers, at most the variable's cap, every
        required parent.  A set that lacks a required parent is compared with
        no other, so the pruning rules keep what the constrained optimum needs.

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 500); b = a ^ (rng.random(500) < 0.1)
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": a, "b": b.astype(int)}))
    >>> pss = ParentSetScores(ds, score="bic", max_parents=1)
    >>> pss.best("b", candidates=["a"])[1]
    ('a',)
    """

    def __init__(self, data: Dataset, *, score: str = "bic", ess: float = 1.0,
                 max_parents: int = 3, prune=True, executor=None, knowledge=None):
        self.kind = _check_score(score, ess)
        if max_parents < 0:
            raise InputError(f"max_parents must be >= 0, got {max_parents}")
        rules = set(PRUNING_RULES) if prune is True else set() if prune is False else set(prune)
        unknown = rules - set(PRUNING_RULES)
        if unknown:
            raise InputError(f"unknown pruning rules {sorted(unknown)}; known: {PRUNING_RULES}")
        if score != "bic":
            rules -= {"size"}            # rests on the BIC penalty
        if score == "ll":
            rules -= {"bound"}
        self.knowledge = knowledge if knowledge else None
        self._filter = None
        if self.knowledge is not None:
            self.knowledge.validate(data.names)
            self._filter = self.knowledge.parent_filter(list(data.names))
            need = max(len(r) for r in self._filter[1])
            if need > max_parents:
                raise InputError(f"the knowledge requires {need} parents of one variable, "
                                 f"more than max_parents={max_parents}")
            if need:
                rules -= {"size"}        # the size bound compares with sets that lack them
        self.names = list(data.names)
        self.data = data
        self.score = score
        self.ess = float(ess)
        self.n_rows = data.n_rows
        self.rules = tuple(r for r in PRUNING_RULES if r in rules)
        limit = min(max_parents, data.n_vars - 1)
        if "size" in rules:
            limit = min(limit, max_parents_bound(data.n_rows))
        self.max_parents = limit
        self.stats = {"candidates": 0, "scored": 0, "pruned_size": 0, "pruned_bound": 0,
                      "pruned_subset": 0, "kept": 0}
        requested = min(max_parents, data.n_vars - 1)
        self.stats["candidates"] = data.n_vars * sum(math.comb(data.n_vars - 1, s)
                                                     for s in range(requested + 1))
        self.stats["pruned_size"] = data.n_vars * sum(math.comb(data.n_vars - 1, s)
                                                      for s in range(limit + 1, requested + 1))
        values_t = data.columns
        found = self._enumerate(values_t, data.arities, rules, executor)
        parent_rows = [np.concatenate(sets) for sets, _ in found]
        scores = [np.concatenate(sc) for _, sc in found]
        if self._filter is not None:
            for v, need in enumerate(self._filter[1]):
                if need:
                    parent_rows[v], scores[v] = self._with_required(
                        parent_rows[v], scores[v], need, "subset" in rules)
        self._store(parent_rows, scores)

    def _with_required(self, rows, scores, need, prune):
        """A variable's sets that hold its required parents ``need``; with ``prune``,
        only those that beat every such subset (its sets were scored unpruned).
        The legal rows are found on the arrays first: they are few (those with a
        class required, say, are a fifteenth of all at 44 candidates and k = 3)."""
        holds = np.ones(len(rows), dtype=np.bool_)
        for p in need:
            holds &= (rows == p).any(axis=1)
        legal = {tuple(sorted(int(p) for p in row if p >= 0)): sc
                 for row, sc in zip(rows[holds], scores[holds])}
        return _beating_subsets(legal, prune, self.max_parents)

    def _store(self, parent_rows, scores) -> None:
        """Keep each variable's sets (rows padded with -1) sorted best first, with masks."""
        self._parents, self._scores, self._masks = [], [], []
        for p, sc in zip(parent_rows, scores):
            order = np.argsort(-sc, kind="stable")
            self._parents.append(p[order])
            self._scores.append(sc[order])
            self._masks.append(_masks(p[order], len(self.names)))
        self.stats["kept"] = sum(len(sc) for sc in self._scores)

    def restricted(self, keep: dict) -> "ParentSetScores":
        """A copy holding only some sets: ``keep[v]`` lists positions in variable
        ``v``'s list (index ``v``, best first, as :meth:`parent_arrays` gives it).
        Every variable keeps its empty set, so any order still has a network.

        >>> import pandas as pd
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 1, 1]}))
        >>> pss = ParentSetScores(ds, max_parents=1, prune=False)
        >>> [len(pss.restricted({}).sets(v)) for v in "ab"], len(pss.restricted({0: [0, 1]}))
        ([1, 1], 3)
        """
        out = copy.copy(self)
        out.stats = dict(self.stats)
        parents, scores = [], []
        for v in range(self.n_vars):
            rows, sc, _ = self.parent_arrays(v)
            chosen = np.union1d(np.asarray(keep.get(v, ()), dtype=np.int64),
                                np.flatnonzero((rows < 0).all(axis=1)))
            parents.append(rows[chosen])
            scores.append(sc[chosen])
        out._store(parents, scores)
        return out

    @classmethod
    def from_candidates(cls, data: Dataset, candidates, *, score: str = "bic", ess: float = 1.0,
                        prune: bool = True, knowledge=None) -> "ParentSetScores":
        """Score only the given parent sets of each variable, and all their subsets.

        ``candidates`` maps each variable (name or index) to an iterable of parent
        sets; a variable left out gets only the empty set.  The family is closed
        under subsets, so with ``prune`` the "subset" rule (Wu's Theorem 7) still
        keeps every set an optimal network restricted to this family needs.  The
        bounded-tree-width learners use this with the cliques of a k-tree.
        ``knowledge`` (:class:`twlib.knowledge.Knowledge`) drops the sets it rules
        out before scoring; a variable whose candidates cannot hold its required
        parents is an InputError.

        >>> import pandas as pd
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 1, 1, 1],
        ...                                        "c": [0, 0, 1, 1]}))
        >>> pss = ParentSetScores.from_candidates(ds, {"c": [("a", "b")]}, prune=False)
        >>> sorted(p for p, _ in pss.sets("c"))
        [(), ('a',), ('a', 'b'), ('b',)]
        """
        self = cls.__new__(cls)
        self.knowledge = knowledge if knowledge else None
        self._filter = None
        self.kind = _check_score(score, ess)
        self.names, self.data, self.score, self.ess = list(data.names), data, score, float(ess)
        self.n_rows = data.n_rows
        self.rules = ("subset",) if prune else ()
        n = data.n_vars
        families = [{()} for _ in range(n)]
        for var, sets in dict(candidates).items():
            v = self._var(var)
            for parents in sets:
                ps = sorted({self._var(p) for p in parents} - {v})
                for size in range(1, len(ps) + 1):
                    families[v].update(combinations(ps, size))
        if self.knowledge is not None:
            self.knowledge.validate(data.names)
            self._filter = allowed, required, caps = self.knowledge.parent_filter(self.names)
            for v in range(n):
                need = set(required[v])
                families[v] = {t for t in families[v] if need <= set(t)
                               and len(t) <= caps[v] and allowed[v, list(t)].all()}
                if not families[v]:
                    raise InputError(f"no candidate parent set of {self.names[v]} allows "
                                     "what the knowledge asks of it (its required parents "
                                     f"{[self.names[p] for p in required[v]]} and cap)")
        self.max_parents = max(len(t) for fam in families for t in fam)
        by_size = {}
        for v, fam in enumerate(families):
            for t in fam:
                by_size.setdefault(len(t), {}).setdefault(t, []).append(v)
        values_t, found = data.columns, [dict() for _ in range(n)]
        for size, sets in sorted(by_size.items()):
            combos = np.array(list(sets), dtype=np.int64).reshape(len(sets), size)
            todo = np.zeros((len(sets), n), dtype=np.bool_)
            for row, children in enumerate(sets.values()):
                todo[row, children] = True
            scores = _scores_by_parent_set(values_t, data.arities, combos, todo, self.kind,
                                           self.ess, dense_limit(data.n_rows))
            for row, (t, children) in enumerate(sets.items()):
                for v in children:
                    found[v][t] = scores[row, v]
        total = sum(len(f) for f in found)
        self.stats = {"candidates": total, "scored": total, "pruned_size": 0, "pruned_bound": 0,
                      "pruned_subset": 0, "kept": 0}
        rows, kept_scores = [], []
        for v in range(n):
            padded, kept = _beating_subsets(found[v], prune, self.max_parents)
            self.stats["pruned_subset"] += len(found[v]) - len(kept)
            rows.append(padded)
            kept_scores.append(kept)
        self._store(rows, kept_scores)
        return self

    def _enumerate(self, values_t, arities, rules, executor=None):
        """Score candidate sets level by level (by size) for all children at once.

        ``best_sub[t, c]`` is the best score of child ``c`` over the proper subsets
        of set ``t``, which the "bound" and "subset" rules compare against.  A set
        is *alive* for a child when it and all its subsets passed the bound rule;
        the next level extends only sets alive for some child, so a pruned set's
        supersets are never even listed.
        """
        n_vars, n = values_t.shape
        binom = _binomials(n_vars, self.max_parents)
        log_pen = 0.5 * math.log(n) * (arities - 1)
        log_states = np.log(arities)
        max_dense = dense_limit(n)
        shared = (values_t, arities, self.kind, self.ess, max_dense)
        found = [([], []) for _ in range(n_vars)]
        if self._filter is not None:
            allowed, required, caps = self._filter
            # the variables with required parents: scored unpruned, pruned in _with_required
            constrained = np.array([bool(r) for r in required])
        combos = np.zeros((1, 0), dtype=np.int64)
        prev = None                                    # (sorted ranks, rows, alive, best)
        for size in range(self.max_parents + 1):
            m = combos.shape[0]
            if m == 0:
                break
            valid = np.ones((m, n_vars), dtype=np.bool_)
            for j in range(size):
                valid[np.arange(m), combos[:, j]] = False
            best_sub = np.full((m, n_vars), -np.inf)
            if size > 0:
                ranks, rows, alive_prev, best_prev = prev
                for drop in range(size):
                    r = _colex_rank(np.delete(combos, drop, axis=1), binom)
                    pos = np.minimum(np.searchsorted(ranks, r), len(ranks) - 1)
                    hit = ranks[pos] == r
                    sub = rows[pos]
                    best_sub = np.maximum(best_sub, np.where(hit[:, None], best_prev[sub], -np.inf))
                    valid &= hit[:, None] & alive_prev[sub]
            if self._filter is not None:
                if size > 0:
                    valid &= allowed.T[combos].all(axis=1)
                valid[:, caps < size] = False
            todo = valid
            if "bound" in rules and size > 0 and self.kind == _KIND["bic"]:
                q = np.prod(arities[combos], axis=1)
                todo = valid & (-(np.outer(q, log_pen)) > best_sub)
            elif "bound" in rules and size > 0:
                # count |J+| only where even its ceiling min(q, N) could prune
                q = np.minimum(np.prod(arities[combos].astype(float), axis=1), n)
                could = valid & (-(np.outer(q, log_states)) <= best_sub)
                seen = _observed_configurations(values_t, arities, combos, could.any(axis=1))
                todo = valid & ~(could & (-(np.outer(seen, log_states)) <= best_sub))
            if self._filter is not None:
                todo[:, constrained] = valid[:, constrained]      # scored, pruned later
            parts = [np.asarray(b, dtype=np.int64)
                     for b in blocks(range(m), task_count(executor))]
            scores = np.concatenate(run_tasks(executor, _score_block, shared,
                                              [(combos[b], todo[b]) for b in parts]))
            self.stats["scored"] += int(todo.sum())
            keep = todo.copy()
            if "subset" in rules:
                margin = TIE_TOLERANCE * np.maximum(
                    1.0, np.abs(np.where(np.isfinite(best_sub), best_sub, 0.0)))
                with np.errstate(invalid="ignore"):
                    better = todo & (np.where(todo, scores, -np.inf) > best_sub + margin)
                if self._filter is not None:
                    better[:, constrained] = todo[:, constrained]
                self.stats["pruned_subset"] += int((todo & ~better).sum())
                keep = better
            for c in range(n_vars):
                rows_c = np.flatnonzero(keep[:, c])
                found[c][0].append(np.pad(combos[rows_c], ((0, 0), (0, self.max_parents - size)),
                                          constant_values=-1))
                found[c][1].append(scores[rows_c, c])
            best = np.where(todo, np.fmax(scores, best_sub), best_sub)
            rank = _colex_rank(combos, binom)
            order = np.argsort(rank)
            prev = (rank[order], order, todo, best)
            combos = _extend(combos, todo.any(axis=1), n_vars)
        if "bound" in rules:
            self.stats["pruned_bound"] = (self.stats["candidates"] - self.stats["scored"]
                                          - self.stats["pruned_size"])
        return found

    # ---------------------------------------------------------------- queries
    @property
    def n_vars(self) -> int:
        return len(self.names)

    def __len__(self) -> int:
        return self.stats["kept"]

    def __repr__(self) -> str:
        return (f"ParentSetScores({self.score}, {self.n_vars} variables, max_parents="
                f"{self.max_parents}, {len(self)} sets kept of {self.stats['candidates']})")

    def _var(self, v) -> int:
        if isinstance(v, (int, np.integer)):
            return int(v)
        try:
            return self.names.index(v)
        except ValueError:
            raise UnknownName(f"no variable named {v!r}") from None

    def sets(self, var):
        """``[(parent names tuple, score), ...]`` of a variable, best first."""
        i = self._var(var)
        return [(tuple(self.names[p] for p in row if p >= 0), float(s))
                for row, s in zip(self._parents[i], self._scores[i])]

    def parent_arrays(self, var):
        """``(parents, scores, masks)`` arrays of a variable, best first.

        ``parents`` is padded with -1; ``masks`` has one uint64 word per 64 variables.
        """
        i = self._var(var)
        return self._parents[i], self._scores[i], self._masks[i]

    def flat_arrays(self):
        """All kept sets in one place, for compiled searches over at most 64 variables.

        Returns ``(masks, scores, offsets)``: variable ``v``'s sets, best first, are
        ``masks[offsets[v]:offsets[v+1]]`` (one uint64 bitset each) with their scores.
        """
        if self.n_vars > 64:
            raise InputError(f"{self.n_vars} variables do not fit one 64-bit mask")
        masks = np.concatenate([m[:, 0] for m in self._masks])
        scores = np.concatenate(self._scores)
        offsets = np.concatenate([[0], np.cumsum([len(s) for s in self._scores])]).astype(np.int64)
        return masks, scores, offsets

    def mask_of(self, variables) -> np.ndarray:
        """Bitset of a collection of variables (names or indices)."""
        idx = np.array([self._var(v) for v in variables], dtype=np.int64).reshape(1, -1)
        return _masks(idx, self.n_vars)[0]

    def best(self, var, *, candidates=None):
        """Best-scoring kept parent set of ``var`` inside ``candidates``.

        ``candidates`` defaults to every other variable.  Returns
        ``(score, parent names tuple)``.
        """
        i = self._var(var)
        if candidates is None:
            t = 0
        else:
            cand = [c for c in candidates if self._var(c) != i]
            t = _first_subset(self._masks[i], self.mask_of(cand))
        row = self._parents[i][t]
        return float(self._scores[i][t]), tuple(self.names[p] for p in row if p >= 0)

    def score_of(self, var, parents) -> float:
        """Score of an exact kept parent set (KeyError if it was pruned)."""
        i = self._var(var)
        target = self.mask_of(parents)
        hit = np.flatnonzero((self._masks[i] == target).all(axis=1))
        if hit.size == 0:
            raise UnknownName(f"parent set {tuple(parents)} of {self.names[i]!r} is not kept")
        return float(self._scores[i][hit[0]])

    # ------------------------------------------------------------ score files
    def to_file(self, path) -> None:
        """Write the GOBNILP / Jaakkola score format (Rosland 2019, section 4.2).

        Line 1: number of variables; then per variable ``name count`` followed by
        ``count`` lines ``score size parent1 parent2 ...`` (names).
        """
        lines = [str(self.n_vars)]
        for i, name in enumerate(self.names):
            _check_token(name)
            lines.append(f"{name} {len(self._scores[i])}")
            for row, s in zip(self._parents[i], self._scores[i]):
                ps = [self.names[p] for p in row if p >= 0]
                lines.append(" ".join([repr(float(s)), str(len(ps))] + ps))
        Path(path).write_text("\n".join(lines) + "\n")

    @classmethod
    def from_file(cls, path, *, score: str = "unknown") -> "ParentSetScores":
        """Read a score file written by :meth:`to_file` or GOBNILP (names or 0-based indices)."""
        tokens_by_line = [(no, ln.split()) for no, ln in
                          enumerate(Path(path).read_text().splitlines(), start=1) if ln.strip()]
        it = iter(tokens_by_line)

        def take(what):
            try:
                return next(it)
            except StopIteration:
                raise FormatError(f"{path}: file ends early, expected {what}") from None

        no, toks = take("the number of variables")
        try:
            n = int(toks[0])
        except (ValueError, IndexError):
            raise FormatError(f"{path}:{no}: expected the number of variables, got {toks}") from None
        blocks = []
        for _ in range(n):
            no, toks = take("a 'name count' header")
            if len(toks) != 2 or not toks[1].isdigit():
                raise FormatError(f"{path}:{no}: expected 'name count', got {' '.join(toks)!r}")
            rows = []
            for _ in range(int(toks[1])):
                rno, r = take(f"a parent-set line of {toks[0]}")
                try:
                    s, k = float(r[0]), int(r[1])
                except (ValueError, IndexError):
                    raise FormatError(f"{path}:{rno}: expected 'score size parents...'") from None
                if len(r) != 2 + k:
                    raise FormatError(f"{path}:{rno}: size {k} but {len(r) - 2} parents listed")
                rows.append((rno, s, r[2:]))
            blocks.append((toks[0], rows))
        self = cls.__new__(cls)
        self.knowledge, self._filter = None, None
        self.names = [b[0] for b in blocks]
        index = {nm: i for i, nm in enumerate(self.names)}
        self.score, self.ess, self.n_rows, self.kind, self.rules = score, float("nan"), 0, -1, ()
        self.data = None
        width = max([len(r[2]) for _, rows in blocks for r in rows] + [0])
        self.max_parents = width
        total = sum(len(rows) for _, rows in blocks)
        self.stats = {"candidates": total, "scored": 0, "pruned_size": 0, "pruned_bound": 0,
                      "pruned_subset": 0, "kept": total}
        all_rows, all_scores = [], []
        for name, rows in blocks:
            ps = np.full((len(rows), width), -1, dtype=np.int64)
            sc = np.empty(len(rows))
            for t, (rno, s, plist) in enumerate(rows):
                for j, p in enumerate(plist):
                    if p in index:
                        ps[t, j] = index[p]
                    elif p.isdigit() and int(p) < n:
                        ps[t, j] = int(p)
                    else:
                        raise FormatError(f"{path}:{rno}: unknown parent {p!r} of {name!r}")
                sc[t] = s
            all_rows.append(ps)
            all_scores.append(sc)
        self._store(all_rows, all_scores)
        return self


def _check_token(name: str) -> None:
    if not name or any(ch.isspace() for ch in name):
        raise InputError(f"variable name {name!r} cannot be written to a score file "
                         "(it is empty or holds whitespace)")
