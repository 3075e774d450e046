"""Pictures of networks and junction trees (networkx layouts, matplotlib; no
system package needed).

* :func:`draw_network`: a DAG in layers by topological generation, parents above
  their children; evidence, an assignment (an MPE, say) or any set of variables
  can be highlighted, and the arcs can be compared with another network's.
* :func:`draw_junction_tree`: the cliques in layers from the root, each labelled
  with its variables and sized by its table, separators on the edges.

``BayesianNetwork.draw`` and ``JunctionTree.draw`` call these.
"""
from __future__ import annotations

import io
import math

import networkx as nx

from .errors import UnknownName
from .graphs import compare_arcs

__all__ = ["draw_network", "draw_junction_tree", "network_png", "ARC_STYLES", "NODE_COLOURS"]

NODE_COLOURS = {"plain": "#dbe6f4", "highlight": "#f4b183", "evidence": "#c00000",
                "assignment": "#a9d18e"}
# how an arc of the drawn network relates to the compared one: (colour, line style)
ARC_STYLES = {"shared": ("#404040", "solid"), "extra": ("#c00000", "solid"),
              "reversed": ("#ed7d31", "solid"), "missing": ("#8c8c8c", "dashed")}


def _axes(ax, size):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=size)
    ax.set_axis_off()
    return ax


def _layered(graph: nx.DiGraph, sweeps: int = 4) -> dict:
    """Positions in rows, parents above children: each node one row below its
    deepest parent, then raised as close to its children as that allows (so a
    root sits just above its first child, not at the top); within a row, nodes
    ordered by the mean position of their neighbours in the rows above and
    below, a few sweeps each way (fewer crossings), each row centred."""
    row = {}
    for depth, layer in enumerate(nx.topological_generations(graph)):
        for v in layer:
            row[v] = depth
    for v in reversed(list(nx.topological_sort(graph))):
        children = list(graph.successors(v))
        if children:
            row[v] = min(row[c] for c in children) - 1
    rows = {}
    for v in sorted(graph.nodes, key=str):
        rows.setdefault(row[v], []).append(v)
    x = {v: float(k) for members in rows.values() for k, v in enumerate(members)}
    levels = sorted(rows)
    for sweep in range(sweeps):
        down = sweep % 2 == 0
        for level in (levels[1:] if down else levels[-2::-1]):
            near = graph.predecessors if down else graph.successors
            def key(v):
                xs = [x[u] for u in near(v)]
                return sum(xs) / len(xs) if xs else x[v]
            rows[level].sort(key=key)
            for k, v in enumerate(rows[level]):
                x[v] = k - (len(rows[level]) - 1) / 2
    return {v: (x[v], -row[v]) for v in graph.nodes}


def _check_names(names, known, what):
    unknown = [v for v in names if v not in known]
    if unknown:
        raise UnknownName(f"{what} names unknown variables {unknown}")


def draw_network(net, *, ax=None, highlight=(), evidence=None, assignment=None, compare=None,
                 labels: bool = True, node_size: float | None = None, font_size: float = 8,
                 arc_widths: dict | None = None):
    """Draw a Bayesian network and return the matplotlib axes.

    ``highlight`` colours a set of variables; ``evidence`` (``{variable: state}``)
    colours the observed ones and writes their states; ``assignment`` (such as
    the first element of :meth:`twlib.inference.JunctionTree.mpe`) writes each
    variable's state; ``compare`` (another network, or a parent map) styles each
    arc by whether that network has it too, has it reversed, or lacks it, and
    draws its arcs this one lacks dashed (see ``ARC_STYLES``), with a legend;
    the nodes then sit where the compared network puts them, so several
    networks compared with one truth share one layout.  ``arc_widths`` maps
    ``(parent, child)`` arcs to line widths (a bootstrap's strengths, scaled);
    arcs it leaves out keep the default width.

    >>> from twlib.datasets import load_network
    >>> ax = draw_network(load_network("asia"), evidence={"xray": "yes"})
    >>> len(ax.collections[0].get_offsets())
    8
    """
    variables = list(net.variables)
    parents = net.parent_map()
    evidence, assignment = dict(evidence or {}), dict(assignment or {})
    for names, what in ((highlight, "highlight"), (evidence, "evidence"),
                        (assignment, "assignment")):
        _check_names(names, set(variables), what)
    graph = nx.DiGraph()
    graph.add_nodes_from(variables)
    graph.add_edges_from((p, v) for v in variables for p in parents[v])
    styles = {arc: "shared" for arc in graph.edges}
    missing, shape = [], graph
    if compare is not None:
        other = compare if isinstance(compare, dict) else compare.parent_map()
        _check_names(other, set(variables), "compare")
        shape = nx.DiGraph([(p, v) for v, ps in other.items() for p in ps])
        shape.add_nodes_from(variables)             # drawn in the compared network's layout
        arcs = compare_arcs(parents, other)
        missing = arcs.pop("missing")
        styles = {arc: kind for kind, some in arcs.items() for arc in some}
    pos = _layered(shape)
    widest = max(sum(1 for p in pos.values() if p[1] == y) for y in {p[1] for p in pos.values()})
    depth = 1 - min(p[1] for p in pos.values())
    ax = _axes(ax, (min(18, 1.4 + 1.1 * widest), min(14, 1.0 + 1.0 * depth)))
    colours = [NODE_COLOURS["evidence"] if v in evidence
               else NODE_COLOURS["highlight"] if v in set(highlight)
               else NODE_COLOURS["assignment"] if v in assignment
               else NODE_COLOURS["plain"] for v in variables]
    size = node_size or max(120, 900 - 6 * len(variables))
    nx.draw_networkx_nodes(graph, pos, nodelist=variables, node_color=colours, node_size=size,
                           edgecolors="#404040", linewidths=0.6, ax=ax)
    for kind, (colour, line) in ARC_STYLES.items():
        arcs = missing if kind == "missing" else [a for a, k in styles.items() if k == kind]
        # an arc that skips rows bends, so that it does not run through the nodes between
        for bent in (False, True):
            some = [(p, v) for p, v in arcs if (abs(pos[p][1] - pos[v][1]) > 1) == bent]
            if some:
                widths = [float((arc_widths or {}).get(arc, 1.1)) for arc in some]
                nx.draw_networkx_edges(nx.DiGraph(some), pos, edgelist=some, edge_color=colour,
                                       style=line, ax=ax, node_size=size, arrowsize=10,
                                       width=widths, arrows=True,
                                       connectionstyle="arc3,rad=0.25" if bent else "arc3")
    if labels:
        text = {v: (f"{v}\n={evidence[v]}" if v in evidence
                    else f"{v}\n{assignment[v]}" if v in assignment else str(v))
                for v in variables}
        drawn = nx.draw_networkx_labels(graph, pos, labels=text, font_size=font_size, ax=ax)
        for v in evidence:                       # light text on the dark evidence colour
            drawn[v].set_color("#ffffff")
    if compare is not None:
        from matplotlib.lines import Line2D

        ax.legend([Line2D([], [], color=c, linestyle=ls) for c, ls in ARC_STYLES.values()],
                  [f"{kind} arc" for kind in ARC_STYLES], loc="upper right",
                  fontsize=font_size, frameon=False)
    ax.set_title(getattr(net, "name", ""), fontsize=font_size + 2)
    ax.margins(0.08)
    return ax


