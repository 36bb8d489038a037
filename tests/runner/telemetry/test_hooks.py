"""Telemetry: hook decisions as span events, and which spans are errors (and which not)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest

from hooks import (
    AfterModel,
    Approve,
    BeforeAgent,
    BeforeModel,
    BeforeResult,
    BeforeTool,
    Cont,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    OnModelError,
    OnToolError,
    Outcome,
    PausableResult,
    Pause,
    Result,
    Retry,
    StopRun,
    Success,
)
from runner import (
    Agent,
    AgentContext,
    HookEvent,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResult,
    Usage,
    observing,
)
from tests.helpers import runs
from tests.helpers.runs import Mode, add, calling, drive
from tests.helpers.spans import Traced, attributes, event_names, hook_events

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)
ADD = ToolCall("c1", "add", {"a": 2, "b": 3})


def calculator(*script: ModelResponse | str | Exception) -> Agent:
    """An agent with the ``add`` tool answering from ``script``."""
    return Agent("calculator", ScriptedModel(script), tools=[add])


def status(span: object) -> str:
    """The span's status code's name: ``UNSET``, ``OK`` or ``ERROR``."""
    code = getattr(getattr(span, "status", None), "status_code", None)
    return str(getattr(code, "name", ""))


class RefuseTools(BeforeTool):
    """Halts every tool call with an error result."""

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Refuse the call."""
        return Halt(ToolResult("not allowed", is_error=True))


def test_a_halted_tool_call_is_an_event_on_its_span(traced: Traced, mode: Mode) -> None:
    """before_tool's halt shows on the execute_tool span: point, callback, decision, tag;
    the span is no error."""
    traced.run(calculator(calling(ADD), "ok"), mode, callbacks=[RefuseTools()])
    tool = traced.one("execute_tool add")
    assert hook_events(tool) == [
        {
            "hookline.hook.point": "before_tool",
            "hookline.hook.decision": "halt",
            "hookline.hook.tag": "halt",
            "hookline.hook.callback": "RefuseTools instance",
            "hookline.attempt": 1,
        }
    ]
    assert status(tool) == "UNSET"


class Gate(BeforeAgent):
    """Answers every agent turn itself."""

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Halt with a fixed answer."""
        return Halt(ModelResponse("closed"))


def test_a_halted_agent_turn_is_an_event_on_its_span(traced: Traced, mode: Mode) -> None:
    """before_agent's halt: an event on invoke_agent, no model call, status unset."""
    traced.run(calculator("never"), mode, callbacks=[Gate()])
    assert traced.names() == ["invoke_agent calculator"]
    agent = traced.one("invoke_agent calculator")
    assert [event["hookline.hook.decision"] for event in hook_events(agent)] == ["halt"]
    assert status(agent) == "UNSET"


class Redact(BeforeModel):
    """Replaces the last message the model would see."""

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Cont with a changed request."""
        messages = (*ctx.request.messages[:-1], Message("user", "<redacted>"))
        return Cont(replace(ctx, request=ModelRequest(messages, ctx.request.tools)))


class Polish(AfterModel):
    """Replaces the model's answer."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Success with another text."""
        return Success(ModelResponse("polished"))


def test_replacements_are_events_and_untouched_dispatches_are_not(
    traced: Traced, mode: Mode
) -> None:
    """A changed request and a replaced answer are "replace" events on the agent's span;
    dispatches where no callback changed anything leave no event."""
    traced.run(calculator("raw"), mode, callbacks=[Redact(), Polish(), runs.Trace([])])
    events = hook_events(traced.one("invoke_agent calculator"))
    assert [(e["hookline.hook.point"], e["hookline.hook.decision"]) for e in events] == [
        ("before_model", "replace"),
        ("after_model", "replace"),
    ]
    assert [e["hookline.hook.tag"] for e in events] == ["cont", "success"]
    assert [e["hookline.hook.callback"] for e in events] == ["Redact instance", "Polish instance"]
    assert hook_events(traced.one("chat scripted")) == []


class RetryModel(OnModelError):
    """Retries every model error."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry the same request."""
        return Retry(ctx)


