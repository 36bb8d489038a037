"""Whole runs against a local OpenAI-compatible server, through the real SDK.

``Runner.run`` speaks through the SDK's sync client, ``Runner.arun`` through its
async one (the ``mode`` fixture runs each test both ways). The server answers from its
script and keeps every request, so each test says exactly what went over the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from hooks import Cont, Failure, Halt, Retry
from runner import (
    Agent,
    AsyncFallbackModel,
    ErrorEvent,
    FallbackEvent,
    FallbackModel,
    FunctionTool,
    ModelContext,
    ModelResponse,
    OpenAIChatModel,
    RetryEvent,
    RetryPolicy,
    RetryTransient,
    RunFinishedEvent,
    Runner,
    RunStartedEvent,
    StreamEvent,
    TextDelta,
    ToolArgumentsError,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    ToolContext,
    ToolResult,
    Usage,
)
from tests.helpers.openai_server import OpenAIServer, as_stream, completion, error, tool_call
from tests.helpers.runs import Mode, drive, events_of

INSTRUCTION = "You add numbers with the add tool."
SYSTEM = {"role": "system", "content": INSTRUCTION}
USER = {"role": "user", "content": "What is 2 + 3?"}
USAGE = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# The tool as the server must receive it: the agent's spec of `add`, unchanged.
ADD_SCHEMA = dict(FunctionTool(add).parameters)
ADD_TOOL = {
    "type": "function",
    "function": {"name": "add", "description": "Add two integers.", "parameters": ADD_SCHEMA},
}


def test_the_add_schema_is_what_the_tests_expect() -> None:
    """The spec the tests compare with does describe two required integers."""
    assert ADD_SCHEMA["type"] == "object"
    assert {name: ADD_SCHEMA["properties"][name]["type"] for name in "ab"} == {
        "a": "integer",
        "b": "integer",
    }
    assert ADD_SCHEMA["required"] == ["a", "b"]


@pytest.fixture
def model(server: OpenAIServer) -> Iterator[OpenAIChatModel]:
    """A model on the test server, its sync client closed after the test."""
    made = OpenAIChatModel("test-model", base_url=server.url, temperature=0)
    yield made
    made.close()


def runner_for(model: OpenAIChatModel, **options: Any) -> Runner:
    """A runner of the calculator agent on ``model``."""
    return Runner(Agent("calc", model, tools=[add], instruction=INSTRUCTION), **options)


def assistant_call(call_id: str, arguments: str) -> dict[str, Any]:
    """The assistant turn that asked for ``add``, as the model is sent it back."""
    call = {"id": call_id, "type": "function", "function": {"name": "add", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def request(*messages: dict[str, Any]) -> dict[str, Any]:
    """A request body of the calculator agent: the model, its messages, its tool, the params."""
    return {
        "model": "test-model",
        "messages": list(messages),
        "tools": [ADD_TOOL],
        "temperature": 0,
    }


def test_a_tool_round_trip(server: OpenAIServer, model: OpenAIChatModel, mode: Mode) -> None:
    """The model calls ``add``, gets its result, answers; two requests, exactly these."""
    server.script(
        completion(None, tool_calls=[tool_call("call_1", "add", '{"a": 2, "b": 3}')], usage=USAGE),
        completion("It is 5.", usage=USAGE),
    )
    result = drive(runner_for(model), mode, "What is 2 + 3?")
    assert result.output == "It is 5."
    assert result.usage == Usage(100, 20)
    assert result.response == ModelResponse(
        "It is 5.", usage=Usage(50, 10), finish_reason="stop", model="test-model"
    )
    assert server.bodies == [
        request(SYSTEM, USER),
        request(
            SYSTEM,
            USER,
            assistant_call("call_1", '{"a": 2, "b": 3}'),
            {"role": "tool", "content": "5", "tool_call_id": "call_1"},
        ),
    ]
    client_kind = {"sync": "false", "async": "async:asyncio"}[mode]
    assert [headers["x-stainless-async"] for headers in server.headers] == [client_kind] * 2


class NoAdding:
    """A guard: ``add`` never runs; the model is told it was refused."""

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        """Halt every call to ``add`` with an error result."""
        if ctx.call.name == "add":
            return Halt(ToolResult("adding is not allowed here", is_error=True))
        return Cont(ctx)


def test_a_guard_halts_a_tool_call(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A halted call never runs; the model receives the guard's result as the tool's."""
    server.script(
        completion(None, tool_calls=[tool_call("call_9", "add", '{"a": 2, "b": 3}')]),
        completion("I may not add."),
    )
    result = drive(runner_for(model), mode, "What is 2 + 3?", callbacks=[NoAdding()])
    assert result.output == "I may not add."
    assert server.bodies[1]["messages"][-1] == {
        "role": "tool",
        "content": "adding is not allowed here",
        "tool_call_id": "call_9",
    }


