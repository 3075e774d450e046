# The README's two commands: `make book` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache

.PHONY: book book-check test install bench-peers clean

$(STAMP): pyproject.toml
	$(BIN)/python -m pip --version >/dev/null 2>&1 || $(PYTHON) -m venv --clear $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,book,peers,scale]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

install: $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going

# The built book as a reader sees it, in headless Chromium (a Debian package, not a PyPI one:
# installed by apt-get when missing, which needs root):
# no remote assets, every chapter and figure, no code block that scrolls; a screenshot.
book-check: book
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	$(BIN)/python -m tests.book_prose
	$(BIN)/python tests/book_html.py _build/html --browser --screenshot _build/chapter.png

# One worker per core (pytest-xdist); --dist loadfile keeps each notebook's cells, which share a
# kernel, in one worker and in order.  Two workers each running numba's OpenMP threads share the
# cores, and OpenMP's threads spin-wait between parallel loops by default, taking the cores from
# the other worker: with passive waiting the suite took 568 s instead of 731 s (728 tests, 2 cores).
test: $(STAMP)
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest tests twlib notebooks --doctest-modules --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -n auto --dist loadfile

# Optional peers for benchmarks only: pomegranate's exact learner needs torch (the CPU
# build; on this machine pip takes torch 2.13.0 from local disk).
bench-peers: $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0 "pomegranate>=1.1"

clean:
	rm -rf _build .numba_cache
