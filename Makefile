# Two commands on a fresh machine: `make demo` and `make test`. Each makes .venv itself.
# `make check` is the fast lane while working: the same checks without the slow tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-langchain test-pydantic-ai check bench mutate clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,benchmark,openai,anthropic,schema,otel,dbos,mcp,web,langchain,pydantic-ai]'
	$(MAKE) --no-print-directory browser
	touch $(STAMP)

# The web pages' tests drive Debian's chromium through its driver: installed here when
# missing and this is root on a system with apt-get; otherwise those tests fail saying
# what to install (they never skip).
.PHONY: browser
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get install -y -qq chromium chromium-driver >/dev/null \
		|| { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }; \
	else echo "the browser tests need chromium and chromium-driver: apt-get install -y chromium chromium-driver (as root)"; fi


# Each framework adapter is tested in an environment of its own (the frameworks'
# dependencies differ; some pin mcp apart): hookline from this checkout (editable), the
# framework's extra, pytest and hypothesis. The main .venv has the langchain and
# pydantic-ai extras too (they add packages and change none), so mypy and basedpyright
# check the adapters there.
LC_VENV  := .venv-langchain
LC_STAMP := $(LC_VENV)/.installed
PA_VENV  := .venv-pydantic-ai
PA_STAMP := $(PA_VENV)/.installed

$(LC_STAMP): pyproject.toml
	test -x $(LC_VENV)/bin/python || $(PYTHON) -m venv $(LC_VENV)
	$(LC_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LC_VENV)/bin/python -m pip install --quiet -e '.[langchain]' 'pytest>=9.2' 'hypothesis>=6.170' \
		'opentelemetry-sdk>=1.45'
	touch $(LC_STAMP)

