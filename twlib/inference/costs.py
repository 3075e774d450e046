"""What the inference methods cost, and the checks of a memory budget.

Every rate the routers (:mod:`twlib.inference.routing`) and the methods
decide by is here, measured on this project's reference machine: whether a
junction tree is tried, how large an i-bound a time limit affords, how long a
conditioned run takes, how a batch is cut.  The module imports no other
method, so each of them can read it.

>>> tables_gib(2**27, 0)
1.0
"""
from __future__ import annotations

from ..errors import InputError

__all__ = ["tables_gib", "check_memory_budget", "tree_budget_gb", "TREE_ENTRIES_PER_SECOND",
           "MAX_SUM_ENTRIES_PER_SECOND", "MAX_SUM_TYPICAL_ENTRIES_PER_SECOND",
           "FAR_OVER", "SEARCH_SHARE_OF_TREE", "SEARCH_AFTER_TREE_SECONDS",
           "SEARCH_FROM_QUERY_SECONDS", "MESSAGE_BYTES_PER_SECOND",
           "CONDITIONED_ENTRIES_PER_SECOND", "SECONDS_PER_FACTOR", "MOST_CONDITIONED_RUNS",
           "WORK_ENTRIES", "FUSED_FROM_ENTRIES", "THREADED_FROM_ENTRIES"]

# Junction-tree table entries built and calibrated per second (Grids_30: 2.1e8 in 20 s);
# a tree that would take longer than the time limit is not tried
TREE_ENTRIES_PER_SECOND = 1e7
# Clique-table entries the single MPE's max-sum pass (twlib.inference.max_sum) makes
# and maximises per second: the slowest of the UAI 2014 MAP instances and the PR
# and MAR models whose pass takes over a second (Promedas_65: 5.7e7; most 0.9-2.8e8)
MAX_SUM_ENTRIES_PER_SECOND = 5e7
# ... and the median rate over those instances (DBN and CSP models 0.8-1.5e8, linkage
# models 1.3-2.8e8): what a pass is expected to take, where the slowest rate decides
# only whether it surely fits the time left
MAX_SUM_TYPICAL_ENTRIES_PER_SECOND = 1e8
# A tree whose greedy orders need this many times the entries that fit is not
# looked at further: near the budget the sweeps and restarts shrink a tree by
# small factors (at most 32x on the 103 UAI 2014 MAP instances whose greedy
# orders lie within 1,000x of a budget; the large gains are on trees far
# over any), and each costs as much as a greedy order
FAR_OVER = 1e2
# A search either proves its query in a small fraction of the tree's time or
# thrashes for far longer than the tree; a quarter of the tree's time catches
# the first kind and caps the loss on the second at 1.25x.  So a prepared search
# gets its evidence sets for that long, and so does a single MPE's search before
# its max-sum pass
SEARCH_SHARE_OF_TREE = 0.25
# A junction tree hands its MPE queries to a prepared search once they have
# taken this long in all, of the order of what preparing the search takes
# (MPLP for half this time, then the mini-buckets: link 0.1 s, barley and
# munin 0.7 s), so that, as in renting until the rent would buy, a run of
# queries pays about twice the better choice at worst; for the same reason a
# single MPE's search builds mini-buckets before the pass only when the pass is
# expected to take this long.  A search is tried at all only where a query takes
# SEARCH_FROM_QUERY_SECONDS (for a single MPE, where the pass is expected to):
# below it the search's own overhead per query (a few milliseconds) would not pay
SEARCH_AFTER_TREE_SECONDS = 0.5
SEARCH_FROM_QUERY_SECONDS = 0.01
# Bytes of mini-bucket messages numpy computes per second (Grids_26 at i-bound 24 on the
# reference machine): what sizes the i-bound to a time limit
MESSAGE_BYTES_PER_SECOND = 2e8
# Clique-table entries a conditioned run fills per second, and its fixed cost per
# factor (slicing it and placing it in its clique), measured on the UAI MAR
# instances (ObjectDetection_13, Grids_11); they decide whether conditioning is
# expected to fit the time limit
CONDITIONED_ENTRIES_PER_SECOND = 4e7
SECONDS_PER_FACTOR = 3e-5
# The most runs a cutset may have: past it, their indices no longer fit an int64
# and not even a random sample of them can be drawn
MOST_CONDITIONED_RUNS = 2**62 - 1
# A batch is cut so that one clique table of it stays about this size
WORK_ENTRIES = 1 << 20
# From this table size (times the batch) messages are fused einsums
FUSED_FROM_ENTRIES = 1 << 14
# A batch of posteriors is shared among threads from this many clique-table
# entries in all (sets times the tree's entries): at about 2 ns an entry, the
# passes then take a few milliseconds, well above the fraction of one that
# starting a thread pool costs
THREADED_FROM_ENTRIES = 1 << 20


def tables_gib(entries, largest) -> float:
    """GiB a junction tree's tables take: every clique table (8 bytes an entry)
    plus two working copies of the largest.

    >>> tables_gib(2**27, 2**26)
    2.0
    """
    return 8 * (entries + 2 * largest) / 2**30


def tree_budget_gb(max_memory_gb: float, time_limit: float) -> float:
    """The memory a junction tree may take: the budget given, and no more
    tables than can be filled within ``time_limit``.

    >>> tree_budget_gb(4.0, 1.0) < 4.0
    True
    """
    return min(max_memory_gb, 8 * TREE_ENTRIES_PER_SECOND * time_limit / 2**30)


def check_memory_budget(max_memory_gb) -> None:
    """InputError unless ``max_memory_gb`` is positive.

    >>> check_memory_budget(0)
    Traceback (most recent call last):
    ...
    twlib.errors.InputError: max_memory_gb must be positive, got 0
    """
    if not max_memory_gb > 0:
        raise InputError(f"max_memory_gb must be positive, got {max_memory_gb!r}")
