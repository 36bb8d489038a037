# Two commands on a fresh machine: `make demo` and `make test`. Each makes .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,benchmark]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.quickstart

# pytest, mypy and ruff all run; the target fails if any of them failed.
test: $(STAMP)
	@status=0; \
	$(BIN)/python -m pytest || status=1; \
	$(BIN)/python -m mypy || status=1; \
	$(BIN)/python -m ruff check . || status=1; \
	$(BIN)/python -m ruff format --check . || status=1; \
	exit $$status

bench: $(STAMP)
	$(BIN)/python -m benchmarks.dispatch
	$(BIN)/python -m benchmarks.runner

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
