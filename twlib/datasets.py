"""Loaders for the data this book runs on.

* :func:`load_sklearn` - tables bundled with scikit-learn (always available,
  the quick-start default);
* :func:`load_network` - bnlearn networks from ``$TWLIB_DATA/networks``, or,
  when that folder is missing, from the PyPI wheel that ships them;
* :func:`load_table` - the UCI and density-estimation tables in
  ``$TWLIB_DATA`` (see its ``MANIFEST.tsv``), preprocessed as the papers did.

The data directory is ``$TWLIB_DATA`` if set, else the project's ``data/``.
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .data import Dataset
from .io import bif
from .network import BayesianNetwork

__all__ = ["data_dir", "load_sklearn", "load_network", "load_table", "TABLES", "NETWORKS",
           "DataNotFound", "available_tables", "available_networks", "PRESETS"]

# The bnlearn networks as packaged in this PyPI wheel (see MANIFEST.tsv's source column).
NETWORK_WHEEL = ("pgmpy", "0.1.26")
NETWORK_WHEEL_PATH = "pgmpy/utils/example_models/{name}.bif.gz"
NETWORKS = ("asia", "cancer", "earthquake", "survey", "sachs", "child", "insurance", "alarm",
            "win95pts", "hepar2", "andes", "pathfinder", "barley", "link", "diabetes", "munin",
            "munin2", "munin3", "munin4")
SKLEARN_SETS = ("wine", "breast_cancer", "iris", "digits")


class DataNotFound(FileNotFoundError):
    """A data set is not on this machine; the message says where we looked."""


def data_dir() -> Path:
    """``$TWLIB_DATA`` if set, else the project's ``data/`` folder."""
    env = os.environ.get("TWLIB_DATA")
    if env:
        return Path(env).expanduser().resolve()
    return Path(__file__).resolve().parent.parent / "data"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "twlib"


# ---------------------------------------------------------------- scikit-learn
def load_sklearn(name: str, discretize: str = "median", bins: int = 4) -> Dataset:
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
        raise ValueError(f"unknown scikit-learn data set {name!r}; choose one of {SKLEARN_SETS}")
    bunch = loaders[name]()
    features = [str(f).replace(" ", "_") for f in bunch.feature_names]
    df = pd.DataFrame(bunch.data, columns=features)
    df.insert(0, "class", [str(bunch.target_names[t]) for t in bunch.target])
    return Dataset.from_pandas(df, discretize=discretize, bins=bins, columns=features,
                               drop_constant=True)


# -------------------------------------------------------------------- networks
def available_networks() -> list:
    """Names of the networks present in the data directory."""
    folder = data_dir() / "networks"
    return sorted(p.name[:-len(".bif.gz")] for p in folder.glob("*.bif.gz"))


def load_network(name: str, download: bool = True) -> BayesianNetwork:
    """A bnlearn network by name (``"alarm"``, ``"child"``, ...).

    Looks for ``<data dir>/networks/<name>.bif.gz``.  If it is not there and
    ``download`` is true, fetches the PyPI wheel that carries the bnlearn files
    (pgmpy 0.1.26) with pip, once, into ``~/.cache/twlib``, and reads the file
    from inside it.
    """
    path = data_dir() / "networks" / f"{name}.bif.gz"
    if path.exists():
        net = bif.read(path)
        net.name = name
        return net
    if name not in NETWORKS:
        raise DataNotFound(f"unknown network {name!r}: not at {path} and not one of {NETWORKS}")
    if not download:
        raise DataNotFound(_missing_message(f"network {name!r}", [path]))
    wheel = _network_wheel()
    member = NETWORK_WHEEL_PATH.format(name=name)
    with zipfile.ZipFile(wheel) as zf:
        raw = zf.read(member)
    net = bif.loads(gzip.decompress(raw).decode("utf-8"), source=f"{wheel.name}:{member}")
    net.name = name
    return net


def _network_wheel() -> Path:
    pkg, version = NETWORK_WHEEL
    folder = _cache_dir() / "wheels"
    found = sorted(folder.glob(f"{pkg}-{version}-*.whl"))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--only-binary", ":all:", "-d", str(folder), f"{pkg}=={version}"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(folder.glob(f"{pkg}-{version}-*.whl"))
    if result.returncode != 0 or not found:
        raise DataNotFound(
            f"the bnlearn networks are not in {data_dir() / 'networks'} and downloading "
            f"{pkg}=={version} from PyPI failed: {result.stderr.strip()[-300:]}\n"
            "Set TWLIB_DATA to a folder holding networks/<name>.bif.gz.")
    return found[0]


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


def available_tables() -> list:
    """Names of the tables (and density sets) whose files are in the data directory."""
    root = data_dir()
    names = [n for n, s in TABLES.items() if all((root / f).exists() for f in s.files)]
    names += [n for n in DENSITY_SETS if (root / "density" / n / f"{n}.train.data").exists()]
    return sorted(names)


def _missing_message(what, paths) -> str:
    where = ", ".join(str(p) for p in paths)
    return (f"{what} is not available: looked for {where}. Set the environment variable "
            "TWLIB_DATA to the folder that holds the benchmark data (the one with MANIFEST.tsv), "
            "e.g. export TWLIB_DATA=../shared/data")


def _read_frame(name: str) -> pd.DataFrame:
    spec = TABLES[name]
    paths = [data_dir() / f for f in spec.files]
    absent = [p for p in paths if not p.exists()]
    if absent:
        raise DataNotFound(_missing_message(f"table {name!r}", absent))
    kw = dict(spec.read)
    if spec.names:
        kw["names"] = list(spec.names)
    frames = [pd.read_csv(p, **kw) for p in paths]
    df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if name == "communities":
        df = df.reset_index(drop=True)   # the 5 unnamed leading fields land in the index
    if name == "steel":
        columns = (data_dir() / "uci/steel-plates-faults/Faults27x7_var").read_text().split()
        df.columns = columns
        faults = columns[27:]
        df = df[columns[:27]].assign(fault=np.array(faults)[df[faults].to_numpy().argmax(axis=1)])
    df = df.drop(columns=list(spec.drop))
    df.columns = [str(c).strip() for c in df.columns]
    if spec.class_column and spec.class_column in df.columns:
        df[spec.class_column] = df[spec.class_column].astype(str)
    return df


def load_table(name: str, discretize: str | None = "median", bins: int = 4,
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
        The files are absent; the message says where we looked and how to set
        ``TWLIB_DATA``.
    """
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}")
        options = PRESETS[preset]
        discretize = options.get("discretize", discretize)
        discretize_class = options.get("discretize_class", discretize_class)
        keep_states = options.get("keep_states", keep_states)
        missing = options.get("missing", missing)
    if name in DENSITY_SETS:
        if split not in ("train", "valid", "test"):
            raise ValueError(f"split must be 'train', 'valid' or 'test', got {split!r}")
        path = data_dir() / "density" / name / f"{name}.{split}.data"
        if not path.exists():
            raise DataNotFound(_missing_message(f"density set {name!r}", [path]))
        arr = np.loadtxt(path, delimiter=",", dtype=np.uint8, ndmin=2)
        names = [f"v{j}" for j in range(arr.shape[1])]
        return Dataset(arr, names, [["0", "1"]] * arr.shape[1])
    if name not in TABLES:
        raise ValueError(f"unknown table {name!r}; known: {sorted(TABLES) + list(DENSITY_SETS)}")
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

