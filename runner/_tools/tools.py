"""Tools: plain functions or objects with ``name`` and ``run(args)``, sync or async.

A function becomes a ``FunctionTool``: its name, its docstring's first paragraph as
description, and a JSON schema of its parameters (each described by the docstring's
``Args:`` or ``:param`` lines, or ``Annotated`` metadata), all read once. The model's
arguments are checked against that schema before the call, and the function gets the
checked values; a bad call raises ``ToolArgumentsError``, which reaches
``on_tool_error`` like any other tool error.

With pydantic installed (``pip install 'hookline[schema]'``), every annotation pydantic
knows works, schema and check both by ``pydantic.TypeAdapter`` (``runner._tools.pydantic``).
Without it, ``str``, ``int``, ``float``, ``bool``, ``Any`` and unannotated parameters
work (``runner._tools.schema``), and any other annotation is an ``ImportError`` naming the
extra.

Every tool name, a sub-agent's included, follows the providers' rule
``^[A-Za-z0-9_-]{1,64}$`` (``check_tool_name``), checked when the tool is made.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol, cast, final, get_args, runtime_checkable

from hooks import ToolAnnotations, ToolInfo, ToolSpec
from hooks._tool_info import NO_ANNOTATIONS
from runner._checks import got
from runner._tools.context import RunContext, takes_context
from runner._tools.docstrings import summary
from runner._tools.pydantic import ValidatedArguments
from runner._tools.schema import PlainArguments, globals_of, params_of, resolve

__all__ = ["AsyncTool", "FunctionTool", "Tool", "as_tool", "check_tool_name", "info_of"]

_TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TOOL_NAME_RULE: Final = "^[A-Za-z0-9_-]{1,64}$"


def check_tool_name(name: object, what: str, *, hint: str = "") -> str:
    """``name`` if model providers accept it as a tool name, else a clear error.

    The rule is theirs: ``^[A-Za-z0-9_-]{1,64}$``. ``what`` says whose name it is in
    the message (``"tool object's name"``, ``"agent name"``); ``hint``, if given, ends
    it. A name that is no str is a ``TypeError``, a str that breaks the rule a
    ``ValueError``.
    """
    if not isinstance(name, str):
        msg = f"{what} must be a str, got {got(name)}"
        raise TypeError(msg)
    if _TOOL_NAME.fullmatch(name) is None:
        msg = (
            f"{what} {name!r} is not a valid tool name: model providers accept 1 to 64 "
            f"ASCII letters, digits, '_' or '-' ({_TOOL_NAME_RULE})"
        )
        raise ValueError(f"{msg}; {hint}" if hint else msg)
    return name


@runtime_checkable
class Tool(Protocol):
    """A tool object: a ``name`` and ``run(args)``; ``description`` and ``parameters`` optional."""

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        ...

    def run(self, args: Mapping[str, Any], /) -> Any:
        """Run with the model's ``args``; the return value becomes the ``ToolResult``."""
        ...


class AsyncTool(Protocol):
    """A tool object whose ``run`` is ``async def``."""

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        ...

    def run(self, args: Mapping[str, Any], /) -> Awaitable[Any]:
        """Run with the model's ``args``; the return value becomes the ``ToolResult``."""
        ...


@final
class FunctionTool:
    """A plain function (sync or async) as a tool, called with the args as keywords.

    A function whose first parameter is annotated ``RunContext`` (``RunContext[Deps]``)
    gets its call's ``RunContext`` there (``run_in``); that parameter is no argument of
    the model's, so the schema leaves it out. ``deps_type`` is its ``Deps`` (``None``:
    the tool takes no context; ``Any`` when the annotation names none).
    """

    __slots__ = (
        "_validate",
        "annotations",
        "deps_type",
        "description",
        "fn",
        "is_async",
        "name",
        "parameters",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations = NO_ANNOTATIONS,
    ) -> None:
        self.fn: Final = fn
        self.annotations: Final = _checked_annotations(annotations, "FunctionTool annotations")
        self.name: Final = (
            check_tool_name(
                _name_of(fn), "function", hint="give it one: FunctionTool(fn, name=...)"
            )
            if name is None
            else check_tool_name(name, "FunctionTool name")
        )
        self.description: Final = description or summary(inspect.getdoc(fn))
        self.is_async: Final = inspect.iscoroutinefunction(fn)
        signature = inspect.signature(fn)
        self.deps_type: Final = _deps_type(fn, signature)
        if self.deps_type is not None:  # the context is the runner's to give, not the model's
            signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        required_positional = [
            p.name
            for p in signature.parameters.values()
            if p.kind is p.POSITIONAL_ONLY and p.default is p.empty
        ]
        if required_positional:
            msg = (
                f"tool {self.name!r} is called with keyword arguments, but "
                f"{required_positional} are positional-only without defaults"
            )
            raise TypeError(msg)
        arguments = _arguments_of(fn, signature, self.name)
        self.parameters: Final = arguments.schema
        self._validate: Final = arguments.validate

    def run(self, args: Mapping[str, Any], /) -> Any:
        """Check ``args`` against the schema, then call the function with the checked values.

        A tool that takes a ``RunContext`` is refused here: a run gives it one (``run_in``).
        """
        if self.deps_type is not None:
            msg = (
                f"tool {self.name!r} takes a RunContext first: a Runner calls it with its "
                "run's (run_in(context, args))"
            )
            raise TypeError(msg)
        return self.fn(**self._validate(args))

    def run_in(self, context: RunContext[Any], args: Mapping[str, Any], /) -> Any:
        """``run`` with ``context`` as the first argument of a tool that takes one."""
        if self.deps_type is None:
            return self.fn(**self._validate(args))
        return self.fn(context, **self._validate(args))

    def check(self, args: Mapping[str, Any]) -> None:
        """Raise ``ToolArgumentsError`` unless ``args`` fit the function's parameters."""
        self._validate(args)

    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(self.name, self.description, self.parameters)

    def __repr__(self) -> str:
        return f"FunctionTool({self.name!r})"


