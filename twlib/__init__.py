"""twlib: learning Bayesian networks of bounded tree-width, and exact inference with them.

The submodules and the three classes below are imported on first use, so
``python -m twlib`` and ``import twlib`` load only what a command touches.

Every function speaks one argument vocabulary (``tests/test_vocabulary.py``
walks the public callables and fails on any other name for these):

=================  ==========================================================
name               meaning
=================  ==========================================================
``time_limit``     seconds the call may take; an anytime method returns its
                   best within it plus :func:`twlib.clock.overrun_allowance`;
                   a step's own share is ``<step>_time_limit``
                   (``mplp_time_limit``, ``resample_time_limit``)
``max_memory_gb``  GiB of tables a method may build; past it an exact method
                   raises :class:`~twlib.errors.MemoryBudgetExceeded`
``progress``       show a tqdm bar (or the solver's log)
``score``          the structure score, ``"bic"`` by default in every learner:
                   it has no hyperparameter, is consistent, and is what the
                   published bounded-tree-width learners report; ``"bdeu"``
                   takes ``ess``.  The scikit-learn estimators call it
                   ``criterion``, since ``score`` is their method
``max_iter``       the most iterations (rounds, restarts, EM steps) of the
                   outer loop; an inner loop's is ``<step>_max_iter``
``tol``            the relative change below which an iteration stops
``random_state``   None, an int or a numpy ``Generator``: the seed
``executor``       where independent tasks run (:mod:`twlib.parallel`)
``knowledge``      a :class:`~twlib.knowledge.Knowledge` every learner honours
``evidence``       ``{variable: state label}``
=================  ==========================================================

Options follow the data and the model as keyword-only arguments; only what a
call is about (the evidence, the variables asked about, a family's parents, the
i-bound) may stand positionally beside them.  Inference answers with one result of each
kind, :class:`~twlib.inference.MPEResult` and :class:`~twlib.inference.Marginals`;
a gap between a value and its bound is ``log_gap`` in inference and
``gap_percent`` in a learner's result.

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
