"""Wrap hooks in a run: around every attempt, inside the guards, sync and async."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Literal

import pytest

from hooks import (
    Cont,
    ErrorResult,
    Failure,
    HookEvent,
    InvalidCallbacks,
    ModelContext,
    ModelResponse,
    Outcome,
    Retry,
    StopRun,
    Success,
    ToolContext,
    ToolResult,
    observing,
    with_timeout,
)
from runner import (
    Agent,
    ErrorEvent,
    ModelAttemptEvent,
    RetryPolicy,
    Runner,
    RunResult,
    ScriptedModel,
    ToolAttemptEvent,
    ToolCall,
    ToolResultEvent,
)
from tests.helpers.runs import Mode, add, calling, events_of

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)


class Log:
    """Logs every hook it sees; its wraps log before and after ``call_next``."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log = log
        self.name = name

    def before_model(self, ctx: ModelContext, /) -> Any:
        """Log and go on."""
        self.log.append(f"{self.name}:before_model")
        return Cont(ctx)

    def after_model(self, outcome: Outcome[ModelResponse], ctx: ModelContext, /) -> Any:
        """Log and pass on."""
        self.log.append(f"{self.name}:after_model")
        return outcome

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Log around the rest of the chain."""
        self.log.append(f"{self.name}:wrap in")
        outcome = call_next(ctx)
        self.log.append(f"{self.name}:wrap out")
        return outcome


class AsyncLog:
    """``Log`` with an async wrap, for ``arun``."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log = log
        self.name = name

    def before_model(self, ctx: ModelContext, /) -> Any:
        """Log and go on."""
        self.log.append(f"{self.name}:before_model")
        return Cont(ctx)

    def after_model(self, outcome: Outcome[ModelResponse], ctx: ModelContext, /) -> Any:
        """Log and pass on."""
        self.log.append(f"{self.name}:after_model")
        return outcome

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """Log around the rest of the chain."""
        self.log.append(f"{self.name}:wrap in")
        outcome = await call_next(ctx)
        self.log.append(f"{self.name}:wrap out")
        return outcome


def logger(mode: Mode, log: list[str], name: str) -> object:
    """A logging callback whose wrap fits the run's mode."""
    return Log(log, name) if mode == "sync" else AsyncLog(log, name)


def run(runner: Runner, mode: Mode, message: str, callbacks: list[object]) -> RunResult:
    """One run in ``mode``."""
    if mode == "sync":
        return runner.run(message, callbacks=callbacks)
    return asyncio.run(runner.arun(message, callbacks=callbacks))


class LoggingModel:
    """A model that logs its calls."""

    def __init__(self, log: list[str], answers: list[object]) -> None:
        self.log = log
        self.inner = ScriptedModel(answers)  # type: ignore[arg-type]

    def generate(self, request: Any, /) -> ModelResponse:
        """Log, then answer from the script."""
        self.log.append("model")
        return self.inner.generate(request)


def test_wraps_nest_like_an_onion_inside_the_guards(mode: Mode) -> None:
    """before_model, then the wraps (first outermost, both ways), the model, after_model."""
    log: list[str] = []
    agent = Agent("assistant", LoggingModel(log, ["ok"]))
    with Runner(agent) as runner:
        result = run(runner, mode, "hi", [logger(mode, log, "a"), logger(mode, log, "b")])
    assert result.output == "ok"
    assert log == [
        "a:before_model",
        "b:before_model",
        "a:wrap in",
        "b:wrap in",
        "model",
        "b:wrap out",
        "a:wrap out",
        "a:after_model",
        "b:after_model",
    ]


class ToolCache:
    """Answers every tool call from memory, never running the tool."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        """Short-circuit with a cached answer."""
        self.seen.append(ctx.call.name)
        return Success(ToolResult("cached"))


class AsyncToolCache:
    """``ToolCache`` as an async wrap."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def wrap_tool(
        self,
        ctx: ToolContext,
        call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
        /,
    ) -> Outcome[ToolResult]:
        """Short-circuit with a cached answer."""
        self.seen.append(ctx.call.name)
        return Success(ToolResult("cached"))


def test_a_short_circuit_is_the_operations_result_and_nothing_ran(mode: Mode) -> None:
    """A wrap's ``Success`` without ``call_next`` is the tool's result; no attempt ran."""
    runs: list[int] = []

    def counted(a: int) -> int:
        runs.append(a)
        return a

    cache = ToolCache() if mode == "sync" else AsyncToolCache()
    model = ScriptedModel([calling(ToolCall("c1", "counted", {"a": 1})), "done"])
    with Runner(Agent("assistant", model, tools=[counted])) as runner:
        result = run(runner, mode, "go", [cache])
    assert runs == []
    assert cache.seen == ["counted"]
    assert events_of(result, ToolResultEvent)[0].result == ToolResult("cached")
    assert events_of(result, ToolAttemptEvent) == []


