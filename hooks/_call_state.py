"""``CallState``: what the hooks of one call share -- its before and after halves, its
wraps and its error hooks -- and nothing else."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar, final, overload

from typing_extensions import TypeVar as DefaultTypeVar

from hooks._state import StateKey

__all__ = ["CallState"]

T = TypeVar("T")
D = DefaultTypeVar("D", default=None)
_MISSING: Final[Any] = object()


@final
class CallState:
    """The state of one model or tool call, on its context as ``ctx.call_state``.

    Made when the call starts and carried by every context of that call: the one its
    before hooks get and the ones they hand on (``dataclasses.replace`` keeps it), its
    wraps', its error hooks' and a retried attempt's, its after hooks'. What a before
    hook sets there, the after hook of the same call reads -- what ``Redact`` hid, what
    ``Budget`` reserved -- while concurrent calls each have their own. It is never
    saved: a paused call starts over with a new one when its run resumes. Keys are
    ``StateKey``\\ s (an invocation-scoped one: a call's state lives for the call) or
    strings. The hooks of one call run one after another, so it takes no lock.
    """

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[str, Any] | None = None  # made on the first set: most calls set none

    @overload
    def get(self, key: StateKey[T], default: D = ..., /) -> T | D: ...
    @overload
    def get(self, key: str, default: Any = None, /) -> Any: ...
    def get(self, key: StateKey[Any] | str, default: Any = None, /) -> Any:
        """The value stored under ``key``, or ``default`` (``None``) when there is none."""
        name = _name(key)
        data = self._data
        return default if data is None else data.get(name, default)

    @overload
    def set(self, key: StateKey[T], value: T, /) -> None: ...
    @overload
    def set(self, key: str, value: Any, /) -> None: ...
    def set(self, key: StateKey[Any] | str, value: Any, /) -> None:
        """Store ``value`` under ``key``, replacing what was there."""
        name = _name(key)
        if self._data is None:
            self._data = {}
        self._data[name] = value

    @overload
    def update(self, key: StateKey[T], fn: Callable[[T | None], T], /) -> T: ...
    @overload
    def update(self, key: StateKey[T], fn: Callable[[T], T], /, *, default: T) -> T: ...
    @overload
    def update(self, key: str, fn: Callable[[Any], Any], /, *, default: Any = ...) -> Any: ...
    def update(
        self, key: StateKey[Any] | str, fn: Callable[[Any], Any], /, *, default: Any = _MISSING
    ) -> Any:
        """Store ``fn(current)`` under ``key`` and return it (``current``: the stored value,
        else ``default`` when given, else ``None``). If ``fn`` raises, nothing is stored."""
        name = _name(key)
        data = self._data
        current = None if default is _MISSING else default
        if data is not None:
            current = data.get(name, current)
        value = fn(current)
        self.set(name, value)
        return value

    def pop(self, key: StateKey[Any] | str, default: Any = None, /) -> Any:
        """Remove ``key`` and return its value, or ``default`` when there is none."""
        name = _name(key)
        return default if self._data is None else self._data.pop(name, default)

    def __contains__(self, key: object) -> bool:
        if self._data is None:
            return False
        if isinstance(key, str):
            return key in self._data
        if isinstance(key, StateKey):
            return key.name in self._data  # pyright: ignore[reportUnknownMemberType]
        return False

    def __iter__(self) -> Iterator[str]:
        return iter(() if self._data is None else list(self._data))

    def __len__(self) -> int:
        return 0 if self._data is None else len(self._data)

    def __repr__(self) -> str:
        return f"CallState({self._data or {}!r})"


def _name(key: StateKey[Any] | str) -> str:
    if isinstance(key, StateKey):
        if key.scope != "invocation":
            msg = (
                f"{key!r} is {key.scope}-scoped; a call's state lives for one call: "
                "use an invocation-scoped StateKey (or a str)"
            )
            raise ValueError(msg)
        return key.name
    if isinstance(key, str):
        return key
    msg = f"call state keys are StateKey or str, got {type(key).__name__}"  # type: ignore[unreachable]
    raise TypeError(msg)
