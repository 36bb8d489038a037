"""An agent's ``output_type``: the schema the model is asked for and the check of its answer.

One ``pydantic.TypeAdapter`` per output type, made when the agent is: it writes the JSON
schema the model is given and validates what the model answers, so the two never
disagree. A model's structured answer is a JSON object, so a type whose schema is no
object (``list[int]``, a union, ``int``) is asked for wrapped as ``{"response": ...}``
and unwrapped when checked. Where every object of the schema names all its properties
as required and takes no others, the schema is strict-ready: each object closed with
``additionalProperties: false``, as OpenAI's strict mode requires.

A model without native structured output gets the schema as the parameters of a tool
named ``final_result`` (``FINAL_RESULT``), offered beside the agent's other tools.
Importing this module never imports pydantic: ``OutputType`` does, when made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, cast, final

from typing_extensions import TypeVar

from hooks import ModelResponse, OutputSpec, ToolCall, ToolSpec
from runner._tools.schema import shown

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = ["FINAL_RESULT", "INSTALL", "OutputInvalid", "OutputType", "closed", "strict_ready"]

FINAL_RESULT: Final = "final_result"
"""The name of the tool that carries the final answer to a model without native output."""
INSTALL: Final = "pip install 'hookline[schema]'"
_WRAPPED: Final = "response"
_SHOWN_ERRORS: Final = 10
# Schema keywords OpenAI's strict mode refuses: a schema using them is sent non-strict.
_NOT_STRICT: Final = frozenset({"oneOf", "allOf", "not", "if", "then", "else", "dependentSchemas"})

Out = TypeVar("Out", default=str)


class OutputInvalid(ValueError):
    """An answer that does not fit the output type: ``errors`` says where and why, one
    line each; ``raw`` is the JSON the model gave (or its text)."""

    def __init__(self, errors: Sequence[str], raw: str) -> None:
        self.errors: Final = tuple(errors)
        self.raw: Final = raw
        super().__init__("; ".join(self.errors))


@final
class OutputType(Generic[Out]):
    """``annotation`` as the answer's type: its schema, its ``OutputSpec``, its tool, its check."""

    __slots__ = ("_adapter", "_invalid", "annotation", "schema", "spec", "tool", "wrapped")

    def __init__(self, annotation: object, *, agent: str) -> None:
        try:
            import pydantic
        except ImportError:
            msg = (
                f"agent {agent!r}: output_type={shown(annotation)} needs pydantic to write "
                f"its schema and check the answer: {INSTALL}"
            )
            raise ImportError(msg, name="pydantic") from None
        try:
            adapter = pydantic.TypeAdapter[Any](cast("Any", annotation))
            inner = adapter.json_schema()
        except (pydantic.PydanticUserError, TypeError) as exc:
            cause = (str(exc).splitlines() or [type(exc).__name__])[0]
            msg = f"agent {agent!r}: output_type={shown(annotation)} has no JSON schema: {cause}"
            raise TypeError(msg) from None
        self.annotation: Final = annotation
        self._adapter: Final = adapter
        self._invalid: Final = pydantic.ValidationError
        self.wrapped: Final = inner.get("type") != "object"
        schema = _wrap(inner) if self.wrapped else inner
        strict = strict_ready(schema)
        self.schema: Final[Mapping[str, Any]] = schema if strict is None else strict
        name = _name_of(annotation)
        description = str(inner.get("description", "")) or f"The final answer, of type {name}."
        self.spec: Final = OutputSpec(name, self.schema, strict is not None, description)
        self.tool: Final = ToolSpec(
            FINAL_RESULT,
            f"Give the final answer with this tool, once, when done. {description}",
            self.schema,
        )

    def final_call(self, response: ModelResponse) -> ToolCall | None:
        """The response's call of the final-result tool, if it made one (the first)."""
        for call in response.tool_calls:
            if call.name == FINAL_RESULT:
                return call
        return None

    def from_text(self, text: str) -> Out:
        """The value of an answer given as JSON text; ``OutputInvalid`` unless it fits."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            problem = f"the answer is not JSON ({exc}): answer with a JSON object only"
            raise OutputInvalid([problem], text) from None
        return self.from_data(data, text)

    def from_data(self, data: object, raw: str | None = None) -> Out:
        """The value of an answer given as parsed JSON (a tool's arguments)."""
        shown_raw = _dumped(data) if raw is None else raw
        if self.wrapped:
            if not isinstance(data, Mapping) or set(cast("Mapping[str, object]", data)) != {
                _WRAPPED
            }:
                problem = f'the answer must be a JSON object with one key, "{_WRAPPED}"'
                raise OutputInvalid([problem], shown_raw)
            data = cast("Mapping[str, object]", data)[_WRAPPED]
        try:
            return cast("Out", self._adapter.validate_json(_dumped(data)))
        except self._invalid as exc:
            errors = exc.errors(include_url=False)
            raise OutputInvalid(_lines(errors, self.wrapped), shown_raw) from None

    def checked(self, value: object) -> Out:
        """``value`` itself as the output type's (a hook's ``Fallback`` or replacement),
        checked strictly; ``OutputInvalid`` unless it is one."""
        try:
            return cast("Out", self._adapter.validate_python(value, strict=True))
        except self._invalid as exc:
            errors = exc.errors(include_url=False)
            raise OutputInvalid(_lines(errors, wrapped=False), repr(value)) from None

    def dump(self, value: object) -> str:
        """``value`` as the JSON text an answer of it reads as (unwrapped)."""
        return self._adapter.dump_json(value).decode()

    def __repr__(self) -> str:
        return shown(self.annotation)


def _wrap(inner: Mapping[str, Any]) -> dict[str, Any]:
    """An object schema whose one required property, ``response``, is ``inner``."""
    inner = dict(inner)
    defs = inner.pop("$defs", None)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {_WRAPPED: inner},
        "required": [_WRAPPED],
        "additionalProperties": False,
    }
    if defs is not None:
        schema["$defs"] = defs
    return schema


