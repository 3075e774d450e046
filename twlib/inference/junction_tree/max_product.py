"""Max-product on the junction tree: the most probable explanation.

The same tree with maxima: log potentials are maximised up to the root from
the cliques the evidence touches, then each clique's best states are read back
down, ties to the lowest state index.  The evidence-free pass is kept, so a
clique without evidence below it decodes from the prior's best entries.

Where the tree is large, a branch and bound whose bounds are computed once
(:class:`~twlib.inference.search.MPESearch`) proves most few-variable evidence
sets in a fraction of a max-product pass.  ``mpe`` therefore runs the tree
until its queries have cost about what preparing that search does (rent
until the rent would buy), then tries the search first on each query, for a
quarter of the tree's time, and returns to the tree for good if the search
does not pay.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from ... import clock
from ...errors import BudgetExceeded, InputError
from ...factors import ZeroEvidenceError
from ..costs import SEARCH_AFTER_TREE_SECONDS, SEARCH_FROM_QUERY_SECONDS
from ..evidence import likelihoods
from ..kernels import (
    decode_assignments,
    log_values,
    max_product_one_set,
    max_product_work,
    max_product_prior,
)
from ..results import MPEResult

__all__ = ["MaxProduct"]


class MaxProduct:
    """The max product part of :class:`~twlib.inference.junction_tree.JunctionTree`."""

    def _max_layout(self):
        """Per clique: its separator variables and its own ones (those its parent
        lacks; every variable is own to exactly one clique), as arrays for
        :func:`decode_assignments`, in preorder.  Built once."""
        if self._layout is None:
            index = {v: k for k, v in enumerate(self.net.variables)}
            sep_ptr, sep_var, sep_stride, sep_size = [0], [], [], []
            own_ptr, own_var, own_card = [0], [], []
            self._own, self._sep_axes = {}, {}
            for i in self.preorder:
                clique, p = self.cliques[i], self.parent[i]
                sep = [] if p is None else list(self.separators[i, p])
                own = [v for v in clique if v not in sep]
                self._sep_axes[i] = [clique.index(v) for v in sep]
                self._own[i] = [clique.index(v) for v in own]
                sizes = [self.arity[v] for v in sep]
                sep_var += [index[v] for v in sep]
                sep_stride += [math.prod(sizes[k + 1:]) for k in range(len(sep))]
                own_var += [index[v] for v in own]
                own_card += [self.arity[v] for v in own]
                sep_ptr.append(len(sep_var))
                own_ptr.append(len(own_var))
                sep_size.append(math.prod(sizes))
            self._layout = tuple(np.array(a, dtype=np.int64) for a in
                                 (sep_ptr, sep_var, sep_stride, sep_size, own_ptr, own_var,
                                  own_card))
        return self._layout

    def _max_out(self, i, table):
        """Maximise clique ``i``'s log-table (batch first) over its own variables:
        ``(message to the parent, shifted to peak 0, the best own configuration
        per separator state (batch, separator states), the peaks (batch,))``."""
        batch = table.shape[0]
        seps, own = self._sep_axes[i], self._own[i]
        flat = np.transpose(table, [0] + [1 + k for k in seps] + [1 + k for k in own]
                            ).reshape(batch, -1, math.prod(table.shape[1 + k] for k in own))
        best = flat.argmax(axis=2)
        values = np.take_along_axis(flat, best[:, :, None], axis=2)[:, :, 0]
        peak = values.max(axis=1)
        values -= np.where(np.isfinite(peak), peak, 0.0)[:, None]
        return values.reshape([batch] + [table.shape[1 + k] for k in seps]), best, peak

    def _max_collect(self, todo, lam, batch, prior=None):
        """Max-sum in log space from the leaves up over the cliques ``todo``: each
        clique's log-potential plus the logs of the evidence indicators read
        there and its children's messages (those outside ``todo`` send their
        evidence-free message from ``prior``).  Returns ``(messages, best own
        configurations, the root's peak or None when the root is not in
        todo)``."""
        self._max_layout()
        msgs, best, peak = {}, {}, None
        at = {}
        for v, indicator in lam.items():
            at.setdefault(self.reader[v], []).append((v, indicator))
        for i in reversed(self.preorder):
            if i not in todo:
                continue
            clique = self.cliques[i]
            table = self._log_potential(i)[None]
            with np.errstate(divide="ignore"):
                for v, indicator in at.get(i, ()):
                    table = table + np.log(indicator).reshape(
                        [batch] + [self.arity[u] if u == v else 1 for u in clique])
            for c in self.children[i]:
                message = self._sep_on_parent(c, msgs[c] if c in msgs else prior[0][c])
                if message.shape[0] <= table.shape[0]:
                    table += message                    # in place: the tables are large
                else:
                    table = table + message
            msgs[i], best[i], top = self._max_out(i, table)
            if i == self.root:
                peak = top
        return msgs, best, peak

    def _max_prior(self):
        """The evidence-free max-sum pass, computed once and kept: what every
        subtree without evidence sends, and how it decodes (the best own
        configurations of all cliques in one flat array, with offsets)."""
        if self._max_cache is None:
            msgs, best, _ = self._max_collect(set(self.preorder), {}, 1)
            flat = [best[i].ravel() for i in self.preorder]
            offsets = np.cumsum([0] + [b.size for b in flat[:-1]]).astype(np.int64)
            self._max_cache = msgs, np.concatenate(flat), offsets
        return self._max_cache

    def _mpe(self, evidence_sets, allow_zero: bool = False, soft=None):
        """One batch of MPE queries: ``(state indices (batch, variables), log P(x, e))``,
        ``soft`` likelihood weights multiplied in (and into ``log P``)."""
        batch = len(evidence_sets)
        lam = self._indicators(evidence_sets, soft)
        prior = self._max_prior()
        dirty = self._paths_to_root({self.reader[v] for v in lam})
        _, best, peak = self._max_collect(dirty, lam, batch, prior)
        zero = np.flatnonzero(~np.isfinite(np.broadcast_to(peak, (batch,)))) if lam else []
        if len(zero) and not allow_zero:
            which = "the evidence" if batch == 1 else f"evidence set {int(zero[0])}"
            raise ZeroEvidenceError(f"{which} has probability zero: "
                                    f"{evidence_sets[int(zero[0])]}")
        offsets, parts, pos = np.full(len(self.preorder), -1, dtype=np.int64), [], 0
        for t, i in enumerate(self.preorder):
            if i in best:
                offsets[t] = pos
                parts.append(np.broadcast_to(best[i], (batch, best[i].shape[1])).ravel())
                pos += parts[-1].size
        out = np.zeros((batch, len(self.net.variables)), dtype=np.int64)
        decode_assignments(*self._max_layout(), offsets,
                            np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64),
                            prior[2], prior[1], out)
        log_p = np.zeros(batch)
        log_p[zero] = -np.inf
        with np.errstate(divide="ignore"):
            for v, weights in (soft or {}).items():
                log_p += np.log(weights[out[:, self.net.variables.index(v)]])
        return out, log_p + log_values(*self._factor_index(), out) - self.log_z

    def _max_args(self) -> tuple:
        """What :func:`max_product_one_set` and :func:`max_product_sets` take
        before the evidence, built once: the evidence-free pass of
        :func:`max_product_prior` and the tree's layout."""
        flat = self._compiled_layout()
        if "max_args" not in flat:
            keys = ("table_off", "cvar_ptr", "ccard", "up_stride", "down_ptr", "down_stride",
                    "sep_off", "parents")
            if self._max_prior_flat is None:
                log_potentials = np.concatenate([self._log_potential(i).ravel()
                                                 for i in self.preorder])
                self._max_prior_flat = max_product_prior(log_potentials,
                                                         *(flat[k] for k in keys))
            flat["max_args"] = (*self._max_prior_flat, *(flat[k] for k in (
                "table_off", "cvar_ptr", "cvar", "ccard", "up_stride", "down_ptr",
                "down_stride", "sep_off", "parents", "child_ptr", "children", "reader", "rslot",
                "marg_off")))
            flat["max_work"] = self._max_work()
        return flat["max_args"]

    def _max_work(self) -> tuple:
        """Scratch for one thread of :func:`max_product_one_set` calls."""
        return max_product_work(self._flat["sep_off"], self._flat["marg_off"])

    def _compiled_mpe(self, evidence):
        """``(state indices, log P(x, e))`` of one evidence set by
        :func:`max_product_one_set`."""
        args = self._max_args()
        states = np.zeros((1, len(self.net.variables)), dtype=np.int64)
        if not max_product_one_set(*args, self._observed(evidence), states[0],
                                   *self._flat["max_work"]):
            raise ZeroEvidenceError(f"the evidence has probability zero: {evidence}")
        return states[0], float(log_values(*self._factor_index(), states)[0] - self.log_z)

    def mpe(self, evidence=None, *, soft_evidence=None, method: str = "auto") -> MPEResult:
        """The most probable complete assignment given ``evidence`` as
        ``{variable: state label}``, as an optimal :class:`MPEResult`: its
        ``log_value`` is the natural log of the assignment's joint probability
        (evidence included); with ``soft_evidence`` (as in :meth:`posteriors`)
        the assignment maximises ``P(x) * prod_v weights_v(x_v)`` and that is
        the value returned.

        ``method="auto"`` lets a tree whose queries are slow hand them to a
        prepared branch and bound (see the module; ``result.method`` says which
        answered, and both are exact); ``"junction tree"`` always runs
        max-product on the tree.  A tree shared by threads runs the search for
        one of them at a time.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> res = jt.mpe({"dysp": "yes", "smoke": "no"})
        >>> res.assignment["bronc"], res.assignment["lung"], round(res.log_value, 4)
        ('yes', 'no', -2.2017)
        """
        if method not in ("auto", "junction tree"):
            raise InputError(f"method must be 'auto' or 'junction tree', got {method!r}")
        if soft_evidence is not None:
            states, log_p = self._mpe([evidence or {}],
                                      soft=likelihoods(self.net, soft_evidence))
            return self._mpe_result(states[0], float(log_p[0]))
        if method == "auto" and self._search_route is not None:
            searched = self._by_search(evidence)
            if searched is not None:
                return searched
        started = clock.now()
        states, log_p = self._compiled_mpe(evidence)
        if method == "auto":
            self._count_tree_query(clock.now() - started)
        return self._mpe_result(states, log_p)

    def __getstate__(self):
        """A pickled tree leaves its search behind (its lock cannot be
        pickled); the copy prepares its own if its queries are slow."""
        state = self.__dict__.copy()
        if state.get("_search_route"):
            state["_search_route"] = None
        return state

    def _mpe_result(self, states, log_p) -> MPEResult:
        assignment = {v: self.net.states(v)[k] for v, k in zip(self.net.variables, states)}
        return MPEResult.exact(assignment, log_p, "junction tree", width=self.width)

    def _count_tree_query(self, seconds):
        """Add a max-product query's time to what the tree has spent; prepare
        the search once that reaches the expected cost of preparing it and
        queries are slow enough for a search to win."""
        self._tree_mpe_seconds += seconds
        self._tree_mpe_queries += 1
        if (self._search_route is None and self._tree_mpe_seconds >= SEARCH_AFTER_TREE_SECONDS
                and seconds >= SEARCH_FROM_QUERY_SECONDS):
            from ..search import MPESearch        # only trees with slow queries load it

            try:
                # MPLP for half what the tree has spent keeps the preparation near
                # the rent paid (barley: 0.7 s instead of 2 s) and, there and on
                # munin, proves as many sets as a full second of it
                search = MPESearch(self.net, mplp_time_limit=SEARCH_AFTER_TREE_SECONDS / 2)
            except (BudgetExceeded, ZeroEvidenceError, InputError):
                self._search_route = False
                return
            self._search_route = {"search": search, "lock": threading.Lock(), "queries": 0,
                                  "seconds": 0.0}

    def _by_search(self, evidence):
        """The MPE by the prepared search (the tree when the search runs out of
        its share), or None when it is busy in another thread or has been
        given up.  After eight queries, the search is given up if its queries
        took longer on average than the tree's did."""
        route = self._search_route
        if not route or not route["lock"].acquire(blocking=False):
            return None
        try:
            started = clock.now()
            result = route["search"].mpe(evidence, fallback=self)
            route["queries"] += 1
            route["seconds"] += clock.now() - started
        finally:
            route["lock"].release()
        tree_mean = self._tree_mpe_seconds / self._tree_mpe_queries
        if route["queries"] >= 8 and route["seconds"] / route["queries"] > tree_mean:
            self._search_route = False
        # the search's values are unnormalised, as the model's factors are
        return MPEResult.exact(result.assignment, result.log_value - self.log_z, result.method,
                               **result.stats)
