"""Durable runs outlive their process: killed mid-run, restarted, finished; SQLite and Postgres.

Each test runs ``tests.helpers.durable_app`` in processes of its own; the tools count their
executions in a file, so what ran is counted across the processes.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOSClient

from runner import DurableRunner
from tests.helpers import ROOT
from tests.helpers.durable import recorded
from tests.helpers.durable_app import CRASHED
from tests.helpers.runs import Mode

pytestmark = [pytest.mark.durable, pytest.mark.subprocess]

ANSWER = "Booked: flight to Paris; hotel in Paris; car in Paris."


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh DBOS system database URL: a SQLite file, or a database on the test cluster."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    base: str = request.getfixturevalue("postgres")
    return f"{base}/t_{uuid.uuid4().hex[:12]}"


def app(database: str, log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One life of ``tests.helpers.durable_app`` on ``database``, to its end (or its crash)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.helpers.durable_app",
            "--db",
            database,
            "--log",
            str(log),
            *args,
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def results(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The runs a process printed, once it ended well."""
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def executions(log: Path, run_id: str) -> list[tuple[str, str]]:
    """(tool, idempotency key) of each tool execution of run ``run_id``, in order."""
    found = []
    for line in log.read_text(encoding="utf-8").splitlines():
        tool, key, *_ = line.split()
        if key.startswith(f"{run_id}:") and tool != "hook":
            found.append((tool, key))
    return found


def test_a_run_killed_in_its_second_tool_is_finished_by_a_restart(
    database: str, mode: Mode, tmp_path: Path
) -> None:
    """After the restart the first and third tools ran once, the second twice (with one key),
    and the result is an uninterrupted run's."""
    log = tmp_path / "tools.log"
    crashed = app(database, log, "--crash", "--mode", mode, "--run", "trip")
    assert (crashed.returncode, crashed.stdout) == (CRASHED, ""), crashed.stderr
    assert [tool for tool, _ in executions(log, "trip")] == ["flight", "hotel"]

    recovered, clean = results(
        app(database, log, "--mode", mode, "--run", "trip", "--run", "clean")
    )
    ran = executions(log, "trip")
    assert Counter(tool for tool, _ in ran) == {"flight": 1, "hotel": 2, "car": 1}
    assert len({key for tool, key in ran if tool == "hotel"}) == 1
    assert [tool for tool, _ in executions(log, "clean")] == ["flight", "hotel", "car"]
    assert (recovered["output"], recovered["status"]) == (ANSWER, "completed")
    assert recovered["events"] == clean["events"]


def test_a_retry_decided_before_a_crash_is_replayed(mode: Mode, tmp_path: Path) -> None:
    """A failed attempt, its retry and the drawn wait come off the record: the failure is not
    run again, the hook decides alike on it, and the wait is the one drawn before the crash."""
    log, database = tmp_path / "tools.log", f"sqlite:///{tmp_path / 'runs.sqlite'}"
    crashed = app(database, log, "--flaky", "--crash", "--mode", mode, "--run", "trip")
    assert crashed.returncode == CRASHED, crashed.stderr
    client = DBOSClient(system_database_url=database, serializer=DurableRunner.serializer())
    try:
        steps = client.list_workflow_steps("trip")
    finally:
        client.destroy()
    [drawn] = [recorded(step)[0] for step in steps if step["function_name"] == "retry delay"]

    [recovered] = results(app(database, log, "--flaky", "--mode", mode, "--run", "trip"))
    assert recovered["delays"] == [drawn]
    assert recovered["output"] == ANSWER
    hotel = [key for tool, key in executions(log, "trip") if tool == "hotel"]
    assert len(hotel) == 3  # attempt 1 once (it failed), attempt 2 twice (the crash)
    assert hotel[0] != hotel[1] == hotel[2]
    hooks = [line for line in log.read_text(encoding="utf-8").splitlines() if line[:4] == "hook"]
    assert hooks == ["hook hotel attempt=1 retry=True"] * 2  # once per process, alike


