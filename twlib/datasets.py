"""Loaders for the data this book runs on.

* :func:`load_sklearn` - tables bundled with scikit-learn;
* :func:`load_network` - the 19 bnlearn networks;
* :func:`load_table` - the UCI and density-estimation tables, preprocessed as
  the papers did;
* :func:`load_uai` - UAI 2014 MAR instances with their reference marginals.

The collection is bundled gzip-compressed in the repository's ``data/`` folder
(sources, licences and checksums in ``data/MANIFEST.tsv``); the loaders read
the compressed files directly.  A folder named by the environment variable
``TWLIB_DATA`` with the same layout (files plain or ``.gz``) is searched first,
so a larger collection can be added without copying it in.

>>> load_network("asia").variables[:3]
['asia', 'tub', 'smoke']
>>> load_uai("Grids_12").model.kind
'MARKOV'
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .data import Dataset
from .errors import DataNotFound, InputError
from .factors import FactorModel
from .io import bif, uai
from .io.text import plain_name, read_text, resolve
from .network import BayesianNetwork

__all__ = ["data_dir", "data_roots", "data_file", "load_sklearn", "load_network", "load_table",
           "load_classification", "CLASSIFICATION_TABLES",
           "load_uai", "UAIInstance", "TABLES", "NETWORKS", "DataNotFound", "available_tables",
           "available_networks", "available_uai", "UAI_TASKS", "PRESETS"]

NETWORKS = ("asia", "cancer", "earthquake", "survey", "sachs", "child", "insurance", "alarm",
            "win95pts", "hepar2", "andes", "pathfinder", "barley", "link", "diabetes", "munin",
            "munin2", "munin3", "munin4")
SKLEARN_SETS = ("wine", "breast_cancer", "iris", "digits")


def data_dir() -> Path:
    """The collection bundled with the repository (its ``data/`` folder)."""
    return Path(__file__).resolve().parent.parent / "data"


def data_roots() -> list:
    """The folders searched for data, in order: ``$TWLIB_DATA`` if set, then :func:`data_dir`."""
    env = os.environ.get("TWLIB_DATA")
    roots = [Path(env).expanduser().resolve()] if env else []
    return roots + [data_dir()]


def data_file(relpath: str) -> Path:
    """The file ``relpath`` (or its ``.gz``) in the first data root that holds it.

    >>> data_file("networks/asia.bif.gz").name
    'asia.bif.gz'
    >>> data_file("uci/zoo/zoo.data").name in ("zoo.data", "zoo.data.gz")   # as TWLIB_DATA has it
    True
    >>> (data_dir() / "uci/zoo/zoo.data.gz").is_file()                     # the bundled copy
    True
    """
    roots = data_roots()
    for root in roots:
        try:
            return resolve(root / relpath)
        except DataNotFound:
            continue
    where = ", ".join(str(root / relpath) for root in roots)
    raise DataNotFound(f"{relpath} is not available: looked for {where} (and .gz). The "
                       "repository's data/ folder should hold it; TWLIB_DATA can name a folder "
                       "with more data.")


def _exists(relpath: str) -> bool:
    try:
        data_file(relpath)
    except DataNotFound:
        return False
    return True


def _glob(pattern: str) -> list:
    """Relative paths (without ``.gz``) matching ``pattern`` in any data root."""
    found = set()
    for root in data_roots():
        for path in root.glob(pattern):
            rel = path.relative_to(root)
            found.add(str(rel.parent / plain_name(rel)))
    return sorted(found)


# ---------------------------------------------------------------- scikit-learn
def load_sklearn(name: str, *, discretize: str = "median", bins: int = 4) -> Dataset:
    """A scikit-learn bundled table as a discrete data set (works offline).

    The class is the first column ``class``; features are discretised with
    ``discretize`` ("median" binarisation as in Nie et al. 2016, or "quantile"
    with ``bins`` bins).  Constant columns (blank pixels of ``digits``) are dropped.

    >>> load_sklearn("wine").n_vars
    14
    """
    from sklearn import datasets as skd

    loaders = {"wine": skd.load_wine, "breast_cancer": skd.load_breast_cancer,
               "iris": skd.load_iris, "digits": skd.load_digits}
    if name not in loaders:
        raise InputError(f"unknown scikit-learn data set {name!r}; choose one of {SKLEARN_SETS}")
    bunch = loaders[name]()
    features = [str(f).replace(" ", "_") for f in bunch.feature_names]
    df = pd.DataFrame(bunch.data, columns=features)
    df.insert(0, "class", [str(bunch.target_names[t]) for t in bunch.target])
    return Dataset.from_pandas(df, discretize=discretize, bins=bins, columns=features,
                               drop_constant=True)


# -------------------------------------------------------------------- networks
def available_networks() -> list:
    """Names of the bnlearn networks in the data roots."""
    return [Path(p).name[:-len(".bif")] for p in _glob("networks/*.bif*")]


def load_network(name: str) -> BayesianNetwork:
    """A bnlearn network by name (``"alarm"``, ``"child"``, ...; see :data:`NETWORKS`)."""
    try:
        path = data_file(f"networks/{name}.bif.gz")
    except DataNotFound as exc:
        known = sorted(set(NETWORKS) | set(available_networks()))
        raise DataNotFound(f"unknown network {name!r}; known: {known}. ({exc})") from None
    net = bif.read(path)
    net.name = name
    return net


# ------------------------------------------------------------------------- UAI
@dataclass(frozen=True)
class UAIInstance:
    """A UAI 2014 instance: the model, its evidence and the reference solutions it
    comes with (None where it has none): the exact marginals (MAR task, six
    digits), the competition's MAP assignment (one state index per variable;
    found by subproblem-tree calibration, so not always optimal) and the PR
    task's ``log P(e)`` (six digits of its base-10 log)."""

    name: str
    category: str
    model: FactorModel
    evidence: dict
    marginals: dict | None          # variable -> reference probability vector
    map_state: np.ndarray | None = None
    log_z: float | None = None      # natural log of P(e) (of Z(e) for a Markov network)


