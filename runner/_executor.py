"""How one attempt of a model or tool call executes: inline, awaited, or on a thread.

Execution never raises what the model or the tool raised: it returns the attempt's
``Outcome``, so the guarded operation offers every failure to the error hooks and
nothing is lost on the way (a ``StopIteration`` raised by a sync tool on a worker
thread stays a ``StopIteration``, where a future would have refused it and hung the
run). Only ``StopRun``, which ends the run, is raised. A sync model or tool in an
async run runs on the runner's thread pool, so it never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from hooks import Failure, ModelContext, ModelResponse, Outcome, StopRun, Success, ToolResult
from runner._plan import Plan
from runner._settings import Settings
from runner._streamed import stream_model
from runner._tools import AsyncTool, Tool

__all__ = ["call_model", "call_tool", "to_tool_result"]

A = TypeVar("A")


async def call_model(settings: Settings, plan: Plan, ctx: ModelContext) -> Outcome[ModelResponse]:
    """One model attempt on ``ctx.request``; a response that is no ``ModelResponse`` fails it."""
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


async def call_tool(
    settings: Settings, tool: Tool | AsyncTool, is_async: bool, args: Mapping[str, Any]
) -> Outcome[ToolResult]:
    """One tool attempt with ``args``; its return value becomes a ``ToolResult``."""
    if is_async:
        outcome = await _awaited(tool.run(args))
    else:
        outcome = await _called(settings, tool.run, args)
    return Success(to_tool_result(outcome.unwrap())) if type(outcome) is Success else outcome


def to_tool_result(value: object) -> ToolResult:
    """A tool's return value as the model will see it: text, or JSON for data."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    if value is None:
        return ToolResult("")
    try:
        return ToolResult(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return ToolResult(repr(value))


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
