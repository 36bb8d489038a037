"""One guarded operation, as a ``Runner`` runs it: dispatches, attempts, observers.

``run_attempts`` / ``arun_attempts`` run the wraps, the error hooks and the after hooks of one
model or tool call; ``dispatch`` / ``adispatch`` tell the observers of each dispatch,
the deciding callback named (``hooks.Trace``).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any, Final, TypeVar, cast, final

from returns.result import Failure, Success

from hooks import (
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    AgentContext,
    BeforeResult,
    CompiledCallbacks,
    ErrorResult,
    Fallback,
    HookEvent,
    Invocation,
    ModelContext,
    ModelResponse,
    Outcome,
    PausableResult,
    Retry,
    ToolContext,
    ToolResult,
    Trace,
    arun_after,
    arun_before,
    arun_on_error,
    arun_wrap,
    run_after,
    run_before,
    run_on_error,
    run_wrap,
)

_log = logging.getLogger("hookline.adapters.langchain")

R = TypeVar("R")


@final
class Events:
    """Tells a list's observers of each dispatch, naming the deciding callback."""

    __slots__ = ("asyncs", "observers", "run")

    def __init__(self, compiled: CompiledCallbacks, run: Invocation) -> None:
        chain = compiled.chain("on_event", "event")
        self.observers: Final = chain.fns
        self.asyncs: Final = chain.asyncs
        self.run: Final = run

    def tell(self, event: HookEvent) -> None:
        span_event(event)
        for observer, is_async in zip(self.observers, self.asyncs, strict=True):
            try:
                told = observer(event)
                if is_async:  # an async observer in a sync place: run to its end here
                    _finish(told)
            except Exception:
                _log.exception("observer %r raised on %s; the run goes on", observer, event)

    async def atell(self, event: HookEvent) -> None:
        span_event(event)
        for observer, is_async in zip(self.observers, self.asyncs, strict=True):
            try:
                told = observer(event)
                if is_async:
                    await told
            except Exception:
                _log.exception("observer %r raised on %s; the run goes on", observer, event)


def _span() -> Any:
    """The current OpenTelemetry span if one is recording, else ``None``. Telemetry is
    optional (``hookline[otel]``): where nothing imported OpenTelemetry, no span can be
    current, and this imports nothing."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    span: Any = trace.get_current_span()
    return span if span.is_recording() else None


def recording() -> bool:
    """Whether an OpenTelemetry span is recording here."""
    return _span() is not None


def span_event(event: HookEvent) -> None:
    """A ``hookline.hook`` event on the current span, as a ``Runner``'s telemetry writes it:
    the point, the outcome's tag, the deciding callback, the attempt, the error."""
    span = _span()
    if span is None:
        return
    attributes: dict[str, str | int] = {
        "hookline.hook.point": event.point,
        "hookline.hook.tag": event.outcome,
        "hookline.attempt": event.attempt,
    }
    if event.callback is not None:
        attributes["hookline.hook.callback"] = event.callback
    if event.tool is not None:
        attributes["gen_ai.tool.name"] = event.tool
    if event.error is not None:
        attributes["exception.type"] = type(event.error).__qualname__
        attributes["exception.message"] = str(event.error)
    span.add_event("hookline.hook", attributes)


def _finish(awaitable: Any) -> None:
    """Drive an async observer's coroutine to its end without an event loop (it must not
    wait on one: an observer only records)."""
    try:
        awaitable.send(None)
    except StopIteration:
        return
    awaitable.close()
    msg = "an async observer awaited something in a sync run; use ainvoke"
    raise RuntimeError(msg)


def dispatch(
    events: Events | None,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    go: Callable[[Trace | None], R],
) -> R:
    """Run one dispatch; with observers, trace it and tell them."""
    if events is None:
        return go(None)
    trace = Trace()
    started, clock = time.time(), time.perf_counter()
    try:
        result = go(trace)
    except Exception as error:
        events.tell(
            _told(events.run, point, ctx, (started, clock), trace=trace, result=None, raised=error)
        )
        raise
    events.tell(
        _told(events.run, point, ctx, (started, clock), trace=trace, result=result, raised=None)
    )
    return result


