"""Telemetry: a failed model attempt's span, from the failure to what settled it."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import pytest

from hooks import ErrorResult, Failure, Fallback, Outcome, Retry, StopRun, Success
from runner import (
    Agent,
    ModelContext,
    ModelResponse,
    RetryPolicy,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResult,
    Usage,
)
from tests.helpers.runs import Mode, add, calling
from tests.helpers.spans import Traced, attributes, event_names, hook_events

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)
ADD = ToolCall("c1", "add", {"a": 2, "b": 3})


def calculator(*script: ModelResponse | str | Exception) -> Agent:
    """An agent with the ``add`` tool answering from ``script``."""
    return Agent("calculator", ScriptedModel(script), tools=[add])


def exception_event(span: object) -> dict[str, object]:
    """The attributes of the span's one ``exception`` event."""
    (event,) = [event for event in getattr(span, "events", ()) if event.name == "exception"]
    return dict(event.attributes or {})


class Answer:
    """A wrap that answers itself when the model call it made failed (sync form)."""

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Call on; answer "from the wrap" after a failure."""
        outcome = call_next(ctx)
        return Success(ModelResponse("from the wrap")) if type(outcome) is Failure else outcome


class AsyncAnswer:
    """``Answer`` for arun."""

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """Call on; answer "from the wrap" after a failure."""
        outcome = await call_next(ctx)
        return Success(ModelResponse("from the wrap")) if type(outcome) is Failure else outcome


def test_a_wrap_answering_after_a_failed_attempt_settles_it_as_no_error(
    traced: Traced, mode: Mode
) -> None:
    """The failed attempt's span keeps its exception, is no error, and ends when the attempt
    did; the wrap's answer is a "replace" event on the agent's span, not on the attempt's."""
    wrap = Answer() if mode == "sync" else AsyncAnswer()
    result = traced.run(calculator(OSError("reset")), mode, callbacks=[wrap])
    assert result.output == "from the wrap"
    chat, agent = traced.one("chat scripted"), traced.one("invoke_agent calculator")
    assert event_names(chat) == ["exception"]
    assert chat.status.status_code.name == agent.status.status_code.name == "UNSET"
    assert "error.type" not in attributes(chat)
    events = hook_events(agent)
    assert [(e["hookline.hook.point"], e["hookline.hook.decision"]) for e in events] == [
        ("wrap_model", "replace")
    ]
    assert chat.end_time is not None
    assert agent.end_time is not None
    assert chat.end_time < agent.end_time


class Rename:
    """A wrap that turns a failed call's error into a ``TimeoutError`` (sync form)."""

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Call on; a failure comes back as a TimeoutError."""
        outcome = call_next(ctx)
        return Failure(TimeoutError("renamed")) if type(outcome) is Failure else outcome


class AsyncRename:
    """``Rename`` for arun."""

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """Call on; a failure comes back as a TimeoutError."""
        outcome = await call_next(ctx)
        return Failure(TimeoutError("renamed")) if type(outcome) is Failure else outcome


class RetryModel:
    """Retries every model error."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry the same request."""
        return Retry(ctx)


def test_a_wrap_replacing_the_error_leaves_the_attempt_to_the_error_hooks(
    traced: Traced, mode: Mode
) -> None:
    """A wrap that hands on another error does not decide the failed attempt: the retry
    that follows does, so the attempt's span is no error."""
    wrap = Rename() if mode == "sync" else AsyncRename()
    result = traced.run(
        calculator(ConnectionError("down"), "fine"),
        mode,
        callbacks=[wrap, RetryModel()],
        retry=NO_WAIT,
    )
    assert result.output == "fine"
    first, second = traced.named("chat scripted")
    assert [first.status.status_code.name, second.status.status_code.name] == ["UNSET", "UNSET"]
    assert exception_event(first)["exception.type"] == "ConnectionError"
    (retry,) = hook_events(first)
    assert (retry["hookline.hook.decision"], retry["exception.type"]) == ("retry", "TimeoutError")


class GiveUp:
    """An error hook that ends the run: with ``StopRun``, or with a bug of its own."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Raise the error given."""
        raise self.error


def test_an_error_hook_stopping_the_run_leaves_the_attempt_an_error(
    traced: Traced, mode: Mode
) -> None:
    """Nobody recovered the failed attempt: its span is ERROR with the model's error; the
    run stopped cleanly, so the agent's span is no error and says why it stopped."""
    callbacks = [GiveUp(StopRun("model down"))]
    result = traced.run(calculator(ConnectionError("down")), mode, callbacks=callbacks)
    assert result.status == "stopped"
    chat, agent = traced.one("chat scripted"), traced.one("invoke_agent calculator")
    assert chat.status.status_code.name == "ERROR"
    assert attributes(chat)["error.type"] == "ConnectionError"
    (event,) = hook_events(chat)
    assert (event["hookline.hook.decision"], event["hookline.hook.tag"]) == ("raise", "raised")
    assert agent.status.status_code.name == "UNSET"
    assert "hookline.stop" in event_names(agent)


