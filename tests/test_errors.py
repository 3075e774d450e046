"""One exception family: every deliberate error of twlib is a TwlibError."""
import inspect
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import twlib
from twlib import datasets, errors, graphs
from twlib.cli import main
from twlib.factors import Factor, FactorModel
from twlib.inference import JunctionTree, MemoryBudgetExceeded
from twlib.io import bif, uai
from twlib.learn import order_graph
from twlib.scores import ParentSetScores

from .test_information import random_dataset

LIBRARY = Path(twlib.__file__).resolve().parent
BUILTIN = re.compile(r"\braise (ValueError|KeyError|TypeError|IndexError|AssertionError|"
                     r"FileNotFoundError|MemoryError|RuntimeError|Exception)\b")


def test_no_module_raises_a_bare_builtin():
    stray = [f"{p.relative_to(LIBRARY)}:{no}: {line.strip()}"
             for p in sorted(LIBRARY.rglob("*.py"))
             for no, line in enumerate(p.read_text().splitlines(), 1) if BUILTIN.search(line)]
    assert stray == []


def test_every_exception_class_in_the_library_is_in_the_family():
    found = {}
    for module in (twlib.datasets, twlib.inference, twlib.factors, bif, uai, errors):
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                found[f"{module.__name__}.{name}"] = obj
    assert len(found) >= 12
    assert all(issubclass(c, errors.TwlibError) for c in found.values()), found


@pytest.mark.parametrize("cls, builtin", [
    (errors.InputError, ValueError), (errors.UnknownName, KeyError),
    (errors.WrongType, TypeError), (errors.FormatError, ValueError),
    (errors.ZeroEvidenceError, ValueError), (errors.BudgetExceeded, MemoryError),
    (errors.DataNotFound, FileNotFoundError), (errors.InternalError, AssertionError),
    (MemoryBudgetExceeded, MemoryError), (bif.BIFError, errors.FormatError),
    (uai.UAIError, errors.FormatError)])
def test_each_branch_is_also_the_builtin_users_expect(cls, builtin):
    assert issubclass(cls, errors.TwlibError) and issubclass(cls, builtin)


def test_unknown_name_prints_its_message_unquoted():
    assert str(errors.UnknownName("no variable named 'x'")) == "no variable named 'x'"


def test_memory_and_state_limits_raise_the_same_type():
    pss = ParentSetScores(random_dataset(1, n_vars=4), score="bic", max_parents=2)
    with pytest.raises(errors.BudgetExceeded, match="max_memory_gb"):
        order_graph.dp(pss, max_memory_gb=1e-12)
    with pytest.raises(errors.BudgetExceeded, match="max_nodes"):
        graphs.treewidth_exact(nx.path_graph(30))
    with pytest.raises(errors.BudgetExceeded, match="over the budget"):
        JunctionTree(datasets.load_network("alarm"), max_memory_gb=1e-9)


def test_bad_input_raises_input_errors():
    net = datasets.load_network("asia")
    with pytest.raises(errors.UnknownName, match="nosuch"):
        JunctionTree(net).posteriors({"nosuch": "yes"})
    with pytest.raises(errors.InputError, match="unknown state"):
        JunctionTree(net).posteriors({"asia": "maybe"})
    with pytest.raises(errors.FormatError, match="bad.bif, line 2"):
        bif.loads("network x { }\nvariable", source="bad.bif")
    with pytest.raises(errors.DataNotFound):
        datasets.load_network("nosuch")
    impossible = FactorModel(["a"], {"a": ["0", "1"]}, [Factor(("a",), np.array([1.0, 0.0]))])
    with pytest.raises(errors.ZeroEvidenceError):
        JunctionTree(impossible).posteriors({"a": "1"})


@pytest.mark.parametrize("argv, code, message", [
    (["uai", "no-such.uai", "no-such.evid", "0", "MAR"], 2, "no such UAI model"),
    (["uai", "x.uai", "x.evid", "0", "MPE"], 2, "the tasks are MAR, MAP and PR"),
    (["sample", "nosuch", "5"], 2, "unknown network 'nosuch'"),
])
def test_cli_maps_the_family_to_exit_codes(argv, code, message, capsys):
    assert main(argv) == code
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
