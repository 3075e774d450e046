"""Background knowledge: the object, its file form and its checks, and the exact
learners' constrained optimum against brute force."""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twlib import errors
from twlib.graphs import find_cycle
from twlib.knowledge import Knowledge, KnowledgeConflict
from twlib.learn import order_graph
from twlib.scores import ParentSetScores, local_score

from .test_information import random_dataset


def test_text_form_round_trip_and_line_numbers(tmp_path):
    path = tmp_path / "k.txt"
    path.write_text("# what the clinician knows\nrequire Disease -> Age\nforbid Age -> Sick\n"
                    "tier Age\ntier Disease Sick   # later\nforbid-within-tiers\n"
                    "no-parents Age\nno-children Sick\nmax-indegree 3\nmax-indegree Sick 1\n")
    know = Knowledge.from_file(path)
    assert know.required == [("Disease", "Age")] and know.forbidden == [("Age", "Sick")]
    assert know.tiers == [["Age"], ["Disease", "Sick"]] and know.forbid_within_tiers
    assert know.cap("Sick") == 1 and know.cap("Age") == 3
    assert not know.allows("Disease", "Sick")            # same tier, forbidden within
    path.write_text("require a -> b\nrequire a b\n")
    with pytest.raises(errors.FormatError, match=r"k.txt:2: an arc is written"):
        Knowledge.from_file(path)
    path.write_text("tier a\nsomething else\n")
    with pytest.raises(errors.FormatError, match=r"k.txt:2: unknown or incomplete"):
        Knowledge.from_file(path)
    path.write_text("max-indegree a two\n")
    with pytest.raises(errors.FormatError, match=r"k.txt:1"):
        Knowledge.from_file(path)


@pytest.mark.parametrize("make, message", [
    (lambda: Knowledge(required=["a -> a"]), "to itself"),
    (lambda: Knowledge(required=["a -> b"], forbidden=[("a", "b")]), "both required and"),
    (lambda: Knowledge(required=["b -> a"], tiers=[["a"], ["b"]]), "from tier 2 to tier 1"),
    (lambda: Knowledge(required=["b -> a"], tiers=[["a", "b"]], forbid_within_tiers=True),
     "inside tier 1"),
    (lambda: Knowledge(required=["a -> b", "b -> c", "c -> a"]), "form a cycle"),
    (lambda: Knowledge(required=["a -> b"], no_parents=["b"]), "no parents"),
    (lambda: Knowledge(required=["a -> c", "b -> c"], max_indegree={"c": 1}), "cap of 1"),
    (lambda: Knowledge(tiers=[["a"], ["a", "b"]]), "tier 1 and in tier 2"),
    (lambda: Knowledge(required=["a -> zz"]), "not in the data"),
])
def test_contradictions_are_named_before_any_search(make, message):
    with pytest.raises(errors.InputError, match=message):
        make().validate(["a", "b", "c", "d"])


def test_required_arcs_past_the_width_bound_are_refused():
    clique = [f"{u} -> {v}" for u, v in itertools.combinations("abcd", 2)]
    with pytest.raises(KnowledgeConflict, match="tree-width 3"):
        Knowledge(required=clique).validate(list("abcd"), k=2)
    Knowledge(required=clique).validate(list("abcd"), k=3)


def test_pgmpy_expert_knowledge_is_read():
    pgmpy = pytest.importorskip("pgmpy.estimators")
    expert = pgmpy.ExpertKnowledge(forbidden_edges=[("b", "a")], required_edges=[("a", "c")],
                                   temporal_order=[["a"], ["b", "c"]])
    know = Knowledge.from_pgmpy(expert)
    assert know.required == [("a", "c")] and ("b", "a") in know.forbidden
    assert know.tiers == [["a"], ["b", "c"]]


