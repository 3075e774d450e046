"""Cluster constraints: the acyclicity of GOBNILP's integer programme, and their separation.

A parent-set choice is acyclic exactly when every *cluster* ``C`` (two or more
variables) holds a variable whose parents all lie outside ``C``::

    sum_{v in C} sum_{t : t & C = {}} x[v, t] >= 1          for every cluster C.

:func:`violated_clusters` finds the clusters a fractional point violates: a
compiled greedy peeling of the strongly connected parts of its support (and of
its heavier arcs) first, then, when that finds none, an exact search for the
most violated clusters: a compiled branch and bound, and should it run out of
nodes, a small sub-IP (Bartlett & Cussens 2017, section 5).  Both the
branch and cut of :mod:`twlib.learn.ilp` and the LP relaxation of
:mod:`twlib.learn.ilp.relaxation` use them.
"""
from __future__ import annotations

import itertools

import networkx as nx
import numba as nb
import numpy as np

from ...errors import TwlibError

__all__ = ["SolverMissing", "require_scip", "cluster_families", "cluster_violation",
           "violated_clusters", "packing_families", "violated_packings"]

_EPS = 1e-6          # a cut must be violated by more than this to be added
_MAX_CUTS = 20       # cluster cuts per separation round
_SEARCH_NODES = 200_000   # nodes of the compiled exact separation before the sub-IP takes over


class SolverMissing(TwlibError, ImportError):
    """The integer-programming solver (SCIP, through pyscipopt) is not installed."""


def require_scip():
    """The pyscipopt module, or :class:`SolverMissing` naming how to install it."""
    try:
        import pyscipopt
    except ImportError:
        raise SolverMissing("exact learning by integer programming needs SCIP: "
                            "pip install pyscipopt (its wheels ship SCIP)") from None
    return pyscipopt


def cluster_families(cluster, child, members) -> np.ndarray:
    """The families the cluster constraint of ``cluster`` sums: a member's, with
    every parent outside the cluster (a bool per family).

    ``child[j]`` and ``members[j]`` (a bool row over the variables) describe family ``j``.

    >>> child = np.array([0, 0, 1]); members = np.array([[0, 1], [0, 0], [1, 0]], bool)
    >>> cluster_families(np.array([True, True]), child, members).tolist()
    [False, True, False]
    """
    inside = np.asarray(cluster, dtype=bool)
    return inside[child] & ~(members & inside).any(axis=1)


def cluster_violation(cluster, child, members, values) -> float:
    """How far an LP point violates the cluster constraint of ``cluster`` (> 0: violated).

    ``values[j]`` is the point's weight on family ``j``: the violation is
    ``1 - sum x[v, t]`` over :func:`cluster_families`.

    >>> child = np.array([0, 1]); members = np.array([[0, 1], [1, 0]], bool)
    >>> cluster_violation(np.array([True, True]), child, members, np.ones(2))   # a 2-cycle
    1.0
    """
    return float(1.0 - values[cluster_families(cluster, child, members)].sum())


def packing_families(members_set, child, members) -> np.ndarray:
    """The families the set-packing row of ``members_set`` sums: a member's, with
    every other member among its parents (a bool per family).

    At most one of them can be chosen, or two members are each other's parents:
    ``sum x[v, t] <= 1``.  For two variables this is their cluster constraint;
    for three and four it is not implied by the cluster constraints in the LP
    (GOBNILP adds them, Bartlett & Cussens 2017).

    >>> child = np.array([0, 1, 2, 2]); members = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0],
    ...                                                     [1, 0, 0]], bool)
    >>> packing_families(np.array([True, True, True]), child, members).tolist()
    [True, True, True, False]
    """
    inside = np.asarray(members_set, dtype=bool)
    return inside[child] & ((inside & ~members).sum(axis=1) == 1)


