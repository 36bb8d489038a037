"""The invocation record and its thread-safe, typed ``state``."""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, TypeAlias, TypeVar, final, overload

from typing_extensions import TypeVar as DefaultTypeVar

from hooks._slots import slot_init
from hooks._tool_info import ToolInfo

__all__ = ["Invocation", "Scope", "State", "StateKey"]

T = TypeVar("T")
# The default's type in ``get``. Its own default (None) is what makes ``get(KEY)`` an
# ``int | None`` that mypy can also read where any object will do (f-strings, logging,
# a ``dict[str, object]``): with a plain ``-> T | None`` mypy solved ``T`` from such a
# context as ``object`` and then refused ``StateKey[int]`` for ``StateKey[object]``.
D = DefaultTypeVar("D", default=None)
_MISSING: Final[Any] = object()

Scope: TypeAlias = Literal["invocation", "session"]
"""How long a state value lives: one run, or the session (saved with it)."""
_SCOPES: Final = ("invocation", "session")
_NO_TOOLS: Final[Mapping[str, ToolInfo]] = types.MappingProxyType({})


def _no_tools() -> Mapping[str, ToolInfo]:
    return _NO_TOOLS


@final
class StateKey(Generic[T]):
    """A typed key: ``COUNT = StateKey[int]("count")`` makes ``state.get(COUNT)`` an ``int | None``.

    Two keys with the same name address the same entry (plain strings too). A key is
    immutable: its ``name`` and ``scope`` cannot be reassigned.

    ``scope`` says how long a value set through the key lives: ``"invocation"`` (the
    default) for one run; ``"session"`` for the session: the runner seeds each run's
    state with the values its session keeps and saves the session-scoped values with
    the session at the end of the run (they must be JSON-serialisable).
    """

    __slots__ = ("name", "scope")

    def __init__(self, name: str, /, *, scope: Scope = "invocation") -> None:
        checked: object = name  # callers without a type checker pass anything
        if not isinstance(checked, str):
            msg = f"a StateKey's name must be a str, got {type(checked).__name__} {checked!r:.60}"
            raise TypeError(msg)
        given: object = scope
        if given not in _SCOPES:
            msg = (
                f"StateKey({name!r}) scope must be 'invocation' or 'session', "
                f"got {type(given).__name__} {given!r:.60}"
            )
            raise (ValueError if isinstance(given, str) else TypeError)(msg)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "scope", scope)

    name: Final[str]  # type: ignore[misc]  # set once in __init__, read-only after
    scope: Final[Scope]  # type: ignore[misc]  # set once in __init__, read-only after

    def __setattr__(self, attr: str, value: object) -> None:
        msg = f"state keys are immutable: cannot set {attr!r} on {self!r}"
        raise AttributeError(msg)

    def __repr__(self) -> str:
        if self.scope == "invocation":
            return f"StateKey({self.name!r})"
        return f"StateKey({self.name!r}, scope={self.scope!r})"