def _brute_force(data, know, max_parents, score, k=None):
    """The best DAG of in-degree <= max_parents that ``know`` allows (and, with ``k``,
    whose moral graph has tree-width <= k), by enumeration."""
    from twlib.graphs import moral_graph, treewidth_exact

    names = list(data.names)
    options = []
    for v in names:
        others = [u for u in names if u != v]
        sets = [ps for size in range(max_parents + 1)
                for ps in itertools.combinations(others, size)]
        options.append([(ps, local_score(data, v, ps, score=score)) for ps in sets])
    best = -np.inf
    for choice in itertools.product(*options):
        total = sum(sc for _, sc in choice)
        if total <= best:
            continue
        parents = {v: list(ps) for v, (ps, _) in zip(names, choice)}
        if know.violations(parents) or find_cycle(parents) is not None:
            continue
        if k is not None:
            moral = moral_graph(parents)
            moral.add_nodes_from(names)
            if treewidth_exact(moral)[0] > k:
                continue
        best = total
    return best


@st.composite
def knowledge_on(draw, names):
    arcs = [(u, v) for u in names for v in names if u != v]
    required = draw(st.lists(st.sampled_from(arcs), max_size=2, unique=True))
    forbidden = draw(st.lists(st.sampled_from(arcs), max_size=4, unique=True))
    forbidden = [a for a in forbidden if a not in required]
    tiers = []
    if draw(st.booleans()):
        cut = draw(st.integers(1, len(names) - 1))
        shuffled = draw(st.permutations(names))
        tiers = [list(shuffled[:cut]), list(shuffled[cut:])]
    caps = draw(st.one_of(st.none(), st.integers(1, 2)))
    return Knowledge(required=required, forbidden=forbidden, tiers=tiers,
                     forbid_within_tiers=draw(st.booleans()), max_indegree=caps)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 10_000), score=st.sampled_from(["bic", "bdeu"]))
def test_order_graph_finds_the_constrained_optimum(data, seed, score):
    ds = random_dataset(seed, n_vars=4, n_rows=120)
    know = data.draw(knowledge_on(list(ds.names)))
    try:
        know.validate(ds.names)
    except KnowledgeConflict:
        return                                           # contradictions are tested above
    expected = _brute_force(ds, know, 2, score)
    for prune in (True, False):
        pss = ParentSetScores(ds, score=score, max_parents=2, prune=prune, knowledge=know)
        for search in (order_graph.dp, order_graph.astar):
            res = search(pss)
            assert res.score == pytest.approx(expected, rel=1e-9, abs=1e-9)
            assert know.violations({v: list(ps) for v, ps in res.parents.items()}) == []


def test_knowledge_prunes_before_scoring(alarm_5000):
    free = ParentSetScores(alarm_5000, max_parents=2)
    know = Knowledge(tiers=[alarm_5000.names[:18], alarm_5000.names[18:]],
                     forbid_within_tiers=True)
    tied = ParentSetScores(alarm_5000, max_parents=2, knowledge=know)
    assert tied.stats["scored"] < free.stats["scored"] / 2
    with pytest.raises(errors.InputError, match="more than max_parents"):
        ParentSetScores(alarm_5000, max_parents=1,
                        knowledge=Knowledge(required=["HR -> CO", "STROKEVOLUME -> CO"]))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_ilp_and_exact_width_prove_the_constrained_optimum(data, seed):
    from twlib.learn import exact_width, greedy, ilp

    ds = random_dataset(seed, n_vars=4, n_rows=150)
    know = data.draw(knowledge_on(list(ds.names)))
    try:
        know.validate(ds.names, k=1)
    except KnowledgeConflict:
        return
    unbounded = _brute_force(ds, know, 2, "bic")
    res = ilp.learn(ds, max_parents=2, knowledge=know, time_limit=30)
    assert res.status == "optimal" and res.score == pytest.approx(unbounded, abs=1e-6)
    tree = _brute_force(ds, know, 1, "bic", k=1)
    for res in (ilp.learn(ds, k=1, knowledge=know, time_limit=30),
                exact_width.learn(ds, 1, knowledge=know, time_limit=30)):
        assert res.status == "optimal" and res.score == pytest.approx(tree, abs=1e-6)
        assert know.violations(res.parents) == [] and res.width <= 1
        assert res.knowledge is (know if know else None)
    res = greedy.learn(ds, max_parents=2, restarts=3, random_state=0, knowledge=know)
    assert know.violations(res.parents) == [] and res.score <= unbounded + 1e-6


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 10_000), k=st.integers(1, 2),
       search=st.sampled_from(["guided", "greedy", "random"]))