UAI_TASKS = ("MAR", "MAP", "PR")


def available_uai(*, category: str | None = None, task: str = "MAR") -> list:
    """Names of the UAI instances (``"Grids_12"``, ...) that have a reference
    solution of ``task`` (``"MAR"``, ``"MAP"`` or ``"PR"``), optionally of one
    category.

    >>> "Grids_30" in available_uai(task="MAP"), "Grids_30" in available_uai()
    (True, False)
    """
    if task not in UAI_TASKS:
        raise InputError(f"task must be one of {UAI_TASKS}, got {task!r}")
    suffix = f".uai.{task}"
    return [Path(p).name[:-len(suffix)] for p in _glob(f"uai/{category or '*'}/*{suffix}*")
            if p.endswith(suffix)]


def load_uai(name: str) -> UAIInstance:
    """A UAI 2014 instance by name, e.g. ``"Grids_12"`` (category = the name's
    prefix), with whichever reference solutions the collection holds."""
    category = name.rsplit("_", 1)[0]
    base = f"uai/{category}/{name}.uai"
    try:
        path = data_file(base)
    except DataNotFound as exc:
        known = sorted(set(available_uai()) | set(available_uai(task="MAP")))
        raise DataNotFound(f"unknown UAI instance {name!r}; known: {known}. ({exc})") from None
    model = uai.read(path)
    evidence = uai.read_evidence(data_file(base + ".evid"))
    references = {}
    for task, reader in (("MAR", uai.read_mar), ("MAP", uai.read_map), ("PR", uai.read_pr)):
        try:
            references[task] = reader(data_file(f"{base}.{task}"))
        except DataNotFound:
            references[task] = None
    marginals = (None if references["MAR"] is None
                 else dict(zip(model.variables, references["MAR"])))
    return UAIInstance(name, category, model, evidence, marginals, references["MAP"],
                       references["PR"])


# ---------------------------------------------------------------------- tables
@dataclass(frozen=True)
class TableSpec:
    """How to read one table: files under the data directory and pandas options."""

    files: tuple
    read: dict = field(default_factory=dict)
    names: tuple = ()
    drop: tuple = ()
    class_column: str | None = None
    missing: str = "error"            # Dataset.from_pandas policy, or "drop_columns"
    note: str = ""


