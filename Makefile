# The two set-up commands: `make run` and `make test`. Each creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Test files run on this many workers (pytest-xdist); each loads the encoder once.
PYTEST_WORKERS ?= 2

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/gatebot run

test: $(STAMP) lint pytest

lint: $(STAMP)
	$(BIN)/ruff check bot plugins tests bench
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest -q -rs --durations=15 -n $(PYTEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/turns.py
	$(BIN)/python bench/pipeline.py
	$(BIN)/python bench/preflight.py
	$(BIN)/python bench/repeat.py
	$(BIN)/python bench/scope.py
	$(BIN)/python bench/answerability.py

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache
