"""The library's bounded-tree-width learner: hill climbing that never leaves the bound.

:func:`learn` searches directed acyclic graphs by single-arc moves -- add,
remove, reverse -- and accepts a move only when the moral graph of the new DAG
still has an elimination order of width at most ``k``.  This is the move set of
elimination-tree hill climbing (hc-ET, Benjumeda, Bielza & Larrañaga 2019).
Where hc-ET maintains an elimination tree, the check here is two-staged:

1. the moral graph is eliminated along the *current* certificate order, which
   costs ``O(n k w)`` word operations with ``w = ceil(n / 64)`` bitset words;
2. only if that order is too wide is a new order tried: the certificate's
   prefix up to the first vertex the move touches (those vertices meet the same
   neighbours as before, so their cliques are unchanged), then min-fill on the
   rest; when it fits, it becomes the new certificate.

Both stages are sufficient conditions (a returned width is always a true
width of the returned order), so the result is certified exactly as hc-ET's.
The search is anytime: once hill climbing stops it is restarted from the best
network with a random share of its arcs removed (iterated local search), until
``time_limit``.  For up to :data:`DP_MAX_VARS` variables the order-graph dynamic
programme first gives the optimum over in-degree ``<= k``; if its tree-width is
at most ``k`` it is returned as optimal, else its score is the upper bound and
its arcs, pruned to the bound, are a start.

The package's modules follow the steps of a run: ``starts`` (where the climb
begins: the exact optimum, a user's network, k-greedy or k-MAX), ``state`` (the
search state and its climb, on the kernels of ``width``), ``windows`` (local
exact re-optimisation), ``search`` (iterated local search, its restarts and the
race of starts), ``bounds`` (the proved upper bound) and ``driver``
(:func:`learn`, which runs them in that order).  Background knowledge
(:class:`twlib.knowledge.Knowledge`) enters as a move filter in ``state``, a
family filter in ``starts`` and ``windows``, and a check of the result in
``driver``; the run's clock is :mod:`twlib.clock` (search time, Ctrl-C).
"""
from .bounds import upper_bound
from .driver import INITIALS, first_incumbent, learn
from .starts import DP_MAX_VARS

__all__ = ["learn", "first_incumbent", "DP_MAX_VARS", "INITIALS", "upper_bound"]
