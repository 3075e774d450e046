"""A scikit-learn style density estimator over the bounded-tree-width learners."""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import clock
from .clock import check_time_limit
from .data import Dataset, IncompleteDataset, as_frame, code_dtype, state_label
from .discretize import for_learning
from .errors import InputError, UnknownName
from .inference import JunctionTree
from .learn.methods import METHODS, MISSING, learn_by_name
from .network import BayesianNetwork

__all__ = ["BoundedTreewidthNetwork", "METHODS", "MISSING", "IMPUTATIONS"]

#: How :meth:`BoundedTreewidthNetwork.impute` fills a cell.
IMPUTATIONS = ("marginal", "mpe", "sample")


class BoundedTreewidthNetwork(BaseEstimator):
    """A Bayesian network of tree-width at most ``k``, learned and queried like a
    scikit-learn density estimator.

    Parameters
    ----------
    k : int
        Tree-width bound.
    method : {"auto", "bounded", "ktree", "chow_liu", "lpacjt", "order_graph", "ilp"}
        ``"auto"`` and ``"bounded"``: :func:`twlib.learn.bounded.learn`, the best
        learner of the library; ``"ktree"``: Nie et al.'s k-tree guided search
        (Chapter 6); ``"chow_liu"``: the Chow-Liu tree (needs ``k=1``);
        ``"lpacjt"``: Chechetka & Guestrin's thin junction tree of width k
        (Chapter 7, at most 62 variables; its network has the tree's
        distribution); ``"order_graph"``: the exact optimum with at most ``k``
        parents per variable (Chapter 3, about 25 variables at most) -- the one
        method whose tree-width is measured (``width_``), not bounded;
        ``"ilp"``: the optimum of tree-width ``<= k`` by integer programming
        (Chapter 10; proved when ``result_.status == "optimal"``, else the best
        network found in ``time_limit`` with its gap; tens of variables).
    criterion : {"bic", "bdeu", "ll"}
        The structure score the learner maximises (its ``score=``; the name
        ``score`` is taken by :meth:`score`, as in scikit-learn).
    ess : float
        BDeu equivalent sample size of the structure score.
    parameter_ess : float or None
        BDeu prior of the CPTs (None: maximum likelihood) for ``"bounded"``, and
        the pseudo-count of ``"lpacjt"``'s marginals; the others keep their own
        estimators.
    time_limit : float
        Seconds for the search.
    max_iter : int, optional
        Hill-climbing runs of ``"bounded"`` (of each round's search under
        structural EM); None: as many as ``time_limit`` allows.  A run that
        stops on ``max_iter`` before the time limit is reproducible.
    random_state : int, optional
    progress : bool
        A progress bar while learning (``"bounded"``, ``"ktree"``, ``"lpacjt"``).
    discretize : {"auto", "quantile", "uniform", "kmeans", "mdlp"} or None
        How numeric columns (:func:`twlib.discretize.column_kinds`: floats and
        integers with more than ten values) are cut into intervals before
        learning (:class:`twlib.discretize.Discretizer`, kept as
        ``discretizer_``): ``"auto"`` is ``"quantile"``; ``"mdlp"`` cuts for a
        class passed as ``fit(X, y)``; None refuses a numeric column by name.
        The queries below take raw rows and cut them the same way; their
        likelihoods are then of the intervals (a probability, not a density).
    n_bins : int or "auto"
        Intervals per numeric column for the unsupervised methods; ``"auto"``
        is ``log2(rows) / 2`` rounded, between 2 and 5 (4 for 178 rows).
    missing : {"em", "error"}
        Data with missing cells (NaN / None) are learned from by structural EM
        under the bound (:func:`twlib.learn.em.structural_em`, methods
        ``"auto"`` and ``"bounded"``); ``"error"`` refuses them.  Complete data
        take the complete-data learner either way.
    knowledge : :class:`twlib.knowledge.Knowledge`, optional
        Required and forbidden arcs, tiers, roots, leaves, in-degree caps,
        honoured by methods ``"auto"``, ``"bounded"`` (structural EM too),
        ``"chow_liu"``, ``"order_graph"`` and ``"ilp"``; the others refuse it.

    Attributes (after :meth:`fit`)
    ------------------------------
    network_ : BayesianNetwork
    score_, width_, elimination_order_ : the structure score, the certified width
        and its elimination order.
    result_ : LearnResult
    feature_names_in_ : list of the variables.
    discretizer_ : the fitted :class:`~twlib.discretize.Discretizer`, or None when no
        column was numeric.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> b = a ^ (rng.random(400) < 0.1)                       # a copy of a, 10 % flipped
    >>> frame = pd.DataFrame({"a": a, "b": b, "c": rng.integers(0, 2, 400)})
    >>> model = BoundedTreewidthNetwork(k=1, time_limit=5, random_state=0).fit(frame)
    >>> model.width_ <= 1, float((model.predict(frame, target="b") == frame.a.astype(str)).mean())
    (True, 1.0)
    """

    def __init__(self, *, k: int = 3, method: str = "auto", criterion: str = "bic",
                 ess: float = 1.0, parameter_ess: float | None = 1.0, time_limit: float = 60.0,
                 max_iter: int | None = None, random_state=None, progress: bool = False,
                 discretize: str | None = "auto", n_bins: int | str = "auto",
                 missing: str = "em", knowledge=None):
        self.k = k
        self.method = method
        self.criterion = criterion
        self.ess = ess
        self.parameter_ess = parameter_ess
        self.time_limit = time_limit
        self.max_iter = max_iter
        self.random_state = random_state
        self.progress = progress
        self.discretize = discretize
        self.n_bins = n_bins
        self.missing = missing
        self.knowledge = knowledge

    # ---------------------------------------------------------------- learning
    def fit(self, X, y=None, *, executor=None):
        """Learn from a DataFrame, a 2-D array, a CSV path or a Dataset; ``y`` guides
        ``discretize="mdlp"`` and is otherwise ignored.

        ``executor`` (a ``concurrent.futures`` executor or a Dask client, see
        :mod:`twlib.parallel`) runs the bounded learner's parallel parts; it is
        where to compute, not a model setting, hence a fit argument.  Ctrl-C ends the
        search and fits the best network found so far (``result_.status ==
        "interrupted"``)."""
        check_time_limit(self.time_limit)
        started = clock.now()
        X = self._discretized(X, y)
        res, data = learn_by_name(       # cutting the numeric columns counts against the limit
            X, self.k, method=self.method, score=self.criterion, ess=self.ess,
            parameter_ess=self.parameter_ess,
            time_limit=clock.remaining(self.time_limit, started),
            max_iter=self.max_iter, random_state=self.random_state, progress=self.progress,
            missing=self.missing, executor=executor, knowledge=self.knowledge)
        self.result_ = res
        self._tree = None
        self.network_: BayesianNetwork = res.network
        self.score_ = res.score
        self.width_ = res.width
        self.elimination_order_ = res.elimination_order
        self.feature_names_in_ = list(data.names)
        self.n_features_in_ = data.n_vars
        self._states = {name: list(st) for name, st in zip(data.names, data.states)}
        return self

    def _discretized(self, X, y):
        """``X`` with its numeric columns cut by a fitted ``discretizer_`` (None when
        there are none, or X is a Dataset, which is coded already)."""
        self.discretizer_ = None
        if isinstance(X, (Dataset, IncompleteDataset)):
            return X
        frame, self.discretizer_ = for_learning(as_frame(X), discretize=self.discretize,
                                                n_bins=self.n_bins, y=y)
        return frame

    # ---------------------------------------------------------------- queries
    def _encode(self, X, need_all: bool = True, allow_missing: bool = False):
        """Rows of X coded with the training states (a Dataset is taken as coded);
        with ``allow_missing``, an :class:`IncompleteDataset` when a cell is missing."""
        check_is_fitted(self, "network_")
        if isinstance(X, (Dataset, IncompleteDataset)):
            if isinstance(X, IncompleteDataset) and not allow_missing:
                raise InputError("these rows have missing cells")
            return X
        if isinstance(X, np.ndarray):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise InputError(f"expected a 2-D array with {self.n_features_in_} columns, "
                                 f"got shape {X.shape}")
            X = pd.DataFrame(X, columns=self.feature_names_in_)
        if not isinstance(X, pd.DataFrame):
            X = as_frame(X)
        if getattr(self, "discretizer_", None) is not None:
            X = X.rename(columns=str)
            cut = [c for c in self.discretizer_.cuts_ if c in X.columns]
            if cut:
                X = X.assign(**self.discretizer_.transform(
                    X.reindex(columns=self.discretizer_.feature_names_in_))[cut])
        names = [c for c in self.feature_names_in_ if c in X.columns]
        missing = [c for c in self.feature_names_in_ if c not in X.columns]
        if missing and need_all:
            raise InputError(f"data lack the model's variables {missing}")
        repeated = sorted({c for c in X.columns if list(X.columns).count(c) > 1})
        if repeated:
            raise InputError(f"column names must be unique; repeated: {repeated}")
        codes = np.empty((len(X), len(names)), dtype=np.int64)
        for j, name in enumerate(names):
            column = X[name]
            holes = column.isna().to_numpy()
            if holes.any() and not allow_missing:
                raise InputError(f"column {name!r} has missing values")
            index = {s: i for i, s in enumerate(self._states[name])}
            labels = column[~holes].map(state_label)
            unknown = sorted(set(labels) - set(index))
            if unknown:
                raise InputError(f"column {name!r} has values never seen in training: "
                                 f"{unknown[:5]}")
            codes[~holes, j] = labels.map(index).to_numpy()
            codes[holes, j] = -1
        states = [self._states[c] for c in names]
        if (codes < 0).any():
            return IncompleteDataset(codes, names, states)
        width = code_dtype(max((len(st) for st in states), default=2))
        return Dataset(codes.astype(width), names, states)

    def score_samples(self, X) -> np.ndarray:
        """Natural-log likelihood of each row; a row's missing cells (NaN / None)
        are summed out exactly, so it scores ``log P(its observed cells)``."""
        data = self._encode(X, allow_missing=True)
        if isinstance(data, Dataset):
            return self.network_.log_likelihood(data, per_row=True)
        rows = data.values[:, data.indices(self.network_.variables)]
        return self.junction_tree().log_probabilities_of_evidence(rows)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood per row."""
        return float(np.mean(self.score_samples(X)))

    def sample(self, n_samples: int = 1, *, random_state=None) -> pd.DataFrame:
        """Rows drawn from the network, with the training state labels."""
        check_is_fitted(self, "network_")
        return self.network_.sample(n_samples, random_state=random_state).to_pandas()

    def junction_tree(self) -> JunctionTree:
        """A junction tree of the learned network along its certificate order
        (built on first use and kept until the next :meth:`fit`)."""
        check_is_fitted(self, "network_")
        if self._tree is None:
            self._tree = JunctionTree(self.network_, order=self.elimination_order_)
        return self._tree

    def predict_proba(self, X, target) -> np.ndarray:
        """``P(target | the other columns of each row)``, one row per row of X, columns in
        the order of the target's states (:meth:`classes`), in one batched pass;
        missing cells (NaN / None) are summed out."""
        check_is_fitted(self, "network_")
        if target not in self.feature_names_in_:
            raise UnknownName(f"unknown target {target!r}; variables: {self.feature_names_in_}")
        if isinstance(X, pd.DataFrame):
            X = X.drop(columns=[target], errors="ignore")
        data = self._encode(X, need_all=False, allow_missing=True)
        columns = [(j, v) for j, v in enumerate(data.names) if v != target]
        evidence = [{v: int(row[j]) for j, v in columns if row[j] >= 0} for row in data.values]
        if not evidence:
            return np.empty((0, len(self._states[target])))
        posts, _ = self.junction_tree().posteriors_batch(evidence, variables=[target])
        return posts[target]

    def classes(self, target) -> list:
        """The state labels of ``target``, in the order of :meth:`predict_proba`'s columns."""
        check_is_fitted(self, "network_")
        return list(self._states[target])

    def predict(self, X, target) -> np.ndarray:
        """The most probable state of ``target`` given the other columns, per row."""
        proba = self.predict_proba(X, target)
        return np.asarray(self._states[target], dtype=object)[proba.argmax(axis=1)]

    def impute(self, X, *, method: str = "marginal", random_state=None) -> pd.DataFrame:
        """X with every missing cell (NaN / None) filled, given the row's observed
        cells: ``"marginal"`` takes each cell's most probable state, ``"mpe"`` the
        row's most probable joint completion, ``"sample"`` a joint draw from the
        posterior (seeded by ``random_state``).  The model's columns come back
        as state labels, other columns as they are.

        >>> rng = np.random.default_rng(0)
        >>> a = rng.integers(0, 2, 400)
        >>> frame = pd.DataFrame({"a": a, "b": a ^ (rng.random(400) < 0.1)})
        >>> model = BoundedTreewidthNetwork(k=1, time_limit=5, random_state=0).fit(frame)
        >>> model.impute(pd.DataFrame({"a": [1, None], "b": [None, 0]})).values.tolist()
        [['1', '1'], ['0', '0']]
        """
        if method not in IMPUTATIONS:
            raise InputError(f"method must be one of {IMPUTATIONS}, got {method!r}")
        data = self._encode(X, allow_missing=True)
        frame = X.copy() if isinstance(X, pd.DataFrame) else data.to_pandas()
        names = self.network_.variables
        rows = data.values[:, data.indices(names)].astype(np.int64)
        tree = self.junction_tree()
        if isinstance(data, Dataset):
            filled = rows
        elif method == "sample":
            filled = tree.sample_missing(rows, random_state=random_state)
        else:
            filled = rows.copy()
            todo = np.flatnonzero((rows < 0).any(axis=1))
            evidence = [{v: int(rows[i, j]) for j, v in enumerate(names) if rows[i, j] >= 0}
                        for i in todo]
            if method == "mpe":
                filled[todo] = tree.mpe_batch(evidence).states
            else:
                asked = [v for j, v in enumerate(names) if (rows[todo, j] < 0).any()]
                posts, _ = tree.posteriors_batch(evidence, variables=asked)
                for v in asked:
                    j = names.index(v)
                    holes = rows[todo, j] < 0
                    filled[todo[holes], j] = posts[v][holes].argmax(axis=1)
        for j, v in enumerate(names):
            frame[v] = np.asarray(self._states[v], dtype=object)[filled[:, j]]
        return frame

