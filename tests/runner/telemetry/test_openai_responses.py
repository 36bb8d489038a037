"""Telemetry of ``OpenAIResponsesModel`` against the local Responses server: the provider,
the model names, usage with cached and reasoning tokens, and content capture that shows
a reasoning summary, never its encrypted payload."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from runner import Agent, OpenAIResponsesModel, Usage
from tests.helpers.openai_server import forget_environment
from tests.helpers.responses_server import (
    ResponsesServer,
    function_call,
    message,
    reasoning,
    response,
    usage,
)
from tests.helpers.runs import Mode, add
from tests.helpers.spans import Traced, attributes, loaded

SECRET = "gAAAAB-never-in-a-span"


@pytest.fixture
def model(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[ResponsesServer, OpenAIResponsesModel]]:
    """A running Responses server and a model on it, both closed after the test."""
    forget_environment(monkeypatch)
    with ResponsesServer() as server:
        made = OpenAIResponsesModel("test-model", base_url=server.url)
        yield server, made
        made.close()
    assert server.unexpected == 0


def test_responses_spans_carry_the_provider_names_usage_and_reasoning_summary(
    traced: Traced, model: tuple[ResponsesServer, OpenAIResponsesModel], mode: Mode
) -> None:
    """Provider ``openai``, the model asked for and the one that answered, finish reasons,
    token counts with cached and reasoning tokens; captured content has the reasoning's
    summary, and no span holds its encrypted content."""
    server, made = model
    server.script(
        response(
            reasoning("rs_1", SECRET, "Add them."),
            function_call("c1", "add", '{"a": 2, "b": 3}'),
            used=usage(50, 10, cached=32, reasoning_tokens=4),
        ),
        response(message("It is 5."), used=usage(60, 5, cached=40)),
    )
    result = traced.run(
        Agent("calc", made, tools=[add]), mode, message="2 + 3?", capture_content=True
    )
    assert result.usage == Usage(110, 15, 72, 4)
    first, second = (attributes(span) for span in traced.named("chat test-model"))
    assert (first["gen_ai.provider.name"], first["gen_ai.request.model"]) == (
        "openai",
        "test-model",
    )
    assert first["gen_ai.response.model"] == "test-model-2026-01-01"
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second["gen_ai.response.finish_reasons"] == ("stop",)
    assert first["gen_ai.usage.cache_read.input_tokens"] == 32
    assert first["gen_ai.usage.reasoning.output_tokens"] == 4
    said = loaded(traced.named("chat test-model")[0], "gen_ai.output.messages")
    assert {"type": "reasoning", "content": "Add them."} in said[0]["parts"]
    for span in traced.spans():
        assert SECRET not in json.dumps(dict(attributes(span)), default=str)
