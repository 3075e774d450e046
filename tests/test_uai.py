import numpy as np
import pytest

from twlib import datasets
from twlib.cli import main
from twlib.inference import FactorModel, JunctionTree
from twlib.io import uai

SMALL = ["Segmentation/Segmentation_11", "Grids/Grids_11", "Grids/Grids_12", "Grids/Grids_13",
         "Grids/Grids_14", "CSP/CSP_12"]


def six_digits(log_z):
    """Half a unit in the sixth significant digit of log10 P(e), as a natural log:
    the precision of the PR references."""
    log10 = abs(log_z) / np.log(10)
    return 0.5 * 10 ** (np.floor(np.log10(max(log10, 1e-3))) - 5) * np.log(10)


@pytest.mark.parametrize("stem", SMALL)
def test_cli_marginals_equal_the_competition_solutions(stem, tmp_path, monkeypatch):
    model = datasets.data_file(f"uai/{stem}.uai")                 # the bundled .uai.gz
    evidence = datasets.data_file(f"uai/{stem}.uai.evid")
    monkeypatch.chdir(tmp_path)
    assert main(["uai", str(model), str(evidence), "0", "MAR"]) == 0
    ours = uai.read_mar(tmp_path / f"{stem.split('/')[1]}.uai.MAR")
    reference = uai.read_mar(datasets.data_file(f"uai/{stem}.uai.MAR"))
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference):
        assert np.allclose(a, b, atol=1e-6)            # the reference prints 6 digits


def test_load_uai_bundles_model_evidence_and_reference():
    inst = datasets.load_uai("Grids_12")
    assert inst.category == "Grids" and inst.model.name == "Grids_12.uai"
    assert len(inst.marginals) == len(inst.model.variables) == 100
    assert all(abs(p.sum() - 1) < 1e-5 for p in inst.marginals.values())
    assert "Grids_12" in datasets.available_uai(category="Grids")
    with pytest.raises(datasets.DataNotFound, match="unknown UAI instance 'Grids_99'"):
        datasets.load_uai("Grids_99")


def test_cli_conditions_past_the_memory_budget(tmp_path, monkeypatch, capsys):
    model = datasets.data_file("uai/Grids/Grids_12.uai")
    monkeypatch.chdir(tmp_path)
    evidence = datasets.data_file("uai/Grids/Grids_12.uai.evid")
    for task in ("MAR", "PR"):
        assert main(["uai", str(model), str(evidence), "0", task, "--memory-gb", "0.0001"]) == 0
        assert "exact; cutset conditioning (" in capsys.readouterr().err
    inst = datasets.load_uai("Grids_12")
    for ours, v in zip(uai.read_mar(tmp_path / "Grids_12.uai.MAR"), inst.model.variables):
        assert np.allclose(ours, inst.marginals[v], atol=1e-6)
    assert uai.read_pr(tmp_path / "Grids_12.uai.PR") == pytest.approx(inst.log_z,
                                                                      abs=six_digits(inst.log_z))


@pytest.mark.parametrize("name", [stem.split("/")[1] for stem in SMALL]
                         + ["DBN_11", "ObjectDetection_11"])
def test_partition_functions_equal_the_competition_solutions(name):
    inst = datasets.load_uai(name)
    tree = JunctionTree(inst.model)
    assert tree.log_probability_of_evidence(inst.evidence) == pytest.approx(
        inst.log_z, abs=six_digits(inst.log_z))


def test_bayes_file_matches_the_network(tmp_path):
    net = datasets.load_network("asia")
    index = {v: str(i) for i, v in enumerate(net.variables)}
    lines = ["BAYES", str(len(net.variables)), " ".join(str(net.arity(v)) for v in net.variables),
             str(len(net.variables))]
    for v in net.variables:
        scope = net.parents(v) + [v]
        lines.append(" ".join([str(len(scope))] + [index[u] for u in scope]))
    for v in net.variables:
        table = np.moveaxis(np.asarray(net.cpt(v)), 0, -1)        # child last, varying fastest
        lines.append(f"{table.size}\n" + " ".join(repr(float(x)) for x in table.ravel()))
    model = uai.loads("\n".join(lines))
    ours = JunctionTree(model).posteriors({index["xray"]: 0})
    direct = JunctionTree(net).posteriors({"xray": net.states("xray")[0]})
    for v in net.variables:
        assert np.allclose(ours[index[v]], direct[v], atol=1e-12)


