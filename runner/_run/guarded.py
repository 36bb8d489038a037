"""The guarded operation, written once for model calls and tool calls.

``before_X`` -> attempt { wraps -> execute } (-> ``on_X_error`` -> ``Retry`` -> next attempt,
first through ``before_X`` again when the retry changed what will run) -> ``after_X``.

- A ``Halt`` from ``before_X`` (on the first pass or a changed retry) ends the
  operation with its value; ``after_X`` is skipped.
- A plain ``Retry(ctx)`` re-runs the input the before hooks already passed; a retry
  whose call or request differs by value passes them again, so no guard is bypassed
  and a hook that adds to a request never adds twice.
- Every attempt is recorded with what really ran, every failure, retry (with its
  delay) and fallback too, so a run explains itself without an observer.
- The retry budget (``RetryPolicy.max_attempts``) is counted here; a spent budget
  passes the last error on with a note, never loops.
- A ``Pause`` from ``before_tool`` raises ``Paused`` with the call, for the tool call
  to turn into a pending request; a human's ``Reject`` that the guards let through stands in
  for the call as a halt does.
- In a streamed run that holds the model's text (``runner._streaming.hold``), an
  attempt's deltas go out once ``after_model`` passed its answer unchanged; any other
  answer of the model call (a halt, a fallback, a replacement) goes out instead, as one
  ``TextDelta``, after the announcement to discard what a partial check let out.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Generic, Literal, TypeVar, assert_never

from hooks import (
    AFTER_MODEL,
    AFTER_TOOL,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    WRAP_MODEL,
    WRAP_TOOL,
    AfterPoint,
    BeforePoint,
    Cont,
    ErrorPoint,
    Failure,
    Fallback,
    Halt,
    ModelContext,
    ModelResponse,
    Outcome,
    PausablePoint,
    Pause,
    Reject,
    Retry,
    Success,
    ToolContext,
    ToolResult,
    Usage,
    WrapPoint,
)
from hooks._slots import slot_init
from runner._agent import Agent
from runner._events import (
    AttemptDiscardedEvent,
    ErrorEvent,
    Event,
    FallbackEvent,
    ModelAttemptEvent,
    RetryEvent,
    TextDelta,
    ToolAttemptEvent,
)
from runner._pause.pending import Paused
from runner._run.plan import Plan
from runner._run.record import Record
from runner._run.settings import Settings
from runner._run.streamed import Streamed, release
from runner._run.tracer import Tracer
from runner._streaming.channel import Channel
from runner._streaming.hold import hold_for

__all__ = ["MODEL", "TOOL", "Guard", "guarded"]

C = TypeVar("C", ModelContext, ToolContext)
T = TypeVar("T", ModelResponse, ToolResult)


@slot_init
@dataclass(frozen=True, slots=True)
class Guard(Generic[C, T]):
    """A kind of guarded operation: its hook points, what runs, how an attempt is recorded."""

    name: Literal["model", "tool"]
    before: BeforePoint[C, T] | PausablePoint[C, T]
    after: AfterPoint[C, T]
    on_error: ErrorPoint[C, T]
    wrap: WrapPoint[C, T]
    subject: Callable[[C], object]  # what runs, compared by value to tell a changed retry
    attempted: Callable[[Plan, C], Event]
    # What stands in for an operation a human refused (None: nobody refuses this kind).
    refused: Callable[[C], T | None] | None


def _rejected(ctx: ToolContext) -> ToolResult | None:
    decision = ctx.decision
    return ToolResult(decision.message, is_error=True) if type(decision) is Reject else None


MODEL: Guard[ModelContext, ModelResponse] = Guard(
    "model",
    BEFORE_MODEL,
    AFTER_MODEL,
    ON_MODEL_ERROR,
    WRAP_MODEL,
    lambda ctx: ctx.request,
    lambda plan, ctx: ModelAttemptEvent(
        plan.name, plan.branch, plan.clock(), request=ctx.request, attempt=ctx.attempt
    ),
    None,
)
TOOL: Guard[ToolContext, ToolResult] = Guard(
    "tool",
    BEFORE_TOOL,
    AFTER_TOOL,
    ON_TOOL_ERROR,
    WRAP_TOOL,
    lambda ctx: ctx.call,
    lambda plan, ctx: ToolAttemptEvent(
        plan.name, plan.branch, plan.clock(), call=ctx.call, attempt=ctx.attempt
    ),
    _rejected,
)


async def guarded(
    settings: Settings,
    plan: Plan,
    op: Guard[C, T],
    ctx: C,
    *,
    execute: Callable[[C, Streamed | None], Coroutine[Any, Any, Outcome[T]]],
    record: Record,
    call_id: str | None = None,
) -> tuple[Outcome[T], C]:
    """Run one operation under its hooks; its final outcome and the context that ran last.

    ``ctx`` comes at attempt 1 of the run's budget. Exceptions raised by callbacks (and
    by a sub-agent's unrecovered run) propagate as they are; only what ``execute``
    returns as a ``Failure`` reaches the error hooks. In a streamed run each model
    attempt streams into a ``Streamed`` of its own, made here and handed to ``execute``
    (``None`` otherwise); its deltas name ``call_id``, the parent's call the agent's
    turn answers.
    """
    channel = settings.channel if op.name == "model" else None
    hold = None if channel is None else hold_for(channel.hold, plan.compiled)
    decision = await plan.before(op.before, ctx, record)
    match decision:
        case Halt(value):
            _show(channel, hold, plan, call_id, Success(value))
            return Success(value), ctx
        case Pause(reason):
            raise Paused(reason, call=ctx.call)  # type: ignore[attr-defined]  # only before_tool
        case Cont(passed):
            budget = settings.retry.max_attempts
            if passed.attempt != 1 or passed.max_attempts != budget:  # a hook changed them
                passed = replace(passed, attempt=1, max_attempts=budget)
            ctx = passed
        case _:
            assert_never(decision)
    if op.refused is not None:
        refused = op.refused(ctx)
        if refused is not None:
            return Success(refused), ctx

    streams = channel is not None
    # The streamed attempts of this operation whose text still stands (one at most):
    # this operation's own, never another call's of the same agent.
    standing: list[Streamed] = []
    # Traced, a model attempt is a span of its own; a tool's attempts share the call's span.
    tracer = None if op.name == "tool" else settings.tracer

    def attempt(ctx: C) -> Coroutine[Any, Any, Outcome[T]]:
        # Recorded inside the wraps: a wrap calling call_next twice shows two attempts
        # (the first one's streamed text discarded), a cache's answer none; and so
        # traced: a model attempt is a span of its own.
        if standing:
            _discard(plan, record, standing, "replaced")
        record.add(op.attempted(plan, ctx))
        streamed = None
        if streams:
            streamed = Streamed(plan.agent.name, plan.branch, call_id, ctx.attempt, hold)
            standing.append(streamed)
        if tracer is None:
            return execute(ctx, streamed)
        return _spanned(tracer, plan.agent, ctx, execute(ctx, streamed), streams)

    # One attempt, inside the point's wraps; without wraps, no wrap dispatch at all.
    one: Callable[[C], Coroutine[Any, Any, Outcome[T]]] = (
        partial(plan.wrap, op.wrap, operation=attempt) if op.wrap.name in plan.wrapped else attempt
    )
    outcome: Outcome[T] = await one(ctx)
    if type(outcome) is not Success:
        ended, ctx = await _recovered(
            settings, plan, op, ctx, outcome, attempt=one, record=record, standing=standing
        )
        if isinstance(ended, Halt):  # a changed retry met a guard that halted it
            _show(channel, hold, plan, call_id, Success(ended.value))
            return Success(ended.value), ctx
        outcome = ended
    after = await plan.after(op.after, outcome, ctx, record)
    if type(after) is Failure and after is not outcome:
        error = after.failure()
        record.add(
            ErrorEvent(
                plan.name,
                plan.branch,
                plan.clock(),
                error=error,
                operation=op.name,
                attempt=ctx.attempt,
            )
        )
    if channel is not None:
        _settle(
            channel,
            plan,
            record,
            standing,
            outcome=outcome,
            after=after,
            hold=hold,
            call_id=call_id,
        )
    return after, ctx


def _settle(
    channel: Channel,
    plan: Plan,
    record: Record,
    standing: list[Streamed],
    *,
    outcome: Outcome[T],
    after: Outcome[T],
    hold: int | None,
    call_id: str | None,
) -> None:
    """A streamed model call has its answer: the attempt's held deltas go out when the
    answer is the text it streamed, which ``after_model`` left as it was; else the
    stream is told to discard what it showed, and, holding, is shown the answer."""
    text = _text(after)
    if standing:
        last = standing[-1]
        if text == "".join(last.text) and (
            after is outcome or (type(after) is Success and after == outcome)
        ):
            release(channel, last)
            return
        if text != "".join(last.text) or hold is not None:
            _discard(plan, record, standing, "replaced")  # the answer is not what was streamed
    _show(channel, hold, plan, call_id, after)


def _show(
    channel: Channel | None, hold: int | None, plan: Plan, call_id: str | None, answer: Outcome[T]
) -> None:
    """Show a held stream (``hold`` not ``None``) the text of a model call's answer that
    no attempt of it let out."""
    text = _text(answer) if hold is not None else None
    if channel is not None and text:
        channel.push(TextDelta(text, plan.agent.name, plan.branch, call_id))


async def _spanned(
    tracer: Tracer,
    agent: Agent,
    ctx: C,
    running: Coroutine[Any, Any, Outcome[T]],
    streamed: bool,
) -> Outcome[T]:
    """A model attempt inside its span."""
    return await tracer.attempt(agent, ctx, running, streamed=streamed)


def _text(outcome: Outcome[T]) -> str | None:
    """The text of a model's successful outcome (``None`` for anything else)."""
    value = outcome.unwrap() if type(outcome) is Success else None
    text: object = getattr(value, "text", None)
    return text if isinstance(text, str) else None


