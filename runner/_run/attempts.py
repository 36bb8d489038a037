"""One model attempt and one tool attempt, as the loop hands them to the run's engine.

An attempt never raises what the model or the tool raised: it returns the attempt's
``Outcome``, so the guarded operation offers every failure to the error hooks and
nothing is lost on the way (a ``StopIteration`` raised by a sync tool on a worker
thread stays a ``StopIteration``, where a future would have refused it and hung the
run). Only ``StopRun``, which ends the run, is raised.

A sync model or tool in an async run runs on the runner's thread pool, so it never
blocks the event loop, in a copy of the caller's context (as ``asyncio.to_thread``
does): the span under way and a durable run's idempotency key are seen there too.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from time import monotonic
from typing import Any, Final, TypeVar

from hooks import (
    Failure,
    FilePart,
    ImagePart,
    ModelContext,
    ModelResponse,
    Outcome,
    StopRun,
    Success,
    ToolContext,
    ToolResult,
)
from runner._errors import ModelTimeout
from runner._mcp.hub import Answer
from runner._mcp.listed import MCPTool
from runner._models.deadline import Bounded, ends
from runner._run.engine import KEY
from runner._run.plan import Plan
from runner._run.settings import Settings
from runner._run.streamed import Streamed, stream_model
from runner._tools.context import RunContext
from runner._tools.tools import AsyncTool, FunctionTool, Tool

__all__ = ["mcp_attempt", "model_attempt", "to_tool_result", "tool_attempt"]

A = TypeVar("A")

IDEMPOTENCY_META: Final = "hookline/idempotency-key"
"""The ``_meta`` key of an MCP call's idempotency key in a durable run."""


async def model_attempt(
    settings: Settings, plan: Plan, ctx: ModelContext, streamed: Streamed | None
) -> Outcome[ModelResponse]:
    """One model attempt on ``ctx.request``; an answer that is no ``ModelResponse`` fails.

    In a streamed run the attempt streams, what it sends out kept on ``streamed``. The
    attempt has ``settings.model_deadline`` seconds (``runner._models.deadline``): an
    awaited call past it fails with ``ModelTimeout``; a sync call (in ``run``, or on a
    worker thread in ``arun``) is told what is left through ``time_left()``.
    """
    agent = plan.agent
    model: Any = agent.model
    seconds = settings.model_deadline
    if settings.channel is not None and streamed is not None:
        streaming = stream_model(settings, plan, settings.channel, ctx, streamed)
        outcome = await _bounded(streaming, seconds, model)
    elif agent.model_is_async:
        outcome = await _awaited(Bounded(model.generate(ctx.request), seconds, model))
    elif settings.is_async and agent.model_has_agenerate:
        outcome = await _awaited(Bounded(model.agenerate(ctx.request), seconds, model))
    else:  # a sync call: nothing stops it from outside, so it is told what it has left
        ending = ends.set(monotonic() + seconds)  # a worker thread gets a copy of it
        try:
            if settings.is_async:
                threaded = _threaded(settings, model.generate, ctx.request)
                outcome = await _bounded(threaded, seconds, model)
            else:
                outcome = _caught(model.generate, ctx.request)
        finally:
            ends.reset(ending)
    if type(outcome) is not Success:
        return outcome
    response = outcome.unwrap()
    if not isinstance(response, ModelResponse):
        msg = (
            f"model {type(model).__qualname__}.generate must return a ModelResponse, "
            f"got {type(response).__name__} {response!r:.60}"
        )
        return Failure(TypeError(msg))
    return outcome


async def tool_attempt(
    settings: Settings, ctx: ToolContext, tool: Tool | AsyncTool, is_async: bool
) -> Outcome[ToolResult]:
    """One attempt of ``tool`` on ``ctx.call.args``; its return value becomes the result.

    A function tool that takes a ``RunContext`` gets one made of ``ctx``: the run's deps,
    state and ids, and the call's id.
    """
    run: Callable[[Mapping[str, Any]], Any] = tool.run
    if isinstance(tool, FunctionTool) and tool.deps_type is not None:
        invocation = ctx.invocation
        context = RunContext(
            invocation.deps,
            invocation.state,
            invocation.id,
            invocation.user_id,
            invocation.session_id,
            invocation.agent,
            ctx.call.id,
        )
        run = partial(tool.run_in, context)
    if is_async:
        outcome = await _awaited(run(ctx.call.args))
    elif settings.is_async:
        outcome = await _threaded(settings, run, ctx.call.args)
    else:
        outcome = _caught(run, ctx.call.args)
    return Success(to_tool_result(outcome.unwrap())) if type(outcome) is Success else outcome


async def mcp_attempt(
    settings: Settings, ctx: ToolContext, tool: MCPTool, answer: Answer | None = None
) -> Outcome[ToolResult]:
    """One call of an MCP server's ``tool`` on ``ctx.call.args``: an async run awaits it
    on its own loop's connection (cancelling the run cancels the call), a sync run blocks
    on it on the hub's loop.
    In a durable run's tool step the request's ``_meta`` carries the step's idempotency
    key as ``"hookline/idempotency-key"``."""
    hub = settings.hub
    assert hub is not None  # a plan has a toolbox only with a hub
    key = KEY.get(None)  # a durable run's tool step: the server may do the work once
    meta = None if key is None else {IDEMPOTENCY_META: key}
    try:
        if settings.is_async:
            called = await hub.on_loop(tool.source).call(tool, ctx.call.args, meta, answer)
        else:
            called = hub.wait(hub.connection(tool.source).call(tool, ctx.call.args, meta, answer))
        return Success(called)
    except StopRun:
        raise
    except Exception as exc:
        return Failure(exc)


def to_tool_result(value: object) -> ToolResult:
    """A tool's return value as the model will see it: text, JSON for data, or the image or
    file it returned as a part."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    if isinstance(value, ImagePart | FilePart):  # an image or a file, and no text
        return ToolResult("", parts=(value,))
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


async def _bounded(attempt: Awaitable[Outcome[Any]], seconds: float, model: object) -> Outcome[Any]:
    """An attempt that gives its own outcome, under the deadline: past it, ``ModelTimeout``."""
    try:
        return await Bounded(attempt, seconds, model)
    except ModelTimeout as timeout:
        return Failure(timeout)


async def _threaded(settings: Settings, fn: Callable[[A], Any], arg: A) -> Outcome[Any]:
    """``fn(arg)`` as an outcome, on the thread pool (a sync run calls ``_caught`` inline)."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return await loop.run_in_executor(settings.pool(), _within, context, fn, arg)


def _within(context: contextvars.Context, fn: Callable[[A], Any], arg: A) -> Outcome[Any]:
    return context.run(_caught, fn, arg)


def _caught(fn: Callable[[A], Any], arg: A) -> Outcome[Any]:
    """``fn(arg)`` as an outcome; a ``StopRun`` is raised (on a worker thread, through its
    future), as it ends the run."""
    try:
        return Success(fn(arg))
    except StopRun:
        raise
    except Exception as exc:
        return Failure(exc)
