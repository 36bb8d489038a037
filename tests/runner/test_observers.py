"""End-to-end tests of observers: one frozen ``HookEvent`` per hook-point dispatch."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import types
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from hooks import (
    AfterModel,
    BeforeModel,
    BeforeResult,
    BeforeTool,
    Cont,
    DispatchPolicy,
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
    ToolResultEvent,
    observing,
)
from tests.helpers.runs import Mode, add, calling, drive, events_of


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


def test_a_callback_that_rebuilds_an_equal_request_is_not_named(mode: Mode) -> None:
    """A ``before_model`` hook that rebuilds the request with nothing changed (a redaction with
    nothing to redact) decided nothing: its event names no callback; one that changed a
    message is named."""

    class Rewrite(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            messages = tuple(
                dataclasses.replace(m, content=m.content.replace("secret", "<x>"))
                for m in ctx.request.messages
            )
            request = dataclasses.replace(ctx.request, messages=messages)
            return Cont(dataclasses.replace(ctx, request=request))

    for message, named in [("what is 2 + 3?", False), ("the secret is 4", True)]:
        observer = Observer()
        with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
            drive(runner, mode, message, callbacks=[observer, Rewrite()])
        [event] = [e for e in observer.events if e.point == "before_model"]
        assert event.outcome == "cont"
        if named:
            assert event.callback is not None
            assert event.callback.endswith(".Rewrite instance")
        else:
            assert event.callback is None


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


def test_observers_see_what_each_chain_was_given_and_returned(mode: Mode) -> None:
    """An auditing observer reads the halted call's arguments, and the billed response an
    after hook replaced: ``context``, ``given`` and ``result`` of each event."""

    class Cached(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            return Halt(ToolResult("cached"))

    class Replace(AfterModel):
        def after_model(
            self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
        ) -> Outcome[ModelResponse]:
            return Success(ModelResponse("replaced")) if outcome.unwrap().text == "3" else outcome

    observer = Observer()
    with Runner(tool_run()) as runner:
        result = drive(runner, mode, "1+2", callbacks=[Cached(), Replace(), observer])
    assert result.output == "replaced"
    halted = next(e for e in observer.events if e.point == "before_tool")
    assert isinstance(halted.context, ToolContext)
    assert halted.context.call.args == {"a": 1, "b": 2}
    assert halted.given is halted.context
    assert halted.result == Halt(ToolResult("cached"))
    replaced = [e for e in observer.events if e.point == "after_model"][-1]
    assert replaced.given == Success(ModelResponse("3"))  # what was billed
    assert replaced.result == Success(ModelResponse("replaced"))
    assert isinstance(replaced.context, ModelContext)


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
    """An ``async def on_event`` is awaited in ``arun``."""
    points: list[str] = []

    class AsyncObserver:
        async def on_event(self, event: HookEvent, /) -> None:
            await asyncio.sleep(0)
            points.append(event.point)

    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        asyncio.run(runner.arun("hi", callbacks=[AsyncObserver()]))
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


# -- every dispatch path: sync or async hooks, with or without observers --------------

DECIDED = ToolResult("decided")
TOOL_POINTS = ("before_tool", "on_tool_error", "after_tool")
# (mode, whether the tool hooks are async): async hooks only run in arun.
KINDS = [("sync", False), ("async", False), ("async", True)]


def broken() -> str:
    """A tool that always fails."""
    raise ValueError("broken tool")


def broken_run() -> Agent:
    """An agent whose model calls ``broken`` once, then answers."""
    model = ScriptedModel([calling(ToolCall("c1", "broken")), "done"])
    return Agent("assistant", model, tools=[broken])


class Acts:
    """Acts at one tool point only: decides there (halt, replace, fall back) or raises there.

    Everywhere else it goes on unchanged; with ``log`` it notes each call as
    ``"<point> <type of the first argument> <type of the context>"``.
    """

    def __init__(self, point: str = "", *, raises: bool = False, log: list[str] | None = None):
        self.point = point
        self.raises = raises
        self.log = log

    def _decides(self, point: str, first: object, ctx: object) -> bool:
        if self.log is not None:
            self.log.append(f"{point} {type(first).__name__} {type(ctx).__name__}")
        if point != self.point:
            return False
        if self.raises:
            raise RuntimeError(f"{point} broke")
        return True

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Halt with ``DECIDED`` at ``before_tool``."""
        return Halt(DECIDED) if self._decides("before_tool", ctx, ctx) else Cont(ctx)

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Fall back to ``DECIDED`` at ``on_tool_error``."""
        return Fallback(DECIDED) if self._decides("on_tool_error", failure, ctx) else failure

    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """Replace the outcome with ``DECIDED`` at ``after_tool``."""
        return Success(DECIDED) if self._decides("after_tool", outcome, ctx) else outcome


class AsyncActs:
    """``Acts`` with ``async def`` hooks, each yielding to the loop once."""

    def __init__(self, point: str = "", *, raises: bool = False, log: list[str] | None = None):
        self.acts = Acts(point, raises=raises, log=log)

    async def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """As ``Acts.before_tool``."""
        await asyncio.sleep(0)
        return self.acts.before_tool(ctx)

    async def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """As ``Acts.on_tool_error``."""
        await asyncio.sleep(0)
        return self.acts.on_tool_error(failure, ctx)

    async def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """As ``Acts.after_tool``."""
        await asyncio.sleep(0)
        return self.acts.after_tool(outcome, ctx)


def acts(is_async: bool, point: str = "", **kwargs: Any) -> Acts | AsyncActs:
    """An ``Acts`` or an ``AsyncActs``."""
    return AsyncActs(point, **kwargs) if is_async else Acts(point, **kwargs)


@pytest.mark.parametrize(("mode", "is_async"), KINDS)
@pytest.mark.parametrize(
    ("point", "tag"),
    [("before_tool", "halt"), ("on_tool_error", "fallback"), ("after_tool", "success")],
)
def test_a_deciding_tool_hook_is_named_in_its_event(
    mode: Mode, is_async: bool, point: str, tag: str
) -> None:
    """Sync or async, the hook that decided at a tool point is named, with its tool and call."""
    callback = acts(is_async, point)
    observer = Observer()
    with Runner(broken_run(), retry=RetryPolicy(max_attempts=1)) as runner:
        result = drive(runner, mode, "go", callbacks=[callback, observer])
    [event] = [e for e in observer.events if e.point == point]
    described = f"{type(callback).__name__} instance"
    assert (event.outcome, event.callback, event.tool, event.call_id) == (
        tag,
        described,
        "broken",
        "c1",
    )
    assert [e.result for e in events_of(result, ToolResultEvent)] == [DECIDED]


@pytest.mark.parametrize(("mode", "is_async"), KINDS)
@pytest.mark.parametrize("point", TOOL_POINTS)
def test_a_raising_tool_hook_is_told_with_its_error(mode: Mode, is_async: bool, point: str) -> None:
    """Sync or async, a tool hook that raises is told as "raised", with the error, tool and call."""
    observer = Observer()
    with (
        Runner(broken_run(), retry=RetryPolicy(max_attempts=1)) as runner,
        pytest.raises(RuntimeError, match=f"{point} broke") as caught,
    ):
        drive(runner, mode, "go", callbacks=[acts(is_async, point, raises=True), observer])
    last = observer.events[-1]
    assert (last.point, last.outcome, last.tool, last.call_id, last.attempt) == (
        point,
        "raised",
        "broken",
        "c1",
        1,
    )
    assert last.error is caught.value


@pytest.mark.parametrize(("mode", "is_async"), KINDS)
@pytest.mark.parametrize("point", TOOL_POINTS)
@pytest.mark.parametrize("observed", [False, True], ids=["unobserved", "observed"])
def test_the_runners_policy_reaches_every_kind_of_dispatch(
    mode: Mode, is_async: bool, point: str, observed: bool
) -> None:
    """With ``continue_on_error`` the hooks after a raising one still run, on the real arguments."""
    log: list[str] = []
    callbacks = [acts(is_async, point, raises=True), acts(is_async, log=log)]
    policy = DispatchPolicy(continue_on_error=True)
    with (
        Runner(broken_run(), retry=RetryPolicy(max_attempts=1), policy=policy) as runner,
        pytest.raises(RuntimeError, match=f"{point} broke"),
    ):
        drive(runner, mode, "go", callbacks=[*callbacks, *([Observer()] if observed else [])])
    every = [
        "before_tool ToolContext ToolContext",
        "on_tool_error Failure ToolContext",
        "after_tool Failure ToolContext",
    ]
    assert log == every[: TOOL_POINTS.index(point) + 1]


@pytest.mark.parametrize(("mode", "is_async"), KINDS)
def test_async_after_and_error_hooks_take_part_in_the_run(mode: Mode, is_async: bool) -> None:
    """Without observers, each tool hook is awaited in its turn and gets what the last one gave."""
    log: list[str] = []
    with Runner(broken_run(), retry=RetryPolicy(max_attempts=1)) as runner:
        result = drive(runner, mode, "go", callbacks=[acts(is_async, log=log)])
    assert log == [
        "before_tool ToolContext ToolContext",
        "on_tool_error Failure ToolContext",
        "after_tool Failure ToolContext",
    ]
    [done] = events_of(result, ToolResultEvent)
    assert done.result == ToolResult("ValueError: broken tool", is_error=True)


class Translate(OnToolError):
    """Replaces a tool's error with a ``LookupError``."""

    def __init__(self) -> None:
        self.error = LookupError("translated")

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Fail with the new error."""
        return Failure(self.error)


def test_an_error_hooks_new_failure_is_the_error_told(mode: Mode) -> None:
    """When on_tool_error fails with a new error, observers are told that error, not the old one."""
    translate = Translate()
    observer = Observer()
    with Runner(broken_run(), retry=RetryPolicy(max_attempts=1)) as runner:
        drive(runner, mode, "go", callbacks=[translate, observer])
    [event] = [e for e in observer.events if e.point == "on_tool_error"]
    assert (event.outcome, event.error) == ("failure", translate.error)


def test_event_time_is_when_the_dispatch_started(
    mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``time`` is the run's clock when the dispatch started, ``duration`` what the
    dispatch took on the duration clock (here a fake one the callback moves by 2.5 s)."""
    ticks = [100.0]
    monkeypatch.setattr("runner._run.plan.perf_counter", lambda: ticks[0])
    marks: dict[str, float] = {}

    class Slow(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            marks["start"] = time.time()
            ticks[0] += 2.5
            return Cont(ctx)

    observer = Observer()
    before = time.time()
    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        drive(runner, mode, "hi", callbacks=[Slow(), observer])
    [event] = [e for e in observer.events if e.point == "before_model"]
    assert event.duration == 2.5
    assert before <= event.time <= marks["start"]


class Broken:
    """An observer that always raises."""

    def on_event(self, event: HookEvent, /) -> None:
        """Fail."""
        raise RuntimeError("observer broke")


def test_a_raising_observers_log_names_it_and_the_point(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    """The log record says which observer failed on which point, and that the run goes on."""
    observer = Broken()
    with (
        caplog.at_level(logging.ERROR, logger="runner"),
        Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner,
    ):
        drive(runner, mode, "hi", callbacks=[observer])
    first = next(r for r in caplog.records if r.name == "runner")
    assert first.getMessage() == f"observer {observer!r} failed on before_agent; the run goes on"


def halt_model(ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
    """Answer in the model's place."""
    return Halt(ModelResponse("halted"))


class NamedGuard:
    """An object carrying a ``__name__`` (as a wrapped function would): still an instance."""

    def __init__(self) -> None:
        self.__name__ = "guards"

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Answer in the model's place."""
        return halt_model(ctx)


def guards_module() -> types.ModuleType:
    """A module named ``guards`` whose ``before_model`` halts."""
    module = types.ModuleType("guards")
    module.before_model = halt_model  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(
    ("make", "described"),
    [(guards_module, "module 'guards'"), (NamedGuard, "NamedGuard instance")],
    ids=["module", "instance"],
)
def test_the_deciding_callback_is_described_as_module_or_instance(
    mode: Mode, make: Callable[[], object], described: str
) -> None:
    """A module is named by its name; any other object by its class, even with a ``__name__``."""
    observer = Observer()
    with Runner(Agent("assistant", ScriptedModel(["unused"]))) as runner:
        result = drive(runner, mode, "hi", callbacks=[make(), observer])
    assert result.output == "halted"
    [event] = [e for e in observer.events if e.point == "before_model"]
    assert (event.outcome, event.callback) == ("halt", described)


class Attributes:
    """A callback whose hooks are functions set on the instance, not methods of its class.

    Its ``wrap_model`` is an ``async def`` for an async run, a plain one for a sync run.
    """

    def __init__(self, log: list[str], *, is_async: bool) -> None:
        def before_model(ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            log.append("before_model")
            return Cont(ctx)

        def wrap_model(
            ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
        ) -> Outcome[ModelResponse]:
            log.append("wrap_model")
            return call_next(ctx)

        async def async_wrap_model(
            ctx: ModelContext,
            call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
            /,
        ) -> Outcome[ModelResponse]:
            log.append("wrap_model")
            return await call_next(ctx)

        def on_event(event: HookEvent, /) -> None:
            log.append(f"event {event.point}")

        self.before_model = before_model
        self.wrap_model = async_wrap_model if is_async else wrap_model
        self.on_event = on_event


def test_hooks_set_on_the_instance_run_and_observe(mode: Mode) -> None:
    """Functions set as instance attributes are hooks, wraps and observers like methods are."""
    log: list[str] = []
    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        result = drive(runner, mode, "hi", callbacks=[Attributes(log, is_async=mode == "async")])
    assert result.output == "ok"
    assert log == [
        "event before_agent",
        "before_model",
        "event before_model",
        "wrap_model",
        "event wrap_model",
        "event after_model",
        "event after_agent",
    ]


# -- wraps: sync or async, with or without observers, under the runner's policy -------


class Wraps:
    """A tool wrap that passes on, answers ``DECIDED`` itself, fails, or raises (``does``).

    With ``log`` it notes each call as ``"wrap_tool <type of the context>"``.
    """

    def __init__(self, does: str = "pass", log: list[str] | None = None) -> None:
        self.does = does
        self.log = log
        self.error = LookupError("the wrap failed it")

    def decide(self, ctx: ToolContext) -> Outcome[ToolResult] | None:
        """What the wrap answers itself, or ``None`` to call on."""
        if self.log is not None:
            self.log.append(f"wrap_tool {type(ctx).__name__}")
        if self.does == "raise":
            raise RuntimeError("wrap_tool broke")
        if self.does == "answer":
            return Success(DECIDED)
        if self.does == "fail":
            return Failure(self.error)
        return None

    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        """Answer, fail, raise, or call on."""
        answer = self.decide(ctx)
        return call_next(ctx) if answer is None else answer


class AsyncWraps:
    """``Wraps`` as an ``async def`` wrap."""

    def __init__(self, does: str = "pass", log: list[str] | None = None) -> None:
        self.wraps = Wraps(does, log)
        self.error = self.wraps.error

    async def wrap_tool(
        self,
        ctx: ToolContext,
        call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
        /,
    ) -> Outcome[ToolResult]:
        """As ``Wraps.wrap_tool``, awaiting ``call_next``."""
        await asyncio.sleep(0)
        answer = self.wraps.decide(ctx)
        return await call_next(ctx) if answer is None else answer


def wraps(is_async: bool, does: str = "pass", log: list[str] | None = None) -> Wraps | AsyncWraps:
    """A ``Wraps`` or an ``AsyncWraps``: a sync run takes plain wraps, an async one async wraps."""
    return AsyncWraps(does, log) if is_async else Wraps(does, log)


WRAP_KINDS = [("sync", False), ("async", True)]


@pytest.mark.parametrize(("mode", "is_async"), WRAP_KINDS)
def test_a_wrap_answering_itself_is_named_in_its_event(mode: Mode, is_async: bool) -> None:
    """The wrap that short-circuited the tool is the deciding callback of its event."""
    wrap = wraps(is_async, "answer")
    observer = Observer()
    with Runner(tool_run()) as runner:
        result = drive(runner, mode, "1+2", callbacks=[wrap, observer])
    [event] = [e for e in observer.events if e.point == "wrap_tool"]
    assert (event.outcome, event.callback, event.tool, event.call_id, event.error) == (
        "success",
        f"{type(wrap).__name__} instance",
        "add",
        "c1",
        None,
    )
    assert [e.result for e in events_of(result, ToolResultEvent)] == [DECIDED]


@pytest.mark.parametrize(("mode", "is_async"), WRAP_KINDS)
def test_a_wraps_failure_is_told_with_its_error(mode: Mode, is_async: bool) -> None:
    """A wrap returning a ``Failure`` is told as "failure" with that error, which the model sees."""
    wrap = wraps(is_async, "fail")
    observer = Observer()
    with Runner(tool_run(), retry=RetryPolicy(max_attempts=1)) as runner:
        result = drive(runner, mode, "1+2", callbacks=[wrap, observer])
    [event] = [e for e in observer.events if e.point == "wrap_tool"]
    assert (event.outcome, event.error) == ("failure", wrap.error)
    [done] = events_of(result, ToolResultEvent)
    assert done.result == ToolResult("LookupError: the wrap failed it", is_error=True)


@pytest.mark.parametrize(("mode", "is_async"), WRAP_KINDS)
def test_a_raising_wrap_is_told_with_its_error_tool_and_call(mode: Mode, is_async: bool) -> None:
    """A wrap that raises is told as "raised", with the error, the tool and the call id."""
    observer = Observer()
    with (
        Runner(tool_run()) as runner,
        pytest.raises(RuntimeError, match="wrap_tool broke") as caught,
    ):
        drive(runner, mode, "1+2", callbacks=[wraps(is_async, "raise"), observer])
    last = observer.events[-1]
    assert (last.point, last.outcome, last.tool, last.call_id) == (
        "wrap_tool",
        "raised",
        "add",
        "c1",
    )
    assert last.error is caught.value


@pytest.mark.parametrize(("mode", "is_async"), WRAP_KINDS)
@pytest.mark.parametrize("observed", [False, True], ids=["unobserved", "observed"])
def test_the_runners_policy_reaches_the_wraps(mode: Mode, is_async: bool, observed: bool) -> None:
    """With ``continue_on_error`` the wrap inside a raising one still runs, and so does the tool."""
    log: list[str] = []
    callbacks = [wraps(is_async, "raise"), wraps(is_async, log=log)]
    policy = DispatchPolicy(continue_on_error=True)
    with (
        Runner(tool_run(), policy=policy) as runner,
        pytest.raises(RuntimeError, match="wrap_tool broke"),
    ):
        drive(runner, mode, "1+2", callbacks=[*callbacks, *([Observer()] if observed else [])])
    assert log == ["wrap_tool ToolContext"]
