"""Building blocks of LPACJT, thin junction trees with PAC guarantees
(Chechetka & Guestrin 2007).

* :class:`InformationOracle` answers ``I(A; B | S)`` from data for the small sets
  the method asks about, caching every joint entropy it computes;
* :func:`queyranne` minimises a symmetric submodular set function with
  ``O(n^3)`` evaluations (Queyranne 1998);
* :func:`ltci` (the paper's Algorithm 2) partitions the variables outside a
  separator ``S`` into groups that ``S`` cannot separate: it merges the groups of
  every small set ``A`` whose weakest split ``min_X I(X; A - X | S)`` exceeds a
  threshold;
* :func:`find_consistent_tree` (Algorithm 4, FindConsistentTreeDPGreedy) assembles
  a junction tree of width k from such components by dynamic programming with
  greedy decomposition checks;
* :class:`ThinJunctionTree` holds the result with the projection of the empirical
  distribution on it (the paper's eq. 1), its test log-likelihood, and a
  conversion to a factor model the inference module can query;
* :func:`learn` is LPACJT: the threshold is raised lazily (section 5) until a tree
  is found, testing hyper-edges only where they can change a component.

The package's modules follow those steps: ``oracle``, ``queyranne``, ``ltci``,
``consistent`` (Algorithm 4), ``model`` and ``search``; ``masks`` holds the bit-mask
and union-find pieces they share.
"""
from .consistent import find_consistent_tree
from .ltci import ltci
from .model import ThinJunctionTree
from .oracle import InformationOracle
from .queyranne import queyranne
from .search import learn

__all__ = ["InformationOracle", "queyranne", "ltci", "find_consistent_tree",
           "ThinJunctionTree", "learn"]
