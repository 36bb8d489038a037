"""The invocation record and its thread-safe, typed ``state``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, final, overload

__all__ = ["Invocation", "State", "StateKey"]

T = TypeVar("T")
D = TypeVar("D")


@final
class StateKey(Generic[T]):
    """A typed key: ``COUNT = StateKey[int]("count")`` makes ``state.get(COUNT)`` an ``int | None``.

    Two keys with the same name address the same entry (plain strings too).
    """

    __slots__ = ("name",)

    def __init__(self, name: str, /) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


@final
class State:
    """Invocation-scoped state shared by every callback of one run; safe across threads."""

    __slots__ = ("_data", "_lock")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._lock = threading.Lock()

    @overload
    def get(self, key: StateKey[T], /) -> T | None: ...
    @overload
    def get(self, key: StateKey[T], default: D, /) -> T | D: ...
    @overload
    def get(self, key: str, default: Any = None, /) -> Any: ...
    def get(self, key: StateKey[Any] | str, default: Any = None, /) -> Any:
        """The value stored under ``key``, or ``default`` when there is none."""
        with self._lock:
            return self._data.get(_name(key), default)

    @overload
    def set(self, key: StateKey[T], value: T, /) -> None: ...
    @overload
    def set(self, key: str, value: Any, /) -> None: ...
    def set(self, key: StateKey[Any] | str, value: Any, /) -> None:
        """Store ``value`` under ``key``, replacing what was there."""
        with self._lock:
            self._data[_name(key)] = value

    def delete(self, key: StateKey[Any] | str, /) -> None:
        """Remove ``key``; a missing key is not an error."""
        with self._lock:
            self._data.pop(_name(key), None)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, StateKey | str):
            return False
        with self._lock:
            return _name(key) in self._data

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._data))

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def __repr__(self) -> str:
        with self._lock:
            return f"State({self._data!r})"


def _name(key: StateKey[Any] | str) -> str:
    if isinstance(key, StateKey):
        return key.name
    if isinstance(key, str):
        return key
    msg = f"state keys are StateKey or str, got {type(key).__name__}"  # type: ignore[unreachable]
    raise TypeError(msg)


@dataclass(frozen=True, slots=True)
class Invocation:
    """Who and where a run is: ids, the agent running, its branch and the shared ``state``.

    ``branch`` is the path of agent names, ``"assistant/researcher"`` inside a sub-agent.
    """

    id: str
    agent: str
    branch: str
    user_id: str = "user"
    session_id: str = ""
    state: State = field(default_factory=State, compare=False, repr=False)
