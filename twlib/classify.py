"""Bayesian network classifiers, in scikit-learn's hands.

A network over the features and the class answers ``P(class | features)``
exactly.  Only the class's Markov blanket matters for that answer (its
parents, its children and their other parents), so a classifier's structure
is learned for the class: the four structures here differ in how many
feature-to-feature arcs they allow, and so in their tree-width.

* ``"naive_bayes"``: the class is the only parent of every feature (width 1).
* ``"tan"``: tree-augmented naive Bayes (Friedman, Geiger & Goldszmidt 1997):
  the features form the maximum spanning tree of their mutual information
  given the class (Chow-Liu, conditioned on the class), each feature's tree
  parent beside the class: tree-width 2.
* ``"kdb"``: the k-dependence classifier KDB(k) (Sahami 1996): features in
  order of their mutual information with the class, each taking the class and
  up to ``k`` earlier features of highest mutual information with it given the
  class, when it pays BIC's penalty for the parameters it adds (Sahami's
  threshold theta, chosen by the data).  KDB(1) has tree-width 2 like TAN, but for ``k >= 2`` the width is
  not bounded by ``k + 1``: the parents are any earlier features, and marrying
  them can close wide cycles (wine's KDB(2) has width 4 by min-fill).
* ``"auto"``: the one of naive Bayes, TAN and KDB(2) (with and without the BIC
  threshold) with the best leave-one-out accuracy on the training rows, each
  learned once and each row's counts taken out of its CPTs in closed form
  (Martinez et al. 2016).  No one structure is best on every
  table: a score of the joint distribution such as BIC keeps only
  naive Bayes on car, whose class TAN predicts far better.
* ``"bounded"``: the library's bounded-tree-width learner
  (:func:`twlib.learn.bounded.learn`) over features and class with width
  ``<= k``: with ``class_parent=True`` the class is a root and a parent of
  every feature (background knowledge), else the structure is free.

Numeric columns are cut first (:class:`twlib.discretize.Discretizer`; MDLP by
default, which cuts for the class), and the cuts are kept for the rows to
predict.  The CPTs are posterior means under a Laplace prior (one pseudo-count
per cell, ``alpha``; Friedman et al. 1997 smooth TAN's CPTs for the same
reason: a family of the class and a feature or two has many parent
configurations seen a few times each); with missing feature cells in the
training rows they are fitted by EM (:func:`twlib.learn.em.fit_parameters`),
and a row's missing cells are summed out when it is classified.  Rows with
every feature observed are classified from the class's Markov blanket
directly; the others by one batched pass of the junction tree.  Both are exact.
"""
from __future__ import annotations

import networkx as nx
import numba as nb
import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .data import Dataset, IncompleteDataset, as_frame
from .discretize import METHODS as DISCRETIZERS
from .discretize import Discretizer
from .errors import InputError
from .knowledge import Knowledge
from .network import BayesianNetwork

__all__ = ["BoundedTreewidthClassifier", "STRUCTURES", "class_mutual_information"]

STRUCTURES = ("auto", "naive_bayes", "tan", "kdb", "bounded")
#: What ``structure="auto"`` chooses among, simplest first (a tie keeps the simpler).
CANDIDATES = ({"structure": "naive_bayes"}, {"structure": "tan"},
              {"structure": "kdb", "k": 2, "theta": "bic"}, {"structure": "kdb", "k": 2})


def _mi(joint: np.ndarray) -> float:
    """Mutual information (nats) of the first axis with the rest, from counts
    summed over a last conditioning axis: ``I(A; B | C)`` for ``joint[a, b, c]``."""
    n = joint.sum()
    if n == 0:
        return 0.0
    p = joint / n
    pc = p.sum(axis=(0, 1), keepdims=True)
    pac = p.sum(axis=1, keepdims=True)
    pbc = p.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p * pc / (pac * pbc)), 0.0)
    return float(terms.sum())


