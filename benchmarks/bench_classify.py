"""Bayesian network classifiers against pyAgrum's and scikit-learn's, same folds.

Per UCI table with a class (raw columns: numbers stay numbers, missing cells
NaN), stratified 10-fold cross-validation (3 folds with ``--quick``), the same
folds for every classifier:

* twlib's :class:`~twlib.classify.BoundedTreewidthClassifier`: ``auto``, naive
  Bayes, TAN, KDB(2) with and without the BIC threshold, and the bounded learner
  at k = 3 (2 s a fold) with the class a parent of every feature (``bounded``)
  and free (``bounded-free``), MDLP cuts;
* pyAgrum 3.3.1's ``skbn.BNClassifier``: TAN and naive Bayes, its documented
  prior (``"Smoothing"``), MDLP cuts for two classes and NML cuts for more
  (its MDLP and CAIM take two classes only; where the method leaves a column
  one bin, which pyAgrum refuses, the table is cut by its default, quantile,
  then uniform; the fit that succeeds is the one timed);
* scikit-learn: ``CategoricalNB`` on twlib's MDLP bins, and as references that
  are not networks, ``LogisticRegression`` (one-hot, scaled, mean-imputed) and
  ``RandomForestClassifier`` (500 trees, 100 with ``--quick``; ordinal codes).

Printed per table: accuracy, log loss and seconds to fit (mean over folds; each
classifier first fits the first fold once, untimed, so that loading compiled kernels
or a library's first import is not counted as a fit).
The headline compares twlib's default classifier (``structure="auto"``: the best
of naive Bayes, TAN and KDB by leave-one-out accuracy on the training rows)
with pyAgrum's TAN: wins, ties (accuracies within 0.5 points) and losses, and
the median of pyAgrum's TAN fit seconds over twlib's TAN's.

    python benchmarks/bench_classify.py [--quick] [--tables wine iris] [--save PATH]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import CategoricalNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

from twlib.classify import BoundedTreewidthClassifier
from twlib.datasets import CLASSIFICATION_TABLES, load_classification
from twlib.discretize import Discretizer, column_kinds

QUICK_TABLES = ("iris", "breast", "car")
TIE = 0.005                      # accuracies this close count as a tie
BOUNDED_SECONDS = 2.0


def twlib_models(quick: bool) -> dict:
    models = {"twlib auto": BoundedTreewidthClassifier(structure="auto"),
              "twlib nb": BoundedTreewidthClassifier(structure="naive_bayes"),
              "twlib tan": BoundedTreewidthClassifier(structure="tan"),
              "twlib kdb2": BoundedTreewidthClassifier(structure="kdb", k=2),
              "twlib kdb2-bic": BoundedTreewidthClassifier(structure="kdb", k=2, theta="bic")}
    if not quick:
        models["twlib bounded"] = BoundedTreewidthClassifier(
            structure="bounded", k=3, time_limit=BOUNDED_SECONDS, random_state=0)
        models["twlib bounded-free"] = BoundedTreewidthClassifier(
            structure="bounded", k=3, class_parent=False, time_limit=BOUNDED_SECONDS,
            random_state=0)
    return models


class PyAgrum:
    """pyAgrum's BNClassifier on MDLP cuts (string features, as its processor wants)."""

    def __init__(self, method: str):
        self.method = method

    def fit(self, X, y):
        # the training rows' kinds, which a few test rows keep; a column of one value is
        # left out, as twlib leaves it (pyAgrum refuses to cut it)
        self.kinds = {c: kind for c, kind in column_kinds(X).items() if X[c].nunique() > 1}
        self.categories = {c: X[c].cat.categories for c, kind in self.kinds.items()
                           if kind == "categorical"}
        X = _pyagrum_frame(X, self.kinds)
        # pyAgrum's MDLP (and CAIM) take two classes only: NML for more; where a method
        # leaves a column one bin (pyAgrum refuses that), the whole table is cut by the
        # next: its default, quantile, then uniform
        numeric = [f"x{c}" for c, kind in self.kinds.items() if kind == "numeric"]
        for method in ("MDLP" if len(np.unique(y)) == 2 else "NML", "quantile", "uniform"):
            try:
                started = time.perf_counter()
                self.model = self._fitted(X, y, dict.fromkeys(numeric, method))
                self.fit_seconds = time.perf_counter() - started    # its refusals not counted
                return self
            except ValueError as err:
                if "gave only 1 bin" not in str(err) or method == "uniform":
                    raise

    def _fitted(self, X, y, cuts):
        import pyagrum.lib.discreteTypeProcessor as dtp
        import pyagrum.skbn as skbn

        processor = dtp.DiscreteTypeProcessor()
        for c, states in self.categories.items():          # the same kinds as twlib's
            processor.setDiscretizationParameters(      # its "fastVar" syntax: {a|b|c}
                f"x{c}", "NoDiscretization", "{" + "|".join(f"v{v}" for v in states) + "}")
        for c, method in cuts.items():
            processor.setDiscretizationParameters(c, method)
        model = skbn.BNClassifier(type_processor=processor, learningMethod=self.method,
                                  prior="Smoothing")
        # classes as codes 0..C-1: its MDLP stacks the classes with the numbers into one
        # array (text classes turn the numbers into text), and integer classes become a
        # range variable whose probabilities come in numeric order, which codes keep
        self.labels = np.unique(np.asarray(y).astype(str))
        return model.fit(X, np.searchsorted(self.labels, np.asarray(y).astype(str)))

    def predict_proba(self, X):
        return self.model.predict_proba(_pyagrum_frame(X, self.kinds))

    @property
    def classes_(self):
        return self.labels[np.asarray(self.model.classes_, dtype=int)]


