"""Whole runs on ``AnthropicModel`` against the loopback Messages API server.

``Runner.run`` speaks through the SDK's sync client, ``Runner.arun`` through its async
one (the ``mode`` fixture runs each test both ways), ``Runner.stream`` through
``astream``. The server keeps every request, so each test says what went over the wire.
The last tests fall back from ``OpenAIChatModel`` (on the OpenAI loopback server) to
``AnthropicModel`` mid-conversation.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from dataclasses import replace
from typing import Any

import anthropic
import pytest

from runner import (
    Agent,
    AnthropicModel,
    AsyncFallbackModel,
    ErrorEvent,
    FallbackEvent,
    FallbackModel,
    FunctionTool,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    OpenAIChatModel,
    ReasoningPart,
    RetryEvent,
    RetryPolicy,
    RetryTransient,
    RunFinishedEvent,
    Runner,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from tests.helpers.anthropic_server import (
    AnthropicServer,
    as_stream,
    error,
    error_event,
    message,
    silent,
    streamed,
    text,
    thinking,
    tool_use,
)
from tests.helpers.openai_server import OpenAIServer, completion, tool_call
from tests.helpers.openai_server import error as openai_error
from tests.helpers.runs import Mode, drive, events_of

INSTRUCTION = "You add numbers with the add tool."
USER = {"role": "user", "content": "What is 2 + 3?"}
THOUGHT = thinking("I should call add with 2 and 3.", "EqQBCkYIAxgCIkD+/sig==")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD_TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "input_schema": dict(FunctionTool(add).parameters),
}


def request(*messages: dict[str, Any], stream: bool = False) -> dict[str, Any]:
    """A request body of the calculator agent."""
    body: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": INSTRUCTION,
        "messages": list(messages),
        "tools": [ADD_TOOL],
    }
    if stream:
        body["stream"] = True
    return body


def called(call_id: str, *before: dict[str, Any]) -> dict[str, Any]:
    """The assistant turn that asked for ``add(2, 3)``, as the model is sent it back."""
    use = {"type": "tool_use", "id": call_id, "name": "add", "input": {"a": 2, "b": 3}}
    return {"role": "assistant", "content": [*before, use]}


def result_of(call_id: str, content: str = "5") -> dict[str, Any]:
    """The user turn carrying ``add``'s result."""
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    return {"role": "user", "content": [block]}


@pytest.fixture
def model(anthropic_server: AnthropicServer) -> Any:
    """A model on the loopback server, its sync client closed after the test."""
    made = AnthropicModel(
        "claude-test", base_url=anthropic_server.url, api_key="k", max_tokens=1024
    )
    yield made
    made.close()


def runner_for(model: AnthropicModel | OpenAIWithReasoning, **options: Any) -> Runner:
    """A runner of the calculator agent on ``model``."""
    return Runner(Agent("calc", model, tools=[add], instruction=INSTRUCTION), **options)