class FailingWrap:
    """Turns every model answer into a failure, and retries it from the error hook."""

    def __init__(self) -> None:
        self.attempts: list[int] = []
        self.before: list[int] = []

    def before_model(self, ctx: ModelContext, /) -> Any:
        """Count the guard's passes."""
        self.before.append(ctx.attempt)
        return Cont(ctx)

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Fail the first two attempts whatever the model said."""
        self.attempts.append(ctx.attempt)
        outcome = call_next(ctx)
        if ctx.attempt < 3:
            return Failure(ValueError(f"rejected attempt {ctx.attempt}"))
        return outcome

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry as it is."""
        return Retry(ctx)


def test_a_wraps_failure_goes_to_the_error_hooks_and_each_attempt_passes_the_wraps() -> None:
    """The wrap sees every retried attempt; the before hooks ran once (the retry is plain)."""
    hook = FailingWrap()
    model = ScriptedModel(["one", "two", "three"])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        result = runner.run("hi", callbacks=[hook])
    assert result.output == "three"
    assert hook.attempts == [1, 2, 3]
    assert hook.before == [1]
    assert [str(e.error) for e in events_of(result, ErrorEvent)] == [
        "rejected attempt 1",
        "rejected attempt 2",
    ]
    assert [e.attempt for e in events_of(result, ModelAttemptEvent)] == [1, 2, 3]


def stopping_tool() -> str:
    """A tool that stops the run."""
    raise StopRun("tool says stop")


class PassThrough:
    """A wrap that passes everything through, logging outcomes it saw."""

    def __init__(self) -> None:
        self.outcomes: list[object] = []

    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        """Call on, note what came back."""
        outcome = call_next(ctx)
        self.outcomes.append(outcome)
        return outcome


def test_stop_run_from_a_tool_passes_the_wraps_untouched() -> None:
    """A tool's ``StopRun`` stops the run; no wrap ever sees it as a ``Failure``."""
    wrap = PassThrough()
    model = ScriptedModel([calling(ToolCall("c1", "stopping_tool", {})), "unreached"])
    with Runner(Agent("assistant", model, tools=[stopping_tool])) as runner:
        result = runner.run("go", callbacks=[wrap])
    assert result.status == "stopped"
    assert result.stop_reason == "tool says stop"
    assert wrap.outcomes == []


def test_a_sub_agents_failure_passes_the_wraps_as_itself() -> None:
    """A sub-agent's unrecovered model error fails the run, past the parent's tool wraps."""
    error = ConnectionError("sub model down")
    sub = Agent("helper", ScriptedModel([error]))
    model = ScriptedModel([calling(ToolCall("c1", "helper", {"request": "x"})), "unreached"])
    wrap = PassThrough()
    agent = Agent("assistant", model, sub_agents=[sub])
    with (
        Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner,
        pytest.raises(ConnectionError) as caught,
    ):
        runner.run("go", callbacks=[wrap])
    assert caught.value is error
    assert caught.value.__context__ is None
    assert wrap.outcomes == []


class Raising:
    """A wrap that raises."""

    def wrap_tool(self, ctx: ToolContext, call_next: Any, /) -> Any:
        """Raise a bug."""
        raise KeyError("wrap bug")


