"""Slow, obvious twins of twlib's fast kernels, used only to test them."""
from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import numpy as np


def joint_counts(values, cols, arities) -> np.ndarray:
    """Dense joint counts by a Python loop over rows (last column fastest)."""
    table = np.zeros(tuple(arities), dtype=np.int64)
    for row in np.asarray(values)[:, list(cols)]:
        table[tuple(row)] += 1
    return table.reshape(-1)


def entropy(values, cols) -> float:
    rows = [tuple(r) for r in np.asarray(values)[:, list(cols)]]
    n = len(rows)
    return -sum(c / n * math.log(c / n) for c in Counter(rows).values())


def mutual_information(values, i, j) -> float:
    """Definition: sum_xy p(x,y) log(p(x,y) / (p(x) p(y)))."""
    values = np.asarray(values)
    n = len(values)
    pxy = Counter(zip(values[:, i].tolist(), values[:, j].tolist()))
    px = Counter(values[:, i].tolist())
    py = Counter(values[:, j].tolist())
    return sum(c / n * math.log(c * n / (px[x] * py[y])) for (x, y), c in pxy.items())


def family_score(values, arities, child, parents, score, ess=1.0) -> float:
    """Local score from a dictionary of parent configurations to child counts."""
    values = np.asarray(values)
    n = len(values)
    r = int(arities[child])
    q = int(np.prod([arities[p] for p in parents])) if parents else 1
    groups: dict = {}
    for row in values:
        key = tuple(row[p] for p in parents)
        groups.setdefault(key, Counter())[row[child]] += 1
    total = 0.0
    for counter in groups.values():
        nj = sum(counter.values())
        if score == "bdeu":
            total += math.lgamma(ess / q) - math.lgamma(ess / q + nj)
            total += sum(math.lgamma(ess / (q * r) + c) - math.lgamma(ess / (q * r))
                         for c in counter.values())
        else:
            total += sum(c * math.log(c / nj) for c in counter.values())
    if score == "bic":
        total -= 0.5 * math.log(n) * q * (r - 1)
    return total


def best_network_score(sets_of) -> float:
    """Optimum over all orders: each variable takes its best set among its predecessors.

    ``sets_of[v]`` lists ``(score, frozenset_of_parents)`` for variable ``v``.
    """
    from itertools import permutations

    n = len(sets_of)
    best = -math.inf
    for order in permutations(range(n)):
        placed, total = set(), 0.0
        for v in order:
            total += max(s for s, ps in sets_of[v] if ps <= placed)
            placed.add(v)
        best = max(best, total)
    return best


def full_joint(net) -> np.ndarray:
    """The joint distribution of a network as one table (axes in ``net.variables`` order)."""
    names = net.variables
    joint = np.ones([net.arity(v) for v in names])
    for v in names:
        axes = [names.index(v)] + [names.index(p) for p in net.parents(v)]
        cpt = np.transpose(np.asarray(net.cpt(v)), np.argsort(axes))
        shape = [1] * len(names)
        for ax, size in zip(sorted(axes), cpt.shape):
            shape[ax] = size
        joint = joint * cpt.reshape(shape)
    return joint


def clamped(joint, net, evidence) -> np.ndarray:
    """``joint`` (axes in ``net.variables`` order) with the entries that contradict
    ``evidence`` ({variable: state label}) set to zero."""
    names = net.variables
    for v, s in evidence.items():
        mask = np.zeros(net.arity(v))
        mask[net.states(v).index(s)] = 1
        shape = [1] * len(names)
        shape[names.index(v)] = net.arity(v)
        joint = joint * mask.reshape(shape)
    return joint


def greedy_order(graph, method, weights):
    """A greedy elimination order in plain Python: eliminate the node of least
    cost (ties: fewer neighbours, then the node listed first), as
    ``graphs.greedy_elimination`` does without jitter."""
    import itertools
    import math
    rank = {v: i for i, v in enumerate(graph.nodes)}
    adj = {v: set(graph.neighbors(v)) - {v} for v in graph.nodes}

    def cost(v):
        nbrs = adj[v]
        if method == "min-degree":
            return len(nbrs)
        if method == "min-size":
            return math.log(weights[v]) + sum(math.log(weights[u]) for u in nbrs)
        missing = [(a, b) for a, b in itertools.combinations(nbrs, 2) if b not in adj[a]]
        if method == "min-fill":
            return len(missing)
        return sum(weights[a] * weights[b] for a, b in missing)

    order = []
    while adj:
        v = min(adj, key=lambda u: (cost(u), len(adj[u]), rank[u]))
        nbrs = adj.pop(v)
        for u in nbrs:
            adj[u].discard(v)
            adj[u] |= nbrs - {u}
        order.append(v)
    return order


