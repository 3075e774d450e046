"""Checks on the built book, as a reader without network would see it.

Static checks (used by ``tests/test_book.py`` and by ``make book-check``):

* every chapter of ``_toc.yml`` has its page;
* no page or style sheet loads a script, style, font or image from another host;
* every ``<img>`` points at a local file that decodes as an image;
* no line in a code cell is wider than the page shows without a scroll bar.

With ``--browser`` the same pages are opened in headless Chromium (Debian's
``chromium``): every code block is measured for horizontal overflow, and
``--screenshot`` saves a picture of one chapter.

    python tests/book_html.py _build/html --browser --screenshot _build/chapter.png
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import yaml

ROOT = Path(__file__).resolve().parent.parent
# The longest code line a chapter may hold: with book/_static/twlib.css it shows without a
# horizontal scroll bar in windows from 1,200 pixels wide up (and below 1,200, where the
# sidebars fold away); measured with --browser.
CODE_WIDTH = 79
# Attributes that make the browser fetch something when the page loads.
_FETCHED = {("script", "src"), ("img", "src"), ("source", "src"), ("iframe", "src"),
            ("video", "src"), ("audio", "src"), ("embed", "src")}
_LINK_RELS = {"stylesheet", "preload", "modulepreload", "icon", "shortcut icon", "manifest",
              "apple-touch-icon", "prefetch"}
_REMOTE = re.compile(r"^(https?:)?//", re.I)
_CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])((?:https?:)?//[^'")\s]+)""", re.I)
_SCRIPT_URL = re.compile(r"""['"]((?:https?:)?//[^'"]+\.(?:js|css|woff2?|ttf|otf)(?:\?[^'"]*)?)['"]""")


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.fetched, self.images, self.code = [], [], []
        self._in_script = self._in_code = False
        self._depth = 0
        self._buffer = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for t, a in _FETCHED:
            if tag == t and attrs.get(a):
                self.fetched.append(attrs[a])
        if tag == "link" and attrs.get("href") and attrs.get("rel", "").lower() in _LINK_RELS:
            self.fetched.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "script" and not attrs.get("src"):
            self._in_script = True
        if tag == "div" and "cell_input" in attrs.get("class", "").split():
            self._in_code, self._depth, self._buffer = True, 0, []
        if self._in_code and tag == "div":
            self._depth += 1

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False
        if self._in_code and tag == "div":
            self._depth -= 1
            if self._depth == 0:
                self._in_code = False
                self.code.append("".join(self._buffer))

    def handle_data(self, data):
        if self._in_script:
            self.fetched += _SCRIPT_URL.findall(data)
        if self._in_code:
            self._buffer.append(data)


