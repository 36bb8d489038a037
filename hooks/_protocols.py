"""One ``Protocol`` per built-in hook method.

A class subclasses exactly the protocols it implements (mark each method
``@override``); a module can be checked by assigning it to a protocol-typed name::

    checked: hooks.BeforeModel = my_module

Parameters are positional-only, so implementations may name them freely. For
``async def`` methods subclass the twins in ``_async_protocols`` (``AsyncBeforeModel``
...): the async dispatchers await them, the sync ones refuse them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from returns.result import Failure, Result

from hooks._contexts import AgentContext, ModelContext, ToolContext
from hooks._events import HookEvent
from hooks._messages import ModelResponse, ToolResult
from hooks._output import OutputContext
from hooks._results import BeforeResult, ErrorResult, Outcome, PausableResult

__all__ = [
    "AfterAgent",
    "AfterModel",
    "AfterOutput",
    "AfterTool",
    "BeforeAgent",
    "BeforeModel",
    "BeforeTool",
    "OnEvent",
    "OnModelError",
    "OnOutputError",
    "OnToolError",
    "WrapModel",
    "WrapTool",
]


class BeforeAgent(Protocol):
    """``before_agent``: runs once when an agent starts on a message."""

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """``Cont(ctx)`` runs the agent on ``ctx.message``; ``Halt(response)`` answers
        with ``response`` without running it (``after_agent`` is skipped too)."""
        ...


class AfterAgent(Protocol):
    """``after_agent``: runs once when an agent has answered or failed."""

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Result[ModelResponse, Exception]:
        """Return the outcome to pass on: the same, a changed answer, or a ``Failure``
        that the run raises."""
        ...


class BeforeModel(Protocol):
    """``before_model``: runs before every model call."""

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """``Cont(ctx)`` sends ``ctx.request`` to the model (so a changed request is what
        the model receives); ``Halt(response)`` skips the call and ``after_model``."""
        ...


class AfterModel(Protocol):
    """``after_model``: runs after every model call that was not halted."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Return the outcome the agent goes on with; a ``Failure`` fails the run."""
        ...


class OnModelError(Protocol):
    """``on_model_error``: runs when the model raised."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """``Retry(ctx)`` calls the model again (within the retry budget);
        ``Fallback(response)`` uses ``response``; ``Failure(err)`` passes an error on,
        and the last one fails the run."""
        ...


class OnOutputError(Protocol):
    """``on_output_error``: runs when an agent's final answer does not fit its ``output_type``."""

    def on_output_error(
        self, failure: Failure[Exception], ctx: OutputContext, /
    ) -> ErrorResult[OutputContext, Any]:
        """``Retry(ctx)`` asks the model again with ``ctx.feedback`` (within the retry
        budget); ``Fallback(value)`` answers with ``value`` (checked against the type);
        ``Failure(err)`` with an error of its own ends the run with it. Passed on, the
        failure is retried with the validation errors as feedback."""
        ...


class AfterOutput(Protocol):
    """``after_output``: the guard on an agent's typed final answer."""

    def after_output(self, outcome: Outcome[Any], ctx: OutputContext, /) -> Result[Any, Exception]:
        """Return the outcome the run ends with: ``Success(value)`` (checked against the
        type) or a ``Failure``, which fails the run."""
        ...


class BeforeTool(Protocol):
    """``before_tool``: runs before every tool call."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """``Cont(ctx)`` runs the tool with ``ctx.call.args``; ``Halt(result)`` skips the
        tool and ``after_tool`` and gives the model ``result``; ``Pause(reason)`` asks a
        human first (the run pauses; on resume ``ctx.decision`` holds the answer)."""
        ...


class AfterTool(Protocol):
    """``after_tool``: runs after every tool call that was not halted."""

    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """Return the outcome the model sees; a ``Failure`` becomes an error ``ToolResult``."""
        ...


class OnToolError(Protocol):
    """``on_tool_error``: runs when a tool raised, was unknown, or got bad arguments."""

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """``Retry(ctx)`` runs the tool again (within the retry budget);
        ``Fallback(result)`` uses ``result``; an unrecovered ``Failure`` becomes an
        error ``ToolResult`` the model sees."""
        ...


class WrapModel(Protocol):
    """``wrap_model``: runs around every attempt of a model call (first callback outermost)."""

    def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Outcome[ModelResponse]],
        /,
    ) -> Outcome[ModelResponse]:
        """``call_next(ctx')`` runs the wraps inside this one and the model on ``ctx'``
        and gives back their outcome (a model error as ``Failure``, never raised); call
        it zero times (answer yourself), once, or several times. Return the outcome."""
        ...


class WrapTool(Protocol):
    """``wrap_tool``: runs around every attempt of a tool call (first callback outermost)."""

    def wrap_tool(
        self,
        ctx: ToolContext,
        call_next: Callable[[ToolContext], Outcome[ToolResult]],
        /,
    ) -> Outcome[ToolResult]:
        """``call_next(ctx')`` runs the wraps inside this one and the tool on ``ctx'``
        and gives back their outcome (a tool error as ``Failure``, never raised); call
        it zero times (answer yourself), once, or several times. Return the outcome."""
        ...


class OnEvent(Protocol):
    """``on_event``: an observer, told once per hook-point dispatch. It never changes the flow."""

    def on_event(self, event: HookEvent, /) -> None:
        """Look at ``event``; what it returns is ignored and what it raises is logged."""
        ...