def test_an_exception_a_wrap_raises_propagates_with_its_note() -> None:
    """A wrap's own error is a callback's error: it fails the run, as itself, noted."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "unreached"])
    seen: list[HookEvent] = []
    with (
        Runner(Agent("assistant", model, tools=[add])) as runner,
        pytest.raises(KeyError, match="wrap bug") as caught,
    ):
        runner.run("go", callbacks=[Raising(), observing(seen.append)])
    assert any("wrap_tool" in note for note in caught.value.__notes__)
    [event] = [e for e in seen if e.point == "wrap_tool"]
    assert (event.outcome, event.callback) == ("raised", "Raising instance")


def test_observers_get_one_event_per_wrap_dispatch_naming_a_short_circuit() -> None:
    """One ``wrap_tool`` event per attempt; the cache that answered is the deciding callback."""
    seen: list[HookEvent] = []
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "done"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        runner.run("go", callbacks=[ToolCache(), observing(seen.append)])
    [event] = [e for e in seen if e.point == "wrap_tool"]
    assert (event.outcome, event.callback, event.tool) == ("success", "ToolCache instance", "add")


def test_a_wrap_module_works_like_an_instance() -> None:
    """A module with a ``wrap_model`` function is a wrap callback."""
    calls: list[str] = []

    def wrap_model(ctx: ModelContext, call_next: Any) -> Any:
        calls.append("wrapped")
        return call_next(ctx)

    module = types.ModuleType("timing")
    module.wrap_model = wrap_model  # type: ignore[attr-defined]
    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        assert runner.run("hi", callbacks=[module]).output == "ok"
    assert calls == ["wrapped"]


def test_a_plain_wrap_in_an_async_run_is_refused_before_anything_runs() -> None:
    """``arun`` awaits call_next, so a plain def wrap is refused up front."""
    model = ScriptedModel(["ok"])
    with (
        Runner(Agent("assistant", model)) as runner,
        pytest.raises(InvalidCallbacks, match="async def"),
    ):
        asyncio.run(runner.arun("hi", callbacks=[ToolCache()]))
    assert model.requests == []


def test_an_async_wrap_in_a_sync_run_is_refused_before_anything_runs() -> None:
    """``run`` cannot await, so an async wrap is refused up front, like any async hook."""
    model = ScriptedModel(["ok"])
    with (
        Runner(Agent("assistant", model)) as runner,
        pytest.raises(InvalidCallbacks, match="async"),
    ):
        runner.run("hi", callbacks=[AsyncToolCache()])
    assert model.requests == []


class Rephrase:
    """A wrap that sends the model a changed request: the attempt event shows it."""

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Call on with the last message replaced."""
        messages = (*ctx.request.messages[:-1], ctx.request.messages[-1].__class__("user", "x"))
        return call_next(replace(ctx, request=replace(ctx.request, messages=messages)))


def test_attempt_events_record_what_the_model_received_inside_the_wraps() -> None:
    """The model attempt on record is the request the wrap passed on, as the model got it."""
    model = ScriptedModel(["ok"])
    with Runner(Agent("assistant", model)) as runner:
        result = runner.run("original", callbacks=[Rephrase()])
    [attempt] = events_of(result, ModelAttemptEvent)
    assert attempt.request.messages[-1].content == "x"
    assert model.requests[0].messages[-1].content == "x"


class SlowGuard:
    """An async guard that never answers in time."""

    async def before_tool(self, ctx: ToolContext, /) -> Any:
        """Wait for an event nobody sets."""
        await asyncio.Event().wait()
        return Cont(ctx)  # pragma: no cover -- the deadline always ends the wait first


@pytest.mark.parametrize("fail", ["closed", "open"])
def test_a_slow_guard_under_a_deadline_fails_closed_or_open(
    fail: Literal["closed", "open"],
) -> None:
    """Closed: the tool is refused and the model reads why. Open: the guard is skipped, noted."""
    runs: list[int] = []

    def counted(a: int) -> int:
        runs.append(a)
        return a

    guard = with_timeout(SlowGuard(), 0.01, fail=fail)
    model = ScriptedModel([calling(ToolCall("c1", "counted", {"a": 7})), "done"])
    with Runner(Agent("assistant", model, tools=[counted])) as runner:
        result = asyncio.run(runner.arun("go", callbacks=[guard]))
    [event] = events_of(result, ToolResultEvent)
    if fail == "closed":
        assert runs == []
        assert event.result.is_error
        assert "timed out" in event.result.content
    else:
        assert runs == [7]
        assert event.result == ToolResult("7")
    assert [record.point for record in guard.timeouts] == ["before_tool"]


class RedirectOnce:
    """Retries a failed tool call as another tool; the wrap logs every attempt it sees."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def before_tool(self, ctx: ToolContext, /) -> Any:
        """Log the guard's pass."""
        self.log.append(f"before {ctx.call.name} #{ctx.attempt}")
        return Cont(ctx)

    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        """Log the attempt the wrap sees."""
        self.log.append(f"wrap {ctx.call.name} #{ctx.attempt}")
        return call_next(ctx)

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Retry the same call once, then as ``add``."""
        if ctx.attempt == 1:
            return Retry(ctx)
        return Retry(replace(ctx, call=ToolCall(ctx.call.id, "add", {"a": 1, "b": 1})))


def broken() -> str:
    """Always fails."""
    raise OSError("broken")


def test_wraps_see_every_attempt_and_guards_only_a_changed_one() -> None:
    """Attempt 2 (same call) skips the guard; attempt 3 (another tool) passes it first."""
    hook = RedirectOnce()
    model = ScriptedModel([calling(ToolCall("c1", "broken", {})), "done"])
    with Runner(Agent("assistant", model, tools=[broken, add]), retry=NO_WAIT) as runner:
        result = runner.run("go", callbacks=[hook])
    assert hook.log == [
        "before broken #1",
        "wrap broken #1",
        "wrap broken #2",
        "before add #3",
        "wrap add #3",
    ]
    assert events_of(result, ToolResultEvent)[0].result == ToolResult("2")