def _pyagrum_frame(X: pd.DataFrame, kinds: dict) -> pd.DataFrame:
    """Its input: text for categorical columns (prefixed, as it reads text that looks
    like a number as a float), floats for numeric ones; a missing cell filled with
    the column's mode or median (its classifier takes complete rows); column names
    prefixed too (its prediction loses a column whose name reads as a number)."""
    out = X[list(kinds)].copy()
    for c, kind in kinds.items():
        if kind == "categorical":
            out[c] = "v" + out[c].fillna(out[c].mode().iloc[0]).astype(str)
        else:
            out[c] = out[c].astype(float).fillna(out[c].median())
    return out.rename(columns=lambda c: f"x{c}")


class OnBins:
    """A scikit-learn classifier on twlib's MDLP bins (ordinal codes, NaN its own code)."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        self.cut = Discretizer(method="mdlp").fit(X, y)
        # every state of every column, and a code for a missing cell
        self.model.set_params(min_categories=[len(st) + 1 for st in self.cut.states_.values()])
        self.model.fit(self._codes(X), y)
        self.classes_ = self.model.classes_
        return self

    def _codes(self, X):
        frame = self.cut.transform(X)
        return np.column_stack([frame[c].cat.codes.to_numpy() + 1 for c in frame.columns])

    def predict_proba(self, X):
        return self.model.predict_proba(self._codes(X))


def reference(kind: str, X: pd.DataFrame, trees: int = 500):
    kinds = column_kinds(X)
    numeric = [c for c, k in kinds.items() if k == "numeric"]
    categorical = [c for c, k in kinds.items() if k == "categorical"]
    if kind == "logistic":
        prep = ColumnTransformer([
            ("num", make_pipeline(SimpleImputer(), StandardScaler()), numeric),
            ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                  OneHotEncoder(handle_unknown="ignore")), categorical)])
        return make_pipeline(prep, LogisticRegression(max_iter=2000))
    prep = ColumnTransformer([
        ("num", "passthrough", numeric),
        ("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1,
                               encoded_missing_value=-2), categorical)])
    return make_pipeline(prep, RandomForestClassifier(trees, random_state=0, n_jobs=1))


def _as_text(X: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns as text for the scikit-learn encoders."""
    out = X.copy()
    for c, kind in column_kinds(X).items():
        if kind == "categorical":
            out[c] = out[c].astype(object).where(out[c].notna(), np.nan).astype(str)
    return out


