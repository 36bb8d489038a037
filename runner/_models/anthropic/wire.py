"""hookline's vocabulary to Anthropic's Messages API and back.

Requests: the system messages at the start of the conversation (the agent's
instruction) become the top-level ``system`` text; the rest become ``user`` and
``assistant`` messages of content blocks. An assistant turn sends back its Anthropic
reasoning first (each ``thinking`` / ``redacted_thinking`` block exactly as it came,
in order), then its text, then its tool calls as ``tool_use`` blocks. Tool results
become ``tool_result`` blocks (``tool_use_id``; ``is_error`` when the result is an
error) of one user message: consecutive results go together, as the API requires.
Images become ``image`` blocks (base64 or URL), PDF and plain-text files ``document``
blocks, in a user message or inside a ``tool_result``.
What the API cannot carry (a system message after the conversation has started, an
image or file type it does not take, reasoning text that is no JSON object) is refused
with a ``ValueError`` naming the message, never dropped; another provider's reasoning is
left out, counted in ``Wire.left_out`` for the model to log. A message's ``name`` is
not sent: the API has no field for it.

Responses are the API's JSON as ``json.loads`` reads it (plain dicts, no SDK types):
text blocks joined, ``tool_use`` blocks as tool calls, thinking blocks as
``ReasoningPart("anthropic", payload, summary)``, usage and the stop reason mapped
(``finish_reason``, ``usage_of``). This module imports nothing of the SDK.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast, final

from hooks import (
    FilePart,
    ImagePart,
    Message,
    ModelResponse,
    OutputSpec,
    ReasoningPart,
    ToolCall,
    ToolSpec,
    Usage,
)
from runner._tools.arguments import parse_arguments
from runner._tools.output import closed

__all__ = [
    "PROVIDER",
    "Wire",
    "finish_reason",
    "from_message",
    "output_format",
    "payload_of",
    "reasoning_part",
    "to_tools",
    "to_wire",
    "tool_arguments",
    "usage_of",
]

PROVIDER: Final = "anthropic"
# A tool offered without a schema takes no arguments; the API requires an object schema.
_NO_PARAMETERS: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}
_IMAGE_TYPES: Final = frozenset(("image/jpeg", "image/png", "image/gif", "image/webp"))
_REASONING_TYPES: Final = frozenset(("thinking", "redacted_thinking"))
# The API's stop reasons in hookline's (OpenAI's) words; any other passes as it came.
_FINISH: Final[Mapping[str, str]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


@final
class Wire:
    """A conversation in the Messages API's terms: ``system`` text (``None`` if none),
    ``messages``, and how many reasoning parts of each other provider were left out."""

    __slots__ = ("left_out", "messages", "system")

    def __init__(
        self, system: str | None, messages: list[dict[str, Any]], left_out: Counter[str]
    ) -> None:
        self.system: Final = system
        self.messages: Final = messages
        self.left_out: Final = left_out


def to_wire(messages: Sequence[Message]) -> Wire:
    """The conversation as the Messages API takes it (the module docstring says how)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    left_out: Counter[str] = Counter()
    results: list[dict[str, Any]] | None = None  # the tool_result blocks being gathered
    started = False
    for message in messages:
        role = message.role
        if role == "system":
            if started:
                raise _cannot(
                    message,
                    "a system message after the conversation started (the Messages API "
                    "takes system text only at the top); put it in the agent's instruction "
                    "or in a user message",
                )
            system.append(message.content)
            continue
        started = True
        if role == "tool":
            block = _tool_result(message)
            if results is None:
                results = [block]
                out.append({"role": "user", "content": results})
            else:
                results.append(block)
            continue
        results = None
        if role == "assistant":
            out.append({"role": "assistant", "content": _assistant(message, left_out)})
        else:
            out.append({"role": "user", "content": _user(message)})
    return Wire("\n\n".join(system) if system else None, out, left_out)


def _user(message: Message) -> str | list[dict[str, Any]]:
    """A user message's content: its text alone, or text then image and document blocks."""
    if not message.parts:
        return message.content
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(_media(message, part) for part in message.parts)
    return blocks


def _assistant(message: Message, left_out: Counter[str]) -> str | list[dict[str, Any]]:
    """An assistant turn: its own reasoning blocks as they came, text, then tool calls."""
    if not message.parts and not message.tool_calls:
        return message.content
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if type(part) is not ReasoningPart:
            continue  # the record allows nothing else on an assistant message
        if part.provider != PROVIDER:
            left_out[part.provider] += 1
            continue
        blocks.append(payload_of(message, part))
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.args)}
        for call in message.tool_calls
    )
    return blocks


