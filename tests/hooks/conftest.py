"""Fixtures of the hooks tests: sync or async dispatch, callbacks as modules or instances,
a trace or none."""

from __future__ import annotations

import pytest

from hooks import Trace
from tests.helpers.dispatch import KINDS, Dispatch


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Sync dispatch, or async dispatch through ``asyncio.run`` (with ``async def`` hooks)."""
    value: str = request.param
    return value


@pytest.fixture
def dispatch(mode: str) -> Dispatch:
    """The dispatch functions of ``mode``."""
    return Dispatch(mode)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    """Callbacks given as modules or as instances."""
    value: str = request.param
    return value


@pytest.fixture(params=["fast", "traced"])
def trace(request: pytest.FixtureRequest) -> Trace | None:
    """No trace (the fast loops), or a trace (the general path)."""
    return None if request.param == "fast" else Trace()