async def adispatch(
    events: Events | None,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    go: Callable[[Trace | None], Awaitable[R]],
) -> R:
    """``dispatch`` for async dispatches and observers."""
    if events is None:
        return await go(None)
    trace = Trace()
    started, clock = time.time(), time.perf_counter()
    try:
        result = await go(trace)
    except Exception as error:
        await events.atell(
            _told(events.run, point, ctx, (started, clock), trace=trace, result=None, raised=error)
        )
        raise
    await events.atell(
        _told(events.run, point, ctx, (started, clock), trace=trace, result=result, raised=None)
    )
    return result


def _told(
    run: Invocation,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    when: tuple[float, float],
    *,
    trace: Trace,
    result: object,
    raised: BaseException | None,
) -> HookEvent:
    """The event of one dispatch: its result's tag, or ``"raised"``."""
    tag = "raised" if raised is not None else type(result).__name__.lower()
    if tag not in {"cont", "halt", "pause", "success", "failure", "retry", "fallback", "raised"}:
        tag = "success"
    error = raised if raised is not None else _failure_of(result)
    started, clock = when
    return _event(
        run,
        point,
        ctx,
        tag,
        clock=clock,
        started=started,
        trace=trace,
        error=error,
        result=result,
    )


def _failure_of(result: object) -> BaseException | None:
    """The error a ``Failure`` carries; ``None`` for any other result."""
    if isinstance(result, Failure):
        error: BaseException = cast("Failure[Exception]", result).failure()
        return error
    return None


def _event(
    run: Invocation,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    tag: Any,
    *,
    clock: float,
    started: float,
    trace: Trace,
    error: BaseException | None,
    result: object,
) -> HookEvent:
    call = ctx.call if isinstance(ctx, ToolContext) else None
    decider = trace.callback
    return HookEvent(
        point,
        run.agent,
        run.branch,
        tag,
        time.perf_counter() - clock,
        tool=None if call is None else call.name,
        call_id=None if call is None else call.id,
        error=error,
        attempt=1 if isinstance(ctx, AgentContext) else ctx.attempt,
        time=started,
        callback=None if decider is None else _describe(decider),
        run_id=run.id,
        context=ctx,
        given=ctx,
        result=result,
    )


def _describe(callback: object) -> str:
    from hooks._errors import describe  # the names observers see in a Runner's events

    return describe(callback)


C = TypeVar("C", ToolContext, ModelContext)
T = TypeVar("T", ToolResult, ModelResponse)


def run_attempts(
    compiled: CompiledCallbacks,
    points: tuple[Any, Any, Any],
    ctx: C,
    operation: Callable[[C], Outcome[T]],
    *,
    events: Events | None,
    again: Callable[[C], C | T],
) -> Outcome[T]:
    """Attempts through the wraps until one succeeds or the error hooks give up, then the
    after hooks; a ``Retry`` that changed the call passes ``again`` (the before hooks)."""
    wrap, on_error, after = points
    while True:
        outcome: Outcome[T] = dispatch(
            events, wrap.name, ctx, partial(_wrap, compiled, wrap, ctx, operation)
        )
        if isinstance(outcome, Failure):
            recovered: ErrorResult[C, T] = dispatch(
                events, on_error.name, ctx, partial(_on_error, compiled, on_error, outcome, ctx)
            )
            match recovered:
                case Retry(changed) if ctx.attempt < ctx.max_attempts:
                    changed = replace(changed, attempt=ctx.attempt + 1)
                    if _subject(changed) != _subject(ctx):
                        passed = again(changed)
                        if not isinstance(passed, ToolContext | ModelContext):
                            outcome = Success(passed)
                            break
                        changed = passed
                    ctx = changed
                    continue
                case Fallback(value):
                    outcome = Success(value)
                case Failure():
                    outcome = recovered
                case _:  # a Retry past the budget: the failure stands
                    pass
        break
    ended: Outcome[T] = dispatch(
        events, after.name, ctx, partial(dispatch_after, compiled, after, outcome, ctx)
    )
    return ended


