"""``python -m runner.web``, the extra's import boundary, and the demo's example."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.subprocess

OPTIONAL = ("starlette", "uvicorn", "sse_starlette", "jsonschema", "ag_ui", "runner.web")


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


@pytest.mark.parametrize(
    "missing", ["starlette", "uvicorn", "sse_starlette", "jsonschema", "ag_ui"]
)
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


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``python -m runner.web`` on a store another process paused a run in, on a free
    port: the address it printed and the run's id; stopped after the test."""
    database = tmp_path / "sessions.db"
    paused = subprocess.run(
        [sys.executable, "-m", "tests.helpers.web_pause", str(database)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.strip()
    command = [
        sys.executable,
        "-m",
        "runner.web",
        "--store",
        str(database),
        "--agent",
        "examples.web_inbox:make_runner",
        "--port",
        "0",
    ]
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("hookline inbox: http://127.0.0.1:"), server.stderr
        yield line.split(": ", 1)[1].strip(), paused
    finally:
        server.terminate()
        server.wait(timeout=30)
        assert server.stdout is not None
        assert server.stderr is not None
        server.stdout.close()
        server.stderr.close()


def test_the_command_serves_the_inbox_at_the_address_it_prints(served: tuple[str, str]) -> None:
    """The printed address carries the token; without it the server refuses; with it,
    the inbox lists the run another process paused (content hidden: capture is off)."""
    address, run_id = served
    base, token = address.split("/?token=")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + "/api/paused", timeout=30)
    assert refused.value.code == 401
    refused.value.close()
    asked = urllib.request.Request(
        base + "/api/paused", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(asked, timeout=30) as response:
        listed = json.load(response)
    assert [run["run_id"] for run in listed["runs"]] == [run_id]
    assert listed["content"] is False
    assert listed["runs"][0]["pending"][0]["args"] is None
    agui = urllib.request.Request(
        base + "/agui/", data=b"{}", headers={"Authorization": f"Bearer {token}"}
    )
    with pytest.raises(urllib.error.HTTPError) as unfit:  # the AG-UI endpoint answers
        urllib.request.urlopen(agui, timeout=30)
    assert unfit.value.code == 422
    unfit.value.close()


def test_the_web_example_prints_the_address_and_the_waiting_run() -> None:
    """``python -m examples.web_inbox`` (``make demo``) serves a paused run a moment,
    prints the address with its token and the requests waiting, and ends."""
    done = subprocess.run(
        [sys.executable, "-m", "examples.web_inbox", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("inbox: http://127.0.0.1:")
    assert "?token=" in lines[0]
    assert "delete old.log?" in lines[1]
    assert "delete notes.txt?" in lines[2]
    assert lines[-1].startswith("stopped; run ")
