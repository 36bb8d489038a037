"""End-to-end tests of observers: one frozen ``HookEvent`` per hook-point dispatch."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time

import pytest

from hooks import (
    AfterModel,
    BeforeModel,
    BeforeResult,
    BeforeTool,
    Cont,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    InvalidCallbacks,
    OnModelError,
    OnToolError,
    Outcome,
    Result,
    Retry,
    Success,
)
from runner import (
    Agent,
    HookEvent,
    ModelContext,
    ModelResponse,
    RetryPolicy,
    Runner,
    ScriptedModel,
    StopRun,
    ToolCall,
    ToolContext,
    ToolResult,
    observing,
)
from tests import runner_helpers
from tests.runner_helpers import Mode, add, calling, drive

mode = runner_helpers.mode


class Observer:
    """Collects every event it is told about."""

    def __init__(self, log: list[object] | None = None) -> None:
        self.events: list[HookEvent] = []
        self.log = log

    def on_event(self, event: HookEvent, /) -> None:
        """Keep ``event`` (and log its point when sharing a log)."""
        self.events.append(event)
        if self.log is not None:
            self.log.append(f"event {event.point}")


class ModelDown(Exception):
    """A model outage, for tests."""


def tool_run() -> Agent:
    """An agent whose model calls ``add`` once, then answers."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "3"])
    return Agent("assistant", model, tools=[add])


def test_one_event_per_dispatch_in_order(mode: Mode) -> None:
    """Each hook-point dispatch is told once, in the run's order, even with no hook defined."""
    observer = Observer()
    with Runner(tool_run()) as runner:
        drive(runner, mode, "1+2", callbacks=[observer])
    assert [(e.point, e.outcome) for e in observer.events] == [
        ("before_agent", "cont"),
        ("before_model", "cont"),
        ("after_model", "success"),
        ("before_tool", "cont"),
        ("after_tool", "success"),
        ("before_model", "cont"),
        ("after_model", "success"),
        ("after_agent", "success"),
    ]


