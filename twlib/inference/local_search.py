"""Iterated local search from the incumbent, the portfolio's engine that only raises it.

Each new incumbent is first improved by iterated conditional modes (each
variable in turn moved to its best value given the others, until none moves;
Besag 1986): the dive's first assignments are greedy, and a better incumbent
early prunes more of every search.  Then, turn by turn, random kicks leave the
incumbent's basin (Lourenço, Martin & Stützle 2003): two to 32 variables
connected by the tables, around a random one, are set to random values and
held while their neighbours adapt, then released and polished; an assignment
at least as good becomes the incumbent.  It proves nothing, so its bound is
``inf`` and a proof near the end of a run does not wait for it.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .engine import Engine
from .flat import flat_lists, tables_sum, tables_total

__all__ = ["LocalSearch"]

# A kick sets 2 to this many connected variables to random values: leaving a
# basin can take twenty variables moved at once (ObjectDetection_11)
_LOCAL_KICK_MOST = 32


class LocalSearch(Engine):
    """Conditional modes and kicks on the shared incumbent (``scalars[0]``,
    ``best``) over the flat tables ``tab``, of which the first ``count`` are the
    model's; ``seq`` are the variables it may move (the unobserved ones).  A run
    of ``budget`` kicks is seeded by the number of runs, so a search repeats.

    >>> from twlib.inference.flat import flat_tables
    >>> tab = flat_tables([((0, 1), np.log([[0.1, 0.4], [0.3, 0.2]]))])
    >>> scalars, best = np.array([np.log(0.1)]), np.zeros(2, dtype=np.int64)
    >>> local = LocalSearch(tab, 1, np.array([0, 1]), np.array([2, 2]), scalars, best)
    >>> local.polish()                  # a local optimum: no one variable helps
    >>> best.tolist(), round(float(np.exp(local.incumbent)), 2)
    ([1, 0], 0.3)
    >>> local.run(20)                   # kicks move both at once
    20
    >>> best.tolist(), round(float(np.exp(local.incumbent)), 2)
    ([0, 1], 0.4)
    """

    name = "local"

    def __init__(self, tab, count: int, seq, arity, scalars, best):
        self.tab, self.count = tab, count
        self.seq = np.asarray(seq, dtype=np.int64)
        self.arity = np.asarray(arity, dtype=np.int64)
        self.scalars, self.best = scalars, best
        ptr, var = tab[0], tab[1]
        around = [[] for _ in range(len(self.arity))]
        for t in range(count):
            for v in var[ptr[t]:ptr[t + 1]]:
                around[v].append(t)
        self.around = flat_lists(around)
        self.reset()

    def reset(self) -> None:
        self.calls = 0
        self.kicks = 0

    @property
    def work_done(self) -> int:
        return self.kicks

    @property
    def finished(self) -> bool:
        return False                    # it proves nothing

    def run(self, budget: int) -> int:
        """``budget`` kicks from the incumbent (none when there is none yet)."""
        if self.incumbent == -np.inf or len(self.seq) == 0:
            return 0
        self.calls += 1
        _iterated_modes(self.best, self.scalars, self.seq, self.arity, self.around, self.tab,
                        self.count, budget, self.calls)
        self.kicks += budget
        return budget

    def polish(self) -> None:
        """Improve the incumbent by iterated conditional modes."""
        trial = self.best.copy()
        _conditional_modes(trial, self.seq, self.arity, self.around, self.tab)
        value = tables_total(trial, self.count, self.tab)
        if value > self.incumbent:
            self.best[:] = trial
            self.scalars[0] = value


@nb.njit(cache=True)
def _conditional_modes(assign, seq, arity, around, tab):
    """Move each variable of ``seq`` to the value that maximises the tables
    around it, the others fixed, until no variable moves."""
    n = assign.shape[0]
    movable = np.zeros(n, dtype=np.bool_)
    movable[seq] = True
    queue = np.empty(n, dtype=np.int64)
    queue[:seq.shape[0]] = seq
    _modes_from(assign, queue, seq.shape[0], movable.copy(), movable, arity, around, tab)


@nb.njit(cache=True)
def _iterated_modes(best, scalars, seq, arity, around, tab, count, kicks, seed):
    """The kicks of :meth:`LocalSearch.run`, each from the incumbent ``best``
    (value ``scalars[0]``), polished from the first by conditional modes so that
    a kick need only revisit the variables it moved and their neighbours."""
    np.random.seed(seed)
    trial = best.copy()
    _conditional_modes(trial, seq, arity, around, tab)
    value = tables_total(trial, count, tab)
    if value >= scalars[0]:
        scalars[0] = value
        best[:] = trial
    n = best.shape[0]
    movable = np.zeros(n, dtype=np.bool_)
    movable[seq] = True
    queued = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    kicked = np.empty(n, dtype=np.int64)
    for _ in range(kicks):
        trial[:] = best
        # a connected set, grown breadth first from a random variable: scattered
        # variables, each held by neighbours that did not move, escaped less
        most = np.random.randint(2, _LOCAL_KICK_MOST + 1)
        kicked[0] = seq[np.random.randint(seq.shape[0])]
        queued[kicked[0]] = True
        size, head = 1, 0
        while head < size and size < most:
            size = _queue_neighbours(kicked[head], kicked, size, queued, movable, around, tab)
            head += 1
        queued[kicked[:size]] = False
        size = min(size, most)
        movable[kicked[:size]] = False
        change = 0.0
        for x in kicked[:size]:
            before = tables_sum(around, x, trial, tab)
            trial[x] = np.random.randint(arity[x])
            change += tables_sum(around, x, trial, tab) - before
        # the kicked variables are held while their neighbours adapt, and then
        # released: polished at once, they would only go back to the incumbent
        around_kick = 0
        for x in kicked[:size]:
            around_kick = _queue_neighbours(x, queue, around_kick, queued, movable, around, tab)
        change += _modes_from(trial, queue, around_kick, queued, movable, arity, around, tab)
        movable[kicked[:size]] = True
        queue[:size] = kicked[:size]
        queued[kicked[:size]] = True
        change += _modes_from(trial, queue, size, queued, movable, arity, around, tab)
        # the running change decides whether the total is worth summing; a
        # table of zeros makes it meaningless, and then the total decides
        if np.isfinite(change) and change < -1e-9 * max(1.0, abs(scalars[0])):
            continue
        value = tables_total(trial, count, tab)
        # an equal value is taken too: the next kicks start from elsewhere on
        # the plateau, as the wcsp instances' many ties need
        if value >= scalars[0]:
            scalars[0] = value
            best[:] = trial


@nb.njit(cache=True)
def _queue_neighbours(x, queue, end, queued, movable, around, tab):
    """Append the movable neighbours of ``x`` not yet ``queued`` to the circular
    ``queue`` from position ``end``, marking them; the new end."""
    var_ptr, var = tab[0], tab[1]
    ptr, ids = around
    for j in range(ptr[x], ptr[x + 1]):
        for k in range(var_ptr[ids[j]], var_ptr[ids[j] + 1]):
            y = var[k]
            if movable[y] and not queued[y]:
                queued[y] = True
                queue[end % queue.shape[0]] = y
                end += 1
    return end


@nb.njit(cache=True)
def _modes_from(assign, queue, size, queued, movable, arity, around, tab):
    """Conditional modes on the variables of ``queue[:size]`` (marked in ``queued``)
    and then on the neighbours of each that moves; the change in value."""
    n, head, change = queue.shape[0], 0, 0.0
    while size > 0:
        x = queue[head]
        head = (head + 1) % n
        size -= 1
        queued[x] = False
        now = assign[x]
        now_value = tables_sum(around, x, assign, tab)
        best, best_value = now, now_value
        for a in range(arity[x]):
            if a == now:
                continue
            assign[x] = a
            score = tables_sum(around, x, assign, tab)
            # strictly better, beyond rounding, so that it cannot cycle
            if score > best_value and (best_value == -np.inf or score - best_value
                                       > 1e-12 * max(1.0, abs(best_value))):
                best, best_value = a, score
        assign[x] = best
        if best == now:
            continue
        change += best_value - now_value
        size = _queue_neighbours(x, queue, head + size, queued, movable, around, tab) - head
    return change