@final
class State:
    """The state shared by every callback of one run; safe across threads.

    Entries are invocation-scoped unless their name is session-scoped: set through a
    ``StateKey(..., scope="session")``, or seeded with ``scope="session"`` (the values
    the run's session kept). A session-scoped name stays so for the run, whichever key
    or string writes it; ``snapshot(scope="session")`` is what the session keeps.
    """

    __slots__ = ("_data", "_lock", "_session")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._session: set[str] = set()  # the session-scoped names
        # Reentrant: an ``update`` function that reads the state waits for no one.
        self._lock = threading.RLock()

    @overload
    def get(self, key: StateKey[T], default: D = ..., /) -> T | D: ...
    @overload
    def get(self, key: str, default: Any = None, /) -> Any: ...
    def get(self, key: StateKey[Any] | str, default: Any = None, /) -> Any:
        """The value stored under ``key``, or ``default`` (``None``) when there is none."""
        with self._lock:
            return self._data.get(_name(key), default)

    @overload
    def set(self, key: StateKey[T], value: T, /) -> None: ...
    @overload
    def set(self, key: str, value: Any, /) -> None: ...
    def set(self, key: StateKey[Any] | str, value: Any, /) -> None:
        """Store ``value`` under ``key``, replacing what was there."""
        name = _name(key)
        with self._lock:
            self._data[name] = value
            if type(key) is StateKey and key.scope == "session":
                self._session.add(name)

    @overload
    def update(self, key: StateKey[T], fn: Callable[[T | None], T], /) -> T: ...
    @overload
    def update(self, key: StateKey[T], fn: Callable[[T], T], /, *, default: T) -> T: ...
    @overload
    def update(self, key: str, fn: Callable[[Any], Any], /, *, default: Any = ...) -> Any: ...
    def update(
        self, key: StateKey[Any] | str, fn: Callable[[Any], Any], /, *, default: Any = _MISSING
    ) -> Any:
        """Store ``fn(current)`` under ``key`` atomically and return it.

        ``current`` is the stored value, else ``default`` when given, else ``None``::

            state.update(CALLS, lambda n: n + 1, default=0)

        No other ``set`` or ``update`` of this state runs in between, so concurrent
        updates are never lost. ``fn`` runs under the state's lock: keep it short. If it
        raises, nothing is stored.
        """
        name = _name(key)
        with self._lock:
            current = self._data.get(name, None if default is _MISSING else default)
            value = self._data[name] = fn(current)
            if type(key) is StateKey and key.scope == "session":
                self._session.add(name)
            return value

    def delete(self, key: StateKey[Any] | str, /) -> None:
        """Remove ``key``; a missing key is not an error."""
        with self._lock:
            self._data.pop(_name(key), None)

    def seed(self, values: Mapping[str, Any], /, *, scope: Scope = "invocation") -> None:
        """Store each of ``values`` by name (a run's starting state); ``scope`` is theirs."""
        if scope not in _SCOPES:
            msg = f"scope must be 'invocation' or 'session', got {scope!r:.60}"
            raise ValueError(msg)
        with self._lock:
            self._data.update(values)
            if scope == "session":
                self._session.update(values)

    def snapshot(self, *, scope: Scope | None = None) -> Mapping[str, Any]:
        """A read-only copy of the state as it is now: later changes do not show in it.

        ``scope`` keeps the entries of that scope only (``None``: every entry).
        """
        if scope is not None and scope not in _SCOPES:
            msg = f"scope must be 'invocation', 'session' or None, got {scope!r:.60}"
            raise ValueError(msg)
        with self._lock:
            if scope is None:
                return types.MappingProxyType(dict(self._data))
            session, wanted = self._session, scope == "session"
            return types.MappingProxyType(
                {name: value for name, value in self._data.items() if (name in session) is wanted}
            )

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            name = key
        elif isinstance(key, StateKey):
            name = key.name  # pyright: ignore[reportUnknownMemberType]
        else:
            return False
        with self._lock:
            return name in self._data

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


@slot_init
@dataclass(frozen=True, slots=True)
class Invocation:
    """Who and where a run is: ids, the agent running, its branch and the shared ``state``.

    ``branch`` is the path of agent names, ``"assistant/researcher"`` inside a sub-agent.
    ``tools`` describes the agent's tools by name (``ToolContext.tool`` reads it).
    ``deps`` are the run's dependencies (``Runner.run(..., deps=...)``; ``None`` unless
    given): the same object the run's tools get in their ``RunContext``, never saved.
    """

    id: str
    agent: str
    branch: str
    user_id: str = "user"
    session_id: str = ""
    state: State = field(default_factory=State, compare=False, repr=False)
    tools: Mapping[str, ToolInfo] = field(default_factory=_no_tools, compare=False, repr=False)
    deps: Any = field(default=None, compare=False, repr=False)