def _discard(
    plan: Plan, record: Record, standing: list[Streamed], reason: Literal["failed", "replaced"]
) -> None:
    """Tell a stream that the text it showed for the ``standing`` attempts is not the answer.

    Only an attempt whose deltas went out is told; each is told once.
    """
    for streamed in standing:
        if streamed.shown:
            record.add(
                AttemptDiscardedEvent(
                    streamed.agent,
                    streamed.branch,
                    plan.clock(),
                    attempt=streamed.attempt,
                    reason=reason,
                    call_id=streamed.call_id,
                )
            )
    standing.clear()


async def _recovered(
    settings: Settings,
    plan: Plan,
    op: Guard[C, T],
    ctx: C,
    outcome: Outcome[T],
    *,
    attempt: Callable[[C], Coroutine[Any, Any, Outcome[T]]],
    record: Record,
    standing: list[Streamed],
) -> tuple[Outcome[T] | Halt[T], C]:
    """After a failed attempt: the error hooks, and attempts until one succeeds or they stop
    retrying; the final outcome (or a changed retry's ``Halt``) and the last context.

    A failed attempt's streamed text is discarded before the error hooks decide.
    """
    while True:
        error = outcome.failure()
        record.add(
            ErrorEvent(
                plan.name,
                plan.branch,
                plan.clock(),
                error=error,
                operation=op.name,
                attempt=ctx.attempt,
            )
        )
        if standing:
            _discard(plan, record, standing, "failed")
        recovery = await plan.on_error(op.on_error, Failure(error), ctx, record)
        match recovery:
            case Retry() as retry:
                following = await _retry(settings, plan, op, ctx, retry, error=error, record=record)
                if following is None:
                    return outcome, ctx
                halt, ctx = following
                if halt is not None:
                    return halt, ctx
            case Fallback(value):
                record.add(
                    FallbackEvent(
                        plan.name, plan.branch, plan.clock(), operation=op.name, attempt=ctx.attempt
                    )
                )
                usage: object = getattr(value, "usage", None)  # a model's answer has one
                if isinstance(usage, Usage):
                    settings.meter.add(usage)  # a backup model's answer was paid for
                return Success(value), ctx
            case Failure() as failure:
                return failure, ctx
            case _:
                assert_never(recovery)
        outcome = await attempt(ctx)
        if type(outcome) is Success:
            return outcome, ctx


