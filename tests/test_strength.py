import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from twlib import BayesianNetwork, graphs, queries, strength
from twlib.datasets import load_network
from twlib.inference import JunctionTree
from twlib.network import random_network

from . import naive


def cmi_from_full_joint(net, x, y):
    """I(X; Y | other parents of Y) from the enumerated joint distribution."""
    names = net.variables
    joint = naive.full_joint(net)
    keep = [y, x] + [p for p in net.parents(y) if p != x]
    table = joint.sum(axis=tuple(i for i, v in enumerate(names) if v not in keep))
    kept = [v for v in names if v in keep]
    table = np.transpose(table, [kept.index(v) for v in keep])
    return strength.conditional_information(table, 1, 0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 6))
def test_exact_strength_is_the_conditional_information_of_the_joint(seed, n):
    net = random_network(n, n_arcs=2 * n, max_in=3, arities=[2, 3, 2, 2, 3, 2][:n], random_state=seed)
    s = strength.arc_strengths(net)
    assert set(s) == set(net.arcs)
    for (x, y), value in s.items():
        assert value >= 0
        assert value == pytest.approx(cmi_from_full_joint(net, x, y), abs=1e-10)
    assert strength.network_strength(net) == pytest.approx(sum(s.values()) / n)


def test_single_parent_strength_is_mutual_information_and_equation_3_4():
    for theta in (0.5, 0.7, 0.9, 0.99):
        net = BayesianNetwork(["x", "y"], {"x": ["0", "1"], "y": ["0", "1"]}, {"x": [], "y": ["x"]},
                              {"x": np.array([0.5, 0.5]),
                               "y": np.array([[theta, 1 - theta], [1 - theta, theta]])})
        expected = theta * np.log(theta) + (1 - theta) * np.log(1 - theta) - np.log(0.5)
        assert strength.arc_strengths(net)[("x", "y")] == pytest.approx(expected, abs=1e-12)
    net = load_network("asia")
    jt = JunctionTree(net)
    for x, y in net.arcs:
        if len(net.parents(y)) == 1:
            mi = strength.conditional_information(jt.joint([x, y]), 0, 1)
            assert strength.arc_strengths(net, jt=jt)[(x, y)] == pytest.approx(mi)


def test_arcs_into_non_ancestors_do_not_change_a_strength():
    net = load_network("asia")
    base = strength.arc_strengths(net)
    # dysp and xray are sinks: nothing upstream of (tub, either) changes when
    # the arc either -> xray is dropped or xray's CPT is replaced
    parents = net.parent_map()
    parents["xray"] = []
    cpts = {v: net.cpt(v) for v in net.variables}
    cpts["xray"] = net.cpt("xray").mean(axis=1)
    cut = BayesianNetwork(net.variables, {v: net.states(v) for v in net.variables}, parents, cpts)
    after = strength.arc_strengths(cut)
    for arc in after:
        assert after[arc] == pytest.approx(base[arc])


def test_average_approximation_is_exact_on_polytrees_and_close_elsewhere():
    tree = random_network(8, n_arcs=7, max_in=1, random_state=3)
    exact, approx = strength.arc_strengths(tree), strength.arc_strengths(tree, method="average")
    for arc in exact:
        assert approx[arc] == pytest.approx(exact[arc], abs=1e-12)
    with pytest.raises(ValueError, match="method"):
        strength.arc_strengths(tree, method="sampled")


# -------------------------------------------------------------- patterns, SHD
def v_structures(parents):
    return {(a, c, b) for c, ps in parents.items() for a, b in itertools.combinations(sorted(ps), 2)
            if a not in parents[b] and b not in parents[a]}


