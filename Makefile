# The two commands of the README: `make run` (install, ingest the demo corpus on first start, open the app) and
# `make test` (install, then every test). Both create the virtual environment when it is missing and install the
# versions of constraints.txt (the lock); `make lock` refreshes the lock from pyproject.toml.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
LOCK := constraints.txt
TORCH ?= 2.13.0
# Installed again whenever pyproject.toml or the lock changes.
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) | cksum | cut -d' ' -f1)
PORT ?= 8501

.PHONY: install lock run serve test test-fast bench lint browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# CPU torch first: without it, anything that pulls torch takes the multi-GB CUDA build.
$(STAMP): pyproject.toml $(LOCK) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) "torch==$(TORCH)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(LOCK) -e ".[test]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

# The newest versions pyproject.toml allows, resolved by pip as `make install` would install them (torch as
# above), written to the lock. LOCK_ARGS passes more pip options, e.g. LOCK_ARGS="-c tested.txt" to lock to the
# versions of an environment (`pip freeze`). Then `make test`, and commit the lock with the change that needed it.
lock: | $(BIN)/python
	$(BIN)/python -m pip install --dry-run --ignore-installed --quiet --disable-pip-version-check --report - \
		$(LOCK_ARGS) "torch==$(TORCH)" -e ".[test]" | $(BIN)/python scripts/write_lock.py $(LOCK)

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
	$(BIN)/python -m ruff check components pipelines ingest app tests scripts
	$(BIN)/python -m ruff format --check components pipelines ingest app tests scripts

clean:
	rm -rf $(VENV) .pytest_cache
