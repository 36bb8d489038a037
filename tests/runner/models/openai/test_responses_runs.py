"""``OpenAIResponsesModel``: whole runs against a local Responses API server, through the SDK.

``Runner.run`` speaks through the SDK's sync client, ``Runner.arun`` through its async
one (the ``mode`` fixture runs each test both ways), ``Runner.stream`` through the
streamed forms. The server (``tests/helpers/responses_server.py``) answers from its
script and keeps every request body, so each test says exactly what went over the wire.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from runner import (
    Agent,
    AsyncFallbackModel,
    ErrorEvent,
    FallbackEvent,
    FallbackModel,
    FilePart,
    FunctionTool,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ReasoningPart,
    RetryPolicy,
    RetryTransient,
    RunFinishedEvent,
    Runner,
    RunStartedEvent,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    Usage,
)
from tests.helpers.openai_server import OpenAIServer, completion, error
from tests.helpers.responses_server import (
    ResponsesServer,
    as_stream,
    function_call,
    message,
    reasoning,
    response,
    usage,
)
from tests.helpers.runs import Mode, drive, events_of

INSTRUCTION = "You add numbers with the add tool."
USER = {"type": "message", "role": "user", "content": "What is 2 + 3?"}
INCLUDE = ["reasoning.encrypted_content"]
THOUGHT = reasoning("rs_1", "gAAAAB-encrypted==", "I should call add.", "Then answer.")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def show(a: int) -> ImagePart:
    """Return a picture of ``a``."""
    return ImagePart(url=f"https://example.test/{a}.png")


ADD_SCHEMA = dict(FunctionTool(add).parameters)
# The tool as the server must receive it: flat, the agent's spec of `add` unchanged.
ADD_TOOL = {
    "type": "function",
    "name": "add",
    "description": "Add two integers.",
    "parameters": ADD_SCHEMA,
    "strict": False,
}


@pytest.fixture
def model(responses: ResponsesServer) -> Iterator[OpenAIResponsesModel]:
    """A model on the test server, its sync client closed after the test."""
    made = OpenAIResponsesModel("test-model", base_url=responses.url, temperature=0)
    yield made
    made.close()


def runner_for(model: OpenAIResponsesModel, **options: Any) -> Runner:
    """A runner of the calculator agent on ``model``."""
    return Runner(Agent("calc", model, tools=[add, show], instruction=INSTRUCTION), **options)


def body(*items: dict[str, Any], stream: bool = False) -> dict[str, Any]:
    """A request body of the calculator agent: the model, its instruction, ``items``,
    the defaults, its tools and params."""
    show_tool = {
        "type": "function",
        "name": "show",
        "description": "Return a picture of ``a``.",
        "parameters": dict(FunctionTool(show).parameters),
        "strict": False,
    }
    sent = {
        "model": "test-model",
        "instructions": INSTRUCTION,
        "input": list(items),
        "include": INCLUDE,
        "store": False,
        "temperature": 0,
        "tools": [ADD_TOOL, show_tool],
    }
    return {**sent, "stream": True} if stream else sent


def call_item(call_id: str, arguments: str, name: str = "add") -> dict[str, Any]:
    """The assistant's call as the model is sent it back."""
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def output(call_id: str, out: object) -> dict[str, Any]:
    """A tool's result as the model is sent it back."""
    return {"type": "function_call_output", "call_id": call_id, "output": out}


