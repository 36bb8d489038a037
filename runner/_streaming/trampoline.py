"""``trampoline``: a run's coroutine stepped inside the stream that yields its items.

``Runner.stream`` drives the run coroutine itself, one step at a time, in the
consumer's own task: after each step it yields what the step put in the channel, then
waits for what the run waits on (the very future or bare yield the run's coroutine gave
up, handed to the consumer's task as a task would). No second task, no wake-up per
delta: a delta costs a push and a yield. The consumer sets the pace: the run goes on
only when the next item is asked for.

The run keeps a context of its own, as a task's coroutine does (a copy of the
consumer's when the stream starts): what it sets there -- the span under way in a
traced run, a callback's context variables -- never leaks into the consumer's code
between items, nor the consumer's into it.

An exception the run raises comes after the items that led to it. A consumer that
stops early (``break`` then ``aclose()``, or cancellation) cancels the run as a task
is cancelled -- ``CancelledError`` thrown in where it waits -- and the stream drives it
to its end, so its ``finally`` blocks and tool-call tasks are done with before
``aclose()`` returns.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncGenerator, Callable, Coroutine, Generator
from typing import Any, Generic, TypeVar, final

from runner._streaming.channel import Channel, Item

__all__ = ["Outcome", "trampoline"]

T = TypeVar("T")


@final
class _Pass:
    """Awaiting it gives the consumer's task what the run's coroutine yielded, as is."""

    __slots__ = ("yielded",)

    def __init__(self, yielded: object) -> None:
        self.yielded = yielded

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self.yielded)


@final
class Outcome(Generic[T]):
    """Where the run's return value lands once the stream has ended."""

    __slots__ = ("done", "value")

    def __init__(self) -> None:
        self.done = False
        self.value: T | None = None


async def trampoline(
    start: Callable[[], Coroutine[Any, Any, T]], channel: Channel, outcome: Outcome[T]
) -> AsyncGenerator[list[Item], None]:
    """Step the coroutine ``start()`` makes to its end, yielding the channel's items after
    each step as a list (the stream yields each one: one async generator hop per item).

    The coroutine is made on the first step: a stream closed before it asked for an item
    of the run leaves no coroutine that was never awaited.
    """
    coro = start()
    thrown: BaseException | None = None
    context = contextvars.copy_context()
    try:
        while True:
            try:
                if thrown is None:
                    yielded = context.run(coro.send, None)
                else:
                    yielded = context.run(coro.throw, thrown)
            except StopIteration as done:
                outcome.done, outcome.value = True, done.value
                yield channel.take()
                return
            except BaseException:
                outcome.done = True
                yield channel.take()
                raise
            thrown = None
            items = channel.take()
            if items:
                yield items
            try:
                await _Pass(yielded)
            except BaseException as exc:  # the consumer's task cancelled: so is the run
                thrown = exc
    finally:
        if not outcome.done:
            await _cancel(coro, context)  # stopped at a yield: nothing is left thrown


async def _cancel(coro: Coroutine[Any, Any, Any], context: contextvars.Context) -> None:
    """Throw ``CancelledError`` into an unfinished run and drive it, in its context, to its
    end.

    The consumer's task cancelled again meanwhile: that goes into the run too, and is
    raised once the run has ended, as awaiting a cancelled task would raise it (else a
    ``cancel()`` or an ``asyncio.timeout`` expiring during ``aclose()`` would be lost).
    """
    error: BaseException | None = asyncio.CancelledError()
    again: BaseException | None = None
    while True:
        try:
            if error is None:
                yielded = context.run(coro.send, None)
            else:
                yielded = context.run(coro.throw, error)
        except BaseException:  # the run's end, whatever it raised: it was cancelled
            break
        error = None
        try:
            await _Pass(yielded)
        except BaseException as exc:  # cancelled again while it winds down
            error = again = exc
    if again is not None:
        raise again