def test_a_retried_model_error_is_visible_but_no_error(traced: Traced, mode: Mode) -> None:
    """The failed attempt's chat span records the exception and the retry, status unset;
    the second attempt's span answers; the agent's span is no error."""
    traced.run(
        calculator(TimeoutError("slow"), "fine"), mode, callbacks=[RetryModel()], retry=NO_WAIT
    )
    first, second = traced.named("chat scripted")
    assert event_names(first) == ["exception", "hookline.hook"]
    (retry,) = hook_events(first)
    assert retry["hookline.hook.decision"] == "retry"
    assert (retry["exception.type"], retry["exception.message"]) == ("TimeoutError", "slow")
    assert status(first) == "UNSET"
    assert "error.type" not in attributes(first)
    assert (attributes(first)["hookline.attempt"], attributes(second)["hookline.attempt"]) == (1, 2)
    assert first.end_time is not None
    assert second.start_time is not None
    assert first.end_time <= second.start_time  # ended when the attempt did
    assert status(second) == status(traced.one("invoke_agent calculator")) == "UNSET"


def test_an_unrecovered_model_error_is_an_error_up_to_the_agent(traced: Traced, mode: Mode) -> None:
    """Nobody recovers: the chat span and the agent's are ERROR with error.type and the
    exception recorded; the run raises it."""
    with pytest.raises(PermissionError, match="revoked"):
        traced.run(calculator(PermissionError("revoked")), mode)
    chat, agent = traced.one("chat scripted"), traced.one("invoke_agent calculator")
    for span in (chat, agent):
        assert status(span) == "ERROR"
        assert attributes(span)["error.type"] == "PermissionError"
        assert "exception" in event_names(span)
    assert agent.status.description == "PermissionError: revoked"


def test_a_retry_the_budget_refuses_leaves_the_last_attempt_an_error(
    traced: Traced, mode: Mode
) -> None:
    """Every attempt fails and is retried: the earlier ones are unset, the last (the retry
    refused) is ERROR, as is the agent's span."""
    errors = [TimeoutError(f"slow {n}") for n in range(3)]
    with pytest.raises(TimeoutError):
        traced.run(calculator(*errors), mode, callbacks=[RetryModel()], retry=NO_WAIT)
    chats = traced.named("chat scripted")
    assert [status(chat) for chat in chats] == ["UNSET", "UNSET", "ERROR"]
    assert status(traced.one("invoke_agent calculator")) == "ERROR"


class Backup(OnModelError):
    """Answers a failed model call with a backup answer that cost tokens."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Fall back."""
        return Fallback(ModelResponse("backup", usage=Usage(5, 1)))


def test_a_fallback_is_visible_but_no_error(traced: Traced, mode: Mode) -> None:
    """The fallback is an event on the failed attempt's span; nothing is ERROR, and the
    backup's tokens count towards the agent's usage."""
    result = traced.run(calculator(ConnectionError("down")), mode, callbacks=[Backup()])
    chat, agent = traced.one("chat scripted"), traced.one("invoke_agent calculator")
    assert [e["hookline.hook.decision"] for e in hook_events(chat)] == ["fallback"]
    assert hook_events(chat)[0]["hookline.hook.callback"] == "Backup instance"
    assert status(chat) == status(agent) == "UNSET"
    assert result.usage == Usage(5, 1)
    assert attributes(agent)["gen_ai.usage.input_tokens"] == 5


def flaky_add(a: int, b: int) -> int:
    """Add two integers, failing when ``a`` is negative."""
    if a < 0:
        raise ValueError("negative")
    return a + b