def test_a_tool_round_trip_sends_the_reasoning_back_unchanged(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """The model reasons and calls ``add``, gets its result, answers: two requests, exactly
    these; the reasoning item goes back as it came, before the call it led to."""
    responses.script(
        response(
            THOUGHT,
            function_call("call_1", "add", '{"a": 2, "b": 3}'),
            used=usage(50, 10, cached=20, reasoning_tokens=4),
        ),
        response(message("It is 5."), used=usage(60, 5)),
    )
    result = drive(runner_for(model), mode, "What is 2 + 3?")
    assert result.output == "It is 5."
    assert result.usage == Usage(110, 15, 20, 4)
    assert result.response == ModelResponse(
        "It is 5.", usage=Usage(60, 5), finish_reason="stop", model="test-model-2026-01-01"
    )
    first, second = responses.bodies
    assert first == body(USER)
    assert second == body(
        USER, THOUGHT, call_item("call_1", '{"a": 2, "b": 3}'), output("call_1", "5")
    )
    assert json.dumps(second["input"][1]) == json.dumps(THOUGHT)  # the same JSON, key for key
    client_kind = {"sync": "false", "async": "async:asyncio"}[mode]
    assert [headers["x-stainless-async"] for headers in responses.headers] == [client_kind] * 2


def test_the_reasoning_part_is_the_item_as_it_came(
    responses: ResponsesServer, model: OpenAIResponsesModel
) -> None:
    """The response's reasoning is one ``ReasoningPart``: the item's JSON, its summary."""
    responses.script(response(THOUGHT, message("Five."), used=usage(5, 3, reasoning_tokens=2)))
    answer = model.generate(ModelRequest((Message("user", "What is 2 + 3?"),)))
    (part,) = answer.parts
    assert part == ReasoningPart(
        "openai", json.dumps(THOUGHT), "I should call add.\n\nThen answer."
    )
    assert json.loads(part.payload) == THOUGHT
    assert answer.finish_reason == "stop"
    assert answer.usage == Usage(5, 3, 0, 2)


PIXEL = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def test_images_and_files_go_in_and_a_tools_image_comes_back(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """A user's image and files are input parts; a tool's image is its output's part."""
    responses.script(
        response(function_call("call_1", "show", '{"a": 2}')),
        response(message("A two.")),
    )
    asked = Message(
        "user",
        "what is this?",
        parts=(
            ImagePart(data=PIXEL, media_type="image/png"),
            FilePart(data=b"%PDF-1.7", media_type="application/pdf", name="r.pdf"),
            FilePart(data=b"%PDF-1.7", media_type="application/pdf"),
            FilePart(url="https://example.test/report.pdf"),
            FilePart(url="https://example.test/r2", name="r2.pdf"),
        ),
    )
    result = drive(runner_for(model), mode, asked)
    assert result.output == "A two."
    pdf = "data:application/pdf;base64,JVBERi0xLjc="
    user = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is this?"},
            {
                "type": "input_image",
                "image_url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==",
                "detail": "auto",
            },
            {"type": "input_file", "file_data": pdf, "filename": "r.pdf"},
            {"type": "input_file", "file_data": pdf, "filename": "file.pdf"},
            {"type": "input_file", "file_url": "https://example.test/report.pdf"},
            {"type": "input_file", "file_url": "https://example.test/r2", "filename": "r2.pdf"},
        ],
    }
    image = {"type": "input_image", "image_url": "https://example.test/2.png", "detail": "auto"}
    assert responses.bodies == [
        body(user),
        body(user, call_item("call_1", '{"a": 2}', "show"), output("call_1", [image])),
    ]


def test_a_streamed_run_split_mid_word_and_mid_argument(
    responses: ResponsesServer, model: OpenAIResponsesModel
) -> None:
    """``Runner.stream`` over typed events cut mid-word, mid-argument (and mid-event): the
    call is put together, the deltas join to the output, the reasoning item whole from
    its ``.done`` event goes back."""
    responses.script(
        as_stream(response(THOUGHT, function_call("call_1", "add", '{"a": 2, "b": 3}')), size=2),
        as_stream(response(message("It is five, as you asked."), used=usage(50, 10)), size=3),
    )

    async def main() -> list[StreamEvent]:
        with runner_for(model) as runner:
            return [event async for event in runner.stream("What is 2 + 3?")]

    events = asyncio.run(main())
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    result = last.result
    assert result.output == "It is five, as you asked."
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts[:3] == ["It ", "is ", "fiv"]
    assert "".join(texts) == result.output
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert (calls[0].id, calls[0].name) == ("call_1", "add")
    assert [e.arguments for e in calls[1:3]] == ['{"', 'a"']
    assert "".join(e.arguments for e in calls) == '{"a": 2, "b": 3}'
    skipped = (TextDelta, ToolCallDelta, RunStartedEvent, RunFinishedEvent)
    assert [e for e in events if not isinstance(e, skipped)] == list(result.events)
    assert result.usage == Usage(50, 10)
    assert responses.bodies == [
        body(USER, stream=True),
        body(
            USER,
            THOUGHT,
            call_item("call_1", '{"a": 2, "b": 3}'),
            output("call_1", "5"),
            stream=True,
        ),
    ]