@pytest.mark.parametrize("text, message", [
    ("MARKOV\n2\n2 2\n1\n2 0 1\n3\n1 2 3\n", r"factor 0 \(token 8\) declares 3 entries"),
    ("MARKOV\n2\n2 2\n1\n2 0 5\n4\n1 2 3 4\n", "outside 0..1"),
    ("MARKOV\n2\n2 2\n1\n2 0 1\n4\n1 2 3\n", "file ends inside the table of factor 0"),
    ("GRAPH\n1\n2\n", "expected MARKOV or BAYES"),
])
def test_malformed_uai_files_name_the_position(text, message):
    with pytest.raises(uai.UAIError, match=message):
        uai.loads(text, source="bad.uai")


def test_markov_model_partition_function():
    from twlib.inference import Factor
    f = Factor(("a", "b"), np.array([[1.0, 2.0], [3.0, 4.0]]))
    model = FactorModel(["a", "b"], {"a": ["0", "1"], "b": ["0", "1"]}, [f])
    jt = JunctionTree(model)
    assert jt.probability_of_evidence() == pytest.approx(10.0)
    assert np.allclose(jt.posteriors()["a"], [0.3, 0.7])


@pytest.mark.parametrize("name", ["Segmentation_11", "Grids_12", "CSP_12", "Promedas_70"])
def test_cli_map_is_at_least_the_reference_and_equals_elimination(name, tmp_path, monkeypatch):
    from twlib.inference import marginal_map

    inst = datasets.load_uai(name)
    stem = f"uai/{inst.category}/{name}"
    monkeypatch.chdir(tmp_path)
    assert main(["uai", str(datasets.data_file(f"{stem}.uai")),
                 str(datasets.data_file(f"{stem}.uai.evid")), "0", "MAP"]) == 0
    ours = uai.read_map(tmp_path / f"{name}.uai.MAP")
    model = inst.model
    assert all(ours[model.variables.index(v)] == k for v, k in inst.evidence.items())
    value, reference = model.log_values(np.array([ours, inst.map_state]))
    assert value >= reference - 1e-6
    free = [v for v in model.variables if v not in inst.evidence]
    best = marginal_map(model, free, inst.evidence).assignment   # max-product elimination
    row = [int(best[v]) if v in best else inst.evidence[v] for v in model.variables]
    assert model.log_values(row)[0] == pytest.approx(value, abs=1e-9)


def test_map_only_instances_load_and_the_wide_one_is_refused(tmp_path, monkeypatch, capsys):
    inst = datasets.load_uai("Grids_30")
    assert inst.marginals is None and len(inst.map_state) == len(inst.model.variables)
    assert "Grids_30" in datasets.available_uai(task="MAP")
    assert "Grids_30" not in datasets.available_uai()
    with pytest.raises(datasets.InputError, match="task must be one of"):
        datasets.available_uai(task="MMAP")
    monkeypatch.chdir(tmp_path)
    stem = "uai/Grids/Grids_26"
    assert main(["uai", str(datasets.data_file(f"{stem}.uai")),
                 str(datasets.data_file(f"{stem}.uai.evid")), "0", "MAR",
                 "--time-limit", "1"]) == 0                   # past the tree: conditioning
    said = capsys.readouterr().err
    assert "estimated (bounded: log10 P(e) in [" in said and "cutset conditioning (" in said
    assert len(uai.read_mar(tmp_path / "Grids_26.uai.MAR")) == len(inst.model.variables)
    assert main(["uai", str(datasets.data_file(f"{stem}.uai")),
                 str(datasets.data_file(f"{stem}.uai.evid")), "0", "MAP",
                 "--time-limit", "1"]) == 0                   # past the tree: branch and bound
    said = capsys.readouterr().err
    assert "AND/OR branch and bound, MBE(" in said and ("time_limit, bound" in said or "optimal" in said)
    value = datasets.load_uai("Grids_26").model.log_values(
        [uai.read_map(tmp_path / "Grids_26.uai.MAP")])[0]
    assert np.isfinite(value) and f"log P = {value:.6f}" in said
    assert main(["uai", str(datasets.data_file(f"{stem}.uai")),
                 str(datasets.data_file(f"{stem}.uai.evid")), "0", "MMAP"]) == 2


def test_dumps_round_trips_a_network_and_a_markov_model():
    from twlib.factors import as_factor_model

    for model in (datasets.load_network("alarm"), datasets.load_uai("Grids_11").model):
        again = uai.loads(uai.dumps(model))
        original = as_factor_model(model)
        rows = np.random.default_rng(0).integers(
            0, [original.arity(v) for v in original.variables], size=(50, len(original.variables)))
        np.testing.assert_allclose(again.log_values(rows), original.log_values(rows), rtol=1e-14)
