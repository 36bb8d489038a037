"""``Tracer``: what the loop asks of a traced run's spans, and nothing more.

The loop names this protocol, never the OpenTelemetry implementation
(``runner._telemetry``), which a ``Runner`` given ``tracer_provider=`` makes. Each
method wraps one piece of work the loop hands down, inside its span: an agent turn, a
model attempt, a tool call; ``hook`` is told how each traced dispatch ended.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Protocol, TypeVar

from hooks import (
    Invocation,
    Message,
    ModelContext,
    ModelResponse,
    Outcome,
    OutcomeTag,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    Trace,
)
from runner._agent import Agent
from runner._events import ShadowEvent

__all__ = ["RECORDING", "Tracer"]

RECORDING: ContextVar[bool] = ContextVar("hookline_recording", default=False)
"""Whether the agent turn under way in this context has a span that records: set by the
loop for the turn's own task, so concurrent turns of one agent never see each other's."""

T = TypeVar("T")


class Tracer(Protocol):
    """The spans of a traced run."""

    def agent(
        self,
        agent: Agent,
        invocation: Invocation,
        message: Message,
        turn: Callable[[bool], Awaitable[ModelResponse]],
        /,
    ) -> Awaitable[ModelResponse]:
        """Await ``turn(recording)``, the agent's turn on ``message``, inside its span;
        ``recording`` says whether the span records (then the turn traces its hooks)."""
        ...

    def attempt(
        self,
        agent: Agent,
        ctx: ModelContext | ToolContext,
        execution: Awaitable[Outcome[T]],
        *,
        streamed: bool,
    ) -> Awaitable[Outcome[T]]:
        """Await ``execution``, one model attempt at ``ctx``, inside its span."""
        ...

    def tool(
        self,
        agent: Agent,
        call: ToolCall,
        info: ToolInfo | None,
        operation: Awaitable[tuple[Outcome[ToolResult], ToolContext]],
    ) -> Awaitable[tuple[Outcome[ToolResult], ToolContext]]:
        """Await ``operation``, ``call`` under its hooks, inside its span (``info``: the
        called tool, ``None`` for a name the agent does not offer)."""
        ...

    def hook(
        self,
        point: str,
        tag: OutcomeTag,
        traced: Trace,
        *,
        ctx: object,
        error: BaseException | None,
        result: object,
    ) -> None:
        """A traced dispatch ended: ``tag`` is how, ``traced`` who decided."""
        ...

    def shadow(self, event: ShadowEvent) -> None:
        """A shadow would have decided otherwise (``event``): an event on the current span."""
        ...
