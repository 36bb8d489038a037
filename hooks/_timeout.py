"""Per-hook deadlines: ``with_timeout(callback, seconds, fail="closed" | "open")``.

``with_timeout`` returns a callback with exactly the hook methods of the one it is
given, each run under ``asyncio.timeout(seconds)``. Only ``async def`` methods can be
bounded -- a running plain ``def`` cannot be pre-empted -- so a callback with a plain
hook method is refused (``on_event`` is passed through as it is, sync or async: an
observer changes no flow). What an overrun does is the caller's explicit choice,
``fail="closed"`` (the operation is refused) or ``fail="open"`` (the hook is skipped):

- before: closed gives ``Halt(ToolResult(message, is_error=True))`` at a point whose
  value is ``ToolResult`` (the tool does not run, the model reads why), else raises
  ``HookTimeout`` (the model or agent does not run; the run fails); open gives
  ``Cont(ctx)``;
- after: closed gives ``Failure(HookTimeout)`` (chained to the outcome's error, if
  any); open gives the outcome unchanged;
- error: closed gives ``Failure(HookTimeout)`` chained to the error being handled;
  open gives the failure unchanged;
- wrap: closed gives ``Failure(HookTimeout)``; open gives what ``call_next`` last gave
  back, or, if the wrap never called it, calls it now.

A wrap's deadline bounds the wrap's own work: it stops while the wrap's ``call_next``
runs (the wraps inside it and the operation have their own time), so a slow cache,
validator or semaphore is cut short, never the operation in the middle. Every overrun
is logged (``logging.getLogger("hooks")``, a warning) and recorded in the wrapper's
``timeouts`` list as a ``TimeoutRecord``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias, final

from returns.result import Failure

from hooks._errors import Described, HookTimeout, InvalidCallbacks, describe
from hooks._messages import ToolResult
from hooks._points import declarations, first_declared, kind_of
from hooks._results import Cont, Halt
from hooks._validate import HOOK_PREFIXES, is_async, public
from hooks._verdicts import validate

__all__ = ["Fail", "TimedCallback", "TimeoutRecord", "with_timeout"]

Fail: TypeAlias = Literal["closed", "open"]
"""What a hook that overran does: refuse the operation, or be skipped."""

_log: Final = logging.getLogger("hooks")
_UNSET: Final = object()
Fn: TypeAlias = Callable[..., Any]


@final
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


def with_timeout(callback: object, seconds: float, *, fail: Fail) -> TimedCallback:
    """``callback`` with each async hook method bounded by ``seconds`` (see the table above).

    ``fail`` has no default: ``"closed"`` refuses the operation when a hook overruns,
    ``"open"`` skips the hook. Raises ``InvalidCallbacks`` for a callback with a plain
    ``def`` hook method (it cannot be pre-empted), with a hook-shaped method of no
    declared point (declare the point first), or with nothing to bound; the callback is
    validated as a callbacks list entry first.
    """
    checked: object = seconds  # callers without a type checker pass anything
    if type(checked) not in (int, float) or not 0 < seconds < math.inf:
        msg = f"with_timeout: seconds must be a finite number > 0, got {seconds!r}"
        raise ValueError(msg)
    if fail not in ("closed", "open"):
        msg = f"with_timeout: fail must be 'closed' or 'open', got {fail!r}"
        raise ValueError(msg)
    validate(callback, declarations())
    hooks: dict[str, Fn] = {}
    shape: list[tuple[str, str, bool]] = []
    for name in dir(callback):
        fn: object = getattr(callback, name, None)
        if not public(name) or not callable(fn):
            continue
        kind = kind_of(name)
        if kind is None:
            if name.startswith(HOOK_PREFIXES):
                _refuse(callback, name, "is no declared hook point yet; declare its point first")
            continue
        if kind != "event" and not is_async(fn):
            _refuse(callback, name, "is a plain def, which cannot be pre-empted; make it async def")
        hooks[name] = fn
        flag = is_async(fn) if kind == "event" else kind == "before" and _halts(name)
        shape.append((name, kind, flag))
    if not any(kind != "event" for _, kind, _ in shape):
        _refuse(callback, None, "has no hook method to bound")
    return _timed_class(tuple(shape))(callback, float(seconds), fail, hooks)


def _refuse(callback: object, name: str | None, problem: str) -> None:
    where = describe(callback) if name is None else f"{describe(callback)}.{name}"
    msg = f"with_timeout: {where} {problem}"
    raise InvalidCallbacks(msg, callback=callback, attribute=name)


def _halts(name: str) -> bool:
    """Whether a before point refuses with ``Halt(ToolResult(...))``: its value is a tool's."""
    point = first_declared(name)
    return point is not None and point.value is ToolResult


# -- the methods, one maker per kind --------------------------------------------------


def _before(name: str, halts: bool) -> Fn:
    async def method(self: TimedCallback, ctx: object, /) -> object:
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

    return method


def _after(name: str, _flag: bool) -> Fn:
    async def method(self: TimedCallback, given: object, ctx: object, /) -> object:
        deadline = asyncio.timeout(self.seconds)
        try:
            async with deadline:
                return await self._hooks[name](given, ctx)
        except TimeoutError:
            if not deadline.expired():
                raise
        self._overran(name)
        return given if self.fail == "open" else Failure(self._error(name, given))

    return method


def _wrap(name: str, _flag: bool) -> Fn:
    async def method(
        self: TimedCallback, ctx: object, call_next: Callable[[object], Awaitable[object]], /
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
        self.remaining: float | None = None  # the deadline's time left when it stopped
        self.done = False  # the wrap returned: its deadline is gone
        self.last: object = _UNSET  # what call_next last gave back

    async def call_next(self, ctx: object, /) -> object:
        """The wrap's ``call_next``, run without its deadline."""
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
            if self.active == 0 and self.remaining is not None and self._running():
                self.deadline.reschedule(asyncio.get_running_loop().time() + self.remaining)
                self.remaining = None
        self.last = outcome
        return outcome

    def _running(self) -> bool:
        return not self.done and not self.deadline.expired()


_classes: dict[tuple[tuple[str, str, bool], ...], type[TimedCallback]] = {}
_lock = threading.Lock()


def _timed_class(shape: tuple[tuple[str, str, bool], ...]) -> type[TimedCallback]:
    """The ``TimedCallback`` subclass with these hook methods, made once per shape."""
    with _lock:
        cls = _classes.get(shape)
        if cls is None:
            namespace: dict[str, object] = {"__slots__": (), "__module__": __name__}
            for name, kind, flag in shape:
                method = _MAKERS[kind](name, flag)
                method.__name__ = name
                method.__qualname__ = f"TimedCallback.{name}"
                namespace[name] = method
            namespace["__doc__"] = TimedCallback.__doc__
            cls = _classes[shape] = type("TimedCallback", (TimedCallback,), namespace)
        return cls
