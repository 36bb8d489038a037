"""A process running durable runs, for the tests that kill one: ``-m tests.helpers.durable_app``.

The agent books a trip with three tools, one per model turn: ``flight``, ``hotel``,
``car``. Its model answers from the request alone, as a deployed model does, so a
recovered run asks it what the first process asked. Every tool execution appends a
line to ``--log`` (tool, idempotency key, process id) and every error hook call one
too, so a test counts what ran across processes. Each finished run is printed as
one JSON line: its id, output, status, events (their ``repr`` without the time) and
retry waits.

- ``--crash``: the hotel tool kills the process (``os._exit(CRASHED)``) in its first
  execution, or in its second with ``--flaky``;
- ``--flaky``: the hotel tool's first execution fails with ``ConnectionError``, which
  an error hook retries after the policy's jittered wait;
- ``--run ID`` (repeatable): run these runs (``--mode async``: ``arun``);
- ``--pause``: a guard pauses the hotel call until a human decided; ``--store PATH`` keeps
  sessions and paused states in a SQLite file; ``--resume ID`` approves what run ID waits
  for (its state read from the store) and prints the resumed run;
- ``--hold PATH``: the hotel tool waits (up to 60 s) until PATH exists, so a test can act
  while the run is under way;
- ``--executor ID``: DBOS's executor id (``app-1`` by default; ``default`` leaves DBOS's own);
- ``--queue Q``: register DBOS queue Q and serve it; ``--enqueue N`` first puts N runs
  on it and prints their results, ``--serve`` prints ``ready`` and serves until stdin
  closes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from dbos import DBOS

from hooks import (
    Approve,
    BeforeTool,
    Cont,
    ErrorResult,
    Failure,
    OnToolError,
    PausableResult,
    Pause,
    Retry,
)
from runner import (
    Agent,
    DurableRunner,
    ModelRequest,
    ModelResponse,
    RetryEvent,
    RetryPolicy,
    RunResult,
    SQLiteSessionStore,
    ToolCall,
    ToolContext,
    ToolResult,
    idempotency_key,
)

CRASHED = 17
TOOLS = ("flight", "hotel", "car")


class TripModel:
    """Calls flight, hotel and car in turn, then sums up: a function of the request alone."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next booking the request has no result for, else the summary."""
        done = [message.content for message in request.messages if message.role == "tool"]
        if len(done) < len(TOOLS):
            call = ToolCall(f"call_{len(done) + 1}", TOOLS[len(done)], {"city": "Paris"})
            return ModelResponse(tool_calls=(call,))
        return ModelResponse("Booked: " + "; ".join(done) + ".")


class RetryConnectionErrors(OnToolError):
    """Retries a ``ConnectionError`` (after the policy's wait) and logs each decision."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Retry a lost connection; pass anything else on."""
        retry = isinstance(failure.failure(), ConnectionError)
        _append(self.log, f"hook {ctx.call.name} attempt={ctx.attempt} retry={retry}")
        return Retry(ctx) if retry else failure


class AskBeforeTheHotel(BeforeTool):
    """The hotel is booked only once a human decided."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause the hotel on a first pass."""
        if ctx.call.name == "hotel" and ctx.decision is None:
            return Pause("book the hotel?")
        return Cont(ctx)


