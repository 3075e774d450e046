"""Structure learners.  Each returns a :class:`LearnResult`.

The learners are imported on first use (``twlib.learn.bounded`` or ``from
twlib.learn import ilp`` both work), so a command that needs one learner does
not pay for loading the others and their solvers.  ``methods`` calls any of
them by name; ``bootstrap`` (in ``resampling``) counts each arc's support over
bootstrap resamples.
"""
import importlib

from .result import LearnResult

_MODULES = ("bounded", "chow_liu", "em", "exact_width", "greedy", "ilp", "ktree", "methods",
            "order_graph", "resampling", "thin_jt")
_FUNCTIONS = {"bootstrap": "resampling"}

__all__ = ["LearnResult", "bootstrap", *_MODULES]


def __getattr__(name):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _FUNCTIONS:
        return getattr(importlib.import_module(f"{__name__}.{_FUNCTIONS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
