"""Hook points: typed names of the method each callback may define.

A point's type parameters tie the dispatch functions together: ``run_before`` on a
``BeforePoint[C, T]`` takes a ``C`` and returns ``Cont[C] | Halt[T]``; ``run_wrap`` on a
``WrapPoint[C, T]`` takes a ``C`` and an operation from ``C`` to ``Outcome[T]``. Every
kind is written context first, result second (0.1's ``AfterPoint[T, C]`` became
``AfterPoint[C, T]`` in 0.2).

A point may also carry its payload types for run time: ``context`` (the class of
``C``) and ``value`` (the class of ``T``). Dispatch then checks what each callback
hands on -- a ``Cont`` or ``Retry`` context, a ``Halt``, ``Fallback`` or ``Success``
value, the context a wrap gives ``call_next`` -- and refuses a wrong one with
``InvalidResult``. The built-in points declare
both; a point without them checks nothing beyond the tags.

Declaring a point (constructing it) registers its name, so a callback method
misspelled close to it is caught when a callbacks list is compiled.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar, Final, Generic, TypeAlias, TypeVar, final

from hooks._contexts import AgentContext, ModelContext, ToolContext
from hooks._messages import ModelResponse, ToolResult
from hooks._output import OutputContext

__all__ = [
    "AFTER_AGENT",
    "AFTER_MODEL",
    "AFTER_OUTPUT",
    "AFTER_TOOL",
    "BEFORE_AGENT",
    "BEFORE_MODEL",
    "BEFORE_TOOL",
    "ON_MODEL_ERROR",
    "ON_OUTPUT_ERROR",
    "ON_TOOL_ERROR",
    "WRAP_MODEL",
    "WRAP_TOOL",
    "AfterPoint",
    "BeforePoint",
    "ErrorPoint",
    "PausablePoint",
    "WrapPoint",
]

C = TypeVar("C")
T = TypeVar("T")

ON_EVENT: Final = "on_event"
"""The observer method's name; reserved, see ``hooks.observing``."""

# kind -> how a method of that kind is called, for messages and arity checks.
SIGNATURES: Final = {
    "before": "(ctx)",
    "after": "(outcome, ctx)",
    "error": "(failure, ctx)",
    "wrap": "(ctx, call_next)",
    "event": "(event)",
}

_lock = threading.Lock()
_known: dict[str, str] = {ON_EVENT: "event"}  # declared name -> kind, in declaration order
_first: dict[str, _Point] = {}  # declared name -> the first point declared with it


def known_points() -> dict[str, str]:
    """A snapshot of every declared point name and its kind (``"before"``, ``"after"``, ...)."""
    with _lock:
        return dict(_known)


def declarations() -> int:
    """How many point names are declared: the registry's generation, since it only grows."""
    return len(_known)


def kind_of(name: str) -> str | None:
    """The kind of the declared point ``name``, or ``None`` when no point has that name."""
    return _known.get(name)


def declared_since(count: int) -> list[str]:
    """The names declared after the first ``count``, in declaration order."""
    with _lock:
        return list(_known)[count:]


def first_declared(name: str) -> _Point | None:
    """The first point declared with ``name`` (its payload types), or ``None``."""
    return _first.get(name)


class _Point:
    __slots__ = ("context", "name", "value")
    kind: ClassVar[str]
    rules: ClassVar[str]  # the row of ``_rules.TAGS``: the kind, or "pausable"

    def __init__(
        self,
        name: str,
        /,
        *,
        context: type[object] | None = None,
        value: type[object] | None = None,
    ) -> None:
        checked: object = name  # callers without a type checker pass anything
        if not isinstance(checked, str) or not name.isidentifier() or name.startswith("_"):
            msg = f"a hook point name must be a public identifier, got {name!r}"
            raise ValueError(msg)
        payload_types: tuple[tuple[str, object], ...] = (("context", context), ("value", value))
        for label, given in payload_types:
            if given is not None and not isinstance(given, type):
                msg = (
                    f"{type(self).__name__}({name!r}): {label} must be a class "
                    f"(what isinstance checks the payload against) or None, got {given!r}"
                )
                raise TypeError(msg)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "value", value)
        with _lock:
            kind = _known.setdefault(name, self.kind)
            if kind == self.kind:
                _first.setdefault(name, self)
        if kind != self.kind:
            msg = (
                f"hook point name {name!r} is already declared as a {kind} point; "
                f"it cannot also be a {type(self).__name__}"
            )
            raise ValueError(msg)

    # Set once in __init__ and read-only after (``__setattr__`` refuses).
    name: Final[str]  # type: ignore[misc]
    context: Final[type[object] | None]  # type: ignore[misc]
    """The class every context a callback hands on must be an instance of, or ``None``."""
    value: Final[type[object] | None]  # type: ignore[misc]
    """The class every result value a callback hands on must be an instance of, or ``None``."""

    def __setattr__(self, attr: str, value: object) -> None:
        msg = f"hook points are immutable: cannot set {attr!r} on {self!r}"
        raise AttributeError(msg)

    def __repr__(self) -> str:
        types = "".join(
            f", {label}={given.__qualname__}"
            for label, given in (("context", self.context), ("value", self.value))
            if given is not None
        )
        return f"{type(self).__name__}({self.name!r}{types})"

    def __eq__(self, other: object) -> bool:
        # A point is its kind and name: the payload types describe it, they do not make
        # another point (the registry allows one kind per name, whatever the types).
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))


