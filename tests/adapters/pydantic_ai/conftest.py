"""Fixtures of the pydantic-ai adapter's tests: each test's event loop closed after it.

pydantic-ai's ``run_sync`` runs on the thread's current event loop, making and setting
one when there is none, and never closes it: a later ``asyncio.run`` unsets it, and the
garbage collector then finds it unclosed in whatever test runs next (a ResourceWarning,
which this suite makes an error). Each test here closes what it left set.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _close_the_loop_run_sync_set() -> Iterator[None]:
    """After the test: the thread's current event loop, if one is set and idle, closed."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # none set
            return
    if not loop.is_running() and not loop.is_closed():
        loop.close()
    asyncio.set_event_loop(None)
