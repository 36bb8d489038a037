"""hookline's vocabulary to the Responses API's wire format and back.

Requests (``to_input``): the system messages that open the conversation become the
request's ``instructions`` (joined by a blank line, in order); a system message later in
the conversation stays where it is, as a ``system`` message item. A user message is a
``message`` item whose content is ``input_text``, then ``input_image`` (``image_url``: a
URL or a ``data:`` URL) and ``input_file`` (``file_data``: a ``data:`` URL with a
``filename``; or ``file_url``, with a ``filename`` when the part has a name) parts. An
assistant message is, in order, its OpenAI reasoning items (each ``ReasoningPart``
payload read back unchanged), its text as an assistant ``message`` item, and one
``function_call`` item per tool call. A tool result is a ``function_call_output`` item
with the call's ``call_id``: its text, or, when it carries images or files, a list of
``input_text`` / ``input_image`` / ``input_file`` parts. Reasoning parts of another
provider are left out and counted, for the model to log. The Responses API gives
messages no ``name``: a message's name is not sent.

Responses (``from_response``): a ``response`` object's output items -- ``reasoning``
(a ``ReasoningPart("openai", payload, summary)``, the payload the item's JSON as it came,
the summary its summary texts, else its reasoning texts), ``message`` (its
``output_text`` parts, else its ``refusal``), ``function_call`` (a ``ToolCall``: its
``call_id``, name and arguments read by ``parse_arguments``) -- with usage, the model
that answered and a finish reason (``finish_reason``'s docstring says how it is read).
Everything here works on the JSON as ``json.loads`` made it: a field of the wrong shape
is a ``TypeError`` or ``ValueError`` for the model to turn into a ``ProviderError``.
Nothing of the SDK is imported.
"""

from __future__ import annotations

import collections
import json
import mimetypes
from collections.abc import Iterable, Mapping, Sequence
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
from runner._models.openai.wire import data_url
from runner._tools.arguments import parse_arguments

__all__ = [
    "PROVIDER",
    "Input",
    "finish_reason",
    "from_response",
    "output_format",
    "reasoning_part",
    "to_input",
    "to_tools",
    "usage_of",
]

PROVIDER: Final = "openai"
"""The provider whose reasoning parts this format carries back."""

# A tool offered without a schema takes no arguments, said explicitly (as in Chat Completions).
_NO_PARAMETERS: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


@final
class Input:
    """One request's conversation in the Responses format.

    ``instructions`` (``None`` when no system message opens the conversation), the
    ``items`` of ``input``, and ``left_out``: how many reasoning parts of each other
    provider were not sent.
    """

    __slots__ = ("instructions", "items", "left_out")

    def __init__(
        self, instructions: str | None, items: list[dict[str, Any]], left_out: dict[str, int]
    ) -> None:
        self.instructions: Final = instructions
        self.items: Final = items
        self.left_out: Final = left_out


def to_input(messages: Iterable[Message]) -> Input:
    """The conversation as ``instructions`` and ``input`` items, in order."""
    system: list[str] = []
    items: list[dict[str, Any]] = []
    left_out: collections.Counter[str] = collections.Counter()
    for message in messages:
        role = message.role
        if role == "system":
            if items:
                items.append({"type": "message", "role": "system", "content": message.content})
            else:
                system.append(message.content)
        elif role == "user":
            content: object = _content(message) if message.parts else message.content
            items.append({"type": "message", "role": "user", "content": content})
        elif role == "assistant":
            _assistant(message, items, left_out)
        else:
            output: object = _content(message) if message.parts else message.content
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id or "",
                    "output": output,
                }
            )
    return Input("\n\n".join(system) if system else None, items, dict(left_out))


def _assistant(
    message: Message, items: list[dict[str, Any]], left_out: collections.Counter[str]
) -> None:
    """The assistant turn's reasoning items, its text and its calls, in that order: the
    order in which the API gave them (reasoning precedes what it led to)."""
    for part in message.parts:
        if type(part) is ReasoningPart:
            if part.provider == PROVIDER:
                items.append(_reasoning_item(part))
            else:
                left_out[part.provider] += 1
    if message.content or not message.tool_calls:
        items.append({"type": "message", "role": "assistant", "content": message.content})
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": json.dumps(dict(call.args), ensure_ascii=False),
            }
        )


def _reasoning_item(part: ReasoningPart) -> dict[str, Any]:
    """The reasoning item ``part`` holds, as it came (its JSON text read back)."""
    try:
        item: object = json.loads(part.payload)
    except ValueError:
        item = None
    if not isinstance(item, dict):
        msg = (
            f"an assistant message's OpenAI ReasoningPart holds no reasoning item: its payload "
            f"must be the item's JSON object as the API sent it, got {part.payload!r:.60}"
        )
        raise ValueError(msg)
    return cast("dict[str, Any]", item)


def _content(message: Message) -> list[dict[str, Any]]:
    """A user message's (or tool result's) text, then its images and files, as input
    parts."""
    content: list[dict[str, Any]] = []
    if message.content:
        content.append({"type": "input_text", "text": message.content})
    for part in message.parts:  # a user or tool message holds only images and files
        if type(part) is ImagePart:
            content.append({"type": "input_image", "image_url": data_url(part), "detail": "auto"})
        elif type(part) is FilePart:
            if part.data is None:
                by_url = {"type": "input_file", "file_url": part.url}
                content.append(by_url if part.name is None else {**by_url, "filename": part.name})
            else:
                file = {"type": "input_file", "file_data": data_url(part)}
                content.append({**file, "filename": _filename(part)})
    return content


def _filename(part: FilePart) -> str:
    """The file's name, else ``file`` with the extension its media type has."""
    if part.name is not None:
        return part.name
    extension = mimetypes.guess_extension(part.media_type or "") or ""
    return f"file{extension}"


