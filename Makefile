# The single place commands are defined; the README and .ci/run call these targets.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install test lint typecheck unit demo bench reliability audit clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest

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

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build dist
