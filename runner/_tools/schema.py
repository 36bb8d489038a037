"""A function tool's parameters, read once, and their plain JSON schema and check.

``params_of`` reads what the model may give from the signature: each parameter's name,
resolved annotation (``Any`` when there is none, or when it names what only a type checker
sees), ``Annotated`` metadata, default and description (an ``Annotated[X, "text"]``
string, else the docstring's ``Args:`` / ``:param`` line). ``object_schema`` puts the
schema in the order providers show it, defaults included.

``PlainArguments`` describes and checks, without pydantic, parameters annotated ``str``,
``int``, ``float``, ``bool``, ``Any`` or nothing: any other annotation is an
``ImportError`` naming the extra, ``pip install 'hookline[schema]'``; with it,
``runner._tools.pydantic`` does the work for every annotation.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, cast, final

from hooks._slots import slot_init
from runner._errors import ToolArgumentsError
from runner._tools.docstrings import argument_descriptions

__all__ = [
    "INSTALL",
    "Param",
    "PlainArguments",
    "globals_of",
    "object_schema",
    "params_of",
    "resolve",
    "shown",
]

INSTALL: Final = "pip install 'hookline[schema]'"
_EMPTY: Final = inspect.Parameter.empty
# A plain annotation's JSON type and what its JSON values are in Python (an int is a
# number; a bool is neither an int nor a number).
_PLAIN: Final[Mapping[object, tuple[str, tuple[type, ...]]]] = {
    str: ("string", (str,)),
    int: ("integer", (int,)),
    float: ("number", (int, float)),
    bool: ("boolean", (bool,)),
}


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Param:
    """One parameter the model may give: its resolved annotation, split from its metadata."""

    name: str
    annotation: object  # Any when there is none or it cannot be resolved
    metadata: tuple[object, ...]  # Annotated metadata but the str descriptions
    default: object  # inspect.Parameter.empty when the model must give it
    description: str


def params_of(
    fn: Callable[..., Any], signature: inspect.Signature
) -> tuple[list[Param], Param | None]:
    """The parameters the model may give by name, and ``**kwargs`` (named ``**name``) if any."""
    namespace = globals_of(fn)
    described = argument_descriptions(inspect.getdoc(fn))
    params: list[Param] = []
    extra: Param | None = None
    for param in signature.parameters.values():
        if param.kind in {param.VAR_POSITIONAL, param.POSITIONAL_ONLY}:
            continue
        annotation: object = Any
        if param.annotation is not _EMPTY:
            annotation = resolve(param.annotation, namespace)
        description = described.get(param.name, "")
        metadata: tuple[object, ...] = ()
        if typing.get_origin(annotation) is Annotated:
            annotation, *rest = typing.get_args(annotation)
            texts = [item for item in rest if isinstance(item, str)]
            description = texts[-1] if texts else description
            metadata = tuple(item for item in rest if not isinstance(item, str))
        if param.kind is param.VAR_KEYWORD:
            extra = Param(f"**{param.name}", annotation, metadata, _EMPTY, description)
        else:
            params.append(Param(param.name, annotation, metadata, param.default, description))
    return params, extra


def globals_of(fn: Callable[..., Any]) -> dict[str, Any]:
    """The namespace ``fn``'s annotations are written in (a partial's function's, a callable
    object's ``__call__``'s)."""
    for owner in (inspect.unwrap(fn), getattr(fn, "func", None), type(fn).__call__):
        namespace: object = getattr(owner, "__globals__", None)
        if isinstance(namespace, dict):
            return cast("dict[str, Any]", namespace)
    return {}


def resolve(annotation: object, namespace: dict[str, Any]) -> object:
    """``annotation`` evaluated (a string, forward references), or ``Any`` when it cannot be."""
    holder = types.SimpleNamespace(__annotations__={"a": annotation})
    try:
        return typing.get_type_hints(holder, namespace, include_extras=True)["a"]
    except Exception:  # a name only a type checker sees: the argument is untyped
        return Any


def shown(annotation: object) -> str:
    """An annotation as a message shows it: ``Point``, ``list[str]``."""
    return annotation.__qualname__ if isinstance(annotation, type) else repr(annotation)


@final
class PlainArguments:
    """Arguments of plain JSON types (or untyped), described and checked without pydantic."""

    __slots__ = ("_extra", "_signature", "_types", "schema", "tool")

    def __init__(
        self, tool: str, signature: inspect.Signature, params: Sequence[Param], extra: Param | None
    ) -> None:
        self.tool: Final = tool
        self._signature: Final = signature
        self._types: Final = {param.name: _plain(tool, param) for param in params}
        self._extra: Final = None if extra is None else _plain(tool, extra)
        properties: dict[str, Any] = {}
        for param in params:
            plain = self._types[param.name]
            properties[param.name] = {} if plain is None else {"type": plain[0]}
            if param.description:
                properties[param.name]["description"] = param.description
        additional = extra is not None if self._extra is None else {"type": self._extra[0]}
        required = [param.name for param in params if param.default is _EMPTY]
        raw = {"properties": properties, "required": required, "additionalProperties": additional}
        self.schema: Final = object_schema(raw, params, lambda value: value)

    def validate(self, args: Mapping[str, Any], /) -> Mapping[str, Any]:
        """``args`` themselves once they fit the signature and its plain types."""
        if not isinstance(args, Mapping):
            raise ToolArgumentsError(self.tool, args, "arguments must be a JSON object")
        try:
            self._signature.bind(**args)
        except TypeError as exc:
            raise ToolArgumentsError(self.tool, args, str(exc)) from None
        for key, value in args.items():
            plain = self._types.get(key, self._extra)
            if plain is None:
                continue
            json_type, allowed = plain
            if not isinstance(value, allowed) or (json_type != "boolean" and type(value) is bool):
                problem = f"{key!r} must be {json_type}, got {type(value).__name__}"
                raise ToolArgumentsError(self.tool, args, problem)
        return args


def _plain(tool: str, param: Param) -> tuple[str, tuple[type, ...]] | None:
    """A plain parameter's JSON type and Python types (None: any), else an ImportError."""
    if param.annotation is Any and not param.metadata:
        return None
    plain = _PLAIN.get(param.annotation)
    if plain is None or param.metadata:
        shown_ = shown(param.annotation)
        annotated = f"Annotated[{shown_}, ...]" if param.metadata else shown_
        msg = (
            f"tool {tool!r}: parameter {param.name!r} is annotated {annotated}, which "
            f"needs pydantic to describe and check: {INSTALL}"
        )
        raise ImportError(msg, name="pydantic")
    return plain


def object_schema(
    raw: Mapping[str, Any], params: Sequence[Param], jsonable: Callable[[object], object]
) -> dict[str, Any]:
    """The arguments' schema, keys in the order providers show them, with each default.

    ``raw`` has ``properties``, ``required``, ``additionalProperties`` and maybe ``$defs``;
    a default is shown when ``jsonable`` gives it a JSON form.
    """
    properties: dict[str, Any] = dict(raw.get("properties", {}))
    for param in params:
        if param.default is not _EMPTY:
            try:
                default = json.loads(json.dumps(jsonable(param.default), allow_nan=False))
            except (TypeError, ValueError):  # no JSON form: the schema says nothing of it
                continue
            properties[param.name] = {**properties[param.name], "default": default}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(raw.get("required", [])),
        "additionalProperties": raw.get("additionalProperties", True),
    }
    if "$defs" in raw:
        schema["$defs"] = raw["$defs"]
    return schema
