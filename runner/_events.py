"""What a run leaves behind: typed event records and the ``RunResult``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from hooks import Message, ModelResponse, ToolCall, ToolResult

__all__ = [
    "ErrorEvent",
    "Event",
    "ModelResponseEvent",
    "RunResult",
    "RunStatus",
    "StopEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "UserMessageEvent",
]

RunStatus: TypeAlias = Literal["completed", "stopped"]
"""How a run ended: ``"completed"`` with an answer, or ``"stopped"`` by a ``StopRun``."""


@dataclass(frozen=True, slots=True)
class _Record:
    # Where and when, positional first; each record's own fields are keyword-only.
    agent: str
    branch: str
    time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessageEvent(_Record):
    """A message an agent was asked to answer (the user's, or a parent agent's request)."""

    message: Message


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponseEvent(_Record):
    """A model answer the agent went on with (a ``Halt``'s or ``Fallback``'s included)."""

    response: ModelResponse


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEvent(_Record):
    """A tool call the model asked for, before its hooks ran."""

    call: ToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultEvent(_Record):
    """The result the model got for ``call`` (``result.is_error`` for a failed call)."""

    call: ToolCall
    result: ToolResult


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent(_Record):
    """An error that ended an operation: a tool error the model will see, or a run failure."""

    error: BaseException
    operation: Literal["model", "tool", "agent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StopEvent(_Record):
    """A callback raised ``StopRun(reason)``; the run ended here."""

    reason: str


Event: TypeAlias = (
    UserMessageEvent | ModelResponseEvent | ToolCallEvent | ToolResultEvent | ErrorEvent | StopEvent
)
"""Any event record; ``match`` on it is exhaustive over the six kinds."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """The end of a run.

    ``output`` is the final answer's text (``""`` when stopped before one),
    ``status`` is ``"completed"`` or ``"stopped"`` (then ``stop_reason`` says why),
    ``events`` is the run's record in order, and ``session_id`` continues the
    conversation in a later ``run``.
    """

    output: str
    events: tuple[Event, ...]
    status: RunStatus
    stop_reason: str | None = None
    session_id: str = ""
    response: ModelResponse | None = None