def test_ktree_learn_keeps_the_knowledge_inside_its_ktrees(data, seed, k, search):
    from twlib.graphs import is_ktree
    from twlib.learn import exact_width, ktree

    ds = random_dataset(seed, n_vars=5, n_rows=150)
    know = data.draw(knowledge_on(list(ds.names)))
    try:
        know.validate(ds.names, k=k)
    except KnowledgeConflict:
        return
    res = ktree.learn(ds, k, knowledge=know, max_iter=3, ktree_search=search,
                      random_state=seed, score="bic")
    assert know.violations(res.parents) == [] and res.width <= k
    assert res.knowledge is (know if know else None)
    assert is_ktree(res.ktree, k)
    frame = ktree.required_frame(know, k)
    assert all(res.ktree.has_edge(a, b) for a, b in frame.edges)
    assert res.score <= exact_width.learn(ds, k, knowledge=know).score + 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_bounded_learn_never_breaks_the_knowledge(seed, alarm_5000):
    from twlib.graphs import topological_order
    from twlib.learn import bounded, ktree

    rng = np.random.default_rng(seed)
    truth = datasets_alarm_parents()
    arcs = [(p, v) for v, ps in truth.items() for p in ps]
    order = topological_order(truth)
    cut = sorted(rng.choice(np.arange(5, 32), 2, replace=False))
    tiers = [order[:cut[0]], order[cut[0]:cut[1]], order[cut[1]:]]
    tier = {v: t for t, members in enumerate(tiers) for v in members}
    required = [arcs[i] for i in rng.choice(len(arcs), 4, replace=False)]
    if seed % 2:                                   # no arc within a tier: none required there
        required = [(p, v) for p, v in required if tier[p] != tier[v]]
    names = list(alarm_5000.names)
    forbidden = [(names[a], names[b]) for a, b in rng.integers(0, len(names), (40, 2))
                 if a != b and (names[a], names[b]) not in required]
    know = Knowledge(required=required, forbidden=forbidden, tiers=tiers,
                     forbid_within_tiers=bool(seed % 2), max_indegree=2)
    res = bounded.learn(alarm_5000, 3, time_limit=3, random_state=seed, knowledge=know)
    assert know.violations(res.parents) == [] and res.width <= 3 and res.knowledge is know
    if seed < 2:
        res = ktree.learn(alarm_5000, 3, max_iter=2, random_state=seed, knowledge=know)
        assert know.violations(res.parents) == [] and res.width <= 3


def datasets_alarm_parents():
    from twlib.datasets import load_network

    return load_network("alarm").parent_map()


