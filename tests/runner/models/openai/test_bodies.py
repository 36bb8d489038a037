"""Answers that are no answer: cut-off streams, bodies that are not JSON, HTML pages, a
server that ignores ``stream: true``, one that is down. Each is a ``ProviderError`` naming
the URL, model, status, content type and first bytes (or, for a lost connection, the SDK's
error with a note saying where), transient where a retry may well succeed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import openai
import pytest

from runner import (
    Agent,
    InMemorySessions,
    Message,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    ProviderError,
    RetryTransient,
    RunFinishedEvent,
    Runner,
    TextDelta,
    is_transient,
)
from tests.helpers.openai_server import (
    OpenAIServer,
    as_stream,
    chunk,
    completion,
    raw,
    streamed,
)
from tests.helpers.runs import Mode

HELLO = ModelRequest((Message("user", "Hello!"),))
HTML = b"<!DOCTYPE html><html><head><title>Sign in to the Wi-Fi</title></head></html>"


@pytest.fixture
def model(server: OpenAIServer) -> Iterator[OpenAIChatModel]:
    """A model on the local server, its sync client closed after the test."""
    made = OpenAIChatModel("test-model", base_url=server.url)
    yield made
    made.close()


def answer(model: OpenAIChatModel, mode: Mode) -> ModelResponse:
    """``generate`` in sync mode, ``agenerate`` otherwise."""
    if mode == "sync":
        return model.generate(HELLO)
    return asyncio.run(model.agenerate(HELLO))


def until_error(model: OpenAIChatModel, mode: Mode) -> tuple[list[object], Exception]:
    """What ``stream`` (sync) or ``astream`` yielded before it raised, and what it raised."""
    got: list[object] = []
    try:
        if mode == "sync":
            got.extend(model.stream(HELLO))
        else:

            async def drain() -> None:
                async for item in model.astream(HELLO):
                    got.append(item)

            asyncio.run(drain())
    except Exception as exc:
        return got, exc
    raise AssertionError(f"the stream ended without an error: {got}")


def collect(model: OpenAIChatModel, mode: Mode) -> list[object]:
    """Every item of a stream that must not fail."""
    if mode == "sync":
        return list(model.stream(HELLO))

    async def drain() -> list[object]:
        return [item async for item in model.astream(HELLO)]

    return asyncio.run(drain())


def failed(model: OpenAIChatModel, mode: Mode) -> Exception:
    """What ``generate`` / ``agenerate`` raised."""
    try:
        answer(model, mode)
    except Exception as exc:
        return exc
    raise AssertionError("the call answered")


def test_a_stream_cut_off_is_a_transient_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A stream whose body ends cleanly with neither a finish reason nor ``[DONE]`` is half
    an answer: the deltas came, then a transient ``ProviderError``, and no response."""
    server.script(streamed(chunk({"content": "The answer is "}), done=False))
    got, error = until_error(model, mode)
    assert got == [TextDelta("The answer is ")]
    assert isinstance(error, ProviderError)
    assert error.problem == "the stream ended before the answer did: no finish_reason and no [DONE]"
    assert error.transient
    assert is_transient(error)
    assert (error.url, error.model, error.status) == (
        f"{server.url}/chat/completions",
        "test-model",
        200,
    )
    assert error.content_type == "text/event-stream"