def declared(X: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns as pandas Categoricals over the whole table's values, so
    that a fold lacking a value still knows it (for every classifier alike)."""
    out = X.copy()
    for c, kind in column_kinds(X).items():
        if kind == "categorical":
            values = out[c].astype(object).where(out[c].notna(), None)
            text = values.map(lambda v: None if v is None else str(v))
            out[c] = pd.Categorical(text, categories=sorted(text.dropna().unique()))
    return out


def evaluate(name: str, folds: int, quick: bool, only=None) -> list:
    X, y = load_classification(name)
    X = declared(X)
    y = y.astype(str).to_numpy()
    models = {**twlib_models(quick), "pyagrum tan": PyAgrum("TAN"),
              "pyagrum nb": PyAgrum("NaiveBayes"), "sklearn categoricalnb": None,
              "sklearn logistic": None, "sklearn forest": None}
    splits = list(StratifiedKFold(folds, shuffle=True, random_state=0).split(X, _strata(y)))
    rows = []
    for label, model in models.items():
        if only and not label.startswith(tuple(only)):
            continue
        acc, loss, seconds = [], [], []
        for i, (train, test) in enumerate([splits[0], *splits]):   # the first fit warms up
            Xtr, Xte = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
            if label == "sklearn categoricalnb":
                fitted = OnBins(CategoricalNB())
            elif label.startswith("sklearn"):
                fitted = reference(label.split()[1], X, 100 if quick else 500)
                Xtr, Xte = _as_text(Xtr), _as_text(Xte)
            else:
                fitted = model.__class__(**model.get_params()) if hasattr(model, "get_params") \
                    else PyAgrum(model.method)
            started = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted.fit(Xtr, y[train])
                    seconds.append(getattr(fitted, "fit_seconds",
                                           time.perf_counter() - started))
                    proba = _aligned(fitted, fitted.predict_proba(Xte), np.unique(y))
            except Exception as err:         # a peer's failure is reported, not fatal
                print(f"{name:15s} {label:22s} failed: {type(err).__name__}: {err}"[:300])
                acc, loss = [np.nan], [np.nan]
                break
            if i == 0:            # loading kernels and imports is not a fit: untimed
                seconds.clear()
                continue
            acc.append(accuracy_score(y[test], np.unique(y)[proba.argmax(axis=1)]))
            loss.append(log_loss(y[test], np.clip(proba, 1e-15, 1), labels=np.unique(y)))
        rows.append({"table": name, "classifier": label, "accuracy": np.mean(acc),
                     "log_loss": np.mean(loss),
                     "fit_seconds": np.mean(seconds) if seconds else np.nan})
        print(f"{name:15s} {label:22s} acc {rows[-1]['accuracy']:.4f}  "
              f"log loss {rows[-1]['log_loss']:.3f}  fit {rows[-1]['fit_seconds']:.3f} s",
              flush=True)
    return rows


def _strata(y):
    """Classes with fewer rows than folds are pooled for stratification only."""
    counts = pd.Series(y).value_counts()
    rare = set(counts[counts < 10].index)
    return np.array(["rare" if v in rare else v for v in y])


def _aligned(model, proba, classes) -> np.ndarray:
    """Probabilities in the order of ``classes`` (a class absent from a fold: 0)."""
    out = np.zeros((len(proba), len(classes)))
    own = [str(c) for c in model.classes_]
    for j, c in enumerate(classes):
        if c in own:
            out[:, j] = proba[:, own.index(c)]
    return out / np.maximum(out.sum(axis=1, keepdims=True), 1e-300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tables", nargs="*")
    parser.add_argument("--save")
    parser.add_argument("--only", nargs="*", metavar="PREFIX",
                        help="run only the classifiers whose names start so ('pyagrum', "
                             "'twlib auto'); --report joins the parts")
    parser.add_argument("--report", metavar="CSV",
                        help="print the summary of saved runs (several CSVs joined, a later "
                             "one's rows replacing an earlier one's) and stop")
    args = parser.parse_args()
    if args.report:
        runs = pd.concat([pd.read_csv(p) for p in args.report.split(",")], ignore_index=True)
        runs = runs.drop_duplicates(["table", "classifier"], keep="last")   # later runs win
        if args.save:
            runs.to_csv(args.save, index=False)
        report(runs)
        return
    tables = args.tables or (QUICK_TABLES if args.quick else CLASSIFICATION_TABLES)
    rows = []
    for name in sorted(tables, key=lambda t: len(load_classification(t)[1])):  # small first
        rows += evaluate(name, 3 if args.quick else 10, args.quick, args.only)
        if args.save:                  # after every table: a long run's part is kept
            pd.DataFrame(rows).to_csv(args.save, index=False)
    if args.only:
        print(f"{len(rows)} rows of {', '.join(args.only)}; --report joins them with the rest")
    else:
        report(pd.DataFrame(rows))


def report(out: pd.DataFrame) -> None:
    """Accuracy per table and classifier, then the counts against pyAgrum; the last
    line is the headline."""
    acc = out.pivot(index="table", columns="classifier", values="accuracy")
    fit = out.pivot(index="table", columns="classifier", values="fit_seconds")
    print(acc.round(4).to_string())
    pyagrum_best = acc[["pyagrum tan", "pyagrum nb"]].max(axis=1)
    ran = acc["pyagrum tan"].notna()       # the tables it failed on are counted apart
    for peer, their in (("pyAgrum TAN", acc["pyagrum tan"]),
                        ("pyAgrum's better of TAN and NB", pyagrum_best)):
        wins, ties, losses = _tally(acc["twlib auto"][ran] - their[ran])
        print(f"twlib auto against {peer}, on the {int(ran.sum())} tables it ran: {wins} wins, "
              f"{ties} ties, {losses} losses")
    same = (fit["pyagrum tan"] / fit["twlib tan"])[ran]
    default = (fit["pyagrum tan"] / fit["twlib auto"])[ran]
    print(f"fit seconds pyAgrum TAN / twlib TAN: median {same.median():.1f}x, smallest "
          f"{same.min():.1f}x; pyAgrum TAN / twlib auto: median {default.median():.1f}x, "
          f"smallest {default.min():.1f}x")
    wins, ties, losses = _tally(acc["twlib auto"][ran] - acc["pyagrum tan"][ran])
    print(f"twlib auto at or above pyAgrum TAN on {wins + ties} of the {int(ran.sum())} tables "
          f"it ran ({wins} wins, {ties} ties, {losses} losses; it failed on "
          f"{int((~ran).sum())} more); fits faster than it on {int((default > 1).sum())} of "
          f"{int(ran.sum())} (median {default.median():.1f}x)")


def _tally(diff) -> tuple:
    """Wins, ties (within ``TIE``) and losses of accuracy differences."""
    wins, ties = int((diff > TIE).sum()), int((diff.abs() <= TIE).sum())
    return wins, ties, len(diff) - wins - ties


if __name__ == "__main__":
    main()