# The scenario suite (tests/adapters) on a LangChain agent, the reference Runner beside it,
# the example and the docs' LangChain blocks, in .venv-langchain.
test-langchain: $(LC_STAMP)
	$(LC_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/adapters
	$(LC_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/project/test_docs.py -k "adapters and not pydantic_ai"

$(PA_STAMP): pyproject.toml
	test -x $(PA_VENV)/bin/python || $(PYTHON) -m venv $(PA_VENV)
	$(PA_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PA_VENV)/bin/python -m pip install --quiet -e '.[pydantic-ai]' 'pytest>=9.2' 'hypothesis>=6.170'
	touch $(PA_STAMP)

# The scenario suite (tests/adapters) on a pydantic-ai agent, the reference Runner beside
# it, the capability's own tests and benchmark, the docs' pydantic-ai blocks, in
# .venv-pydantic-ai.
test-pydantic-ai: $(PA_STAMP)
	$(PA_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/adapters
	$(PA_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/project/test_docs.py -k "adapters and not langchain"

demo: $(STAMP)
	$(BIN)/python -m examples.quickstart
	$(BIN)/python -m examples.streaming
	$(BIN)/python -m examples.approval
	$(BIN)/python -m examples.providers
	$(BIN)/python -m examples.mcp_guard
	$(BIN)/python -m examples.web_inbox
	$(BIN)/python -m examples.structured
	$(BIN)/python -m examples.langchain_guard

# Every test under coverage.py (branches, the processes tests start too; the floor is
# [tool.coverage.report] fail_under in pyproject.toml), then mypy, basedpyright, ruff and
# the import contracts (lint-imports); the target fails if any of them failed.
test: $(STAMP) $(LC_STAMP) $(PA_STAMP)
	@status=0; \
	$(MAKE) --no-print-directory test-langchain || status=1; \
	$(MAKE) --no-print-directory test-pydantic-ai || status=1; \
	$(BIN)/python -m coverage erase; \
	$(BIN)/python -m coverage run -m pytest || status=1; \
	$(BIN)/python -m coverage combine -q; \
	$(BIN)/python -m coverage report || status=1; \
	$(BIN)/python -m mypy || status=1; \
	$(BIN)/basedpyright || status=1; \
	$(BIN)/python -m ruff check . || status=1; \
	$(BIN)/python -m ruff format --check . || status=1; \
	$(BIN)/lint-imports || status=1; \
	exit $$status

# The fast lane (under a minute on two cores): the tests not marked slow (no durable,
# PostgreSQL, subprocess, typing or benchmark tests; markers in pyproject.toml), beside
# the same checkers as `make test`; no coverage. The tests' output follows the checkers'.
check: $(STAMP)
	@status=0; out=$$(mktemp); \
	$(BIN)/python -m pytest -q -m "not slow" >$$out 2>&1 & tests=$$!; \
	$(BIN)/python -m mypy || status=1; \
	$(BIN)/basedpyright || status=1; \
	$(BIN)/python -m ruff check . || status=1; \
	$(BIN)/python -m ruff format --check . || status=1; \
	$(BIN)/lint-imports || status=1; \
	wait $$tests || status=1; \
	cat $$out; rm -f $$out; \
	exit $$status

bench: $(STAMP)
	$(BIN)/python -m benchmarks.dispatch
	$(BIN)/python -m benchmarks.runner
	$(BIN)/python -m benchmarks.openai_adapter
	$(BIN)/python -m benchmarks.streaming
	$(BIN)/python -m benchmarks.stream_runner
	$(BIN)/python -m benchmarks.stream_hold
	$(BIN)/python -m benchmarks.telemetry
	$(BIN)/python -m benchmarks.sessions
	$(BIN)/python -m benchmarks.inbox
	$(BIN)/python -m benchmarks.loop_stall
	$(BIN)/python -m benchmarks.durable
	$(BIN)/python -m benchmarks.versions
	$(BIN)/python -m benchmarks.responses_adapter
	$(BIN)/python -m benchmarks.anthropic_adapter
	$(BIN)/python -m benchmarks.mcp
	$(BIN)/python -m benchmarks.matchers
	$(BIN)/python -m benchmarks.agui
	$(BIN)/python -m benchmarks.langchain_adapter

# Mutation testing with mutmut ([tool.mutmut] in pyproject.toml says what is mutated);
# slow, so not part of `make test`. Runs resume: mutmut retests only what changed.
# MUTANTS narrows a run to matching mutant names: make mutate MUTANTS='hooks._results.*'
# mutmut's baseline runs every selected test and stops at a red one, so a run of runner
# mutants only (MUTANTS='runner.*') leaves out the test modules that never import runner
# (the hooks' own tests): a red hooks test cannot stop it. TESTS narrows further, to a
# pytest -k expression: make mutate MUTANTS='runner._run.guarded.*' TESTS=test_guarded
# Each mutant runs against the selected tests that reached its function in the baseline.
# That map is rebuilt on every run: mutmut's incremental update keeps a stale one when a
# test keeps its id but reaches other code, or code moves to another module (its mutants
# then "survive"). Results are kept, so a survivor is retested only when named (MUTANTS)
# or after rm -rf mutants: do that before a run whose scores you report.
TESTS ?=
RUNNER_ONLY = $(if $(MUTANTS),$(if $(filter-out runner.%,$(MUTANTS)),,yes))
NOT_RUNNER_TESTS = $(shell grep -L -r -E '^ *(from|import) runner' --include='test_*.py' tests)
MUTATE_PYTEST_ARGS = $(if $(RUNNER_ONLY),$(addprefix --ignore=,$(NOT_RUNNER_TESTS))) \
	$(if $(TESTS),-k '$(TESTS)')
mutate: $(STAMP)
	@status=0; \
	rm -f mutants/mutmut-stats.json; \
	PYTEST_ADDOPTS="$(strip $(MUTATE_PYTEST_ARGS))" $(BIN)/mutmut run $(MUTANTS) || status=1; \
	$(BIN)/python -c "$$MUTATION_SCORES" || status=1; \
	exit $$status

clean:
	rm -rf $(VENV) $(LC_VENV) $(PA_VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis mutants .coverage .coverage.* htmlcov

# The score per mutated file: killed / (mutants checked), where timeouts and type-check
# kills count as killed and a mutant no test reaches counts as a survivor.
define MUTATION_SCORES
import json
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

KILLED = ("killed", "timeout", "caught by type check")
COLUMNS = "%-24s %7s %7s %9s %9s %6s %10s"


def row(name, counts):
    killed = sum(counts[status] for status in KILLED)
    unchecked = counts["not checked"] + counts["skipped"]
    checked = counts.total() - unchecked
    other = checked - killed - counts["survived"] - counts["no tests"]
    score = "%.1f%%" % (100 * killed / checked) if checked else "-"
    print(COLUMNS % (name, score, killed, counts["survived"], counts["no tests"], other, unchecked))


print(COLUMNS % ("file", "score", "killed", "survived", "no tests", "other", "unchecked"))
everything = Counter()
for meta in sorted(Path("mutants").rglob("*.py.meta")):
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].values()
    counts = Counter(status_by_exit_code[code] for code in codes)
    everything.update(counts)
    row(meta.relative_to("mutants").as_posix().removesuffix(".meta"), counts)
row("all", everything)
endef
export MUTATION_SCORES
