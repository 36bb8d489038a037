"""One agent at one branch of a run: its compiled callbacks, its invocation, its dispatch.

``Plan.before`` / ``after`` / ``on_error`` / ``wrap`` are the loop's only calls into hook
dispatch (the stream hook ``on_delta`` is a before point): ``run_*`` for a chain with
no async method, ``arun_*`` for one with, the run's ``DispatchPolicy`` on every call.
With observers, each dispatch is timed and traced and told to them as a ``HookEvent``
naming the callback that decided; in a traced run whose span records, each is told to
the run's ``Tracer`` too, which makes a decision an event on the span the dispatch
guards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from time import perf_counter
from typing import Any, Final, TypeVar, final, overload

from hooks import (
    AfterPoint,
    BeforePoint,
    BeforeResult,
    CompiledCallbacks,
    Cont,
    ErrorPoint,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    HookEvent,
    Invocation,
    Outcome,
    OutcomeTag,
    PausablePoint,
    PausableResult,
    Pause,
    Retry,
    StopRun,
    Success,
    ToolCall,
    ToolContext,
    Trace,
    WrapPoint,
    arun_after,
    arun_before,
    arun_on_error,
    arun_wrap,
    run_after,
    run_before,
    run_on_error,
    run_wrap,
)
from hooks._errors import describe
from runner._agent import Agent
from runner._events import ShadowEvent
from runner._run.callbacks import AgentSetup
from runner._run.drive import Carried, Carrier
from runner._run.record import Record
from runner._run.settings import Settings
from runner._run.toolbox import Toolbox
from runner._run.tracer import RECORDING

__all__ = ["Plan"]

_recording: Final = RECORDING.get  # whether the turn under way in this context records

logger: Final = logging.getLogger("runner")

_UNOBSERVED: Final = (0.0, 0.0)  # a wrap's start when nobody observes it: never read

C = TypeVar("C")
T = TypeVar("T")

_TAGS: Final[dict[type, OutcomeTag]] = {
    Cont: "cont",
    Halt: "halt",
    Pause: "pause",
    Success: "success",
    Failure: "failure",
    Retry: "retry",
    Fallback: "fallback",
}


@final
class Plan:
    """One agent at one branch of a run: its callbacks, compiled, and its invocation."""

    __slots__ = (
        "agent",
        "awaiting",
        "branch",
        "by_tool",
        "clock",
        "compiled",
        "hooks_deltas",
        "invocation",
        "is_async",
        "name",
        "observers",
        "policy",
        "shadowed",
        "system",
        "toolbox",
        "tracer",
        "wrapped",
    )

    def __init__(
        self,
        agent: Agent,
        invocation: Invocation,
        setup: AgentSetup,
        settings: Settings,
        toolbox: Toolbox | None = None,
    ) -> None:
        self.agent: Final = agent
        # An agent with MCP servers: its tools now, listed ones too (its invocation's tools).
        self.toolbox: Final = toolbox
        # Where and when, the first fields of every event record: name, branch, clock().
        self.name: Final = agent.name
        self.branch: Final = invocation.branch
        self.invocation: Final = invocation
        self.compiled: Final = setup.compiled
        self.by_tool: Final = setup.by_tool  # tool points dispatch the called tool's view
        self.shadowed: Final = setup.shadowed  # shadows are asked beside the live chains
        self.awaiting: Final = setup.awaiting
        self.wrapped: Final = setup.wrapped
        self.hooks_deltas: Final = setup.hooks_deltas
        self.observers: Final = setup.observers
        self.policy: Final = settings.policy
        self.is_async: Final = settings.is_async
        self.clock: Final = settings.engine.now  # records are stamped by the run's engine
        self.tracer: Final = settings.tracer
        self.system: Final = setup.system

    @overload
    async def before(
        self, point: PausablePoint[C, T], ctx: C, record: Record | None = ...
    ) -> PausableResult[C, T]: ...
    @overload
    async def before(
        self, point: BeforePoint[C, T], ctx: C, record: Record | None = ...
    ) -> BeforeResult[C, T]: ...
    async def before(
        self,
        point: BeforePoint[C, T] | PausablePoint[C, T],
        ctx: C,
        record: Record | None = None,
    ) -> PausableResult[C, T]:
        """Dispatch a before point; observers are told how it ended, and ``record`` what
        a shadow would have decided otherwise."""
        awaits = point.name in self.awaiting
        compiled = _view(self.compiled, ctx) if self.by_tool else self.compiled
        if not self.observers and (self.tracer is None or not _recording()):
            if awaits:
                result = await arun_before(compiled, point, ctx, policy=self.policy)
            else:
                result = run_before(compiled, point, ctx, policy=self.policy)
            if self.shadowed:
                await self._shadow(point, compiled, ctx, ctx, live=result, record=record)
            return result
        trace, start = Trace(), self._began()
        try:
            if awaits:
                result = await arun_before(compiled, point, ctx, policy=self.policy, trace=trace)
            else:
                result = run_before(compiled, point, ctx, policy=self.policy, trace=trace)
        except Exception as exc:
            await self._observe(
                point.name, start, trace, ctx, outcome="raised", error=exc, given=ctx
            )
            raise
        tag = _TAGS[type(result)]
        await self._observe(
            point.name, start, trace, ctx, outcome=tag, error=None, given=ctx, result=result
        )
        if self.shadowed:
            await self._shadow(point, compiled, ctx, ctx, live=result, record=record)
        return result

    async def after(
        self,
        point: AfterPoint[C, T],
        outcome: Outcome[T],
        ctx: C,
        record: Record | None = None,
    ) -> Outcome[T]:
        """Dispatch an after point; observers are told how it ended, and ``record`` what
        a shadow would have decided otherwise."""
        awaits = point.name in self.awaiting
        compiled = _view(self.compiled, ctx) if self.by_tool else self.compiled
        if not self.observers and (self.tracer is None or not _recording()):
            if awaits:
                result = await arun_after(compiled, point, outcome, ctx, policy=self.policy)
            else:
                result = run_after(compiled, point, outcome, ctx, policy=self.policy)
            if self.shadowed:
                await self._shadow(point, compiled, outcome, ctx, live=result, record=record)
            return result
        trace, start = Trace(), self._began()
        try:
            if awaits:
                result = await arun_after(
                    compiled, point, outcome, ctx, policy=self.policy, trace=trace
                )
            else:
                result = run_after(compiled, point, outcome, ctx, policy=self.policy, trace=trace)
        except Exception as exc:
            await self._observe(
                point.name, start, trace, ctx, outcome="raised", error=exc, given=outcome
            )
            raise
        error = result.failure() if type(result) is Failure else None
        tag = _TAGS[type(result)]
        await self._observe(
            point.name, start, trace, ctx, outcome=tag, error=error, given=outcome, result=result
        )
        if self.shadowed:
            await self._shadow(point, compiled, outcome, ctx, live=result, record=record)
        return result

    async def on_error(
        self,
        point: ErrorPoint[C, T],
        failure: Failure[Exception],
        ctx: C,
        record: Record | None = None,
    ) -> ErrorResult[C, T]:
        """Dispatch an error point; observers are told how it ended and what failed, and
        ``record`` what a shadow would have decided otherwise."""
        awaits = point.name in self.awaiting
        compiled = _view(self.compiled, ctx) if self.by_tool else self.compiled
        if not self.observers and (self.tracer is None or not _recording()):
            if awaits:
                result = await arun_on_error(compiled, point, failure, ctx, policy=self.policy)
            else:
                result = run_on_error(compiled, point, failure, ctx, policy=self.policy)
            if self.shadowed:
                await self._shadow(point, compiled, failure, ctx, live=result, record=record)
            return result
        trace, start = Trace(), self._began()
        try:
            if awaits:
                result = await arun_on_error(
                    compiled, point, failure, ctx, policy=self.policy, trace=trace
                )
            else:
                result = run_on_error(
                    compiled, point, failure, ctx, policy=self.policy, trace=trace
                )
        except Exception as exc:
            await self._observe(
                point.name, start, trace, ctx, outcome="raised", error=exc, given=failure
            )
            raise
        # A recovery still tells observers what it recovered from.
        error = result.failure() if type(result) is Failure else failure.failure()
        tag = _TAGS[type(result)]
        await self._observe(
            point.name, start, trace, ctx, outcome=tag, error=error, given=failure, result=result
        )
        if self.shadowed:
            await self._shadow(point, compiled, failure, ctx, live=result, record=record)
        return result

    async def wrap(
        self,
        point: WrapPoint[C, T],
        ctx: C,
        operation: Callable[[C], Coroutine[Any, Any, Outcome[T]]],
    ) -> Outcome[T]:
        """One attempt: ``operation(ctx)`` inside the point's wraps, the first outermost.

        What the operation raises (``StopRun``, a sub-agent's failure) is carried past
        the wraps as a ``BaseException`` they let through, and raised here as itself.
        """
        carried = Carrier(operation)
        traced = self.tracer is not None and _recording()
        trace = Trace() if self.observers or traced else None
        start = _UNOBSERVED if trace is None else self._began()
        compiled = _view(self.compiled, ctx) if self.by_tool else self.compiled
        try:
            if self.is_async:
                result = await arun_wrap(
                    compiled, point, ctx, carried.arun, policy=self.policy, trace=trace
                )
            else:
                result = run_wrap(
                    compiled, point, ctx, carried.run, policy=self.policy, trace=trace
                )
        except Carried as carrier:
            error: Exception = carrier.error
        except Exception as exc:
            if trace is not None:
                await self._observe(
                    point.name, start, trace, ctx, outcome="raised", error=exc, given=ctx
                )
            raise
        else:
            if trace is not None:
                failed = result.failure() if type(result) is Failure else None
                tag = _TAGS[type(result)]
                await self._observe(
                    point.name,
                    start,
                    trace,
                    ctx,
                    outcome=tag,
                    error=failed,
                    given=ctx,
                    result=result,
                )
            return result
        raise error  # outside the except block: no "during handling" chain to the carrier

    async def _shadow(
        self,
        point: BeforePoint[C, T] | PausablePoint[C, T] | AfterPoint[C, T] | ErrorPoint[C, T],
        compiled: CompiledCallbacks,
        given: object,
        ctx: C,
        *,
        live: object,
        record: Record | None,
    ) -> None:
        """Ask each shadow what it would have decided given ``given``; record each that
        differs from the live chain's ``live`` (and, traced, a span event). A shadow's
        result is never used; what it raises is recorded, never raised."""
        if record is None:
            return
        decided = _decision(live, given)
        call = ctx.call if isinstance(ctx, ToolContext) else None
        for owner, alone in compiled.shadows():
            if not alone.chain(point.name, point.kind).fns or not _fits(alone, call):
                continue
            detail = ""
            try:
                would = await self._ask(point, alone, given, ctx)
            except Exception as exc:  # StopRun too: a shadow changes nothing
                decision = "raised"
                detail = f"{type(exc).__name__}: {exc}"
            else:
                decision = _decision(would, given)
                if decision not in ("cont", "pass"):
                    detail = repr(would)
            if decision == decided:
                continue
            event = ShadowEvent(
                self.name,
                self.branch,
                self.clock(),
                point=point.name,
                callback=describe(owner),
                live=decided,
                would=decision,
                tool=None if call is None else call.name,
                call_id=None if call is None else call.id,
                detail=detail[:200],
            )
            record.add(event)
            if self.tracer is not None and _recording():
                self.tracer.shadow(event)

    async def _ask(
        self,
        point: BeforePoint[C, T] | PausablePoint[C, T] | AfterPoint[C, T] | ErrorPoint[C, T],
        alone: CompiledCallbacks,
        given: Any,
        ctx: C,
    ) -> object:
        """What the one shadow of ``alone`` returns at ``point`` (awaited in async runs)."""
        if isinstance(point, BeforePoint | PausablePoint):
            if self.is_async:
                return await arun_before(alone, point, ctx)
            return run_before(alone, point, ctx)
        if isinstance(point, AfterPoint):
            if self.is_async:
                return await arun_after(alone, point, given, ctx)
            return run_after(alone, point, given, ctx)
        if self.is_async:
            return await arun_on_error(alone, point, given, ctx)
        return run_on_error(alone, point, given, ctx)

    def _began(self) -> tuple[float, float]:
        """When an observed dispatch starts: the engine's clock, which a ``HookEvent`` carries
        (a durable run's recorded time, the same on replay), and ``perf_counter`` for its
        ``duration``, a measure of this execution only."""
        return self.clock(), perf_counter()

    async def _observe(
        self,
        point: str,
        start: tuple[float, float],
        trace: Trace,
        ctx: object,
        *,
        outcome: OutcomeTag,
        error: BaseException | None,
        given: object,
        result: object = None,
    ) -> None:
        at, began = start
        duration = perf_counter() - began
        if self.tracer is not None and _recording():
            self.tracer.hook(point, outcome, trace, ctx=ctx, error=error, result=result)
        if not self.observers:
            return
        call = ctx.call if isinstance(ctx, ToolContext) else None
        event = HookEvent(
            point=point,
            agent=self.agent.name,
            branch=self.branch,
            outcome=outcome,
            duration=duration,
            tool=None if call is None else call.name,
            call_id=None if call is None else call.id,
            error=error,
            attempt=getattr(ctx, "attempt", 1),
            time=at,
            callback=trace.description,
            run_id=self.invocation.id,
            context=ctx,
            given=given,
            result=result,
        )
        for fn, is_async, owner, audits in self.observers:
            try:
                if is_async:
                    await fn(event)
                else:
                    fn(event)
            except StopRun:
                if audits:  # an audit only observes: not even StopRun changes the run
                    logger.exception("audit %r raised StopRun on %s; the run goes on", owner, point)
                    continue
                raise  # any other callback may stop a run, observers included
            except Exception:
                logger.exception("observer %r failed on %s; the run goes on", owner, point)


def _view(compiled: CompiledCallbacks, ctx: object) -> CompiledCallbacks:
    """What a dispatch with ``ctx`` runs: a tool call's the list's view for its tool."""
    return compiled.for_tool(ctx.tool) if isinstance(ctx, ToolContext) else compiled


def _decision(result: object, given: object) -> str:
    """A dispatch's decision as a ``ShadowEvent`` names it."""
    tag = type(result)
    if tag is Cont:
        passed: object = result._ctx  # type: ignore[attr-defined]
        return "cont" if passed is given or passed == given else "replace"
    if tag is Success or tag is Failure:
        if result is given or result == given:
            return "pass"
        return "replace" if tag is Success else "failure"
    return _TAGS[tag]


def _fits(alone: CompiledCallbacks, call: ToolCall | None) -> bool:
    """Whether the shadow of ``alone`` is for this call: its arguments' test, if any."""
    if call is None:
        return True
    match = alone.placed()[0].match
    return match is None or match.args is None or bool(match.args(call.args))
