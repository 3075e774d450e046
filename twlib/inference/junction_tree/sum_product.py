"""Sum-product on the junction tree: posteriors, joints and ``P(e)`` per evidence set.

Evidence multiplies indicators into the smallest clique holding each observed
variable; only the cliques on the paths from those to the root send messages
up (collect), then messages go down (distribute) only into the parts of the
tree that hold a variable asked about, and a part whose incoming separator
marginal did not change keeps its prior marginals.  One evidence set goes
through one compiled pass; a batch goes through numpy with a leading axis.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import InputError, UnknownName
from ...factors import ZeroEvidenceError
from .. import costs
from ..evidence import likelihoods
from ..kernels import hugin_one_set, hugin_work
from ..results import Marginals
from .structure import per_set_normalised, separator_ratio

__all__ = ["SumProduct"]


class SumProduct:
    """The sum product part of :class:`~twlib.inference.junction_tree.JunctionTree`."""

    def _indicators(self, evidence_sets, soft=None) -> dict:
        """``{observed variable: (batch, states) indicator}``; a set that does not
        observe the variable gets ones.  ``evidence_sets`` is a list of dicts or
        a matrix of state codes, a column per model variable, -1 where missing;
        ``soft`` maps variables to likelihood weights (from
        :func:`~twlib.inference.evidence.likelihoods`) multiplied into every set's."""
        batch = len(evidence_sets)
        lam = {}
        for v, weights in (soft or {}).items():
            lam[v] = np.repeat(weights[None], batch, axis=0)
        # as codes first, so that each observed variable is one numpy step
        # for the whole batch, not one per set
        codes = self._coded_sets(evidence_sets)
        rows = np.arange(batch)
        for j in np.flatnonzero((codes >= 0).any(axis=0)):
            v = self.net.variables[j]
            seen = codes[:, j] >= 0
            if v not in lam:
                lam[v] = np.ones((batch, self.arity[v]))
            kept = lam[v][rows[seen], codes[seen, j]]
            lam[v][seen] = 0.0
            lam[v][rows[seen], codes[seen, j]] = kept
        return lam

    def _paths_to_root(self, cliques) -> set:
        """The cliques on the paths from ``cliques`` up to the root."""
        found = set()
        for i in cliques:
            while i is not None and i not in found:
                found.add(i)
                i = self.parent[i]
        return found

    def _collect(self, evidence_sets, soft=None):
        """Enter a batch's evidence and collect along the paths from it to the root.
        Returns ``(work, seps, log P(e) per set)``: ``work[i]`` is clique i's table
        ``P(C_i, evidence below i)`` up to a factor per set, for the cliques on
        those paths (the others keep their prior), and ``seps[i]`` the new
        separator marginals they sent up."""
        batch = len(evidence_sets)
        lam = self._indicators(evidence_sets, soft)
        work, scale = {}, {}
        for v, indicator in lam.items():
            i = self.reader[v]
            if i not in work:
                work[i] = np.repeat(self.tables[i][None], batch, axis=0)
                scale[i] = np.zeros(batch)
            work[i] *= indicator.reshape([batch] + [self.arity[u] if u == v else 1
                                                    for u in self.cliques[i]])
        dirty = self._paths_to_root(work)           # the cliques whose subtree holds evidence
        seps = {}
        for i in reversed(self.preorder[1:]):                # collect
            if i not in dirty:
                continue
            p = self.parent[i]
            seps[i], total = per_set_normalised(self._child_to_sep(i, work[i]))
            if p not in work:
                work[p] = np.repeat(self.tables[p][None], batch, axis=0)
                scale[p] = np.zeros(batch)
            work[p] *= self._sep_on_parent(i, separator_ratio(seps[i], self.seps[i][None]))
            with np.errstate(divide="ignore"):
                scale[p] += scale[i] + np.log(total)
        log_pe = np.zeros(batch)
        if self.root in work:
            work[self.root], total = per_set_normalised(work[self.root])
            with np.errstate(divide="ignore"):
                log_pe = scale[self.root] + np.log(total)
        log_pe = log_pe + self.log_z
        return work, seps, log_pe

    def _propagate(self, evidence_sets, asked=(), keep=(), allow_zero: bool = False,
                   soft=None):
        """One batch: enter the evidence, collect along the paths from the
        evidence to the root, distribute along the paths from the root to the
        cliques that read the ``asked`` variables (and to the cliques ``keep``).
        Returns ``(log P(e) per set, {asked variable: (batch, states) posterior,
        or None where it is still the prior}, {kept clique: its unnormalised
        posterior table, with one row where it is still the prior})``."""
        batch = len(evidence_sets)
        work, seps, log_pe = self._collect(evidence_sets, soft)
        zero = np.flatnonzero(~np.isfinite(log_pe))
        if zero.size and not allow_zero:
            which = "the evidence" if batch == 1 else f"evidence set {int(zero[0])}"
            raise ZeroEvidenceError(f"{which} has probability zero: "
                                    f"{evidence_sets[int(zero[0])]}")
        if zero.size:
            return log_pe, {}, {}
        needed = self._paths_to_root({self.reader[v] for v in asked} | set(keep))
        # distribute: msg[c] is the new separator marginal sent to c, None where
        # the sender's table is still its prior (then so is c's, unless c is dirty)
        msg, marginals, kept = {}, {}, {}
        for i in self.preorder:
            if i not in needed:
                continue
            ratio = None
            if i == self.root:
                base = work.get(i)
            else:
                new, old = msg.pop(i), seps.get(i, self.seps[i][None])
                if i not in seps and (new is None or _held(new, old)):
                    base = None                               # the separator marginal held
                else:
                    ratio = separator_ratio(new, old)
                    base = work.pop(i) if i in seps else self.tables[i][None]
            kids = [c for c in self.children[i] if c in needed]
            here = [v for v in self._readers[i] if v in asked]
            if base is None:
                msg.update((c, None) for c in kids)
                marginals.update((v, None) for v in here)
                if i in keep:
                    kept[i] = self.tables[i][None]
                continue
            if i in keep:
                kept[i] = base if ratio is None else base * self._sep_on_child(i, ratio)
            # messages and marginals come out unnormalised: normalising them is
            # cheaper than normalising the table.  On large tables each is one
            # fused multiply-and-sum (einsum) and the product is never built.
            table = None
            if base[0].size * batch < costs.FUSED_FROM_ENTRIES:
                table = base if ratio is None else base * self._sep_on_child(i, ratio)
            for c in kids:
                msg[c], _ = per_set_normalised(
                    self._parent_to_sep(c, table) if table is not None
                    else self._project(i, base, ratio, self.separators[c, i]))
            for v in here:
                marginals[v] = (self._marginal(table, i, v) if table is not None
                                else per_set_normalised(self._project(i, base, ratio, (v,)))[0])
        return log_pe, marginals, kept

    def _coded_sets(self, evidence_sets) -> np.ndarray:
        """Evidence sets (dicts, or already a matrix of codes) as a matrix of
        state codes, a column per model variable, -1 where missing."""
        if isinstance(evidence_sets, np.ndarray):
            return evidence_sets
        codes = np.full((len(evidence_sets), len(self.net.variables)), -1, dtype=np.int64)
        for b, e in enumerate(evidence_sets):
            self._observed(e, into=codes[b])
        return codes

    def _hugin_args(self) -> tuple:
        """The layout arrays :func:`hugin_one_set` and :func:`hugin_sets` take,
        gathered once: on a network of a few variables, gathering them per call
        took a tenth of a query."""
        flat = self._compiled_layout()
        if "hugin_args" not in flat:
            flat["hugin_args"] = tuple(flat[k] for k in (
                "tables", "table_off", "cvar_ptr", "cvar", "ccard", "up_stride", "down_ptr",
                "down_stride", "seps", "sep_off", "parents", "child_ptr", "children", "reader",
                "rslot", "fan_ptr", "fan_row_ptr", "fan_rows", "fan_out", "marg_off",
                "prior_marg", "sread", "sread_stride"))
            flat["hugin_work"] = self._hugin_work()
        return flat["hugin_args"]

    def _hugin_work(self) -> np.ndarray:
        """Scratch for one thread of :func:`hugin_one_set` calls."""
        return hugin_work(self._flat["sep_off"], self._flat["marg_off"])

    def _asked_mask(self, variables=None) -> np.ndarray:
        """Which model variables are asked about (all when ``variables`` is None)."""
        asked = np.zeros(len(self.net.variables), dtype=np.bool_)
        if variables is None:
            asked[:] = True
        else:
            asked[[self._variable_index[v] for v in variables]] = True
        return asked

    def _compiled_posteriors(self, evidence, variables=None):
        """The posteriors of ``variables`` (all by default) end to end, see
        ``_marginal_slices``, and ``log P(e)`` for one evidence set, by
        :func:`hugin_one_set`."""
        args = self._hugin_args()
        flat = self._flat
        if variables is None:
            if "every_variable" not in flat:
                flat["every_variable"] = self._asked_mask()
            asked = flat["every_variable"]
        else:
            asked = self._asked_mask(variables)
        marginals = np.empty(flat["marg_off"][-1])     # every asked entry is written
        log_pe = hugin_one_set(*args, self._observed(evidence), asked, marginals,
                               flat["hugin_work"])
        if not np.isfinite(log_pe):
            raise ZeroEvidenceError(f"the evidence has probability zero: {evidence}")
        return marginals, log_pe + self.log_z

    def posteriors(self, evidence=None, variables=None, *, soft_evidence=None) -> Marginals:
        """``P(variable | evidence)`` for every variable (or those in
        ``variables``, which saves the work for the others), as exact
        :class:`Marginals` (read as ``{variable: posterior}``) with ``log_z``
        the natural log of ``P(evidence)``.

        ``soft_evidence`` maps variables to likelihood weights, one per state
        (virtual evidence: as if an observed child had ``P(seen | state)``
        proportional to them).

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> post = jt.posteriors(variables=["lung"], soft_evidence={"xray": [0.8, 0.2]})
        >>> post["lung"].round(4).tolist()
        [0.1628, 0.8372]
        """
        every = variables is None
        variables = self._asked(variables)
        if soft_evidence is not None:
            log_pe, posts, _ = self._propagate([evidence or {}], asked=set(variables),
                                               soft=likelihoods(self.net, soft_evidence))
            posteriors = {v: self.prior[v] if posts[v] is None else posts[v][0]
                          for v in variables}
            log_pe = float(log_pe[0])
        else:
            marginals, log_pe = self._compiled_posteriors(evidence,
                                                          None if every else variables)
            posteriors = {v: marginals[self._marginal_slices[v]] for v in variables}
        return Marginals(posteriors, float(log_pe), True, "junction tree",
                         stats={"width": self.width})

    def joint(self, variables, evidence=None) -> np.ndarray:
        """``P(variables | evidence)`` as an array with one axis per variable (in the
        order given), for variables that share a clique of the tree, such as a
        family of the network (its moral graph joins it into one clique).

        >>> from twlib.inference import JunctionTree
        >>> from twlib.datasets import load_network
        >>> jt = JunctionTree(load_network("asia"))
        >>> jt.joint(["either", "tub", "lung"]).shape
        (2, 2, 2)
        """
        variables = list(variables)
        unknown = [v for v in variables if v not in self.arity]
        if unknown:
            raise UnknownName(f"unknown variables {unknown}")
        if len(set(variables)) != len(variables):
            raise InputError(f"variables repeat: {variables}")
        target = self._smallest_clique_holding(set(variables))
        if target is None:
            raise InputError(f"{variables} share no clique of the junction tree; "
                             "joint() answers only within a clique")
        _, _, belief = self._propagate([evidence or {}], keep={target})
        clique = list(self.cliques[target])
        table = belief[target][0].sum(
            axis=tuple(k for k, v in enumerate(clique) if v not in variables))
        kept = [v for v in clique if v in variables]
        table = np.transpose(table, [kept.index(v) for v in variables])
        return table / table.sum()

    def log_probability_of_evidence(self, evidence=None, *, soft_evidence=None) -> float:
        """Natural log of ``P(evidence)``; with ``soft_evidence`` (as in
        :meth:`posteriors`), of ``sum_x P(x, evidence) prod_v weights_v(x_v)``."""
        if soft_evidence is not None:
            return float(self._propagate([evidence or {}],
                                         soft=likelihoods(self.net, soft_evidence))[0][0])
        return float(self._compiled_posteriors(evidence, ())[1])

    def probability_of_evidence(self, evidence=None) -> float:
        """``P(evidence)`` (may underflow to 0 for very unlikely evidence; see the log form)."""
        return math.exp(self.log_probability_of_evidence(evidence))


def _held(new, old) -> bool:
    """Whether a separator marginal is unchanged (relative tolerance 1e-13):
    ``np.allclose`` without its overhead, which dominates on small trees."""
    return bool((np.abs(new - old) <= 1e-13 * np.abs(old)).all())


