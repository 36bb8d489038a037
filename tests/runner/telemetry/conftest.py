"""Fixtures of the telemetry tests: an in-memory tracer provider."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.spans import Traced


@pytest.fixture
def traced() -> Iterator[Traced]:
    """A fresh in-memory tracer provider, shut down after the test."""
    made = Traced()
    yield made
    made.provider.shutdown()