def payload_of(message: Message, part: ReasoningPart) -> dict[str, Any]:
    """The thinking block ``part`` holds, exactly as the API sent it."""
    try:
        block: object = json.loads(part.payload)
    except ValueError:
        block = None
    if not isinstance(block, dict):
        raise _cannot(message, "an anthropic ReasoningPart whose payload is no JSON object")
    found = cast("dict[str, Any]", block)
    if found.get("type") not in _REASONING_TYPES:
        raise _cannot(
            message, "an anthropic ReasoningPart whose payload is no thinking block (its type)"
        )
    return found


def _tool_result(message: Message) -> dict[str, Any]:
    """A tool message as a ``tool_result`` block: its text, then its images and files."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
    if message.is_error:
        block["is_error"] = True
    if not message.parts:
        block["content"] = message.content
        return block
    content: list[dict[str, Any]] = []
    if message.content:
        content.append({"type": "text", "text": message.content})
    content.extend(_media(message, part) for part in message.parts)
    block["content"] = content
    return block


def _media(message: Message, part: object) -> dict[str, Any]:
    """An image or file as a content block."""
    if type(part) is ImagePart:
        return {"type": "image", "source": _image_source(message, part)}
    if type(part) is FilePart:
        document: dict[str, Any] = {"type": "document", "source": _file_source(message, part)}
        if part.name is not None:
            document["title"] = part.name
        return document
    raise _cannot(message, f"a {type(part).__name__} in a {message.role} message")


def _image_source(message: Message, part: ImagePart) -> dict[str, Any]:
    data, media_type = part.data, part.media_type
    if data is None:
        url = part.url or ""
        if not url.startswith("data:"):
            return {"type": "url", "url": url}
        media_type, data = _data_url(message, url)
    if media_type not in _IMAGE_TYPES:
        raise _cannot(
            message,
            f"an image of type {media_type!r} (it takes {', '.join(sorted(_IMAGE_TYPES))}); "
            "convert it first",
        )
    return {"type": "base64", "media_type": media_type, "data": _b64(data)}


def _file_source(message: Message, part: FilePart) -> dict[str, Any]:
    data, media_type = part.data, part.media_type
    if data is None:
        url = part.url or ""
        if not url.startswith("data:"):
            return {"type": "url", "url": url}  # the API fetches a PDF by URL
        media_type, data = _data_url(message, url)
    if media_type == "application/pdf":
        return {"type": "base64", "media_type": media_type, "data": _b64(data)}
    if media_type == "text/plain":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise _cannot(message, "a text/plain file that is not UTF-8") from None
        return {"type": "text", "media_type": media_type, "data": text}
    raise _cannot(
        message,
        f"a file of type {media_type!r} (documents are application/pdf or text/plain); "
        "convert it, or send its text",
    )


def _data_url(message: Message, url: str) -> tuple[str, bytes]:
    """A ``data:<type>;base64,<data>`` URL's media type and bytes."""
    head, comma, encoded = url.partition(",")
    media_type, _, encoding = head.removeprefix("data:").partition(";")
    if not comma or encoding != "base64" or not media_type:
        raise _cannot(message, "a data: URL that is not data:<media type>;base64,<data>")
    try:
        return media_type, base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise _cannot(message, "a data: URL whose data is not base64") from None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _cannot(message: Message, what: str) -> ValueError:
    """The error refusing what ``message`` holds."""
    where = f" (tool call {message.tool_call_id!r})" if message.tool_call_id else ""
    return ValueError(
        f"the Anthropic Messages API cannot carry {what}: in a {message.role} message{where}"
    )


