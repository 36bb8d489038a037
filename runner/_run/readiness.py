"""What a run must be able to call, refused before anything runs.

A sync run cannot await: an async model, tool or hook is refused up front. An async
run awaits every wrap's ``call_next``: a plain ``def`` wrap is refused up front.
"""

from __future__ import annotations

from typing import Final

from hooks import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_OUTPUT,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_OUTPUT_ERROR,
    ON_TOOL_ERROR,
    WRAP_MODEL,
    WRAP_TOOL,
    CompiledCallbacks,
    InvalidCallbacks,
    Trace,
)
from runner._agent import Agent
from runner._streaming.delta import ON_DELTA

__all__ = ["POINTS", "ready_for_async", "ready_for_sync"]

POINTS: Final = (
    BEFORE_AGENT,
    AFTER_AGENT,
    BEFORE_MODEL,
    AFTER_MODEL,
    ON_MODEL_ERROR,
    BEFORE_TOOL,
    AFTER_TOOL,
    ON_TOOL_ERROR,
    ON_OUTPUT_ERROR,
    AFTER_OUTPUT,
    WRAP_MODEL,
    WRAP_TOOL,
    ON_DELTA,
)
"""The hook points a run dispatches."""

# The points a run dispatches, so the only ones a sync run must be able to call.
_RUNNER_POINTS: Final = (*((point.name, point.kind) for point in POINTS), ("on_event", "event"))


def ready_for_async(callbacks: CompiledCallbacks) -> None:
    """Refuse, before anything runs, a plain def wrap: an async run's call_next is awaited."""
    for point in (WRAP_MODEL, WRAP_TOOL):
        chain = callbacks.chain(point.name, point.kind)
        if not chain.all_async:
            owner = chain.owners[chain.asyncs.index(False)]
            msg = (
                f"{_described(owner)}.{point.name} is a plain def; an async run awaits "
                "call_next, so its wraps must be async def (AsyncWrapModel / AsyncWrapTool)"
            )
            raise InvalidCallbacks(msg, callback=owner, attribute=point.name)


def _described(callback: object) -> str:
    trace = Trace()  # names a callback the way hook errors and HookEvent.callback do
    trace.callback = callback
    return trace.description or repr(callback)


def ready_for_sync(agent: Agent, callbacks: CompiledCallbacks) -> None:
    """Refuse, before anything runs, what a sync run could not await."""
    if agent.model_is_async:
        msg = f"agent {agent.name!r} has an async model; use Runner.arun"
        raise TypeError(msg)
    async_tools = [name for name, is_async in agent.tool_is_async.items() if is_async]
    if async_tools:
        msg = f"agent {agent.name!r} has async tools {async_tools}; use Runner.arun"
        raise TypeError(msg)
    for name, kind in _RUNNER_POINTS:
        callbacks.sync_chain(name, kind)