def build(
    log: Path,
    *,
    crash: bool,
    flaky: bool,
    slow: bool,
    pause: bool,
    store: Path | None,
    hold: Path | None = None,
) -> DurableRunner:
    """The trip agent's durable runner; its tools log to ``log``."""

    def executed(tool: str) -> int:
        """Log this execution; how many of ``tool`` this run had logged before it."""
        key = idempotency_key()
        run_id = key.split(":", 1)[0]
        before = sum(
            1 for line in _lines(log) if line.startswith(f"{tool} ") and f" {run_id}:" in line
        )
        _append(log, f"{tool} {key} pid={os.getpid()}")
        if slow:
            time.sleep(0.05)
        return before

    def flight(city: str) -> str:
        """Book a flight to ``city``."""
        executed("flight")
        return f"flight to {city}"

    def hotel(city: str) -> str:
        """Book a hotel in ``city``."""
        before = executed("hotel")
        deadline = time.monotonic() + 60
        while hold is not None and not hold.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if crash and before == (1 if flaky else 0):
            os._exit(CRASHED)
        if flaky and before == 0:
            msg = "the hotel's booking service hung up"
            raise ConnectionError(msg)
        return f"hotel in {city}"

    def car(city: str) -> str:
        """Rent a car in ``city``."""
        executed("car")
        return f"car in {city}"

    agent = Agent("trip", TripModel(), tools=[flight, hotel, car])
    guards: list[object] = [AskBeforeTheHotel()] if pause else []
    return DurableRunner(
        agent,
        callbacks=[RetryConnectionErrors(log), *guards],
        retry=RetryPolicy(max_attempts=3, base_delay=0.2, jitter=1.0),
        sessions=None if store is None else SQLiteSessionStore(store),
    )


def summary(result: RunResult) -> str:
    """``result`` as one JSON line; events without their times, which differ run to run."""
    return json.dumps(
        {
            "run_id": result.run_id,
            "output": result.output,
            "status": result.status,
            "events": [repr(dataclasses.replace(event, time=0.0)) for event in result.events],
            "delays": [event.delay for event in result.events if isinstance(event, RetryEvent)],
        }
    )


def main(argv: Sequence[str] | None = None) -> int:
    """One life of the process: launch DBOS (recovering what a crash left), then run."""
    parser = argparse.ArgumentParser(prog="python -m tests.helpers.durable_app")
    parser.add_argument("--db", required=True, help="DBOS system database URL")
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--mode", choices=("sync", "async"), default="sync")
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--flaky", action="store_true")
    parser.add_argument("--slow", action="store_true")
    parser.add_argument("--run", action="append", default=[])
    parser.add_argument("--pause", action="store_true")
    parser.add_argument("--store", type=Path)
    parser.add_argument("--resume")
    parser.add_argument("--queue")
    parser.add_argument("--enqueue", type=int, default=0)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--executor", default="app-1")
    parser.add_argument("--hold", type=Path)
    args = parser.parse_args(argv)
    durable = build(
        args.log,
        crash=args.crash,
        flaky=args.flaky,
        slow=args.slow,
        pause=args.pause,
        store=args.store,
        hold=args.hold,
    )
    DBOS(
        config={
            "name": "hookline-tests",
            "system_database_url": args.db,
            "log_level": "WARNING",
            "executor_id": None if args.executor == "default" else args.executor,
            "serializer": DurableRunner.serializer(),
        }
    )
    DBOS.launch()
    try:
        if args.queue:
            DBOS.register_queue(args.queue, worker_concurrency=2, polling_interval_sec=0.1)
        for run_id in args.run:
            if args.mode == "async":
                result = asyncio.run(durable.arun("book Paris", run_id=run_id))
            else:
                result = durable.run("book Paris", run_id=run_id)
            print(summary(result), flush=True)
        if args.resume:
            state = durable.paused(args.resume)
            assert state is not None, f"no paused run {args.resume!r} in the store"
            decisions = {request.id: Approve() for request in state.pending}
            print(summary(durable.resume(state, decisions)), flush=True)
        queued = [
            durable.enqueue(args.queue, "book Paris", run_id=f"queued-{n}")
            for n in range(args.enqueue)
        ]
        for run_id in queued:
            print(summary(durable.result(run_id)), flush=True)
        if args.serve:
            print("ready", flush=True)
            sys.stdin.read()
    finally:
        DBOS.destroy()
    return 0


def _lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _append(log: Path, line: str) -> None:
    with log.open("a", encoding="utf-8") as file:
        file.write(line + "\n")


if __name__ == "__main__":
    sys.exit(main())
