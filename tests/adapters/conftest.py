"""The adapter suite's collection and its matrix recorder.

The folders of the adapters (``langchain/``, ``pydantic_ai/``) are collected only where
their framework imports: each runs in its own environment (``make test-langchain``), and
the main environment's run leaves them out. The reference run (``reference/``) runs
everywhere.

Each scenario's outcome per harness is recorded during the run (it survives, or a strict
xfail with the harness's reason); when a run held every scenario of a harness, the record
is compared with ``results/<framework>.json``: a difference fails the session, unless
``HOOKLINE_WRITE_MATRIX=1`` asks to write it. ``python -m tests.adapters.matrix`` turns
those files into the README's matrix.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from importlib.util import find_spec

import pytest

from tests.adapters.matrix import Column, load, results_path, save
from tests.adapters.scenarios import SCENARIOS, Scenario

collect_ignore = [
    folder
    for folder, module in (("langchain", "langchain"), ("pydantic_ai", "pydantic_ai"))
    if find_spec(module) is None
]

_seen: dict[str, Column] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Record a scenario's outcome against its harness's framework."""
    report = yield
    harness = getattr(getattr(item, "function", None), "harness", None)
    callspec = getattr(item, "callspec", None)
    scenario = None if callspec is None else callspec.params.get("scenario")
    if harness is None or not isinstance(scenario, Scenario) or report.when != "call":
        return report
    column = _seen.setdefault(harness.framework, {})
    if report.passed:
        column[scenario.name] = None
    elif hasattr(report, "wasxfail"):
        column[scenario.name] = str(report.wasxfail)
    else:
        column[scenario.name] = "FAILED"
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Compare each whole column with its results file (or write it when asked)."""
    names = [s.name for s in SCENARIOS]
    for framework, column in _seen.items():
        if sorted(column) != sorted(names) or "FAILED" in column.values():
            continue  # a partial or failing run says nothing about the matrix
        ordered = {name: column[name] for name in names}
        if os.environ.get("HOOKLINE_WRITE_MATRIX") == "1":
            save(framework, ordered)
        elif load(results_path(framework)) != ordered:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.ensure_newline()
                reporter.write_line(
                    f"{results_path(framework)} differs from this run's outcomes: run "
                    "again with HOOKLINE_WRITE_MATRIX=1, then python -m tests.adapters.matrix",
                    red=True,
                )