def max_product_elimination(net, evidence) -> float:
    """``max over x of P(x, e)`` by eliminating variables one at a time (min-degree
    on the current scopes), maximising instead of summing; plain numpy factors."""
    names = net.variables
    factors = []
    for v in names:
        scope = [v] + list(net.parents(v))
        table = np.asarray(net.cpt(v), dtype=float).copy()
        for k, u in enumerate(scope):
            if u in evidence:
                mask = np.zeros(net.arity(u))
                mask[net.states(u).index(evidence[u])] = 1.0
                shape = [1] * len(scope)
                shape[k] = net.arity(u)
                table = table * mask.reshape(shape)
        factors.append((scope, table))
    remaining = set(names)
    while remaining:
        def degree(v):
            return len({u for scope, _ in factors if v in scope for u in scope})
        v = min(sorted(remaining), key=degree)
        remaining.remove(v)
        touching = [f for f in factors if v in f[0]]
        factors = [f for f in factors if v not in f[0]]
        scope = sorted({u for s, _ in touching for u in s}, key=names.index)
        product = np.ones([net.arity(u) for u in scope])
        for s, table in touching:
            order = np.argsort([scope.index(u) for u in s])
            shape = [net.arity(u) if u in s else 1 for u in scope]
            product = product * np.transpose(table, order).reshape(shape)
        factors.append(([u for u in scope if u != v], product.max(axis=scope.index(v))))
    return float(np.prod([table for _, table in factors]))


def sampled_evidence(net, count, most, rng) -> list:
    """``count`` evidence sets, each the states of a sample of the network at
    0 to ``most - 1`` of its variables drawn at random (so never impossible)."""
    sets = []
    for row in net.sample(count, random_state=rng).values:
        chosen = rng.choice(len(net.variables), size=int(rng.integers(0, most)), replace=False)
        sets.append({net.variables[j]: net.states(net.variables[j])[row[j]] for j in chosen})
    return sets


def treewidth(n, edges) -> int:
    """Tree-width of the graph on ``range(n)``: the least elimination width over
    every order (plain Python, for graphs of up to about eight vertices)."""
    from itertools import permutations

    best = max(n - 1, 0)
    for order in permutations(range(n)):
        adj = {v: set() for v in range(n)}
        for a, b in edges:
            if a != b:
                adj[a].add(b)
                adj[b].add(a)
        width = 0
        for v in order:
            nbrs = adj.pop(v)
            width = max(width, len(nbrs))
            for u in nbrs:
                adj[u] |= nbrs - {u}
                adj[u].discard(v)
        best = min(best, width)
    return best


def best_network_of_width(pss, k) -> float:
    """The best network of moral tree-width <= k over every combination of kept
    candidate sets (exhaustive, with a score bound to skip hopeless branches)."""
    import networkx as nx

    n = pss.n_vars
    options = []
    for v in range(n):
        parents, scores, _ = pss.parent_arrays(v)
        options.append(sorted(((float(s), [int(u) for u in row if u >= 0])
                               for row, s in zip(parents, scores)), key=lambda o: -o[0]))
    rest = np.append(np.cumsum([max(s for s, _ in o) for o in options][::-1])[::-1], 0.0)
    best = [-math.inf]

    def extend(v, total, chosen):
        if total + rest[v] <= best[0]:
            return
        if v == n:
            arcs = [(u, c) for c, ps in enumerate(chosen) for u in ps]
            if nx.is_directed_acyclic_graph(nx.DiGraph(arcs)):
                moral = arcs + [(a, b) for ps in chosen for a in ps for b in ps if a < b]
                if treewidth(n, moral) <= k:
                    best[0] = total
            return
        for s, ps in options[v]:
            extend(v + 1, total + s, chosen + [ps])

    extend(0, 0.0, [])
    return best[0]