def to_tools(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The tools the model may call: name, description and JSON schema (``input_schema``)."""
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "input_schema": dict(spec.parameters or _NO_PARAMETERS),
        }
        for spec in specs
    ]


def output_format(spec: OutputSpec) -> dict[str, Any]:
    """The answer's required shape as ``output_config.format``: a ``json_schema`` format
    (the API takes no name, description or strict flag: the schema is enforced), every
    object closed (``additionalProperties: false``), as the API requires."""
    return {"type": "json_schema", "schema": closed(spec.schema)}


def from_message(body: Mapping[str, Any]) -> ModelResponse:
    """A ``message`` object as a ``ModelResponse``.

    Text blocks joined in order; ``tool_use`` blocks as calls (their ``input``);
    ``thinking`` and ``redacted_thinking`` blocks as reasoning parts, in order; other
    blocks (server tools' results, which hookline never asks for) are not read. A field
    of the wrong type is a ``TypeError``, for the caller to name the body.
    """
    content: object = body.get("content")
    if not isinstance(content, list):
        msg = f"content must be a list of blocks, got {type(content).__name__}"
        raise TypeError(msg)
    texts: list[str] = []
    calls: list[ToolCall] = []
    parts: list[ReasoningPart] = []
    for item in cast("list[object]", content):
        block = _block(item)
        kind = block.get("type")
        if kind == "text":
            texts.append(_str(block.get("text"), "a text block's text"))
        elif kind == "tool_use":
            calls.append(
                ToolCall(
                    _str(block.get("id"), "a tool_use block's id"),
                    _str(block.get("name"), "a tool_use block's name"),
                    tool_arguments(block.get("input")),
                )
            )
        elif kind in _REASONING_TYPES:
            parts.append(reasoning_part(block))
    return ModelResponse(
        "".join(texts),
        tuple(calls),
        usage_of(body.get("usage")),
        finish_reason(body.get("stop_reason")),
        _model(body.get("model")),
        tuple(parts),
    )


def reasoning_part(block: Mapping[str, Any]) -> ReasoningPart:
    """A thinking block as a reasoning part: the block as compact JSON text, in the order
    its fields came (its ``signature`` or ``data`` included); the thinking text as the
    summary (``""`` for a ``redacted_thinking`` block)."""
    payload = json.dumps(block, ensure_ascii=False, separators=(",", ":"))
    thinking = block.get("thinking") if block.get("type") == "thinking" else ""
    return ReasoningPart(PROVIDER, payload, thinking if isinstance(thinking, str) else "")


def tool_arguments(value: object) -> Mapping[str, Any]:
    """A ``tool_use`` block's ``input``: the object itself, else an ``UnparsedArguments``."""
    if isinstance(value, dict):
        return cast("dict[str, Any]", value)
    return parse_arguments(json.dumps(value))


def finish_reason(value: object) -> str | None:
    """The stop reason in hookline's words: ``end_turn`` / ``stop_sequence`` -> ``"stop"``,
    ``tool_use`` -> ``"tool_calls"``, ``max_tokens`` (and ``model_context_window_exceeded``)
    -> ``"length"``, ``refusal`` -> ``"content_filter"``; ``pause_turn`` and any other
    as it came."""
    if value is None:
        return None
    reason = _str(value, "stop_reason")
    return _FINISH.get(reason, reason)


def usage_of(value: object) -> Usage | None:
    """The API's usage as hookline counts it.

    The API's ``input_tokens`` leaves out the tokens read from the prompt cache and those
    written to it; ``Usage.input_tokens`` is the whole input: ``input_tokens +
    cache_creation_input_tokens + cache_read_input_tokens``; ``cached_tokens`` the part
    read from the cache (``cache_read_input_tokens``); the tokens written to the cache
    count as input only. ``reasoning_tokens`` is ``output_tokens_details.thinking_tokens``
    when the API gives it, else 0. Absent counts are 0.
    """
    if value is None:
        return None
    usage = _block(value)
    cached = _count(usage, "cache_read_input_tokens")
    details = usage.get("output_tokens_details")
    thinking = _count(_block(details), "thinking_tokens") if details is not None else 0
    return Usage(
        _count(usage, "input_tokens") + _count(usage, "cache_creation_input_tokens") + cached,
        _count(usage, "output_tokens"),
        cached,
        thinking,
    )


def _count(usage: Mapping[str, Any], name: str) -> int:
    value: object = usage.get(name)
    if value is None:
        return 0
    if type(value) is not int or value < 0:
        msg = f"usage.{name} must be an int >= 0, got {value!r:.40}"
        raise TypeError(msg)
    return value


def _block(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        msg = f"expected a JSON object, got {type(value).__name__} {value!r:.40}"
        raise TypeError(msg)
    return cast("dict[str, Any]", value)


def _str(value: object, what: str) -> str:
    if not isinstance(value, str):
        msg = f"{what} must be a string, got {type(value).__name__} {value!r:.40}"
        raise TypeError(msg)
    return value


def _model(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
