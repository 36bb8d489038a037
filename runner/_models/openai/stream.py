"""A streamed chat completion read chunk by chunk: the deltas as they come, then the answer.

With ``stream=True`` a Chat Completions endpoint sends ``chat.completion.chunk`` objects:
the first choice's ``delta`` holds a piece of ``content`` (or of a ``refusal``) and
pieces of tool calls, each naming its call by ``index`` (the first piece carries the
call's ``id`` and ``function.name``, the rest pieces of ``function.arguments``); a
chunk ends the choice with its ``finish_reason``; with ``stream_options:
{"include_usage": true}`` a last chunk carries ``usage`` and no choices (vLLM sends
``"choices": null`` there). ``StreamReader`` turns each chunk into hookline's deltas
and, at the end, gives the whole ``ModelResponse``, mapped as ``from_completion``
maps a completion that is not streamed.

Servers differ, and a reader that followed only OpenAI's own streams would drop or mix
up tool calls elsewhere: some start at an ``index`` above 0, or leave ``index`` out
(Gemini's compatible endpoint: a piece with a new ``id`` opens a call, one without
continues the last), or repeat the ``id`` and name in every piece (the first is kept).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast, final

from hooks import ModelResponse, ToolCall
from runner._events import TextDelta, ToolCallDelta
from runner._models.openai.wire import usage_of
from runner._tools.arguments import parse_arguments

if TYPE_CHECKING:
    from openai.types import CompletionUsage
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

__all__ = ["StreamReader"]


@final
class _Call:
    """One tool call as its pieces arrive: its position in the response, its id and name
    once known, its argument text."""

    __slots__ = ("arguments", "id", "name", "position")

    def __init__(self, position: int) -> None:
        self.position = position
        self.id: str | None = None
        self.name: str | None = None
        self.arguments: list[str] = []


@final
class StreamReader:
    """Reads one streamed completion: ``read(chunk)`` per chunk, then ``response()``.

    A ``ToolCallDelta``'s ``index`` is the call's position in the final response (the
    order in which calls first appeared), whatever indices the server sent.
    """

    __slots__ = (
        "_answered",
        "_by_index",
        "_calls",
        "_content",
        "_finish",
        "_id",
        "_model",
        "_refusal",
        "_usage",
    )

    def __init__(self) -> None:
        self._id = ""
        self._model: str | None = None
        self._answered = False
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._finish: str | None = None
        self._usage: CompletionUsage | None = None

    @property
    def answered(self) -> bool:
        """Whether a chunk held the answer's choice."""
        return self._answered

    @property
    def finished(self) -> bool:
        """Whether the answer's choice ended with a finish reason."""
        return self._finish is not None

    @property
    def completion_id(self) -> str:
        """The completion's id, as the last chunk named it (``""`` before any)."""
        return self._id

    def read(self, chunk: ChatCompletionChunk) -> list[TextDelta | ToolCallDelta]:
        """The deltas ``chunk`` holds for the first choice, in order (often one, or none)."""
        # A server may leave out what the SDK's type calls required: absent reads as None.
        self._id = getattr(chunk, "id", None) or self._id
        self._model = getattr(chunk, "model", None) or self._model
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._usage = usage
        out: list[TextDelta | ToolCallDelta] = []
        for choice in getattr(chunk, "choices", None) or ():  # null in vLLM's usage chunk
            if choice.index:
                continue  # another of n choices: the answer is the first, as unstreamed
            self._answered = True
            delta = choice.delta
            content, refusal = _text(delta.content), _text(delta.refusal)
            if content:
                self._content.append(content)
                out.append(TextDelta(content))
            if refusal:
                self._refusal.append(refusal)
                out.append(TextDelta(refusal))
            for piece in delta.tool_calls or ():
                call_delta = self._piece(piece)
                if call_delta is not None:
                    out.append(call_delta)
            if choice.finish_reason is not None:
                self._finish = choice.finish_reason
        return out

    def _piece(self, piece: ChoiceDeltaToolCall) -> ToolCallDelta | None:
        """Add ``piece`` to its call; the delta it makes, or ``None`` if it adds nothing."""
        call = self._call_of(piece)
        function = piece.function
        name = _text(function.name) if function is not None else None
        arguments = _text(function.arguments if function is not None else None) or ""
        piece_id = _text(piece.id)
        new_id = piece_id if piece_id and call.id is None else None
        new_name = name if name and call.name is None else None
        if new_id is not None:
            call.id = new_id
        if new_name is not None:
            call.name = new_name
        if arguments:
            call.arguments.append(arguments)
        elif new_id is None and new_name is None:
            return None
        return ToolCallDelta(call.position, new_id, new_name, arguments)

    def _call_of(self, piece: ChoiceDeltaToolCall) -> _Call:
        # Typed int, but a server may leave it out (the SDK reads absent as None).
        index = cast("object", piece.index)
        if isinstance(index, bool) or not isinstance(index, int | None):
            msg = f"a tool call's index must be an int, got {index!r:.40}"
            raise TypeError(msg)
        if index is not None:
            call = self._by_index.get(index)
            if call is None:
                call = self._by_index[index] = self._open()
            return call
        if not self._calls or (piece.id and _text(piece.id) != self._calls[-1].id):
            return self._open()
        return self._calls[-1]

    def _open(self) -> _Call:
        call = _Call(len(self._calls))
        self._calls.append(call)
        return call

    def response(self) -> ModelResponse:
        """The whole answer: text, tool calls (arguments parsed), usage, finish reason and
        the model that answered.

        Text is the content, else the refusal, as unstreamed. A call that came without an
        id gets ``call_<n>``, its position. A stream that held no choice is a ``ValueError``.
        """
        if not self._answered:
            msg = f"the chat completion stream {self._id!r} held no choices, so no answer"
            raise ValueError(msg)
        return ModelResponse(
            "".join(self._content) or "".join(self._refusal),
            tuple(
                ToolCall(
                    call.id or f"call_{call.position}",
                    call.name or "",
                    parse_arguments("".join(call.arguments)),
                )
                for call in self._calls
            ),
            usage_of(self._usage),
            self._finish,
            self._model,
        )


def _text(value: object) -> str | None:
    """``value``, a piece of text or ``None``; anything else is a ``TypeError``."""
    if value is None or isinstance(value, str):
        return value
    msg = f"expected a str or null, got {type(value).__name__} {value!r:.40}"
    raise TypeError(msg)
