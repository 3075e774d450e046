"""A fitted discretizer: numeric columns cut into intervals, the cut points kept.

A Bayesian network over discrete variables needs every numeric column cut into
a few intervals first.  Left as they are, the distinct floats of a column each
become a state (wine's alcohol: 126 states in 178 rows), and no arc can pay its
penalty.  :class:`Discretizer` learns the cuts on training rows, keeps them,
and applies them to any later rows, so a model learned on intervals scores,
predicts and imputes raw rows.

Which columns are numeric (:func:`column_kinds`): strings, booleans and pandas
Categoricals are categorical; integers (and whole-valued floats, which is what
a column of integers with a NaN becomes) with at most ``max_categories``
distinct values are categorical; other numbers are numeric.  ``kinds=`` overrides
the rule column by column.

The methods: ``"quantile"`` (bins of equal counts), ``"uniform"`` (of equal
width), ``"kmeans"`` (one-dimensional k-means: scikit-learn's
``KBinsDiscretizer`` finds these three cuts), and ``"mdlp"``, Fayyad & Irani's
(1993) supervised cuts: the boundary that most lowers the class entropy is
kept when its gain pays for itself under the minimum description length
principle, and each side is cut again.  ``"mdlp"`` needs the class; a column it
finds no cut in carries no information about the class and keeps one state.

A value beyond the training range falls in an end bin (the end intervals are
open); NaN stays missing.  States are named as intervals, ``"(-inf, 2.5]"``,
``"(2.5, 4]"``, ``"(4, inf)"``, and declared as pandas Categoricals, so a fold
that lacks a state still knows it.

>>> import pandas as pd
>>> frame = pd.DataFrame({"x": [0.1, 0.4, 0.35, 0.8, 0.9, 0.75], "c": list("aabbcc")})
>>> cut = Discretizer(method="quantile", n_bins=2).fit(frame)
>>> cut.kinds_, cut.states_["x"]
({'x': 'numeric', 'c': 'categorical'}, ['(-inf, 0.575]', '(0.575, inf)'])
>>> cut.transform(pd.DataFrame({"x": [-5.0, 7.0, None], "c": ["a", "c", "b"]}))["x"].tolist()
['(-inf, 0.575]', '(0.575, inf)', nan]
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from .errors import InputError, WrongType

__all__ = ["Discretizer", "column_kinds", "for_learning", "mdlp_cuts", "METHODS"]

METHODS = ("quantile", "uniform", "kmeans", "mdlp")
KINDS = ("numeric", "categorical")


def column_kinds(frame: pd.DataFrame, *, max_categories: int = 10,
                 kinds: dict | None = None) -> dict:
    """``{column: "numeric" | "categorical"}`` by the rule of the module's docstring;
    ``kinds`` overrides it for the columns it names.

    >>> column_kinds(pd.DataFrame({"a": [1.5, 2.0, 3.0], "b": [1, 2, 1], "c": ["x", "y", "x"]}))
    {'a': 'numeric', 'b': 'categorical', 'c': 'categorical'}
    """
    names = [str(c) for c in frame.columns]
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise InputError(f"column names must be unique; repeated: {repeated}")
    kinds = dict(kinds or {})
    unknown = sorted(set(kinds) - set(names))
    if unknown:
        raise InputError(f"kinds= names columns that are not in the data: {unknown}")
    bad = {c: k for c, k in kinds.items() if k not in KINDS}
    if bad:
        raise InputError(f"a column's kind must be one of {KINDS}, got {bad}")
    out = {}
    for name in frame.columns:
        col = frame[name]
        name = str(name)
        if name in kinds:
            out[name] = kinds[name]
        elif isinstance(col.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(col):
            out[name] = "categorical"
        elif not pd.api.types.is_numeric_dtype(col):
            out[name] = _text_kind(name, col, max_categories)
        else:
            numeric = _numeric(col.dropna().to_numpy(dtype=float), max_categories)
            out[name] = "numeric" if numeric else "categorical"
    return out


def _text_kind(name, col: pd.Series, max_categories: int) -> str:
    """A column of text is numeric when its cells read as numbers that the numeric rule
    would call numeric; a column that reads so except for one or two words (a stray
    marker such as ``"?"`` for a missing cell) is refused by name."""
    present = col.dropna()
    parsed = pd.to_numeric(present, errors="coerce")
    words = present[parsed.isna()].astype(str).unique()
    if parsed.notna().sum() == 0 or not _numeric(parsed.dropna().to_numpy(float), max_categories):
        return "categorical"
    if len(words) == 0:
        return "numeric"
    if len(words) <= 2:
        raise InputError(f"column {name!r} holds numbers and the text {sorted(words)}: mark "
                         "missing cells as NaN (na_values=) or declare its kind with kinds=")
    return "categorical"


def _numeric(values: np.ndarray, max_categories: int) -> bool:
    """The rule for numbers: fractions, or more than ``max_categories`` distinct values."""
    whole = bool(np.all(values == np.round(values)))
    return not whole or len(np.unique(values)) > max_categories


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Class entropy (bits) of each row of class counts."""
    total = counts.sum(axis=-1, keepdims=True)
    p = np.divide(counts, total, out=np.zeros(counts.shape), where=total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.sum(np.where(p > 0, p * np.log2(p), 0.0), axis=-1)


def mdlp_cuts(values, classes) -> np.ndarray:
    """Fayyad & Irani's (1993) MDLP cut points of ``values`` for the class codes
    ``classes`` (NaN rows left out), sorted.

    A candidate cut lies halfway between two neighbouring distinct values.  The
    best one (least weighted class entropy) is taken when its information gain
    exceeds ``(log2(N - 1) + log2(3^c - 2) - [c Ent(S) - c1 Ent(S1) - c2 Ent(S2)]) / N``,
    with ``c, c1, c2`` the classes present in the set and its two sides.

    >>> mdlp_cuts([1, 2, 3, 10, 11, 12] * 5, [0, 0, 0, 1, 1, 1] * 5).tolist()
    [6.5]
    """
    values = np.asarray(values, dtype=float)
    classes = np.asarray(classes)
    keep = ~np.isnan(values)
    values, classes = values[keep], classes[keep]
    codes = np.unique(classes, return_inverse=True)[1]
    order = np.argsort(values, kind="stable")
    values, codes = values[order], codes[order]
    n_classes = int(codes.max()) + 1 if codes.size else 0
    onehot = np.zeros((values.size, max(n_classes, 1)))
    onehot[np.arange(values.size), codes] = 1.0
    # class counts of every prefix, once: an interval's counts are differences of two rows
    prefix = np.zeros((values.size + 1, onehot.shape[1]))
    np.cumsum(onehot, axis=0, out=prefix[1:])
    change = np.flatnonzero(values[1:] != values[:-1]) + 1        # where a new value starts
    cuts: list = []
    stack = [(0, values.size)]
    while stack:
        lo, hi = stack.pop()
        best = _best_cut(values, prefix, change, lo, hi)
        if best is not None:
            at, cut = best
            cuts.append(cut)
            stack += [(lo, at), (at, hi)]
    return np.array(sorted(cuts))


def _best_cut(values, prefix, change, lo: int, hi: int):
    """The MDLP-accepted cut of the sorted rows ``lo:hi``: (the first row right of
    it, cut value), or None.  ``prefix`` holds the class counts of every prefix and
    ``change`` the rows where a new value starts."""
    n = hi - lo
    boundaries = change[np.searchsorted(change, lo, side="right"):
                        np.searchsorted(change, hi, side="left")]
    if boundaries.size == 0:
        return None
    left = prefix[boundaries] - prefix[lo]
    total = prefix[hi] - prefix[lo]
    right = total - left
    weights = (boundaries - lo) / n
    split = weights * _entropy(left) + (1 - weights) * _entropy(right)
    # Mirror-image splits have equal entropies that differ in the last bits with the
    # order of summation; the first boundary within rounding wins, so ties are not
    # settled by float noise.
    i = int(np.flatnonzero(split <= split.min() + 1e-12)[0])
    whole = float(_entropy(total))
    gain = whole - split[i]
    c, c1, c2 = (int(np.count_nonzero(x)) for x in (total, left[i], right[i]))
    delta = math.log2(3 ** c - 2) - (c * whole - c1 * float(_entropy(left[i]))
                                    - c2 * float(_entropy(right[i])))
    if gain <= (math.log2(n - 1) + delta) / n:
        return None
    at = int(boundaries[i])
    return at, float((values[at - 1] + values[at]) / 2)


def _kbins_cuts(values: np.ndarray, method: str, n_bins: int) -> np.ndarray:
    """Interior cut points of scikit-learn's KBinsDiscretizer on one column."""
    from sklearn.preprocessing import KBinsDiscretizer

    distinct = np.unique(values)
    if distinct.size <= n_bins:            # too few values to fill the bins: cut between them
        return (distinct[1:] + distinct[:-1]) / 2
    options = {"quantile_method": "averaged_inverted_cdf"} if method == "quantile" else {}
    with warnings.catch_warnings():        # "bins whose width is too small are removed"
        warnings.simplefilter("ignore")
        edges = KBinsDiscretizer(n_bins=n_bins, encode="ordinal", strategy=method,
                                 subsample=None, **options).fit(values[:, None]).bin_edges_[0]
    return np.unique(edges[1:-1])


def _labels(cuts: np.ndarray) -> list:
    """Interval names for the cut points, with enough digits to tell them apart."""
    for digits in range(4, 18):
        text = [f"{c:.{digits}g}" for c in cuts]
        if len(set(text)) == len(text):
            break
    bounds = ["-inf", *text, "inf"]
    last = len(bounds) - 2
    return [f"({bounds[i]}, {bounds[i + 1]}{')' if i == last else ']'}" for i in range(last + 1)]


class Discretizer:
    """Cut numeric columns into intervals, learned on training rows (see the module).

    Parameters
    ----------
    method : {"quantile", "uniform", "kmeans", "mdlp"}
        ``"mdlp"`` needs ``y`` in :meth:`fit`.
    n_bins : int
        Bins per numeric column for the unsupervised methods (fewer when the
        column has fewer distinct values).
    max_categories : int
        Integer columns with at most this many distinct values are categorical.
    kinds : dict, optional
        ``{column: "numeric" | "categorical"}``, overriding the rule.
    categories : dict, optional
        ``{column: [states]}`` for categorical columns: the states a column may
        take, observed in the training rows or not.

    Attributes (after :meth:`fit`)
    ------------------------------
    kinds_ : {column: kind};  cuts_ : {numeric column: cut points};
    states_ : {column: state labels}, in order.
    """

    def __init__(self, *, method: str = "quantile", n_bins: int = 5, max_categories: int = 10,
                 kinds: dict | None = None, categories: dict | None = None):
        self.method = method
        self.n_bins = n_bins
        self.max_categories = max_categories
        self.kinds = kinds
        self.categories = categories

    def __repr__(self) -> str:
        return f"Discretizer({self.method!r}, n_bins={self.n_bins})"

    def _check(self, X, y):
        if self.method not in METHODS:
            raise InputError(f"method must be one of {METHODS}, got {self.method!r}")
        if (isinstance(self.n_bins, bool) or not isinstance(self.n_bins, (int, np.integer))
                or self.n_bins < 2):
            raise InputError(f"n_bins must be an integer >= 2, got {self.n_bins!r}")
        if not isinstance(X, pd.DataFrame):
            raise WrongType(f"a Discretizer takes a pandas DataFrame, got {type(X).__name__}")
        if X.shape[0] == 0:
            raise InputError("the data have no rows")
        if self.method == "mdlp" and y is None:
            raise InputError("method 'mdlp' cuts for a class: pass y to fit")
        if y is not None and len(y) != len(X):
            raise InputError(f"y has {len(y)} values for {len(X)} rows")

    def fit(self, X: pd.DataFrame, y=None) -> "Discretizer":
        """Learn the column kinds, the cut points and the state sets from ``X``."""
        self._check(X, y)
        X = X.rename(columns=str)
        self.kinds_ = column_kinds(X, max_categories=self.max_categories, kinds=self.kinds)
        unknown = sorted(set(self.categories or {}) - set(X.columns))
        if unknown:
            raise InputError(f"categories= names columns that are not in the data: {unknown}")
        classes = None
        if y is not None:
            target = pd.Series(np.asarray(y, dtype=object)).astype(str)
            classes = target.to_numpy()
        self.cuts_, self.states_ = {}, {}
        for name, kind in self.kinds_.items():
            col = X[name]
            if kind == "categorical":
                self.states_[name] = self._categorical_states(name, col)
                continue
            values = _numbers(name, col)
            observed = ~np.isnan(values)
            if not observed.any():
                raise InputError(f"column {name!r} has no observed value")
            if self.method == "mdlp":
                cuts = mdlp_cuts(values[observed], classes[observed])
            else:
                cuts = _kbins_cuts(values[observed], self.method, self.n_bins)
            self.cuts_[name] = cuts
            self.states_[name] = _labels(cuts)
        self.feature_names_in_ = list(X.columns)
        return self

    def _categorical_states(self, name, col) -> list:
        from .data import category_order, state_label

        declared = (self.categories or {}).get(name)
        if declared is not None:
            states = [state_label(v) for v in declared]
            seen = set(col.dropna().map(state_label))
            extra = sorted(seen - set(states))
            if extra:
                raise InputError(f"column {name!r} has values outside its declared states: "
                                 f"{extra[:5]}")
            return states
        return list(dict.fromkeys(state_label(v) for v in category_order(col)))

    def transform(self, X: pd.DataFrame, *, unseen: str = "error") -> pd.DataFrame:
        """``X`` with every column a pandas Categorical over its fitted states: numeric
        cells in their interval, NaN kept.  A categorical value never declared or
        seen in training is refused by name (``unseen="error"``), or becomes a
        missing cell with a warning that names it (``unseen="missing"``)."""
        if unseen not in ("error", "missing"):
            raise InputError(f"unseen must be 'error' or 'missing', got {unseen!r}")
        from .data import state_label

        if not hasattr(self, "states_"):
            raise InputError("this Discretizer is not fitted yet: call fit first")
        if not isinstance(X, pd.DataFrame):
            raise WrongType(f"a Discretizer takes a pandas DataFrame, got {type(X).__name__}")
        X = X.rename(columns=str)
        lacking = [c for c in self.feature_names_in_ if c not in X.columns]
        if lacking:
            raise InputError(f"the rows lack the fitted columns {lacking}")
        out = {}
        for name, states in self.states_.items():
            col = X[name]
            if name in self.cuts_:
                values = _numbers(name, col)
                codes = np.searchsorted(self.cuts_[name], values, side="left")
                codes[np.isnan(values)] = -1
            else:
                holes = col.isna().to_numpy()
                # each distinct value labelled once: factorize, then look the labels up
                index, values = pd.factorize(col[~holes])
                labels = np.array([state_label(v) for v in values], dtype=object)
                new = sorted(set(labels) - set(states))
                if new and unseen == "error":
                    raise InputError(f"column {name!r} has values never seen in training: "
                                     f"{new[:5]} (declare them with categories=)")
                if new:
                    warnings.warn(f"column {name!r}: values never seen in training, taken as "
                                  f"missing: {new[:5]}", UserWarning, stacklevel=2)
                codes = np.full(len(col), -1)
                codes[~holes] = pd.Index(states).get_indexer(labels)[index]   # unseen: -1
            out[name] = pd.Categorical.from_codes(codes, categories=states)
        return pd.DataFrame(out, index=X.index)

    def fit_transform(self, X: pd.DataFrame, y=None) -> pd.DataFrame:
        return self.fit(X, y).transform(X)


def _numbers(name, col: pd.Series) -> np.ndarray:
    """A numeric column as floats (NaN for missing), refusing text and infinities by name."""
    try:
        values = pd.to_numeric(col, errors="raise").to_numpy(dtype=float)
    except (TypeError, ValueError):
        bad = [v for v in col.dropna().unique()
               if pd.isna(pd.to_numeric(pd.Series([v]), errors="coerce"))[0]]
        raise InputError(f"column {name!r} is numeric but holds text: {bad[:5]}") from None
    if np.isinf(values).any():
        raise InputError(f"column {name!r} holds infinite values "
                         f"({int(np.isinf(values).sum())} cells)")
    return values


def for_learning(frame: pd.DataFrame, *, discretize: str | None = "auto", n_bins="auto",
                 y=None) -> tuple[pd.DataFrame, "Discretizer | None"]:
    """The frame a network learner takes, and the fitted Discretizer (None when no
    column is numeric): what :class:`twlib.BoundedTreewidthNetwork` and ``twlib
    learn --discretize`` do with raw columns.

    ``discretize``: ``"auto"`` (quantile), a method of :data:`METHODS`, or None,
    which refuses a numeric column by name.  ``n_bins="auto"`` is
    ``log2(rows) / 2`` rounded, between 2 and 5.

    >>> frame = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5] * 4, "c": list("abab") * 4})
    >>> cut, fitted = for_learning(frame)
    >>> fitted.states_["x"]
    ['(-inf, 2]', '(2, inf)']
    """
    numeric = [c for c, kind in column_kinds(frame).items() if kind == "numeric"]
    if not numeric:
        return frame, None
    if discretize is None:
        raise InputError(f"numeric column(s) {numeric[:5]}: every distinct number would become "
                         "a state; pass discretize='auto' (or 'quantile', 'mdlp', ...)")
    if discretize != "auto" and discretize not in METHODS:
        raise InputError(f"discretize must be 'auto', one of {METHODS} or None, "
                         f"got {discretize!r}")
    if n_bins == "auto":
        n_bins = int(np.clip(round(math.log2(max(len(frame), 2)) / 2), 2, 5))
    method = "quantile" if discretize == "auto" else discretize
    fitted = Discretizer(method=method, n_bins=n_bins).fit(frame, y)
    return fitted.transform(frame), fitted
