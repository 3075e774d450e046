import gzip

import numpy as np
import pytest

from twlib import datasets
from twlib.io import bif


@pytest.mark.parametrize("name", datasets.NETWORKS)
def test_round_trip_reproduces_identical_cpts(name, tmp_path):
    net = datasets.load_network(name)
    path = tmp_path / f"{name}.bif.gz"
    bif.write(net, path, safe_names=False)
    assert bif.read(path).allclose(net, atol=0.0)
    bif.write(net, tmp_path / f"{name}.bif")           # peer-safe names, same numbers
    back = bif.read(tmp_path / f"{name}.bif")
    assert all(np.array_equal(back.cpt(bif.safe_name(v)), net.cpt(v)) for v in net.variables[:50])


def test_child_odd_state_names_are_read_and_written_safely(tmp_path):
    net = datasets.load_network("child")
    assert "Asy/Patch" in net.states("ChestXray")
    text = bif.dumps(net)
    assert "Asy/Patch" not in text and "Asy_Patch" in text


@pytest.mark.parametrize("name", ["child", "alarm", "insurance"])
def test_peers_read_what_twlib_writes(name, tmp_path):
    pgmpy_readwrite = pytest.importorskip("pgmpy.readwrite")
    gum = pytest.importorskip("pyagrum")
    net = datasets.load_network(name)
    path = tmp_path / f"{name}.bif"
    bif.write(net, path)
    theirs = pgmpy_readwrite.BIFReader(str(path)).get_model()
    assert len(theirs.nodes()) == len(net.variables)
    v = net.variables[-1]
    cpd = theirs.get_cpds(bif.safe_name(v))
    assert [bif.safe_name(p) for p in net.parents(v)] == list(cpd.variables[1:])
    assert np.allclose(cpd.get_values().reshape(net.cpt(v).shape), net.cpt(v))
    bn = gum.loadBN(str(path))
    assert bn.size() == len(net.variables)
    assert bn.sizeArcs() == len(net.arcs)


@pytest.mark.parametrize("text, line, message", [
    ("network n {\n}\nvariable a {\n  type discrete [ 3 ] { x, y };\n}\n", 4, "declares 3 states"),
    ("variable a {\n  type discrete [ 2 ] { x, y };\n}\nprobability ( a ) {\n  table 0.5, 0.x;\n}\n",
     5, "expected a probability"),
    ("variable a {\n  type discrete [ 2 ] { x, y };\n}\nprobability ( a | b ) {\n  table 1, 0;\n}\n",
     4, "parent 'b' of 'a' is not declared"),
    ("variable a {\n  type discrete [ 2 ] { x, y };\n}\nprobability ( a ) {\n  table 0.5, 0.5;\n",
     5, "file ends early"),
    ("varible a {\n}\n", 1, "expected 'network', 'variable' or 'probability'"),
    ("variable a {\n  type discrete [ 2 ] { x, y };\n}\nvariable b {\n  type discrete [ 2 ] { x, y };\n}\n"
     "probability ( a ) {\n  table 0.5, 0.5;\n}\nprobability ( b | a ) {\n  (x) 0.5, 0.5;\n  (w) 1, 0;\n}\n",
     12, "unknown parent state"),
])
def test_malformed_files_report_the_line(text, line, message):
    with pytest.raises(bif.BIFError, match=rf"line {line}: .*{message}"):
        bif.loads(text)


def test_invalid_probabilities_are_reported():
    text = "variable a {\n type discrete [ 2 ] { x, y };\n}\nprobability ( a ) {\n table 0.5, 0.6;\n}\n"
    with pytest.raises(bif.BIFError, match="do not sum to 1"):
        bif.loads(text)


def test_gzip_and_plain_files_read_alike(tmp_path):
    net = datasets.load_network("asia")
    plain = tmp_path / "asia.bif"
    plain.write_text(bif.dumps(net))
    zipped = tmp_path / "asia.bif.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert bif.read(plain).allclose(bif.read(zipped))


def test_interval_states_survive_a_round_trip_and_other_readers_skip_them(tmp_path):
    import pyagrum as gum
    from pgmpy.readwrite import BIFReader

    from twlib.network import BayesianNetwork

    labels = ["(-inf, 2.5]", "(2.5, inf)"]
    net = BayesianNetwork(["x", "c"], {"x": labels, "c": ["a", "b"]}, {"x": ["c"]},
                          {"c": np.array([0.3, 0.7]),
                           "x": np.array([[0.9, 0.2], [0.1, 0.8]])})
    path = tmp_path / "cut.bif"
    bif.write(net, path)
    back = bif.read(path)
    assert back.states("x") == labels and back.states("c") == ["a", "b"]
    np.testing.assert_array_equal(back.cpt("x"), net.cpt("x"))
    assert len(gum.loadBN(str(path)).variable("x").labels()) == 2
    assert len(BIFReader(str(path)).get_model().get_cpds("x").state_names["x"]) == 2
