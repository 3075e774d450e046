"""Structure learners.  Each returns a :class:`LearnResult`.

The learners are imported on first use (``twlib.learn.bounded`` or ``from
twlib.learn import ilp`` both work), so a command that needs one learner does
not pay for loading the others and their solvers.  ``methods`` calls any of
them by name; ``bootstrap`` (in ``resampling``) counts each arc's support over
bootstrap resamples.
"""
from ..lazy import on_first_use
from .result import LearnResult

_MODULES = ("bounded", "chow_liu", "em", "exact_width", "greedy", "ilp", "ktree", "methods",
            "order_graph", "resampling", "thin_jt")

__all__ = ["LearnResult", "bootstrap", *_MODULES]
__getattr__, __dir__ = on_first_use(__name__, _MODULES, {"bootstrap": "resampling"})
