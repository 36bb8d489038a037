"""Shared helpers of the in-process durable-run tests: DBOS launched on SQLite, a trip agent.

DBOS is one per process, so each module launches it once on a database of its own
(``launched_on``, behind the ``launched`` fixture of ``tests/runner/durable/conftest.py``)
and destroys it at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from dbos import DBOS, DBOSConfig, StepInfo

from runner import (
    Agent,
    DurableRunner,
    Message,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    RunResult,
    SessionStore,
    ToolCall,
    Usage,
)
from runner._durable.codec import load
from tests.helpers.runs import Mode

_names = itertools.count(1)
_made: list[DurableRunner] = []


@contextlib.contextmanager
def launched_on(database: Path | str, **config: Any) -> Iterator[None]:
    """DBOS launched on ``database`` (a SQLite file, or a URL) until the block ends; then the
    runners ``durable`` made are closed and DBOS destroyed. ``config`` overrides the DBOS
    config's entries (``executor_id="tests"``, hookline's JSON ``serializer``)."""
    forget_dbos_console()
    url = database if isinstance(database, str) else f"sqlite:///{database}"
    settings: dict[str, Any] = {
        "name": "hookline-tests",
        "system_database_url": url,
        "log_level": "WARNING",
        "executor_id": "tests",
        "serializer": DurableRunner.serializer(),
        **config,
    }
    DBOS(config=cast("DBOSConfig", settings))
    DBOS.launch()
    try:
        yield
    finally:
        while _made:  # their thread pools, which async runs of sync tools started
            _made.pop().close()
        DBOS.destroy()
        forget_dbos_console()


def forget_dbos_console() -> None:
    """Drop the console handler DBOS gave its logger, so the next DBOS makes a fresh one.

    DBOS binds it to ``sys.stderr`` as it is when DBOS is first made: under ``capsys``
    that is a capture closed after the test, which a later DBOS would write to.
    """
    console = logging.getLogger("dbos")
    for handler in list(console.handlers):
        if handler.name == "__dbos_console_log_handler__":
            console.removeHandler(handler)


def unique(prefix: str) -> str:
    """A name no other durable runner of this process has."""
    return f"{prefix}_{next(_names)}"


class Booking:
    """Calls each of ``tools`` in turn (one per turn), then sums up: a function of the request."""

    def __init__(self, *tools: str, calls_per_turn: int = 1, usage: Usage | None = None) -> None:
        self.tools = tools
        self.calls_per_turn = calls_per_turn
        self.usage = usage
        self.calls = 0

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next calls the request has no results for, else the summary."""
        self.calls += 1
        done = [message.content for message in request.messages if message.role == "tool"]
        if len(done) < len(self.tools):
            names = self.tools[len(done) : len(done) + self.calls_per_turn]
            calls = tuple(
                ToolCall(f"call_{len(done) + n + 1}", name, {"city": "Paris"})
                for n, name in enumerate(names)
            )
            return ModelResponse(tool_calls=calls, usage=self.usage)
        return ModelResponse("Done: " + "; ".join(done) + ".", usage=self.usage)


def durable(
    agent: Agent,
    *,
    callbacks: Sequence[object] = (),
    sessions: SessionStore | None = None,
    retry: RetryPolicy = RetryPolicy(),  # noqa: B008 -- frozen, shared safely
    errors: Sequence[type[Exception]] = (),
) -> DurableRunner:
    """A durable runner of ``agent`` under a fresh name, closed with the module's DBOS."""
    made = DurableRunner(
        agent,
        name=unique(agent.name),
        callbacks=callbacks,
        sessions=sessions,
        retry=retry,
        errors=errors,
    )
    _made.append(made)
    return made


def drive_durable(
    runner: DurableRunner,
    mode: Mode,
    message: str | Message,
    *,
    run_id: str | None = None,
    session_id: str | None = None,
) -> RunResult:
    """One durable run: ``run`` in sync mode, ``arun`` otherwise."""
    if mode == "sync":
        return runner.run(message, run_id=run_id, session_id=session_id)
    return asyncio.run(runner.arun(message, run_id=run_id, session_id=session_id))


def untimed(result: RunResult) -> list[str]:
    """``result``'s events without their times, to compare two runs."""
    return [repr(dataclasses.replace(event, time=0.0)) for event in result.events]


def recorded(step: StepInfo) -> Any:
    """What a durable run's step recorded: its value and the time it ended."""
    output = step["output"]
    assert isinstance(output, str), step
    return load(output)