def violated_packings(child, members, values, n, *, largest: int = 4, max_cuts: int = _MAX_CUTS):
    """Sets of 3 to ``largest`` variables whose set-packing row the LP point
    violates, most violated first: ``[(violation, bool row), ...]``.

    Exact over those sizes: every violated set is made of a support family's
    child and some of its parents, and all of them are summed.

    >>> child = np.array([0, 1, 2]); members = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]], bool)
    >>> [round(v, 2) for v, _ in violated_packings(child, members, np.full(3, 0.5), 3)]
    [0.5]
    """
    weight = {}
    for j in np.flatnonzero(values > _EPS):
        v = int(child[j])
        parents = np.flatnonzero(members[j]).tolist()
        for size in range(2, min(largest - 1, len(parents)) + 1):
            for others in itertools.combinations(parents, size):
                key = tuple(sorted((v, *others)))
                weight[key] = weight.get(key, 0.0) + float(values[j])
    found = sorted(((total - 1.0, key) for key, total in weight.items() if total > 1.0 + _EPS),
                   reverse=True)[:max_cuts]
    out = []
    for violation, key in found:
        row = np.zeros(n, dtype=bool)
        row[list(key)] = True
        out.append((violation, row))
    return out


@nb.njit(cache=True)
def _meets(members, j, mask):
    """Whether family ``j`` has a parent in ``mask``."""
    for u in range(mask.shape[0]):
        if members[j, u] and mask[u]:
            return True
    return False


@nb.njit(cache=True)
def _peel(cluster, child, members, values):
    """Greedy peeling: from ``cluster`` remove, one at a time, the member whose
    families with no parent inside carry the most weight, keeping the most
    violated cluster met on the way.  Returns (violation, cluster)."""
    n = cluster.shape[0]
    m = child.shape[0]
    inside = cluster.copy()
    best = -np.inf
    best_set = cluster.copy()
    size = 0
    for v in range(n):
        if inside[v]:
            size += 1
    while size >= 2:
        free = np.zeros(n)                 # weight of each member's families outside
        for j in range(m):
            c = child[j]
            if not inside[c]:
                continue
            if not _meets(members, j, inside):
                free[c] += values[j]
        total = 0.0
        worst = -1
        for v in range(n):
            if inside[v]:
                total += free[v]
                if worst < 0 or free[v] > free[worst]:
                    worst = v
        if 1.0 - total > best:
            best = 1.0 - total
            best_set[:] = inside
        inside[worst] = False
        size -= 1
    return best, best_set


_THRESHOLDS = (0.0, 0.3, 0.6)   # arc weights above which strong parts are peeled


def _arc_weights(child, members, values, n):
    """``w[u, v]``: the LP weight of ``v``'s families that have ``u`` as a parent."""
    weights = np.zeros((n, n))
    np.add.at(weights.T, child, members * values[:, None])
    return weights


def _strong_parts(weights, threshold):
    """Strongly connected sets (two or more variables) of the arcs heavier than ``threshold``."""
    support = nx.DiGraph()
    support.add_nodes_from(range(len(weights)))
    support.add_edges_from(zip(*np.nonzero(weights > threshold + _EPS)))
    parts = []
    for part in nx.strongly_connected_components(support):
        if len(part) >= 2:
            row = np.zeros(len(weights), dtype=bool)
            row[list(part)] = True
            parts.append(row)
    return parts


def violated_clusters(child, members, values, n, *, exact: bool = True, time_limit: float = 5.0,
                      max_cuts: int = _MAX_CUTS, report_proof: bool = False,
                      search_nodes: int = _SEARCH_NODES):
    """Clusters whose constraint the LP point violates, most violated first.

    The strong parts of the support (and of its heavier arcs) are peeled
    greedily first.  Only when that finds nothing does the exact separation
    run: a compiled branch and bound of up to ``search_nodes`` nodes, which
    keeps the ``max_cuts`` most violated clusters, and, should it not finish,
    the sub-IP, for at most ``time_limit`` seconds.
    Returns ``[(violation, bool row), ...]``, at most ``max_cuts`` of them;
    with ``report_proof``, also whether an empty answer is proved (an exact
    search ran to its end; the peeling alone proves nothing).

    >>> child = np.array([0, 1, 0, 1]); members = np.array([[0, 1], [1, 0], [0, 0], [0, 0]], bool)
    >>> [round(v, 2) for v, _ in violated_clusters(child, members, np.array([.8, .8, .2, .2]), 2)]
    [0.6]
    """
    support = values > _EPS
    child, members, values = child[support], members[support], values[support]
    weights = _arc_weights(child, members, values, n)
    found = {}
    for threshold in _THRESHOLDS:
        for part in _strong_parts(weights, threshold):
            violation, cluster = _peel(part, child, members, values)
            if violation > _EPS:
                found[cluster.tobytes()] = (violation, cluster)
    proved = bool(found)
    if not found and exact:
        costs, rows, count, proved = _search_clusters(child, members, values, n, max_cuts,
                                                      search_nodes)
        if proved:
            clusters = [(1.0 - cost, row) for cost, row in zip(costs[:count], rows[:count])]
        else:
            clusters, proved = _subip_clusters(child, members, values, n, time_limit)
        for violation, cluster in clusters:
            found[cluster.tobytes()] = (violation, cluster)
    out = sorted(found.values(), key=lambda item: -item[0])[:max_cuts]
    return (out, proved) if report_proof else out