def draw_junction_tree(tree, *, ax=None, highlight=(), font_size: float = 7,
                       max_label: int = 4):
    """Draw a junction tree and return the matplotlib axes: cliques in layers
    from the root, each labelled with up to ``max_label`` of its variables (and
    how many more) and sized by the log of its table; edges labelled with their
    separators' sizes; cliques holding a variable of ``highlight`` coloured.

    >>> from twlib.datasets import load_network
    >>> from twlib.inference import JunctionTree
    >>> ax = draw_junction_tree(JunctionTree(load_network("asia")))
    >>> len(ax.collections[0].get_offsets())
    6
    """
    graph = tree.to_networkx()
    _check_names(highlight, set(tree.arity), "highlight")
    depth = nx.single_source_shortest_path_length(graph, tree.root)
    layers = {}
    for i in sorted(graph.nodes):
        layers.setdefault(depth[i], []).append(i)
    pos = {i: (k - (len(row) - 1) / 2, -d) for d, row in layers.items()
           for k, i in enumerate(row)}
    widest = max(len(row) for row in layers.values())
    ax = _axes(ax, (min(18, 2 + 1.3 * widest), min(14, 1.2 + 1.1 * len(layers))))
    nodes = sorted(graph.nodes)
    entries = [graph.nodes[i]["entries"] for i in nodes]
    sizes = [500 + 120 * math.log2(max(e, 1)) for e in entries]
    colours = [NODE_COLOURS["highlight"] if set(graph.nodes[i]["variables"]) & set(highlight)
               else NODE_COLOURS["plain"] for i in nodes]
    nx.draw_networkx_nodes(graph, pos, nodelist=nodes, node_size=sizes, node_color=colours,
                           edgecolors="#404040", linewidths=0.6, ax=ax)
    nx.draw_networkx_edges(graph, pos, edge_color="#404040", ax=ax)

    def label(i):
        names = [str(v) for v in graph.nodes[i]["variables"]]
        more = f" +{len(names) - max_label}" if len(names) > max_label else ""
        return "\n".join(names[:max_label]) + more

    nx.draw_networkx_labels(graph, pos, labels={i: label(i) for i in nodes},
                            font_size=font_size, ax=ax)
    nx.draw_networkx_edge_labels(graph, pos, font_size=font_size - 1, ax=ax,
                                 edge_labels={(a, b): f"|S|={len(d['separator'])}"
                                              for a, b, d in graph.edges(data=True)})
    ax.set_title(f"junction tree of {tree.net.name}: {len(nodes)} cliques, width {tree.width}",
                 fontsize=font_size + 2)
    ax.margins(0.08)
    return ax


def network_png(net, *, max_variables: int = 60) -> bytes | None:
    """A PNG picture of ``net`` for a notebook's inline display (None beyond
    ``max_variables``, where the text form reads better)."""
    if len(net.variables) > max_variables:
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    draw_network(net, ax=fig.add_subplot())
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    return buffer.getvalue()