def test_a_tool_round_trip_with_thinking(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """Thinking + tool_use; the tool runs; the thinking goes back first, unchanged."""
    usage = {"input_tokens": 50, "output_tokens": 10}
    anthropic_server.script(
        message(THOUGHT, tool_use("toolu_1", "add", {"a": 2, "b": 3}), usage=usage),
        message(text("It is 5."), usage=usage),
    )
    result = drive(runner_for(model), mode, "What is 2 + 3?")
    assert result.output == "It is 5."
    assert result.usage == Usage(100, 20)
    assert anthropic_server.bodies == [
        request(USER),
        request(USER, called("toolu_1", THOUGHT), result_of("toolu_1")),
    ]
    client_kind = {"sync": "false", "async": "async:asyncio"}[mode]
    assert [h["x-stainless-async"] for h in anthropic_server.headers] == [client_kind] * 2


def test_a_failed_tool_goes_back_as_an_error_result(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """A call the tool cannot run (an argument missing): its error text goes back in a
    ``tool_result`` marked ``is_error``."""
    anthropic_server.script(
        message(tool_use("toolu_1", "add", {"a": 2})), message(text("I need both numbers."))
    )
    result = drive(runner_for(model), mode, "What is 2 + ?")
    assert result.output == "I need both numbers."
    (block,) = anthropic_server.bodies[1]["messages"][-1]["content"]
    assert (block["type"], block["tool_use_id"], block["is_error"]) == (
        "tool_result",
        "toolu_1",
        True,
    )
    assert block["content"].startswith("ToolArgumentsError: bad arguments for tool 'add'")


def test_retry_transient_retries_a_529_overloaded(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """The 529 reaches the hooks as ``anthropic.OverloadedError``; the retry waits the
    server's retry-after and the second request answers."""
    anthropic_server.script(
        error(529, "overloaded_error", "Overloaded", headers={"retry-after": "0.05"}),
        message(text("It is 5.")),
    )
    result = drive(runner_for(model), mode, "What is 2 + 3?", callbacks=[RetryTransient()])
    assert result.output == "It is 5."
    assert [(event.attempt, event.delay) for event in events_of(result, RetryEvent)] == [(2, 0.05)]
    assert [type(e.error) for e in events_of(result, ErrorEvent)] == [anthropic.OverloadedError]
    assert anthropic_server.bodies == [request(USER)] * 2


def test_a_streamed_run_with_thinking_and_a_tool(
    anthropic_server: AnthropicServer, model: AnthropicModel
) -> None:
    """``Runner.stream`` over real SSE split mid-word and mid-argument: deltas join to the
    output, the call is put together, and the streamed thinking goes back unchanged."""
    anthropic_server.script(
        as_stream(message(THOUGHT, tool_use("toolu_1", "add", {"a": 2, "b": 3})), size=2),
        as_stream(message(text("It is five, as you asked.")), size=3),
    )

    async def main() -> list[StreamEvent]:
        with runner_for(model) as runner:
            return [event async for event in runner.stream("What is 2 + 3?")]

    events = asyncio.run(main())
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    assert last.result.output == "It is five, as you asked."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == last.result.output
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert (calls[0].id, calls[0].name) == ("toolu_1", "add")
    assert "".join(e.arguments for e in calls) == '{"a": 2, "b": 3}'
    assert anthropic_server.bodies == [
        request(USER, stream=True),
        request(USER, called("toolu_1", THOUGHT), result_of("toolu_1"), stream=True),
    ]


def test_a_streamed_run_retries_an_error_event_mid_stream(
    anthropic_server: AnthropicServer, model: AnthropicModel
) -> None:
    """An ``overloaded_error`` event after some text: ``RetryTransient`` retries it and
    the second stream's answer is the run's."""
    events = list(as_stream(message(text("Half an answer"))).events or ())
    anthropic_server.script(
        streamed(*events[:4], error_event("overloaded_error", "Overloaded")),
        as_stream(message(text("It is 5."))),
    )

    async def main() -> list[StreamEvent]:
        runner = runner_for(model, retry=RetryPolicy(max_attempts=2, base_delay=0))
        with runner:
            return [e async for e in runner.stream("What is 2 + 3?", callbacks=[RetryTransient()])]

    events_seen = asyncio.run(main())
    last = events_seen[-1]
    assert isinstance(last, RunFinishedEvent)
    assert last.result.output == "It is 5."
    (failed,) = events_of(last.result, ErrorEvent)
    assert isinstance(failed.error, anthropic.APIStatusError)
    assert len(anthropic_server.bodies) == 2


class OpenAIWithReasoning:
    """``OpenAIChatModel`` whose answers carry an OpenAI reasoning item, as
    ``OpenAIResponsesModel``'s do (Chat Completions returns none)."""

    provider = "openai"

    def __init__(self, inner: OpenAIChatModel) -> None:
        self.inner = inner
        self.model = inner.model

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The inner model's answer with one reasoning part of OpenAI's."""
        item = ReasoningPart(
            "openai", '{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA"}', "sum"
        )
        return replace(self.inner.generate(request), parts=(item,))

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """``generate`` through the async client."""
        item = ReasoningPart(
            "openai", '{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA"}', "sum"
        )
        return replace(await self.inner.agenerate(request), parts=(item,))


def test_a_fallback_from_openai_to_anthropic_mid_conversation(
    server: OpenAIServer,
    anthropic_server: AnthropicServer,
    model: AnthropicModel,
    mode: Mode,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """OpenAI calls the tool, then fails; Anthropic answers the same conversation,
    translated: instruction as system, the call as tool_use, the result as tool_result;
    OpenAI's reasoning left out by both, and one INFO record each on "runner" says so."""
    primary = OpenAIChatModel("gpt-test", base_url=server.url)
    server.script(
        completion(None, tool_calls=[tool_call("call_1", "add", '{"a": 2, "b": 3}')]),
        openai_error(500, "boom", kind="server_error", code=None),
    )
    anthropic_server.script(message(text("It is 5, says Claude.")))
    fallback = FallbackModel(model) if mode == "sync" else AsyncFallbackModel(model)
    runner = runner_for(OpenAIWithReasoning(primary), retry=RetryPolicy(max_attempts=1))
    with caplog.at_level(logging.INFO, logger="runner"):
        try:
            result = drive(runner, mode, "What is 2 + 3?", callbacks=[fallback])
        finally:
            primary.close()
    assert result.output == "It is 5, says Claude."
    assert len(events_of(result, FallbackEvent)) == 1
    assert [body["model"] for body in server.bodies] == ["gpt-test", "gpt-test"]
    assert anthropic_server.bodies == [
        request(USER, called("call_1"), result_of("call_1")),
    ]
    said = [r.getMessage() for r in caplog.records if "left out reasoning parts" in r.getMessage()]
    assert said == [  # Chat Completions takes no reasoning back either: it says so too
        "OpenAIChatModel 'gpt-test' left out reasoning parts (1 of 'openai'): Chat "
        "Completions takes no reasoning back",
        "AnthropicModel 'claude-test' left out reasoning parts (1 of 'openai'): the Messages "
        "API takes back only Anthropic's own thinking blocks",
    ]
    assert all(
        r.levelno == logging.INFO and r.name == "runner"
        for r in caplog.records
        if r.getMessage() in said
    )
    assert json.dumps(anthropic_server.bodies).count("rs_1") == 0


def screenshot() -> ImagePart:
    """A screenshot of the page."""
    return ImagePart(data=b"\x89PNG-page", media_type="image/png")


def test_a_tools_image_goes_back_inside_its_tool_result(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """A user's image goes out as an image block; a tool's image comes back to the model
    inside the tool_result, base64."""
    anthropic_server.script(
        message(tool_use("toolu_1", "screenshot", {})), message(text("A login page."))
    )
    agent = Agent("eyes", model, tools=[screenshot])
    photo = ImagePart(url="https://example.test/me.jpg")
    with Runner(agent) as runner:
        result = drive(runner, mode, Message("user", "What do you see?", parts=(photo,)))
    assert result.output == "A login page."
    first, _, results = anthropic_server.bodies[1]["messages"]
    assert first["content"][1] == {
        "type": "image",
        "source": {"type": "url", "url": "https://example.test/me.jpg"},
    }
    (block,) = results["content"]
    assert block["tool_use_id"] == "toolu_1"
    assert block["content"][-1] == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(b"\x89PNG-page").decode(),
        },
    }


def test_the_runners_deadline_bounds_the_model_when_sooner(
    anthropic_server: AnthropicServer, mode: Mode
) -> None:
    """A model allowed 30 seconds under a runner allowing 0.3 and a silent server: the
    attempt ends with ``ModelTimeout`` by the runner's deadline, in ``run`` (the model reads
    ``time_left``) as in ``arun``, and the retry answers."""
    anthropic_server.script(silent(), message(text("In time.")))
    made = AnthropicModel("claude-test", base_url=anthropic_server.url, api_key="k", deadline=30)
    runner = Runner(Agent("a", made), model_deadline=0.3)
    result = drive(runner, mode, "hi", callbacks=[RetryTransient(base_delay=0.0)])
    runner.close()
    made.close()
    assert result.output == "In time."
    (event,) = events_of(result, ErrorEvent)
    assert isinstance(event.error, ModelTimeout)
    assert event.error.deadline <= 0.3
