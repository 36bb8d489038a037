"""A streamed response read event by event: the deltas as they come, then the answer.

With ``stream: true`` the Responses API sends typed server-sent events, each one's
``type`` in its data: ``response.created`` and ``response.in_progress`` (the response
so far), ``response.output_item.added`` (an item begins: a ``function_call`` with its
``call_id`` and ``name``), ``response.output_text.delta`` and ``response.refusal.delta``
(pieces of text), ``response.function_call_arguments.delta`` (pieces of a call's
arguments, naming the item by ``output_index``), ``response.output_item.done`` (an item
whole: a reasoning item's ``encrypted_content`` is complete only here), and one last
event: ``response.completed`` or ``response.incomplete`` with the whole response, or
``response.failed`` with its ``error``. An ``error`` event reports a failure mid-stream.
Other events (``.done`` events repeating what the deltas said, hosted tools' progress)
add nothing here.

``ResponsesStreamReader`` turns each event into hookline's deltas and, at the end,
gives the ``ModelResponse``, mapped from the final response as ``from_response`` maps an
answer that is not streamed; when the final response lists no output (a server that
sends it bare) the items of the ``output_item.done`` events stand in. ``response.failed``
and ``error`` events are not read here: the model raises them as the SDK's errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

from hooks import ModelResponse
from runner._events import TextDelta, ToolCallDelta
from runner._models.openai.responses_wire import from_response

__all__ = ["TERMINAL", "ResponsesStreamReader"]

TERMINAL: Final = frozenset({"response.completed", "response.incomplete"})
"""The events that end a response with an answer."""


@final
class ResponsesStreamReader:
    """Reads one streamed response: ``read(event)`` per event's data, then ``response()``.

    A ``ToolCallDelta``'s ``index`` is the call's position among the response's function
    calls (the order their items began), as in the final ``ModelResponse``.
    """

    __slots__ = ("_calls", "_done", "_final", "_id", "_model")

    def __init__(self) -> None:
        self._id = ""
        self._model: str | None = None
        self._calls: dict[object, int] = {}  # output_index -> the call's position
        self._done: dict[int, Mapping[str, Any]] = {}  # output_index -> the item, whole
        self._final: Mapping[str, Any] | None = None

    @property
    def finished(self) -> bool:
        """Whether the final event (``response.completed`` / ``.incomplete``) was read."""
        return self._final is not None

    @property
    def response_id(self) -> str:
        """The response's id, as the last event naming it said (``""`` before any)."""
        return self._id

    def read(self, event: Mapping[str, Any]) -> list[TextDelta | ToolCallDelta]:
        """The deltas ``event`` holds (one or none)."""
        kind = event.get("type")
        if kind in {"response.output_text.delta", "response.refusal.delta"}:
            delta = _text(event.get("delta"))
            return [TextDelta(delta)] if delta else []
        if kind == "response.function_call_arguments.delta":
            delta = _text(event.get("delta"))
            position = self._position(event.get("output_index"))
            return [ToolCallDelta(position, None, None, delta)] if delta else []
        if kind == "response.output_item.added":
            item = _object(event.get("item"), "output_item.added.item")
            if item.get("type") == "function_call":
                position = self._position(event.get("output_index"))
                call_id = _text(item.get("call_id")) or None
                name = _text(item.get("name")) or None
                return [ToolCallDelta(position, call_id, name, _text(item.get("arguments")))]
            return []
        if kind == "response.output_item.done":
            index = event.get("output_index")
            if type(index) is not int:
                msg = f"output_item.done's output_index must be an int, got {index!r:.40}"
                raise TypeError(msg)
            self._done[index] = _object(event.get("item"), "output_item.done.item")
            return []
        if kind in TERMINAL or kind in {"response.created", "response.in_progress"}:
            response = _object(event.get("response"), f"{kind}.response")
            self._id = _text(response.get("id")) or self._id
            self._model = _text(response.get("model")) or self._model
            if kind in TERMINAL:
                self._final = response
        return []

    def _position(self, output_index: object) -> int:
        """The position of the call at ``output_index``; a new call if none began there."""
        position = self._calls.get(output_index)
        if position is None:
            position = self._calls[output_index] = len(self._calls)
        return position

    def response(self) -> ModelResponse:
        """The whole answer, from the final response (its model the one the stream named
        when it names none itself). Before the final event, a ``ValueError``."""
        final = self._final
        if final is None:
            msg = f"the response stream {self._id!r} ended without response.completed"
            raise ValueError(msg)
        if not final.get("output") and self._done:
            final = {**final, "output": [self._done[index] for index in sorted(self._done)]}
        if not final.get("model") and self._model:
            final = {**final, "model": self._model}
        return from_response(final)


def _text(value: object) -> str:
    """``value``, a piece of text (``""`` for null); anything else is a ``TypeError``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    msg = f"expected a str or null, got {type(value).__name__} {value!r:.40}"
    raise TypeError(msg)


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        msg = f"{what} must be a JSON object, got {type(value).__name__} {value!r:.40}"
        raise TypeError(msg)
    return value  # pyright: ignore[reportUnknownVariableType]  # json.loads made it
