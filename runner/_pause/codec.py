"""Plain-JSON forms of the vocabulary a run persists: messages, tool calls, results, responses.

``encode_*`` turn a record into a dict of JSON values (``json.dumps`` takes it as it
is); ``decode_*`` rebuild the record and check every field on the way, raising a
``ValueError`` that names the field (a path such as ``messages[3].tool_calls[0].id``),
what it must be and what was found -- a corrupt or hand-edited file fails there, not
deep inside a later run. Unknown fields are refused too: they mean a newer writer or
a typo, and silently dropping them would lose data.

Fields at their defaults are left out (``tool_call_id``, ``name``, ``tool_calls``,
``parts``, a message's ``is_error``, ``usage``, ``finish_reason``, ``model``), so a
stored message costs what it says. Parts are tagged objects (``{"type": "image",
...}``, ``"file"``, ``"reasoning"``); bytes are base64 (``data``), and a reasoning
part's ``payload`` is kept as the exact text it came in. A tool call whose arguments
the model sent as broken JSON keeps them as an ``UnparsedArguments``: encoded as
``raw`` and ``problem`` in place of ``args``, decoded back to one, so the run that
resumes it still tells the model what was wrong.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final, NoReturn, cast

from hooks import (
    FilePart,
    ImagePart,
    Message,
    ModelResponse,
    Part,
    ReasoningPart,
    ToolCall,
    ToolResult,
    Usage,
)
from runner._checks import got
from runner._tools.arguments import UnparsedArguments

__all__ = [
    "decode_message",
    "decode_part",
    "decode_response",
    "decode_tool_call",
    "decode_tool_result",
    "decode_usage",
    "encode_message",
    "encode_part",
    "encode_response",
    "encode_tool_call",
    "encode_tool_result",
    "encode_usage",
]

_ROLES: Final = ("system", "user", "assistant", "tool")
_USAGE_FIELDS: Final = ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens")


def encode_message(message: Message) -> dict[str, Any]:
    """``message`` as a dict of JSON values; fields at their defaults are left out."""
    encoded: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_call_id is not None:
        encoded["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        encoded["tool_calls"] = [encode_tool_call(call) for call in message.tool_calls]
    if message.name is not None:
        encoded["name"] = message.name
    if message.parts:
        encoded["parts"] = [encode_part(part) for part in message.parts]
    if message.is_error:
        encoded["is_error"] = True
    return encoded


def decode_message(data: object, *, where: str = "message") -> Message:
    """The ``Message`` ``data`` encodes; a ``ValueError`` naming the field if it is malformed."""
    fields = _object(
        data,
        where,
        ("role", "content"),
        ("tool_call_id", "tool_calls", "name", "parts", "is_error"),
    )
    role = fields["role"]
    if role not in _ROLES:
        _refuse(f"{where}.role", "one of 'system', 'user', 'assistant', 'tool'", role)
    calls = _list(fields.get("tool_calls", []), f"{where}.tool_calls")
    return Message(
        role,
        _str(fields["content"], f"{where}.content"),
        tool_call_id=_optional_str(fields.get("tool_call_id"), f"{where}.tool_call_id"),
        tool_calls=tuple(
            decode_tool_call(call, where=f"{where}.tool_calls[{index}]")
            for index, call in enumerate(calls)
        ),
        name=_optional_str(fields.get("name"), f"{where}.name"),
        parts=_parts(fields, where, _MESSAGE_PARTS[role]),
        is_error=_error_flag(fields, where),
    )


def _error_flag(fields: Mapping[str, object], where: str) -> bool:
    """A message's ``is_error``: a boolean, true only on a tool message."""
    flag = fields.get("is_error", False)
    if type(flag) is not bool:
        _refuse(f"{where}.is_error", "a boolean", flag)
    if flag and fields["role"] != "tool":
        _refuse(f"{where}.is_error", "false on a message that is no tool result", flag)
    return flag


def encode_tool_call(call: ToolCall) -> dict[str, Any]:
    """``call`` as a dict; unparsed arguments become ``raw`` and ``problem``."""
    args = call.args
    if isinstance(args, UnparsedArguments):
        return {"id": call.id, "name": call.name, "raw": args.raw, "problem": args.problem}
    return {"id": call.id, "name": call.name, "args": dict(args)}


