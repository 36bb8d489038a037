"""How a run executes its operations and reads the world: the ``Engine`` seam.

Everything a run does that is not deterministic goes through its engine: the model
and tool attempts, the clock its records are stamped with, the ids it makes, the wait
before a retry (jitter included) and the sleep itself. ``IN_PROCESS``, the default,
runs attempts here (a sync model or tool in an async run on the runner's thread
pool, so it never blocks the event loop) and reads the wall clock and ``secrets``. A
durable engine (``runner._durable.engine``) runs each attempt as a checkpointed step
and answers the rest from its record, so a recovered run replays the same run.

Execution never raises what the model or the tool raised: it returns the attempt's
``Outcome``, so the guarded operation offers every failure to the error hooks and
nothing is lost on the way (a ``StopIteration`` raised by a sync tool on a worker
thread stays a ``StopIteration``, where a future would have refused it and hung the
run). Only ``StopRun``, which ends the run, is raised.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, final

from hooks import (
    Failure,
    ModelContext,
    ModelResponse,
    Outcome,
    StopRun,
    Success,
    ToolContext,
    ToolResult,
)
from runner._run.streamed import stream_model
from runner._tools.tools import AsyncTool, Tool

if TYPE_CHECKING:
    from runner._run.plan import Plan
    from runner._run.settings import Settings

__all__ = ["IN_PROCESS", "Engine", "InProcess", "to_tool_result"]

A = TypeVar("A")


class Engine(Protocol):
    """How one run executes its operations and reads the clock, ids and jitter.

    ``ordered`` engines need every operation issued in the same order on every
    execution of a run (a durable engine matches a replayed step to its record by its
    place), so the tool calls of one response run one by one, never concurrently.
    """

    @property
    def ordered(self) -> bool:
        """Whether operations must be issued one at a time, in a fixed order."""
        ...

    def now(self) -> float:
        """The time to stamp a record with, in seconds since the epoch."""
        ...

    def new_id(self) -> str:
        """A fresh id (a session's, when a run starts one)."""
        ...

    async def model(self, settings: Settings, plan: Plan, ctx: ModelContext, /) -> Outcome[Any]:
        """One model attempt on ``ctx.request``."""
        ...

    async def tool(
        self, settings: Settings, ctx: ToolContext, tool: Tool | AsyncTool, is_async: bool, /
    ) -> Outcome[ToolResult]:
        """One attempt of ``tool`` with ``ctx.call.args``."""
        ...

    async def delay(self, settings: Settings, attempt: int, requested: float | None, /) -> float:
        """The wait after failed attempt ``attempt``: the policy's, or a ``Retry``'s, capped."""
        ...

    async def sleep(self, settings: Settings, seconds: float, /) -> None:
        """Wait ``seconds`` before the next attempt."""
        ...


@final
class InProcess:
    """The default engine: attempts run in this process; wall clock, random ids and jitter."""

    __slots__ = ()

    # Builtins, no method around them: a record's timestamp costs what time.time() does.
    now = staticmethod(time.time)
    new_id = staticmethod(functools.partial(secrets.token_hex, 16))  # 128 random bits, in hex

    @property
    def ordered(self) -> bool:
        """No: tool calls of one response may run concurrently."""
        return False

    async def model(self, settings: Settings, plan: Plan, ctx: ModelContext, /) -> Outcome[Any]:
        """One model attempt on ``ctx.request``; an answer that is no ``ModelResponse`` fails."""
        agent = plan.agent
        model: Any = agent.model
        if settings.channel is not None:
            outcome = await stream_model(settings, plan, settings.channel, ctx)
        elif agent.model_is_async:
            outcome = await _awaited(model.generate(ctx.request))
        elif settings.is_async and agent.model_has_agenerate:
            outcome = await _awaited(model.agenerate(ctx.request))
        else:
            outcome = await _called(settings, model.generate, ctx.request)
        if type(outcome) is not Success:
            return outcome
        response = outcome.unwrap()
        if not isinstance(response, ModelResponse):
            msg = (
                f"model {type(model).__qualname__}.generate must return a ModelResponse, "
                f"got {type(response).__name__} {response!r:.60}"
            )
            return Failure(TypeError(msg))
        if response.usage is not None:
            settings.meter.add(response.usage)
        return outcome

    async def tool(
        self, settings: Settings, ctx: ToolContext, tool: Tool | AsyncTool, is_async: bool, /
    ) -> Outcome[ToolResult]:
        """One attempt of ``tool`` on ``ctx.call.args``; its return value becomes the result."""
        if is_async:
            outcome = await _awaited(tool.run(ctx.call.args))
        else:
            outcome = await _called(settings, tool.run, ctx.call.args)
        return Success(to_tool_result(outcome.unwrap())) if type(outcome) is Success else outcome

    async def delay(self, settings: Settings, attempt: int, requested: float | None, /) -> float:
        """The policy's wait (jittered by the runner's ``rng``), or the requested one, capped."""
        if requested is None:
            return settings.retry.delay(attempt, settings.rng)
        return min(requested, settings.retry.max_delay)

    async def sleep(self, settings: Settings, seconds: float, /) -> None:
        """On the event loop in an async run, blocking in a sync one."""
        if seconds <= 0:
            return
        if settings.is_async:
            await asyncio.sleep(seconds)
        else:
            time.sleep(seconds)


IN_PROCESS: Final = InProcess()
"""The engine of every run but a durable one."""


def to_tool_result(value: object) -> ToolResult:
    """A tool's return value as the model will see it: text, or JSON for data."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    if value is None:
        return ToolResult("")
    try:
        return ToolResult(_JSON.encode(value))
    except (TypeError, ValueError):
        return ToolResult(repr(value))


# json.dumps with options other than the defaults builds an encoder per call: one, kept.
_JSON: Final = json.JSONEncoder(ensure_ascii=False, default=str)


async def _awaited(awaitable: Awaitable[Any]) -> Outcome[Any]:
    try:
        return Success(await awaitable)
    except StopRun:
        raise
    except Exception as exc:
        return Failure(exc)


async def _called(settings: Settings, fn: Callable[[A], Any], arg: A) -> Outcome[Any]:
    """``fn(arg)`` as an outcome: inline in a sync run, on the thread pool in an async one."""
    if settings.is_async:
        loop = asyncio.get_running_loop()
        if settings.telemetry is None:
            outcome = await loop.run_in_executor(settings.pool(), _caught, fn, arg)
        else:  # the span under way stays current on the thread, for spans made there
            context = contextvars.copy_context()
            outcome = await loop.run_in_executor(settings.pool(), _within, context, fn, arg)
    else:
        outcome = _caught(fn, arg)
    if type(outcome) is Failure and isinstance(outcome.failure(), StopRun):
        raise outcome.failure()
    return outcome


def _within(context: contextvars.Context, fn: Callable[[A], Any], arg: A) -> Outcome[Any]:
    return context.run(_caught, fn, arg)


def _caught(fn: Callable[[A], Any], arg: A) -> Outcome[Any]:
    try:
        return Success(fn(arg))
    except Exception as exc:
        return Failure(exc)
