"""``OffLoop``: an async run's calls into a session store that blocks, made in a thread.

A store whose calls wait on a file or a network (``SQLiteSessionStore``: a write lock
another process holds, the disk) would stop the event loop, and every run on it, for
as long as a call takes. An async run on such a store makes each store call (lease,
load, save, release, paused states) in a worker thread of a small pool of its runner,
and the loop goes on meanwhile. A store says once whether its calls block (a ``blocks``
attribute, ``False`` for ``InMemorySessions``, whose calls are dict lookups under a lock
and cost less than the hop to a thread); a store that does not say is taken to block.

A call cannot be stopped once its thread runs it. So a run cancelled during one waits
for the call to end before the cancellation goes on: what the run does next on its way
out (giving its lease back) comes after the call, never beside it, and a save the store
makes in one transaction is made whole or not at all. A call still queued when the run
is cancelled never runs.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, Final, TypeVar, final

__all__ = ["OffLoop", "blocks"]

T = TypeVar("T")

STORE_THREADS: Final = 4  # the pool's size: a store serialises its calls (SQLite: one file)


def blocks(store: object) -> bool:
    """Whether calls into ``store`` may block: all but those of a store whose ``blocks`` is
    ``False`` (anything else a store says is taken as yes)."""
    return getattr(store, "blocks", True) is not False


@final
class OffLoop:
    """Makes a run's store calls in a thread of ``pool()``, the event loop free meanwhile."""

    __slots__ = ("_pool",)

    def __init__(self, pool: Callable[[], Executor]) -> None:
        self._pool: Final = pool

    async def call(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``function(*args, **kwargs)`` in a worker thread, in the caller's context.

        Cancelled while the call is queued: it never runs. Cancelled while it runs: it
        runs to its end (raising whatever it raised is dropped), then ``CancelledError``.
        """
        context = contextvars.copy_context()
        submitted: Future[T] = self._pool().submit(context.run, function, *args, **kwargs)
        try:
            return await asyncio.wrap_future(submitted)
        except asyncio.CancelledError:
            # Cancelling the wrapper asked the call to cancel: it did unless it runs.
            if not submitted.cancel():  # running (or done): wait for its end, then go on
                await _settled(submitted)
            raise


async def _settled(submitted: Future[Any]) -> None:
    """Wait for ``submitted`` to end, through any further cancellation of the caller (the
    caller raises its first one after); what it raised counts as seen."""
    waited = asyncio.wrap_future(submitted)
    while not waited.done():
        try:
            await asyncio.wait((waited,))
        except asyncio.CancelledError:
            continue
    if not waited.cancelled():
        waited.exception()
