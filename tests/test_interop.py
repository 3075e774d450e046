"""twlib.interop: pgmpy and pyAgrum round trips keep states, CPT axes and posteriors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from twlib import interop
from twlib.datasets import load_network
from twlib.inference import JunctionTree

gum = pytest.importorskip("pyagrum")
pytest.importorskip("pgmpy")

NETWORKS = ["asia", "sachs", "child", "insurance", "alarm"]


@pytest.mark.parametrize("name", NETWORKS)
def test_round_trips_are_exact(name):
    net = load_network(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert interop.from_pgmpy(interop.to_pgmpy(net)).allclose(net)
    assert interop.from_pyagrum(interop.to_pyagrum(net)).allclose(net)


def _assert_cpts_read_through_labels(net, bn, label):
    """Every CPT column of ``net`` equals ``bn``'s read through pyAgrum's labelled
    indexing (the plain reference), a parent's state ``i`` named ``label(parent, i)``."""
    for v in net.variables:
        parents, cpt = net.parents(v), np.asarray(net.cpt(v))
        for index in np.ndindex(*cpt.shape[1:]):
            where = {p: label(p, i) for p, i in zip(parents, index)}
            assert np.allclose(np.asarray(bn.cpt(v)[where], dtype=float),
                               cpt[(slice(None),) + index])


@pytest.mark.parametrize("name", ["child", "insurance"])
def test_pyagrum_cpts_match_entry_by_entry(name):
    net = load_network(name)
    _assert_cpts_read_through_labels(net, interop.to_pyagrum(net),
                                     lambda p, i: net.states(p)[i])


def test_from_pyagrum_reads_a_peer_built_network_entry_by_entry():
    bn = gum.fastBN("a[2]->c[3]<-b[4];b->d[2];c->d")
    bn.generateCPTs()
    _assert_cpts_read_through_labels(interop.from_pyagrum(bn), bn, lambda p, i: int(i))


@pytest.mark.parametrize("name", ["asia", "child", "alarm"])
def test_peers_compute_twlibs_posteriors(name):
    net = load_network(name)
    evidence = {net.variables[-1]: net.states(net.variables[-1])[0]}
    ours = JunctionTree(net).posteriors(evidence)
    engine = gum.LazyPropagation(interop.to_pyagrum(net))
    engine.setEvidence(evidence)
    engine.makeInference()
    for v in net.variables:
        assert np.allclose(engine.posterior(v).toarray(), ours[v], atol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.inference import VariableElimination
        pg = VariableElimination(interop.to_pgmpy(net))
        target = net.variables[0]
        got = pg.query([target], evidence=evidence, show_progress=False)
    assert np.allclose(got.values, ours[target], atol=1e-9)


def test_learned_network_goes_to_both_peers():
    from twlib import BoundedTreewidthNetwork

    frame = load_network("asia").sample(2000, random_state=0).to_pandas()
    model = BoundedTreewidthNetwork(k=2, time_limit=10, random_state=0).fit(frame)
    assert interop.from_pyagrum(interop.to_pyagrum(model.network_)).allclose(model.network_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert interop.from_pgmpy(interop.to_pgmpy(model.network_)).allclose(model.network_)