def _parse(page: Path) -> _Page:
    parser = _Page()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def toc_files() -> list:
    """Every file of ``_toc.yml`` in reading order, the root (the introduction) first."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc.get("parts", [])
                            for c in part.get("chapters", [])]


def chapter_pages(html: Path) -> list:
    """The HTML page of every file in ``_toc.yml`` (missing ones included, to be reported)."""
    _, *rest = toc_files()
    return [html / "index.html"] + [html / f"{f}.html" for f in rest]


def missing_pages(html: Path) -> list:
    return [str(p.relative_to(html)) for p in chapter_pages(html) if not p.exists()]


def remote_references(html: Path) -> list:
    """``(file, url)`` for everything a page or style sheet would fetch from another host."""
    found = []
    for page in sorted(html.rglob("*.html")):
        found += [(str(page.relative_to(html)), u) for u in _parse(page).fetched if _REMOTE.match(u)]
    for sheet in sorted(html.rglob("*.css")):
        found += [(str(sheet.relative_to(html)), u)
                  for u in _CSS_URL.findall(sheet.read_text(encoding="utf-8", errors="replace"))]
    return found


def broken_images(html: Path) -> list:
    """``(page, src, why)`` for every image that is remote, missing or does not decode."""
    bad = []
    for page in chapter_pages(html):
        if not page.exists():
            continue
        for src in _parse(page).images:
            target = (page.parent / src.split("#")[0].split("?")[0]).resolve()
            why = None
            if _REMOTE.match(src) or src.startswith("data:"):
                why = "not a local file"
            elif not target.is_file():
                why = "missing"
            elif target.suffix.lower() != ".svg":
                try:
                    matplotlib.image.imread(target)
                except Exception as exc:          # any decoder failure is the finding
                    why = f"does not decode: {exc}"
            elif b"<svg" not in target.read_bytes()[:2000]:
                why = "not an SVG"
            if why:
                bad.append((str(page.relative_to(html)), src, why))
    return bad


def figure_count(html: Path) -> dict:
    """Chapter page -> number of images on it."""
    return {str(p.relative_to(html)): len(_parse(p).images)
            for p in chapter_pages(html) if p.exists()}


def long_code_lines(html: Path, limit: int = CODE_WIDTH) -> list:
    """``(page, length, line)`` for code-cell lines longer than ``limit`` characters."""
    out = []
    for page in chapter_pages(html):
        if page.exists():
            for block in _parse(page).code:
                out += [(str(page.relative_to(html)), len(line), line)
                        for line in block.splitlines() if len(line) > limit]
    return out


# ---------------------------------------------------------------- in a browser
_MEASURE = """<script>
window.addEventListener('load', () => {
  const rows = [...document.querySelectorAll('div.cell_input pre, div.cell_output pre')].map(pre =>
    [pre.closest('.cell_input') ? 'code' : 'output',
     Math.max(...pre.innerText.split('\\n').map(l => l.length)),
     pre.scrollWidth > pre.clientWidth + 1]);
  const out = document.createElement('pre');
  out.id = 'twlib-measure';
  out.textContent = JSON.stringify(rows);
  document.body.appendChild(out);
});
</script>"""


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise SystemExit("no chromium on PATH (Debian: apt-get install chromium)")
    return path


def _browser(*args, width: int) -> str:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={profile}", f"--window-size={width},1000",
               "--virtual-time-budget=10000", "--hide-scrollbars", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout


def overflow_in_browser(page: Path, width: int = 1280) -> list:
    """``(kind, longest line, overflows)`` of every code and output block, as Chromium lays them out."""
    probe = page.with_name(f".measure-{page.name}")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"),
                     encoding="utf-8")
    try:
        dom = _browser("--dump-dom", probe.as_uri(), width=width)
    finally:
        probe.unlink()
    found = re.search(r'<pre id="twlib-measure"[^>]*>(.*?)</pre>', dom, re.S)
    if not found:
        raise RuntimeError(f"chromium did not lay out {page}")
    return [tuple(r) for r in json.loads(found.group(1).replace("&quot;", '"'))]


def screenshot(page: Path, out: Path, width: int = 1280, height: int = 2000) -> Path:
    _browser(f"--screenshot={out}", f"--window-size={width},{height}", page.as_uri(), width=width)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", type=Path, nargs="?", default=ROOT / "_build" / "html")
    ap.add_argument("--browser", action="store_true", help="also measure overflow in Chromium")
    ap.add_argument("--width", type=int, default=1280, help="browser window width in pixels")
    ap.add_argument("--screenshot", type=Path, help="save a picture of the chapter --page")
    ap.add_argument("--page", default="notebooks/06_ktree_guided_search.html")
    args = ap.parse_args(argv)
    args.html = args.html.resolve()          # Chromium takes file:// URIs, which must be absolute
    problems = [f"missing page {p}" for p in missing_pages(args.html)]
    problems += [f"{f}: loads {u}" for f, u in remote_references(args.html)]
    problems += [f"{p}: image {s} {why}" for p, s, why in broken_images(args.html)]
    problems += [f"{p}: code line of {n} characters: {line.strip()[:60]}"
                 for p, n, line in long_code_lines(args.html)]
    figures = figure_count(args.html)
    print(f"{len(chapter_pages(args.html))} pages, {sum(figures.values())} images "
          f"({', '.join(f'{Path(k).stem[:2]}: {v}' for k, v in figures.items())})")
    if args.browser:
        for page in chapter_pages(args.html)[1:]:
            rows = overflow_in_browser(page, args.width)
            code = [r for r in rows if r[0] == "code"]
            fits = max((r[1] for r in code if not r[2]), default=0)
            over = [r for r in rows if r[2]]
            print(f"{page.name}: {len(code)} code blocks, longest line that fits {fits}; "
                  f"{sum(r[0] == 'code' for r in over)} code and "
                  f"{sum(r[0] == 'output' for r in over)} output blocks scroll at {args.width} px")
            problems += [f"{page.name}: a code block scrolls ({r[1]} characters)"
                         for r in over if r[0] == "code"]
    if args.screenshot:
        shot = screenshot(args.html / args.page, args.screenshot.resolve(), args.width)
        print(f"screenshot: {shot}")
    for p in problems:
        print(p)
    print(f"book_html: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
