"""The benchmarks keep running: a quick pass of each checks its contenders agree.

No timing is asserted here; speed is measured and reported by ``make bench``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import hooks
from benchmarks import (
    agui,
    dispatch,
    durable,
    inbox,
    loop_stall,
    openai_adapter,
    responses_adapter,
    runner,
    sessions,
    stream_hold,
    stream_runner,
    streaming,
    telemetry,
    versions,
)
from tests.helpers.durable import forget_dbos_console

pytestmark = pytest.mark.slow  # each runs a whole benchmark, quickly


def test_dispatch_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The dispatch benchmark measures every contender and reports each target: fresh lists
    against pluggy with callbacks that build their result and that return a constant, and
    async callbacks against a hand loop awaiting each."""
    assert dispatch.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for name in ("rb[list]", "rb[compiled]", "arb[compiled]", "hand[plain]", "pluggy"):
        assert name in out
    assert "rb[fresh] vs pluggy:" in out
    assert "rb[fresh const] vs pluggy[const]:" in out
    assert "arb[async]" in out
    assert "whole dispatch vs ahand:" in out
    assert out.count("target") >= 6


def test_runner_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The runner benchmark checks Runner and the hand loop agree, then reports its targets."""
    assert runner.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "agent->model" in out
    assert "model->tool->model" in out
    assert "targets:" in out


def test_openai_adapter_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The adapter benchmark checks both contenders send one body, then reports its targets."""
    assert openai_adapter.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("adapter/sdk") == 2
    assert "adapter's own work" in out
    assert "targets:" in out


def test_responses_adapter_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The Responses adapter benchmark checks both contenders send one body, then reports
    its four targets (sync, async, each whole and streamed)."""
    assert responses_adapter.main(["--quick", "--calls", "2", "--deltas", "4"]) == 0
    out = capsys.readouterr().out
    assert out.count("adapter/sdk") == 4
    assert out.count("per delta") == 2
    assert "targets:" in out


def test_streaming_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The model-stream benchmark reports every contender's per-delta cost and first item,
    and the OpenAI stream reader's cost per chunk."""
    assert streaming.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for name in ("bare+wait", "ScriptedModel.astream", "ScriptedModel.stream"):
        assert name in out
    assert out.count(" µs") == 6
    assert "StreamReader.read" in out


def test_stream_runner_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The streamed-run benchmark reports per-delta costs against the model's own stream,
    for pieces that wait on the loop and pieces from memory, and the first delta."""
    assert stream_runner.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("  Runner.stream ") == 2
    assert out.count("first delta") == 2
    assert "target" in out


def test_stream_hold_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The hold benchmark checks each hold mode shows the answer, then reports the time to
    the first text and to the end for each, on the scripted, paced and loopback models
    and a typed agent's, scripted and paced."""
    assert stream_hold.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for mode in ("hold=None", "hold=32", 'hold="output"'):
        assert out.count(f"  {mode} ") == 5
    assert out.count("first text") == 15
    assert out.count("typed") == 2


def test_telemetry_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The telemetry benchmark times untraced, no-op and SDK-traced runs, sync and async,
    in both scenarios, and reports the target."""
    assert telemetry.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count(" untraced ") == 4
    assert out.count("  no-op ") == 4
    assert out.count(" sdk ") == 4
    assert "agent->model" in out
    assert "model->tool->model" in out
    assert "target: no-op at most 1.3x untraced" in out


def test_sessions_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The store benchmark checks both stores leave one conversation, then times a turn on
    each at 0 and 10,000 messages and reports its targets."""
    assert sessions.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for name in ("memory", "sqlite", "0 messages", "10,000 messages"):
        assert name in out
    assert out.count("target <=") == 3
    assert "targets:" in out


def test_inbox_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The inbox benchmark checks the listing holds every paused run in order with its
    requests, then times it and a turn with and without records, and reports its target."""
    assert inbox.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "list_paused from SQLite, 500 paused runs" in out
    assert "whole list:" in out
    assert "a page of 50:" in out
    assert "target: 10,000 paused runs listed in < 100 ms" in out
    assert "run records: a SQLite turn keeping its records" in out
    assert "targets:" in out


def test_loop_stall_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The loop-stall benchmark checks every run of each round completed and was saved, then
    reports each store's stalls for every way of starting the runs, and its targets."""
    assert loop_stall.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for name in ("burst", "spread", "spread, no GC"):
        assert f"sqlite, {name}" in out
        assert f"memory, {name}" in out
    assert out.count("target < 20 ms") == 6
    assert "targets:" in out


@pytest.mark.durable
def test_durable_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The durable-run benchmark (quick: SQLite only) reports the overhead per step of both
    forms against the plain runner."""
    try:
        assert durable.main(["--quick"]) == 0
    finally:
        forget_dbos_console()  # it wrote to this test's capture, closed after it
    out = capsys.readouterr().out
    assert "SQLite: median ms per run" in out
    assert "Postgres" not in out
    assert out.count("DurableRunner.") == 2
    assert "durable run adds" in out
    assert "durable arun adds" in out


def test_versions_benchmark_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The versions benchmark checks 0.1 out in a git worktree, runs every scenario in both
    versions, reports the ratios and the calls into each project, and leaves its worktree
    removed and this tree's packages in place. Without git it fails: nothing is skipped."""
    root = Path(hooks.__file__).resolve().parent.parent
    used: list[Path] = []
    checked_out = versions.checked_out

    @contextlib.contextmanager
    def spied(commit: str, repository: Path) -> Iterator[Path]:
        with checked_out(commit, repository) as path:
            used.append(path)
            yield path

    monkeypatch.setattr(versions, "checked_out", spied)
    assert versions.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for name in versions.SCENARIOS:
        assert out.count(f"{name} ") >= 2  # a time row and a calls row
    assert "this/0.1" in out
    assert out.count("target") == 2
    assert "calls into the project per run" in out
    assert sys.modules["hooks"] is hooks
    listed = subprocess.run(
        ["git", "-C", str(root), "worktree", "list", "--porcelain"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # Its own worktree only: another checkout of the same repository may run it meanwhile.
    [path] = used
    assert str(path) not in listed
    assert not path.parent.exists()


def test_anthropic_adapter_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The Anthropic adapter benchmark checks both contenders send one body, sync, streamed
    and async, then reports its targets."""
    from benchmarks import anthropic_adapter

    assert anthropic_adapter.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("adapter/sdk") == 3
    assert "per delta" in out
    assert "adapter's own work" in out
    assert "targets:" in out


@pytest.mark.subprocess
def test_mcp_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The MCP benchmark times both transports and prints both ratios."""
    from benchmarks import mcp

    assert mcp.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("mcp/sdk") == 2
    assert "stdio:" in out
    assert "http:" in out


def test_matchers_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The matcher benchmark checks its contenders agree, then prints the view's ratio."""
    from benchmarks import matchers

    assert matchers.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "view/alone:" in out
    assert "target <= 1.3x" in out


def test_agui_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The AG-UI benchmark checks the served text is the model's, then reports the
    per-delta cost of Runner.stream and of the endpoint for each model, and its target."""
    assert agui.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("  Runner.stream ") == 3
    assert out.count("  served over AG-UI ") == 3
    assert "target" in out
