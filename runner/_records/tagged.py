"""Tagged JSON: the records of a run (its events, results, errors) as JSON any process loads.

``dump`` turns a value into JSON text and ``load`` turns the text back; nothing is
ever unpickled. Durable runs store their steps' values with it (``runner._durable.codec``)
and run records are lines of it (``runner._records.lines``). Each value has an explicit,
tagged form (``{"$t": tag, "v": ...}``): JSON's own scalars and lists are themselves; a
tuple, a dict, a read-only mapping (a result's ``state``) and bytes are tagged; the
project's records (messages, tool calls and results, responses, usage, a model request
and its tool specs, pending requests, a session, a ``RunState``, the events -- streamed
ones too -- and the ``RunResult`` of a run) are tagged by their name and rebuilt field by
field, the messages and their parts by ``runner._pause.codec``'s checked decoders, a
``RunState`` by ``RunState.from_json``. Anything else is a ``TypeError`` naming it and
where it was (``value[0].state['lock']``).

An error is stored as its type's name (``module:qualname``), its message, its ``args``
and those of its attributes that are JSON (a ``response`` as its status and headers),
and whether ``is_transient`` took it for transient. It is rebuilt, without calling
``__init__``, only when its class is on the allow-list (``rebuilt``): an ``Exception``
of ``builtins``, of the project (``hooks``, ``runner``), of DBOS or of a provider SDK
(``openai``, ``anthropic``, ``httpx``) whose module is already imported -- a record
never makes anything import -- or one a durable runner was given (``DurableRunner(...,
errors=[...])``, through ``EXTRA``). Any other is a ``RecoveredError`` keeping the type's
name, the message, the attributes and the transience, so ``RetryTransient`` and error
hooks decide on it as they did on the original. Tracebacks, causes and contexts are
not stored.

``load`` trusts nothing it reads: text that is not JSON, an unknown tag, a field
missing or extra or of the wrong kind is a ``ValueError`` naming what was expected
where, and what came. Errors name the record as ``LABEL`` says (a durable record by
default).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any, Final, NoReturn, cast, final

from hooks import Message, ModelRequest, ModelResponse, ToolCall, ToolResult, ToolSpec, Usage
from hooks._slots import slot_init
from runner._checks import got
from runner._events import (
    AttemptDiscardedEvent,
    ErrorEvent,
    FallbackEvent,
    ModelAttemptEvent,
    ModelResponseEvent,
    PauseEvent,
    RetryEvent,
    RunFinishedEvent,
    RunResult,
    RunStartedEvent,
    ShadowEvent,
    StopEvent,
    TextDelta,
    ToolAttemptEvent,
    ToolCallDelta,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from runner._models.transient import is_transient
from runner._pause.codec import (
    decode_message,
    decode_response,
    decode_tool_call,
    decode_tool_result,
    decode_usage,
    encode_message,
    encode_response,
    encode_tool_call,
    encode_tool_result,
    encode_usage,
)
from runner._pause.pending import PendingRequest, Question
from runner._pause.runstate import RunState
from runner._sessions.store import Session
from runner._sessions.transcript import Transcript

__all__ = [
    "DURABLE",
    "EXTRA",
    "LABEL",
    "RecoveredError",
    "StoredResponse",
    "allowed",
    "decode",
    "dump",
    "encode",
    "load",
    "rebuilt",
    "refuse",
]

_TAG: Final = "$t"
_DEPTH: Final = 200  # deeper than any record a run makes; a forged one stops here
# Modules whose exception classes a record may name and get back as themselves.
_ALLOWED: Final = ("builtins", "hooks", "runner", "dbos", "openai", "anthropic", "httpx")
EXTRA: Final[ContextVar[Mapping[str, type[Exception]]]] = ContextVar(
    "hookline_durable_errors", default=MappingProxyType({})
)
"""The classes of ``DurableRunner(errors=...)`` while its codec loads a record."""
DURABLE: Final = "durable record"
LABEL: Final[ContextVar[str]] = ContextVar("hookline_record_label", default=DURABLE)
"""What the errors of ``dump`` and ``load`` call the record: a durable run's by default."""