@pytest.mark.postgres
def test_two_workers_on_one_postgres_queue_run_each_of_twenty_runs_once(
    postgres: str, tmp_path: Path
) -> None:
    """Twenty runs queued on Postgres, two worker processes: each run's tools ran exactly once,
    both workers took runs, and every run answered."""
    log, database = tmp_path / "tools.log", f"{postgres}/queue_{uuid.uuid4().hex[:12]}"
    command = [
        sys.executable,
        "-m",
        "tests.helpers.durable_app",
        "--db",
        database,
        "--log",
        str(log),
    ]
    serving = subprocess.Popen(
        [*command, "--queue", "trips", "--slow", "--serve", "--executor", "worker-b"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serving.stdout is not None
        ready, _, _ = select.select([serving.stdout], [], [], 60)
        assert ready, "the serving worker did not get ready within 60 s"
        assert serving.stdout.readline() == "ready\n"
        producer = app(
            database, log, "--queue", "trips", "--enqueue", "20", "--slow", "--executor", "worker-a"
        )
        runs = results(producer)
    finally:
        _, errors = serving.communicate(input="", timeout=60)
    assert serving.returncode == 0, errors
    assert sorted(run["run_id"] for run in runs) == sorted(f"queued-{n}" for n in range(20))
    assert {run["output"] for run in runs} == {ANSWER}
    for n in range(20):
        tools = [tool for tool, _ in executions(log, f"queued-{n}")]
        assert tools == ["flight", "hotel", "car"], n
    workers = {line.rsplit("pid=", 1)[1] for line in log.read_text(encoding="utf-8").splitlines()}
    assert len(workers) == 2


def test_a_paused_run_resumes_after_a_restart_and_survives_a_crash_in_its_resume(
    database: str, tmp_path: Path
) -> None:
    """Paused in one process; resumed in another that dies inside the approved call; the
    next process recovers the resume and finishes: each tool ran as if nothing happened
    but the killed call, and the answer is an uninterrupted run's."""
    log, store = tmp_path / "tools.log", str(tmp_path / "sessions.db")
    paused = results(app(database, log, "--pause", "--store", store, "--run", "trip"))
    assert [run["status"] for run in paused] == ["paused"]
    crashed = app(database, log, "--pause", "--store", store, "--crash", "--resume", "trip")
    assert (crashed.returncode, crashed.stdout) == (CRASHED, ""), crashed.stderr
    (finished,) = results(app(database, log, "--pause", "--store", store, "--resume", "trip"))
    assert (finished["status"], finished["output"], finished["run_id"]) == (
        "completed",
        ANSWER,
        "trip",
    )
    ran = executions(log, "trip")
    assert Counter(tool for tool, _ in ran) == {"flight": 1, "hotel": 2, "car": 1}
    assert len({key for tool, key in ran if tool == "hotel"}) == 1


def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds, looking 1,200 times 50 ms apart at most (then fail
    saying ``what``): a bound that keeps a broken run from hanging the suite."""
    for _ in range(1_200):
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"{what} never came")


def _in_hotel(log: Path) -> bool:
    return log.exists() and any(
        line.startswith("hotel ") for line in log.read_text(encoding="utf-8").splitlines()
    )


def test_a_second_process_launching_does_not_take_over_an_in_flight_run(
    database: str, tmp_path: Path
) -> None:
    """Process A is inside the run's hotel tool when process B (its own executor id) launches
    DBOS on the same database: B recovers nothing, A finishes the run, each tool ran once."""
    log, gate = tmp_path / "tools.log", tmp_path / "gate"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.helpers.durable_app",
            "--db",
            database,
            "--log",
            str(log),
            "--hold",
            str(gate),
            "--executor",
            "worker-a",
            "--run",
            "trip",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _until(lambda: _in_hotel(log) or first.poll() is not None, "A's hotel call")
        assert first.poll() is None, first.communicate()[1]
        second = app(database, log, "--executor", "worker-b")
        assert second.returncode == 0, second.stderr
    finally:
        gate.touch()
        out, errors = first.communicate(timeout=120)
    assert first.returncode == 0, errors
    [finished] = [json.loads(line) for line in out.splitlines()]
    assert (finished["status"], finished["output"]) == ("completed", ANSWER)
    assert [tool for tool, _ in executions(log, "trip")] == ["flight", "hotel", "car"]
    assert (
        len({line.rsplit("pid=", 1)[1] for line in log.read_text(encoding="utf-8").splitlines()})
        == 1
    )


def test_a_run_under_dbos_s_default_executor_id_is_refused(tmp_path: Path) -> None:
    """A process launched without an executor id of its own (DBOS's default ``local``, shared by
    every such process) starts no run: the error says to give each worker its own id."""
    log, database = tmp_path / "tools.log", f"sqlite:///{tmp_path / 'runs.sqlite'}"
    refused = app(database, log, "--executor", "default", "--run", "trip")
    assert refused.returncode != 0
    assert "default executor id 'local'" in refused.stderr
    assert 'executor_id": os.environ["WORKER_ID"]' in refused.stderr
    assert not log.exists()  # no tool ran


def test_a_restarted_worker_recovers_its_own_runs_by_its_executor_id(tmp_path: Path) -> None:
    """A worker killed mid-run: another worker's launch leaves the run alone; the worker restarted
    with its own id recovers and finishes it."""
    log, database = tmp_path / "tools.log", f"sqlite:///{tmp_path / 'runs.sqlite'}"
    crashed = app(database, log, "--crash", "--executor", "worker-a", "--run", "trip")
    assert crashed.returncode == CRASHED, crashed.stderr
    other = app(database, log, "--executor", "worker-b")
    assert other.returncode == 0, other.stderr
    assert [tool for tool, _ in executions(log, "trip")] == ["flight", "hotel"]
    [recovered] = results(app(database, log, "--executor", "worker-a", "--run", "trip"))
    assert (recovered["status"], recovered["output"]) == ("completed", ANSWER)
    assert Counter(tool for tool, _ in executions(log, "trip")) == {
        "flight": 1,
        "hotel": 2,
        "car": 1,
    }