def decode_tool_call(data: object, *, where: str = "tool_call") -> ToolCall:
    """The ``ToolCall`` ``data`` encodes; a ``ValueError`` naming the field if it is malformed."""
    fields = _object(data, where, ("id", "name"), ("args", "raw", "problem"))
    call_id = _str(fields["id"], f"{where}.id")
    name = _str(fields["name"], f"{where}.name")
    if "raw" in fields or "problem" in fields:
        if "args" in fields:
            _refuse(where, "either 'args' or 'raw' and 'problem'", "all three")
        unparsed = UnparsedArguments(
            _str(fields.get("raw"), f"{where}.raw"), _str(fields.get("problem"), f"{where}.problem")
        )
        return ToolCall(call_id, name, unparsed)
    args = fields.get("args", {})
    if type(args) is not dict:
        _refuse(f"{where}.args", "an object", args)
    return ToolCall(call_id, name, cast("dict[str, Any]", args))


def encode_tool_result(result: ToolResult) -> dict[str, Any]:
    """``result`` as a dict; ``parts`` and ``structured`` only when it has them."""
    encoded: dict[str, Any] = {"content": result.content, "is_error": result.is_error}
    if result.parts:
        encoded["parts"] = [encode_part(part) for part in result.parts]
    if result.structured is not None:
        encoded["structured"] = dict(result.structured)
    return encoded


def decode_tool_result(data: object, *, where: str = "tool_result") -> ToolResult:
    """The ``ToolResult`` ``data`` encodes; a ``ValueError`` naming the field if it is malformed."""
    fields = _object(data, where, ("content",), ("is_error", "parts", "structured"))
    is_error = fields.get("is_error", False)
    if type(is_error) is not bool:
        _refuse(f"{where}.is_error", "a boolean", is_error)
    parts = cast("tuple[ImagePart | FilePart, ...]", _parts(fields, where, ("image", "file")))
    structured: object = fields.get("structured")
    if structured is not None and not isinstance(structured, dict):
        _refuse(f"{where}.structured", "an object", structured)
    content = _str(fields["content"], f"{where}.content")
    return ToolResult(content, is_error, parts, cast("dict[str, Any] | None", structured))


def encode_usage(usage: Usage) -> dict[str, Any]:
    """``usage`` as a dict of its four token counts."""
    return {name: getattr(usage, name) for name in _USAGE_FIELDS}


def decode_usage(data: object, *, where: str = "usage") -> Usage:
    """The ``Usage`` ``data`` encodes; a ``ValueError`` naming the field if it is malformed."""
    fields = _object(data, where, (), _USAGE_FIELDS)
    counts: dict[str, int] = {}
    for name, value in fields.items():
        if type(value) is not int or value < 0:
            _refuse(f"{where}.{name}", "an integer >= 0", value)
        counts[name] = value
    return Usage(**counts)


def encode_response(response: ModelResponse) -> dict[str, Any]:
    """``response`` as a dict; fields at their defaults are left out."""
    encoded: dict[str, Any] = {"text": response.text}
    if response.tool_calls:
        encoded["tool_calls"] = [encode_tool_call(call) for call in response.tool_calls]
    if response.usage is not None:
        encoded["usage"] = encode_usage(response.usage)
    if response.finish_reason is not None:
        encoded["finish_reason"] = response.finish_reason
    if response.model is not None:
        encoded["model"] = response.model
    if response.parts:
        encoded["parts"] = [encode_part(part) for part in response.parts]
    return encoded


def decode_response(data: object, *, where: str = "response") -> ModelResponse:
    """The ``ModelResponse`` ``data`` encodes; a ``ValueError`` naming the field if malformed."""
    fields = _object(
        data, where, (), ("text", "tool_calls", "usage", "finish_reason", "model", "parts")
    )
    calls = tuple(
        decode_tool_call(call, where=f"{where}.tool_calls[{index}]")
        for index, call in enumerate(_list(fields.get("tool_calls", []), f"{where}.tool_calls"))
    )
    if len({call.id for call in calls}) != len(calls):
        _refuse(f"{where}.tool_calls", "calls with distinct ids", [call.id for call in calls])
    usage = fields.get("usage")
    return ModelResponse(
        _str(fields.get("text", ""), f"{where}.text"),
        calls,
        None if usage is None else decode_usage(usage, where=f"{where}.usage"),
        _optional_str(fields.get("finish_reason"), f"{where}.finish_reason"),
        _optional_str(fields.get("model"), f"{where}.model"),
        cast("tuple[ReasoningPart, ...]", _parts(fields, where, ("reasoning",))),
    )


