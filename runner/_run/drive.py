"""Driving the loop's coroutines: ``complete`` (a sync run, no event loop) and ``Carrier``
(an operation as a wrap chain calls it, its own exceptions carried past the wraps)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar, final

__all__ = ["Carried", "Carrier", "complete"]

T = TypeVar("T")


def complete(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends to its end, without an event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    except RuntimeError as err:
        # A callback's StopIteration left a coroutine as a RuntimeError (PEP 479); a sync
        # run has no coroutine to leave, so it is raised as what the callback raised.
        cause = err.__cause__
        if isinstance(cause, StopIteration) and str(err).endswith("raised StopIteration"):
            raise cause from None
        raise
    coro.close()
    msg = "a sync run awaited something that suspends; use Runner.arun for async code"
    raise RuntimeError(msg)


@final
class Carried(BaseException):
    """An exception the operation raised, carried past the wraps, which let BaseExceptions by."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


@final
class Carrier:
    """An operation as a wrap chain calls it: sync (driven to its end) or awaited."""

    __slots__ = ("operation",)

    def __init__(self, operation: Callable[[Any], Coroutine[Any, Any, Any]]) -> None:
        self.operation = operation

    def run(self, ctx: Any) -> Any:
        """The operation in a sync run, driven to its end."""
        try:
            return complete(self.operation(ctx))
        except Exception as exc:
            raise Carried(exc) from None

    async def arun(self, ctx: Any) -> Any:
        """The operation in an async run, awaited."""
        try:
            return await self.operation(ctx)
        except Exception as exc:
            raise Carried(exc) from None