def test_estimator_cli_and_structural_em_take_the_knowledge(tmp_path, capsys, alarm):
    import pandas as pd

    from twlib import BoundedTreewidthNetwork
    from twlib.cli import main
    from twlib.data import IncompleteDataset
    from twlib.learn import em

    data = alarm.sample(1500, random_state=11)
    know = Knowledge(required=["HR -> CO", "LVFAILURE -> HISTORY"],
                     forbidden=["CO -> BP", "STROKEVOLUME -> CO"],
                     tiers=[["HYPOVOLEMIA", "LVFAILURE"], ["LVEDVOLUME", "STROKEVOLUME"]])
    model = BoundedTreewidthNetwork(k=2, time_limit=3, random_state=0, knowledge=know)
    model.fit(data.to_pandas())
    assert know.violations(model.network_.parent_map()) == [] and model.width_ <= 2
    with pytest.raises(errors.InputError, match="does not take background knowledge"):
        BoundedTreewidthNetwork(k=2, method="lpacjt", knowledge=know).fit(data.to_pandas())
    holes = data.values.astype(np.int64)
    holes[np.random.default_rng(0).random(holes.shape) < 0.1] = -1
    res = em.structural_em(IncompleteDataset(holes, data.names, data.states), 2, time_limit=8,
                           max_iter=2, random_state=0, knowledge=know)
    assert know.violations(res.parents) == [] and res.width <= 2
    csv, tiers, out = tmp_path / "a.csv", tmp_path / "tiers.txt", tmp_path / "o.bif"
    data.to_pandas().to_csv(csv, index=False)
    tiers.write_text("HYPOVOLEMIA, LVFAILURE\nLVEDVOLUME STROKEVOLUME   # later\n")
    assert main(["learn", str(csv), "-k", "2", "--time-limit", "2", "--seed", "0",
                 "--require", "HR->CO", "--forbid", "CO->BP", "--tiers", str(tiers),
                 "--out", str(out)]) == 0
    from twlib.io import bif
    cli_know = Knowledge(required=["HR -> CO"], forbidden=["CO -> BP"],
                         tiers=[["HYPOVOLEMIA", "LVFAILURE"], ["LVEDVOLUME", "STROKEVOLUME"]])
    assert cli_know.violations(bif.read(out).parent_map()) == []
    capsys.readouterr()
    assert main(["learn", str(csv), "-k", "2", "--out", str(out), "--require", "HR->CO",
                 "--forbid", "HR->CO"]) == 2
    assert "both required and forbidden" in capsys.readouterr().err
    assert main(["learn", str(csv), "-k", "2", "--out", str(out), "--require", "HR->NOPE"]) == 2
    assert "not in the data" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["asia", "sachs", "survey"])
def test_dp_and_ilp_agree_under_knowledge_on_bnlearn_networks(name):
    from twlib.datasets import load_network
    from twlib.knowledge import expert_knowledge
    from twlib.learn import ilp

    net = load_network(name)
    data = net.sample(2000, random_state=4)
    know = expert_knowledge(net.parent_map(), required_share=0.2, n_tiers=2, forbidden_share=0.2,
                            random_state=4)
    pss = ParentSetScores(data, max_parents=3, knowledge=know)
    exact = order_graph.dp(pss)
    proved = ilp.solve(pss, time_limit=60)
    assert proved.status == "optimal"
    assert proved.score == pytest.approx(exact.score, abs=1e-6)
    assert know.violations(proved.parents) == [] == know.violations(exact.parents)


def test_chow_liu_honours_the_knowledge_a_tree_can_hold(alarm):
    from twlib.learn import chow_liu

    data = alarm.sample(2000, random_state=8)
    free = chow_liu.learn(data)
    edges = sorted(free.ktree.edges)
    know = Knowledge(forbidden=[edges[0], edges[0][::-1], edges[1]],
                     required=["HR -> CO"], tiers=[["HYPOVOLEMIA"], ["LVEDVOLUME", "CVP"]])
    res = chow_liu.learn(data, knowledge=know)
    assert know.violations(res.parents) == [] and res.width == 1
    assert not res.ktree.has_edge(*edges[0]) and res.status == "complete"
    with pytest.raises(KnowledgeConflict, match="tree-width"):
        chow_liu.learn(data, knowledge=Knowledge(required=["HR -> CO", "BP -> CO"]))


def test_a_result_carries_its_knowledge_and_is_checked_on_creation():
    from twlib.learn.result import LearnResult

    know = Knowledge(required=["a -> b"])
    with pytest.raises(errors.InternalError, match="required arc a -> b is missing"):
        LearnResult(None, 0.0, "complete", parents={"a": [], "b": []}, knowledge=know)
    assert LearnResult(None, 0.0, "complete", parents={"a": [], "b": ["a"]},
                       knowledge=know).knowledge is know


def test_learners_that_cannot_honour_knowledge_say_so(alarm):
    from twlib.learn import ktree, thin_jt

    data = alarm.sample(300, random_state=1)
    with pytest.raises(errors.InputError, match="has no arcs"):
        thin_jt.learn(data, 2, knowledge=Knowledge(required=["HR -> CO"]))
    with pytest.raises(KnowledgeConflict, match="tree-width"):
        ktree.learn(data, 1, knowledge=Knowledge(required=["HR -> CO", "BP -> CO"]))