def _prefixed(prefix, n):
    return tuple(f"{prefix}{i}" for i in range(1, n + 1))


TABLES = {
    "nursery": TableSpec(("uci/nursery/nursery.data",), {"header": None},
                         ("parents", "has_nurs", "form", "children", "housing", "finance",
                          "social", "health", "class"), class_column="class"),
    "breast": TableSpec(("uci/breast-cancer-wisconsin/breast-cancer-wisconsin.csv",),
                        {"header": None, "na_values": "?"},
                        ("id",) + _prefixed("f", 9) + ("class",), drop=("id",),
                        class_column="class", missing="drop",
                        note="16 rows with a missing Bare Nuclei value are dropped"),
    "housing": TableSpec(("uci/housing/housing.data",), {"header": None, "sep": r"\s+"},
                         ("CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX",
                          "PTRATIO", "B", "LSTAT", "MEDV")),
    "adult": TableSpec(("uci/adult/adult.data",),
                       {"header": None, "na_values": "?", "skipinitialspace": True},
                       ("age", "workclass", "fnlwgt", "education", "education_num",
                        "marital_status", "occupation", "relationship", "race", "sex",
                        "capital_gain", "capital_loss", "hours_per_week", "native_country",
                        "class"), class_column="class", missing="drop",
                       note="rows with a missing value are dropped (30,162 remain)"),
    "zoo": TableSpec(("uci/zoo/zoo.data",), {"header": None},
                     ("animal", "hair", "feathers", "eggs", "milk", "airborne", "aquatic",
                      "predator", "toothed", "backbone", "breathes", "venomous", "fins", "legs",
                      "tail", "domestic", "catsize", "type"), drop=("animal",),
                     class_column="type"),
    "letter": TableSpec(("uci/letter/letter-recognition.data",), {}, class_column="Letter"),
    "mushroom": TableSpec(("uci/mushroom/agaricus-lepiota.data",), {"na_values": "?"},
                          class_column="edibility", missing="state",
                          note="missing stalk-root kept as a state; constant veil-type dropped"),
    "wdbc": TableSpec(("uci/wdbc/wdbc.data",), {"header": None, "skiprows": 1},
                      ("id", "diagnosis") + _prefixed("f", 30), drop=("id",),
                      class_column="diagnosis"),
    "communities": TableSpec(("uci/communities/communities.data",), {"na_values": "?"},
                             missing="drop_columns",
                             note="the 23 columns with missing values are dropped (100 remain)"),
    "iris": TableSpec(("uci/iris/iris.csv",), {"header": None},
                      ("sepal_length", "sepal_width", "petal_length", "petal_width", "class"),
                      class_column="class"),
    "bupa": TableSpec(("uci/liver-bupa/bupa.data",), {}, drop=("DATASET",)),
    "car": TableSpec(("uci/car/car.data",), {}, class_column="accept"),
    "acute": TableSpec(("uci/acute-inflammations/diagnosis.data",),
                       {"header": None, "sep": "\t", "encoding": "utf-16", "decimal": ","},
                       ("temperature", "nausea", "lumbar_pain", "urine_pushing",
                        "micturition_pains", "urethra_burning", "bladder_inflammation",
                        "nephritis")),
    "abalone": TableSpec(("uci/abalone/abalone.csv",), {"header": None},
                         ("sex", "length", "diameter", "height", "whole_weight", "shucked_weight",
                          "viscera_weight", "shell_weight", "rings"), class_column="rings"),
    "cmc": TableSpec(("uci/cmc/cmc.data",), {}, class_column="contraceptive_method_use"),
    "wine": TableSpec(("uci/wine/wine.data",), {"header": None},
                      ("class",) + _prefixed("f", 13), class_column="class"),
    "crx": TableSpec(("uci/credit-crx/crx.data",), {"na_values": "?"}, class_column="A16",
                     missing="drop"),
    "voting": TableSpec(("uci/house-votes-84/house-votes-84.data",),
                        {"na_values": "?", "skipinitialspace": True}, class_column="Class",
                        missing="state", note="'?' (did not vote) kept as a third value"),
    "hepatitis": TableSpec(("uci/hepatitis/hepatitis.data",), {"header": None, "na_values": -9},
                           ("class", "age", "sex", "steroid", "antivirals", "fatigue", "malaise",
                            "anorexia", "liver_big", "liver_firm", "spleen_palpable", "spiders",
                            "ascites", "varices", "bilirubin", "alk_phosphate", "sgot",
                            "albumin", "protime", "histology"), class_column="class",
                           missing="state", note="missing values kept as a state"),
    "spect": TableSpec(("uci/spect/SPECT.train", "uci/spect/SPECT.test"), {"header": None},
                       ("class",) + _prefixed("f", 22), class_column="class"),
    "spect_train": TableSpec(("uci/spect/SPECT.train",), {"header": None},
                             ("class",) + _prefixed("f", 22), class_column="class",
                             note="the SPECT training split alone (79 rows in this copy)"),
    "spectf": TableSpec(("uci/spectf/SPECTF.train", "uci/spectf/SPECTS.valid",
                         "uci/spectf/SPECTF.test"), {"header": None},
                        ("class",) + _prefixed("f", 44), class_column="class"),
    "parkinsons": TableSpec(("uci/parkinsons/parkinsons.data",), {}, drop=("name",),
                            class_column="status"),
    "lung_cancer": TableSpec(("uci/lung-cancer/lung-cancer.data",),
                             {"header": None, "na_values": "?"},
                             ("class",) + _prefixed("a", 56), class_column="class",
                             missing="state"),
    "segmentation": TableSpec(("uci/image-segmentation/segmentation.test",), {},
                              class_column="class"),
    "steel": TableSpec(("uci/steel-plates-faults/Faults.NNA",), {"header": None, "sep": "\t"},
                       note="the 7 one-hot fault columns are collapsed into one class"),
    "wall_following": TableSpec(("uci/wall-following/sensor_readings_24.data",), {},
                                class_column="OUTPUT"),
}
# Preprocessing of the papers whose experiments the chapters rerun.
PRESETS = {
    # Nie et al. 2016, Table 1: every non-binary variable binarised at its median
    "nie2016": {"discretize": "median", "discretize_class": True},
    # Wu 2010, Table 4.1: variables with more than three states binarised, missing
    # cells filled with random values
    "wu2010": {"discretize": "median", "keep_states": 3, "discretize_class": True,
               "missing": "random"},
}
DENSITY_SETS = ("nltcs", "plants", "baudio", "jester", "bnetflix", "accidents", "pumsb_star")
#: The DEBD tables of 500+ variables whose training splits the public snapshot holds.
LARGE_DENSITY_SETS = ("nips", "moviereview")
#: DEBD tables outside Chapter 9's comparison (dna, 180 variables: the start-up benchmark).
OTHER_DENSITY_SETS = ("dna",)
_ALL_DENSITY = DENSITY_SETS + LARGE_DENSITY_SETS + OTHER_DENSITY_SETS


