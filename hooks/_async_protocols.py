"""The ``async def`` twins of the hook protocols, for callbacks that await.

Dispatched by ``arun_*`` and ``Runner.arun``; sync dispatch of a point whose
chain holds one raises ``InvalidCallbacks`` before any callback runs. Same
positional-only parameters, same results, awaited. The wrap twins' ``call_next``
returns an awaitable: ``outcome = await call_next(ctx)``. Async wrap dispatch
(``arun_wrap``) takes async wraps only, since a plain ``def`` cannot await the
``call_next`` it is given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from returns.result import Failure, Result

from hooks._contexts import AgentContext, ModelContext, ToolContext
from hooks._events import HookEvent
from hooks._messages import ModelResponse, ToolResult
from hooks._output import OutputContext
from hooks._results import BeforeResult, ErrorResult, Outcome, PausableResult

__all__ = [
    "AsyncAfterAgent",
    "AsyncAfterModel",
    "AsyncAfterOutput",
    "AsyncAfterTool",
    "AsyncBeforeAgent",
    "AsyncBeforeModel",
    "AsyncBeforeTool",
    "AsyncOnEvent",
    "AsyncOnModelError",
    "AsyncOnOutputError",
    "AsyncOnToolError",
    "AsyncWrapModel",
    "AsyncWrapTool",
]


class AsyncBeforeAgent(Protocol):
    """``async def before_agent``: see ``BeforeAgent``."""

    async def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """``Cont(ctx)`` runs the agent; ``Halt(response)`` answers without running it."""
        ...


class AsyncAfterAgent(Protocol):
    """``async def after_agent``: see ``AfterAgent``."""

    async def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Result[ModelResponse, Exception]:
        """Return the outcome to pass on; a ``Failure`` is raised by the run."""
        ...


class AsyncBeforeModel(Protocol):
    """``async def before_model``: see ``BeforeModel``."""

    async def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """``Cont(ctx)`` sends ``ctx.request``; ``Halt(response)`` skips the call."""
        ...


class AsyncAfterModel(Protocol):
    """``async def after_model``: see ``AfterModel``."""

    async def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Return the outcome the agent goes on with; a ``Failure`` fails the run."""
        ...


class AsyncOnModelError(Protocol):
    """``async def on_model_error``: see ``OnModelError``."""

    async def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """``Retry``, ``Fallback``, or a ``Failure`` passed on."""
        ...


class AsyncOnOutputError(Protocol):
    """``async def on_output_error``: see ``OnOutputError``."""

    async def on_output_error(
        self, failure: Failure[Exception], ctx: OutputContext, /
    ) -> ErrorResult[OutputContext, Any]:
        """``Retry`` with feedback, ``Fallback(value)``, or a ``Failure`` of its own."""
        ...


class AsyncAfterOutput(Protocol):
    """``async def after_output``: see ``AfterOutput``."""

    async def after_output(
        self, outcome: Outcome[Any], ctx: OutputContext, /
    ) -> Result[Any, Exception]:
        """Return the outcome the run ends with; a ``Failure`` fails the run."""
        ...


class AsyncBeforeTool(Protocol):
    """``async def before_tool``: see ``BeforeTool``."""

    async def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """``Cont(ctx)`` runs the tool with ``ctx.call.args``; ``Halt(result)`` skips it;
        ``Pause(reason)`` asks a human first."""
        ...


class AsyncAfterTool(Protocol):
    """``async def after_tool``: see ``AfterTool``."""

    async def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """Return the outcome the model sees; a ``Failure`` becomes an error ``ToolResult``."""
        ...


class AsyncOnToolError(Protocol):
    """``async def on_tool_error``: see ``OnToolError``."""

    async def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """``Retry``, ``Fallback``, or a ``Failure`` that becomes an error ``ToolResult``."""
        ...


class AsyncWrapModel(Protocol):
    """``async def wrap_model``: see ``WrapModel``."""

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """``await call_next(ctx')`` runs the inner wraps and the model; return an outcome."""
        ...


class AsyncWrapTool(Protocol):
    """``async def wrap_tool``: see ``WrapTool``."""

    async def wrap_tool(
        self,
        ctx: ToolContext,
        call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
        /,
    ) -> Outcome[ToolResult]:
        """``await call_next(ctx')`` runs the inner wraps and the tool; return an outcome."""
        ...


class AsyncOnEvent(Protocol):
    """``async def on_event``: an observer that awaits; see ``OnEvent``."""

    async def on_event(self, event: HookEvent, /) -> None:
        """Look at ``event``; what it raises is logged and the run goes on."""
        ...
