"""Telemetry against a local OpenAI-compatible server: real model names, usage, errors."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import openai
import pytest

from runner import Agent, OpenAIChatModel, RunFinishedEvent, Usage
from tests.helpers.openai_server import OpenAIServer, as_stream, completion, error, tool_call
from tests.helpers.runs import Mode, add
from tests.helpers.spans import Traced, attributes

USAGE = {
    "prompt_tokens": 50,
    "completion_tokens": 10,
    "total_tokens": 60,
    "prompt_tokens_details": {"cached_tokens": 32},
    "completion_tokens_details": {"reasoning_tokens": 4},
}
ANSWERED_BY = "test-model-2026-01-01"  # the server names a dated snapshot, as OpenAI does


@pytest.fixture
def model(server: OpenAIServer) -> Iterator[OpenAIChatModel]:
    """A model on the test server, its sync client closed after the test."""
    made = OpenAIChatModel("test-model", base_url=server.url)
    yield made
    made.close()


def test_chat_spans_carry_the_models_names_and_usage(
    traced: Traced, server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Provider openai, the model asked for and the one that answered, finish reasons and
    token counts as the server reported them; the agent's span sums the run."""
    server.script(
        completion(None, tool_calls=[tool_call("c1", "add", '{"a": 2, "b": 3}')], usage=USAGE),
        completion("It is 5.", usage=USAGE, model=ANSWERED_BY),
    )
    result = traced.run(Agent("calc", model, tools=[add]), mode, message="2 + 3?")
    first, second = (attributes(span) for span in traced.named("chat test-model"))
    assert (first["gen_ai.provider.name"], first["gen_ai.request.model"]) == (
        "openai",
        "test-model",
    )
    assert first["gen_ai.response.model"] == "test-model"
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second["gen_ai.response.model"] == ANSWERED_BY
    assert second["gen_ai.response.finish_reasons"] == ("stop",)
    for chat in (first, second):
        assert (chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"]) == (50, 10)
        assert chat["gen_ai.usage.cache_read.input_tokens"] == 32
        assert chat["gen_ai.usage.reasoning.output_tokens"] == 4
    agent = attributes(traced.one("invoke_agent calc"))
    assert result.usage == Usage(100, 20, 64, 8)
    assert (agent["gen_ai.usage.input_tokens"], agent["gen_ai.usage.output_tokens"]) == (100, 20)
    assert agent["gen_ai.request.model"] == "test-model"


def test_a_provider_error_is_an_error_with_the_sdks_type(
    traced: Traced, server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A 401 nobody recovers: the chat span's error.type is the SDK's exception class."""
    server.script(error(401, "bad key", kind="invalid_request_error", code="invalid_api_key"))
    with pytest.raises(openai.AuthenticationError):
        traced.run(Agent("calc", model), mode)
    chat = traced.one("chat test-model")
    assert attributes(chat)["error.type"] == "AuthenticationError"
    assert chat.status.status_code.name == "ERROR"


def test_a_streamed_run_on_the_server_is_traced(
    traced: Traced, server: OpenAIServer, model: OpenAIChatModel
) -> None:
    """Runner.stream: the chat span says it streamed and reads the model and usage from the
    stream's chunks."""
    server.script(as_stream(completion("Hello from the stream.", usage=USAGE, model=ANSWERED_BY)))

    async def consume() -> object:
        with traced.runner(Agent("talker", model)) as runner:
            events = [event async for event in runner.stream("hi")]
        await model.aclose()
        return events[-1]

    assert isinstance(asyncio.run(consume()), RunFinishedEvent)
    chat = attributes(traced.one("chat test-model"))
    assert chat["gen_ai.request.stream"] is True
    assert chat["gen_ai.response.model"] == ANSWERED_BY
    assert chat["gen_ai.usage.input_tokens"] == 50
    assert traced.parent(traced.one("chat test-model")) == traced.one("invoke_agent talker")


def test_tool_calls_the_server_asked_for_are_tool_spans(
    traced: Traced, server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Each call the model made is an execute_tool span with the server's call id."""
    server.script(
        completion(
            None,
            tool_calls=[
                tool_call("call_a", "add", '{"a": 1, "b": 2}'),
                tool_call("call_b", "add", '{"a": 3, "b": 4}'),
            ],
        ),
        completion("3 and 7."),
    )
    traced.run(Agent("calc", model, tools=[add]), mode)
    ids = [attributes(span)["gen_ai.tool.call.id"] for span in traced.named("execute_tool add")]
    assert sorted(ids) == ["call_a", "call_b"]