class RetryRateLimits:
    """An error hook written here: retry a 429 after the server's ``Retry-After``."""

    def __init__(self) -> None:
        self.seen: list[Exception] = []

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> Failure[Exception] | Retry[ModelContext]:
        """Retry a rate limit with the delay the server asked for; pass anything else on."""
        error = failure.failure()
        self.seen.append(error)
        if isinstance(error, openai.RateLimitError):
            return Retry(ctx, delay=float(error.response.headers["retry-after"]))
        return failure


def test_a_429_is_retried_by_an_error_hook(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """The 429 reaches ``on_model_error`` as ``openai.RateLimitError``; one request per attempt."""
    limited = error(
        429, "Rate limit reached", kind="requests", code="rate_limit_exceeded",
        headers={"Retry-After": "0.01"},
    )  # fmt: skip
    server.script(limited, completion("It is 5."))
    hook = RetryRateLimits()
    result = drive(runner_for(model), mode, "What is 2 + 3?", callbacks=[hook])
    assert result.output == "It is 5."
    assert [type(seen) for seen in hook.seen] == [openai.RateLimitError]
    assert [(event.attempt, event.delay) for event in events_of(result, RetryEvent)] == [(2, 0.01)]
    assert server.bodies == [request(SYSTEM, USER)] * 2


def test_an_unrecovered_provider_error_fails_the_run_with_its_type(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A 500 nobody retries is raised by the run as ``openai.InternalServerError``."""
    server.script(error(500, "boom", kind="server_error", code=None))
    hook = RetryRateLimits()
    with pytest.raises(openai.InternalServerError):
        drive(runner_for(model, retry=RetryPolicy(base_delay=0)), mode, "hi", callbacks=[hook])
    assert [type(seen) for seen in hook.seen] == [openai.InternalServerError]
    assert len(server.bodies) == 1


class KeepToolErrors:
    """An error hook that keeps each tool error and recovers none."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Failure[Exception]:
        """Keep the error; pass it on."""
        self.errors.append(failure.failure())
        return failure


def test_malformed_arguments_reach_on_tool_error_and_the_model(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Arguments that are not JSON: ``ToolArgumentsError`` for the hooks, its text for the model."""
    server.script(
        completion(None, tool_calls=[tool_call("call_1", "add", '{"a": 2, "b": ')]),
        completion("Let me try again."),
    )
    hook = KeepToolErrors()
    result = drive(runner_for(model), mode, "What is 2 + 3?", callbacks=[hook])
    assert result.output == "Let me try again."
    (failure,) = hook.errors
    assert isinstance(failure, ToolArgumentsError)
    assert failure.args_given == '{"a": 2, "b": '
    assert failure.problem.startswith("arguments are not valid JSON: Expecting value")
    said = server.bodies[1]["messages"]
    assert said[-2] == assistant_call("call_1", "{}")
    assert said[-1] == {
        "role": "tool",
        "content": f"ToolArgumentsError: {failure}",
        "tool_call_id": "call_1",
    }


def test_several_tool_calls_answer_in_the_models_order(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Two calls in one turn: both results go back, each with its call id, in order."""
    calls = [
        tool_call("call_a", "add", '{"a": 1, "b": 1}'),
        tool_call("call_b", "add", '{"a": 2, "b": 2}'),
    ]
    server.script(completion("Adding both.", tool_calls=calls), completion("2 and 4."))
    result = drive(runner_for(model), mode, "1+1 and 2+2?")
    assert result.output == "2 and 4."
    said = server.bodies[1]["messages"]
    assert said[-3] == {
        "role": "assistant",
        "content": "Adding both.",
        "tool_calls": [
            {"id": call["id"], "type": "function", "function": call["function"]} for call in calls
        ],
    }
    assert said[-2:] == [
        {"role": "tool", "content": "2", "tool_call_id": "call_a"},
        {"role": "tool", "content": "4", "tool_call_id": "call_b"},
    ]
    assert [event.call for event in events_of(result, ToolCallEvent)] == [
        ToolCall("call_a", "add", {"a": 1, "b": 1}),
        ToolCall("call_b", "add", {"a": 2, "b": 2}),
    ]


def test_the_ready_made_handler_retries_a_429_and_waits_what_it_asks(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``RetryTransient`` reads the real 429's Retry-After; the second request answers."""
    waits: list[float] = []

    async def fake_asleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("runner._run.engine.time.sleep", waits.append)
    monkeypatch.setattr("runner._run.engine.asyncio.sleep", fake_asleep)
    limited = error(
        429, "Rate limit reached", kind="requests", code="rate_limit_exceeded",
        headers={"Retry-After": "2"},
    )  # fmt: skip
    server.script(limited, completion("It is 5."))
    result = drive(runner_for(model), mode, "What is 2 + 3?", callbacks=[RetryTransient()])
    assert result.output == "It is 5."
    assert waits == [2.0]
    assert [type(e.error) for e in events_of(result, ErrorEvent)] == [openai.RateLimitError]
    assert server.bodies == [request(SYSTEM, USER)] * 2


def test_a_fallback_model_answers_when_the_first_keeps_failing(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Two 500s spend the budget; the backup model (the same server, another name) answers."""
    backup = OpenAIChatModel("backup-model", base_url=server.url)
    server.script(
        error(500, "boom", kind="server_error", code=None),
        error(500, "boom again", kind="server_error", code=None),
        completion("From the backup.", model="backup-model"),
    )
    fallback = FallbackModel(backup) if mode == "sync" else AsyncFallbackModel(backup)
    runner = runner_for(model, retry=RetryPolicy(max_attempts=2, base_delay=0))
    try:
        result = drive(runner, mode, "What is 2 + 3?", callbacks=[RetryTransient(), fallback])
    finally:
        backup.close()
    assert result.output == "From the backup."
    assert [body["model"] for body in server.bodies] == ["test-model", "test-model", "backup-model"]
    assert len(events_of(result, FallbackEvent)) == 1


def test_a_streamed_run_against_the_sse_server(
    server: OpenAIServer, model: OpenAIChatModel
) -> None:
    """``Runner.stream`` over real SSE split mid-word and mid-argument: the tool call is
    put together, the text deltas join to the output, and the stream agrees with the record."""
    server.script(
        as_stream(
            completion(None, tool_calls=[tool_call("call_1", "add", '{"a": 2, "b": 3}')]),
            size=2,
        ),
        as_stream(completion("It is five, as you asked.", usage=USAGE), size=3),
    )

    async def main() -> list[StreamEvent]:
        with runner_for(model) as runner:
            return [event async for event in runner.stream("What is 2 + 3?")]

    events = asyncio.run(main())
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    result = last.result
    assert result.output == "It is five, as you asked."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.output
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert calls[0].name == "add"
    assert "".join(e.arguments for e in calls) == '{"a": 2, "b": 3}'
    skipped = (TextDelta, ToolCallDelta, RunStartedEvent, RunFinishedEvent)
    assert [e for e in events if not isinstance(e, skipped)] == list(result.events)
    assert result.usage == Usage(50, 10)
    assert [body["stream"] for body in server.bodies] == [True, True]
