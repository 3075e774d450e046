"""Structure learners.  Each returns a :class:`LearnResult`."""
from . import chow_liu, greedy, ktree, order_graph, thin_jt
from .result import LearnResult

__all__ = ["LearnResult", "chow_liu", "greedy", "ktree", "order_graph", "thin_jt"]