def test_the_ready_made_handler_retries_a_429_and_waits_what_it_asks(
    responses: ResponsesServer,
    model: OpenAIResponsesModel,
    mode: Mode,
    waits: list[tuple[str, float]],
) -> None:
    """``RetryTransient`` reads the 429's Retry-After; the second request answers."""
    limited = error(
        429, "Rate limit reached", kind="requests", code="rate_limit_exceeded",
        headers={"Retry-After": "2"},
    )  # fmt: skip
    responses.script(limited, response(message("It is 5.")))
    result = drive(runner_for(model), mode, "What is 2 + 3?", callbacks=[RetryTransient()])
    assert result.output == "It is 5."
    assert [seconds for _, seconds in waits] == [2.0]
    assert [type(e.error) for e in events_of(result, ErrorEvent)] == [openai.RateLimitError]
    assert responses.bodies == [body(USER)] * 2


def test_a_server_error_is_retried_and_then_raised_as_the_sdks(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """Two 500s: ``RetryTransient`` retries once, then the run raises ``InternalServerError``."""
    responses.script(
        error(500, "boom", kind="server_error", code=None),
        error(500, "boom again", kind="server_error", code=None),
    )
    runner = runner_for(model, retry=RetryPolicy(max_attempts=2, base_delay=0))
    with pytest.raises(openai.InternalServerError):
        drive(runner, mode, "hi", callbacks=[RetryTransient()])
    assert len(responses.bodies) == 2


def test_a_tool_call_to_an_assistant_with_text_keeps_the_order(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """A turn with reasoning, text and two calls goes back in the API's order: reasoning,
    the text, the calls; the results follow, each with its ``call_id``."""
    responses.script(
        response(
            THOUGHT,
            message("Adding twice."),
            function_call("call_a", "add", '{"a": 1, "b": 1}'),
            function_call("call_b", "add", '{"a": 2, "b": 2}'),
        ),
        response(message("2 and 4.")),
    )
    result = drive(runner_for(model), mode, "What is 2 + 3?")
    assert result.output == "2 and 4."
    assert responses.bodies[1]["input"] == [
        USER,
        THOUGHT,
        {"type": "message", "role": "assistant", "content": "Adding twice."},
        call_item("call_a", '{"a": 1, "b": 1}'),
        call_item("call_b", '{"a": 2, "b": 2}'),
        output("call_a", "2"),
        output("call_b", "4"),
    ]
    assert [event.call for event in events_of(result, ToolCallEvent)] == [
        ToolCall("call_a", "add", {"a": 1, "b": 1}),
        ToolCall("call_b", "add", {"a": 2, "b": 2}),
    ]


def test_a_fallback_to_a_chat_completions_model_mid_conversation(
    responses: ResponsesServer,
    server: OpenAIServer,
    model: OpenAIResponsesModel,
    mode: Mode,
) -> None:
    """The Responses model reasons and calls ``add``; its next call fails twice; the
    ``FallbackModel`` on a Chat Completions server answers from the same history, written
    for its API: the call and its result, no reasoning."""
    responses.script(
        response(THOUGHT, function_call("call_1", "add", '{"a": 2, "b": 3}')),
        error(500, "boom", kind="server_error", code=None),
        error(500, "boom again", kind="server_error", code=None),
    )
    server.script(completion("It is 5.", model="backup-model"))
    backup = OpenAIChatModel("backup-model", base_url=server.url)
    fallback = FallbackModel(backup) if mode == "sync" else AsyncFallbackModel(backup)
    runner = runner_for(model, retry=RetryPolicy(max_attempts=2, base_delay=0))
    try:
        result = drive(runner, mode, "What is 2 + 3?", callbacks=[RetryTransient(), fallback])
    finally:
        backup.close()
    assert result.output == "It is 5."
    assert len(events_of(result, FallbackEvent)) == 1
    assert len(responses.bodies) == 3
    call = {"name": "add", "arguments": '{"a": 2, "b": 3}'}
    assert server.bodies[0]["messages"] == [
        {"role": "system", "content": INSTRUCTION},
        {"role": "user", "content": "What is 2 + 3?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
        },
        {"role": "tool", "content": "5", "tool_call_id": "call_1"},
    ]
