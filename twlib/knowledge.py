"""What the user knows before the data speak: required and forbidden arcs, tiers,
variables without parents or children, in-degree caps.

A :class:`Knowledge` is built in Python, from a small text file, from pgmpy's
``ExpertKnowledge`` or from a pyAgrum ``BNLearner``'s constraints.  It is
checked against the data's names and against itself
(:meth:`Knowledge.validate`) before any search starts; every contradiction is a
:class:`KnowledgeConflict` that names the constraints that clash.  Learners
read it as a filter on the parent sets each variable may take
(:meth:`Knowledge.parent_filter`: forbidden parents, caps, required parents),
so knowledge prunes before scoring, and check their result against it
(:meth:`Knowledge.violations`) as they check the width certificate.

The text form has one constraint per line (``#`` starts a comment)::

    require Disease -> Age         # an arc that must be there
    forbid Age -> Disease          # an arc that must not
    tier Age Sex                   # tiers, earliest first: no arc from a later
    tier Disease                   #   tier into an earlier one
    forbid-within-tiers            # and none inside a tier either
    no-parents Age                 # roots
    no-children XrayReport         # leaves
    max-indegree 3                 # every variable; or: max-indegree Disease 2

>>> know = Knowledge.from_text("require a -> b\\ntier c\\ntier a b")
>>> know.allows("b", "c"), know.allows("c", "a"), know.required_parents("b")
(False, True, ('a',))
>>> know.violations({"a": [], "b": [], "c": ["a"]})
['required arc a -> b is missing', 'arc a -> c goes from tier 2 back to tier 1']
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from .errors import FormatError, InputError, UnknownName
from .graphs import moral_graph, treewidth_exact, treewidth_upper_bound

__all__ = ["Knowledge", "KnowledgeConflict", "expert_knowledge"]

_ARC = re.compile(r"^\s*(\S+)\s*->\s*(\S+)\s*$")


class KnowledgeConflict(InputError):
    """Constraints of a :class:`Knowledge` contradict each other (or the width bound)."""


def _arc(item) -> tuple:
    if isinstance(item, str):
        match = _ARC.match(item)
        if not match:
            raise InputError(f"an arc is written 'A -> B', got {item!r}")
        item = match.groups()
    parent, child = (str(x) for x in item)
    if parent == child:
        raise InputError(f"an arc from a variable to itself: {parent} -> {child}")
    return parent, child


@dataclass
class Knowledge:
    """Background knowledge for structure learning (see the module's docstring).

    Parameters
    ----------
    required, forbidden : iterables of ``(parent, child)`` or ``"A -> B"``
    tiers : list of lists of names, earliest first
        No arc from a variable of a later tier into one of an earlier tier;
        with ``forbid_within_tiers`` none between two of the same tier.
        Variables in no tier are free.
    no_parents, no_children : variables that are roots, or leaves
    max_indegree : int or ``{name: int}``
        The most parents a variable (every variable, for an int) may have.
    """

    required: list = field(default_factory=list)
    forbidden: list = field(default_factory=list)
    tiers: list = field(default_factory=list)
    forbid_within_tiers: bool = False
    no_parents: list = field(default_factory=list)
    no_children: list = field(default_factory=list)
    max_indegree: int | dict | None = None

    def __post_init__(self):
        self.required = list(dict.fromkeys(_arc(a) for a in self.required))
        self.forbidden = list(dict.fromkeys(_arc(a) for a in self.forbidden))
        self.tiers = [[str(v) for v in tier] for tier in self.tiers]
        self.no_parents = [str(v) for v in self.no_parents]
        self.no_children = [str(v) for v in self.no_children]
        self._tier = {}
        for t, tier in enumerate(self.tiers):
            for v in tier:
                if v in self._tier:
                    raise KnowledgeConflict(f"{v} is in tier {self._tier[v] + 1} and in tier "
                                            f"{t + 1}")
                self._tier[v] = t
        caps = self.max_indegree
        if caps is not None and not isinstance(caps, dict):
            caps = {None: caps}
        for name, cap in (caps or {}).items():
            if isinstance(cap, bool) or not isinstance(cap, (int, np.integer)) or cap < 0:
                raise InputError(f"an in-degree cap must be an integer >= 0, got {cap!r}"
                                 + ("" if name is None else f" for {name}"))
        self._caps = caps or {}

    def __bool__(self) -> bool:
        return bool(self.required or self.forbidden or self.tiers or self.no_parents
                    or self.no_children or self._caps)

    # ------------------------------------------------------------ building
    @classmethod
    def from_text(cls, text: str, source: str = "<knowledge>") -> "Knowledge":
        """Parse the text form (see the module's docstring); a malformed line is a
        FormatError naming ``source`` and the line."""
        parts = {"required": [], "forbidden": [], "tiers": [], "forbid_within_tiers": False,
                 "no_parents": [], "no_children": [], "max_indegree": None}
        caps = {}
        for no, line in enumerate(text.splitlines(), start=1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            head, rest = words[0].lower(), " ".join(words[1:])
            try:
                if head in ("require", "forbid"):
                    parts["required" if head == "require" else "forbidden"].append(_arc(rest))
                elif head == "tier" and len(words) > 1:
                    parts["tiers"].append(words[1:])
                elif head == "forbid-within-tiers" and len(words) == 1:
                    parts["forbid_within_tiers"] = True
                elif head in ("no-parents", "no-children") and len(words) > 1:
                    parts[head.replace("-", "_")].extend(words[1:])
                elif head == "max-indegree" and len(words) in (2, 3):
                    caps[None if len(words) == 2 else words[1]] = int(words[-1])
                else:
                    raise InputError(f"unknown or incomplete constraint {line.strip()!r}")
            except (InputError, ValueError) as err:
                raise FormatError(f"{source}:{no}: {err}; a line is 'require A -> B', "
                                  "'forbid A -> B', 'tier A B ...', 'forbid-within-tiers', "
                                  "'no-parents A ...', 'no-children A ...' or "
                                  "'max-indegree [A] N'") from None
        if caps:
            parts["max_indegree"] = caps[None] if list(caps) == [None] else caps
        return cls(**parts)

    @classmethod
    def from_file(cls, path) -> "Knowledge":
        """Read the text form from a file (``.gz`` too)."""
        from .io.text import read_text

        return cls.from_text(read_text(path), source=str(path))

    @classmethod
    def from_pgmpy(cls, expert) -> "Knowledge":
        """From pgmpy's ``ExpertKnowledge`` (its forbidden and required edges and its
        temporal order, earliest tier first)."""
        order = getattr(expert, "temporal_order", None) or []
        return cls(required=list(getattr(expert, "required_edges", None) or []),
                   forbidden=list(getattr(expert, "forbidden_edges", None) or []),
                   tiers=[list(tier) for tier in order])

    @classmethod
    def from_pyagrum(cls, learner) -> "Knowledge":
        """From a pyAgrum ``BNLearner``'s constraints, as its ``state()`` reports
        them: mandatory and forbidden arcs, the slice order (tiers), nodes with no
        parents or no children, the maximum in-degree."""
        state = {key: value[0] if isinstance(value, tuple) else value
                 for key, value in learner.state().items() if key.startswith("Constraint")}

        def items(key):
            text = state.get(f"Constraint {key}", "").strip().strip("{}")
            return [item.strip() for item in text.split(",") if item.strip()]

        slices = {}
        for item in items("Slice Order"):
            name, _, tier = item.rpartition(":")
            slices.setdefault(int(tier), []).append(name.strip())
        cap = state.get("Constraint Max InDegree")
        return cls(required=items("Mandatory Arcs"), forbidden=items("Forbidden Arcs"),
                   tiers=[slices[t] for t in sorted(slices)],
                   no_parents=items("No Parent Nodes"), no_children=items("No Children Nodes"),
                   max_indegree=int(cap) if cap not in (None, "", "-") else None)

    # ------------------------------------------------------------ reading
    def tier_of(self, name):
        """The tier (0 first) of ``name``, or None."""
        return self._tier.get(name)

    def cap(self, name):
        """The in-degree cap of ``name``, or None."""
        return self._caps.get(name, self._caps.get(None))

    def required_parents(self, child) -> tuple:
        return tuple(p for p, c in self.required if c == child)

    def start(self, names, given=None) -> dict:
        """The structure a search over ``names`` starts from: ``given``
        (``{child: parents}``) once checked against the knowledge (InputError
        naming what it breaks), or, with none given, the required arcs alone.

        >>> Knowledge(required=["a -> b"]).start(["a", "b"])
        {'a': [], 'b': ['a']}
        """
        if given is None:
            return {v: list(self.required_parents(v)) for v in names}
        broken = self.violations(given)
        if broken:
            raise InputError("the start breaks the knowledge: " + "; ".join(broken))
        return given

    def allows(self, parent, child) -> bool:
        """Whether the arc ``parent -> child`` is allowed (required arcs are)."""
        if (parent, child) in self.forbidden or child in self.no_parents \
                or parent in self.no_children:
            return False
        tp, tc = self._tier.get(parent), self._tier.get(child)
        if tp is None or tc is None:
            return True
        return tp < tc or (tp == tc and not self.forbid_within_tiers)

    def parent_filter(self, names):
        """The constraints as arrays over ``names``: ``allowed[c, p]`` (may ``p`` be a
        parent of ``c``), each child's required parents (tuples of indices) and
        its in-degree cap (``len(names)`` when none)."""
        index = {v: i for i, v in enumerate(names)}
        n = len(names)
        allowed = np.array([[p != c and self.allows(names[p], names[c]) for p in range(n)]
                            for c in range(n)], dtype=bool).reshape(n, n)
        required = [tuple(sorted(index[p] for p in self.required_parents(v))) for v in names]
        caps = np.array([n if self.cap(v) is None else self.cap(v) for v in names],
                        dtype=np.int64)
        return allowed, required, caps

    def validate(self, names, k: int | None = None) -> "Knowledge":
        """Check the names against the data's and the constraints against each other
        (and against the width bound ``k``); returns self, raises UnknownName or
        :class:`KnowledgeConflict`."""
        known = set(names)
        mentioned = ([v for arc in self.required + self.forbidden for v in arc]
                     + list(self._tier) + self.no_parents + self.no_children
                     + [v for v in self._caps if v is not None])
        unknown = sorted(set(mentioned) - known)
        if unknown:
            raise UnknownName(f"the knowledge names variables that are not in the data: "
                              f"{unknown}")
        for p, c in self.required:
            if (p, c) in self.forbidden:
                raise KnowledgeConflict(f"{p} -> {c} is both required and forbidden")
            if c in self.no_parents:
                raise KnowledgeConflict(f"{p} -> {c} is required but {c} may have no parents")
            if p in self.no_children:
                raise KnowledgeConflict(f"{p} -> {c} is required but {p} may have no children")
            if not self.allows(p, c) and self._tier[p] == self._tier[c]:
                raise KnowledgeConflict(f"{p} -> {c} is required but lies inside tier "
                                        f"{self._tier[p] + 1}, and arcs within tiers are "
                                        "forbidden")
            if not self.allows(p, c):
                raise KnowledgeConflict(f"{p} -> {c} is required but goes from tier "
                                        f"{self._tier[p] + 1} to tier {self._tier[c] + 1}")
        for v in names:
            need, cap = self.required_parents(v), self.cap(v)
            if cap is not None and len(need) > cap:
                raise KnowledgeConflict(f"{v} has {len(need)} required parents "
                                        f"({', '.join(need)}) but an in-degree cap of {cap}")
        graph = nx.DiGraph(self.required)
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            raise KnowledgeConflict("the required arcs form a cycle: "
                                    + " -> ".join([u for u, _ in cycle] + [cycle[0][0]]))
        if k is not None and self.required:
            self._check_width(k)
        return self

    def required_moral_graph(self) -> nx.Graph:
        """The moral graph of the required arcs, over the variables they touch: a
        network holding them has these edges in its own moral graph.

        >>> sorted(map(sorted, Knowledge(required=["a -> c", "b -> c"])
        ...                    .required_moral_graph().edges))
        [['a', 'b'], ['a', 'c'], ['b', 'c']]
        """
        parents = {}
        for p, c in self.required:
            parents.setdefault(c, []).append(p)
            parents.setdefault(p, [])
        return moral_graph(parents)

    def _check_width(self, k: int) -> None:
        moral = self.required_moral_graph()
        width, _ = treewidth_upper_bound(moral)
        if width > k and moral.number_of_nodes() <= 20:
            width, _ = treewidth_exact(moral)
            if width > k:
                raise KnowledgeConflict(f"the required arcs alone have tree-width {width} "
                                        f"(their moral graph), over k = {k}")

    def violations(self, parents: dict) -> list:
        """What a structure (``{child: [parents]}``) breaks, one sentence each."""
        out = []
        arcs = {(p, c) for c, ps in parents.items() for p in ps}
        for p, c in self.required:
            if (p, c) not in arcs:
                out.append(f"required arc {p} -> {c} is missing")
        for p, c in sorted(arcs):
            if not self.allows(p, c):
                tp, tc = self._tier.get(p), self._tier.get(c)
                if (p, c) in self.forbidden:
                    out.append(f"forbidden arc {p} -> {c} is present")
                elif c in self.no_parents:
                    out.append(f"{c} may have no parents but has {p}")
                elif p in self.no_children:
                    out.append(f"{p} may have no children but has {c}")
                elif tp == tc:
                    out.append(f"arc {p} -> {c} lies inside tier {tp + 1}")
                else:
                    out.append(f"arc {p} -> {c} goes from tier {tp + 1} back to tier {tc + 1}")
        for c, ps in parents.items():
            cap = self.cap(c)
            if cap is not None and len(ps) > cap:
                out.append(f"{c} has {len(ps)} parents, over its cap of {cap}")
        return out


def expert_knowledge(parents: dict, *, required_share: float = 0.1, n_tiers: int = 3,
                     forbidden_share: float = 0.0, random_state=None) -> Knowledge:
    """What an expert who knows a network (``{child: [parents]}``) could say of it,
    for experiments: its topological order cut into ``n_tiers`` tiers (0: none),
    a random ``required_share`` of its arcs required, and the reversals of
    another ``forbidden_share`` of them forbidden.

    >>> know = expert_knowledge({"a": [], "b": ["a"], "c": ["b"]}, required_share=0.5, n_tiers=2,
    ...                 random_state=0)
    >>> know.tiers, len(know.required), know.violations({"a": [], "b": ["a"], "c": ["b"]})
    ([['a', 'b'], ['c']], 1, [])
    """
    from .graphs import topological_order

    rng = np.random.default_rng(random_state)
    order = topological_order(parents)
    tiers = [list(part) for part in np.array_split(np.array(order, dtype=object), n_tiers)
             if len(part)] if n_tiers else []
    arcs = sorted((p, v) for v, ps in parents.items() for p in ps)
    required_count = int(round(required_share * len(arcs)))
    forbidden_count = min(int(round(forbidden_share * len(arcs))), len(arcs) - required_count)
    picked = rng.permutation(len(arcs))
    required = [arcs[i] for i in picked[:required_count]]
    forbidden = [arcs[i][::-1] for i in picked[required_count:required_count + forbidden_count]]
    return Knowledge(required=required, forbidden=forbidden, tiers=tiers)
