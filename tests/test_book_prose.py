"""The book's prose as a reader meets it (``tests/book_prose.py`` lists the rules): each
failure names the chapter and the cell."""
import json

from . import book_prose


def test_every_chapter_keeps_the_tutorial_form():
    problems = book_prose.book_problems()
    assert problems == [], "\n".join(problems)


def test_the_checks_catch_what_they_look_for(tmp_path):
    notebook = tmp_path / "03_x.ipynb"
    cell = lambda kind, text: {"cell_type": kind, "metadata": {}, "source": [text],
                               **({"outputs": []} if kind == "code" else {})}
    notebook.write_text(json.dumps({"cells": [
        cell("markdown", "# X\n**The question.** Why?\n**Prerequisites.** Chapter 5.\n"),
        cell("code", "\n".join(["x = 1"] * 41)),
        cell("markdown", "As the previous run showed, {glue:text}`missing` rows.\n"),
        cell("markdown", "## Exercises\n1. One.\n```{admonition} Solution\nA.\n```\n")]}))
    found = "\n".join(book_prose.chapter_problems(3, notebook))
    for expected in ("no goals", "no run time", "prerequisite Chapter 5 is not earlier",
                     "41 lines of code", "history phrase 'previous run'",
                     "'missing' is never glued", "no '## Summary'", "1 exercises with a solution"):
        assert expected in found, expected
