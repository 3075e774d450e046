"""Cluster constraints: the acyclicity of GOBNILP's integer programme, and their separation.

A parent-set choice is acyclic exactly when every *cluster* ``C`` (two or more
variables) holds a variable whose parents all lie outside ``C``::

    sum_{v in C} sum_{t : t & C = {}} x[v, t] >= 1          for every cluster C.

:func:`violated_clusters` finds the clusters a fractional point violates: a
compiled greedy peeling of the strongly connected parts of its support (and of
its heavier arcs) first, then, when that finds none, a small sub-IP that
maximises the violation exactly (Bartlett & Cussens 2017, section 5).  Both the
branch and cut of :mod:`twlib.learn.ilp` and the LP relaxation of
:mod:`twlib.learn.relaxation` use them.
"""
from __future__ import annotations

import itertools

import numba as nb
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import TwlibError

__all__ = ["SolverMissing", "require_scip", "cluster_families", "cluster_violation",
           "violated_clusters", "packing_families", "violated_packings"]

_EPS = 1e-6          # a cut must be violated by more than this to be added
_MAX_CUTS = 20       # cluster cuts per separation round


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


def violated_packings(child, members, values, n, largest: int = 4, max_cuts: int = _MAX_CUTS):
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
    count, label = connected_components(csr_matrix(weights > threshold + _EPS), directed=True,
                                        connection="strong")
    sizes = np.bincount(label, minlength=count)
    return [label == c for c in np.flatnonzero(sizes >= 2)]


def violated_clusters(child, members, values, n, exact: bool = True, time_limit: float = 5.0,
                      max_cuts: int = _MAX_CUTS, report_proof: bool = False):
    """Clusters whose constraint the LP point violates, most violated first.

    The strong parts of the support (and of its heavier arcs) are peeled
    greedily first; the exact sub-IP runs only when that finds nothing.
    Returns ``[(violation, bool row), ...]``, at most ``max_cuts`` of them;
    with ``report_proof``, also whether an empty answer is proved (the sub-IP
    ran to its end, not to ``time_limit``; the peeling alone proves nothing).

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
        clusters, proved = _subip_clusters(child, members, values, n, time_limit)
        for violation, cluster in clusters:
            found[cluster.tobytes()] = (violation, cluster)
    out = sorted(found.values(), key=lambda item: -item[0])[:max_cuts]
    return (out, proved) if report_proof else out


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