def available_tables() -> list:
    """Names of the tables (and density sets) whose files are in the data directory."""
    names = [n for n, s in TABLES.items() if all(_exists(f) for f in s.files)]
    names += [n for n in _ALL_DENSITY if _exists(f"density/{n}/{n}.train.data")]
    return sorted(names)


def _read_frame(name: str) -> pd.DataFrame:
    spec = TABLES[name]
    paths = [data_file(f) for f in spec.files]
    kw = dict(spec.read)
    if spec.names:
        kw["names"] = list(spec.names)
    frames = [pd.read_csv(p, **kw) for p in paths]
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if name == "communities":
        df = df.reset_index(drop=True)   # the 5 unnamed leading fields land in the index
    if name == "steel":
        columns = read_text(data_file("uci/steel-plates-faults/Faults27x7_var")).split()
        df.columns = columns
        faults = columns[27:]
        df = df[columns[:27]].assign(fault=np.array(faults)[df[faults].to_numpy().argmax(axis=1)])
    df = df.drop(columns=list(spec.drop))
    df.columns = [str(c).strip() for c in df.columns]
    if spec.class_column and spec.class_column in df.columns:
        df[spec.class_column] = df[spec.class_column].astype(str)
    return df


#: The UCI tables with a class column (steel's is made of its seven fault indicators).
CLASSIFICATION_TABLES = ("abalone", "adult", "breast", "car", "cmc", "crx", "hepatitis", "iris",
                         "letter", "lung_cancer", "mushroom", "nursery", "parkinsons",
                         "segmentation", "spect", "spectf", "steel", "voting", "wall_following",
                         "wdbc", "wine", "zoo")