def test_an_error_hook_that_raises_leaves_the_attempt_an_error(traced: Traced, mode: Mode) -> None:
    """The hook's own exception ends the run: the attempt's span is ERROR with the model's
    error, the agent's with the hook's."""
    with pytest.raises(KeyError):
        traced.run(calculator(ConnectionError("down")), mode, callbacks=[GiveUp(KeyError("bug"))])
    chat, agent = traced.one("chat scripted"), traced.one("invoke_agent calculator")
    assert chat.status.status_code.name == agent.status.status_code.name == "ERROR"
    assert attributes(chat)["error.type"] == "ConnectionError"
    assert attributes(agent)["error.type"] == "KeyError"
    assert exception_event(agent)["exception.type"] == "KeyError"


class Abandon:
    """A wrap that raises ``error`` once the call it made failed (sync form)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Call on; raise after a failure."""
        outcome = call_next(ctx)
        if type(outcome) is Failure:
            raise self.error
        return outcome


class AsyncAbandon:
    """``Abandon`` for arun."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """Call on; raise after a failure."""
        outcome = await call_next(ctx)
        if type(outcome) is Failure:
            raise self.error
        return outcome


def abandon(mode: Mode, error: Exception) -> Abandon | AsyncAbandon:
    """``Abandon`` in the form ``mode`` runs."""
    return Abandon(error) if mode == "sync" else AsyncAbandon(error)


def test_a_wrap_stopping_the_run_after_a_failed_attempt_ends_its_span_as_no_error(
    traced: Traced, mode: Mode
) -> None:
    """A StopRun from the wrap ends the turn cleanly: the failed attempt's span still ends,
    with its exception but no error status."""
    callbacks = [abandon(mode, StopRun("enough"))]
    result = traced.run(calculator(ConnectionError("down")), mode, callbacks=callbacks)
    assert result.status == "stopped"
    chat = traced.one("chat scripted")
    assert exception_event(chat)["exception.type"] == "ConnectionError"
    assert chat.status.status_code.name == "UNSET"
    assert "error.type" not in attributes(chat)


def test_a_wrap_raising_after_a_failed_attempt_leaves_its_span_an_error(
    traced: Traced, mode: Mode
) -> None:
    """A wrap's own exception ends the run: the failed attempt was never recovered, so its
    span is ERROR with the model's error."""
    with pytest.raises(KeyError):
        traced.run(calculator(ConnectionError("down")), mode, callbacks=[abandon(mode, KeyError())])
    chat = traced.one("chat scripted")
    assert chat.status.status_code.name == "ERROR"
    assert attributes(chat)["error.type"] == "ConnectionError"
    assert traced.one("invoke_agent calculator").status.status_code.name == "ERROR"


class Deliberate:
    """Notes when it starts deciding, takes its time, then retries."""

    def __init__(self) -> None:
        self.started: list[int] = []

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry, 20 ms after being called."""
        self.started.append(time.time_ns())
        time.sleep(0.02)
        return Retry(ctx)


def test_a_failed_attempts_span_ends_when_the_attempt_did(traced: Traced, mode: Mode) -> None:
    """Its span stays open for the error hooks, but its end time is the failure's, not the
    time the hooks decided."""
    deliberate = Deliberate()
    traced.run(calculator(TimeoutError("slow"), "ok"), mode, callbacks=[deliberate], retry=NO_WAIT)
    first, _ = traced.named("chat scripted")
    assert first.end_time is not None
    assert first.end_time <= deliberate.started[0]


class BackupTool:
    """Answers a failed tool call with a stand-in result."""

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Fall back to "0"."""
        return Fallback(ToolResult("0"))


def failing_add(a: int, b: int) -> int:
    """Add two integers (broken: always fails)."""
    raise ArithmeticError(f"cannot add {a} and {b}")


def test_a_tool_fallback_is_an_event_on_the_tool_span_and_no_error(
    traced: Traced, mode: Mode
) -> None:
    """The fallback shows on execute_tool with the error it replaced; no span is ERROR and
    the model gets the stand-in result."""
    call = ToolCall("c1", "failing_add", {"a": 2, "b": 3})
    model = ScriptedModel([calling(call), ModelResponse("0", usage=Usage(4, 1))])
    agent = Agent("calc", model, tools=[failing_add])
    result = traced.run(agent, mode, callbacks=[BackupTool()])
    assert result.output == "0"
    tool = traced.one("execute_tool failing_add")
    (event,) = hook_events(tool)
    assert (event["hookline.hook.point"], event["hookline.hook.decision"]) == (
        "on_tool_error",
        "fallback",
    )
    assert event["exception.type"] == "ArithmeticError"
    assert [span.status.status_code.name for span in traced.spans()] == ["UNSET"] * 4
    assert attributes(traced.one("invoke_agent calc"))["gen_ai.usage.input_tokens"] == 4