class FixArgs(OnToolError):
    """Retries a failed call with ``a`` made positive."""

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Retry with fixed arguments."""
        args = {**ctx.call.args, "a": abs(ctx.call.args["a"])}
        return Retry(replace(ctx, call=replace(ctx.call, args=args)))


NEGATIVE = ToolCall("c1", "flaky_add", {"a": -2, "b": 3})


def test_a_recovered_tool_error_is_visible_on_the_tool_span(traced: Traced, mode: Mode) -> None:
    """A retry that fixes the call: the tool span is no error, shows the retry with the
    error it recovered from, and ends on attempt 2."""
    agent = Agent("calc", ScriptedModel([calling(NEGATIVE), "5"]), tools=[flaky_add])
    traced.run(agent, mode, callbacks=[FixArgs()], retry=NO_WAIT)
    tool = traced.one("execute_tool flaky_add")
    (retry,) = hook_events(tool)
    assert (retry["hookline.hook.point"], retry["hookline.hook.decision"]) == (
        "on_tool_error",
        "retry",
    )
    assert retry["exception.type"] == "ValueError"
    assert status(tool) == "UNSET"
    assert attributes(tool)["hookline.attempt"] == 2


def test_an_unrecovered_tool_error_is_an_error_of_the_tool_span_only(
    traced: Traced, mode: Mode
) -> None:
    """The model gets an error result and the run goes on: the tool span is ERROR, the
    agent's is not."""
    agent = Agent("calc", ScriptedModel([calling(NEGATIVE), "sorry"]), tools=[flaky_add])
    traced.run(agent, mode)
    tool = traced.one("execute_tool flaky_add")
    assert status(tool) == "ERROR"
    assert attributes(tool)["error.type"] == "ValueError"
    (exception,) = [event for event in tool.events if event.name == "exception"]
    assert exception.attributes is not None
    assert (exception.attributes["exception.type"], exception.attributes["exception.message"]) == (
        "ValueError",
        "negative",
    )
    assert status(traced.one("invoke_agent calc")) == "UNSET"


class Explode(BeforeTool):
    """A guard with a bug."""

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Raise."""
        raise KeyError("oops")


def test_a_raising_callback_is_an_event_and_an_error(traced: Traced, mode: Mode) -> None:
    """The raise is a "raise" event naming the callback; the spans it left are ERROR."""
    with pytest.raises(KeyError):
        traced.run(calculator(calling(ADD)), mode, callbacks=[Explode()])
    tool = traced.one("execute_tool add")
    (event,) = hook_events(tool)
    assert (event["hookline.hook.decision"], event["hookline.hook.callback"]) == (
        "raise",
        "Explode instance",
    )
    assert event["exception.type"] == "KeyError"
    assert status(tool) == status(traced.one("invoke_agent calculator")) == "ERROR"


class Budget(BeforeModel):
    """Stops the run at the second model call."""

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Stop once the model was called once."""
        if len(ctx.request.messages) > 1:
            raise StopRun("one model call per run")
        return Cont(ctx)


def test_a_stopped_run_is_an_event_not_an_error(traced: Traced, mode: Mode) -> None:
    """StopRun ends the run cleanly: a hookline.stop event with the reason, status unset."""
    result = traced.run(calculator(calling(ADD), "never"), mode, callbacks=[Budget()])
    assert result.status == "stopped"
    agent = traced.one("invoke_agent calculator")
    assert status(agent) == "UNSET"
    (stop,) = [event for event in agent.events if event.name == "hookline.stop"]
    assert dict(stop.attributes or {}) == {"hookline.stop.reason": "one model call per run"}


class Cache:
    """A wrap that answers every model call itself (sync and async forms)."""

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Answer from the cache."""
        return Success(ModelResponse("cached"))


class AsyncCache:
    """``Cache`` for arun."""

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """Answer from the cache."""
        return Success(ModelResponse("cached"))


def test_a_wrap_that_answers_itself_is_an_event_and_no_model_call(
    traced: Traced, mode: Mode
) -> None:
    """No chat span: the model never ran; the wrap's answer is a "replace" event."""
    cache = Cache() if mode == "sync" else AsyncCache()
    result = traced.run(calculator("never"), mode, callbacks=[cache])
    assert result.output == "cached"
    assert traced.named("chat scripted") == []
    (event,) = hook_events(traced.one("invoke_agent calculator"))
    assert (event["hookline.hook.point"], event["hookline.hook.decision"]) == (
        "wrap_model",
        "replace",
    )


