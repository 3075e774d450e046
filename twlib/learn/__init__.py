"""Structure learners.  Each returns a :class:`LearnResult`."""
from . import bounded, chow_liu, em, exact_width, greedy, ilp, ktree, order_graph, thin_jt
from .result import LearnResult

__all__ = ["LearnResult", "bounded", "chow_liu", "em", "exact_width", "greedy", "ilp", "ktree",
           "order_graph", "thin_jt"]