def test_a_pyagrum_learners_constraints_are_read_back(tmp_path):
    gum = pytest.importorskip("pyagrum")
    from twlib.datasets import load_network

    path = tmp_path / "asia.csv"
    load_network("asia").sample(200, random_state=0).to_pandas().to_csv(path, index=False)
    learner = gum.BNLearner(str(path))
    learner.addMandatoryArc("smoke", "lung")
    learner.addMandatoryArc("tub", "either")
    learner.addForbiddenArc("lung", "smoke")
    learner.setSliceOrder([["asia", "smoke"], ["lung"]])
    learner.addNoParentNode("asia")
    learner.addNoChildrenNode("dysp")
    learner.setMaxIndegree(2)
    know = Knowledge.from_pyagrum(learner)
    assert set(know.required) == {("smoke", "lung"), ("tub", "either")}
    assert know.forbidden == [("lung", "smoke")]
    assert sorted(map(sorted, know.tiers)) == [["asia", "smoke"], ["lung"]]
    assert know.tier_of("lung") == 1 and know.no_parents == ["asia"]
    assert know.no_children == ["dysp"] and know.cap("xray") == 2
    assert Knowledge.from_pyagrum(gum.BNLearner(str(path))).required == []


@st.composite
def expert_on(draw, net):
    """Knowledge an expert of ``net`` could give: tiers of its order, some of its arcs
    required, reversals and non-arcs forbidden, maybe an in-degree cap."""
    from twlib.knowledge import expert_knowledge

    seed = draw(st.integers(0, 10_000))
    know = expert_knowledge(net.parent_map(), required_share=draw(st.sampled_from([0.0, 0.05,
                                                                                   0.12])),
                            n_tiers=draw(st.integers(0, 4)), forbidden_share=0.1, random_state=seed)
    names = net.variables
    rng = np.random.default_rng(seed)
    arcs = set(net.arcs)
    pairs = [(names[a], names[b]) for a, b in rng.integers(len(names), size=(12, 2)) if a != b]
    know.forbidden += [p for p in pairs if p not in arcs and p[::-1] not in arcs][:5]
    know.max_indegree = draw(st.sampled_from([None, 3]))
    return Knowledge(required=know.required, forbidden=know.forbidden, tiers=know.tiers,
                     max_indegree=know.max_indegree)


@pytest.mark.parametrize("learner", ["ilp", "exact_width", "order_graph"])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_exact_learners_keep_random_expert_knowledge_on_a_20_variable_network(learner, data,
                                                                              child_2000):
    from twlib.datasets import load_network
    from twlib.learn import exact_width, ilp

    know = data.draw(expert_on(load_network("child")))
    if learner == "ilp":
        res = ilp.learn(child_2000, k=3, max_parents=2, knowledge=know, time_limit=20)
    elif learner == "exact_width":
        res = exact_width.learn(child_2000, 3, knowledge=know, time_limit=20)
    else:
        res = order_graph.learn(child_2000, max_parents=2, knowledge=know)
    assert know.violations(res.parents) == []
    assert res.status in ("optimal", "time_limit") and res.width in (None, 1, 2, 3)


def test_ilp_under_tiers_required_and_forbidden_arcs_on_insurance_does_not_crash():
    """The sink heuristic met an order with a required parent after its child (and the
    ValueError came out as SCIP's 'unspecified error')."""
    from twlib.datasets import load_network
    from twlib.knowledge import expert_knowledge
    from twlib.learn import ilp

    net = load_network("insurance")
    know = Knowledge(required=["RiskAversion -> SeniorTrain", "OtherCarCost -> PropCost",
                               "SocioEcon -> OtherCar"],
                     forbidden=["Cushioning -> SeniorTrain", "GoodStudent -> Mileage",
                                "ILiCost -> PropCost", "ThisCarCost -> GoodStudent",
                                "VehicleYear -> OtherCar"],
                     tiers=expert_knowledge(net.parent_map(), required_share=0.0, n_tiers=4).tiers)
    res = ilp.learn(net.sample(5000, random_state=0), k=3, max_parents=3, knowledge=know,
                    time_limit=10)
    assert know.violations(res.parents) == [] and res.width <= 3