def dense_binary_data(seed, n_vars, rows=400):
    """Each variable a noisy function of up to three earlier ones (unbounded optima
    of width 2 and 3): data on which a small tree-width bound binds."""
    import pandas as pd

    from twlib.data import Dataset

    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, 2, rows)]
    for i in range(1, n_vars):
        a, b, c = rng.choice(i, size=3, replace=i < 3)
        noise = rng.random(rows) < rng.uniform(0.05, 0.2)
        cols.append(np.where(noise, rng.integers(0, 2, rows), cols[a] ^ (cols[b] & cols[c])))
    return Dataset.from_pandas(pd.DataFrame({f"v{i}": c for i, c in enumerate(cols)}))


def random_factor_model(rng, n_vars, n_factors, largest, scale=1.0, zeros=0.0):
    """A Markov network over ``x0..`` with 2-3 states per variable and
    ``n_factors`` random factors of 1 to ``largest`` variables, a share ``zeros``
    of their entries set to 0."""
    from twlib.factors import Factor, FactorModel

    names = [f"x{i}" for i in range(n_vars)]
    states = {v: [str(k) for k in range(int(rng.integers(2, 4)))] for v in names}
    factors = []
    for _ in range(n_factors):
        scope = tuple(rng.choice(names, size=int(rng.integers(1, min(largest, n_vars) + 1)),
                                 replace=False))
        values = rng.random([len(states[v]) for v in scope]) * scale
        values[rng.random(values.shape) < zeros] = 0.0
        factors.append(Factor(scope, values))
    return FactorModel(names, states, factors)


def low_degree_core(graph, max_degree=2):
    """The vertices left once every vertex of at most ``max_degree`` neighbours
    is removed, repeatedly, its neighbours joined into a clique (the order does
    not matter: no removal raises a degree)."""
    g = nx.Graph(graph)
    while True:
        low = [v for v in g if g.degree(v) <= max_degree]
        if not low:
            return set(g)
        nbrs = list(g[low[0]])
        g.add_edges_from((a, b) for i, a in enumerate(nbrs) for b in nbrs[i + 1:])
        g.remove_node(low[0])


def star_incidence(ptr, var, n_vars, count):
    """Each variable's (table, slot) pairs among the first ``count`` flat
    tables, in table order, as ``(inc_ptr, inc_table, inc_slot)``."""
    around = [[] for _ in range(n_vars)]
    for t in range(count):
        for j in range(ptr[t], ptr[t + 1]):
            around[var[j]].append((t, j))
    inc_ptr = np.cumsum([0] + [len(a) for a in around]).astype(np.int64)
    inc_table = np.array([t for a in around for t, _ in a], dtype=np.int64)
    inc_slot = np.array([j for a in around for _, j in a], dtype=np.int64)
    return inc_ptr, inc_table, inc_slot


def star_gathers(tables, arity, count):
    """For each variable's tables among the first ``count`` ``(scope, table)``
    pairs, in table order, the flat indices (into the tables laid end to end)
    of the entries where it takes each value, value by value, each in order."""
    offsets = np.cumsum([0] + [np.size(t) for _, t in tables])
    runs = []
    for x in range(len(arity)):
        for t, (scope, table) in enumerate(tables[:count]):
            if x in scope:
                coords = np.unravel_index(np.arange(np.size(table)), np.shape(table))
                at = coords[list(scope).index(x)]
                runs.extend(int(offsets[t] + e) for a in range(arity[x])
                            for e in np.flatnonzero(at == a))
    return runs


def mplp_sweep(tables, arity):
    """One MPLP sweep, variable by variable: each table around ``x`` loses its
    max-marginal over ``x`` and gains the average of them all; a value some
    table rules out (``-inf``) is ruled out in every table.  On copies."""
    tables = [(scope, np.array(t, dtype=float)) for scope, t in tables]
    for x in range(len(arity)):
        around = [(scope.index(x), t) for scope, t in tables if x in scope]
        if len(around) < 2:
            continue
        maxima = [np.moveaxis(t, axis, 0).reshape(arity[x], -1).max(axis=1)
                  for axis, t in around]
        total = np.sum(maxima, axis=0)
        if np.all(total == -np.inf):
            continue
        for (axis, t), m in zip(around, maxima):
            view = np.moveaxis(t, axis, 0)
            for a in range(arity[x]):
                view[a] = view[a] + (total[a] / len(around) - m[a]) if total[a] > -np.inf \
                    else -np.inf
    return tables
