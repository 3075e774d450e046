"""twlib: learning Bayesian networks of bounded tree-width, and exact inference with them.

The submodules and the three classes below are imported on first use, so
``python -m twlib`` and ``import twlib`` load only what a command touches.

>>> import twlib
>>> ds = twlib.datasets.load_sklearn("iris")
>>> ds.n_vars
5
"""
from .lazy import on_first_use

_MODULES = ("classify", "clock", "counting", "data", "datasets", "discretize", "drawing",
            "errors", "graphs", "inference", "information", "interop", "io", "knowledge",
            "learn", "metrics", "network", "parallel", "queries", "scores", "strength")
_CLASSES = {"Dataset": "data", "BayesianNetwork": "network",
            "BoundedTreewidthNetwork": "estimator"}

__all__ = ["Dataset", "BayesianNetwork", "BoundedTreewidthNetwork", *_MODULES]
__version__ = "0.1.0"
__getattr__, __dir__ = on_first_use(__name__, _MODULES, _CLASSES)
