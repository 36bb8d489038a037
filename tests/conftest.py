"""Fixtures every test folder may use (a local OpenAI-compatible server, a clean
environment), and the ``slow`` mark for durable, PostgreSQL and subprocess tests.

Narrower fixtures live in the conftest.py of the folder that uses them (``tests/runner``:
``mode``, ``waits``; ``tests/runner/telemetry``: ``traced``; ``tests/runner/durable``:
``launched``, ``postgres``). Helpers that are no fixtures are in ``tests/helpers``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.openai_server import OpenAIServer, forget_environment

SLOW_KINDS = ("durable", "postgres", "subprocess")
"""The markers that make a test slow: it is left out of ``make check`` (``-m "not slow"``)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test marked with one of ``SLOW_KINDS``."""
    for item in items:
        if any(item.get_closest_marker(kind) is not None for kind in SLOW_KINDS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``OPENAI_*`` setting of the machine running the tests reaches a client."""
    forget_environment(monkeypatch)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A running ``OpenAIServer`` (and a clean environment), stopped after the test; it must
    see no unexpected request."""
    forget_environment(monkeypatch)
    with OpenAIServer() as running:
        yield running
    assert running.unexpected == 0, f"requests beyond the script: {running.paths}"
