"""Telemetry against the loopback Messages API server: provider, model names, usage, errors."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest

from runner import Agent, AnthropicModel, Usage
from tests.helpers.anthropic_server import (
    AnthropicServer,
    error,
    forget_environment,
    message,
    text,
    thinking,
    tool_use,
)
from tests.helpers.runs import Mode, add
from tests.helpers.spans import Traced, attributes

USAGE = {
    "input_tokens": 18,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 32,
    "output_tokens": 10,
    "output_tokens_details": {"thinking_tokens": 4},
}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicServer]:
    """A running loopback server; no ``ANTHROPIC_*`` setting of the machine reaches a client."""
    forget_environment(monkeypatch)
    with AnthropicServer() as running:
        yield running
    assert running.unexpected == 0


@pytest.fixture
def model(server: AnthropicServer) -> Iterator[AnthropicModel]:
    """A model on the loopback server, its sync client closed after the test."""
    made = AnthropicModel("claude-test", base_url=server.url, api_key="k")
    yield made
    made.close()


def test_chat_spans_name_anthropic_and_carry_the_usage(
    traced: Traced, server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """gen_ai.provider.name is ``anthropic``; the answering model, the mapped finish
    reasons, the whole input with its cache reads and the thinking tokens are recorded."""
    server.script(
        message(thinking("add", "sig"), tool_use("toolu_1", "add", {"a": 2, "b": 3}), usage=USAGE),
        message(text("It is 5."), usage=USAGE),
    )
    result = traced.run(Agent("calc", model, tools=[add]), mode, message="2 + 3?")
    first, second = (attributes(span) for span in traced.named("chat claude-test"))
    assert (first["gen_ai.provider.name"], first["gen_ai.request.model"]) == (
        "anthropic",
        "claude-test",
    )
    assert first["gen_ai.response.model"] == "claude-test-20260101"
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second["gen_ai.response.finish_reasons"] == ("stop",)
    for chat in (first, second):
        assert (chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"]) == (50, 10)
        assert chat["gen_ai.usage.cache_read.input_tokens"] == 32
        assert chat["gen_ai.usage.reasoning.output_tokens"] == 4
    assert result.usage == Usage(100, 20, 64, 8)


def test_an_overloaded_error_is_an_error_with_the_sdks_type(
    traced: Traced, server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """A 529 nobody recovers: the chat span's error.type is the SDK's ``OverloadedError``."""
    server.script(error(529, "overloaded_error", "Overloaded"))
    with pytest.raises(anthropic.OverloadedError):
        traced.run(Agent("calc", model), mode)
    chat = traced.one("chat claude-test")
    assert attributes(chat)["error.type"] == "OverloadedError"
    assert chat.status.status_code.name == "ERROR"
