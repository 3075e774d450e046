"""twlib: learning Bayesian networks of bounded tree-width, and exact inference with them.

>>> import twlib
>>> ds = twlib.datasets.load_sklearn("iris")
>>> ds.n_vars
5
"""
from . import (counting, data, datasets, errors, graphs, inference, information, interop, io,
               learn, metrics, network, parallel, queries, scores, strength)
from .data import Dataset
from .estimator import BoundedTreewidthNetwork
from .network import BayesianNetwork

__all__ = ["Dataset", "BayesianNetwork", "BoundedTreewidthNetwork", "counting", "data", "datasets",
           "errors", "graphs", "inference", "information", "interop", "io", "learn", "metrics",
           "network", "parallel", "queries", "scores", "strength"]
__version__ = "0.1.0"
