"""A function tool's arguments described and checked by pydantic (``hookline[schema]``).

A ``TypedDict`` of the parameters goes through ``pydantic.TypeAdapter``, once, when the
tool is made: it writes the JSON schema (titles made of names left out, nested types in
``$defs``, ``additionalProperties: false`` unless the function takes ``**kwargs``) and
checks the model's arguments against it, so every annotation pydantic knows works
(``list[str]``, ``Literal``, ``Enum``, ``X | None``, ``TypedDict``, dataclasses, models,
``Annotated[X, Field(...)]``). The function gets the validated values: an ``Enum``
member, a dataclass or model instance, a tuple.

The check is pydantic's strict JSON mode: the arguments are taken as the JSON the model
sent, so ``"3"`` is no int and ``true`` no number (no coercion between JSON types), while
a string is a fine ``Enum`` value, ``Literal``, date or UUID and an array a fine tuple.
An int for a ``float`` parameter stays the int that came (PEP 484: an int is a float).
Importing this module never imports pydantic: ``ValidatedArguments`` does, when made.
"""

from __future__ import annotations

import inspect
import types
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, NotRequired, cast, final

from runner._checks import got
from runner._errors import ToolArgumentsError
from runner._tools.schema import Param, object_schema, shown

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = ["ValidatedArguments", "problem_of"]

_EMPTY: Final = inspect.Parameter.empty
# pydantic's error types for a JSON value of another plain type: said as without pydantic.
_EXPECTED: Final = {
    "int_type": "integer",
    "string_type": "string",
    "float_type": "number",
    "bool_type": "boolean",
}
_SHOWN_ERRORS: Final = 3
# Keys whose value maps names to schemas, and keys whose value is data, not a schema.
_SCHEMA_MAPS: Final = frozenset({"properties", "$defs", "patternProperties"})
_DATA: Final = frozenset({"default", "enum", "const", "examples", "required"})
# Parameter types whose values strict JSON validation gives back as they came.
_PLAIN: Final[frozenset[object]] = frozenset((int, str, bool))
_INT_BOUND: Final = 2**63
# Typed as Any: the parameters' annotations are values here, built at run time.
_ANNOTATED: Final[Any] = Annotated


@final
class ValidatedArguments:
    """Arguments described and checked by pydantic's ``TypeAdapter`` of a ``TypedDict``."""

    __slots__ = (
        "_floats",
        "_invalid",
        "_plain",
        "_to_json",
        "_unserializable",
        "_validate",
        "schema",
        "tool",
    )

    def __init__(self, tool: str, params: Sequence[Param], extra: Param | None) -> None:
        import pydantic
        import pydantic_core
        from pydantic.warnings import TypedDictExtraConfigWarning
        from typing_extensions import TypedDict

        fields: dict[str, object] = {}
        for param in params:
            field = _field(param, pydantic.Field)
            fields[param.name] = field if param.default is _EMPTY else NotRequired[field]
        make = cast("Callable[..., Any]", TypedDict)
        if extra is None:
            shape = make(tool, fields)
        else:
            shape = make(tool, fields, extra_items=_field(extra, pydantic.Field))
        try:
            with warnings.catch_warnings():  # forbid is for nested types; extra_items rules here
                warnings.simplefilter("ignore", TypedDictExtraConfigWarning)
                closed = pydantic.with_config(extra="forbid")(shape)
                adapter = pydantic.TypeAdapter[dict[str, Any]](closed)
            raw = adapter.json_schema()
        except (pydantic.PydanticUserError, TypeError) as exc:
            raise _unsupported(tool, params, exc) from None
        self.tool: Final = tool
        jsonable = pydantic_core.to_jsonable_python
        self.schema: Final = object_schema(_untitled(raw), params, jsonable)
        self._validate: Final = adapter.validate_json
        self._to_json: Final = pydantic_core.to_json
        self._invalid: Final = pydantic.ValidationError
        self._unserializable: Final = pydantic_core.PydanticSerializationError
        self._floats: Final = tuple(param.name for param in params if _floating(param.annotation))
        self._plain: Final = None if extra is not None else _plain_types(params)

    def validate(self, args: Mapping[str, Any], /) -> dict[str, Any]:
        """``args`` read as the model's JSON, validated strictly, as the call's keywords."""
        if self._plain is not None and _plainly_valid(self._plain, args):
            return dict(args)
        if not isinstance(args, Mapping):
            raise ToolArgumentsError(self.tool, args, "arguments must be a JSON object")
        try:
            text = self._to_json(dict(args))
        except self._unserializable as exc:
            problem = f"arguments must be JSON values: {exc}"
            raise ToolArgumentsError(self.tool, args, problem) from None
        try:
            valid = self._validate(text, strict=True)
        except self._invalid as exc:
            problem = problem_of(exc.errors(include_url=False))
            raise ToolArgumentsError(self.tool, args, problem) from None
        for name in self._floats:  # PEP 484: an int is a float, so it stays the int that came
            if type(args.get(name)) is int:
                valid[name] = args[name]
        return valid


