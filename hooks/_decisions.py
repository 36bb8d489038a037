"""A human's decision on a paused tool call: ``Approve``, ``Edit``, ``Reject`` or ``Respond``.

A before hook that returned ``Pause`` sees the decision as ``ctx.decision`` when the
run is resumed (``None`` on a first pass), so a guard can still refuse edited
arguments. What each decision does when the guards let the call through:

- ``Approve()``: the call runs as the model asked;
- ``Edit(args)``: the call runs with ``args`` instead;
- ``Reject(message)``: the call does not run; the model sees an error tool result
  carrying ``message``;
- ``Respond(value)``: the answer to a question a tool asked during its call (an MCP
  server's elicitation: a request of kind ``"input"``), validated against the schema
  the server sent; the call goes on with it. ``Reject`` declines such a question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias, final

from hooks._slots import slot_init

__all__ = ["Approve", "Decision", "Edit", "Reject", "Respond"]


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Approve:
    """Run the paused call as the model asked."""


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Edit:
    """Run the paused call with ``args`` in place of the model's arguments."""

    args: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        args: object = self.args
        if not isinstance(args, Mapping) or not all(isinstance(key, str) for key in args):
            msg = f"Edit args must be a mapping of str keys, got {args!r:.80}"
            raise TypeError(msg)
        object.__setattr__(self, "args", MappingProxyType(dict(args)))

    def __eq__(self, other: object) -> bool:
        return type(other) is Edit and dict(self.args) == dict(other.args)

    def __hash__(self) -> int:
        return hash((Edit, repr(sorted(self.args.items()))))


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Reject:
    """Do not run the paused call; the model sees an error result saying ``message``."""

    message: str = "the call was rejected"

    def __post_init__(self) -> None:
        message: object = self.message
        if not isinstance(message, str):
            msg = f"Reject message must be a str, got {type(message).__name__} {message!r:.60}"
            raise TypeError(msg)


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Respond:
    """Answer the question a paused call's tool asked with ``value`` (a JSON object of
    str keys, which must fit the question's schema)."""

    value: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        value: object = self.value
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            msg = f"Respond value must be a mapping of str keys (a JSON object), got {value!r:.80}"
            raise TypeError(msg)
        object.__setattr__(self, "value", MappingProxyType(dict(value)))

    def __eq__(self, other: object) -> bool:
        return type(other) is Respond and dict(self.value) == dict(other.value)

    def __hash__(self) -> int:
        return hash((Respond, repr(sorted(self.value.items()))))


Decision: TypeAlias = Approve | Edit | Reject | Respond
"""What a human decides on a paused call."""
