"""How many tokens a request's input may take, estimated from its text (for ``Budget``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, TypeVar, final

from hooks._messages import Message, ModelRequest, ToolSpec

__all__ = ["Sizes", "estimate_tokens"]

_REMEMBERED: Final = 4096  # records whose size one Sizes remembers

R = TypeVar("R")


def estimate_tokens(request: ModelRequest, /, sizes: Sizes | None = None) -> int:
    """An estimate of ``request``'s input tokens: one per four characters of its text.

    Counted: each message's text and its tool calls' names and arguments (as JSON), and
    the tools' names, descriptions and parameter schemas (as JSON); not counted: images
    and files. Four characters a token is the usual rule for English text; code, other
    scripts and a provider's own framing can take more, which the settled usage shows.
    ``sizes`` remembers what was measured, for the next request of the same run.
    """
    chars = 0
    for message in request.messages:
        chars += len(message.content)
        if message.tool_calls:
            chars += calls_size(message) if sizes is None else sizes.of(message, calls_size)
    tools = request.tools
    if tools:
        chars += _tools_size(tools) if sizes is None else sizes.of(tools, _tools_size)
    return -(-chars // 4)


def calls_size(message: Message) -> int:
    """The characters of ``message``'s tool calls: their names and JSON arguments."""
    return sum(len(call.name) + len(_json(call.args)) for call in message.tool_calls)


def _tools_size(tools: tuple[ToolSpec, ...]) -> int:
    return sum(
        len(spec.name) + len(spec.description) + len(_json(spec.parameters)) for spec in tools
    )


@final
class Sizes:
    """The sizes of records that take a JSON dump to measure (a message's tool calls, a
    request's tools), remembered by identity: every model call of a run measures its
    transcript again, and that is mostly the same records. An entry keeps its record
    alive, so its id is no other object's while it is remembered; past ``_REMEMBERED``
    entries the memory starts over."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, tuple[object, int]] = {}

    def of(self, record: R, measure: Callable[[R], int], /) -> int:
        """``measure(record)``, measured once while remembered."""
        known = self._known
        found = known.get(id(record))
        if found is not None and found[0] is record:
            return found[1]
        size = measure(record)
        if len(known) >= _REMEMBERED:
            known.clear()
        known[id(record)] = (record, size)
        return size


def _json(value: object) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):  # keys that are not strings: the value's own repr
        return repr(value)
