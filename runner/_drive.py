"""``complete``: how a sync run drives the loop's coroutines, without an event loop."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["complete"]

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
    msg = "a sync run awaited something that suspends; use Runner.run_async for async code"
    raise RuntimeError(msg)
