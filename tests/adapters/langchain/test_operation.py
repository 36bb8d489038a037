"""The LangChain middleware's dispatch machinery on its own: attempts in both forms,
the events observers are told, and the span events telemetry writes."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from typing import Any

import pytest

from hooks import (
    AFTER_TOOL,
    ON_TOOL_ERROR,
    WRAP_TOOL,
    Cont,
    Failure,
    Fallback,
    HookEvent,
    Invocation,
    Outcome,
    Retry,
    Success,
    ToolCall,
    ToolContext,
    ToolResult,
    compile_callbacks,
)
from runner.adapters.langchain import _operation
from runner.adapters.langchain._operation import Events, adispatch, arun_attempts, dispatch

_RUN = Invocation("run", "user", "agent")
_POINTS = (WRAP_TOOL, ON_TOOL_ERROR, AFTER_TOOL)


def _ctx(n: int = 1) -> ToolContext:
    return ToolContext(_RUN, ToolCall("c1", "t", {"n": n}), max_attempts=3)


class _Boom(RuntimeError):
    pass


async def _failing(ctx: ToolContext) -> Outcome[ToolResult]:
    return Failure(_Boom(f"n={ctx.call.args['n']}"))


def test_async_a_changed_retry_the_before_hooks_answer_is_the_result() -> None:
    """A Retry that changed the call goes through ``again``; an answer there (not a
    context) ends the attempts as a success, after hooks included."""
    given: list[object] = []

    class Retrying:
        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            return Retry(replace(ctx, call=replace(ctx.call, args={"n": 2})))

    async def again(changed: ToolContext) -> ToolContext | ToolResult:
        given.append((changed.call.args, changed.attempt))
        return ToolResult("answered before the tool")

    compiled = compile_callbacks([Retrying()])
    outcome = asyncio.run(
        arun_attempts(compiled, _POINTS, _ctx(), _failing, events=None, again=again)
    )
    assert outcome == Success(ToolResult("answered before the tool"))
    assert given == [({"n": 2}, 2)]


def test_async_a_changed_retry_let_through_runs_again_until_the_budget() -> None:
    """A changed Retry the before hooks let through is attempted; past the budget the
    last failure stands, and observers are told each dispatch (a sync one awaited in
    place)."""
    attempts: list[tuple[object, int]] = []
    told: list[tuple[str, str, int]] = []

    class Retrying:
        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            n = ctx.call.args["n"]
            assert isinstance(n, int)
            return Retry(replace(ctx, call=replace(ctx.call, args={"n": n + 1})))

        def on_event(self, event: HookEvent, /) -> None:
            told.append((event.point, event.outcome, event.attempt))

    async def operation(ctx: ToolContext) -> Outcome[ToolResult]:
        attempts.append((ctx.call.args["n"], ctx.attempt))
        return await _failing(ctx)

    async def again(changed: ToolContext) -> ToolContext | ToolResult:
        return changed

    compiled = compile_callbacks([Retrying()])
    events = Events(compiled, _RUN)
    outcome = asyncio.run(
        arun_attempts(compiled, _POINTS, _ctx(), operation, events=events, again=again)
    )
    assert attempts == [(1, 1), (2, 2), (3, 3)]
    assert isinstance(outcome, Failure)
    with pytest.raises(_Boom, match="n=3"):
        raise outcome.failure()
    assert ("on_tool_error", "retry", 1) in told
    assert ("on_tool_error", "retry", 3) in told
    assert told[-1][0] == "after_tool"


def test_async_an_unchanged_retry_is_attempted_without_the_before_hooks() -> None:
    """A Retry of the same call is attempted again without passing ``again``."""
    attempts: list[int] = []

    class Retrying:
        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            return Retry(ctx)

    async def operation(ctx: ToolContext) -> Outcome[ToolResult]:
        attempts.append(ctx.attempt)
        return await _failing(ctx)

    async def again(changed: ToolContext) -> ToolContext | ToolResult:
        raise AssertionError("the call did not change")

    compiled = compile_callbacks([Retrying()])
    outcome = asyncio.run(
        arun_attempts(compiled, _POINTS, _ctx(), operation, events=None, again=again)
    )
    assert attempts == [1, 2, 3]
    assert isinstance(outcome, Failure)


@pytest.mark.parametrize("fall_back", [True, False])
def test_async_a_fallback_is_the_result_and_a_failure_stands(fall_back: bool) -> None:
    """An error hook's Fallback is a success of its value; its Failure is the outcome."""
    replaced = Failure(_Boom("the hook's own"))

    class Stand:
        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            return Fallback(ToolResult("stood in")) if fall_back else replaced

    async def again(changed: ToolContext) -> ToolContext | ToolResult:
        return changed

    compiled = compile_callbacks([Stand()])
    outcome = asyncio.run(
        arun_attempts(compiled, _POINTS, _ctx(), _failing, events=None, again=again)
    )
    if fall_back:
        assert outcome == Success(ToolResult("stood in"))
    else:
        assert isinstance(outcome, Failure)
        with pytest.raises(_Boom, match="the hook's own"):
            raise outcome.failure()


def _events(told: list[HookEvent]) -> Events:
    class Listen:
        def on_event(self, event: HookEvent, /) -> None:
            told.append(event)

    return Events(compile_callbacks([Listen()]), _RUN)


def test_a_result_of_no_known_kind_is_told_as_a_success() -> None:
    """A dispatch whose result is no hook result (a context, say) is told as a success."""
    told: list[HookEvent] = []
    ctx = _ctx()
    assert dispatch(_events(told), "before_tool", ctx, lambda trace: ctx) is ctx
    (event,) = told
    assert (event.point, event.outcome, event.error, event.tool) == (
        "before_tool",
        "success",
        None,
        "t",
    )


def test_async_a_raising_dispatch_is_told_and_raised() -> None:
    """An async dispatch that raises is told as ``raised`` with its error, then raises."""
    told: list[HookEvent] = []

    async def go(trace: object) -> object:
        raise _Boom("down")

    with pytest.raises(_Boom, match="down"):
        asyncio.run(adispatch(_events(told), "wrap_tool", _ctx(), go))
    (event,) = told
    assert event.outcome == "raised"
    assert isinstance(event.error, _Boom)


def test_without_opentelemetry_nothing_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where OpenTelemetry was never imported no span records, and a dispatch writes no
    span event (nothing is imported to find out)."""
    monkeypatch.delitem(sys.modules, "opentelemetry.trace", raising=False)
    assert _operation.recording() is False
    told: list[HookEvent] = []
    assert dispatch(_events(told), "before_tool", _ctx(), lambda trace: Cont(_ctx())) == Cont(
        _ctx()
    )
    assert "opentelemetry.trace" not in sys.modules
    assert [e.outcome for e in told] == ["cont"]


def test_span_events_carry_the_error_and_leave_out_what_is_absent() -> None:
    """Inside a recording span: an event with an error names its type and message; one
    with no callback and no tool leaves those attributes out."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("agent"):
        assert _operation.recording() is True
        _operation.span_event(
            HookEvent("on_model_error", "agent", "", "failure", 0.0, error=_Boom("model down"))
        )
    (span,) = exporter.get_finished_spans()
    (attributes,) = [dict(e.attributes or {}) for e in span.events]
    assert attributes == {
        "hookline.hook.point": "on_model_error",
        "hookline.hook.tag": "failure",
        "hookline.attempt": 1,
        "exception.type": "_Boom",
        "exception.message": "model down",
    }