def as_tool(tool: object, *, annotations: ToolAnnotations | None = None) -> Tool | AsyncTool:
    """A tool from a plain function or an object with ``name`` and ``run``.

    ``annotations`` declares a function's effects (``ToolAnnotations(destructive=True)``),
    which its calls' hooks read in ``ctx.tool``; a tool object declares its own with an
    ``annotations`` attribute.
    """
    if annotations is not None:
        if not isinstance(tool, types.FunctionType | types.MethodType | types.BuiltinFunctionType):
            msg = (
                "as_tool(..., annotations=) declares a function's effects; a tool object "
                f"declares its own with an `annotations` attribute, got {got(tool)}"
            )
            raise TypeError(msg)
        return FunctionTool(tool, annotations=annotations)
    if isinstance(tool, FunctionTool):
        return tool
    if isinstance(tool, types.FunctionType | types.MethodType | types.BuiltinFunctionType):
        return FunctionTool(tool)
    if isinstance(tool, Tool):
        name: object = tool.name  # untyped callers may give anything a `name`
        if isinstance(name, str):
            check_tool_name(name, "tool object's name")
            return tool
    msg = (
        "a tool is a function or an object with a str `name` and a `run(args)` method, "
        f"got {type(tool).__name__} {tool!r:.60}"
    )
    raise TypeError(msg)


def spec_of(tool: Tool | AsyncTool) -> ToolSpec:
    """The ``ToolSpec`` of any tool (objects may omit description and parameters)."""
    if isinstance(tool, FunctionTool):
        return tool.spec()
    description: object = getattr(tool, "description", "")
    parameters: object = getattr(tool, "parameters", None)
    schema: Mapping[str, Any] = {}
    if isinstance(parameters, Mapping):
        schema = cast("Mapping[str, Any]", parameters)
    return ToolSpec(tool.name, str(description), schema)


def info_of(tool: Tool | AsyncTool, spec: ToolSpec) -> ToolInfo:
    """What a tool call's hooks see of ``tool`` (``spec`` its ``ToolSpec``): a tool object's
    optional ``annotations``, ``server`` and ``output_schema`` attributes are checked here,
    once, when its agent is made."""
    annotations: object = getattr(tool, "annotations", NO_ANNOTATIONS)
    server: object = getattr(tool, "server", None)
    schema: object = getattr(tool, "output_schema", None)
    what = f"tool {spec.name!r}"
    checked = _checked_annotations(annotations, f"{what}'s annotations")
    if server is not None and not isinstance(server, str):
        msg = f"{what}'s server must be a str or None, got {got(server)}"
        raise TypeError(msg)
    if schema is not None and not isinstance(schema, Mapping):
        msg = f"{what}'s output_schema must be a JSON schema (a mapping) or None, got {got(schema)}"
        raise TypeError(msg)
    return ToolInfo(
        spec.name,
        server,
        spec.description,
        checked,
        cast("Mapping[str, Any] | None", schema),
    )


def _checked_annotations(value: object, what: str) -> ToolAnnotations:
    if type(value) is not ToolAnnotations:
        msg = f"{what} must be a ToolAnnotations(...), got {got(value)}"
        raise TypeError(msg)
    return value


def is_async_tool(tool: Tool | AsyncTool) -> bool:
    """Whether calling ``tool.run`` gives an awaitable, decided once per tool."""
    if isinstance(tool, FunctionTool):
        return tool.is_async
    return inspect.iscoroutinefunction(tool.run)


def _deps_type(fn: Callable[..., Any], signature: inspect.Signature) -> object:
    """The ``Deps`` of a first parameter annotated ``RunContext[Deps]`` (``Any`` for a bare
    ``RunContext``), or ``None`` when the function takes no context."""
    first = next(iter(signature.parameters.values()), None)
    if first is None or first.annotation is first.empty:
        return None
    if first.kind in {first.VAR_POSITIONAL, first.VAR_KEYWORD}:
        return None
    annotation = resolve(first.annotation, globals_of(fn))
    if not takes_context(annotation):
        return None
    given = get_args(annotation)
    return given[0] if given else Any


def _name_of(fn: Callable[..., Any]) -> object:
    """``fn.__name__``, or a ``TypeError`` asking for a name when it has none."""
    name: object = getattr(fn, "__name__", None)
    if name is None:
        msg = (
            f"a FunctionTool is named after its function, but {fn!r:.60} has no __name__; "
            "give one: FunctionTool(fn, name=...)"
        )
        raise TypeError(msg)
    return name


def _arguments_of(
    fn: Callable[..., Any], signature: inspect.Signature, tool: str
) -> ValidatedArguments | PlainArguments:
    """The arguments of ``fn``, a tool named ``tool``: pydantic's if installed, else plain."""
    params, extra = params_of(fn, signature)
    try:
        importlib.import_module("pydantic")  # only whether it is installed
    except ImportError:
        return PlainArguments(tool, signature, params, extra)
    return ValidatedArguments(tool, params, extra)