def class_mutual_information(codes: np.ndarray, arities, cls: int):
    """``I(X_i; C)`` per feature and ``I(X_i; X_j | C)`` per pair, in nats, each from
    the rows where its variables are observed (codes ``-1`` are missing).

    Returns ``(with_class, given_class)``: a vector over the columns (0 at ``cls``)
    and a symmetric matrix (0 on the diagonal and in ``cls``'s row and column).

    >>> codes = np.array([[0, 0, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0]] * 5)
    >>> with_class, given = class_mutual_information(codes, [2, 2, 2], cls=2)
    >>> float(round(given[0, 1], 3)), float(round(with_class[0], 3))
    (0.693, 0.0)
    """
    n_vars = codes.shape[1]
    arities = np.asarray(arities)
    features = [v for v in range(n_vars) if v != cls]
    r_c = int(arities[cls])
    with_class = np.zeros(n_vars)
    given = np.zeros((n_vars, n_vars))
    for i, a in enumerate(features):
        seen = (codes[:, a] >= 0) & (codes[:, cls] >= 0)
        joint = np.bincount(codes[seen, a] * r_c + codes[seen, cls], minlength=arities[a] * r_c)
        with_class[a] = _mi(joint.reshape(arities[a], r_c, 1))      # a single condition
        for b in features[i + 1:]:
            seen_ab = seen & (codes[:, b] >= 0)
            keys = (codes[seen_ab, a] * arities[b] + codes[seen_ab, b]) * r_c + codes[seen_ab, cls]
            joint = np.bincount(keys, minlength=arities[a] * arities[b] * r_c)
            given[a, b] = given[b, a] = _mi(joint.reshape(arities[a], arities[b], r_c))
    return with_class, given


def naive_bayes_parents(names, cls) -> dict:
    """The class as the only parent of every feature."""
    return {v: ([] if v == cls else [cls]) for v in names}


def tan_parents(names, cls, given_class: np.ndarray) -> dict:
    """Tree-augmented naive Bayes: the maximum spanning tree of ``I(X_i; X_j | C)``,
    directed away from the first feature, plus the class as a parent of each."""
    index = {v: i for i, v in enumerate(names)}
    features = [v for v in names if v != cls]
    graph = nx.Graph()
    graph.add_nodes_from(features)
    graph.add_weighted_edges_from((a, b, given_class[index[a], index[b]])
                                  for i, a in enumerate(features) for b in features[i + 1:])
    tree = nx.maximum_spanning_tree(graph)
    parents = naive_bayes_parents(names, cls)
    for parent, child in nx.bfs_edges(tree, features[0]):
        parents[child].append(parent)
    return parents


def kdb_parents(names, cls, k: int, with_class: np.ndarray, given_class: np.ndarray,
                threshold: np.ndarray | None = None) -> dict:
    """Sahami's KDB(k): features by decreasing ``I(X; C)``, each with the class and the
    ``k`` earlier features of highest ``I(X_i; X_j | C)`` above ``threshold[i, j]``
    (Sahami's theta; zero when None)."""
    index = {v: i for i, v in enumerate(names)}
    order = sorted((v for v in names if v != cls), key=lambda v: -with_class[index[v]])
    parents = naive_bayes_parents(names, cls)
    floor = np.zeros_like(given_class) if threshold is None else threshold
    for pos, v in enumerate(order):
        i = index[v]
        earlier = sorted(order[:pos], key=lambda u: -given_class[i, index[u]])
        parents[v] += [u for u in earlier[:k] if given_class[i, index[u]] > floor[i, index[u]]]
    return parents


def bic_threshold(arities, cls: int, n_rows: int) -> np.ndarray:
    """Per pair of features, the conditional mutual information (nats) an arc between
    them must carry to pay BIC's penalty for its parameters in the class's context:
    ``log(N) / (2 N) (r_i - 1)(r_j - 1) r_C``."""
    r = np.asarray(arities, dtype=float)
    return np.log(n_rows) / (2 * n_rows) * np.outer(r - 1, r - 1) * r[cls]