class Twice:
    """A wrap that calls the model again when the first call fails (sync and async)."""

    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Call on; once more after a failure."""
        outcome = call_next(ctx)
        return call_next(ctx) if isinstance(outcome, Failure) else outcome


class AsyncTwice:
    """``Twice`` for arun."""

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """Call on; once more after a failure."""
        outcome = await call_next(ctx)
        return await call_next(ctx) if isinstance(outcome, Failure) else outcome


def test_a_failure_a_wrap_recovers_from_is_no_error(traced: Traced, mode: Mode) -> None:
    """The wrap's own second call succeeds: two chat spans, the first with its exception
    but unset, like any recovered error; no error hook ran."""
    twice = Twice() if mode == "sync" else AsyncTwice()
    traced.run(calculator(OSError("reset"), "fine"), mode, callbacks=[twice])
    first, second = traced.named("chat scripted")
    assert event_names(first) == ["exception"]
    assert status(first) == status(second) == "UNSET"
    assert status(traced.one("invoke_agent calculator")) == "UNSET"


def test_observers_are_still_told_in_a_traced_run(traced: Traced, mode: Mode) -> None:
    """Tracing changes nothing for observers: every dispatch is a HookEvent as before."""
    seen: list[HookEvent] = []
    traced.run(calculator("hi"), mode, callbacks=[observing(seen.append)])
    assert [event.point for event in seen] == [
        "before_agent",
        "before_model",
        "after_model",
        "after_agent",
    ]


class AskFirst:
    """Pauses ``add`` for a human until one decided."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause a first pass; let a decided call through."""
        return Pause("add these?") if ctx.decision is None else Cont(ctx)


def test_a_paused_call_and_its_resumption_are_traced(traced: Traced, mode: Mode) -> None:
    """The pause is a "pause" event on the tool call's span; the call's span and the agent's
    end with a hookline.paused event, no error. The resumed run is traced too: the call
    runs under a new execute_tool span."""
    with traced.runner(calculator(calling(ADD), "It is 5."), callbacks=[AskFirst()]) as runner:
        paused = drive(runner, mode, "2 + 3?")
        assert paused.status == "paused"
        spans = traced.spans()
        (tool,) = [span for span in spans if span.name == "execute_tool add"]
        (event,) = hook_events(tool)
        assert (event["hookline.hook.decision"], event["hookline.hook.callback"]) == (
            "pause",
            "AskFirst instance",
        )
        agent = traced.one("invoke_agent calculator")
        for span in (tool, agent):
            assert "hookline.paused" in event_names(span)
            assert status(span) == "UNSET"
        (request,) = paused.pending
        decisions = {request.id: Approve()}
        if mode == "sync":
            done = runner.resume(paused.state, decisions)
        else:
            done = asyncio.run(runner.aresume(paused.state, decisions))
    assert done.output == "It is 5."
    resumed = [span for span in traced.named("execute_tool add") if span not in spans]
    assert len(resumed) == 1
    assert hook_events(resumed[0]) == []  # the decided call went through untouched
    assert len(traced.named("invoke_agent calculator")) == 2


def test_a_differing_shadow_is_an_event_on_the_tool_span(traced: Traced, mode: Mode) -> None:
    """A shadow that would have halted a call is a ``hookline.shadow`` event on that call's
    ``execute_tool`` span, naming both decisions; the call still ran."""
    from hooks import shadow

    class Strict(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            return Halt(ToolResult("no adding"))

    result = traced.run(calculator(calling(ADD), "5"), mode, callbacks=[shadow(Strict())])
    assert result.output == "5"
    (span,) = traced.named("execute_tool add")
    (event,) = [e for e in span.events if e.name == "hookline.shadow"]
    shown = dict(event.attributes or {})
    assert str(shown.pop("hookline.shadow.callback")).endswith(".Strict instance")
    assert str(shown.pop("hookline.shadow.detail")).startswith(
        "Halt(ToolResult(content='no adding'"
    )
    assert shown == {
        "hookline.shadow.point": "before_tool",
        "hookline.shadow.live": "cont",
        "hookline.shadow.would": "halt",
    }