async def _retry(
    settings: Settings,
    plan: Plan,
    op: Guard[C, T],
    ctx: C,
    retry: Retry[C],
    *,
    error: Exception,
    record: Record,
) -> tuple[Halt[T] | None, C] | None:
    """The next attempt's context (with a guard's ``Halt`` if it refused it), after the wait.

    ``None`` when the retry budget is spent: the error goes on, with a note saying so.
    """
    attempt, budget = ctx.attempt, settings.retry.max_attempts
    if attempt >= budget:
        error.add_note(
            f"gave up after {attempt} attempt(s): the retry budget "
            f"(RetryPolicy.max_attempts={budget}) is spent"
        )
        return None
    retries = settings.retry
    drawn = (
        retries.delay(attempt, settings.rng)
        if retry.delay is None
        else min(retry.delay, retries.max_delay)
    )
    delay = await settings.engine.delay(drawn)
    changed = op.subject(retry.ctx) != op.subject(ctx)
    record.add(
        RetryEvent(
            plan.name,
            plan.branch,
            plan.clock(),
            operation=op.name,
            attempt=attempt + 1,
            delay=delay,
            changed=changed,
        )
    )
    await settings.engine.sleep(delay, settings.is_async)
    following = replace(retry.ctx, attempt=attempt + 1, max_attempts=budget)
    if not changed:
        return None, following
    # What runs changed: the guards see it before it runs.
    decision = await plan.before(op.before, following, record)
    match decision:
        case Halt() as halt:
            return halt, following
        case Pause(reason):
            raise Paused(reason, call=following.call)  # type: ignore[attr-defined]  # before_tool
        case Cont(passed):
            return None, replace(passed, attempt=attempt + 1, max_attempts=budget)
        case _:
            assert_never(decision)
