"""twlib: learning Bayesian networks of bounded tree-width, and exact inference with them.

The submodules and the three classes below are imported on first use, so
``python -m twlib`` and ``import twlib`` load only what a command touches.

>>> import twlib
>>> ds = twlib.datasets.load_sklearn("iris")
>>> ds.n_vars
5
"""
import importlib

_MODULES = ("clock", "counting", "data", "datasets", "errors", "graphs", "inference",
            "information", "interop", "io", "learn", "metrics", "network", "parallel",
            "queries", "scores", "strength")
_CLASSES = {"Dataset": "data", "BayesianNetwork": "network",
            "BoundedTreewidthNetwork": "estimator"}

__all__ = ["Dataset", "BayesianNetwork", "BoundedTreewidthNetwork", *_MODULES]
__version__ = "0.1.0"


def __getattr__(name):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _CLASSES:
        return getattr(importlib.import_module(f"{__name__}.{_CLASSES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
