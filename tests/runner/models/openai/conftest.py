"""The ``responses`` fixture: a running Responses API server (``tests/helpers``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.openai_server import forget_environment
from tests.helpers.responses_server import ResponsesServer


@pytest.fixture
def responses(monkeypatch: pytest.MonkeyPatch) -> Iterator[ResponsesServer]:
    """A running ``ResponsesServer`` (and a clean environment), stopped after the test; it
    must see no unexpected request."""
    forget_environment(monkeypatch)
    with ResponsesServer() as running:
        yield running
    assert running.unexpected == 0, f"requests beyond the script: {running.paths}"
