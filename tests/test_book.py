"""The book as a reader without network sees it: built from the notebooks' stored outputs
(nbval checks those outputs in the same test run), then checked page by page."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from . import book_html

ROOT = book_html.ROOT


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    out = tmp_path_factory.mktemp("book")
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    (out / "_config.yml").write_text(yaml.safe_dump(config))
    jb = shutil.which("jupyter-book", path=str(Path(sys.executable).parent))
    done = subprocess.run([jb, "build", str(ROOT), "--config", str(out / "_config.yml"),
                           "--path-output", str(out), "-W", "-n", "--keep-going"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out / "_build" / "html"


def test_every_chapter_has_its_page(html):
    assert book_html.missing_pages(html) == []
    assert len(book_html.chapter_pages(html)) == 17      # intro, 14 chapters, glossary, bibliography


def test_nothing_is_loaded_from_another_host(html):
    assert book_html.remote_references(html) == []
    page = (html / "notebooks" / "06_ktree_guided_search.html").read_text()
    assert "_static/mathjax/tex-chtml.js" in page
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_every_figure_is_a_local_image_that_decodes(html):
    assert book_html.broken_images(html) == []
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        stored = sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))
        assert book_html.figure_count(html)[f"notebooks/{notebook.stem}.html"] == stored


def test_chapter_titles_are_numbered_once(html):
    for page in book_html.chapter_pages(html)[1:-2]:
        found = re.search(r'<h1><span class="section-number">(\d+)\. </span>([^<]*)',
                          page.read_text())
        assert found and not found.group(2).lstrip()[:1].isdigit(), page.name


def test_code_cells_fit_the_page():
    """Code lines of at most 79 characters show without a scroll bar from 1,200 pixels up
    (book/_static/twlib.css; measured with ``python tests/book_html.py --browser``)."""
    long = [(nb.name, line) for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))
            for cell in json.loads(nb.read_text())["cells"] if cell["cell_type"] == "code"
            for line in "".join(cell["source"]).splitlines() if len(line) > book_html.CODE_WIDTH]
    assert long == [], "reflow with: ruff format --line-length 79 notebooks/*.ipynb"


def test_the_checks_catch_what_they_look_for(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "a.css").write_text("@font-face{src:url(https://fonts.x/f.woff2)}")
    (tmp_path / "index.html").write_text(
        '<script src="https://cdn.x/mathjax.js"></script><a href="https://ok.example">link</a>'
        '<script>const URL = "https://unpkg.com/thebe/lib/index.js"</script>'
        '<link rel="stylesheet" href="//cdn.x/s.css"><img src="missing.png">'
        '<div class="cell_input"><div><pre>' + "x" * 80 + "</pre></div></div>")
    found = {u for _, u in book_html.remote_references(tmp_path)}
    assert found == {"https://cdn.x/mathjax.js", "https://unpkg.com/thebe/lib/index.js",
                     "//cdn.x/s.css", "https://fonts.x/f.woff2"}
    assert [why for *_, why in book_html.broken_images(tmp_path)] == ["missing"]
    assert [n for _, n, _ in book_html.long_code_lines(tmp_path)] == [80]
