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
    assert "error: no such data file" in capsys.readouterr().err
