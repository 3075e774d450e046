"""The zeros of a model as a satisfiability problem: a first assignment of non-zero probability.

On models full of zeros (SAT encodings, circuits, planning problems) the hard
part of the MPE is often to find any assignment of non-zero probability: the
propagation search prunes by the zeros but learns nothing from its failures,
while a conflict-driven clause-learning SAT solver does (Marques-Silva &
Sakallah 1999).  Each zero entry of a table forbids one combination of its
variables' states, which is one clause; a variable of two states is one
Boolean, a variable of more is one Boolean per state with a clause that one
of them holds (more than one may hold: any of them then satisfies every
clause, since a clause only forbids states).  :class:`ZeroClauses` builds
that formula once and asks a SAT solver (Glucose, through python-sat) for a
model within a time limit, again with more time when asked again, keeping
what it learnt.  An unsatisfiable formula proves that every assignment has
probability zero.  Where every table is flat on its non-zero entries (a pure
CSP) the assignment found is optimal.

>>> from twlib.inference.flat import flat_tables
>>> tab = flat_tables([((0, 1), np.log([[0.0, 1.0], [1.0, 0.0]])),
...                    ((1, 2), np.log([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))])
>>> found = ZeroClauses(tab, 2, np.array([2, 2, 3])).solve(1.0)
>>> found.tolist()
[1, 0, 0]
"""
from __future__ import annotations

import threading

import numpy as np

from ..errors import ZeroEvidenceError
from .flat import table_sizes

__all__ = ["ZeroClauses"]

# Literals beyond which the formula is not built: a table of millions of zero
# entries is a constraint the propagation search handles as a table, while as
# clauses it would cost more to write than the search to run
MOST_LITERALS = 1_000_000


class ZeroClauses:
    """The zero entries of the first ``count`` flat tables of ``tab``
    (:func:`twlib.inference.flat.flat_tables`, log values, ``-inf`` for a
    zero) over variables of ``arity`` states, as clauses for a SAT solver.
    ``usable`` is False when the tables have no zero or too many
    (:data:`MOST_LITERALS`); :meth:`solve` then finds nothing."""

    def __init__(self, tab, count: int, arity):
        ptr, var, stride, offset, values = tab
        self.arity = np.asarray(arity, dtype=np.int64)
        # variable x's Boolean for state a: first[x] + a for more than two
        # states; for two, first[x] alone, true meaning state 1
        widths = np.where(self.arity > 2, self.arity, 1)
        self.first = np.concatenate([[1], 1 + np.cumsum(widths)[:-1]]).astype(np.int64)
        self.booleans = int(widths.sum())
        self.clauses, self.impossible = self._zero_clauses(ptr, var, stride, offset, values,
                                                           count, table_sizes(tab))
        self.usable = bool(self.clauses) or self.impossible
        if self.usable:
            for x in np.flatnonzero(self.arity > 2):
                self.clauses.append(list(range(self.first[x], self.first[x] + self.arity[x])))
        self._solver = None

    def _zero_clauses(self, ptr, var, stride, offset, values, count, sizes):
        """``(clauses, impossible)``: one clause per zero entry of the first
        ``count`` tables, in the order of the entries (no clause if they need
        more than :data:`MOST_LITERALS` literals), and whether a table is zero
        where its variables of one state put it.  Built for all the entries of
        one number of literals at once: a model of this kind has tens of
        thousands of small tables."""
        end = int(offset[count - 1] + sizes[count - 1]) if count else 0
        zero = np.flatnonzero(values[:end] == -np.inf)
        if not zero.size:
            return [], False
        table = np.searchsorted(offset[:count], zero, side="right") - 1
        local = zero - offset[table]
        # a variable of one state takes it: its literal is false and left out
        slot_table = np.repeat(np.arange(count), np.diff(ptr[:count + 1]))
        kept = np.flatnonzero(self.arity[var[:ptr[count]]] > 1)
        lengths = np.bincount(slot_table[kept], minlength=count)
        first_kept = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        width = lengths[table]
        impossible = bool((width == 0).any())    # a zero that no assignment escapes
        if int(width.sum()) > MOST_LITERALS:
            return [], impossible
        clauses = [None] * len(zero)
        for length in np.unique(width[width > 0]).tolist():
            rows = np.flatnonzero(width == length)
            slots = kept[first_kept[table[rows]][:, None] + np.arange(length)]
            x = var[slots]
            state = (local[rows][:, None] // stride[slots]) % self.arity[x]
            literal = np.where(self.arity[x] > 2, -(self.first[x] + state),
                               np.where(state == 1, -self.first[x], self.first[x]))
            for row, clause in zip(rows.tolist(), literal.tolist()):
                clauses[row] = clause
        return [clause for clause in clauses if clause is not None], impossible

    def solve(self, time_limit: float):
        """An assignment (state indices) at no zero entry, or None when the
        solver found none within ``time_limit`` seconds (or the formula is not
        usable).
        Raises :class:`ZeroEvidenceError` when no assignment avoids every zero."""
        if not self.usable:
            return None
        if self.impossible:
            raise ZeroEvidenceError("every assignment has probability zero: a table is zero "
                                    "wherever its variables of one state allow")
        if self._solver is None:
            from pysat.solvers import Solver
            self._solver = Solver(name="glucose4", bootstrap_with=self.clauses)
        timer = threading.Timer(max(time_limit, 1e-3), self._solver.interrupt)
        timer.start()
        try:
            found = self._solver.solve_limited(expect_interrupt=True)
        finally:
            timer.cancel()
            self._solver.clear_interrupt()
        if found is False:
            raise ZeroEvidenceError("every assignment has probability zero: the zeros of the "
                                    "tables, as clauses, are unsatisfiable")
        if found is None:
            return None
        truth = np.zeros(self.booleans + 1, dtype=np.bool_)
        model = np.array(self._solver.get_model(), dtype=np.int64)
        truth[np.abs(model)] = model > 0
        states = np.zeros(len(self.arity), dtype=np.int64)
        for x, r in enumerate(self.arity):
            if r == 2:
                states[x] = int(truth[self.first[x]])
            elif r > 2:
                states[x] = int(np.argmax(truth[self.first[x]:self.first[x] + r]))
        return states

    def close(self) -> None:
        """Free the solver."""
        if self._solver is not None:
            self._solver.delete()
            self._solver = None
