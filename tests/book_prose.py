"""Checks on the book's prose, as a reader meets it chapter by chapter.

Used by ``tests/test_book_prose.py`` (so ``make test`` runs them) and by ``make book-check``:

* every chapter opens with its question, its goals, its prerequisites and its run time, and
  closes with a summary and at least three exercises with solutions;
* its prerequisites name earlier chapters only (the order of ``_toc.yml``);
* no markdown cell tells the project's history (``HISTORY`` lists the phrases);
* every name the prose glues (``{glue:text}`name```) is glued by a code cell of the chapter,
  and every glued value reads back as a literal (as myst-nb formats it);
* no code cell runs past ``CODE_LINES`` lines and no chapter's markdown past ``WORDS``;
* the introduction lists every chapter of ``_toc.yml`` and the glossary names a chapter for
  every term it defines.

Each problem names the chapter and the cell.

    python -m tests.book_prose          # prints the problems, exit status 1 if any
"""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from .book_html import ROOT, toc_files

CODE_LINES = 40
WORDS = 4_000
#: Phrases that tell how the code or a run came to be rather than what the method is.
HISTORY = ("the issue", "previous run", "the run before", "first version", "earlier version",
           "earlier saved run", "earlier run", "not here yet", "on other days",
           "were made again", "after a fix to", "run between the two", "was tuned",
           "has not always been", "this session", "before the fix", "the one before the",
           "used to take", "what is not here")
OPENING = {"question": "**The question.**", "goals": "After this chapter you will be able to",
           "prerequisites": "**Prerequisites.**", "run time": "**Run time.**"}
_SOLUTION = re.compile(r"^\s*```\{admonition\} Solution", re.M)
_CHAPTER_REF = re.compile(r"\bChapters?\s+(\d+)((?:(?:,\s*|\s+and\s+|\s+or\s+)\d+)*)")


def chapters() -> list[Path]:
    """The chapters' notebooks in the order of ``_toc.yml``; chapter i is ``chapters()[i - 1]``."""
    return [ROOT / f"{f}.ipynb" for f in toc_files() if f.startswith("notebooks/")]


def _cells(notebook: Path) -> list[dict]:
    return json.loads(notebook.read_text())["cells"]


def _text(cell: dict) -> str:
    return "".join(cell["source"])


def _sections(cells: list[dict]) -> dict[str, str]:
    """Markdown under each level-two heading, by heading."""
    found, current = {}, None
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        for line in _text(cell).splitlines():
            if line.startswith("## "):
                current = line[3:].strip()
                found[current] = ""
            elif current is not None:
                found[current] += line + "\n"
    return found


def chapter_problems(number: int, notebook: Path) -> list[str]:
    """What the chapter numbered ``number`` lacks or holds against the rules above."""
    name = f"Chapter {number} ({notebook.name})"
    cells = _cells(notebook)
    problems = []
    opening = _text(cells[0])
    problems += [f"{name}, cell 0: no {what} ({mark!r})"
                 for what, mark in OPENING.items() if mark not in opening]
    prerequisites = opening.partition(OPENING["prerequisites"])[2].split("**", 1)[0]
    for match in _CHAPTER_REF.finditer(prerequisites):
        for cited in map(int, re.findall(r"\d+", match.group(0))):
            if cited >= number:
                problems.append(f"{name}, cell 0: prerequisite Chapter {cited} is not earlier")
    sections = _sections(cells)
    if "Summary" not in sections:
        problems.append(f"{name}: no '## Summary' section")
    exercises = sections.get("Exercises", "")
    if not exercises:
        problems.append(f"{name}: no '## Exercises' section")
    elif (solved := len(_SOLUTION.findall(exercises))) < 3:
        problems.append(f"{name}: {solved} exercises with a solution "
                        "('```{admonition} Solution'), fewer than 3")
    glued = set()
    words = 0
    for i, cell in enumerate(cells):
        text = _text(cell)
        if cell["cell_type"] == "code":
            # An f-string name (glue(f"acc_{name}", ...)) glues every name of its shape.
            glued |= {re.escape(n).replace(r"\{", "{") for n in
                      re.findall(r"\bglue\(\s*f?[\"']([^\"']+)[\"']", text)}
            if (lines := len(text.splitlines())) > CODE_LINES:
                problems.append(f"{name}, cell {i}: {lines} lines of code (at most {CODE_LINES})")
            problems += [f"{name}, cell {i}: glued {g!r} reads {v!r}, which a format in the "
                         "prose cannot take (glue a plain int, float or str)"
                         for g, v in _glued_values(cell) if not _literal(v)]
            continue
        words += len(text.split())
        lowered = " ".join(text.lower().split())
        problems += [f"{name}, cell {i}: history phrase {p!r}" for p in HISTORY if p in lowered]
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            for used in re.findall(r"\{glue:\w*\}`([^`]+)`", _text(cell)):
                if not any(re.fullmatch(re.sub(r"\{[^}]*\}", ".+", g), used.split(":")[0])
                           for g in glued):
                    problems.append(f"{name}, cell {i}: '{used}' is never glued")
    if words > WORDS:
        problems.append(f"{name}: {words:,} words of markdown (at most {WORDS:,})")
    return problems


def _glued_values(cell: dict) -> list[tuple[str, str]]:
    """``(name, text)`` of each value the cell's saved outputs glued."""
    return [(o.get("metadata", {}).get("scrapbook", {}).get("name", "?"),
             "".join(o["data"]["application/papermill.record/text/plain"]))
            for o in cell.get("outputs", [])
            if "application/papermill.record/text/plain" in o.get("data", {})]


def _literal(text: str) -> bool:
    """Whether myst-nb can read a glued value back as a Python literal (it
    formats ``{glue:text}`name:.2f``` that way; ``np.float64(0.5)`` fails)."""
    try:
        ast.literal_eval(text)
    except (SyntaxError, ValueError):
        return False
    return True


def book_problems() -> list[str]:
    """Every problem of every chapter, the introduction and the glossary."""
    notebooks = chapters()
    problems = [p for i, nb in enumerate(notebooks, 1) for p in chapter_problems(i, nb)]
    intro = (ROOT / "book" / "intro.md").read_text()
    problems += [f"book/intro.md: Chapter {i} ({nb.name}) is not in the chapter map"
                 for i, nb in enumerate(notebooks, 1)
                 if f"{nb.parent.name}/{nb.stem}" not in intro]
    glossary = ROOT / "book" / "glossary.md"
    if not glossary.is_file():
        problems.append("book/glossary.md is missing")
    else:
        for line in glossary.read_text().splitlines():
            if line.startswith("| ") and not line.startswith(("| Term", "| ---")):
                if not re.search(r"Chapter \d+", line):
                    problems.append(f"book/glossary.md: {line[:40]!r} names no chapter")
    return problems


if __name__ == "__main__":
    found = book_problems()
    print("\n".join(found) or "the book's prose: no problems")
    sys.exit(1 if found else 0)
