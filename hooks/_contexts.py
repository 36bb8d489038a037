"""The contexts the built-in hook points hand to callbacks: frozen, one per operation."""

from __future__ import annotations

from dataclasses import dataclass, field

from hooks._call_state import CallState
from hooks._decisions import Decision
from hooks._messages import Message, ModelRequest, ToolCall
from hooks._slots import slot_init
from hooks._state import Invocation
from hooks._tool_info import ToolInfo

__all__ = ["AgentContext", "ModelContext", "ToolContext"]


@slot_init
@dataclass(frozen=True, slots=True)
class AgentContext:
    """An agent run about to start: ``message`` is the user's message it answers."""

    invocation: Invocation
    message: Message


@slot_init
@dataclass(frozen=True, slots=True)
class ModelContext:
    """A model call: ``request`` is what the model will receive.

    ``attempt`` counts from 1; ``max_attempts`` is the retry budget of the call (the
    runner's ``RetryPolicy.max_attempts``), so an error hook can retry, then fall back::

        if ctx.attempt < ctx.max_attempts:
            return Retry(ctx)
        return Fallback(ModelResponse(text="the model is unavailable"))
    """

    invocation: Invocation
    request: ModelRequest
    attempt: int = 1
    max_attempts: int = 1
    call_state: CallState = field(default_factory=CallState, compare=False, repr=False)


@slot_init
@dataclass(frozen=True, slots=True)
class ToolContext:
    """A tool call: ``call`` is the model's ``ToolCall(id, name, args)``; ``tool`` tells
    what the tool is (``ToolInfo``: its server, description and annotations).

    ``attempt`` counts from 1 and ``max_attempts`` is the call's retry budget, as in
    ``ModelContext``. ``decision`` is a human's decision on this call when a paused run
    is resumed (``Approve()``, ``Edit(args)``, ``Reject(message)``), ``None`` on a first
    pass: a guard that paused the call sees it and may let the call through, refuse
    edited arguments, or pause again. ``call_state`` is shared by every hook of this
    one call (see ``CallState``).
    """

    invocation: Invocation
    call: ToolCall
    attempt: int = 1
    max_attempts: int = 1
    decision: Decision | None = None
    call_state: CallState = field(default_factory=CallState, compare=False, repr=False)

    @property
    def tool(self) -> ToolInfo:
        """What the called tool is: its name, server, description, annotations, output
        schema -- always of the tool ``call`` names now (a hook that renamed the call
        sees the new tool's); a tool the agent lacks is a bare ``ToolInfo(name)``."""
        name = self.call.name
        info = self.invocation.tools.get(name)
        return ToolInfo(name) if info is None else info
