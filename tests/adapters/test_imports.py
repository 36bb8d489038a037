"""Importing hookline imports no framework; an adapter without its extra says what to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import ROOT


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.subprocess
def test_hooks_and_runner_import_no_framework() -> None:
    """``import hooks, runner, runner.adapters`` leaves LangChain and LangGraph unimported."""
    done = _python(
        "import sys, hooks, runner, runner.adapters\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'langchain', 'langchain_core', 'langgraph', 'pydantic_ai'}))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.subprocess
def test_the_langchain_adapter_without_its_extra_names_the_install() -> None:
    """Without LangChain, importing the adapter is an ImportError naming the extra."""
    done = _python(
        "import sys\n"
        "sys.modules['langchain'] = None  # as if it were not installed\n"
        "try:\n"
        "    import runner.adapters.langchain\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'hookline[langchain]'" in done.stdout
