# The two commands of the README: `make run` (install, ingest the demo corpus on first start, open the app) and
# `make test` (install, then every test). Both create the virtual environment when it is missing.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
PORT ?= 8501

.PHONY: install run serve test test-fast bench lint browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# CPU torch first: without it, anything that pulls torch takes the multi-GB CUDA build.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/research app --port $(PORT)

serve: install
	$(BIN)/research serve

# Debian's Chromium for the real-browser tests (never a browser download of a test tool's own).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else echo "chromium is not installed; browser tests will be skipped"; fi; }

test: install browser
	$(BIN)/python -m pytest

test-fast: install
	$(BIN)/python -m pytest -m "not browser and not slow"

bench: install
	$(BIN)/research bench

lint: install
	$(BIN)/python -m ruff check components pipelines ingest app tests

clean:
	rm -rf $(VENV) .pytest_cache