@final
class BeforePoint(_Point, Generic[C, T]):
    """A point whose methods take ``(ctx)`` and return ``Cont[C] | Halt[T]``.

    ``context`` / ``value`` (optional): the classes of ``C`` and ``T``, checked at run time.
    """

    __slots__ = ()
    kind = rules = "before"

    def __init__(
        self, name: str, /, *, context: type[C] | None = None, value: type[T] | None = None
    ) -> None:
        super().__init__(name, context=context, value=value)


@final
class PausablePoint(_Point, Generic[C, T]):
    """A before point whose methods may also ``Pause``: they return ``Cont[C] | Halt[T] | Pause``.

    A point of the "before" kind in every other way (methods take ``(ctx)``, one name
    space with ``BeforePoint``); only dispatch at such a point can return a ``Pause``, so
    a ``match`` over a plain ``BeforePoint``'s result needs no ``Pause`` case.
    """

    __slots__ = ()
    kind = "before"
    rules = "pausable"

    def __init__(
        self, name: str, /, *, context: type[C] | None = None, value: type[T] | None = None
    ) -> None:
        super().__init__(name, context=context, value=value)


@final
class AfterPoint(_Point, Generic[C, T]):
    """A point whose methods take ``(outcome, ctx)`` and return a ``Result[T, Exception]``.

    ``context`` / ``value`` (optional): the classes of ``C`` and ``T``, checked at run time.
    """

    __slots__ = ()
    kind = rules = "after"

    def __init__(
        self, name: str, /, *, context: type[C] | None = None, value: type[T] | None = None
    ) -> None:
        super().__init__(name, context=context, value=value)


@final
class ErrorPoint(_Point, Generic[C, T]):
    """A point whose methods take ``(failure, ctx)`` and return ``Retry | Fallback | Failure``.

    ``context`` / ``value`` (optional): the classes of ``C`` and ``T``, checked at run time.
    """

    __slots__ = ()
    kind = rules = "error"

    def __init__(
        self, name: str, /, *, context: type[C] | None = None, value: type[T] | None = None
    ) -> None:
        super().__init__(name, context=context, value=value)


@final
class WrapPoint(_Point, Generic[C, T]):
    """A point whose methods take ``(ctx, call_next)`` and return an ``Outcome[T]``.

    A wrap runs around the operation: ``call_next(ctx')`` runs the wraps inside it and
    the operation, and gives back their ``Outcome[T]``. ``context`` / ``value``
    (optional): the classes of ``C`` and ``T``, checked at run time (the context given
    to ``call_next`` and a returned ``Success``'s value).
    """

    __slots__ = ()
    kind = rules = "wrap"

    def __init__(
        self, name: str, /, *, context: type[C] | None = None, value: type[T] | None = None
    ) -> None:
        super().__init__(name, context=context, value=value)


BEFORE_AGENT: Final[BeforePoint[AgentContext, ModelResponse]] = BeforePoint(
    "before_agent", context=AgentContext, value=ModelResponse
)
AFTER_AGENT: Final[AfterPoint[AgentContext, ModelResponse]] = AfterPoint(
    "after_agent", context=AgentContext, value=ModelResponse
)
BEFORE_MODEL: Final[BeforePoint[ModelContext, ModelResponse]] = BeforePoint(
    "before_model", context=ModelContext, value=ModelResponse
)
AFTER_MODEL: Final[AfterPoint[ModelContext, ModelResponse]] = AfterPoint(
    "after_model", context=ModelContext, value=ModelResponse
)
ON_MODEL_ERROR: Final[ErrorPoint[ModelContext, ModelResponse]] = ErrorPoint(
    "on_model_error", context=ModelContext, value=ModelResponse
)
BEFORE_TOOL: Final[PausablePoint[ToolContext, ToolResult]] = PausablePoint(
    "before_tool", context=ToolContext, value=ToolResult
)
AFTER_TOOL: Final[AfterPoint[ToolContext, ToolResult]] = AfterPoint(
    "after_tool", context=ToolContext, value=ToolResult
)
ON_TOOL_ERROR: Final[ErrorPoint[ToolContext, ToolResult]] = ErrorPoint(
    "on_tool_error", context=ToolContext, value=ToolResult
)
# The typed final answer: its value is whatever the agent's output_type makes.
ON_OUTPUT_ERROR: Final[ErrorPoint[OutputContext, Any]] = ErrorPoint(
    "on_output_error", context=OutputContext
)
AFTER_OUTPUT: Final[AfterPoint[OutputContext, Any]] = AfterPoint(
    "after_output", context=OutputContext
)

WRAP_MODEL: Final[WrapPoint[ModelContext, ModelResponse]] = WrapPoint(
    "wrap_model", context=ModelContext, value=ModelResponse
)
WRAP_TOOL: Final[WrapPoint[ToolContext, ToolResult]] = WrapPoint(
    "wrap_tool", context=ToolContext, value=ToolResult
)

AnyPoint: TypeAlias = (
    BeforePoint[Any, Any]
    | PausablePoint[Any, Any]
    | AfterPoint[Any, Any]
    | ErrorPoint[Any, Any]
    | WrapPoint[Any, Any]
)
"""Any dispatchable hook point."""
