"""Fixtures of the ``AnthropicModel`` tests: a running loopback Messages API server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.anthropic_server import AnthropicServer, forget_environment


@pytest.fixture
def anthropic_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicServer]:
    """A running ``AnthropicServer`` (and no ``ANTHROPIC_*`` setting of the machine), stopped
    after the test; it must see no unexpected request."""
    forget_environment(monkeypatch)
    with AnthropicServer() as running:
        yield running
    assert running.unexpected == 0, f"requests beyond the script: {running.paths}"
