"""The callbacks ``with_timeout`` builds: ``TimedCallback`` and its methods, per kind of point.

One subclass of ``TimedCallback`` is made per shape (which hook methods, of which
kinds), so each has plain ``async def`` methods that validation checks once per class.
Each method runs the wrapped callback's own under ``asyncio.timeout`` and, when the
deadline passes, does what ``fail`` says (see ``hooks._timeout``). A wrap's method
stops its deadline while ``call_next`` runs (``_Paused``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, final

from returns.result import Failure

from hooks._errors import Described, HookTimeout, describe
from hooks._messages import ToolResult
from hooks._results import Cont, Halt
from hooks._slots import slot_init

__all__ = ["Fail", "TimedCallback", "TimeoutRecord", "timed_class"]

Fail: TypeAlias = Literal["closed", "open"]
"""What a hook that overran does: refuse the operation, or be skipped."""

Fn: TypeAlias = Callable[..., Any]
Shape: TypeAlias = tuple[tuple[str, str, bool], ...]
"""(name, kind, flag) per method: for before, whether it halts; for event, whether async."""

_log: Final = logging.getLogger("hooks")
_UNSET: Final = object()


@final
@slot_init
@dataclass(frozen=True, slots=True)
class TimeoutRecord:
    """One hook method that overran its deadline under ``with_timeout``.

    ``point`` is the hook point's name, ``callback`` the callback given to
    ``with_timeout``, ``fail`` what was done about it and ``time`` when
    (``time.time()``).
    """

    point: str
    callback: object
    seconds: float
    fail: Fail
    time: float


class TimedCallback(Described):
    """A callback whose async hook methods run under a deadline; built by ``with_timeout``.

    It has exactly the wrapped callback's hook methods (and its ``on_event``).
    ``timeouts`` lists every overrun so far, oldest first; messages name it as the
    wrapped callback ``under with_timeout(...)``.
    """

    __slots__ = ("_hooks", "callback", "fail", "seconds", "timeouts")

    def __init__(self, callback: object, seconds: float, fail: Fail, hooks: dict[str, Fn]) -> None:
        self.callback: Final = callback
        self.seconds: Final = seconds
        self.fail: Final = fail
        self.timeouts: Final[list[TimeoutRecord]] = []
        self._hooks: Final = hooks

    def _description(self) -> str:
        return (
            f"{describe(self.callback)} under with_timeout({self.seconds:g}s, fail={self.fail!r})"
        )

    def __repr__(self) -> str:
        return f"with_timeout({self.callback!r}, {self.seconds!r}, fail={self.fail!r})"

    def _overran(self, name: str) -> None:
        self.timeouts.append(
            TimeoutRecord(name, self.callback, self.seconds, self.fail, time.time())
        )
        done = "the hook is skipped" if self.fail == "open" else "the operation is refused"
        _log.warning(
            "%s of %s timed out after %gs; fail=%r: %s",
            name,
            describe(self.callback),
            self.seconds,
            self.fail,
            done,
        )

    def _error(self, name: str, given: object) -> HookTimeout:
        error = HookTimeout(self.callback, name, self.seconds)
        if type(given) is Failure:
            error.__context__ = given.failure()  # pyright: ignore[reportUnknownMemberType]
        return error

    # What each kind of hook method does; the methods themselves (made per shape by
    # ``timed_class``) only say which hook and which kind.

    async def _before(self, name: str, halts: bool, ctx: object) -> object:
        deadline = asyncio.timeout(self.seconds)
        try:
            async with deadline:
                return await self._hooks[name](ctx)
        except TimeoutError:
            if not deadline.expired():
                raise  # the hook's own TimeoutError
        self._overran(name)
        if self.fail == "open":
            return Cont(ctx)
        error = HookTimeout(self.callback, name, self.seconds)
        if halts:
            return Halt(ToolResult(str(error), is_error=True))
        raise error

    async def _after(self, name: str, given: object, ctx: object) -> object:
        """An after or an error hook: ``given`` is the outcome or the failure."""
        deadline = asyncio.timeout(self.seconds)
        try:
            async with deadline:
                return await self._hooks[name](given, ctx)
        except TimeoutError:
            if not deadline.expired():
                raise
        self._overran(name)
        return given if self.fail == "open" else Failure(self._error(name, given))

    async def _wrap(
        self, name: str, ctx: object, call_next: Callable[[object], Awaitable[object]]
    ) -> object:
        deadline = asyncio.timeout(self.seconds)
        paused = _Paused(deadline, call_next)
        try:
            async with deadline:
                return await self._hooks[name](ctx, paused.call_next)
        except TimeoutError:
            if not deadline.expired():
                raise
        finally:
            paused.done = True
        self._overran(name)
        if self.fail == "closed":
            return Failure(self._error(name, None))
        return await call_next(ctx) if paused.last is _UNSET else paused.last


# -- the methods, one maker per kind ----------------------------------------------------


def _before(name: str, halts: bool) -> Fn:
    async def method(self: TimedCallback, ctx: object, /) -> object:
        return await self._before(name, halts, ctx)

    return method


def _after(name: str, _flag: bool) -> Fn:
    async def method(self: TimedCallback, given: object, ctx: object, /) -> object:
        return await self._after(name, given, ctx)

    return method


def _wrap(name: str, _flag: bool) -> Fn:
    async def method(
        self: TimedCallback, ctx: object, call_next: Callable[[object], Awaitable[object]], /
    ) -> object:
        return await self._wrap(name, ctx, call_next)

    return method


def _event(name: str, is_async_: bool) -> Fn:
    if is_async_:

        async def on_event(self: TimedCallback, event: object, /) -> None:
            await self._hooks[name](event)

        return on_event

    def on_event_sync(self: TimedCallback, event: object, /) -> None:
        self._hooks[name](event)

    return on_event_sync


_MAKERS: Final[dict[str, Callable[[str, bool], Fn]]] = {
    "before": _before,
    "after": _after,
    "error": _after,  # (failure, ctx): the same shape as (outcome, ctx)
    "wrap": _wrap,
    "event": _event,
}


@final
class _Paused:
    """A wrap's ``call_next``, stopping the wrap's deadline while it runs."""

    __slots__ = ("_call_next", "active", "deadline", "done", "last", "remaining")

    def __init__(
        self, deadline: asyncio.Timeout, call_next: Callable[[object], Awaitable[object]]
    ) -> None:
        self.deadline = deadline
        self._call_next = call_next
        self.active = 0  # call_next calls running (a wrap may run several at once)
        self.remaining = 0.0  # the deadline's time left when it stopped
        self.done = False  # the wrap returned: its deadline is gone
        self.last: object = _UNSET  # what call_next last gave back

    async def call_next(self, ctx: object, /) -> object:
        """The wrap's ``call_next``, run without its deadline.

        The deadline stops when the first of the running calls starts and goes on when
        the last one ends -- unless it has passed or the wrap has returned meanwhile
        (both for good: the one that starts the calls is the one that ends them).
        """
        self.active += 1
        if self.active == 1 and self._running():
            when = self.deadline.when()
            assert when is not None  # asyncio.timeout(seconds) has a deadline
            self.remaining = when - asyncio.get_running_loop().time()
            self.deadline.reschedule(None)
        try:
            outcome = await self._call_next(ctx)
        finally:
            self.active -= 1
            if self.active == 0 and self._running():
                self.deadline.reschedule(asyncio.get_running_loop().time() + self.remaining)
        self.last = outcome
        return outcome

    def _running(self) -> bool:
        """Whether the deadline can still be moved: it has not passed, the wrap is running."""
        return not self.done and not self.deadline.expired()


_classes: dict[Shape, type[TimedCallback]] = {}
_lock = threading.Lock()


def timed_class(shape: Shape) -> type[TimedCallback]:
    """The ``TimedCallback`` subclass with these hook methods, made once per shape."""
    with _lock:
        cls = _classes.get(shape)
        if cls is None:
            namespace: dict[str, object] = {"__slots__": ()}  # (its module: this one)
            for name, kind, flag in shape:
                method = _MAKERS[kind](name, flag)
                method.__name__ = name
                method.__qualname__ = f"TimedCallback.{name}"
                namespace[name] = method
            namespace["__doc__"] = TimedCallback.__doc__
            cls = _classes[shape] = type("TimedCallback", (TimedCallback,), namespace)
        return cls