def strict_ready(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` with every object closed (``additionalProperties: false``), or ``None``
    when some object has an optional property, takes other properties, or the schema
    uses a keyword strict mode refuses."""
    result = _strict(schema)
    return cast("dict[str, Any] | None", result)


def _strict(part: object) -> object:
    """``part`` strict-ready, or ``None`` when it cannot be."""
    if isinstance(part, list):
        items = [_strict(item) for item in cast("list[object]", part)]
        return None if any(item is None for item in items) else items
    if not isinstance(part, Mapping):
        return part
    node = cast("Mapping[str, object]", part)
    if _NOT_STRICT & node.keys() or (node.get("type") == "object" and not _closed(node)):
        return None
    out: dict[str, object] = {}
    for key, value in node.items():
        if key in {"properties", "$defs"} and isinstance(value, Mapping):
            named = cast("Mapping[str, object]", value)
            strict_named = {name: _strict(sub) for name, sub in named.items()}
            converted: object = strict_named
            failed = any(sub is None for sub in strict_named.values())
        elif key in {"items", "anyOf", "prefixItems"}:
            converted = _strict(value)
            failed = converted is None
        else:
            converted, failed = value, False
        if failed:
            return None
        out[key] = converted
    if node.get("type") == "object":
        out["additionalProperties"] = False
    return out


def _closed(node: Mapping[str, object]) -> bool:
    """Whether an object schema requires all its properties (at least one) and no others."""
    properties = cast("Mapping[str, object]", node.get("properties", {}))
    required = cast("list[object]", node.get("required", []))
    return (
        bool(properties)
        and set(required) == set(properties)
        and node.get("additionalProperties", False) is False
    )


def closed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with every object that does not say otherwise closed
    (``additionalProperties: false``), optional properties kept: what Anthropic's
    structured outputs require of every object."""
    return cast("dict[str, Any]", _closed_part(schema))


def _closed_part(part: object) -> object:
    if isinstance(part, list):
        return [_closed_part(item) for item in cast("list[object]", part)]
    if not isinstance(part, Mapping):
        return part
    node = cast("Mapping[str, object]", part)
    out: dict[str, object] = {}
    for key, value in node.items():
        if key in {"properties", "$defs"} and isinstance(value, Mapping):
            named = cast("Mapping[str, object]", value)
            out[key] = {name: _closed_part(sub) for name, sub in named.items()}
        elif key in {"items", "anyOf", "allOf", "oneOf", "prefixItems"}:
            out[key] = _closed_part(value)
        else:
            out[key] = value
    if node.get("type") == "object" and "additionalProperties" not in node:
        out["additionalProperties"] = False
    return out


def _name_of(annotation: object) -> str:
    """A name for the answer's schema as the APIs take it: ``^[A-Za-z0-9_-]{1,64}$``."""
    text = shown(annotation)
    name = "".join(char if char.isalnum() or char in "_-" else "_" for char in text)
    return name.strip("_")[:64] or "output"


def _dumped(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, default=repr)


def _lines(errors: Sequence[ErrorDetails], wrapped: bool) -> list[str]:
    """pydantic's errors, one line each: where (a JSON path), what was wrong."""
    lines: list[str] = []
    for error in errors[:_SHOWN_ERRORS]:
        loc = (_WRAPPED, *error["loc"]) if wrapped else error["loc"]
        path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        lines.append(f"{path.removeprefix('.') or '(the answer)'}: {error['msg']}")
    if len(errors) > _SHOWN_ERRORS:
        lines.append(f"and {len(errors) - _SHOWN_ERRORS} more errors")
    return lines
