"""Pictures: every node and arc drawn, highlighted sets coloured, comparisons styled."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from twlib import datasets  # noqa: E402
from twlib.drawing import ARC_STYLES, NODE_COLOURS, network_png  # noqa: E402
from twlib.errors import UnknownName  # noqa: E402
from twlib.inference import JunctionTree  # noqa: E402


def node_colours(ax, names):
    """Each variable's face colour, from the node collection drawn first."""
    faces = ax.collections[0].get_facecolors()
    return {v: mcolors.to_hex(faces[k]) for k, v in enumerate(names)}


def arrows(ax):
    return [p for p in ax.patches if isinstance(p, FancyArrowPatch)]


def test_network_drawing_has_every_node_and_arc_and_colours_what_is_highlighted():
    net = datasets.load_network("alarm")
    best = JunctionTree(net).mpe({"HRSAT": "HIGH"}).assignment
    ax = net.draw(evidence={"HRSAT": "HIGH"}, highlight=["CO", "BP"], assignment=best)
    assert len(ax.collections[0].get_offsets()) == len(net.variables)
    assert len(arrows(ax)) == len(net.arcs)
    colours = node_colours(ax, net.variables)
    assert colours["HRSAT"] == NODE_COLOURS["evidence"]
    assert colours["CO"] == colours["BP"] == NODE_COLOURS["highlight"]
    assert colours["HR"] == NODE_COLOURS["assignment"]
    texts = {t.get_text() for t in ax.texts}
    assert "HRSAT\n=HIGH" in texts and f"HR\n{best['HR']}" in texts
    # parents sit above their children (layers by topological generation)
    ys = dict(zip(net.variables, ax.collections[0].get_offsets()[:, 1]))
    assert all(ys[p] > ys[v] for p, v in net.arcs)


def test_comparison_styles_shared_extra_reversed_and_missing_arcs():
    net = datasets.load_network("asia")
    parents = net.parent_map()
    other = {v: list(ps) for v, ps in parents.items()}
    other["either"] = ["tub"]                 # lung -> either is missing from the other
    other["bronc"] = []                       # smoke -> bronc becomes bronc -> smoke
    other["smoke"] = ["bronc"]
    other["dysp"] = ["either", "bronc", "asia"]   # asia -> dysp: only in the other
    ax = net.draw(compare=other)
    colours = [mcolors.to_hex(p.get_edgecolor()) for p in arrows(ax)]
    assert colours.count(ARC_STYLES["extra"][0]) == 1          # lung -> either
    assert colours.count(ARC_STYLES["reversed"][0]) == 1       # smoke -> bronc
    assert colours.count(ARC_STYLES["missing"][0]) == 1        # asia -> dysp, dashed
    assert colours.count(ARC_STYLES["shared"][0]) == len(net.arcs) - 2
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {f"{k} arc" for k in ARC_STYLES}
    # laid out as the compared network: its parents above their children, and the
    # same positions whatever is compared with it
    ys = dict(zip(net.variables, ax.collections[0].get_offsets()[:, 1]))
    assert all(ys[p] > ys[v] for v, ps in other.items() for p in ps)
    # the drawn arcs and the compared ones may close a cycle together (asia -> tub ->
    # either here, either -> asia there): still drawn, in the compared network's layout
    ax = net.draw(compare={v: (["either"] if v == "asia" else []) for v in net.variables})
    colours = [mcolors.to_hex(p.get_edgecolor()) for p in arrows(ax)]
    assert colours.count(ARC_STYLES["missing"][0]) == 1
    assert colours.count(ARC_STYLES["extra"][0]) == len(net.arcs)


def test_junction_tree_drawing_and_errors():
    net = datasets.load_network("child")
    jt = JunctionTree(net)
    ax = jt.draw(highlight=["Disease"])
    assert len(ax.collections[0].get_offsets()) == len(jt.cliques)
    faces = ax.collections[0].get_facecolors()
    holding = [k for k, c in enumerate(jt.cliques) if "Disease" in c]
    assert all(mcolors.to_hex(faces[k]) == NODE_COLOURS["highlight"] for k in holding)
    assert sum(mcolors.to_hex(f) == NODE_COLOURS["plain"] for f in faces) \
        == len(jt.cliques) - len(holding)
    with pytest.raises(UnknownName, match="highlight"):
        jt.draw(highlight=["nope"])
    with pytest.raises(UnknownName, match="evidence"):
        net.draw(evidence={"nope": "x"})


def test_inline_picture_for_small_networks_only():
    png = datasets.load_network("asia")._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert network_png(datasets.load_network("hepar2")) is None
    assert np.isfinite(len(png))