_MESSAGE_PARTS: Final[Mapping[str, tuple[str, ...]]] = {
    "system": (),
    "user": ("image", "file"),
    "assistant": ("reasoning",),
    "tool": ("image", "file"),
}
"""The part types a message of each role may hold."""
_KINDS: Final = ("image", "file", "reasoning")
_IMAGE_FIELDS: Final = ("url", "data", "media_type")


def encode_part(part: Part) -> dict[str, Any]:
    """``part`` as a tagged dict: ``type``, then its fields (bytes as base64)."""
    if type(part) is ReasoningPart:
        encoded: dict[str, Any] = {
            "type": "reasoning",
            "provider": part.provider,
            "payload": part.payload,
        }
        if part.summary:
            encoded["summary"] = part.summary
        return encoded
    source = cast("ImagePart | FilePart", part)
    encoded = {"type": "image" if type(source) is ImagePart else "file"}
    if source.url is not None:
        encoded["url"] = source.url
    if source.data is not None:
        encoded["data"] = base64.b64encode(source.data).decode("ascii")
    if source.media_type is not None:
        encoded["media_type"] = source.media_type
    if type(source) is FilePart and source.name is not None:
        encoded["name"] = source.name
    return encoded


def decode_part(data: object, *, where: str = "part", allowed: tuple[str, ...] = _KINDS) -> Part:
    """The part ``data`` encodes, of one of the ``allowed`` types; a ``ValueError`` naming
    the field if it is malformed (a part's own checks included)."""
    if type(data) is not dict:
        _refuse(where, "an object", data)
    data = cast("dict[str, object]", data)
    kind = data.get("type")
    if kind not in allowed:
        expected = " or ".join(repr(name) for name in allowed) if allowed else "absent"
        _refuse(f"{where}.type", expected, kind)
    try:
        if kind == "reasoning":
            fields = _object(data, where, ("type", "provider", "payload"), ("summary",))
            return ReasoningPart(
                _str(fields["provider"], f"{where}.provider"),
                _str(fields["payload"], f"{where}.payload"),
                _str(fields.get("summary", ""), f"{where}.summary"),
            )
        optional = ("url", "data", "media_type", "name") if kind == "file" else _IMAGE_FIELDS
        fields = _object(data, where, ("type",), optional)
        url = _optional_str(fields.get("url"), f"{where}.url")
        raw = _optional_str(fields.get("data"), f"{where}.data")
        media_type = _optional_str(fields.get("media_type"), f"{where}.media_type")
        body = None if raw is None else _base64(raw, f"{where}.data")
        if kind == "image":
            return ImagePart(url, body, media_type)
        return FilePart(url, body, media_type, _optional_str(fields.get("name"), f"{where}.name"))
    except (TypeError, ValueError) as error:  # the part's own checks, or ours above
        if str(error).startswith(where):
            raise
        raise ValueError(f"{where}: {error}") from None


def _parts(fields: Mapping[str, object], where: str, allowed: tuple[str, ...]) -> tuple[Any, ...]:
    items = _list(fields.get("parts", []), f"{where}.parts")
    return tuple(
        decode_part(item, where=f"{where}.parts[{index}]", allowed=allowed)
        for index, item in enumerate(items)
    )


def _base64(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as error:
        _refuse(where, "base64 text", text, f" ({error})")


def _object(
    data: object, where: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> Mapping[str, object]:
    """``data`` as a JSON object holding every ``required`` key and no key outside both."""
    if type(data) is not dict:
        _refuse(where, "an object", data)
    fields = cast("dict[str, object]", data)
    for key in required:
        if key not in fields:
            _refuse(where, f"an object with {key!r}", fields)
    for key in fields:
        if key not in required and key not in optional:
            known = ", ".join(repr(name) for name in (*required, *optional))
            _refuse(f"{where}.{key}", f"absent (the known fields are {known})", fields[key])
    return fields


def _str(value: object, where: str) -> str:
    if type(value) is not str:
        _refuse(where, "a string", value)
    return value


def _optional_str(value: object, where: str) -> str | None:
    return None if value is None else _str(value, where)


def _list(value: object, where: str) -> list[object]:
    if type(value) is not list:
        _refuse(where, "an array", value)
    return cast("list[object]", value)


def _refuse(where: str, expected: str, found: object, why: str = "") -> NoReturn:
    try:
        shown = got(found)
    except RecursionError:  # a value nested deeper than repr goes
        shown = f"{type(found).__name__} nested too deep to show"
    msg = f"{where} must be {expected}, got {shown}{why}"
    raise ValueError(msg)