@nb.njit(cache=True)
def _free_weights(child, values, count, free):
    """``free[v]``: the weight of ``v``'s families with no parent left (``count[j] == 0``)."""
    free[:] = 0.0
    for j in range(child.shape[0]):
        if count[j] == 0:
            free[child[j]] += values[j]


@nb.njit(cache=True)
def _keep_cluster(cluster, cost, kept_cost, kept, size):
    """Put ``cluster`` (of cost ``cost``) among the ``kept`` best, if it is violated,
    not there already, and (when all slots are full) better than the worst kept;
    returns the new count."""
    if cost >= 1.0 - _EPS:
        return size
    for i in range(size):
        if (kept[i] == cluster).all():
            return size
    slot = size
    if size == kept.shape[0]:
        slot = np.argmax(kept_cost)
        if kept_cost[slot] <= cost:
            return size
    else:
        size += 1
    kept_cost[slot] = cost
    kept[slot] = cluster
    return size


@nb.njit(cache=True)
def _send_out(u, status, count, as_parent, trail, trail_kind, size):
    """Variable ``u`` leaves the cluster search (its families lose a parent in
    ``In | U``), recorded on the trail; returns the trail's new length."""
    status[u] = 2
    for j in as_parent[u]:
        count[j] -= 1
    trail[size] = u
    trail_kind[size] = 2
    return size + 1


@nb.njit(cache=True)
def _search_clusters(child, members, values, n, max_found, node_limit):
    """Exact separation by a compiled branch and bound over the members of a cluster.

    A cluster ``C`` costs ``g(C) = sum_{v in C} f_v(C)``, ``f_v(C)`` the weight of
    ``v``'s families with no parent in ``C`` (violation ``1 - g``).  Each ``f_v``
    only falls as ``C`` grows, so with members ``In`` fixed and ``U`` still open,
    ``sum_{v in In} f_v(In | U)`` bounds the cost of every cluster between them:
    the node is cut off once that reaches the ``max_found``-th best cost (or 1),
    and an open ``u`` goes out once adding ``f_u(In | U)`` would.  Returns the
    best clusters' costs and rows, how many, and whether the search ended
    within ``node_limit`` nodes (then no cluster it left out is more violated).
    """
    m = child.shape[0]
    as_parent = [np.flatnonzero(members[:, u]) for u in range(n)]
    count = np.zeros(m, dtype=np.int64)          # parents of j still in In | U
    for j in range(m):
        count[j] = members[j].sum()
    status = np.full(n, 2, dtype=np.int8)        # 0 open, 1 in, 2 out
    for j in range(m):
        status[child[j]] = 0
    for u in range(n):                           # a variable with no family never joins
        if status[u] == 2:
            for j in as_parent[u]:
                count[j] -= 1
    free = np.zeros(n)
    kept_cost = np.zeros(max_found)
    kept = np.zeros((max_found, n), dtype=np.bool_)
    found = 0
    trail = np.empty(n, dtype=np.int64)
    trail_kind = np.empty(n, dtype=np.int8)
    size = 0
    frame_vertex = np.empty(n + 1, dtype=np.int64)
    frame_stage = np.empty(n + 1, dtype=np.int8)
    frame_trail = np.empty(n + 1, dtype=np.int64)
    depth = 0
    nodes = 0
    inside_count = np.zeros(m, dtype=np.int64)
    while True:
        nodes += 1
        if nodes > node_limit:
            return kept_cost, kept, found, False
        limit = 1.0 - _EPS if found < max_found else kept_cost[:found].max()
        # bound, and send out every open variable that cannot join
        alive = True
        while True:
            _free_weights(child, values, count, free)
            bound = 0.0
            for v in range(n):
                if status[v] == 1:
                    bound += free[v]
            if bound >= limit:
                alive = False
                break
            moved = False
            for u in range(n):
                if status[u] == 0 and bound + free[u] >= limit:
                    size = _send_out(u, status, count, as_parent, trail, trail_kind, size)
                    moved = True
            if not moved:
                break
        branch = -1
        if alive:
            members_left = 0
            widest = 0.0                        # the cost of In | U
            for v in range(n):
                if status[v] != 2:
                    members_left += 1
                    widest += free[v]
            alive = members_left >= 2
        if alive:
            found = _keep_cluster(status != 2, widest, kept_cost, kept, found)
            chosen = 0
            for v in range(n):
                if status[v] == 1:
                    chosen += 1
            if chosen >= 2:                     # the cost of In alone
                inside_count[:] = 0
                for v in range(n):
                    if status[v] == 1:
                        for j in as_parent[v]:
                            inside_count[j] += 1
                cost = 0.0
                for j in range(m):
                    if status[child[j]] == 1 and inside_count[j] == 0:
                        cost += values[j]
                found = _keep_cluster(status == 1, cost, kept_cost, kept, found)
            best_free = -1.0
            for u in range(n):                  # the open variable that costs most to take
                if status[u] == 0 and free[u] > best_free:
                    best_free = free[u]
                    branch = u
        if branch >= 0:
            frame_vertex[depth] = branch
            frame_stage[depth] = 0
            frame_trail[depth] = size
            depth += 1
            status[branch] = 1
            trail[size] = branch
            trail_kind[size] = 1
            size += 1
            continue
        resumed = False
        while depth > 0:
            d = depth - 1
            while size > frame_trail[d]:        # undo the node's moves
                size -= 1
                u = trail[size]
                if trail_kind[size] == 2:
                    for j in as_parent[u]:
                        count[j] += 1
                status[u] = 0
            if frame_stage[d] == 0:
                frame_stage[d] = 1
                size = _send_out(frame_vertex[d], status, count, as_parent, trail, trail_kind,
                                 size)
                resumed = True
                break
            depth -= 1
        if not resumed:
            return kept_cost, kept, found, True