def test_a_finish_reason_without_done_is_a_whole_answer(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A server that never sends ``[DONE]`` but ended the choice loses nothing."""
    server.script(streamed(chunk({"content": "ok"}, finish_reason="stop"), done=False))
    assert collect(model, mode)[-1] == ModelResponse("ok", finish_reason="stop", model="test-model")


def test_a_cut_off_stream_is_retried_and_only_the_whole_answer_saved(
    server: OpenAIServer, model: OpenAIChatModel
) -> None:
    """In ``Runner.stream`` with ``RetryTransient``, the cut-off attempt is retried; the
    session keeps the whole answer, never the half one."""
    server.script(
        streamed(chunk({"content": "It is fi"}), done=False),
        as_stream(completion("It is five.")),
    )
    sessions = InMemorySessions()
    runner = Runner(Agent("a", model), sessions=sessions)

    async def main() -> RunFinishedEvent:
        events = [
            e async for e in runner.stream("2+3?", session_id="s", callbacks=[RetryTransient()])
        ]
        last = events[-1]
        assert isinstance(last, RunFinishedEvent)
        return last

    result = asyncio.run(main()).result
    runner.close()
    assert result.output == "It is five."
    assert [m.content for m in sessions.load("user", "s").messages] == ["2+3?", "It is five."]
    assert len(server.bodies) == 2


def test_a_cut_off_stream_unretried_saves_nothing(
    server: OpenAIServer, model: OpenAIChatModel
) -> None:
    """Without a retry the run fails with the ``ProviderError``; the session stays empty."""
    server.script(streamed(chunk({"content": "It is fi"}), done=False))
    sessions = InMemorySessions()
    runner = Runner(Agent("a", model), sessions=sessions)

    async def main() -> None:
        async for _ in runner.stream("2+3?", session_id="s"):
            pass

    with pytest.raises(ProviderError):
        asyncio.run(main())
    runner.close()
    assert list(sessions.load("user", "s").messages) == []


def test_an_error_event_mid_stream_is_retried(server: OpenAIServer, model: OpenAIChatModel) -> None:
    """OpenAI's mid-stream 5xx (an ``error`` event of type ``server_error``, no status) is
    transient: ``RetryTransient`` retries it and the second attempt answers."""
    failure = {"error": {"message": "overloaded", "type": "server_error", "code": None}}
    server.script(streamed(chunk({"content": "Hal"}), failure), as_stream(completion("Whole.")))
    runner = Runner(Agent("a", model))

    async def main() -> RunFinishedEvent:
        events = [e async for e in runner.stream("hi", callbacks=[RetryTransient()])]
        last = events[-1]
        assert isinstance(last, RunFinishedEvent)
        return last

    assert asyncio.run(main()).result.output == "Whole."
    runner.close()
    assert len(server.bodies) == 2


def test_an_html_page_with_200_is_a_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A captive portal's page answered 200: not JSON, said plainly, with its first bytes."""
    server.script(raw(HTML, "text/html; charset=utf-8"))
    error = failed(model, mode)
    assert isinstance(error, ProviderError)
    assert error.problem == "the body is no JSON"
    assert error.content_type == "text/html; charset=utf-8"
    assert error.head == HTML
    assert not error.transient
    assert "text/html" in str(error)
    assert "Sign in to the Wi-Fi" in str(error)


def test_a_body_cut_short_is_transient(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """JSON that stops before its end was cut off on the way: worth a retry."""
    server.script(raw(b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess', "application/json"))
    error = failed(model, mode)
    assert isinstance(error, ProviderError)
    assert error.transient


@pytest.mark.parametrize(
    "body",
    [b"[1, 2]", b'{"id": "x", "choices": []}', b'{"choices": [1]}', b'{"error": null}'],
)
def test_json_that_is_no_completion_is_a_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, body: bytes
) -> None:
    """JSON without a first choice holding a message is no answer."""
    server.script(raw(body, "application/json"))
    error = failed(model, mode)
    assert isinstance(error, ProviderError)
    assert error.head == body
    assert not error.transient


def test_a_server_that_ignores_stream_true_is_named(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A whole completion sent to a streamed request: the error says what happened."""
    server.script(completion("hi"))
    got, error = until_error(model, mode)
    assert got == []
    assert isinstance(error, ProviderError)
    assert "ignores stream: true" in error.problem
    assert error.content_type == "application/json"
    assert error.head.startswith(b'{"id": "chatcmpl-test"')


def test_an_html_page_to_a_stream_is_a_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """An HTML page answered to a streamed request."""
    server.script(raw(HTML, "text/html"))
    _, error = until_error(model, mode)
    assert isinstance(error, ProviderError)
    assert error.problem == "a streamed request was answered with no event stream"
    assert error.head == HTML


def test_an_event_that_is_no_json_is_a_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """An SSE event whose data is not JSON, after good ones: its data is quoted."""
    server.script(streamed(chunk({"content": "a"}), "<html>oops</html>"))
    got, error = until_error(model, mode)
    assert got == [TextDelta("a")]
    assert isinstance(error, ProviderError)
    assert error.problem == "an event's data is no JSON"
    assert error.head == b"<html>oops</html>"


def test_a_server_that_is_down_says_where(clean_env: None, mode: Mode) -> None:
    """A refused connection stays ``openai.APIConnectionError`` (its type is what handlers
    test), its message naming the URL, the model and the cause."""
    model = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1")  # discard port: refused
    error = failed(model, mode)
    model.close()
    assert type(error) is openai.APIConnectionError
    said = "Connection error. model 'm' at http://127.0.0.1:9/v1/chat/completions: no answer: "
    assert str(error).startswith(said)
    assert error.message == str(error)
    assert "ConnectError" in str(error)


@pytest.mark.parametrize(
    "choice",
    [
        {"index": 0, "delta": None},
        {"index": 0},
        {"index": 0, "delta": {"content": 5}},
        {"index": 0, "delta": {"tool_calls": [1]}},
        {"index": 0, "delta": {"tool_calls": [{"index": "a", "function": {"name": "f"}}]}},
        {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 7}}]}},
        {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": "f"}]}},
    ],
)
def test_a_chunk_of_the_wrong_shape_is_a_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, choice: dict[str, object]
) -> None:
    """JSON that is no completion chunk (a field missing, null or of another type) is a
    ``ProviderError`` quoting it, never an ``AttributeError`` from deep inside."""
    bad = {**chunk(), "choices": [choice]}
    server.script(streamed(chunk({"content": "a"}), bad))
    got, error = until_error(model, mode)
    assert got == [TextDelta("a")]
    assert isinstance(error, ProviderError)
    assert error.problem.startswith("an event's data is no completion chunk: ")
    assert error.head.startswith(b'{"id": "chatcmpl-stream"')


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": 5},
        {"role": "assistant", "content": None, "tool_calls": [1]},
        {"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]},
    ],
)
def test_a_completion_of_the_wrong_shape_is_a_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, message: dict[str, object]
) -> None:
    """A completion whose message has fields of the wrong shape is a ``ProviderError``."""
    body = {"id": "c", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    server.script(raw(json.dumps(body).encode(), "application/json"))
    error = failed(model, mode)
    assert isinstance(error, ProviderError)
    assert error.problem.startswith("the body is no chat completion: ")
