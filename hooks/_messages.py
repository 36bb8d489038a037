"""The vocabulary the built-in hook points speak: messages, requests, responses, tools.

The runner fills these; they live in ``hooks`` so callbacks import nothing else.
All are frozen slotted dataclasses: a hook that wants a change builds a new one
(``dataclasses.replace``) and returns it in a ``Cont``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = ["Message", "ModelRequest", "ModelResponse", "Role", "ToolCall", "ToolResult", "ToolSpec"]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model's request to run tool ``name`` with ``args``; ``id`` pairs it with its result."""

    id: str
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation.

    An assistant message may carry ``tool_calls``; a tool result reaches the model as a
    message with role ``"tool"`` whose ``tool_call_id`` names the call it answers.
    """

    role: Role
    content: str
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, description and a JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What the model receives: the conversation so far and the tools it may call.

    ``messages`` is any immutable sequence: a tuple, or the runner's transcript, which
    grows without copying; compare and index it like a tuple, and build a changed
    request with a tuple (``replace(request, messages=(*request.messages, extra))``).
    """

    messages: Sequence[Message]
    tools: tuple[ToolSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What the model answers: text, tool calls, or both."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's answer as the model will see it; ``is_error`` marks a failed call."""

    content: str
    is_error: bool = False
