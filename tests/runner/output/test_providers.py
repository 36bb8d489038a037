"""A typed answer over each provider's wire: the schema as its API takes it, tools beside it.

Each loopback server (``tests/helpers``) keeps every request body: the tests say exactly
how ``output_type`` is asked for -- Responses ``text.format``, Chat Completions
``response_format``, Anthropic ``output_config.format`` -- and that the agent's tools go
along in the same request, the answer read back as the type (after a retry with feedback).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest

from runner import (
    Agent,
    AnthropicModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    RetryEvent,
    Runner,
    RunResult,
)
from tests.helpers import anthropic_server as claude
from tests.helpers import openai_server as chat
from tests.helpers import responses_server as responses
from tests.helpers.runs import Mode


class Invoice(pydantic.BaseModel):
    """An invoice read from a document."""

    number: str
    total: float


SCHEMA = {
    "description": "An invoice read from a document.",
    "properties": {
        "number": {"title": "Number", "type": "string"},
        "total": {"title": "Total", "type": "number"},
    },
    "required": ["number", "total"],
    "title": "Invoice",
    "type": "object",
    "additionalProperties": False,
}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def go(runner: Runner[Any, Any], mode: Mode) -> RunResult[Any]:
    if mode == "sync":
        return runner.run("Read the invoice.")
    return asyncio.run(runner.arun("Read the invoice."))


@pytest.fixture
def responses_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[responses.ResponsesServer]:
    chat.forget_environment(monkeypatch)
    with responses.ResponsesServer() as running:
        yield running
    assert running.unexpected == 0


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[chat.OpenAIServer]:
    chat.forget_environment(monkeypatch)
    with chat.OpenAIServer() as running:
        yield running
    assert running.unexpected == 0


@pytest.fixture
def claude_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[claude.AnthropicServer]:
    claude.forget_environment(monkeypatch)
    with claude.AnthropicServer() as running:
        yield running
    assert running.unexpected == 0


def test_responses_asks_with_text_format_beside_the_tools(
    responses_server: responses.ResponsesServer, mode: Mode
) -> None:
    """``text.format`` is the strict ``json_schema``; ``tools`` hold ``add``; a misfit is
    retried with the errors as a user message."""
    responses_server.script(
        responses.response(responses.function_call("c1", "add", '{"a": 2, "b": 3}')),
        responses.response(responses.message('{"number": "A-5"}')),
        responses.response(responses.message('{"number": "A-5", "total": 5}')),
    )
    model = OpenAIResponsesModel(
        "test-model", base_url=responses_server.url, text={"verbosity": "low"}
    )
    agent = Agent("clerk", model, tools=[add], output_type=Invoice)
    result = go(Runner(agent), mode)
    assert result.output == Invoice(number="A-5", total=5)
    first, _, third = responses_server.bodies
    assert first["text"] == {
        "verbosity": "low",
        "format": {
            "type": "json_schema",
            "name": "Invoice",
            "description": "An invoice read from a document.",
            "schema": SCHEMA,
            "strict": True,
        },
    }
    assert [tool["name"] for tool in first["tools"]] == ["add"]
    told = third["input"][-1]
    assert told["role"] == "user"
    assert "total: Field required" in json.dumps(told)
    assert [e.attempt for e in result.events if isinstance(e, RetryEvent)] == [2]
    model.close()


def test_chat_completions_asks_with_response_format(
    chat_server: chat.OpenAIServer, mode: Mode
) -> None:
    """``response_format`` is the strict ``json_schema``, the tools beside it."""
    chat_server.script(
        chat.completion(None, tool_calls=[chat.tool_call("c1", "add", '{"a": 1, "b": 1}')]),
        chat.completion('{"number": "B-2", "total": 2.5}'),
    )
    model = OpenAIChatModel("test-model", base_url=chat_server.url)
    result = go(Runner(Agent("clerk", model, tools=[add], output_type=Invoice)), mode)
    assert result.output == Invoice(number="B-2", total=2.5)
    for body in chat_server.bodies:
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {
                "name": "Invoice",
                "description": "An invoice read from a document.",
                "schema": SCHEMA,
                "strict": True,
            },
        }
        assert [tool["function"]["name"] for tool in body["tools"]] == ["add"]
    model.close()


def test_anthropic_asks_with_output_config_format(
    claude_server: claude.AnthropicServer, mode: Mode
) -> None:
    """``output_config.format`` is the ``json_schema``, beside the caller's effort and the tools."""
    claude_server.script(
        claude.message(claude.tool_use("t1", "add", {"a": 2, "b": 2})),
        claude.message(claude.text('{"number": "C-4", "total": 4}')),
    )
    model = AnthropicModel(
        "claude-test",
        base_url=claude_server.url,
        api_key="k",
        output_config={"effort": "low"},
    )
    result = go(Runner(Agent("clerk", model, tools=[add], output_type=Invoice)), mode)
    assert result.output == Invoice(number="C-4", total=4)
    first = claude_server.bodies[0]
    assert first["output_config"] == {
        "effort": "low",
        "format": {"type": "json_schema", "schema": SCHEMA},
    }
    assert [tool["name"] for tool in first["tools"]] == ["add"]
    model.close()


def test_a_plain_agent_sends_no_output_field(
    responses_server: responses.ResponsesServer, chat_server: chat.OpenAIServer
) -> None:
    """Without ``output_type`` the bodies are as before: no format, no response_format."""
    responses_server.script(responses.response(responses.message("hi")))
    chat_server.script(chat.completion("hi"))
    plain = OpenAIResponsesModel("test-model", base_url=responses_server.url)
    other = OpenAIChatModel("test-model", base_url=chat_server.url)
    assert Runner(Agent("a", plain)).run("hi").output == "hi"
    assert Runner(Agent("a", other)).run("hi").output == "hi"
    assert "text" not in responses_server.bodies[0]
    assert "response_format" not in chat_server.bodies[0]
    plain.close()
    other.close()


class Note(pydantic.BaseModel):
    """A note, its tag optional."""

    text: str
    tag: str = ""


def test_an_optional_field_is_sent_non_strict_to_openai_and_closed_to_anthropic(
    responses_server: responses.ResponsesServer, claude_server: claude.AnthropicServer
) -> None:
    """OpenAI's strict mode cannot say "optional": strict is off and the schema as written;
    Anthropic takes optional properties but wants every object closed."""
    responses_server.script(responses.response(responses.message('{"text": "hi"}')))
    claude_server.script(claude.message(claude.text('{"text": "hi", "tag": "x"}')))
    openai_model = OpenAIResponsesModel("test-model", base_url=responses_server.url)
    claude_model = AnthropicModel("claude-test", base_url=claude_server.url, api_key="k")
    assert Runner(Agent("a", openai_model, output_type=Note)).run("go").output == Note(text="hi")
    assert Runner(Agent("a", claude_model, output_type=Note)).run("go").output == Note(
        text="hi", tag="x"
    )
    sent = responses_server.bodies[0]["text"]["format"]
    assert sent["strict"] is False
    assert "additionalProperties" not in sent["schema"]
    schema = claude_server.bodies[0]["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["text"]
    openai_model.close()
    claude_model.close()
