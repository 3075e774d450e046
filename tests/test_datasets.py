import gzip
import hashlib

import pandas as pd
import pytest

from twlib import datasets


@pytest.mark.parametrize("name, n_vars", [("wine", 14), ("breast_cancer", 31), ("iris", 5),
                                          ("digits", 62)])
def test_sklearn_sets_load_offline_and_binarise(name, n_vars):
    ds = datasets.load_sklearn(name)
    assert ds.n_vars == n_vars and ds.names[0] == "class"
    assert ds.arities[1:].max() == 2


EXPECTED = {"adult": (30162, 15), "letter": (20000, 17), "zoo": (101, 17), "car": (1728, 7),
            "nursery": (12960, 9), "mushroom": (8124, 22), "wdbc": (569, 31),
            "communities": (1994, 100), "voting": (435, 17), "steel": (1941, 28),
            "spectf": (267, 45), "nltcs": (16181, 16), "plants": (17412, 69),
            "nips": (400, 500), "moviereview": (1600, 1001), "dna": (1600, 180)}


@pytest.mark.parametrize("name", sorted(datasets.TABLES) + list(datasets.DENSITY_SETS)
                         + list(datasets.LARGE_DENSITY_SETS) + list(datasets.OTHER_DENSITY_SETS))
def test_every_table_loads(name):
    ds = datasets.load_table(name)
    assert ds.n_rows > 20 and ds.n_vars >= 5
    if name in EXPECTED:
        assert (ds.n_rows, ds.n_vars) == EXPECTED[name]


def test_median_binarisation_leaves_only_the_class_wider():
    ds = datasets.load_table("letter")
    assert ds.arities[0] == 26 and ds.arities[1:].max() == 2


def test_unknown_names_say_where_they_looked():
    with pytest.raises(datasets.DataNotFound, match=r"unknown network 'nosuch'.*looked for"):
        datasets.load_network("nosuch")
    with pytest.raises(ValueError, match="unknown table"):
        datasets.load_table("no-such-table")
    with pytest.raises(datasets.DataNotFound, match=r"looked for .*nosuch\.data"):
        datasets.data_file("uci/nosuch.data")


def test_bundled_files_match_the_manifest():
    manifest = pd.read_csv(datasets.data_dir() / "MANIFEST.tsv", sep="\t")
    bundled = {str(p.relative_to(datasets.data_dir()))
               for p in datasets.data_dir().glob("*/**/*.gz")}
    assert bundled == set(manifest["path"])
    for row in manifest.itertuples():
        path = datasets.data_dir() / row.path
        assert path.stat().st_size < 5 * 2**20
        raw = gzip.decompress(path.read_bytes())
        assert (len(raw), hashlib.sha256(raw).hexdigest()) == (row.bytes, row.sha256), row.path
    assert manifest["licence"].notna().all() and manifest["source"].notna().all()


def test_twlib_data_is_searched_first_and_the_bundle_stays_behind_it(monkeypatch, tmp_path):
    (tmp_path / "uci" / "zoo").mkdir(parents=True)
    rows = "\n".join(f"a{i},{i % 2},0,1,0,0,1,0,1,1,1,0,0,4,1,0,{i % 3},{i % 7 + 1}"
                      for i in range(30))
    (tmp_path / "uci" / "zoo" / "zoo.data").write_text(rows + "\n")
    monkeypatch.setenv("TWLIB_DATA", str(tmp_path))
    assert datasets.data_roots() == [tmp_path.resolve(), datasets.data_dir()]
    assert datasets.load_table("zoo").n_rows == 30                 # the override's copy
    assert datasets.load_table("car").n_rows == 1728               # the bundled copy
    assert datasets.load_network("asia").variables[0] == "asia"


def test_data_file_falls_back_to_the_bundled_gz(monkeypatch):
    monkeypatch.delenv("TWLIB_DATA", raising=False)
    assert datasets.data_file("uci/zoo/zoo.data").name == "zoo.data.gz"
