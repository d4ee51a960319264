# The single place commands are defined; the README and .ci/run call these targets.
# The Python that creates the venv: the first of these that is 3.11 or newer
# (or name one: make PYTHON=/opt/python3.12/bin/python3).
PYTHON_CANDIDATES := python3.13 python3.12 python3.11 python3
ifeq ($(origin PYTHON),undefined)
PYTHON = $(shell for p in $(PYTHON_CANDIDATES); do \
	  "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 \
	  && { echo "$$p"; break; }; done)
endif
NO_PYTHON := botkit needs Python 3.11 or newer, and none of $(PYTHON_CANDIDATES) on the PATH is:
NO_PYTHON += install one, or name it: make PYTHON=/path/to/python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test lint typecheck unit demo bench reliability audit assets assets-check clean

$(BIN)/python:
	$(if $(PYTHON),,$(error $(NO_PYTHON)))
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# dev: the test, lint and type tools (and notify, which the tests exercise); contract: ccxt, the independent client of the contract suite
EXTRAS := dev,contract

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# On every core: most of the suite's time is real processes and loopback servers, which overlap.
unit: install
	$(BIN)/pytest -n auto

test: lint typecheck unit

demo: install
	$(BIN)/botkit demo

bench: install
	$(BIN)/python -m bench

# The full fault matrix, the soak and the fuzz pass with many examples (a few minutes on 2 cores);
# the tables land in reliability/ (docs/reliability.md says what they mean).
reliability: install
	$(BIN)/python -m tests.reliability.matrix --out reliability/results.md
	$(BIN)/python -m tests.reliability.soak --out reliability/soak.md
	HYPOTHESIS_PROFILE=reliability $(BIN)/pytest tests/fuzz -p no:cacheprovider

# Known vulnerabilities of the installed dependencies (pip-audit; needs https://pypi.org).
audit: install
	$(BIN)/python -m tests.reliability.audit

# The dashboard's vendored assets (botkit/app/dashboard/static/dashboard.{js,css}) rebuilt from
# frontend/ with the locked npm versions (needs Node.js and npm; users of the package do not).
assets:
	scripts/build-assets

# Rebuild and fail if the committed assets differ (they must be reproducible byte for byte).
assets-check: assets
	@git diff --quiet -- botkit/app/dashboard/static || { git diff --stat -- botkit/app/dashboard/static; \
	  echo "the built assets differ from the committed ones: commit them, or find what is not reproducible"; exit 1; }

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .import_linter_cache build dist
