"""Every public callable speaks the one argument vocabulary of ``twlib``'s docstring.

The walk covers each module's ``__all__``: functions, classes and their public
methods.  Dataclasses are records, not calls with options, and are left out.
"""
import dataclasses
import importlib
import inspect
import pkgutil

import pytest

import twlib

# off-vocabulary names and the name the vocabulary uses instead
SYNONYMS = {"seconds": "time_limit", "timeout": "time_limit", "max_time": "time_limit",
            "memory_gb": "max_memory_gb", "memory": "max_memory_gb", "verbose": "progress",
            "show_progress": "progress", "criterion": "score", "scoring": "score",
            "n_iter": "max_iter", "max_rounds": "max_iter", "iterations": "max_iter",
            "em_iter": "em_max_iter", "search_iter": "search_max_iter",
            "tolerance": "tol", "seed": "random_state", "rng": "random_state"}
# scikit-learn estimators keep a parameter as an attribute of the same name, and
# ``score`` is their method
SKLEARN_CRITERION = {"twlib.estimator.BoundedTreewidthNetwork",
                     "twlib.classify.BoundedTreewidthClassifier"}
# a parameter named ``score`` that labels what a file holds rather than choosing
SCORE_LABELS = {"twlib.scores.ParentSetScores.from_file"}


def public_callables():
    found = {}
    for info in pkgutil.walk_packages(twlib.__path__, "twlib."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if inspect.isclass(obj) and obj.__module__.startswith("twlib"):
                if dataclasses.is_dataclass(obj):
                    continue
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj.__init__
                for attr, member in vars(obj).items():
                    if isinstance(member, (classmethod, staticmethod)):
                        member = member.__func__
                    if not attr.startswith("_") and inspect.isfunction(member):
                        found[f"{obj.__module__}.{obj.__qualname__}.{attr}"] = member
            elif callable(obj) and getattr(obj, "__module__", "").startswith("twlib") \
                    and not inspect.isclass(obj) and not hasattr(obj, "py_func"):
                # compiled kernels (numba) take no keyword-only arguments
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    signatures = {}
    for qualname, function in found.items():
        try:
            signatures[qualname] = inspect.signature(function)
        except (TypeError, ValueError):         # compiled kernels without a signature
            continue
    return signatures


SIGNATURES = public_callables()


def test_the_walk_reaches_the_library():
    assert len(SIGNATURES) > 300
    assert "twlib.inference.junction_tree.sum_product.SumProduct.posteriors" in SIGNATURES


def test_no_public_callable_uses_an_off_vocabulary_name():
    wrong = []
    for qualname, sig in SIGNATURES.items():
        for name in sig.parameters:
            if name == "criterion" and qualname in SKLEARN_CRITERION:
                continue
            if name in SYNONYMS:
                wrong.append(f"{qualname}({name}=...): say {SYNONYMS[name]}")
    assert wrong == []


# what a call is about, which may stay positional though it has a default: the
# evidence, the variables asked about, the target, a family's parents, the
# conditioning set, the i-bound, how many rows to draw, the rows' weights, the
# cutset to condition on, a command line
ABOUT = {"evidence", "variables", "y", "parents", "c", "i_bound", "n_samples", "weights",
         "cutset", "argv"}


def test_options_are_keyword_only_after_the_data_and_the_model():
    wrong = []
    for qualname, sig in SIGNATURES.items():
        options = [p.name for p in sig.parameters.values()
                   if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty
                   and p.name not in ABOUT]
        if options:
            wrong.append(f"{qualname}: {options} should be keyword-only")
    assert wrong == []


def test_every_learner_scores_by_bic_by_default():
    wrong = [qualname for qualname, sig in SIGNATURES.items()
             if "score" in sig.parameters and qualname not in SCORE_LABELS
             and isinstance(sig.parameters["score"].default, str)
             and sig.parameters["score"].default != "bic"]
    assert wrong == []


def test_every_inference_path_answers_with_the_one_result_of_its_kind():
    from twlib import datasets
    from twlib.inference import (JunctionTree, Marginals, MPEResult, MPESearch,
                                 branch_and_bound_mpe, conditioned_posteriors, do_posteriors,
                                 loopy_belief_propagation, marginal_map,
                                 most_probable_explanation, posterior_marginals)

    net = datasets.load_network("asia")
    evidence = {"dysp": "yes"}
    tree = JunctionTree(net)
    mpes = {"junction tree": tree.mpe(evidence),
            "soft evidence": tree.mpe(evidence, soft_evidence={"xray": [0.9, 0.1]}),
            "marginal MAP": marginal_map(net, ["lung"], evidence),
            "router": most_probable_explanation(net, evidence),
            "branch and bound": branch_and_bound_mpe(net, evidence, i_bound=2),
            "prepared search": MPESearch(net).mpe(evidence),
            "batch": tree.mpe_batch([{}, evidence]).result(1)}
    for path, result in mpes.items():
        assert isinstance(result, MPEResult), path
        assert result.status == "optimal" and result.log_gap == 0.0, path
        assert result.method and isinstance(result.stats, dict), path
    marginals = {"junction tree": tree.posteriors(evidence),
                 "soft evidence": tree.posteriors(evidence, soft_evidence={"xray": [0.9, 0.1]}),
                 "do": do_posteriors(net, {"smoke": "yes"}, evidence),
                 "router": posterior_marginals(net, evidence),
                 "conditioning": conditioned_posteriors(net, evidence),
                 "loopy": loopy_belief_propagation(net, evidence),
                 "batch": tree.posteriors_batch([{}, evidence]).result(1)}
    exact = tree.posteriors(evidence)
    for path, result in marginals.items():
        assert isinstance(result, Marginals), path
        assert set(result) == set(net.variables) and result.method, path
        assert result.exact == (path != "loopy"), path
    assert mpes["batch"].assignment == mpes["junction tree"].assignment
    for path in ("router", "conditioning", "batch"):
        assert all(abs(marginals[path][v] - exact[v]).max() < 1e-9 for v in net.variables)
        assert abs(marginals[path].log_z - exact.log_z) < 1e-9


def test_a_batch_unpacks_as_its_arrays_and_survives_pickling():
    import pickle

    from twlib import datasets
    from twlib.errors import ZeroEvidenceError
    from twlib.inference import JunctionTree

    tree = JunctionTree(datasets.load_network("asia"))
    sets = [{"xray": "yes"}, {"tub": "yes", "either": "no"}]
    mpe = tree.mpe_batch(sets, allow_zero=True)
    states, log_p = mpe
    assert mpe.sets == 2 and states is mpe.states and log_p is mpe.log_values
    assert mpe.result(0).log_value == pytest.approx(tree.mpe(sets[0]).log_value)
    with pytest.raises(ZeroEvidenceError, match="set 1"):
        mpe.result(1)
    marginals = tree.posteriors_batch(sets[:1])
    posteriors, log_z = marginals
    assert [m.log_z for m in marginals.results()] == pytest.approx(log_z.tolist())
    for batch in (mpe, marginals):
        again = pickle.loads(pickle.dumps(batch))
        assert type(again) is type(batch) and again.method == batch.method
        assert again.result(0).method == batch.result(0).method