async def arun_attempts(
    compiled: CompiledCallbacks,
    points: tuple[Any, Any, Any],
    ctx: C,
    operation: Callable[[C], Awaitable[Outcome[T]]],
    *,
    events: Events | None,
    again: Callable[[C], Awaitable[C | T]],
) -> Outcome[T]:
    """``attempts`` for async runs: the same order, every dispatch awaited."""
    wrap, on_error, after = points
    while True:
        outcome: Outcome[T] = await adispatch(
            events, wrap.name, ctx, partial(_awrap, compiled, wrap, ctx, operation)
        )
        if isinstance(outcome, Failure):
            go = partial(_aon_error, compiled, on_error, outcome, ctx)
            recovered: ErrorResult[C, T] = await adispatch(events, on_error.name, ctx, go)
            match recovered:
                case Retry(changed) if ctx.attempt < ctx.max_attempts:
                    changed = replace(changed, attempt=ctx.attempt + 1)
                    if _subject(changed) != _subject(ctx):
                        passed = await again(changed)
                        if not isinstance(passed, ToolContext | ModelContext):
                            outcome = Success(passed)
                            break
                        changed = passed
                    ctx = changed
                    continue
                case Fallback(value):
                    outcome = Success(value)
                case Failure():
                    outcome = recovered
                case _:  # a Retry past the budget: the failure stands
                    pass
        break
    go_after = partial(_aafter, compiled, after, outcome, ctx)
    ended: Outcome[T] = await adispatch(events, after.name, ctx, go_after)
    return ended


# Each dispatch as a function of the trace (``None``: no observer asked for one).


def dispatch_before_tool(
    compiled: CompiledCallbacks, ctx: ToolContext, trace: Trace | None
) -> PausableResult[ToolContext, ToolResult]:
    return run_before(compiled, BEFORE_TOOL, ctx, trace=trace)


def dispatch_before_agent(
    compiled: CompiledCallbacks, ctx: AgentContext, trace: Trace | None
) -> BeforeResult[AgentContext, ModelResponse]:
    return run_before(compiled, BEFORE_AGENT, ctx, trace=trace)


def dispatch_before_model(
    compiled: CompiledCallbacks, ctx: ModelContext, trace: Trace | None
) -> BeforeResult[ModelContext, ModelResponse]:
    return run_before(compiled, BEFORE_MODEL, ctx, trace=trace)


def _wrap(
    compiled: CompiledCallbacks,
    point: Any,
    ctx: Any,
    operation: Callable[[Any], Outcome[Any]],
    trace: Trace | None,
) -> Any:
    return run_wrap(compiled, point, ctx, operation, trace=trace)


def _on_error(
    compiled: CompiledCallbacks, point: Any, failure: Any, ctx: Any, trace: Trace | None
) -> Any:
    return run_on_error(compiled, point, failure, ctx, trace=trace)


def dispatch_after(
    compiled: CompiledCallbacks, point: Any, outcome: Any, ctx: Any, trace: Trace | None
) -> Any:
    return run_after(compiled, point, outcome, ctx, trace=trace)


async def adispatch_before_tool(
    compiled: CompiledCallbacks, ctx: ToolContext, trace: Trace | None
) -> PausableResult[ToolContext, ToolResult]:
    return await arun_before(compiled, BEFORE_TOOL, ctx, trace=trace)


async def adispatch_before_model(
    compiled: CompiledCallbacks, ctx: ModelContext, trace: Trace | None
) -> BeforeResult[ModelContext, ModelResponse]:
    return await arun_before(compiled, BEFORE_MODEL, ctx, trace=trace)


async def _awrap(
    compiled: CompiledCallbacks,
    point: Any,
    ctx: Any,
    operation: Callable[[Any], Awaitable[Outcome[Any]]],
    trace: Trace | None,
) -> Any:
    return await arun_wrap(compiled, point, ctx, operation, trace=trace)


async def _aon_error(
    compiled: CompiledCallbacks, point: Any, failure: Any, ctx: Any, trace: Trace | None
) -> Any:
    return await arun_on_error(compiled, point, failure, ctx, trace=trace)


async def _aafter(
    compiled: CompiledCallbacks, point: Any, outcome: Any, ctx: Any, trace: Trace | None
) -> Any:
    return await arun_after(compiled, point, outcome, ctx, trace=trace)


def _subject(ctx: ToolContext | ModelContext) -> object:
    return ctx.call if isinstance(ctx, ToolContext) else ctx.request