def _plain_types(params: Sequence[Param]) -> dict[str, type] | None:
    """Each parameter's type when every one is required and a plain ``int``, ``str`` or
    ``bool`` (no constraints), else ``None``."""
    plain: dict[str, type] = {}
    for param in params:
        kind = param.annotation
        if param.default is not _EMPTY or param.metadata or kind not in _PLAIN:
            return None
        plain[param.name] = cast("type", kind)
    return plain


def _plainly_valid(plain: Mapping[str, type], args: object) -> bool:
    """Whether ``args`` give every parameter a value of exactly its type and nothing else,
    each one JSON carries unchanged: what strict JSON validation gives back as it came.

    A str that is not ASCII, an int past 64 bits, anything else: pydantic decides.
    """
    if type(args) is not dict:
        return False
    given = cast("dict[str, object]", args)
    if len(given) != len(plain):
        return False
    for name, value in given.items():
        kind = type(value)
        if plain.get(name) is not kind:
            return False
        if kind is str and not cast("str", value).isascii():
            return False
        if kind is int and not -_INT_BOUND <= cast("int", value) < _INT_BOUND:
            return False
    return True


def problem_of(errors: Sequence[ErrorDetails]) -> str:
    """pydantic's errors in a line: which argument, what was expected, what came."""
    parts = [_problem(error) for error in errors[:_SHOWN_ERRORS]]
    if len(errors) > _SHOWN_ERRORS:
        parts.append(f"and {len(errors) - _SHOWN_ERRORS} more")
    return "; ".join(parts)


def _problem(error: ErrorDetails) -> str:
    loc, kind, value = error["loc"], error["type"], error["input"]
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)[1:]
    top = len(loc) == 1
    if kind == "missing":
        return f"missing a required {'argument' if top else 'field'}: {path!r}"
    if kind in {"extra_forbidden", "unexpected_keyword_argument"}:
        return f"got an unexpected {'keyword argument' if top else 'field'} {path!r}"
    expected = _EXPECTED.get(kind)
    if expected is not None:
        return f"{path!r} must be {expected}, got {type(value).__name__}"
    message = error["msg"]
    said = message.removeprefix("Input should be ")
    text = f"{path!r} must be {said}" if said != message else f"{path!r}: {message}"
    return f"{text}, got {got(value)}"


def _field(param: Param, field: Callable[..., object]) -> object:
    """``param``'s annotation with its description first, so that its own ``Field`` wins."""
    if not param.description and not param.metadata:
        return param.annotation
    return _ANNOTATED[
        (param.annotation, field(description=param.description or None), *param.metadata)
    ]


def _floating(annotation: object) -> bool:
    """Whether ``annotation`` is ``float`` or a union of ``float`` and more (``float | None``)."""
    unions = (typing.Union, types.UnionType)
    return annotation is float or (
        typing.get_origin(annotation) in unions and float in typing.get_args(annotation)
    )


def _untitled(part: object) -> Any:
    """A schema without the titles pydantic makes of names: the names say it already."""
    if isinstance(part, list):
        return [_untitled(item) for item in cast("list[object]", part)]
    if not isinstance(part, Mapping):
        return part
    clean: dict[str, object] = {}
    for key, value in cast("Mapping[str, object]", part).items():
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            named = cast("Mapping[str, object]", value)
            clean[key] = {name: _untitled(schema) for name, schema in named.items()}
        elif key != "title" or not isinstance(value, str):
            clean[key] = value if key in _DATA else _untitled(value)
    return clean


def _unsupported(tool: str, params: Sequence[Param], error: Exception) -> TypeError:
    """What pydantic could not describe, naming the parameter when one alone is the cause."""
    import pydantic

    where = "its parameters have"
    for param in params:
        try:
            pydantic.TypeAdapter(cast("Any", param.annotation)).json_schema()
        except (pydantic.PydanticUserError, TypeError) as own:
            where, error = f"parameter {param.name!r} ({shown(param.annotation)}) has", own
            break
    if type(error).__name__ == "PydanticSchemaGenerationError":  # a type it knows nothing of
        cause = (
            "a function tool's parameters take what a model can write in JSON (str, int, "
            "float, bool, None, lists and dicts of them, a Literal or Enum, a TypedDict, "
            "a dataclass or a pydantic model); for anything else, give the agent an object "
            "with name and run(args)"
        )
    else:
        cause = (str(error).splitlines() or [type(error).__name__])[0]
    return TypeError(f"tool {tool!r}: {where} no JSON schema: {cause}")
