"""Discrete data sets: an int-coded matrix with names, arities and state labels.

Every learner in twlib reads a :class:`Dataset`.  Columns are coded ``0 .. r-1``
in the smallest unsigned integer type that holds them, so a 10,000 x 37 table
of ALARM samples takes 370 kB.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import InputError, UnknownName, WrongType

__all__ = ["Dataset", "IncompleteDataset", "as_frame", "category_order", "code_dtype", "mask_mar",
           "mask_mcar", "state_label"]

DISCRETISERS = (None, "median", "quantile")
MISSING_POLICIES = ("error", "drop", "state", "random")


def code_dtype(max_arity: int) -> np.dtype:
    """Smallest unsigned dtype that holds codes ``0 .. max_arity-1``.

    >>> code_dtype(2), code_dtype(300)
    (dtype('uint8'), dtype('uint16'))
    """
    for dt in (np.uint8, np.uint16, np.uint32):
        if max_arity - 1 <= np.iinfo(dt).max:
            return np.dtype(dt)
    raise InputError(f"{max_arity} states do not fit a 32-bit code")


class _Rows:
    """The shape of a table of codes held in ``values`` (rows x variables)."""

    @property
    def n_rows(self) -> int:
        return self.values.shape[0]

    @property
    def n_vars(self) -> int:
        return self.values.shape[1]

    def __len__(self) -> int:
        return self.n_rows


@dataclass(frozen=True, eq=False)
class Dataset(_Rows):
    """A complete discrete data set.

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_vars)
        State codes; column ``j`` holds values in ``0 .. arities[j]-1``.
    names : sequence of str
        Variable names, unique.
    states : sequence of sequences of str
        ``states[j][c]`` is the label of code ``c`` of variable ``j``.

    Examples
    --------
    >>> import pandas as pd
    >>> ds = Dataset.from_pandas(pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 2, 2]}))
    >>> ds.names, ds.arities.tolist(), ds.values[:, 0].tolist()
    (['a', 'b'], [2, 2], [0, 1, 0])
    """

    values: np.ndarray
    names: list
    states: list

    def __post_init__(self):
        values = np.asarray(self.values)
        names = [str(n) for n in self.names]
        states = [[str(s) for s in st] for st in self.states]
        if values.ndim != 2:
            raise InputError(f"values must be a 2-D matrix, got {values.ndim} dimension(s)")
        if values.shape[1] != len(names) or len(states) != len(names):
            raise InputError(
                f"values has {values.shape[1]} columns but {len(names)} names "
                f"and {len(states)} state lists were given")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"variable names must be unique; repeated: {dup}")
        if values.shape[0] == 0:
            raise InputError("the data set is empty (no rows)")
        if not np.issubdtype(values.dtype, np.integer):
            raise InputError(f"values must be integer codes, got dtype {values.dtype}")
        arities = np.array([len(s) for s in states], dtype=np.int64)
        if np.any(arities < 1):
            bad = [n for n, a in zip(names, arities) if a < 1]
            raise InputError(f"variables without states: {bad}")
        if values.size and (values.min() < 0 or np.any(values.max(axis=0) >= arities)):
            bad = [n for n, a, m in zip(names, arities, values.max(axis=0)) if m >= a]
            raise InputError(f"codes out of range for variables {bad}")
        coded = np.ascontiguousarray(values, dtype=code_dtype(int(arities.max())))
        coded.setflags(write=False)
        object.__setattr__(self, "values", coded)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "arities", arities)
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(names)})

    @cached_property
    def columns(self) -> np.ndarray:
        """The codes variable-major, shape (n_vars, n_rows), contiguous and read-only:
        the layout the counting kernels scan.  Computed once per data set."""
        out = np.ascontiguousarray(self.values.T)
        out.setflags(write=False)
        return out

    def __repr__(self) -> str:
        return f"Dataset({self.n_rows} rows x {self.n_vars} variables, max arity {self.arities.max()})"

    def index(self, name) -> int:
        """Column index of a variable given by name (or passed through if an int)."""
        if isinstance(name, (int, np.integer)):
            if not 0 <= name < self.n_vars:
                raise UnknownName(f"variable index {name} out of range 0..{self.n_vars - 1}")
            return int(name)
        try:
            return self._index[name]
        except KeyError:
            raise UnknownName(f"no variable named {name!r} in this data set") from None

    def indices(self, names: Iterable) -> list:
        return [self.index(n) for n in names]

    # -------------------------------------------------------------- selection
    def select(self, names: Sequence) -> "Dataset":
        """The data set restricted to some variables, in the given order."""
        idx = self.indices(names)
        return Dataset(self.values[:, idx], [self.names[i] for i in idx],
                       [self.states[i] for i in idx])

    def take(self, rows) -> "Dataset":
        """The data set restricted to some rows (indices or a boolean mask)."""
        return Dataset(self.values[rows], self.names, self.states)

    def split(self, test_fraction: float = 0.25, random_state=None):
        """Shuffle the rows and split them into ``(train, test)``.

        >>> import pandas as pd
        >>> ds = Dataset.from_pandas(pd.DataFrame({"a": [0, 1] * 10}))
        >>> [len(d) for d in ds.split(0.25, random_state=0)]
        [15, 5]
        """
        if not 0 < test_fraction < 1:
            raise InputError(f"test_fraction must lie in (0, 1), got {test_fraction}")
        rng = np.random.default_rng(random_state)
        perm = rng.permutation(self.n_rows)
        n_test = int(round(test_fraction * self.n_rows))
        if n_test == 0 or n_test == self.n_rows:
            raise InputError(f"{self.n_rows} rows are too few to split at {test_fraction}")
        return self.take(np.sort(perm[n_test:])), self.take(np.sort(perm[:n_test]))

    def to_pandas(self) -> pd.DataFrame:
        """Categorical DataFrame with the state labels."""
        cols = {}
        for j, name in enumerate(self.names):
            cols[name] = pd.Categorical.from_codes(self.values[:, j], categories=self.states[j])
        return pd.DataFrame(cols)

    # --------------------------------------------------------------- builders
    @classmethod
    def from_pandas(cls, df: pd.DataFrame, *, discretize=None, bins: int = 4,
                    columns=None, missing: str = "error", drop_constant: bool = False,
                    max_states: int = 255, keep_states: int = 2,
                    random_state=None) -> "Dataset":
        """Code a DataFrame as a discrete data set.

        Parameters
        ----------
        df : DataFrame
            One column per variable.  Non-numeric columns are categorical; their
            states are the sorted distinct values.
        discretize : {None, "median", "quantile"}
            ``"median"`` binarises every column with more than ``keep_states``
            distinct values at its median (value <= median -> state 0), as Nie et
            al. (2016) did
            (categorical columns are split on their sorted codes).  ``"quantile"``
            cuts numeric columns with more than ``bins`` distinct values into
            ``bins`` equal-frequency bins.
        columns : list of str, optional
            Restrict discretisation to these columns (default: all eligible).
        missing : {"error", "drop", "state", "random"}
            What to do with missing cells: raise a ValueError naming the columns
            and their counts, drop incomplete rows, keep ``"missing"`` as an
            extra state, or fill each with a value drawn from the column's
            observed values (Wu 2010's treatment; seeded by ``random_state``).
        drop_constant : bool
            Drop columns with a single value instead of raising.
        keep_states : int
            With ``discretize="median"``, columns with at most this many distinct
            values are kept as they are (2 by default; Wu 2010 kept 3).
        max_states : int
            Raise when a column has more states than this (255 by default, so a
            forgotten continuous column is caught).

        Raises
        ------
        ValueError
            Empty data, missing values (with ``missing="error"``), infinite
            numbers, constant columns, too many states, unknown options.
        """
        if discretize not in DISCRETISERS:
            raise InputError(f"discretize must be one of {DISCRETISERS}, got {discretize!r}")
        if missing not in MISSING_POLICIES:
            raise InputError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
        if df.shape[0] == 0 or df.shape[1] == 0:
            raise InputError(f"the data set is empty ({df.shape[0]} rows x {df.shape[1]} columns)")
        df = df.copy()
        df.columns = [str(c) for c in df.columns]
        repeated = sorted({c for c in df.columns if list(df.columns).count(c) > 1})
        if repeated:
            raise InputError(f"column names must be unique; repeated: {repeated}")
        numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
                   and not pd.api.types.is_bool_dtype(df[c])]
        if numeric:
            inf = {c: int(np.isinf(df[c].to_numpy(dtype=float)).sum()) for c in numeric}
            inf = {c: k for c, k in inf.items() if k}
            if inf:
                raise InputError(f"non-finite numbers (inf) in columns {inf}")
        n_missing = df.isna().sum()
        n_missing = {c: int(k) for c, k in n_missing.items() if k}
        if n_missing:
            if missing == "error":
                raise InputError(
                    f"missing values in {len(n_missing)} column(s) {n_missing}; "
                    "pass missing='drop' to drop incomplete rows or missing='state' "
                    "to keep them as a state of their own")
            if missing == "random":
                rng = np.random.default_rng(random_state)
                for c in n_missing:
                    holes = df[c].isna().to_numpy()
                    df.loc[holes, c] = rng.choice(df[c].dropna().to_numpy(), size=int(holes.sum()))
            if missing == "drop":
                df = df.dropna(axis=0).reset_index(drop=True)
                if df.shape[0] == 0:
                    raise InputError("no complete rows remain after dropping missing values")
        targets = list(df.columns) if columns is None else [str(c) for c in columns]
        unknown = [c for c in targets if c not in df.columns]
        if unknown:
            raise InputError(f"columns to discretise not in the data: {unknown}")
        constant = [c for c in df.columns if df[c].nunique(dropna=False) < 2
                    and not _declares_states(df[c])]
        if constant:
            if not drop_constant:
                raise InputError(f"constant column(s) {constant}: a variable needs at least "
                                 "two states (pass drop_constant=True to drop them)")
            df = df.drop(columns=constant)
            if df.shape[1] == 0:
                raise InputError("every column is constant")
        codes, states = [], []
        for c in df.columns:
            col = df[c]
            if discretize == "median" and c in targets and col.nunique(dropna=True) > keep_states:
                code, st = _median_split(col)
            elif (discretize == "quantile" and c in targets and c in numeric
                  and col.nunique(dropna=True) > bins):
                code, st = _quantile_bins(col, bins)
            else:
                code, st = _categorical(col)
            if len(st) > max_states:
                raise InputError(
                    f"column {c!r} has {len(st)} states (more than max_states={max_states}); "
                    "discretise it (discretize='median' or 'quantile') or raise max_states")
            codes.append(code)
            states.append(st)
        values = np.column_stack(codes)
        return cls(values, list(df.columns), states)

    @classmethod
    def from_csv(cls, path, *, read_csv=None, **kwargs) -> "Dataset":
        """Read a CSV file with pandas and code it (keywords as :meth:`from_pandas`).

        ``read_csv`` is a dict of keywords for :func:`twlib.io.text.read_table`
        (``encoding``, ``sep``, ``na_values``, ...), which refuses binary,
        empty, header-only and ragged files with a FormatError.
        """
        from .io.text import read_table      # io reads data files; data needs only this leaf

        return cls.from_pandas(read_table(path, **(read_csv or {})), **kwargs)


@dataclass(frozen=True, eq=False)
class IncompleteDataset(_Rows):
    """A discrete data set with missing cells, coded ``-1``.

    What EM (:mod:`twlib.learn.em`) reads.  A row with every cell missing is
    kept and carries no information (its probability is 1); a column with no
    observed cell is refused, as is one with a single observed value.

    Examples
    --------
    >>> frame = pd.DataFrame({"a": ["x", None, "y", "x"], "b": [1, 2, None, 2]})
    >>> inc = IncompleteDataset.from_pandas(frame)
    >>> inc.values.tolist(), inc.n_missing
    ([[0, 0], [-1, 1], [1, -1], [0, 1]], 2)
    """

    values: np.ndarray
    names: list
    states: list

    def __post_init__(self):
        values = np.asarray(self.values)
        if values.ndim != 2 or not np.issubdtype(values.dtype, np.integer):
            raise InputError("values must be a 2-D matrix of integer codes (-1 for missing)")
        # a complete copy (missing cells as 0) validates names, states and ranges
        shell = Dataset(np.where(values < 0, 0, values), self.names, self.states)
        if values.min() < -1:
            raise InputError("codes below -1: a missing cell is coded -1")
        observed = values >= 0
        empty = [n for n, k in zip(shell.names, observed.sum(axis=0)) if k == 0]
        if empty:
            raise InputError(f"column(s) {empty} have no observed value")
        coded = np.ascontiguousarray(values, dtype=np.int16 if shell.arities.max() < 2**15
                                     else np.int32)
        coded.setflags(write=False)
        observed.setflags(write=False)
        object.__setattr__(self, "values", coded)
        object.__setattr__(self, "names", shell.names)
        object.__setattr__(self, "states", shell.states)
        object.__setattr__(self, "arities", shell.arities)
        object.__setattr__(self, "observed", observed)
        object.__setattr__(self, "_shell", shell)

    @property
    def n_missing(self) -> int:
        """Number of missing cells."""
        return int(self.observed.size - self.observed.sum())

    @property
    def complete_rows(self) -> np.ndarray:
        """Boolean mask of the rows without a missing cell."""
        return self.observed.all(axis=1)

    def __repr__(self) -> str:
        return (f"IncompleteDataset({self.n_rows} rows x {self.n_vars} variables, "
                f"{self.n_missing / self.observed.size:.1%} of cells missing)")

    def index(self, name) -> int:
        return self._shell.index(name)

    def indices(self, names: Iterable) -> list:
        return self._shell.indices(names)

    def take(self, rows) -> "IncompleteDataset":
        """The rows given (indices or a boolean mask)."""
        return IncompleteDataset(self.values[rows], self.names, self.states)

    def complete_cases(self) -> Dataset:
        """The rows without a missing cell, as a :class:`Dataset`."""
        keep = self.complete_rows
        if not keep.any():
            raise InputError("no row is complete")
        return Dataset(self.values[keep], self.names, self.states)

    def completed(self, values) -> Dataset:
        """A :class:`Dataset` with the missing cells taken from ``values`` (a full
        matrix of codes; its observed cells must agree with this data set's)."""
        values = np.asarray(values)
        if values.shape != self.values.shape:
            raise InputError(f"expected a {self.values.shape} matrix, got {values.shape}")
        if np.any(values[self.observed] != self.values[self.observed]):
            raise InputError("the filled matrix changes observed cells")
        return Dataset(values, self.names, self.states)

    def to_pandas(self) -> pd.DataFrame:
        """Categorical DataFrame with the state labels and NaN for missing cells."""
        return pd.DataFrame({name: pd.Categorical.from_codes(self.values[:, j],
                                                             categories=self.states[j])
                             for j, name in enumerate(self.names)})

    @classmethod
    def from_pandas(cls, df: pd.DataFrame, **options) -> "IncompleteDataset":
        """Code a DataFrame whose NaN / None cells are missing; ``options`` as
        :meth:`Dataset.from_pandas` (discretisation, ``drop_constant``, ...),
        which sees each column without its missing cells."""
        if "missing" in options:
            raise InputError("an IncompleteDataset keeps missing cells; do not pass missing=")
        if isinstance(df, pd.DataFrame) and df.shape[1]:
            names = [str(c) for c in df.columns]
            blank = [n for n, k in zip(names, df.isna().sum()) if k == len(df)]
            if blank:
                raise InputError(f"column(s) {blank} have no observed value")
        coded = Dataset.from_pandas(df, missing="state", **options)
        frame = df.copy()
        frame.columns = [str(c) for c in frame.columns]
        values = coded.values.astype(np.int32)
        states = [list(st) for st in coded.states]
        for j, name in enumerate(coded.names):
            holes = frame[name].isna().to_numpy()
            if holes.any():                        # the last state is the one missing() added
                values[holes, j] = -1
                states[j] = states[j][:-1]
                if len(states[j]) < 2 and not options.get("drop_constant"):
                    raise InputError(f"column {name!r} has a single observed value")
        return cls(values, coded.names, states)


def mask_mcar(data: Dataset, fraction: float, *, random_state=None) -> IncompleteDataset:
    """Hide each cell independently with probability ``fraction``: missing
    completely at random (MCAR).

    >>> full = Dataset(np.zeros((1000, 4), int), list("abcd"), [["0"]] * 4)
    >>> inc = mask_mcar(full, 0.3, random_state=0)
    >>> round(inc.n_missing / 4000, 2)
    0.3
    """
    if not 0 <= fraction < 1:
        raise InputError(f"the missing fraction must lie in [0, 1), got {fraction}")
    rng = np.random.default_rng(random_state)
    values = data.values.astype(np.int32)
    values[rng.random(values.shape) < fraction] = -1
    return IncompleteDataset(values, data.names, data.states)


def mask_mar(data: Dataset, fraction: float, *, random_state=None) -> IncompleteDataset:
    """Hide cells missing at random (MAR): a quarter of the variables (at least
    one) is always observed, and each other variable's cells go missing three
    times as often in rows where its driver, one of the observed variables, is
    not in its most frequent state.  About ``fraction`` of all cells go missing.
    """
    if not 0 <= fraction < 1:
        raise InputError(f"the missing fraction must lie in [0, 1), got {fraction}")
    if data.n_vars < 2:
        raise InputError("a MAR mask needs at least two variables")
    rng = np.random.default_rng(random_state)
    n_drivers = max(1, data.n_vars // 4)
    drivers = rng.choice(data.n_vars, n_drivers, replace=False)
    masked = np.setdiff1d(np.arange(data.n_vars), drivers)
    rate = fraction * data.n_vars / len(masked)
    if rate >= 1:
        raise InputError(f"{fraction} of all cells cannot go missing when only "
                         f"{len(masked)} of {data.n_vars} variables may")
    values = data.values.astype(np.int32)
    for j in masked:
        d = values[:, rng.choice(drivers)]
        common = d == np.bincount(d).argmax()
        weight = np.where(common, 1.0, 3.0)
        p = np.minimum(0.95, rate * weight / weight.mean())
        values[rng.random(len(p)) < p, j] = -1
    return IncompleteDataset(values, data.names, data.states)


def as_dataset(data, **options) -> Dataset:
    """A :class:`Dataset` from what a user has in hand.

    Takes a Dataset (returned as it is), a pandas DataFrame, a 2-D array of
    discrete values (columns named ``x0, x1, ...``) or the path of a CSV file
    with a header row.  ``options`` go to :meth:`Dataset.from_pandas`
    (``discretize="quantile"``, ``missing="drop"``, ...); they are refused
    with a Dataset, which is already coded.

    >>> as_dataset(pd.DataFrame({"a": ["x", "y", "x"], "b": [0, 1, 1]})).arities.tolist()
    [2, 2]
    >>> as_dataset(np.array([[0, 1], [1, 1], [1, 0]])).names
    ['x0', 'x1']
    """
    if isinstance(data, Dataset):
        if options:
            raise InputError(f"options {sorted(options)} apply when coding raw data; "
                             "this is already a Dataset")
        return data
    if isinstance(data, pd.DataFrame):
        return Dataset.from_pandas(data, **options)
    if isinstance(data, (str, Path)):
        return Dataset.from_csv(data, **options)
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise InputError(f"an array of data must be 2-D (rows x variables), got {data.ndim}-D")
        frame = pd.DataFrame(data, columns=[f"x{j}" for j in range(data.shape[1])])
        return Dataset.from_pandas(frame, **options)
    raise WrongType("data must be a Dataset, a pandas DataFrame, a 2-D numpy array or a CSV "
                    f"path, got {type(data).__name__}")


def as_frame(X) -> pd.DataFrame:
    """The raw rows of what a user has in hand, as a DataFrame before any coding.

    Takes a DataFrame (column names made text, index reset), a Dataset or
    IncompleteDataset (its state labels), the path of a CSV file with a header
    row, or a 2-D array or array-like (columns named ``x0, x1, ...``; an
    array of objects gets each column's own type).  Sparse matrices and other
    shapes are an InputError.

    >>> as_frame(np.array([[1.5, 2.0], [0.5, 1.0]])).columns.tolist()
    ['x0', 'x1']
    >>> as_frame([["a", 1], ["b", 2]])["x1"].dtype.kind        # integers, not objects
    'i'
    """
    if isinstance(X, pd.DataFrame):
        return X.rename(columns=str).reset_index(drop=True)
    if isinstance(X, (Dataset, IncompleteDataset)):
        return X.to_pandas()
    if isinstance(X, (str, bytes)) or hasattr(X, "__fspath__"):
        from .io.text import read_table      # io reads data files; data needs only this leaf

        return read_table(X)
    from scipy import sparse                 # scipy only when raw input arrives

    if sparse.issparse(X):
        raise InputError("sparse input is not supported: pass a dense array or a DataFrame")
    array = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
    if array.ndim != 2:
        raise InputError(f"data must be 2-D (rows x variables), got {array.ndim}-D. Reshape "
                         "your data with X.reshape(-1, 1) for a single variable")
    return pd.DataFrame(array, columns=[f"x{j}" for j in range(array.shape[1])]).infer_objects()


def category_order(col: pd.Series) -> list:
    """The states of a discrete column in order: a pandas Categorical's declared
    categories (a state may be unobserved), else its distinct values sorted
    (by their text when their types are mixed), missing cells left out.

    >>> category_order(pd.Series(["b", "a", None, "b"]))
    ['a', 'b']
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        return list(col.cat.categories)
    present = col.dropna().unique()
    try:
        return sorted(present)
    except TypeError:
        return sorted(present, key=str)


def _categorical(col: pd.Series):
    """Codes of :func:`category_order`'s states; NaN becomes a last state
    'missing'."""
    has_na = bool(col.isna().any())
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy().astype(np.int64)
        labels = [state_label(u) for u in col.cat.categories]
        codes[codes < 0] = len(labels)
        return codes, labels + (["missing"] if has_na else [])
    order = category_order(col)
    codes = np.full(len(col), len(order), dtype=np.int64)
    codes[col.notna().to_numpy()] = pd.Index(order).get_indexer(col.dropna().to_numpy())
    return codes, [state_label(u) for u in order] + (["missing"] if has_na else [])


def _declares_states(col: pd.Series) -> bool:
    """Whether a column is a pandas Categorical with two states or more declared."""
    return isinstance(col.dtype, pd.CategoricalDtype) and len(col.cat.categories) >= 2


def state_label(v) -> str:
    """The state label of a raw value, as :meth:`Dataset.from_pandas` names it
    (a whole float drops its ``.0``, so a column that NaN turned to floats keeps
    its integer labels).

    >>> state_label(1.0), state_label(2.5), state_label("x")
    ('1', '2.5', 'x')
    """
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _median_split(col: pd.Series):
    """Binarise at the median (value <= median -> 0); ranks keep the split of the values."""
    codes, labels = _categorical(col)
    k = len(labels) - int(bool(col.isna().any()))
    observed = codes[codes < k]
    med = float(np.median(observed))
    if (observed <= med).all():        # the median is the largest value: split below it
        cut = int(np.ceil(med))
        out = np.where(codes < cut, 0, 1)
        st = [f"<{labels[cut]}", f">={labels[cut]}"]
    else:
        cut = int(np.floor(med))
        out = np.where(codes <= cut, 0, 1)
        st = [f"<={labels[cut]}", f">{labels[cut]}"]
    if k < len(labels):
        out[codes == k] = 2
        st.append("missing")
    return out, st


def _quantile_bins(col: pd.Series, bins: int):
    cut = pd.qcut(col, q=bins, duplicates="drop")
    cats = cut.cat.categories
    codes = cut.cat.codes.to_numpy().astype(np.int64)
    labels = [str(c) for c in cats]
    if (codes < 0).any():
        codes[codes < 0] = len(labels)
        labels.append("missing")
    return codes, labels