def _subip_clusters(child, members, values, n, time_limit):
    """Exact separation: maximise the cluster violation over all clusters by a sub-IP.

    ``I[v]``: ``v`` is in the cluster; ``J[j]``: family ``j``'s child is in it and
    so is one of its parents.  The violation of a cluster is ``1 + sum values[j]
    J[j] - sum I[v]``, and only clusters with a positive one are reported, with
    whether the search ran to its end (then finding none proves there is none).
    """
    pyscipopt = require_scip()
    keep = members.any(axis=1)           # an empty parent set is outside every cluster
    if not keep.any():
        return [], True
    sub = pyscipopt.Model("clusters")
    sub.hideOutput()
    sub.setParam("limits/time", max(time_limit, 0.1))
    used = np.unique(np.concatenate([child, np.flatnonzero(members.any(axis=0))]))
    inside = {int(v): sub.addVar(vtype="B", obj=-1.0, name=f"I{v}") for v in used}
    for j in np.flatnonzero(keep):
        chosen = sub.addVar(vtype="B", obj=float(values[j]), name=f"J{j}")
        sub.addCons(chosen <= inside[int(child[j])])
        sub.addCons(chosen <= pyscipopt.quicksum(inside[int(u)]
                                                 for u in np.flatnonzero(members[j])))
    sub.addCons(pyscipopt.quicksum(inside.values()) >= 2)
    sub.setMaximize()
    sub.setObjlimit(-1.0 + _EPS)
    # a small programme solved hundreds of times: set-up costs more than search
    sub.setPresolve(pyscipopt.SCIP_PARAMSETTING.OFF)
    sub.setHeuristics(pyscipopt.SCIP_PARAMSETTING.FAST)
    sub.setSeparating(pyscipopt.SCIP_PARAMSETTING.FAST)
    sub.optimize()
    out = []
    for sol in sub.getSols():
        cluster = np.zeros(n, dtype=bool)
        for v, var in inside.items():
            cluster[v] = sub.getSolVal(sol, var) > 0.5
        violation = cluster_violation(cluster, child, members, values)
        if violation > _EPS:
            out.append((violation, cluster))
    return out, sub.getStatus() in ("optimal", "infeasible")
