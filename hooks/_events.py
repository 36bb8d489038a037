"""What observers see: one frozen ``HookEvent`` per hook-point dispatch."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypeVar, final, overload

from hooks._slots import slot_init

__all__ = ["AsyncObserver", "HookEvent", "Observer", "OutcomeTag", "observing"]

F = TypeVar("F", bound=Callable[..., Any])

OutcomeTag: TypeAlias = Literal[
    "cont", "halt", "pause", "success", "failure", "retry", "fallback", "raised"
]
"""How a dispatch ended: the tag of its result, or ``"raised"`` when a callback raised."""


@slot_init
@dataclass(frozen=True, slots=True)
class HookEvent:
    """One dispatch of one hook point, told to observers after its chain ran.

    ``error`` is the exception a callback raised (``outcome == "raised"``), the error
    carried by a ``Failure`` result, or, for an error point that recovered, the error it
    recovered from. ``duration`` is the chain's time in seconds, ``time`` (``time.time()``)
    when it started, ``attempt`` the operation's attempt (from 1).

    ``callback`` names the callback that decided the dispatch -- the one that halted,
    recovered, replaced the context or outcome, or raised (see ``hooks.Trace``) -- as
    messages name it (``"Guard instance"``, ``"module 'guards'"``); ``None`` when no
    callback changed anything. ``run_id`` tells apart the events of concurrent runs.

    What the chain saw and did, for observers that audit it: ``context`` is the context
    the dispatch was given (a ``ToolContext`` for a tool point: the call as the model
    asked for it, even when a guard halted it); ``given`` is what the chain started from
    (that context at before and wrap points, the outcome at after points, the failure at
    error points: a model response as it was billed, before any callback replaced it);
    ``result`` is what the chain returned (``Cont``, ``Halt``, ``Pause``, ``Success``,
    ``Failure``, ``Retry``, ``Fallback``), ``None`` when a callback raised. Not
    compared: two events are equal when their other fields are.
    """

    point: str
    agent: str
    branch: str
    outcome: OutcomeTag
    duration: float
    tool: str | None = None
    call_id: str | None = None
    error: BaseException | None = None
    attempt: int = 1
    time: float = 0.0
    callback: str | None = None
    run_id: str = ""
    context: object = field(default=None, compare=False, repr=False)
    given: object = field(default=None, compare=False, repr=False)
    result: object = field(default=None, compare=False, repr=False)


@final
class Observer:
    """A callback whose only method is ``on_event``; built by ``observing``."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[HookEvent], object], /) -> None:
        self._fn = _callable(fn)

    def on_event(self, event: HookEvent, /) -> None:
        """Call the wrapped function with ``event``."""
        self._fn(event)

    def __repr__(self) -> str:
        return f"observing({getattr(self._fn, '__qualname__', self._fn)!r})"


@final
class AsyncObserver:
    """An observer whose ``on_event`` awaits an ``async def`` function; built by ``observing``.

    Only async dispatch (``Runner.arun``) can await it; a sync run refuses it.
    """

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[HookEvent], Awaitable[object]], /) -> None:
        self._fn = _callable(fn)

    async def on_event(self, event: HookEvent, /) -> None:
        """Await the wrapped function with ``event``."""
        await self._fn(event)

    def __repr__(self) -> str:
        return f"observing({getattr(self._fn, '__qualname__', self._fn)!r})"


@overload
def observing(  # type: ignore[overload-overlap]  # an async def is matched first, on purpose
    fn: Callable[[HookEvent], Awaitable[object]], /
) -> AsyncObserver: ...
@overload
def observing(fn: Callable[[HookEvent], object], /) -> Observer: ...
def observing(
    fn: Callable[[HookEvent], Awaitable[object]] | Callable[[HookEvent], object], /
) -> Observer | AsyncObserver:
    """Turn ``fn(event)`` into an observer callback: ``callbacks=[observing(print)]``.

    An ``async def`` function gives an ``AsyncObserver``, awaited by async runs.
    """
    if inspect.iscoroutinefunction(fn):
        return AsyncObserver(fn)
    return Observer(fn)


def _callable(fn: F) -> F:
    checked: object = fn  # callers without a type checker pass anything
    if not callable(checked):
        msg = f"observing() takes a function of one HookEvent, got {type(fn).__name__}"
        raise TypeError(msg)
    return fn