def to_tools(specs: Sequence[ToolSpec], *, strict: bool = False) -> list[dict[str, Any]]:
    """The tools the model may call, as flat function tools with their JSON schemas."""
    return [
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters or _NO_PARAMETERS),
            "strict": strict,
        }
        for spec in specs
    ]


def output_format(spec: OutputSpec) -> dict[str, Any]:
    """The answer's required shape as ``text.format``: a named ``json_schema`` format."""
    written: dict[str, Any] = {"type": "json_schema", "name": spec.name}
    if spec.description:
        written["description"] = spec.description
    written["schema"] = dict(spec.schema)
    written["strict"] = spec.strict
    return written


def from_response(response: Mapping[str, Any]) -> ModelResponse:
    """A ``response`` object (its JSON, as ``json.loads`` made it) as a ``ModelResponse``.

    Text is the ``output_text`` of its message items, joined (their ``refusal`` when there
    is none); a function call without a ``call_id`` gets its item ``id``, else
    ``call_<n>``, its position among the calls.
    """
    output = _list(response.get("output"), "output")
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[ToolCall] = []
    parts: list[ReasoningPart] = []
    for raw in output:
        item = _object(raw, "an output item")
        kind = item.get("type")
        if kind == "message":
            for piece in _list(item.get("content") or [], "a message's content"):
                content = _object(piece, "a message's content part")
                if content.get("type") == "output_text":
                    texts.append(_str(content.get("text"), "output_text.text"))
                elif content.get("type") == "refusal":
                    refusals.append(_str(content.get("refusal"), "refusal.refusal"))
        elif kind == "function_call":
            calls.append(_call(item, len(calls)))
        elif kind == "reasoning":
            parts.append(reasoning_part(item))
        # Other items (a hosted tool's call...) are the server's own: hookline offers none.
    return ModelResponse(
        "".join(texts) or "".join(refusals),
        tuple(calls),
        usage_of(response.get("usage")),
        finish_reason(response, tool_calls=bool(calls)),
        _optional_str(response.get("model"), "model") or None,
        tuple(parts),
    )


def _call(item: Mapping[str, Any], position: int) -> ToolCall:
    call_id = _optional_str(item.get("call_id"), "function_call.call_id")
    item_id = _optional_str(item.get("id"), "function_call.id")
    name = _str(item.get("name"), "function_call.name")
    arguments = _optional_str(item.get("arguments"), "function_call.arguments") or ""
    return ToolCall(call_id or item_id or f"call_{position}", name, parse_arguments(arguments))


def reasoning_part(item: Mapping[str, Any]) -> ReasoningPart:
    """A reasoning item as a ``ReasoningPart``: the item's JSON text as it came, and its
    visible text (the summary's texts, else the reasoning texts, joined by blank lines)."""
    summary = _texts(item.get("summary"), "reasoning.summary")
    if not summary:
        summary = _texts(item.get("content"), "reasoning.content")
    payload = json.dumps(item, ensure_ascii=False)
    return ReasoningPart(PROVIDER, payload, "\n\n".join(summary))


def _texts(value: object, what: str) -> list[str]:
    if value is None:
        return []
    return [
        _str(_object(piece, what).get("text"), f"{what}[].text") for piece in _list(value, what)
    ]


def finish_reason(response: Mapping[str, Any], *, tool_calls: bool) -> str | None:
    """Why the model stopped, in Chat Completions' words where they fit.

    ``completed`` is ``"tool_calls"`` when the output holds function calls, else
    ``"stop"``; ``incomplete`` is ``"length"`` for ``max_output_tokens``,
    ``"content_filter"`` for ``content_filter``, else the reason as the API gives it
    (``"incomplete"`` when it gives none); any other status is itself (``None`` if none).
    """
    status = _optional_str(response.get("status"), "status")
    if status == "completed":
        return "tool_calls" if tool_calls else "stop"
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = None
        if details is not None:
            reason = _optional_str(_object(details, "incomplete_details").get("reason"), "reason")
        if reason == "max_output_tokens":
            return "length"
        return reason or "incomplete"
    return status


def usage_of(value: object) -> Usage | None:
    """Token counts: input, output, and the cached and reasoning parts (absent counts 0)."""
    if value is None:
        return None
    usage = _object(value, "usage")
    inputs = usage.get("input_tokens_details")
    outputs = usage.get("output_tokens_details")
    cached = _object(inputs, "input_tokens_details").get("cached_tokens") if inputs else 0
    reasoning = _object(outputs, "output_tokens_details").get("reasoning_tokens") if outputs else 0
    return Usage(
        _count(usage.get("input_tokens"), "input_tokens"),
        _count(usage.get("output_tokens"), "output_tokens"),
        _count(cached, "cached_tokens"),
        _count(reasoning, "reasoning_tokens"),
    )


def _count(value: object, what: str) -> int:
    if value is None:
        return 0
    if type(value) is not int or value < 0:
        msg = f"usage.{what} must be an int >= 0, got {value!r:.40}"
        raise TypeError(msg)
    return value


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        msg = f"{what} must be a JSON object, got {type(value).__name__} {value!r:.40}"
        raise TypeError(msg)
    return cast("dict[str, Any]", value)


def _list(value: object, what: str) -> list[object]:
    if not isinstance(value, list):
        msg = f"{what} must be a JSON array, got {type(value).__name__} {value!r:.40}"
        raise TypeError(msg)
    return cast("list[object]", value)


def _str(value: object, what: str) -> str:
    if not isinstance(value, str):
        msg = f"{what} must be a string, got {type(value).__name__} {value!r:.40}"
        raise TypeError(msg)
    return value


def _optional_str(value: object, what: str) -> str | None:
    return None if value is None else _str(value, what)
