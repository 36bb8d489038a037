"""``python -m runner.web``, the extra's import boundary, and the demo's example."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.subprocess

OPTIONAL = ("starlette", "uvicorn", "sse_starlette", "jsonschema", "runner.web")


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_importing_hooks_and_runner_imports_nothing_of_the_web_extra() -> None:
    """``import hooks, runner`` loads none of the web extra's packages nor runner.web."""
    done = python(
        f"import sys, hooks, runner\nprint([name for name in {OPTIONAL!r} if name in sys.modules])"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("missing", ["starlette", "uvicorn", "sse_starlette", "jsonschema"])
def test_runner_web_without_the_extra_says_what_to_install(missing: str) -> None:
    """Without one of the extra's packages, ``import runner.web`` is an ImportError naming
    ``pip install 'hookline[web]'`` and the missing package."""
    done = python(
        f"import sys; sys.modules[{missing!r}] = None\n"
        "try:\n    import runner.web\nexcept ImportError as error:\n    print(error)"
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'hookline[web]'" in done.stdout
    assert missing in done.stdout


def test_the_command_refuses_an_agent_it_cannot_load(tmp_path: Path) -> None:
    """``--agent`` that names no Agent, Runner or factory ends the command with its reason."""
    done = subprocess.run(
        [sys.executable, "-m", "runner.web", "--store", str(tmp_path / "s.db"), "--agent", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "--agent must be module.path:name" in done.stderr