def load_classification(name: str) -> tuple[pd.DataFrame, pd.Series]:
    """A UCI table's raw features (numbers stay numbers, missing cells NaN) and its
    class, for classifiers.

    >>> X, y = load_classification("wine")
    >>> X.shape, y.nunique()
    ((178, 13), 3)
    """
    if name not in CLASSIFICATION_TABLES:
        raise InputError(f"unknown classification table {name!r}; known: "
                         f"{list(CLASSIFICATION_TABLES)}")
    frame = _read_frame(name)
    target = TABLES[name].class_column or "fault"
    return frame.drop(columns=[target]), frame[target].rename("class")


def load_table(name: str, *, discretize: str | None = "median", bins: int = 4,
               split: str = "train", discretize_class: bool = False, keep_states: int = 2,
               missing: str | None = None, random_state=0, preset: str | None = None) -> Dataset:
    """A UCI or density-estimation table, ready to learn from.

    Parameters
    ----------
    name : str
        A key of :data:`TABLES` (``"adult"``, ``"letter"``, ``"zoo"``, ...) or a
        density set (``"nltcs"``, ``"plants"``, ``"baudio"``, ...).
    discretize : {"median", "quantile", None}
        Default: every non-binary column is binarised at its median, the
        preprocessing of Nie et al. (2016, Table 1).
    discretize_class : bool
        Also discretise the class column (Nie et al. binarised every non-binary
        variable); by default the class keeps its values.
    keep_states : int
        Median binarisation leaves columns with at most this many values alone.
    missing : str, optional
        Override the table's missing-value policy (see :meth:`Dataset.from_pandas`).
    random_state :
        Seed for ``missing="random"``.
    preset : {"nie2016", "wu2010"}, optional
        A paper's preprocessing (see :data:`PRESETS`); overrides the options above.
    bins : int
        Bins for ``"quantile"``.
    split : {"train", "valid", "test"}
        For density sets only: which of the fixed splits.

    Raises
    ------
    DataNotFound
        The files are absent; the message says where we looked.
    """
    if preset is not None:
        if preset not in PRESETS:
            raise InputError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}")
        options = PRESETS[preset]
        discretize = options.get("discretize", discretize)
        discretize_class = options.get("discretize_class", discretize_class)
        keep_states = options.get("keep_states", keep_states)
        missing = options.get("missing", missing)
    if name in _ALL_DENSITY:
        if split not in ("train", "valid", "test"):
            raise InputError(f"split must be 'train', 'valid' or 'test', got {split!r}")
        path = data_file(f"density/{name}/{name}.{split}.data")
        arr = pd.read_csv(path, header=None, dtype=np.uint8).to_numpy()
        names = [f"v{j}" for j in range(arr.shape[1])]
        return Dataset(arr, names, [["0", "1"]] * arr.shape[1])
    if name not in TABLES:
        raise InputError(f"unknown table {name!r}; known: "
                         f"{sorted(TABLES) + list(_ALL_DENSITY)}")
    spec = TABLES[name]
    df = _read_frame(name)
    missing = missing or spec.missing
    if missing == "drop_columns":
        df = df.loc[:, df.notna().all()]
        missing = "error"
    features = [c for c in df.columns if discretize_class or c != spec.class_column]
    return Dataset.from_pandas(df, discretize=discretize, bins=bins, columns=features,
                               missing=missing, drop_constant=True, keep_states=keep_states,
                               random_state=random_state)

