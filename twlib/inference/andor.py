"""AND/OR branch and bound for the MPE over the pseudo-tree of an elimination order.

Eliminating the variables along an order ties each variable ``X`` to the
earliest-eliminated of its later neighbours in the induced graph; these links
form a *pseudo-tree* (the bucket tree), rooted at the last variables, in which
every function's scope lies on one root-to-leaf path.  Once ``X`` and its
ancestors are assigned, the subtrees under ``X``'s children share no function:
they are independent subproblems, so the search space is an AND/OR tree (an OR
node chooses a value of ``X``, an AND node solves all children of ``X``) whose
size is exponential in the pseudo-tree's depth, not in the number of variables
(Dechter & Mateescu 2007).  A subproblem depends on its ancestors only through
its *context*, the ancestors its subtree touches, so its value can be cached by
context (Marinescu & Dechter 2009).

Every node is solved against a *threshold*: the value its subproblem must
exceed to improve the best solution reachable above it, from the incumbent and
the siblings' mini-bucket bounds.  A node returns its exact value when it
exceeds the threshold and otherwise an upper bound at most the threshold (fail
low, as alpha-beta does).  Either is an upper bound on the subproblem's value,
so the cache keeps the smallest found per context, and it tightens the
mini-bucket heuristic the next time the context comes round.  The cache is
allocated zeroed, so that the pages the search never writes cost nothing
(filling a gigabyte with a marker takes about 2 s), and 0.0 marks an entry
not yet written: a bound of exactly 0 is stored as the smallest positive
float, still an upper bound.

The heuristic of a subproblem rooted at ``X`` is the sum of the mini-bucket
messages generated inside its subtree and sent above it
(:mod:`twlib.inference.minibucket`); the search walks a stack of frames, one OR
and one AND per variable at most, so it can stop after any number of nodes and
resume.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..bitsets import later_neighbours, rows_of_scopes
from .engine import Engine
from .flat import flat_lists, flat_tables, slack, sort_best_first, tables_sum

__all__ = ["PseudoTree", "pseudo_tree", "AndOrSearch"]

# The compiled search allocates nothing, so it is compiled without
# numba's reference counting (``_nrt=False``): counting the arrays passed to
# each helper, atomically, took a quarter of the search's time (Grids_26)

_OR, _AND = 0, 1


class PseudoTree:
    """The pseudo-tree of an elimination order: ``parent[v]`` (``n`` for a root,
    the virtual root being ``n``), ``children`` of each node, each variable's
    ``context`` (its later neighbours in the induced graph) and ``depth``.

    >>> tree = pseudo_tree([0, 1, 2], [(0, 1), (1, 2)], 3)
    >>> tree.parent.tolist(), tree.children[3], tree.depth
    ([1, 2, 3], [2], 3)
    """

    def __init__(self, parent, context, order):
        n = len(parent)
        self.parent = np.asarray(parent, dtype=np.int64)
        self.context = context
        self.children = [[] for _ in range(n + 1)]
        for v in reversed(order):                 # roots and children in search order
            self.children[parent[v]].append(v)
        self.preorder = []
        stack = list(reversed(self.children[n]))
        level = {v: 1 for v in stack}
        while stack:
            v = stack.pop()
            self.preorder.append(v)
            for c in reversed(self.children[v]):
                level[c] = level[v] + 1
                stack.append(c)
        self.depth = max(level.values(), default=0)
        self.size = np.ones(n + 1, dtype=np.int64)
        for v in reversed(self.preorder):
            self.size[parent[v]] += self.size[v]


def pseudo_tree(order, scopes, n_vars: int) -> PseudoTree:
    """The bucket tree of elimination ``order`` (variable indices) over the
    interaction graph of ``scopes``; variables not in ``order`` are left out.
    The elimination is compiled on bitsets: on SAT encodings the contexts hold
    hundreds of variables, and updating sets of them takes seconds."""
    order = np.asarray(order, dtype=np.int64)
    position = np.full(n_vars, -1, dtype=np.int64)
    position[order] = np.arange(len(order))
    at, later = later_neighbours(rows_of_scopes(n_vars, *flat_lists(scopes)), order)
    parent = np.full(n_vars, n_vars, dtype=np.int64)
    context = [()] * n_vars
    for k, v in enumerate(order.tolist()):
        mine = later[at[k]:at[k + 1]]
        mine = mine[np.argsort(position[mine], kind="stable")]
        context[v] = tuple(mine.tolist())
        if len(mine):
            parent[v] = mine[0]
    return PseudoTree(parent, context, order.tolist())


class AndOrSearch(Engine):
    """Depth-first AND/OR branch and bound with context caching on mini-buckets ``mb``.

    An engine of the portfolio (:mod:`twlib.inference.engine`) that keeps its
    own incumbent: :meth:`restart` sets the value to beat (the cache is kept:
    what it holds are upper bounds whatever the incumbent); :meth:`reset` also
    forgets the cache (for tables that have changed).  Once ``finished``,
    ``improved`` says whether a better assignment than the value to beat was
    found (in ``assign``, value ``value``) or that value is proved optimal.
    ``cache_entries`` caps the cache; ``tab`` is ``flat_tables(mb.tables)``
    when the caller has it already.
    """

    name = "and/or"

    def __init__(self, mb, cache_entries: int, *, tab=None):
        n = len(mb.arity)
        originals = mb.originals
        tree = pseudo_tree(mb.order, [mb.tables[t][0] for t in range(originals)], n)
        self.tree = tree
        cost = [[t for t in mb.placed[v] if t < originals] for v in range(n)] + [[]]
        crossing = [[] for _ in range(n + 1)]
        position = {v: k for k, v in enumerate(mb.order)}
        for y in mb.order:
            for m in mb.generated[y]:
                scope = mb.tables[m][0]
                to = min(scope, key=position.__getitem__) if scope else n
                c = y
                while c != to:
                    crossing[c].append(m)
                    c = tree.parent[c]
        self.constant = sum(float(mb.tables[t][1]) for t in range(originals)
                            if not mb.tables[t][0])
        self.tab = flat_tables(mb.tables) if tab is None else tab
        self.cost = flat_lists(cost)
        self.crossing = flat_lists(crossing)
        self.child = flat_lists(tree.children)
        self.subtree = (np.array(tree.preorder, dtype=np.int64),
                        _positions(tree.preorder, n), tree.size)
        self.cache_slot, self.cache = _cache_layout(tree, mb.order, mb.arity, cache_entries)
        ctx = [[] for _ in range(n + 1)]
        mult = [[] for _ in range(n + 1)]
        for v in mb.order:
            if self.cache_slot[v] >= 0:
                ctx[v] = list(tree.context[v])
                step = 1
                for u in reversed(ctx[v]):
                    mult[v].insert(0, step)
                    step *= int(mb.arity[u])
        self.context = (*flat_lists(ctx), np.array([s for x in mult for s in x], dtype=np.int64))
        self.arity = mb.arity.astype(np.int64)
        top = int(self.arity.max()) if n else 1
        self.cand_val = np.zeros((n + 1, top), dtype=np.int64)
        self.cand_h = np.full((n + 1, top), -np.inf)
        self.ints = np.zeros((5, n + 1), dtype=np.int64)        # rows _CAND_N.._AND_K
        self.floats = np.zeros((8, n + 1))                      # rows _OR_T.._H
        self.stack = np.zeros((2, 2 * n + 2), dtype=np.int64)
        self.save = np.zeros(max(int(_save_need(tree, n)), 1), dtype=np.int64)
        self.assign = np.zeros(n, dtype=np.int64)
        self.state = np.zeros(4, dtype=np.int64)                # top, finished, returning, exact
        self.scalars = np.zeros(2)                              # returned value, save top
        self.expanded = 0
        self.restart(-np.inf)

    def reset(self) -> None:
        """Forget the cached bounds and the value to beat."""
        self.cache[:] = 0.0
        self.expanded = 0
        self.restart(-np.inf)

    def restart(self, incumbent: float) -> None:
        """Search again from the root for a value above ``incumbent``."""
        self.target = float(incumbent)
        self.state[:] = 0
        _start(self.state, self.scalars, self.stack, self.ints, self.floats, self.assign,
               self.tab, self.crossing, self.child, self.context, self.cache_slot, self.cache,
               self.constant, self.target)

    @property
    def incumbent(self) -> float:
        return self.value if self.improved else self.target

    @property
    def work_done(self) -> int:
        return self.expanded

    @property
    def improved(self) -> bool:
        # the root returns exact even at the threshold when nothing is left to search
        return self.finished and bool(self.state[3]) and self.value > self.target

    @property
    def value(self) -> float:
        return float(self.scalars[0])

    def run(self, budget: int) -> int:
        done = _and_or(self.state, self.scalars, self.stack, self.ints, self.floats,
                       self.assign, self.tab, self.cost, self.crossing, self.child,
                       self.context, self.cache_slot, self.cache, self.subtree, self.arity,
                       self.cand_val, self.cand_h, self.save, budget)
        self.expanded += done
        return done

    def bound(self) -> float:
        """A proved upper bound on the optimum (the incumbent's value at least)."""
        if self.finished:
            return self.incumbent
        return max(self.target, _stack_bound(self.state, self.scalars, self.stack,
                                                self.ints, self.floats, self.cand_h))


def _positions(preorder, n):
    out = np.full(n + 1, -1, dtype=np.int64)
    out[np.array(preorder, dtype=np.int64)] = np.arange(len(preorder))
    return out


def _save_need(tree, n):
    """Save-area entries the deepest chain of open OR nodes can hold at once."""
    need = np.zeros(n + 1, dtype=np.int64)
    for v in reversed(tree.preorder):
        below = max((need[c] for c in tree.children[v]), default=0)
        need[v] = tree.size[v] - 1 + below
    return max((need[c] for c in tree.children[n]), default=0)


def _cache_layout(tree, order, arity, cache_entries):
    """Cache slots, smallest contexts first, while the total fits ``cache_entries``;
    roots and variables with an empty context are not cached (met once)."""
    n = len(arity)
    slot = np.full(n + 1, -1, dtype=np.int64)
    sizes = {v: math.prod(int(arity[u]) for u in tree.context[v])
             for v in order if tree.context[v]}
    total = 0
    for v in sorted(sizes, key=sizes.__getitem__):
        if total + sizes[v] > cache_entries:
            break
        slot[v] = total
        total += sizes[v]
    return slot, np.zeros(max(total, 1))


# ints rows: cand_n, cand_next, best value, save offset, and_k; floats rows:
# or_t, or_best, or_fail, and_cost, and_t, and_sum, and_rest, h as a child
_CAND_N, _CAND_NEXT, _BEST_VAL, _SAVE_OFF, _AND_K = range(5)
_OR_T, _OR_BEST, _OR_FAIL, _AND_COST, _AND_T, _AND_SUM, _AND_REST, _H = range(8)


@nb.njit(cache=True, _nrt=False)
def _cache_index(v, assign, context, cache_slot):
    ptr, var, mult = context
    index = cache_slot[v]
    for j in range(ptr[v], ptr[v + 1]):
        index += assign[var[j]] * mult[j]
    return index


# What a bound of 0 is cached as (0.0 marks an entry not yet written)
_ZERO_BOUND = 5e-324


@nb.njit(cache=True, _nrt=False)
def _cached(cache, i):
    """The bound cached at ``i``: +inf while none is."""
    u = cache[i]
    return np.inf if u == 0.0 else u


@nb.njit(cache=True, _nrt=False)
def _child_bound(g, assign, tab, crossing, context, cache_slot, cache):
    h = tables_sum(crossing, g, assign, tab)
    if cache_slot[g] >= 0:
        u = _cached(cache, _cache_index(g, assign, context, cache_slot))
        if u < h:
            h = u
    return h


@nb.njit(cache=True, _nrt=False)
def _open_and(x, threshold, cost, floats, ints, assign, tab, crossing, child, context,
              cache_slot, cache):
    ptr, ids = child
    rest = 0.0
    for j in range(ptr[x], ptr[x + 1]):
        g = ids[j]
        floats[_H, g] = _child_bound(g, assign, tab, crossing, context, cache_slot, cache)
        rest += floats[_H, g]
    floats[_AND_COST, x] = cost
    floats[_AND_T, x] = threshold
    floats[_AND_SUM, x] = 0.0
    floats[_AND_REST, x] = rest
    ints[_AND_K, x] = 0


@nb.njit(cache=True, _nrt=False)
def _start(state, scalars, stack, ints, floats, assign, tab, crossing, child, context,
           cache_slot, cache, constant, incumbent):
    root = floats.shape[1] - 1
    _open_and(root, incumbent, constant, floats, ints, assign, tab, crossing, child, context,
              cache_slot, cache)
    stack[0, 0] = root
    stack[1, 0] = _AND
    state[0] = 0
    scalars[1] = 0


@nb.njit(cache=True, _nrt=False)
def _and_or(state, scalars, stack, ints, floats, assign, tab, cost, crossing, child, context,
            cache_slot, cache, subtree, arity, cand_val, cand_h, save, budget):
    """The AND/OR search from its saved stack for ``budget`` OR expansions."""
    pre_var, pre_pos, size = subtree
    ch_ptr, ch_ids = child
    top = state[0]
    returning = state[2] == 1
    exact = state[3] == 1
    ret = scalars[0]
    save_top = int(scalars[1])
    done = 0
    while done < budget:
        if top < 0:
            state[1] = 1
            break
        x = stack[0, top]
        if stack[1, top] == _AND:
            if returning:
                returning = False
                if exact:
                    floats[_AND_SUM, x] += ret
                    ints[_AND_K, x] += 1
                else:                              # a child failed low: so does this node
                    ret = floats[_AND_COST, x] + floats[_AND_SUM, x] + ret + floats[_AND_REST, x]
                    top -= 1
                    returning = True
                    continue
            k = ints[_AND_K, x]
            if k == ch_ptr[x + 1] - ch_ptr[x]:     # every child solved exactly
                ret = floats[_AND_COST, x] + floats[_AND_SUM, x]
                exact = True
                top -= 1
                returning = True
                continue
            c = ch_ids[ch_ptr[x] + k]
            floats[_AND_REST, x] -= floats[_H, c]
            t = floats[_AND_T, x] - floats[_AND_COST, x] - floats[_AND_SUM, x] \
                - floats[_AND_REST, x]
            if cache_slot[c] >= 0:
                u = _cached(cache, _cache_index(c, assign, context, cache_slot))
                if u <= t + slack(t):
                    ret = u
                    exact = False
                    returning = True
                    continue
            for a in range(arity[c]):              # open the OR node of c
                assign[c] = a
                h = tables_sum(cost, c, assign, tab)
                for j in range(ch_ptr[c], ch_ptr[c + 1]):
                    h += _child_bound(ch_ids[j], assign, tab, crossing, context, cache_slot,
                                      cache)
                cand_val[c, a] = a
                cand_h[c, a] = h
            sort_best_first(cand_h, cand_val, c, arity[c])
            ints[_CAND_N, c] = arity[c]
            ints[_CAND_NEXT, c] = 0
            ints[_SAVE_OFF, c] = save_top
            save_top += size[c] - 1
            floats[_OR_T, c] = t
            floats[_OR_BEST, c] = -np.inf
            floats[_OR_FAIL, c] = -np.inf
            top += 1
            stack[0, top] = c
            stack[1, top] = _OR
            done += 1
            continue
        # an OR node
        if returning:
            returning = False
            if exact and ret > max(floats[_OR_T, x], floats[_OR_BEST, x]):
                floats[_OR_BEST, x] = ret
                ints[_BEST_VAL, x] = assign[x]
                off = ints[_SAVE_OFF, x] - pre_pos[x] - 1
                for p in range(pre_pos[x] + 1, pre_pos[x] + size[x]):
                    save[off + p] = assign[pre_var[p]]
            elif ret > floats[_OR_FAIL, x]:
                floats[_OR_FAIL, x] = ret
        threshold = max(floats[_OR_T, x], floats[_OR_BEST, x])
        k = ints[_CAND_NEXT, x]
        if k < ints[_CAND_N, x] and cand_h[x, k] > threshold + slack(threshold):
            ints[_CAND_NEXT, x] = k + 1
            assign[x] = cand_val[x, k]
            _open_and(x, threshold, tables_sum(cost, x, assign, tab), floats, ints, assign,
                      tab, crossing, child, context, cache_slot, cache)
            top += 1
            stack[0, top] = x
            stack[1, top] = _AND
            continue
        if k < ints[_CAND_N, x] and cand_h[x, k] > floats[_OR_FAIL, x]:
            floats[_OR_FAIL, x] = cand_h[x, k]
        save_top -= size[x] - 1
        if floats[_OR_BEST, x] > floats[_OR_T, x]:
            ret = floats[_OR_BEST, x]
            exact = True
            off = ints[_SAVE_OFF, x] - pre_pos[x] - 1
            for p in range(pre_pos[x] + 1, pre_pos[x] + size[x]):
                assign[pre_var[p]] = save[off + p]
            assign[x] = ints[_BEST_VAL, x]
        else:
            ret = max(floats[_OR_BEST, x], floats[_OR_FAIL, x])
            exact = False
        if cache_slot[x] >= 0:
            i = _cache_index(x, assign, context, cache_slot)
            if ret < _cached(cache, i):
                cache[i] = ret if ret != 0.0 else _ZERO_BOUND
        top -= 1
        returning = True
    state[0] = top
    state[2] = 1 if returning else 0
    state[3] = 1 if exact else 0
    scalars[0] = ret
    scalars[1] = save_top
    return done


@nb.njit(cache=True, _nrt=False)
def _stack_bound(state, scalars, stack, ints, floats, cand_h):
    """The root's upper bound from the open frames, deepest first."""
    top = state[0]
    below = scalars[0] if state[2] == 1 else np.nan      # a pending child's value
    for d in range(top, -1, -1):
        x = stack[0, d]
        if stack[1, d] == _AND:
            u = floats[_AND_COST, x] + floats[_AND_SUM, x] + floats[_AND_REST, x]
            if not np.isnan(below):
                u += below
        else:
            u = max(floats[_OR_BEST, x], floats[_OR_FAIL, x])
            k = ints[_CAND_NEXT, x]
            if k < ints[_CAND_N, x]:
                u = max(u, cand_h[x, k])
            if not np.isnan(below):
                u = max(u, below)
        below = u
    return below
