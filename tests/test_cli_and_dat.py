import numpy as np
import pytest

from twlib.cli import main
from twlib.io import dat
from twlib.scores import ParentSetScores

from .test_information import random_dataset


def test_dat_round_trip_and_errors(tmp_path):
    ds = random_dataset(2, n_vars=4, n_rows=50)
    path = tmp_path / "d.dat"
    dat.write(ds, path)
    back = dat.read(path)
    assert back.names == ds.names and np.array_equal(back.values, ds.values)
    path.write_text("a b\n2 2\n0 1\n1\n")
    with pytest.raises(ValueError, match="line 4: 1 values for 2 variables"):
        dat.read(path)


def test_cli_sample_then_score(tmp_path, capsys):
    data = tmp_path / "asia.dat"
    assert main(["sample", "asia", "500", "--seed", "3", "--out", str(data)]) == 0
    scores = tmp_path / "asia.scores"
    assert main(["score", str(data), "--score", "bic", "--max-parents", "2",
                 "--out", str(scores)]) == 0
    pss = ParentSetScores.from_file(scores)
    direct = ParentSetScores(dat.read(data), score="bic", max_parents=2)
    assert pss.names == direct.names
    assert pss.sets("dysp") == direct.sets("dysp")


def test_cli_reports_bad_input_without_a_traceback(tmp_path, capsys):
    assert main(["score", str(tmp_path / "absent.csv")]) == 2
    assert "error: no such file" in capsys.readouterr().err


def test_cli_learn_query_info_end_to_end(tmp_path, capsys):
    import json

    from twlib.inference import JunctionTree
    from twlib.io import bif

    data, model = tmp_path / "asia.csv", tmp_path / "asia.bif"
    assert main(["sample", "asia", "3000", "--seed", "1", "--out", str(data)]) == 0
    assert main(["learn", str(data), "-k", "2", "--time-limit", "10", "--seed", "0",
                 "--out", str(model)]) == 0
    report = capsys.readouterr().out
    assert "tree-width <= 2" in report and "bic" in report
    net = bif.read(model)
    assert main(["query", str(model), "--evidence", "smoke=yes", "xray=yes",
                 "--target", "lung", "bronc", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    exact = JunctionTree(net).posteriors({"smoke": "yes", "xray": "yes"})
    for target in ("lung", "bronc"):
        got = [answer["posteriors"][target][s] for s in net.states(target)]
        assert np.allclose(got, exact[target], atol=1e-12)
    assert answer["log_probability_of_evidence"] == pytest.approx(
        JunctionTree(net).log_probability_of_evidence({"smoke": "yes", "xray": "yes"}))
    assert main(["query", str(model), "--evidence", "smoke=yes"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("log P(evidence)") and "lung: " in text and "smoke: " not in text
    assert main(["info", str(model)]) == 0
    info = capsys.readouterr().out
    assert "8 variables" in info and "(exact)" in info and "junction tree:" in info


def test_cli_query_refuses_bad_evidence(capsys):
    assert main(["query", "asia", "--evidence", "smoke"]) == 2
    assert "VARIABLE=STATE" in capsys.readouterr().err
    assert main(["query", "asia", "--evidence", "smoke=perhaps"]) == 2
    assert "unknown state" in capsys.readouterr().err
    assert main(["query", "asia", "--target", "weather"]) == 2


def test_cli_query_do_cuts_the_parents(capsys):
    import json

    assert main(["query", "asia", "--do", "either=yes", "--evidence", "smoke=no",
                 "--target", "dysp", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["do"] == {"either": "yes"}
    # P(dysp | do(either=yes), smoke=no) = sum_b P(b | smoke=no) P(dysp | yes, b)
    assert answer["posteriors"]["dysp"]["yes"] == pytest.approx(0.3 * 0.9 + 0.7 * 0.7)
    assert main(["query", "asia", "--do", "either=yes", "--evidence", "either=no"]) == 2
    assert "both intervened on" in capsys.readouterr().err
    assert main(["query", "asia", "--do", "either"]) == 2
    assert "--do must look like VARIABLE=STATE" in capsys.readouterr().err


def test_cli_learn_on_a_local_dask_cluster(tmp_path, capsys):
    pytest.importorskip("distributed")
    data, model = tmp_path / "asia.csv", tmp_path / "asia.bif"
    assert main(["sample", "asia", "2000", "--seed", "2", "--out", str(data)]) == 0
    assert main(["learn", str(data), "-k", "2", "--time-limit", "5", "--seed", "0",
                 "--out", str(model), "--scheduler", "local"]) == 0
    assert "tree-width <= 2" in capsys.readouterr().out
    assert main(["learn", str(data), "-k", "2", "--out", str(model),
                 "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "no Dask scheduler answers" in capsys.readouterr().err
