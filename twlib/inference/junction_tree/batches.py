"""Many evidence sets at once: batched posteriors, MPE, ``P(e)``, expected counts, samples.

Sets are cut into chunks so that one clique table of a chunk stays about
:data:`~twlib.inference.costs.WORK_ENTRIES` entries, and the chunks go to an
executor (:mod:`twlib.parallel`) when one is given, the tree sent once per
worker.  Posteriors and ``P(e)`` take each set through the compiled pass of a
single query, which holds no GIL, so without an executor the chunks are shared
among this process's threads.  Expected counts and imputation (EM, structural
EM) run here.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from queue import SimpleQueue

import numba
import numpy as np
from tqdm.auto import tqdm

from ...errors import InputError, UnknownName
from ...factors import ZeroEvidenceError
from ...parallel import blocks, run_tasks, task_count
from .. import costs
from ..kernels import hugin_sets, log_values, max_product_sets
from ..results import MarginalsBatch, MPEBatch
from .structure import per_set_normalised

__all__ = ["Batches"]


class Batches:
    """The batches part of :class:`~twlib.inference.junction_tree.JunctionTree`."""

    def _chunk(self, chunk):
        return chunk or max(1, costs.WORK_ENTRIES // max(t.size for t in self.tables))

    def _run_chunks(self, task, evidence_sets, extra, chunk, executor, progress, desc,
                    pool=None) -> list:
        """``task(tree, group, *extra)`` over the groups of chunks of the evidence
        sets (see :func:`twlib.parallel.run_tasks`), with a tqdm bar over the sets
        when ``progress``; each answer's second item has one entry per set.
        Without an ``executor``, a thread ``pool`` may run the chunks, one a task."""
        bar = tqdm(total=len(evidence_sets), unit="set", desc=desc, disable=not progress)
        answers = run_tasks(executor or pool, task, self,
                            [(group, *extra)
                             for group in self._chunk_groups(evidence_sets, chunk, executor)],
                            progress=lambda answer: bar.update(len(answer[1])))
        bar.close()
        return answers

    def _chunk_groups(self, evidence_sets, chunk, executor) -> list:
        """The evidence sets cut into chunks, the chunks grouped into tasks: one
        chunk per task in this process (so progress shows per chunk), else as
        :func:`twlib.parallel.task_count` says."""
        chunk = self._chunk(chunk)
        parts = [evidence_sets[i:i + chunk] for i in range(0, len(evidence_sets), chunk)]
        return blocks(parts, len(parts) if executor is None else task_count(executor))

    def posteriors_batch(self, evidence_sets, *, chunk: int | None = None, variables=None,
                         progress: bool = False, executor=None, threads: int | None = None):
        """Posteriors for many evidence sets at once.

        Returns a :class:`~twlib.inference.MarginalsBatch`, which unpacks as
        ``(posteriors, log_pe)``: ``posteriors[v]`` has shape
        ``(len(evidence_sets), r_v)`` (an observed variable gets its indicator)
        and ``log_pe`` the natural log of ``P(e)`` per set; ``result(i)`` is set
        ``i``'s :class:`~twlib.inference.Marginals`.  ``variables``
        limits the answer (and the work) to those variables.  Each set goes
        through the compiled pass of :meth:`posteriors`; in this process the
        sets are shared among ``threads`` threads (default numba's thread
        count, the cores it may use; 1 runs them one after another) once the
        batch is large enough to pay for starting them.  ``progress=True``
        shows a tqdm bar over the sets, updated per ``chunk`` of sets.  With an
        ``executor`` (see :mod:`twlib.parallel`) the chunks are shared out
        among its workers instead, the tree sent once per worker; the answers
        are the same.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> posts, log_pe = jt.posteriors_batch([{}, {"smoke": "yes"}], variables=["lung"])
        >>> posts["lung"].round(3).tolist(), log_pe.round(3).tolist()
        ([[0.055, 0.945], [0.1, 0.9]], [0.0, -0.693])
        >>> jt.posteriors_batch([{"smoke": "yes"}]).result(0)["lung"].round(3).tolist()
        [0.1, 0.9]
        """
        evidence_sets = list(evidence_sets)
        if not evidence_sets:
            raise InputError("no evidence sets given")
        variables = self._asked(variables)
        marginals, log_pe = self._compiled_sets(self._coded_sets(evidence_sets),
                                                self._asked_mask(variables), chunk, progress,
                                                executor, threads, "posteriors")
        zero = np.flatnonzero(~np.isfinite(log_pe))
        if zero.size:
            raise ZeroEvidenceError(f"evidence set {int(zero[0])} has probability zero: "
                                    f"{evidence_sets[int(zero[0])]}")
        return MarginalsBatch({v: marginals[:, self._marginal_slices[v]].copy()
                               for v in variables}, log_pe, method="junction tree")

    def _compiled_sets(self, codes, asked, chunk, progress, executor, threads, desc):
        """Marginals of the ``asked`` variables (a row per set, laid out as
        ``_marginal_slices``; no columns when none is asked) and ``log P(e)``
        (``-inf`` for an impossible set) of each row of ``codes``, by the
        compiled pass."""
        self._hugin_args()
        answers = self._on_threads(_compiled_parts, codes, (asked,), chunk, progress, executor,
                                   threads, desc, self._flat["hugin_work"], self._hugin_work)
        return (np.concatenate([a[0] for a in answers]),
                np.concatenate([a[1] for a in answers]) + self.log_z)

    def _on_threads(self, task, codes, extra, chunk, progress, executor, threads, desc, kept,
                    another) -> list:
        """``task(tree, parts, *extra, scratch)`` over chunks of the rows of
        ``codes`` (see :meth:`_run_chunks`), on ``executor``, else on this
        process's threads (:meth:`_thread_count`).  In this process ``scratch``
        is a queue with one scratch a thread (``kept``, then ``another()`` for
        each further thread), kept across its chunks: on a large tree a
        scratch runs to tens of megabytes, and allocating it costs a pass.  On
        an executor it is None and each task makes its own."""
        count = self._thread_count(len(codes), threads)      # checked with an executor too
        scratch = None
        if executor is not None:
            count = 1
        else:
            if count > 1 and chunk is None:     # a few chunks a thread, which balance
                chunk = max(1, min(self._chunk(None), -(-len(codes) // (4 * count))))
            scratch = SimpleQueue()
            scratch.put(kept)
            for _ in range(count - 1):
                scratch.put(another())
        with ThreadPoolExecutor(count) if count > 1 else nullcontext() as pool:
            return self._run_chunks(task, codes, (*extra, scratch), chunk, executor, progress,
                                    desc, pool=pool)

    def _thread_count(self, sets, threads) -> int:
        """How many threads share ``sets`` evidence sets: ``threads`` (numba's
        thread count when None), but one while the batch's passes would take
        less than starting threads does."""
        if threads is None:
            threads = numba.config.NUMBA_NUM_THREADS
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InputError(f"threads must be a positive integer or None, got {threads!r}")
        if sets * self.entries < costs.THREADED_FROM_ENTRIES:
            return 1
        return min(threads, sets)

    def mpe_batch(self, evidence_sets, *, chunk: int | None = None, progress: bool = False,
                  executor=None, threads: int | None = None, allow_zero: bool = False):
        """The most probable explanation of each evidence set: the complete
        assignment ``x`` (observed variables at their states) that maximises
        ``P(x, e)``, by max-product on the tree.

        Returns a :class:`~twlib.inference.MPEBatch`, which unpacks as
        ``(states, log_p)``: ``states`` is an int array (sets x variables, in
        the model's variable order) of state indices and ``log_p`` the natural
        log of ``P(x, e)`` per set (for a factor model: of the normalised
        distribution); ``result(i)`` is set ``i``'s
        :class:`~twlib.inference.MPEResult`.  Ties go to the lowest state index
        of each clique's variables, so the answer is deterministic.  Each set
        goes through the compiled pass of :meth:`mpe`; ``chunk``, ``progress``,
        ``executor`` and ``threads`` work as in :meth:`posteriors_batch`.  An
        impossible evidence set raises :class:`ZeroEvidenceError`, or with
        ``allow_zero`` gets ``log_p = -inf`` (and meaningless states; its
        ``result`` raises).

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> states, log_p = jt.mpe_batch([{}, {"xray": "yes"}])
        >>> states.shape, log_p.round(3).tolist()
        ((2, 8), [-1.237, -3.652])
        >>> jt.mpe_batch([{"xray": "yes"}]).result(0).assignment["lung"]
        'yes'
        """
        evidence_sets = list(evidence_sets)
        if not evidence_sets:
            raise InputError("no evidence sets given")
        self._max_args()                           # built once, before any thread reads it
        answers = self._on_threads(_compiled_mpe_parts, self._coded_sets(evidence_sets), (),
                                   chunk, progress, executor, threads, "MPE",
                                   self._flat["max_work"], self._max_work)
        states = np.concatenate([a[0] for a in answers])
        zero = np.flatnonzero(~np.concatenate([a[1] for a in answers]))
        if zero.size and not allow_zero:
            raise ZeroEvidenceError(f"evidence set {int(zero[0])} has probability zero: "
                                    f"{evidence_sets[int(zero[0])]}")
        log_p = log_values(*self._factor_index(), states) - self.log_z
        log_p[zero] = -np.inf
        variables = list(self.net.variables)
        return MPEBatch(states, log_p, variables=variables,
                        labels=[self.net.states(v) for v in variables], method="junction tree")

    def log_probabilities_of_evidence(self, evidence_sets, *, chunk: int | None = None,
                                      executor=None, threads: int | None = None) -> np.ndarray:
        """Natural log of ``P(e)`` for many evidence sets; ``-inf`` where impossible.
        The sets are dicts, or rows of codes as in :meth:`expected_counts`.
        ``executor`` and ``threads`` share the sets out as in :meth:`posteriors_batch`.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> (np.round(jt.log_probabilities_of_evidence([{}, {"tub": "yes"}]), 3) + 0.0).tolist()
        [0.0, -4.566]
        """
        codes = (self._coded_rows(evidence_sets) if isinstance(evidence_sets, np.ndarray)
                 else self._coded_sets(list(evidence_sets)))
        if not len(codes):
            return np.empty(0)
        return self._compiled_sets(codes, self._asked_mask(()), chunk, False, executor, threads,
                                   "P(e)")[1]

    def expected_counts(self, rows, scopes, weights=None, *, chunk: int | None = None,
                        executor=None):
        """Expected counts of variable sets over rows with missing cells: for each
        scope, ``sum over rows of weight * P(scope | the row's observed cells)``,
        the E-step of EM.

        ``rows`` is a matrix of state codes, one column per model variable in
        ``self.net.variables`` order, ``-1`` where a cell is missing; each scope
        (a family of the network, say) must lie in one clique.  Returns the
        tables (one axis per scope variable, in the scope's order) and the
        natural log of each row's ``P(observed cells)``.  Rows of probability
        zero raise :class:`ZeroEvidenceError`.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> jt.net.variables[6], jt.net.states("xray")
        ('xray', ['yes', 'no'])
        >>> rows = np.array([[-1] * 8, [-1] * 6 + [0, -1]])        # nothing seen; xray = yes
        >>> tables, log_p = jt.expected_counts(rows, [("lung",)])
        >>> tables[0].round(4).tolist(), log_p.round(3).tolist()
        ([0.5437, 1.4563], [0.0, -2.205])
        """
        rows = self._coded_rows(rows)
        weights = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
        if weights.shape != (len(rows),):
            raise InputError(f"expected {len(rows)} weights, got shape {weights.shape}")
        homes = []
        for scope in scopes:
            unknown = [v for v in scope if v not in self.arity]
            if unknown:
                raise UnknownName(f"unknown variables {unknown}")
            home = self._smallest_clique_holding(set(scope))
            if home is None:
                raise InputError(f"{list(scope)} share no clique of the junction tree")
            homes.append(home)
        cliques = sorted(set(homes))
        if not len(rows):
            totals = {i: np.zeros(self.tables[i].shape) for i in cliques}
            log_p = np.empty(0)
        else:
            groups = self._chunk_groups(np.arange(len(rows)), chunk, executor)
            answers = run_tasks(executor, _expected_of_parts, self,
                                [([rows[p] for p in group], [weights[p] for p in group],
                                  cliques) for group in groups])
            totals = {i: sum(a[0][i] for a in answers) for i in cliques}
            log_p = np.concatenate([a[1] for a in answers])
        out = []
        for scope, i in zip(scopes, homes):
            clique = self.cliques[i]
            table = totals[i].sum(axis=tuple(k for k, v in enumerate(clique) if v not in scope))
            kept = [v for v in clique if v in scope]
            out.append(np.transpose(table, [kept.index(v) for v in scope]))
        return out, log_p

    def sample_missing(self, rows, *, random_state=None, chunk: int | None = None) -> np.ndarray:
        """Each row's missing cells (``-1``) filled by one joint draw from
        ``P(missing cells | the row's observed cells)``, exactly: evidence is
        collected to the root, then every clique draws its own variables given
        its separator's, root first (forward filtering, backward sampling).
        ``rows`` is coded as in :meth:`expected_counts`.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> rows = np.array([[-1] * 5 + [0, -1, -1]] * 1000)         # either = yes
        >>> drawn = jt.sample_missing(rows, random_state=0)
        >>> bool(((drawn[:, 1] == 0) | (drawn[:, 3] == 0)).all())   # tub or lung
        True
        """
        rows = self._coded_rows(rows)
        rng = np.random.default_rng(random_state)
        out = np.empty(rows.shape, dtype=np.int64)
        step = self._chunk(chunk)
        column = {v: j for j, v in enumerate(self.net.variables)}
        for first in range(0, len(rows), step):
            part = rows[first:first + step]
            work, _, log_pe = self._collect(part)
            zero = np.flatnonzero(~np.isfinite(log_pe))
            if zero.size:
                raise ZeroEvidenceError(f"row {first + int(zero[0])} has probability zero: "
                                        f"{part[int(zero[0])].tolist()}")
            drawn = out[first:first + step]
            for i in self.preorder:
                clique, p = self.cliques[i], self.parent[i]
                sep = () if p is None else self.separators[i, p]
                own = [v for v in clique if v not in sep]
                if not own:
                    continue
                table = work.get(i, self.tables[i][None])
                order = [clique.index(v) + 1 for v in (*sep, *own)]
                own_shape = [self.arity[v] for v in own]
                flat = np.transpose(table, [0] + order).reshape(table.shape[0], -1,
                                                                math.prod(own_shape))
                at = (np.ravel_multi_index(tuple(drawn[:, column[v]] for v in sep),
                                           [self.arity[v] for v in sep]) if sep
                      else np.zeros(len(part), dtype=np.int64))
                sub = flat[np.arange(len(part)) if flat.shape[0] > 1 else 0, at]
                cumulative = np.cumsum(sub, axis=1)
                u = rng.random(len(part)) * cumulative[:, -1]
                pick = np.minimum((cumulative <= u[:, None]).sum(axis=1), sub.shape[1] - 1)
                for v, states in zip(own, np.unravel_index(pick, own_shape)):
                    drawn[:, column[v]] = states
        return out


def _compiled_parts(tree, parts, asked, scratch):
    """Marginals of the ``asked`` variables and ``log P(e)`` (before
    ``log_z``) over consecutive chunks of coded evidence sets, by
    :func:`hugin_sets`, with a scratch from the queue ``scratch`` (see
    :func:`_borrowed`): a task of :meth:`JunctionTree._compiled_sets`."""
    codes = np.concatenate(parts)
    args = tree._hugin_args()
    columns = int(tree._flat["marg_off"][-1]) if asked.any() else 0
    marginals = np.empty((len(codes), columns))
    log_pe = np.empty(len(codes))
    with _borrowed(scratch, tree._hugin_work) as work:
        hugin_sets(*args, codes, asked, marginals, log_pe, work)
    return marginals, log_pe


def _compiled_mpe_parts(tree, parts, scratch):
    """MPE states and whether each set is possible over consecutive chunks of
    coded evidence sets, by :func:`max_product_sets`, with a scratch as in
    :func:`_compiled_parts`: a task of :meth:`JunctionTree.mpe_batch`."""
    codes = np.concatenate(parts)
    args = tree._max_args()
    states = np.zeros((len(codes), len(tree.net.variables)), dtype=np.int64)
    possible = np.zeros(len(codes), dtype=np.bool_)
    with _borrowed(scratch, tree._max_work) as work:
        max_product_sets(*args, codes, states, possible, *work)
    return states, possible


@contextmanager
def _borrowed(scratch, make):
    """A scratch taken from the queue ``scratch`` and given back after use, or
    ``make()`` when there is no queue (a task on an executor's worker)."""
    if scratch is None:
        yield make()
        return
    work = scratch.get()
    try:
        yield work
    finally:
        scratch.put(work)


def _expected_of_parts(tree, parts, weights, cliques):
    """Weighted sums of the posterior tables of ``cliques`` and ``log P(e)`` over
    consecutive chunks of rows: a task of :meth:`JunctionTree.expected_counts`."""
    totals = {i: np.zeros(tree.tables[i].shape) for i in cliques}
    logs = []
    for part, w in zip(parts, weights):
        log_pe, _, kept = tree._propagate(part, keep=cliques)
        logs.append(log_pe)
        for i in cliques:
            table = kept[i]
            if table.shape[0] == 1:                  # still the prior in every row
                totals[i] += w.sum() * table[0] / table[0].sum()
            else:
                totals[i] += np.tensordot(w, per_set_normalised(table)[0], axes=(0, 0))
    return totals, np.concatenate(logs)