class RecoveredError(Exception):
    """An error a durable run stored whose class is not rebuilt from a record.

    ``type_name`` is the original's ``module:qualname``, ``str()`` its message; the
    original's JSON attributes are set on it (``status_code``, ``body``, ...), a
    ``response`` as a ``StoredResponse``, and ``transient`` says whether
    ``is_transient`` took the original for transient.
    """

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name
        self._text = message

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"RecoveredError({self.type_name}: {self._text!r})"


@final
@slot_init
@dataclasses.dataclass(frozen=True, slots=True)
class StoredResponse:
    """What a stored error kept of its HTTP response: the status and the headers."""

    status_code: int | None
    headers: Mapping[str, str]


def dump(value: object) -> str:
    """``value`` as JSON text that ``load`` turns back into an equal value.

    Raises ``TypeError`` naming the value and where it was when part of it has no JSON
    form (a lock in a run's state, say): a durable run's record must outlive its process.
    """
    return json.dumps(_encode(value, "value", 0), ensure_ascii=False, allow_nan=False)


def load(blob: object) -> Any:
    """The value ``dump`` stored as ``blob``; a ``ValueError`` for anything else."""
    if type(blob) is not str:
        _refuse("a durable record", "JSON text (str)", blob)
    try:
        data = json.loads(blob, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        msg = f"a durable record must be JSON text, got {got(blob)}: {exc}"
        raise ValueError(msg) from None
    return _decode(data, "record", 0)


# -- encoding ----------------------------------------------------------------------------------


def _encode(value: object, where: str, depth: int) -> Any:
    if depth > _DEPTH:
        _unstorable(value, where, f"nested deeper than {_DEPTH}")
    cls = type(value)
    if value is None or cls in (bool, int, str):
        return value
    if cls is float:
        if not math.isfinite(cast("float", value)):
            _unstorable(value, where, "not a finite number")
        return value
    if cls is list:
        items = cast("list[object]", value)
        return [_encode(item, f"{where}[{n}]", depth + 1) for n, item in enumerate(items)]
    if isinstance(value, BaseException):
        return _tagged("error", _encode_error(value, where, depth + 1))
    encoder = _ENCODERS.get(cls)
    if encoder is None:
        _unstorable(value, where, "it has no JSON form")
    return _tagged(cls.__name__, encoder(value, where, depth + 1))


def _encode_items(value: object, where: str, depth: int) -> list[Any]:
    items = cast("tuple[object, ...]", value)
    return [_encode(item, f"{where}[{n}]", depth) for n, item in enumerate(items)]


def _encode_bytes(value: object, where: str, depth: int) -> str:
    return base64.b64encode(cast("bytes", value)).decode("ascii")


def _object(value: object, where: str, depth: int) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    for key, item in cast("Mapping[object, object]", value).items():
        if type(key) is not str:
            _unstorable(key, f"{where} key", "keys must be strings")
        encoded[key] = _encode(item, f"{where}[{key!r}]", depth)
    return encoded


def _tagged(tag: str, encoded: object) -> dict[str, Any]:
    return {_TAG: tag, "v": encoded}


def _unstorable(value: object, where: str, why: str) -> NoReturn:
    label = LABEL.get()
    if label == DURABLE:
        msg = (
            f"a durable run cannot store {where} = {got(value)}: {why}; keep what a durable "
            "run stores (results, tool results, its state) JSON, or opt in with "
            "DurableRunner(..., allow_pickle=True)"
        )
    else:
        msg = f"{label}: cannot hold {where} = {got(value)}: {why}"
    raise TypeError(msg)


def _fields(value: object, where: str, depth: int) -> dict[str, Any]:
    """A dataclass's fields, each encoded."""
    return {
        field.name: _encode(getattr(value, field.name), f"{where}.{field.name}", depth)
        for field in dataclasses.fields(cast("Any", value))
    }


def _encode_error(error: BaseException, where: str, depth: int) -> dict[str, Any]:
    cls = type(error)
    if isinstance(error, RecoveredError):
        type_name = error.type_name
    else:
        type_name = f"{cls.__module__}:{cls.__qualname__}"
    try:
        args: Any = _encode(error.args, f"{where}.args", depth)
    except TypeError:
        args = _encode((_text(error),), f"{where}.args", depth)
    # A RecoveredError's own fields are the record's; any other error keeps every attribute.
    own = ("type_name", "_text", "transient") if isinstance(error, RecoveredError) else ()
    attributes: dict[str, Any] = {}
    for name, attribute in getattr(error, "__dict__", {}).items():
        if type(name) is not str or name in own:
            continue
        try:
            attributes[name] = _encode(attribute, f"{where}.{name}", depth)
        except TypeError:
            if name == "response":
                attributes[name] = _tagged("response", _encode_response(attribute))
    return {
        "type": type_name,
        "message": _text(error),
        "args": args,
        "attributes": attributes,
        "transient": is_transient(error),
    }


def _encode_response(response: object) -> dict[str, Any]:
    status = getattr(response, "status_code", None)
    headers: dict[str, str] = {}
    try:
        for key, item in getattr(response, "headers", {}).items():
            if type(key) is str and type(item) is str:
                headers[key] = item
    except Exception:  # a response whose headers cannot be read keeps none
        headers = {}
    return {"status_code": status if type(status) is int else None, "headers": headers}


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:
        return f"<{type(error).__qualname__} with a str() that fails>"


def _encode_state(value: object, where: str, depth: int) -> str:
    return cast("RunState", value).to_json()


def _encode_session(value: object, where: str, depth: int) -> dict[str, Any]:
    session = cast("Session", value)
    return {
        "messages": _encode_messages(session.messages),
        "version": session.version,
        "state": _encode(dict(session.state), f"{where}.state", depth),
    }


def _encode_request(value: object, where: str, depth: int) -> dict[str, Any]:
    request = cast("ModelRequest", value)
    return {
        "messages": _encode_messages(request.messages),
        "tools": _encode(request.tools, f"{where}.tools", depth),
    }


def _encode_messages(messages: Sequence[Message]) -> dict[str, Any]:
    """Messages and the kind of sequence holding them: ``tuple``, ``list`` or ``Transcript``."""
    kind = type(messages).__name__
    if kind not in _SEQUENCES:
        kind = "tuple"
    return {"kind": kind, "items": [encode_message(message) for message in messages]}


def _decode_messages(data: object, where: str) -> Sequence[Message]:
    fields = _dict(data, where)
    kind = fields.get("kind")
    if set(fields) != {"kind", "items"} or type(kind) is not str or kind not in _SEQUENCES:
        _refuse(where, f"an object of 'kind' (one of {list(_SEQUENCES)}) and 'items'", fields)
    messages = [
        decode_message(message, where=f"{where}.items[{n}]")
        for n, message in enumerate(_list(fields["items"], f"{where}.items"))
    ]
    return _SEQUENCES[kind](messages)


def _plain(encode: Callable[[Any], dict[str, Any]]) -> Callable[[object, str, int], Any]:
    return lambda value, where, depth: encode(value)


# -- decoding ----------------------------------------------------------------------------------


def _decode(data: object, where: str, depth: int) -> Any:
    if depth > _DEPTH:
        _refuse(where, f"a record nested at most {_DEPTH} deep", "deeper")
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        items = cast("list[object]", data)
        return [_decode(item, f"{where}[{n}]", depth + 1) for n, item in enumerate(items)]
    if type(data) is not dict:
        _refuse(where, "a JSON value", data)
    fields = cast("dict[str, object]", data)
    if set(fields) != {_TAG, "v"}:
        _refuse(where, f'a tagged value {{"{_TAG}": tag, "v": value}}', fields)
    tag = fields[_TAG]
    decoder = _DECODERS.get(tag) if type(tag) is str else None
    if decoder is None:
        _refuse(where, f"a known tag ({', '.join(sorted(_DECODERS))})", tag)
    return decoder(fields["v"], f"{where}<{tag}>", depth + 1)


def _decode_tuple(data: object, where: str, depth: int) -> tuple[Any, ...]:
    return tuple(_decode(item, f"{where}[{n}]", depth) for n, item in enumerate(_list(data, where)))


def _decode_dict(data: object, where: str, depth: int) -> dict[str, Any]:
    return {
        key: _decode(item, f"{where}[{key!r}]", depth) for key, item in _dict(data, where).items()
    }


def _decode_proxy(data: object, where: str, depth: int) -> MappingProxyType[str, Any]:
    return MappingProxyType(_decode_dict(data, where, depth))


def _decode_bytes(data: object, where: str, depth: int) -> bytes:
    try:
        return base64.b64decode(_str(data, where), validate=True)
    except binascii.Error as exc:
        _refuse(where, "base64 text", data, f" ({exc})")


def _record(cls: type[Any]) -> Callable[[object, str, int], Any]:
    """A decoder for dataclass ``cls``: exactly its fields, each decoded and of its field's
    type (``_fits``), then ``cls(**them)``."""
    names = tuple(field.name for field in dataclasses.fields(cls))
    hints: dict[str, Any] = {}

    def decode(data: object, where: str, depth: int) -> Any:
        fields = _dict(data, where)
        if set(fields) != set(names):
            _refuse(where, f"an object with exactly the fields {list(names)}", fields)
        values = {name: _decode(fields[name], f"{where}.{name}", depth) for name in names}
        if not hints:  # resolved once, on first use: every module is imported by then
            hints.update(typing.get_type_hints(cls))
        for name, value in values.items():
            if not _fits(value, hints[name]):
                _refuse(f"{where}.{name}", _shown(hints[name]), value)
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            _refuse(where, f"the fields of a {cls.__name__}", fields, f" ({exc})")

    return decode


def _fits(value: object, hint: Any) -> bool:
    """Whether ``value`` is of type ``hint`` (a field's annotation), as far as JSON can say:
    an int fits ``float``; a tuple's items, a union's members and literals are checked; a
    mapping or a sequence is checked to be one, its items are the decoders' own."""
    if hint is Any:
        return True
    if hint is float:
        return type(value) is float or type(value) is int
    if hint in (int, str, bool):
        return type(value) is hint
    if hint is None or hint is type(None):
        return value is None
    if isinstance(hint, type):
        return isinstance(value, hint)
    return _fits_generic(value, typing.get_origin(hint), typing.get_args(hint))


def _fits_generic(value: object, origin: object, args: tuple[Any, ...]) -> bool:
    """``_fits`` for a union, a literal, a tuple and a generic class (``Mapping[str, Any]``)."""
    if origin is typing.Union or origin is types.UnionType:
        fits = any(_fits(value, member) for member in args)
    elif origin is typing.Literal:
        fits = any(type(value) is type(arg) and value == arg for arg in args)
    elif origin is tuple:
        items = cast("tuple[object, ...]", value)
        if type(value) is not tuple:
            fits = False
        elif len(args) == 2 and args[1] is Ellipsis:
            fits = all(_fits(item, args[0]) for item in items)
        else:
            fits = len(items) == len(args) and all(map(_fits, items, args))
    elif isinstance(origin, type):
        fits = isinstance(value, origin)
    else:  # no check this function knows (a TypeVar, say): the decoders' own checks stand
        fits = True
    return fits


def _shown(hint: Any) -> str:
    """A field's type as an error message names it."""
    if isinstance(hint, type):
        return f"a {hint.__name__}"
    return f"a {hint}".replace("typing.", "").replace("collections.abc.", "")


def _checked(decode: Callable[..., Any], cls: type[Any]) -> Callable[[object, str, int], Any]:
    def decoder(data: object, where: str, depth: int) -> Any:
        value = decode(data, where=where)
        assert type(value) is cls
        return value

    return decoder


def _decode_state(data: object, where: str, depth: int) -> RunState:
    try:
        return RunState.from_json(_str(data, where))
    except ValueError as exc:
        _refuse(where, "a RunState's JSON", data, f" ({exc})")


def _decode_session(data: object, where: str, depth: int) -> Session:
    fields = _dict(data, where)
    if set(fields) != {"messages", "version", "state"}:
        _refuse(where, "an object with exactly 'messages', 'version', 'state'", fields)
    messages = _decode_messages(fields["messages"], f"{where}.messages")
    version = fields["version"]
    if type(version) is not int:
        _refuse(f"{where}.version", "an integer", version)
    state = _decode(fields["state"], f"{where}.state", depth)
    if type(state) is not dict:
        _refuse(f"{where}.state", "a dict", state)
    return Session(messages, version, MappingProxyType(cast("dict[str, Any]", state)))


def _decode_request(data: object, where: str, depth: int) -> ModelRequest:
    fields = _dict(data, where)
    if set(fields) != {"messages", "tools"}:
        _refuse(where, "an object with exactly 'messages', 'tools'", fields)
    messages = _decode_messages(fields["messages"], f"{where}.messages")
    tools: object = _decode(fields["tools"], f"{where}.tools", depth)
    if type(tools) is not tuple or not all(
        type(tool) is ToolSpec for tool in cast("tuple[object, ...]", tools)
    ):
        _refuse(f"{where}.tools", "a tuple of ToolSpec", fields["tools"])
    return ModelRequest(messages, cast("tuple[ToolSpec, ...]", tools))


def _decode_error(data: object, where: str, depth: int) -> BaseException:
    fields = _dict(data, where)
    expected = {"type", "message", "args", "attributes", "transient"}
    if set(fields) != expected:
        _refuse(where, f"an error record with exactly {sorted(expected)}", fields)
    type_name = _str(fields["type"], f"{where}.type")
    message = _str(fields["message"], f"{where}.message")
    args = _decode(fields["args"], f"{where}.args", depth)
    if type(args) is not tuple:
        _refuse(f"{where}.args", "a tuple", args)
    transient = fields["transient"]
    if type(transient) is not bool:
        _refuse(f"{where}.transient", "a boolean", transient)
    attributes: dict[str, Any] = {}
    for name, item in _dict(fields["attributes"], f"{where}.attributes").items():
        if _is_response(item):
            attributes[name] = _decode_response(item, f"{where}.attributes.{name}")
        else:
            attributes[name] = _decode(item, f"{where}.attributes.{name}", depth)
    cls = rebuilt(type_name)
    if cls is None:
        error: BaseException = RecoveredError(type_name, message)
        error.args = args
        attributes["transient"] = transient
    else:
        try:
            error = cls.__new__(cls, *args)
        except Exception:  # a __new__ of its own that wants other arguments
            error = cls.__new__(cls)
        error.args = args
    for name, item in attributes.items():
        try:
            setattr(error, name, item)
        except (AttributeError, TypeError):  # a read-only property: the record cannot set it
            continue
    return error


def _is_response(data: object) -> bool:
    return isinstance(data, dict) and cast("dict[str, object]", data).get(_TAG) == "response"


def _decode_response(data: object, where: str) -> StoredResponse:
    fields = _dict(_dict(data, where).get("v"), where)
    if set(fields) != {"status_code", "headers"}:
        _refuse(where, "a response with exactly 'status_code', 'headers'", fields)
    status = fields["status_code"]
    if status is not None and type(status) is not int:
        _refuse(f"{where}.status_code", "an integer or null", status)
    headers = _dict(fields["headers"], f"{where}.headers")
    for key, item in headers.items():
        _str(item, f"{where}.headers[{key!r}]")
    return StoredResponse(status, cast("dict[str, str]", headers))


def allowed(classes: Iterable[object]) -> dict[str, type[Exception]]:
    """``classes`` by the name a record gives them: what ``json_codec`` rebuilds besides its own.

    Each must be an ``Exception`` class defined at a module's top level (a record can
    name no other).
    """
    named: dict[str, type[Exception]] = {}
    for candidate in classes:
        cls = _exception_class(candidate)
        if cls is None:
            msg = f"errors must hold Exception classes, got {got(candidate)}"
            raise TypeError(msg)
        if "<" in cls.__qualname__:
            msg = (
                f"errors: {cls.__qualname__} is defined inside a function, so no record can "
                "name it; define it at a module's top level"
            )
            raise ValueError(msg)
        named[f"{cls.__module__}:{cls.__qualname__}"] = cls
    return named


def _exception_class(candidate: object) -> type[Exception] | None:
    if isinstance(candidate, type) and issubclass(candidate, Exception):
        return candidate
    return None


def rebuilt(type_name: str) -> type[Exception] | None:
    """The allowed, already imported ``Exception`` class ``type_name`` names, or ``None``.

    Allowed: classes of ``builtins``, ``hooks``, ``runner``, ``dbos``, ``openai``,
    ``anthropic`` and ``httpx`` (and their submodules). Nothing is imported: a module
    not loaded yet is ``None``, as is a name inside a function (``<locals>``).
    """
    named = EXTRA.get().get(type_name)
    if named is not None:
        return named
    module, _, qualname = type_name.partition(":")
    if module.split(".", 1)[0] not in _ALLOWED or not qualname or "<" in qualname:
        return None
    found: object = sys.modules.get(module)
    for part in qualname.split("."):
        if found is None:
            return None
        found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return None


def _dict(value: object, where: str) -> dict[str, object]:
    if type(value) is not dict:
        _refuse(where, "an object", value)
    return cast("dict[str, object]", value)


def _list(value: object, where: str) -> list[object]:
    if type(value) is not list:
        _refuse(where, "an array", value)
    return cast("list[object]", value)


def _str(value: object, where: str) -> str:
    if type(value) is not str:
        _refuse(where, "a string", value)
    return value


def _no_constant(name: str) -> NoReturn:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def _refuse(where: str, expected: str, found: object, why: str = "") -> NoReturn:
    try:
        shown = got(found)
    except RecursionError:
        shown = f"{type(found).__name__} nested too deep to show"
    msg = f"{LABEL.get()}: {where} must be {expected}, got {shown}{why}"
    raise ValueError(msg)


_SEQUENCES: Final[dict[str, Callable[[list[Message]], Sequence[Message]]]] = {
    "tuple": tuple,
    "list": list,
    "Transcript": Transcript,
}
_ENCODERS: Final[dict[type[Any], Callable[[object, str, int], Any]]] = {
    tuple: _encode_items,
    dict: _object,
    MappingProxyType: _object,
    bytes: _encode_bytes,
    Message: _plain(encode_message),
    ToolCall: _plain(encode_tool_call),
    ToolResult: _plain(encode_tool_result),
    ModelResponse: _plain(encode_response),
    Usage: _plain(encode_usage),
    ModelRequest: _encode_request,
    RunState: _encode_state,
    Session: _encode_session,
}
_DECODERS: Final[dict[str, Callable[[object, str, int], Any]]] = {
    "tuple": _decode_tuple,
    "dict": _decode_dict,
    "mappingproxy": _decode_proxy,
    "bytes": _decode_bytes,
    "error": _decode_error,
    "Message": _checked(decode_message, Message),
    "ToolCall": _checked(decode_tool_call, ToolCall),
    "ToolResult": _checked(decode_tool_result, ToolResult),
    "ModelResponse": _checked(decode_response, ModelResponse),
    "Usage": _checked(decode_usage, Usage),
    "ModelRequest": _decode_request,
    "RunState": _decode_state,
    "Session": _decode_session,
}
for _cls in (
    ToolSpec,
    PendingRequest,
    Question,
    RunResult,
    UserMessageEvent,
    ModelAttemptEvent,
    ModelResponseEvent,
    ToolCallEvent,
    ToolAttemptEvent,
    ToolResultEvent,
    ErrorEvent,
    RetryEvent,
    FallbackEvent,
    AttemptDiscardedEvent,
    StopEvent,
    PauseEvent,
    ShadowEvent,
    TextDelta,
    ToolCallDelta,
    RunStartedEvent,
    RunFinishedEvent,
):
    _ENCODERS[_cls] = _fields
    _DECODERS[_cls.__name__] = _record(_cls)


def encode(value: object, where: str) -> Any:
    """``value``'s tagged form (JSON data, not text); ``TypeError`` as ``dump`` raises it."""
    return _encode(value, where, 0)


def decode(data: object, where: str) -> Any:
    """The value tagged form ``data`` (JSON data, not text) holds; ``ValueError`` as ``load``."""
    return _decode(data, where, 0)


refuse: Final = _refuse
"""A ``ValueError`` naming where, what was expected and what came (``LABEL`` first)."""
