"""A streamed Messages API answer read event by event: the deltas as they come, then the answer.

With ``stream: true`` the API sends server-sent events, each one's data a JSON object whose
``type`` names it: ``message_start`` (the message with its model and first usage),
then per content block ``content_block_start`` (the block, empty: a ``tool_use`` with its
``id`` and ``name``), ``content_block_delta`` pieces (``text_delta``,
``input_json_delta`` with a piece of the tool's input as JSON text, ``thinking_delta``,
``signature_delta``) and ``content_block_stop``; ``message_delta`` (the ``stop_reason``
and the cumulative usage), ``message_stop``; ``ping`` at any time. ``StreamReader`` turns
each event into hookline's deltas (text and tool calls; thinking has none) and, at the
end, the whole ``ModelResponse``, mapped as ``from_message`` maps an answer that is
not streamed: a thinking block's payload is the block rebuilt with its whole
``thinking`` and ``signature``, its fields in the order they came. An ``error`` event is
the model's to raise; this module imports nothing of the SDK.
"""

from __future__ import annotations

import json
from typing import Any, Final, cast, final

from hooks import ModelResponse, ReasoningPart, ToolCall
from runner._events import TextDelta, ToolCallDelta
from runner._models.anthropic.wire import (
    finish_reason,
    reasoning_part,
    tool_arguments,
    usage_of,
)
from runner._tools.arguments import parse_arguments

__all__ = ["StreamReader"]

_USAGE_COUNTS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens_details",
)


@final
class _Block:
    """One content block as its pieces arrive: how it started, and its pieces by field."""

    __slots__ = ("pieces", "position", "start")

    def __init__(self, start: dict[str, Any], position: int) -> None:
        self.start: Final = start
        self.position: Final = position  # a tool call's position among the calls
        self.pieces: dict[str, list[str]] = {}

    def add(self, name: str, piece: str) -> None:
        self.pieces.setdefault(name, []).append(piece)

    def field(self, name: str) -> str:
        """The field's text: as it started, then its pieces."""
        first: object = self.start.get(name)
        return (first if isinstance(first, str) else "") + "".join(self.pieces.get(name, ()))

    def whole(self) -> dict[str, Any]:
        """The block with every streamed field joined, its fields in the order they came."""
        block = dict(self.start)
        for name in self.pieces:
            block[name] = self.field(name)
        return block


@final
class StreamReader:
    """Reads one streamed message: ``read(event)`` per event's data, then ``response()``."""

    __slots__ = ("_blocks", "_calls", "_ended", "_model", "_started", "_stop", "_usage")

    def __init__(self) -> None:
        self._started = False
        self._ended = False
        self._model: str | None = None
        self._blocks: dict[int, _Block] = {}
        self._calls = 0
        self._stop: object = None
        self._usage: dict[str, Any] | None = None

    @property
    def started(self) -> bool:
        """Whether ``message_start`` came."""
        return self._started

    @property
    def ended(self) -> bool:
        """Whether ``message_stop`` came."""
        return self._ended

    def read(self, data: dict[str, Any]) -> list[TextDelta | ToolCallDelta]:
        """The deltas one event holds (often one, or none). A field of the wrong type is a
        ``TypeError``."""
        kind = data.get("type")
        if kind == "content_block_delta":
            return self._delta(data)
        if kind == "content_block_start":
            return self._start(data)
        if kind == "message_start":
            message = _object(data.get("message"), "message_start's message")
            self._started = True
            model: object = message.get("model")
            self._model = model if isinstance(model, str) and model else self._model
            self._merge(message.get("usage"))
        elif kind == "message_delta":
            delta = _object(data.get("delta"), "message_delta's delta")
            reason: object = delta.get("stop_reason")
            if reason is not None:
                self._stop = reason
            self._merge(data.get("usage"))
        elif kind == "message_stop":
            self._ended = True
        return []  # ping, content_block_stop, and events this reader does not know

    def _start(self, data: dict[str, Any]) -> list[TextDelta | ToolCallDelta]:
        index = _index(data)
        start = dict(_object(data.get("content_block"), "content_block_start's block"))
        block = self._blocks[index] = _Block(start, self._calls)
        kind = start.get("type")
        if kind == "tool_use":
            self._calls += 1
            call_id, name = _text(start.get("id")), _text(start.get("name"))
            return [ToolCallDelta(block.position, call_id or None, name or None, "")]
        if kind == "text":
            text = _text(start.get("text"))
            return [TextDelta(text)] if text else []
        return []

    def _delta(self, data: dict[str, Any]) -> list[TextDelta | ToolCallDelta]:
        index = _index(data)
        block = self._blocks.get(index)
        if block is None:
            msg = f"content_block_delta for block {index}, which never started"
            raise TypeError(msg)
        delta = _object(data.get("delta"), "content_block_delta's delta")
        kind = delta.get("type")
        if kind == "text_delta":
            text = _text(delta.get("text"))
            block.add("text", text)
            return [TextDelta(text)] if text else []
        if kind == "input_json_delta":
            piece = _text(delta.get("partial_json"))
            block.add("input", piece)
            return [ToolCallDelta(block.position, None, None, piece)] if piece else []
        if kind == "thinking_delta":
            block.add("thinking", _text(delta.get("thinking")))
        elif kind == "signature_delta":
            block.add("signature", _text(delta.get("signature")))
        return []  # citations and deltas this reader does not know add no text

    def _merge(self, value: object) -> None:
        """Keep the usage's counts; a later event's counts (cumulative) replace earlier ones."""
        if value is None:
            return
        usage = _object(value, "usage")
        merged = self._usage if self._usage is not None else {}
        for name in _USAGE_COUNTS:
            if usage.get(name) is not None:
                merged[name] = usage[name]
        self._usage = merged

    def response(self) -> ModelResponse:
        """The whole answer: text, tool calls (arguments parsed), reasoning, usage, stop
        reason and the model that answered."""
        texts: list[str] = []
        calls: list[ToolCall] = []
        parts: list[ReasoningPart] = []
        for _, block in sorted(self._blocks.items()):
            kind = block.start.get("type")
            if kind == "text":
                texts.append(block.field("text"))
            elif kind == "tool_use":
                calls.append(
                    ToolCall(
                        _text(block.start.get("id")) or f"toolu_{block.position}",
                        _text(block.start.get("name")),
                        _arguments(block),
                    )
                )
            elif kind in {"thinking", "redacted_thinking"}:
                parts.append(reasoning_part(block.whole()))
        return ModelResponse(
            "".join(texts),
            tuple(calls),
            usage_of(self._usage),
            finish_reason(self._stop),
            self._model,
            tuple(parts),
        )


def _arguments(block: _Block) -> Any:
    """A streamed call's input: its JSON pieces parsed, or the start's ``input`` when none
    came (a tool that takes no arguments)."""
    pieces = block.pieces.get("input")
    if not pieces or not "".join(pieces).strip():
        return tool_arguments(block.start.get("input", {}))
    return parse_arguments("".join(pieces))


def _index(data: dict[str, Any]) -> int:
    index: object = data.get("index")
    if type(index) is not int or index < 0:
        msg = f"a content block's index must be an int >= 0, got {index!r:.40}"
        raise TypeError(msg)
    return index


def _object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        msg = f"{what} must be a JSON object, got {type(value).__name__} {value!r:.40}"
        raise TypeError(msg)
    return cast("dict[str, Any]", value)


def _text(value: object) -> str:
    """``value`` as text: ``None`` is ``""``, anything else but a str a ``TypeError``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    msg = f"expected a string, got {type(value).__name__} {json.dumps(value)[:40]}"
    raise TypeError(msg)