class BoundedTreewidthClassifier(ClassifierMixin, BaseEstimator):
    """A Bayesian network classifier (see the module): naive Bayes, TAN, KDB(k) or a
    network of tree-width ``<= k`` learned for the class.

    Parameters
    ----------
    structure : {"auto", "naive_bayes", "tan", "kdb", "bounded"}
    k : int
        For ``"kdb"`` the feature parents per feature; for ``"bounded"`` the
        tree-width bound over features and class; unused by ``"naive_bayes"``
        and ``"tan"``.
    theta : float or "bic"
        ``"kdb"`` only: the conditional mutual information (nats) a feature
        parent must carry (Sahami's threshold), or ``"bic"``: enough to pay
        BIC's penalty for the parameters it adds.
    class_parent : bool
        ``"bounded"`` only: the class is a root and a parent of every feature.
    discretize : {"mdlp", "quantile", "uniform", "kmeans"}
        How numeric columns are cut (:class:`~twlib.discretize.Discretizer`).
    n_bins : int
        Bins for the unsupervised methods.
    criterion : {"bic", "bdeu"}
        The structure score of ``"bounded"`` (``score`` is scikit-learn's
        accuracy method, as in :class:`~twlib.BoundedTreewidthNetwork`).
    alpha : float or None
        The pseudo-count added to every CPT cell (Laplace smoothing, as
        ``CategoricalNB``'s ``alpha``): each parent configuration is smoothed
        alike, which a classifier's sparse families of the class and a feature
        need.  None takes the BDeu prior of ``parameter_ess`` instead.
    parameter_ess : float
        The BDeu equivalent sample size of the CPTs' prior when ``alpha`` is None.
    time_limit : float
        Seconds for the ``"bounded"`` search.
    max_iter : int, optional
        Hill-climbing runs of the ``"bounded"`` search; a run that stops on
        ``max_iter`` before the time limit is reproducible.
    random_state, progress :
        As for :func:`twlib.learn.bounded.learn`.

    Attributes (after :meth:`fit`)
    ------------------------------
    classes_, network_, discretizer_, features_ (the columns the network uses: a
    column with one state carries no information and is left out), class_name_,
    width_ (a tree-width upper bound of the network), structure_ (the one fitted:
    ``"auto"``'s choice, such as ``"kdb2-bic"``), selection_ (``"auto"``: each
    candidate's leave-one-out accuracy on the training rows; else None) and n_iter_
    (``"bounded"``: the search's hill-climbing runs, or structural EM's rounds with
    missing cells; 1 for the structures found in one pass).

    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> clf = BoundedTreewidthClassifier(structure="tan").fit(X, y)
    >>> clf.predict_proba(X.head(2)).shape, round(clf.score(X, y), 2) > 0.9
    ((2, 3), True)
    """

    def __init__(self, *, structure: str = "auto", k: int = 2, theta: float | str = 0.0,
                 class_parent: bool = True,
                 discretize: str = "mdlp", n_bins: int = 5, criterion: str = "bic",
                 alpha: float | None = 1.0, parameter_ess: float = 1.0,
                 time_limit: float = 10.0,
                 max_iter: int | None = None, random_state=None, progress: bool = False):
        self.structure = structure
        self.k = k
        self.theta = theta
        self.class_parent = class_parent
        self.discretize = discretize
        self.n_bins = n_bins
        self.criterion = criterion
        self.alpha = alpha
        self.parameter_ess = parameter_ess
        self.time_limit = time_limit
        self.max_iter = max_iter
        self.random_state = random_state
        self.progress = progress

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True            # a missing cell is summed out
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    # ------------------------------------------------------------------ fit
    def _check_parameters(self):
        if self.structure not in STRUCTURES:
            raise InputError(f"structure must be one of {STRUCTURES}, got {self.structure!r}")
        if self.discretize not in DISCRETIZERS:
            raise InputError(f"discretize must be one of {DISCRETIZERS}, got {self.discretize!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise InputError(f"k must be an integer >= 1, got {self.k!r}")
        if self.theta != "bic" and not (isinstance(self.theta, (int, float))
                                        and self.theta >= 0):
            raise InputError(f"theta must be a number >= 0 or 'bic', got {self.theta!r}")
        if not (isinstance(self.parameter_ess, (int, float)) and self.parameter_ess > 0):
            raise InputError(f"parameter_ess must be a positive number, got "
                             f"{self.parameter_ess!r}")
        if self.alpha is not None and not (isinstance(self.alpha, (int, float))
                                           and not isinstance(self.alpha, bool)
                                           and self.alpha > 0):
            raise InputError(f"alpha must be a positive number or None, got {self.alpha!r}")

    def fit(self, X, y):
        """Learn the structure and the CPTs from features ``X`` (a DataFrame or a 2-D
        array; numeric, categorical or mixed; NaN for missing) and classes ``y``.
        Rows whose class is missing are left out."""
        self._check_parameters()
        if y is None:
            raise InputError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None")
        frame = as_frame(X)
        if frame.shape[1] == 0:
            raise InputError(f"0 feature(s) (shape={frame.shape}) while a minimum of 1 is "
                             "required.")
        y = _labels(y, len(frame))
        known = ~pd.isna(y)
        if not known.any():
            raise InputError("every class label is missing")
        frame = frame.loc[known].reset_index(drop=True)
        y = y[known]
        if y.dtype == object:            # after the missing labels are gone: ints, text, ...
            y = np.array(y.tolist())
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise InputError(f"the training rows hold one class only ({self.classes_[0]!r}): "
                             "a classifier needs two or more")
        self.structure_, self.selection_, self._chosen = self.structure, None, {}
        data, complete = self._prepare(frame, y)
        cache = self._select(data, y) if self.structure == "auto" else {}
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        self._fit_network(data, complete, cache)
        return self

    def _prepare(self, frame, y):
        """Cut the features, keep those with two states or more, add the class: the data
        the network is learned from, and whether it is complete."""
        self.n_features_in_ = frame.shape[1]
        self.discretizer_ = Discretizer(method=self.discretize, n_bins=self.n_bins).fit(frame, y)
        cut = self.discretizer_.transform(frame)
        self.features_ = [c for c in cut.columns
                          if len(self.discretizer_.states_[c]) > 1 and cut[c].notna().any()]
        if not self.features_:
            raise InputError("no feature takes two values or more in the training rows")
        self.class_name_ = _free_name(self.features_)
        cut = cut[self.features_].assign(**{self.class_name_: pd.Categorical.from_codes(
            np.searchsorted(self.classes_, y), categories=[str(c) for c in self.classes_])})
        complete = not cut.isna().to_numpy().any()
        data = Dataset.from_pandas(cut) if complete else IncompleteDataset.from_pandas(cut)
        return data, complete

    def _fit_network(self, data, complete, cache: dict):
        """The structure (its mutual informations kept in ``cache`` for the next
        candidate on the same data) and the CPTs."""
        from .graphs import moral_graph, treewidth_upper_bound

        self.n_iter_ = 1                 # the closed-form structures take one pass
        parents = self._structure(data, cache)
        self.network_ = self._parameters(data, parents, complete)
        moral = moral_graph(self.network_.parent_map())
        moral.add_nodes_from(self.network_.variables)
        self.width_ = treewidth_upper_bound(moral)[0]
        self._tree = None

    def _select(self, data, y):
        """``structure="auto"``: the candidate of most leave-one-out hits on the
        training rows (:func:`leave_one_out_hits`), each learned once on them."""
        codes = data.values.astype(np.int64)
        truth = codes[:, data.names.index(self.class_name_)]
        cache, hits = {}, []
        for options in CANDIDATES:
            self._chosen, self.structure_ = options, _describe(options)
            parents = self._structure(data, cache)
            hits.append(leave_one_out_hits(codes, data.arities, data.names, parents,
                                           self.class_name_, self._pseudo_counts(data, parents)))
        self.selection_ = {_describe(o): h / len(truth) for o, h in zip(CANDIDATES, hits)}
        best = int(np.argmax(hits))                                 # first of equals
        self._chosen, self.structure_ = dict(CANDIDATES[best]), _describe(CANDIDATES[best])
        return cache

    def _pseudo_counts(self, data, parents) -> dict:
        """Each family's prior count per CPT cell: ``alpha``, or BDeu's ``ess / (q r)``."""
        if self.alpha is not None:
            return {v: float(self.alpha) for v in data.names}
        arity = dict(zip(data.names, data.arities))
        return {v: self.parameter_ess / (arity[v] * np.prod([arity[p] for p in ps]))
                for v, ps in parents.items()}

    def _setting(self, name):
        """A parameter as this fit uses it: the chosen candidate's under "auto"."""
        chosen = self._chosen if self.structure == "auto" else {}
        return chosen.get(name, getattr(self, name))

    def _structure(self, data, cache: dict) -> dict:
        names, cls = list(data.names), self.class_name_
        structure = self._setting("structure")
        if structure == "naive_bayes":
            return naive_bayes_parents(names, cls)
        if structure == "bounded":
            return self._bounded(data)
        if "mi" not in cache:
            cache["mi"] = class_mutual_information(data.values.astype(np.int64), data.arities,
                                                   names.index(cls))
        with_class, given = cache["mi"]
        if structure == "tan":
            return tan_parents(names, cls, given)
        theta = self._setting("theta")
        threshold = (bic_threshold(data.arities, names.index(cls), data.n_rows)
                     if theta == "bic" else np.full_like(given, float(theta)))
        return kdb_parents(names, cls, self._setting("k"), with_class, given, threshold)

    def _bounded(self, data) -> dict:
        from .learn import bounded, em

        cls = self.class_name_
        know = None
        if self.class_parent:
            know = Knowledge(required=[(cls, v) for v in data.names if v != cls],
                             no_parents=[cls])
        options = dict(time_limit=self.time_limit, random_state=self.random_state,
                       progress=self.progress, knowledge=know)
        k = min(self._setting("k"), data.n_vars - 1)     # a bound over the variables there are
        if isinstance(data, IncompleteDataset):
            res = em.structural_em(data, k, search_max_iter=self.max_iter, **options)
            self.n_iter_ = max(1, res.stats["rounds"])
        else:
            res = bounded.learn(data, k, score=self.criterion, max_iter=self.max_iter, **options)
            self.n_iter_ = max(1, res.stats["runs"])
        return {v: list(ps) for v, ps in res.parents.items()}

    def _parameters(self, data, parents, complete) -> BayesianNetwork:
        if complete:
            if self.alpha is not None:
                return BayesianNetwork.fit(data, parents, estimator="laplace", alpha=self.alpha,
                                           name=self.structure_)
            return BayesianNetwork.fit(data, parents, estimator="bdeu", ess=self.parameter_ess,
                                       name=self.structure_)
        from .learn.em import fit_parameters

        return fit_parameters(data, parents, parameter_ess=self.parameter_ess,
                              parameter_alpha=self.alpha).network

    # ------------------------------------------------------------------ predict
    def predict_proba(self, X) -> np.ndarray:
        """``P(class | the row's observed features)``: rows x classes, in ``classes_``
        order; missing cells (NaN) are summed out exactly, and so is a categorical
        value the training rows never showed (with a warning that names it)."""
        check_is_fitted(self, "network_")
        return self._proba_of_codes(self._codes(X))

    def _proba_of_codes(self, codes) -> np.ndarray:
        """:meth:`predict_proba` of rows already coded by :meth:`_codes`."""
        cls = self.network_.variables.index(self.class_name_)
        out = np.empty((len(codes), len(self.classes_)))
        complete = (codes[:, [j for j in range(codes.shape[1]) if j != cls]] >= 0).all(axis=1)
        if complete.any():
            out[complete] = self._blanket_posteriors(codes[complete], cls)
        if not complete.all():
            out[~complete] = self._tree_posteriors(codes[~complete], cls)
        return out

    def predict(self, X) -> np.ndarray:
        """The most probable class of each row."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_log_proba(self, X) -> np.ndarray:
        """Natural log of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _codes(self, X) -> np.ndarray:
        """Rows coded in the network's variable order (the class column -1)."""
        frame = as_frame(X)
        if frame.shape[1] != self.n_features_in_:
            raise InputError(f"X has {frame.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input")
        if hasattr(self, "feature_names_in_") and isinstance(X, pd.DataFrame):
            lacking = [c for c in self.feature_names_in_ if c not in frame.columns]
            if lacking:
                raise InputError(f"X lacks the fitted columns {lacking[:5]}")
        frame = frame.set_axis(self.discretizer_.feature_names_in_, axis=1) \
            if not isinstance(X, pd.DataFrame) else frame
        cut = self.discretizer_.transform(frame, unseen="missing")
        codes = np.full((len(cut), len(self.network_.variables)), -1, dtype=np.int64)
        for j, v in enumerate(self.network_.variables):
            if v != self.class_name_:
                codes[:, j] = cut[v].cat.codes.to_numpy()
        return codes

    def _blanket_posteriors(self, codes, cls) -> np.ndarray:
        """Class posteriors of complete rows: the families that hold the class."""
        n_classes = len(self.classes_)
        logp = np.zeros((len(codes), n_classes))
        index = {v: j for j, v in enumerate(self.network_.variables)}
        for v in self.network_.variables:
            family = [index[v]] + [index[p] for p in self.network_.parents(v)]
            if cls not in family:
                continue
            picks = tuple(np.arange(n_classes)[None, :] if a == cls else codes[:, a][:, None]
                          for a in family)
            logp += np.log(self.network_.cpt(v)[picks])
        logp -= logp.max(axis=1, keepdims=True)
        p = np.exp(logp)
        return p / p.sum(axis=1, keepdims=True)

    def _tree_posteriors(self, codes, cls) -> np.ndarray:
        from .inference import JunctionTree

        if self._tree is None:
            self._tree = JunctionTree(self.network_)
        names = self.network_.variables
        evidence = [{names[j]: int(c) for j, c in enumerate(row) if c >= 0} for row in codes]
        posts, _ = self._tree.posteriors_batch(evidence, variables=[self.class_name_])
        return posts[self.class_name_]


def leave_one_out_hits(codes: np.ndarray, arities, names, parents: dict, cls: str,
                       pseudo: dict) -> int:
    """How many rows a classifier of structure ``parents`` classifies right when it is
    fitted on the other rows: each row's counts are taken out of the CPTs
    (posterior means, ``pseudo[v]`` a cell) in closed form, so one pass over the
    count tables replaces refitting per row (the selection of Martinez et al. 2016).
    The class must be a parent of every feature and observed in every row; a family
    with a missing cell in a row is left out of that row's product (summed out
    exactly for naive Bayes, approximately otherwise).

    >>> codes = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [0, 1]])
    >>> leave_one_out_hits(codes, [2, 2], ["x", "c"], {"x": ["c"], "c": []}, "c",
    ...                    {"x": 1.0, "c": 1.0})
    2
    """
    index = {v: i for i, v in enumerate(names)}
    r_c = int(arities[index[cls]])
    truth = codes[:, index[cls]]
    own = (np.arange(r_c)[None, :] == truth[:, None]).astype(np.int64)
    every = np.arange(len(truth))
    score = np.log(np.bincount(truth, minlength=r_c)[None, :] - own + pseudo[cls])
    for v, ps in parents.items():
        if v == cls:
            continue
        others = [index[p] for p in ps if p != cls]
        seen = (codes[:, others + [index[v]]] >= 0).all(axis=1)
        rows = slice(None) if seen.all() else np.flatnonzero(seen)   # no copies if complete
        config = np.zeros(len(truth[rows]), dtype=np.int64)   # the feature parents' state
        for a in others:
            config = config * int(arities[a]) + codes[rows, a]
        r_v = int(arities[index[v]])
        q = int(np.prod([arities[a] for a in others]))
        cell = config * r_v + codes[rows, index[v]]
        counts = np.bincount(cell * r_c + truth[rows], minlength=q * r_v * r_c)
        counts = counts.reshape(q, r_v, r_c)
        per_config = counts.sum(axis=1, keepdims=True)
        a = pseudo[v]
        # log CPT entries per cell, and the same with the row's own count taken out,
        # which applies to its own class only: no logarithm per row
        gain = (np.log(counts + a) - np.log(per_config + r_v * a)).reshape(-1)
        less = (np.log(np.maximum(counts - 1, 0) + a)
                - np.log(np.maximum(per_config - 1, 0) + r_v * a)).reshape(-1)
        _add_family(score, every[rows], cell * r_c, truth, gain, less)
    return int(np.sum(np.argmax(score, axis=1) == truth))


@nb.njit(cache=True)
def _add_family(score, rows, start, truth, gain, less):
    """Add one family's log CPT entries to each row's class scores: ``gain`` from the
    row's cell onwards (one entry per class), ``less`` for the row's own class."""
    n_classes = score.shape[1]
    for k in range(rows.size):
        n = rows[k]
        for c in range(n_classes):
            score[n, c] += gain[start[k] + c]
        mine = start[k] + truth[n]
        score[n, truth[n]] += less[mine] - gain[mine]


def _labels(y, n_rows: int) -> np.ndarray:
    y = np.asarray(y.to_numpy() if isinstance(y, (pd.Series, pd.DataFrame)) else y)
    if y.ndim == 2 and y.shape[1] == 1:
        import warnings

        from sklearn.exceptions import DataConversionWarning

        warnings.warn("A column-vector y was passed when a 1d array was expected",
                      DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise InputError(f"y must be 1-D (one class per row), got shape {y.shape}")
    if len(y) != n_rows:
        raise InputError(f"y has {len(y)} labels for {n_rows} rows")
    return y


def _free_name(features) -> str:
    """A name for the class variable that no feature has."""
    name = "class"
    while name in features:
        name += "_"
    return name


def _describe(options: dict) -> str:
    """A candidate's name: ``tan``, ``kdb2``, ``kdb2-bic``."""
    name = options["structure"] + (str(options["k"]) if "k" in options else "")
    return name + ("-bic" if options.get("theta") == "bic" else "")
