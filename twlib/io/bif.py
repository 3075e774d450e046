"""Read and write networks in the Bayesian Interchange Format (BIF 0.15).

Files ending in ``.gz`` are (de)compressed on the fly.  The reader is lenient
about state names (it takes any run of characters other than whitespace and
``{}()[]|,;``, so child's ``Asy/Patch`` or ``<5`` read fine) and strict about
structure: a malformed file raises :class:`BIFError` naming the line.

>>> import io
>>> text = '''network n { }
... variable a { type discrete [ 2 ] { yes, no }; }
... probability ( a ) { table 0.3, 0.7; }'''
>>> loads(text).cpt("a").tolist()
[0.3, 0.7]
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path
from urllib.parse import quote, unquote

import numpy as np

from ..errors import DataNotFound, FormatError
from ..network import BayesianNetwork
from .text import read_text

__all__ = ["read", "write", "loads", "dumps", "BIFError", "safe_name"]

_PUNCT = set("{}()[]|,;")
_TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|\s+|[{}()\[\]|,;]|[^\s{}()\[\]|,;]+", re.S)
_SAFE = re.compile(r"[^A-Za-z0-9_]")
_LABELS = "twlib_labels"


class BIFError(FormatError):
    """A malformed BIF file; the message names the line."""


def _tokenize(text: str):
    tokens, line = [], 1
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if not (tok.isspace() or tok.startswith("//") or tok.startswith("/*")):
            tokens.append((tok, line))
        line += tok.count("\n")
    return tokens


class _Parser:
    def __init__(self, text: str, source: str):
        self.toks = _tokenize(text)
        self.pos = 0
        self.source = source

    def error(self, msg, line=None):
        if line is None:
            line = self.toks[self.pos][1] if self.pos < len(self.toks) else \
                (self.toks[-1][1] if self.toks else 1)
        return BIFError(f"{self.source}, line {line}: {msg}")

    def peek(self):
        return self.toks[self.pos][0] if self.pos < len(self.toks) else None

    def next(self, what="a token"):
        if self.pos >= len(self.toks):
            raise self.error(f"file ends early, expected {what}")
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def expect(self, value):
        tok, line = self.next(repr(value))
        if tok != value:
            raise self.error(f"expected {value!r}, found {tok!r}", line)
        return line

    def word(self, what):
        tok, line = self.next(what)
        if tok in _PUNCT:
            raise self.error(f"expected {what}, found {tok!r}", line)
        return tok, line

    def skip_block(self):
        """Skip a balanced ``{ ... }`` block."""
        self.expect("{")
        depth = 1
        while depth:
            tok, _ = self.next("'}'")
            depth += (tok == "{") - (tok == "}")

    def labels(self):
        """The state labels of a ``property twlib_labels = "..." ;`` line (after 'property')."""
        self.next()
        self.expect("=")
        words = []
        while self.peek() != ";":
            words.append(self.next("a state label")[0].strip('"'))
        self.expect(";")
        return [unquote(w) for w in words if w]

    def skip_statement(self):
        while self.next("';'")[0] != ";":
            pass

    def word_list(self, close, what):
        items = []
        while True:
            tok, line = self.word(what)
            items.append(tok)
            sep, line = self.next(f"',' or {close!r}")
            if sep == close:
                return items
            if sep != ",":
                raise self.error(f"expected ',' or {close!r} in a list of {what}s, found {sep!r}",
                                 line)

    def numbers(self):
        vals = []
        while True:
            tok, line = self.next("a probability or ';'")
            if tok == ";":
                return vals
            if tok == ",":
                continue
            try:
                vals.append(float(tok))
            except ValueError:
                raise self.error(f"expected a probability, found {tok!r}", line) from None

    def parse(self):
        name = "unknown"
        states, parents, rows, tables, decl_line = {}, {}, {}, {}, {}
        labels = {}
        order = []
        while self.peek() is not None:
            kw, line = self.next()
            if kw == "network":
                name, _ = self.word("a network name")
                self.skip_block()
            elif kw == "variable":
                var, vline = self.word("a variable name")
                if var in states:
                    raise self.error(f"variable {var!r} declared twice", vline)
                self.expect("{")
                while self.peek() != "}":
                    tok, tline = self.next("'type' or 'property'")
                    if tok == "type":
                        kind, kline = self.word("'discrete'")
                        if kind != "discrete":
                            raise self.error(f"only discrete variables are supported, found {kind!r}",
                                             kline)
                        self.expect("[")
                        n_tok, nline = self.word("the number of states")
                        if not n_tok.isdigit():
                            raise self.error(f"the number of states must be an integer, found {n_tok!r}",
                                             nline)
                        self.expect("]")
                        self.expect("{")
                        st = self.word_list("}", "state name")
                        if len(st) != int(n_tok):
                            raise self.error(f"variable {var!r} declares {n_tok} states but lists "
                                             f"{len(st)}", nline)
                        if len(set(st)) != len(st):
                            raise self.error(f"variable {var!r} repeats a state name", nline)
                        self.expect(";")
                        states[var] = st
                    elif tok == "property" and self.peek() == _LABELS:
                        labels[var] = self.labels()
                    elif tok == "property":
                        self.skip_statement()
                    else:
                        raise self.error(f"unexpected {tok!r} in the block of variable {var!r}", tline)
                self.expect("}")
                if var not in states:
                    raise self.error(f"variable {var!r} has no 'type discrete' line", vline)
                order.append(var)
                decl_line[var] = vline
            elif kw == "probability":
                self.expect("(")
                child, cline = self.word("a variable name")
                ps = []
                sep, sline = self.next("'|' or ')'")
                if sep == "|":
                    ps = self.word_list(")", "parent name")
                elif sep != ")":
                    raise self.error(f"expected '|' or ')', found {sep!r}", sline)
                if child in parents:
                    raise self.error(f"second probability block for {child!r}", cline)
                parents[child] = ps
                rows[child] = []
                self.expect("{")
                while self.peek() != "}":
                    tok, tline = self.next("'table', '(' or '}'")
                    if tok == "table":
                        tables[child] = (self.numbers(), tline)
                    elif tok == "(":
                        config = self.word_list(")", "parent state")
                        rows[child].append((config, self.numbers(), tline))
                    elif tok == "property":
                        self.skip_statement()
                    elif tok == "default":
                        raise self.error("'default' rows are not supported", tline)
                    else:
                        raise self.error(f"unexpected {tok!r} in the probability block of {child!r}",
                                         tline)
                self.expect("}")
                decl_line.setdefault(("p", child), cline)
            else:
                raise self.error(f"expected 'network', 'variable' or 'probability', found {kw!r}",
                                 line)
        net = self.build(name, order, states, parents, rows, tables, decl_line)
        return _relabelled(net, labels) if labels else net

    def build(self, name, order, states, parents, rows, tables, decl_line):
        cpts = {}
        for child in order:
            if child not in parents:
                raise self.error(f"no probability block for variable {child!r}", decl_line[child])
        for child, ps in parents.items():
            pline = decl_line[("p", child)]
            if child not in states:
                raise self.error(f"probability block for undeclared variable {child!r}", pline)
            for p in ps:
                if p not in states:
                    raise self.error(f"parent {p!r} of {child!r} is not declared", pline)
            r = len(states[child])
            shape = (r,) + tuple(len(states[p]) for p in ps)
            cpt = np.full(shape, np.nan)
            if child in tables:
                vals, tline = tables[child]
                if len(vals) != cpt.size:
                    raise self.error(f"table of {child!r} has {len(vals)} entries, expected "
                                     f"{cpt.size}", tline)
                # BIF tables list the child's distribution for each parent state,
                # the last parent varying fastest
                cpt = np.moveaxis(np.array(vals).reshape(shape[1:] + (r,)), -1, 0)
            for config, vals, tline in rows[child]:
                if len(config) != len(ps):
                    raise self.error(f"row of {child!r} names {len(config)} parent states, "
                                     f"expected {len(ps)}", tline)
                if len(vals) != r:
                    raise self.error(f"row of {child!r} has {len(vals)} probabilities, expected {r}",
                                     tline)
                try:
                    idx = tuple(states[p].index(s) for p, s in zip(ps, config))
                except ValueError:
                    bad = [s for p, s in zip(ps, config) if s not in states[p]]
                    raise self.error(f"unknown parent state(s) {bad} in a row of {child!r}",
                                     tline) from None
                cpt[(slice(None),) + idx] = vals
            if np.isnan(cpt).any():
                raise self.error(f"probability block of {child!r} leaves parent configurations "
                                 "without a distribution", pline)
            cpts[child] = cpt
        try:
            return BayesianNetwork(order, states, parents, cpts, name=name)
        except ValueError as exc:
            raise BIFError(f"{self.source}: {exc}") from None


def _relabelled(net: BayesianNetwork, labels: dict) -> BayesianNetwork:
    """The network with the state labels a ``twlib_labels`` property kept (the states
    that :func:`safe_name` rewrote, such as the intervals of a discretizer)."""
    states = {v: labels.get(v, net.states(v)) if len(labels.get(v, ())) == net.arity(v)
              else net.states(v) for v in net.variables}
    return BayesianNetwork(net.variables, states, net.parent_map(),
                           {v: net.cpt(v) for v in net.variables}, name=net.name)


def loads(text: str, *, source: str = "<string>") -> BayesianNetwork:
    """Parse BIF text into a :class:`BayesianNetwork`."""
    return _Parser(text, source).parse()


def read(path) -> BayesianNetwork:
    """Read a BIF file (gzip-compressed if the name ends in ``.gz``)."""
    path = Path(path)
    if not path.exists():
        raise DataNotFound(f"no such BIF file: {path}")
    return loads(read_text(path), source=str(path))


def safe_name(name: str, *, taken=()) -> str:
    """A BIF-safe form of a name: characters outside ``[A-Za-z0-9_]`` become ``_``.

    Names that would start with a digit (or become empty) get a ``s`` prefix
    only when needed for uniqueness; clashes get a numeric suffix.

    >>> safe_name("Asy/Patch"), safe_name("<5"), safe_name("a_b", taken={"a_b"})
    ('Asy_Patch', '_5', 'a_b_2')
    """
    base = _SAFE.sub("_", name) or "_"
    out, k = base, 2
    while out in taken:
        out, k = f"{base}_{k}", k + 1
    return out


def dumps(net: BayesianNetwork, *, safe_names: bool = True) -> str:
    """BIF text of a network.

    With ``safe_names`` (default) variable and state names are rewritten by
    :func:`safe_name` where needed, so strict parsers (pgmpy, pyAgrum) accept
    the file; probabilities are written with full precision, so CPTs survive
    a round trip exactly.
    """
    vname, sname = {}, {}
    for v in net.variables:
        vname[v] = safe_name(v, taken=set(vname.values())) if safe_names else v
        taken = set()
        for s in net.states(v):
            s2 = safe_name(s, taken=taken) if safe_names else s
            taken.add(s2)
            sname[v, s] = s2
    lines = [f"network {safe_name(net.name) if safe_names else net.name} {{", "}"]
    for v in net.variables:
        st = ", ".join(sname[v, s] for s in net.states(v))
        lines += [f"variable {vname[v]} {{",
                  f"  type discrete [ {net.arity(v)} ] {{ {st} }};"]
        if any(sname[v, s] != s for s in net.states(v)):
            # the labels as they were, percent-encoded into single tokens (other
            # readers skip a property; twlib's restores them)
            encoded = " ".join(quote(s, safe="") for s in net.states(v))
            lines.append(f'  property {_LABELS} = "{encoded}" ;')
        lines.append("}")
    for v in net.variables:
        ps = net.parents(v)
        cpt = net.cpt(v)
        if not ps:
            lines += [f"probability ( {vname[v]} ) {{",
                      "  table " + ", ".join(repr(float(x)) for x in cpt) + ";", "}"]
            continue
        lines.append(f"probability ( {vname[v]} | {', '.join(vname[p] for p in ps)} ) {{")
        for idx in np.ndindex(*cpt.shape[1:]):
            config = ", ".join(sname[p, net.states(p)[i]] for p, i in zip(ps, idx))
            probs = ", ".join(repr(float(x)) for x in cpt[(slice(None),) + idx])
            lines.append(f"  ({config}) {probs};")
        lines.append("}")
    return "\n".join(lines) + "\n"


def write(net: BayesianNetwork, path, *, safe_names: bool = True) -> None:
    """Write a network as BIF (gzip-compressed if the name ends in ``.gz``)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as fh:
        fh.write(dumps(net, safe_names=safe_names))
