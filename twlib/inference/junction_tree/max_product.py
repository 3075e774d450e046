"""Max-product on the junction tree: the most probable explanation.

The same tree with maxima: log potentials are maximised up to the root from
the cliques the evidence touches, then each clique's best states are read back
down, ties to the lowest state index.  The evidence-free pass is kept, so a
clique without evidence below it decodes from the prior's best entries.
"""
from __future__ import annotations

import math

import numpy as np

from ...factors import ZeroEvidenceError
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

    def _log_potential(self, i):
        """Clique ``i``'s log-potential: the sum of the logs of the model's factors
        that live there (no calibration, so nothing underflows however unlikely
        a configuration is)."""
        table = np.zeros([self.arity[v] for v in self.cliques[i]])
        with np.errstate(divide="ignore"):
            for f in self._home[i]:
                table += self._on_clique(i, f, np.log(f.values))
        return table

    def _on_clique(self, i, factor, values):
        """``values`` (a table over ``factor``'s variables, in its order) with its
        axes in clique ``i``'s order and size-1 axes for the clique's other
        variables, ready to broadcast against the clique's table."""
        clique = self.cliques[i]
        on_clique = sorted(factor.variables, key=clique.index)
        values = np.transpose(values, [factor.variables.index(v) for v in on_clique])
        return values.reshape([self.arity[v] if v in factor.variables else 1 for v in clique])

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

    def _compiled_mpe(self, evidence):
        """``(state indices, log P(x, e))`` of one evidence set by
        :func:`max_product_one_set`, from the evidence-free pass of
        :func:`max_product_prior` (computed once)."""
        flat = self._compiled_layout()
        keys = ("table_off", "cvar_ptr", "ccard", "up_stride", "down_ptr", "down_stride",
                "sep_off", "parents")
        if self._max_prior_flat is None:
            log_potentials = np.concatenate([self._log_potential(i).ravel()
                                             for i in self.preorder])
            self._max_prior_flat = max_product_prior(log_potentials, *(flat[k] for k in keys))
        if "max_work" not in flat:
            flat["max_work"] = max_product_work(flat["sep_off"], flat["marg_off"])
        states = np.zeros((1, len(self.net.variables)), dtype=np.int64)
        if not max_product_one_set(*self._max_prior_flat, *(flat[k] for k in (
                "table_off", "cvar_ptr", "cvar", "ccard", "up_stride", "down_ptr", "down_stride",
                "sep_off", "parents", "child_ptr", "children", "reader", "rslot", "marg_off")),
                self._observed(evidence), states[0], *flat["max_work"]):
            raise ZeroEvidenceError(f"the evidence has probability zero: {evidence}")
        return states[0], float(log_values(*self._factor_index(), states)[0] - self.log_z)

    def mpe(self, evidence=None, *, soft_evidence=None) -> MPEResult:
        """The most probable complete assignment given ``evidence`` as
        ``{variable: state label}``, as an optimal :class:`MPEResult`: its
        ``log_value`` is the natural log of the assignment's joint probability
        (evidence included); with ``soft_evidence`` (as in :meth:`posteriors`)
        the assignment maximises ``P(x) * prod_v weights_v(x_v)`` and that is
        the value returned.

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> res = jt.mpe({"dysp": "yes", "smoke": "no"})
        >>> res.assignment["bronc"], res.assignment["lung"], round(res.log_value, 4)
        ('yes', 'no', -2.2017)
        """
        if soft_evidence is not None:
            states, log_p = self._mpe([evidence or {}],
                                      soft=likelihoods(self.net, soft_evidence))
            states, log_p = states[0], float(log_p[0])
        else:
            states, log_p = self._compiled_mpe(evidence)
        assignment = {v: self.net.states(v)[k] for v, k in zip(self.net.variables, states)}
        return MPEResult.exact(assignment, log_p, "junction tree", width=self.width)
