"""Hook points: typed names of the method each callback may define.

A point's type parameters tie the dispatch functions together: ``run_before`` on a
``BeforePoint[C, T]`` takes a ``C`` and returns ``Cont[C] | Halt[T]``. Declaring a
point (constructing it) registers its name, so a callback method misspelled close
to it is caught when a callbacks list is compiled.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar, Final, Generic, TypeVar, final

if TYPE_CHECKING:
    from hooks._contexts import AgentContext, ModelContext, ToolContext
    from hooks._messages import ModelResponse, ToolResult

__all__ = [
    "AFTER_AGENT",
    "AFTER_MODEL",
    "AFTER_TOOL",
    "BEFORE_AGENT",
    "BEFORE_MODEL",
    "BEFORE_TOOL",
    "ON_MODEL_ERROR",
    "ON_TOOL_ERROR",
    "AfterPoint",
    "BeforePoint",
    "ErrorPoint",
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
    "event": "(event)",
}

_lock = threading.Lock()
_known: dict[str, str] = {ON_EVENT: "event"}  # declared name -> kind


def known_points() -> dict[str, str]:
    """A snapshot of every declared point name and its kind (``"before"``, ``"after"``, ...)."""
    with _lock:
        return dict(_known)


def declarations() -> int:
    """How many point names are declared: it grows when a new name is declared."""
    return len(_known)


class _Point:
    __slots__ = ("name",)
    kind: ClassVar[str]

    def __init__(self, name: str, /) -> None:
        checked: object = name  # callers without a type checker pass anything
        if not isinstance(checked, str) or not name.isidentifier() or name.startswith("_"):
            msg = f"a hook point name must be a public identifier, got {name!r}"
            raise ValueError(msg)
        with _lock:
            kind = _known.setdefault(name, self.kind)
        if kind != self.kind:
            msg = (
                f"hook point name {name!r} is already declared as a {kind} point; "
                f"it cannot also be a {type(self).__name__}"
            )
            raise ValueError(msg)
        object.__setattr__(self, "name", name)

    name: Final[str]  # type: ignore[misc]  # set once in __init__, read-only after

    def __setattr__(self, attr: str, value: object) -> None:
        msg = f"hook points are immutable: cannot set {attr!r} on {self!r}"
        raise AttributeError(msg)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))


@final
class BeforePoint(_Point, Generic[C, T]):
    """A point whose methods take ``(ctx)`` and return ``Cont[C] | Halt[T]``."""

    __slots__ = ()
    kind = "before"


@final
class AfterPoint(_Point, Generic[T, C]):
    """A point whose methods take ``(outcome, ctx)`` and return a ``Result[T, Exception]``."""

    __slots__ = ()
    kind = "after"


@final
class ErrorPoint(_Point, Generic[C, T]):
    """A point whose methods take ``(failure, ctx)`` and return ``Retry | Fallback | Failure``."""

    __slots__ = ()
    kind = "error"


BEFORE_AGENT: Final[BeforePoint[AgentContext, ModelResponse]] = BeforePoint("before_agent")
AFTER_AGENT: Final[AfterPoint[ModelResponse, AgentContext]] = AfterPoint("after_agent")
BEFORE_MODEL: Final[BeforePoint[ModelContext, ModelResponse]] = BeforePoint("before_model")
AFTER_MODEL: Final[AfterPoint[ModelResponse, ModelContext]] = AfterPoint("after_model")
ON_MODEL_ERROR: Final[ErrorPoint[ModelContext, ModelResponse]] = ErrorPoint("on_model_error")
BEFORE_TOOL: Final[BeforePoint[ToolContext, ToolResult]] = BeforePoint("before_tool")
AFTER_TOOL: Final[AfterPoint[ToolResult, ToolContext]] = AfterPoint("after_tool")
ON_TOOL_ERROR: Final[ErrorPoint[ToolContext, ToolResult]] = ErrorPoint("on_tool_error")