def test_events_come_after_the_chain(mode: Mode) -> None:
    """An observer listed first still hears of a point after every callback of that point ran."""
    log: list[object] = []

    class Hook(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            log.append("hook before_model")
            return Cont(ctx)

    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        drive(runner, mode, "hi", callbacks=[Observer(log), Hook()])
    assert log.index("hook before_model") < log.index("event before_model")


def test_event_fields(mode: Mode) -> None:
    """Events name the point, agent, branch, tool and call id, with start time and duration."""
    observer = Observer()
    start = time.time()
    with Runner(tool_run()) as runner:
        drive(runner, mode, "1+2", callbacks=[observer])
    end = time.time()
    model_event = observer.events[1]
    tool_event = observer.events[3]
    assert (model_event.agent, model_event.branch, model_event.tool, model_event.call_id) == (
        "assistant",
        "assistant",
        None,
        None,
    )
    assert (tool_event.point, tool_event.tool, tool_event.call_id) == ("before_tool", "add", "c1")
    assert all(e.duration >= 0 and e.error is None and e.attempt == 1 for e in observer.events)
    times = [e.time for e in observer.events]
    assert all(start <= t <= end for t in times)


def test_events_are_frozen(mode: Mode) -> None:
    """A ``HookEvent`` cannot be changed by an observer."""
    observer = Observer()
    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        drive(runner, mode, "hi", callbacks=[observer])
    with pytest.raises(dataclasses.FrozenInstanceError):
        observer.events[0].outcome = "halt"  # type: ignore[misc]


def test_observers_see_halted_dispatches(mode: Mode) -> None:
    """A halted before point is told with outcome "halt"; its after point is never told."""

    class Cached(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            return Halt(ToolResult("cached"))

    observer = Observer()
    with Runner(tool_run()) as runner:
        drive(runner, mode, "1+2", callbacks=[Cached(), observer])
    tool_events = [(e.point, e.outcome) for e in observer.events if e.tool is not None]
    assert tool_events == [("before_tool", "halt")]


def test_observers_see_failures_retries_and_fallbacks(mode: Mode) -> None:
    """Error dispatches are told with their tag, attempt and the error (recovered or not)."""
    outage = ModelDown("outage")
    tool_error = ValueError("bad tool")

    class Handle(OnModelError, OnToolError):
        def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> ErrorResult[ModelContext, ModelResponse]:
            return Retry(ctx) if ctx.attempt == 1 else failure

        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            return Fallback(ToolResult("fallback"))

    def flaky() -> str:
        """Fail."""
        raise tool_error

    model = ScriptedModel([outage, calling(ToolCall("c1", "flaky")), outage, outage])
    agent = Agent("assistant", model, tools=[flaky])
    observer = Observer()
    with (
        Runner(agent, retry=RetryPolicy(base_delay=0)) as runner,
        pytest.raises(ModelDown),
    ):
        drive(runner, mode, "go", callbacks=[Handle(), observer])
    assert [(e.point, e.outcome, e.attempt, e.error) for e in observer.events] == [
        ("before_agent", "cont", 1, None),
        ("before_model", "cont", 1, None),
        ("on_model_error", "retry", 1, outage),
        ("after_model", "success", 2, None),
        ("before_tool", "cont", 1, None),
        ("on_tool_error", "fallback", 1, tool_error),
        ("after_tool", "success", 1, None),
        ("before_model", "cont", 1, None),
        ("on_model_error", "retry", 1, outage),
        ("on_model_error", "failure", 2, outage),
        ("after_model", "failure", 2, outage),
        ("after_agent", "failure", 1, outage),
    ]


def test_observers_see_raising_dispatches(mode: Mode) -> None:
    """A dispatch whose callback raised is told with outcome "raised" and the exception."""

    class Stop(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            raise StopRun("enough")

    observer = Observer()
    with Runner(Agent("assistant", ScriptedModel(["unused"]))) as runner:
        result = drive(runner, mode, "hi", callbacks=[Stop(), observer])
    assert result.status == "stopped"
    last = observer.events[-1]
    assert (last.point, last.outcome) == ("before_model", "raised")
    assert isinstance(last.error, StopRun)
    assert [e.point for e in observer.events] == ["before_agent", "before_model"]


def test_observers_do_not_change_the_flow(mode: Mode) -> None:
    """Whatever an observer returns is ignored."""

    class Meddler:
        def on_event(self, event: HookEvent, /) -> object:
            return Halt(ModelResponse("meddled"))

    with Runner(Agent("assistant", ScriptedModel(["real"]))) as runner:
        assert drive(runner, mode, "hi", callbacks=[Meddler()]).output == "real"


def test_a_raising_observer_is_logged_and_the_run_goes_on(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    """An observer's exception is logged on the "runner" logger; later observers still hear."""

    class Broken:
        def on_event(self, event: HookEvent, /) -> None:
            raise RuntimeError(f"observer broke on {event.point}")

    after = Observer()
    with (
        caplog.at_level(logging.ERROR, logger="runner"),
        Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner,
    ):
        result = drive(runner, mode, "hi", callbacks=[Broken(), after])
    assert result.output == "ok"
    assert len(after.events) == 4
    records = [r for r in caplog.records if r.name == "runner"]
    assert len(records) == 4
    assert all(r.levelno == logging.ERROR for r in records)
    assert "before_agent" in records[0].getMessage()
    assert records[0].exc_info is not None
    assert str(records[0].exc_info[1]) == "observer broke on before_agent"


def test_observing_turns_a_function_into_an_observer(mode: Mode) -> None:
    """``observing(fn)`` calls ``fn`` with each event."""
    points: list[str] = []
    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        drive(runner, mode, "hi", callbacks=[observing(lambda event: points.append(event.point))])
    assert points == ["before_agent", "before_model", "after_model", "after_agent"]


def test_sub_agent_events_name_the_sub_agent_and_branch(mode: Mode) -> None:
    """Dispatches inside a sub-agent are told with its name and its branch."""
    researcher = Agent("researcher", ScriptedModel(["found"]))
    model = ScriptedModel([calling(ToolCall("c1", "researcher", {"request": "look"})), "done"])
    observer = Observer()
    with Runner(Agent("assistant", model, sub_agents=[researcher])) as runner:
        drive(runner, mode, "go", callbacks=[observer])
    inner = [(e.point, e.agent) for e in observer.events if e.branch == "assistant/researcher"]
    assert inner == [
        ("before_agent", "researcher"),
        ("before_model", "researcher"),
        ("after_model", "researcher"),
        ("after_agent", "researcher"),
    ]
    tool_points = [(e.point, e.tool, e.call_id) for e in observer.events if e.tool]
    assert tool_points == [
        ("before_tool", "researcher", "c1"),
        ("after_tool", "researcher", "c1"),
    ]


def test_async_observers_are_awaited_in_run_async() -> None:
    """An ``async def on_event`` is awaited in ``run_async``."""
    points: list[str] = []

    class AsyncObserver:
        async def on_event(self, event: HookEvent, /) -> None:
            await asyncio.sleep(0)
            points.append(event.point)

    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        asyncio.run(runner.run_async("hi", callbacks=[AsyncObserver()]))
    assert points == ["before_agent", "before_model", "after_model", "after_agent"]


def test_async_observers_are_refused_by_run() -> None:
    """``run`` refuses an ``async def on_event`` before anything runs."""

    class AsyncObserver:
        async def on_event(self, event: HookEvent, /) -> None:
            """Never awaited."""

    model = ScriptedModel(["unused"])
    with (
        Runner(Agent("assistant", model)) as runner,
        pytest.raises(InvalidCallbacks, match="on_event"),
    ):
        runner.run("hi", callbacks=[AsyncObserver()])
    assert model.requests == []


def test_events_carry_the_chains_final_outcome(mode: Mode) -> None:
    """A failure an after hook recovered is told as "success", not "failure"."""

    class Recover(AfterModel):
        def after_model(
            self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
        ) -> Result[ModelResponse, Exception]:
            return Success(ModelResponse("recovered"))

    observer = Observer()
    with Runner(Agent("assistant", ScriptedModel([ModelDown("outage")]))) as runner:
        result = drive(runner, mode, "hi", callbacks=[Recover(), observer])
    assert result.output == "recovered"
    assert [(e.point, e.outcome) for e in observer.events[2:]] == [
        ("on_model_error", "failure"),
        ("after_model", "success"),
        ("after_agent", "success"),
    ]
