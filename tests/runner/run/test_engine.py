"""The engine seam: a run executes its attempts and reads its clock, ids and waits through it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Sequence

import pytest

from hooks import DispatchPolicy, ErrorResult, Failure, ModelResponse, OnToolError, Outcome, Retry
from runner import (
    Agent,
    HookEvent,
    Message,
    RetryEvent,
    RetryPolicy,
    RunFinishedEvent,
    Runner,
    RunResult,
    RunStartedEvent,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResult,
)
from runner._run.drive import complete
from runner._run.engine import Engine, InProcess, ModelAttempt, ToolAttempt
from runner._run.launch import Launcher
from tests.helpers.runs import Mode, calling


class Logged:
    """An engine that runs attempts in process and logs each call; a clock ticking 100, 101..."""

    def __init__(self, *, ordered: bool = False) -> None:
        self.log: list[str] = []
        self.ticks = itertools.count(100)
        self._ordered = ordered

    @property
    def ordered(self) -> bool:
        """As made."""
        return self._ordered

    def now(self) -> float:
        """The next tick."""
        return float(next(self.ticks))

    def new_id(self) -> str:
        """Always the same."""
        return "made-by-the-engine"

    async def model(self, branch: str, attempt: ModelAttempt, /) -> Outcome[ModelResponse]:
        """Log, then run the attempt."""
        self.log.append(f"model {branch}")
        return await attempt()

    async def tool(
        self, branch: str, call: ToolCall, attempt: ToolAttempt, /
    ) -> Outcome[ToolResult]:
        """Log, then run the attempt."""
        self.log.append(f"tool {branch} {call.name}")
        return await attempt()

    async def delay(self, seconds: float, /) -> float:
        """Always 7 seconds, whatever the run drew."""
        self.log.append("delay")
        return 7.0

    async def sleep(self, seconds: float, is_async: bool, /) -> None:
        """Log instead of sleeping."""
        self.log.append(f"sleep {seconds}")


class RetryOnce(OnToolError):
    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        return Retry(ctx) if ctx.attempt == 1 else failure


def run_on(engine: Engine, agent: Agent, mode: Mode, callbacks: Sequence[object] = ()) -> RunResult:
    """One run of ``agent`` with ``engine`` (and the per-run ``callbacks``), through the
    launch path every runner takes."""
    launcher = Launcher.checked(
        agent,
        kind="Runner",
        callbacks=[RetryOnce()],
        retry=RetryPolicy(),
        sessions=None,
        max_steps=25,
        policy=DispatchPolicy(),
        executor=None,
        rng=None,
        session_lease=60.0,
    )
    message = Message("user", "go")
    run = launcher.start(message, "user", None, callbacks, is_async=mode == "async", engine=engine)
    try:
        coro = run.run(agent, message)
        return complete(coro) if mode == "sync" else asyncio.run(coro)
    finally:
        launcher.finish(run)
        launcher.close()


def test_attempts_times_ids_and_waits_all_come_from_the_engine(mode: Mode) -> None:
    """Every model and tool attempt, the retry's wait and sleep, each record's time, the fresh
    session's id: the engine's."""
    failures = [ConnectionError("once")]

    def flaky() -> str:
        """Fail once."""
        if failures:
            raise failures.pop()
        return "ok"

    model = ScriptedModel([calling(ToolCall("c1", "flaky", {})), "done"])
    engine = Logged()
    result = run_on(engine, Agent("seam", model, tools=[flaky]), mode)
    assert engine.log == [
        "model seam",
        "tool seam flaky",
        "delay",
        "sleep 7.0",
        "tool seam flaky",
        "model seam",
    ]
    assert [event.time for event in result.events] == [100.0 + n for n in range(11)]
    [retry] = [event for event in result.events if isinstance(event, RetryEvent)]
    assert retry.delay == 7.0
    assert result.session_id == "made-by-the-engine"


def test_an_ordered_engine_runs_one_response_s_tool_calls_one_by_one() -> None:
    """Async tool calls of one response overlap on the in-process engine, not on an ordered one."""

    def overlapping(ordered: bool) -> list[str]:
        log: list[str] = []

        async def first() -> str:
            """Yield to the loop mid-call."""
            log.append("first starts")
            await asyncio.sleep(0.01)
            log.append("first ends")
            return "1"

        async def second() -> str:
            """Be quick."""
            log.append("second")
            return "2"

        calls = calling(ToolCall("a", "first", {}), ToolCall("b", "second", {}))
        agent = Agent("calls", ScriptedModel([calls, "done"]), tools=[first, second])
        run_on(Logged(ordered=ordered), agent, "async")
        return log

    assert overlapping(ordered=False) == ["first starts", "second", "first ends"]
    assert overlapping(ordered=True) == ["first starts", "first ends", "second"]


class Observer:
    """Keeps every ``HookEvent`` it is told."""

    def __init__(self) -> None:
        self.events: list[HookEvent] = []

    def on_event(self, event: HookEvent, /) -> None:
        """Keep ``event``."""
        self.events.append(event)


def test_observers_are_told_the_engines_time(mode: Mode) -> None:
    """A ``HookEvent``'s ``time`` is the engine's clock when its dispatch started (a durable
    run's recorded time, the same on replay), never the wall clock read beside it; its
    ``duration`` is measured."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "3"])

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    class Passing:
        def wrap_tool(
            self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
        ) -> Outcome[ToolResult]:
            return call_next(ctx)

    class AsyncPassing:
        async def wrap_tool(
            self,
            ctx: ToolContext,
            call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
            /,
        ) -> Outcome[ToolResult]:
            return await call_next(ctx)

    engine, observer = Logged(), Observer()
    wrap = Passing() if mode == "sync" else AsyncPassing()
    result = run_on(engine, Agent("seam", model, tools=[add]), mode, [wrap, observer])
    ticks = next(engine.ticks)  # how many the run read: 100 .. ticks - 1
    assert {e.point for e in observer.events} >= {"before_model", "before_tool", "wrap_tool"}
    hook_times = [event.time for event in observer.events]
    record_times = [event.time for event in result.events]
    assert all(t in range(100, ticks) for t in hook_times), hook_times
    assert sorted({*hook_times, *record_times}) == [float(t) for t in range(100, ticks)]
    # durations stay this execution's own measure (not the engine's clock): none is a tick
    assert not {event.duration for event in observer.events} & {float(t) for t in range(100, ticks)}


def test_a_streamed_run_is_stamped_by_its_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """``RunStartedEvent``, ``RunFinishedEvent``, every record and every ``HookEvent`` of a
    streamed run carry the engine's clock: here the in-process engine's, stopped at 42."""
    monkeypatch.setattr(InProcess, "now", staticmethod(lambda: 42.0))
    observer = Observer()

    async def streamed() -> list[object]:
        with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
            return [event async for event in runner.stream("hi", callbacks=[observer])]

    events = asyncio.run(streamed())
    started, finished = events[0], events[-1]
    assert isinstance(started, RunStartedEvent)
    assert isinstance(finished, RunFinishedEvent)
    assert (started.time, finished.time) == (42.0, 42.0)
    assert {event.time for event in finished.result.events} == {42.0}
    assert observer.events
    assert {event.time for event in observer.events} == {42.0}