def equivalence_class(parents):
    """Every DAG with the same skeleton and v-structures (Verma & Pearl), by enumeration."""
    edges = [(p, c) for c, ps in parents.items() for p in ps]
    target = v_structures(parents)
    members = []
    for flips in itertools.product((False, True), repeat=len(edges)):
        cand = {v: [] for v in parents}
        for (p, c), f in zip(edges, flips):
            a, b = (c, p) if f else (p, c)
            cand[b].append(a)
        if graphs.find_cycle(cand) is None and v_structures(cand) == target:
            members.append(cand)
    return members


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 6), st.integers(1, 8))
def test_find_pattern_equals_the_enumerated_equivalence_class(seed, n, m):
    net = random_network(n, n_arcs=m, max_in=3, random_state=seed)
    parents = net.parent_map()
    members = equivalence_class(parents)
    arcs = {(p, c) for c, ps in parents.items() for p in ps}
    shared = {a for a in arcs if all(a[0] in mem[a[1]] for mem in members)}
    compelled, reversible = graphs.pattern(parents)
    assert compelled == shared
    assert reversible == {frozenset(a) for a in arcs - shared}
    for mem in members:
        assert graphs.structural_hamming_distance(parents, mem) == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.booleans())
def test_shd_is_a_metric(seed, on_patterns):
    nets = [random_network(6, n_arcs=m, max_in=3, random_state=seed + m).parent_map() for m in (3, 5, 7)]
    names = {f"v{i}" for i in range(6)}
    nets = [{v: net.get(v, []) for v in names} for net in nets]
    d = lambda a, b: graphs.structural_hamming_distance(a, b, patterns=on_patterns)
    a, b, c = nets
    assert d(a, a) == 0
    assert d(a, b) == d(b, a) >= 0
    assert d(a, c) <= d(a, b) + d(b, c)


def test_shd_names_different_nodes():
    with pytest.raises(ValueError, match="different nodes"):
        graphs.structural_hamming_distance({"a": []}, {"b": []})


# ------------------------------------------------------------------- queries
def test_query_generators_follow_their_definitions():
    net = load_network("alarm")
    skeleton = net.to_networkx().to_undirected()
    qs = queries.query_set(net, per_kind=40, random_state=7)
    assert len(qs) == 200
    by_kind = {k: [q for q in qs if q.kind == k] for k in queries.QUERY_KINDS}
    assert all(not q.evidence for q in by_kind["marginal"])
    for q in by_kind["parent_child"]:
        assert [v for v, _ in q.evidence][0] in net.parents(q.variable)
    for kind in ("random", "max_distance", "min_distance"):
        assert all(1 <= len(q.evidence) <= 5 and q.variable not in dict(q.evidence)
                   for q in by_kind[kind])
    dist = lambda q: np.mean([nx.shortest_path_length(skeleton, q.variable, v)
                              for v, _ in q.evidence])
    far = np.mean([dist(q) for q in by_kind["max_distance"]])
    near = np.mean([dist(q) for q in by_kind["min_distance"]])
    assert far > near + 1
    again = queries.query_set(net, per_kind=40, random_state=7)
    assert again == qs
    answers = queries.answer_queries(net, qs)
    jt = JunctionTree(net)
    for q, a in zip(qs[::17], answers[::17]):
        assert np.allclose(a, jt.posteriors(q.evidence_dict)[q.variable])


def test_impossible_evidence_is_redrawn():
    net = BayesianNetwork(["x", "y"], {"x": ["0", "1"], "y": ["0", "1"]}, {"x": [], "y": ["x"]},
                          {"x": np.array([1.0, 0.0]), "y": np.array([[0.5, 0.5], [0.5, 0.5]])})
    qs = queries.generate_queries(net, "random", 20, random_state=0)
    assert all(dict(q.evidence).get("x", "0") == "0" for q in qs)
    with pytest.raises(ValueError, match="kind"):
        queries.generate_queries(net, "nearest", 1)


def test_distance_queries_on_a_disconnected_network():
    parents = {"a": [], "b": ["a"], "c": [], "d": []}
    net = BayesianNetwork(list(parents), {v: ["0", "1"] for v in parents}, parents,
                          {"a": np.array([0.5, 0.5]), "b": np.array([[0.9, 0.2], [0.1, 0.8]]),
                           "c": np.array([0.3, 0.7]), "d": np.array([0.6, 0.4])})
    for kind in ("min_distance", "max_distance"):
        qs = queries.generate_queries(net, kind, 30, random_state=1)
        assert all(1 <= len(q.evidence) <= 3 for q in qs)
    near = queries.generate_queries(net, "min_distance", 30, random_state=2)
    assert all(dict(q.evidence).keys() <= {"a", "b"} for q in near if q.variable in "ab")
