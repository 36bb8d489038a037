"""``AnthropicModel.stream`` / ``astream`` against the loopback server's event streams.

Every event reaches the client cut in two (even inside a UTF-8 character); the text is
split mid-word and the tool's input JSON mid-token. The ``mode`` fixture reads each
stream through the sync client (``stream``) and the async one (``astream``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner import (
    AnthropicModel,
    Message,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    ProviderError,
    ReasoningPart,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
    is_transient,
)
from runner._models.anthropic.stream import StreamReader
from runner._models.anthropic.wire import from_message, to_wire
from tests.helpers.anthropic_server import (
    AnthropicServer,
    Reply,
    as_stream,
    error_event,
    message,
    raw,
    redacted,
    streamed,
    text,
    thinking,
    tool_use,
)
from tests.helpers.runs import Mode

HELLO = ModelRequest((Message("user", "Hello!"),), (ToolSpec("add", "Add."),))
THOUGHT = thinking("Les nombres: 2 et 3.", "EqQBCkYIAxgCIkD+/sig==")
ANSWER = message(
    THOUGHT,
    text("Voilà, ça fait 5."),
    tool_use("toolu_01", "add", {"a": 2, "b": 3, "note": "é"}),
    usage={"input_tokens": 20, "output_tokens": 40, "cache_read_input_tokens": 100},
)


def chunks(model: AnthropicModel, request: ModelRequest, mode: Mode) -> list[ModelChunk]:
    """Everything the stream yields: ``stream`` in sync mode, ``astream`` otherwise."""
    if mode == "sync":
        return list(model.stream(request))

    async def read() -> list[ModelChunk]:
        stream: AsyncIterator[ModelChunk] = model.astream(request)
        return [chunk async for chunk in stream]

    return asyncio.run(read())


def until_error(model: AnthropicModel, mode: Mode) -> tuple[list[ModelChunk], BaseException]:
    """The chunks a stream yielded before it raised, and what it raised."""
    got: list[ModelChunk] = []
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


@pytest.fixture
def model(anthropic_server: AnthropicServer) -> Any:
    """A model on the loopback server, its sync client closed after the test."""
    made = AnthropicModel("claude-test", base_url=anthropic_server.url, api_key="k")
    yield made
    made.close()


def test_a_stream_yields_text_and_tool_call_deltas_then_the_whole_answer(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """Deltas as they come (thinking has none), then the answer the unstreamed call gives:
    the same text, call, usage, stop reason and reasoning payload."""
    anthropic_server.script(as_stream(ANSWER), ANSWER)
    got = chunks(model, HELLO, mode)
    *deltas, last = got
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Voilà, ça fait 5."
    assert [d.text for d in deltas if isinstance(d, TextDelta)][:3] == ["Voi", "là,", " ça"]
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert calls[0] == ToolCallDelta(0, "toolu_01", "add", "")
    assert "".join(d.arguments for d in calls) == json.dumps({"a": 2, "b": 3, "note": "é"})
    assert all(d.index == 0 and d.id is None for d in calls[1:])
    assert len(calls) > 3  # mid-argument pieces
    assert isinstance(last, ModelResponse)
    assert last == ModelResponse(
        "Voilà, ça fait 5.",
        (ToolCall("toolu_01", "add", {"a": 2, "b": 3, "note": "é"}),),
        Usage(120, 40, 100, 0),
        "tool_calls",
        "claude-test-20260101",
        (
            ReasoningPart(
                "anthropic",
                json.dumps(THOUGHT, ensure_ascii=False, separators=(",", ":")),
                THOUGHT["thinking"],
            ),
        ),
    )
    assert model.generate(HELLO) == last  # streamed or not, one answer
    assert anthropic_server.bodies[0]["stream"] is True
    assert "stream" not in anthropic_server.bodies[1]


def test_a_redacted_block_and_a_tool_without_arguments_stream_whole(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """A redacted block comes whole in its start; a call with no input pieces takes ``{}``."""
    hidden = redacted("EmwKAhgBEgy3va3pzix/LafPsn4a")
    anthropic_server.script(as_stream(message(hidden, tool_use("toolu_9", "now", {}))))
    *_, last = chunks(model, HELLO, mode)
    assert isinstance(last, ModelResponse)
    assert last.tool_calls == (ToolCall("toolu_9", "now", {}),)
    assert [json.loads(p.payload) for p in last.parts] == [hidden]


def test_an_error_event_mid_stream_is_the_sdks_error_and_transient(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """An ``overloaded_error`` after text has streamed: ``anthropic.APIStatusError`` with
    the event's body, transient by its ``error.type``; the deltas before it came."""
    events = list(as_stream(message(text("Half an answer"))).events or ())
    cut = streamed(*events[:4], error_event("overloaded_error", "Overloaded"))
    anthropic_server.script(cut)
    seen, error = until_error(model, mode)
    assert seen
    assert all(isinstance(chunk, TextDelta) for chunk in seen)
    assert isinstance(error, anthropic.APIStatusError)
    assert error.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": "req_test",
    }
    assert is_transient(error)


def test_an_invalid_request_error_event_is_not_transient(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """An error event naming a client error is not worth a retry."""
    anthropic_server.script(streamed(error_event("invalid_request_error", "bad")))
    with pytest.raises(anthropic.APIStatusError) as caught:
        chunks(model, HELLO, mode)
    assert not is_transient(caught.value)


def test_a_stream_cut_off_before_message_stop_is_a_transient_provider_error(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """The body ended cleanly but the message did not: nothing of it is answered."""
    anthropic_server.script(as_stream(message(text("Hello there")), end=False))
    with pytest.raises(ProviderError, match="no message_stop") as caught:
        chunks(model, HELLO, mode)
    assert is_transient(caught.value)


def test_a_dropped_connection_mid_stream_is_transient(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """The connection goes mid-body (no last chunk): httpx's protocol error, transient."""
    events = list(as_stream(message(text("Hello there"))).events or ())
    anthropic_server.script(Reply({}, events=events[:3], drop=True))
    with pytest.raises(httpx2.RemoteProtocolError) as caught:
        chunks(model, HELLO, mode)
    assert is_transient(caught.value)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (message(text("not streamed")), "answered with JSON: the server ignores stream: true"),
        (raw(b"<html>hi</html>", "text/html"), "answered with no event stream"),
        (streamed(("message_start", "{not json")), "an event's data is no JSON"),
        (streamed(("message_start", {"type": "message_start", "message": 3})), "no stream event"),
        (
            streamed(
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {}})
            ),
            "never started",
        ),
        (streamed(("message_stop", {"type": "message_stop"})), "held no message_start"),
    ],
)
def test_a_stream_that_is_no_answer_is_a_provider_error(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode, reply: Reply, problem: str
) -> None:
    """Named by URL, model and first bytes; not transient (a retry gets the same)."""
    anthropic_server.script(reply)
    with pytest.raises(ProviderError, match=problem) as caught:
        chunks(model, HELLO, mode)
    assert caught.value.url == f"{anthropic_server.url}/v1/messages"
    assert not is_transient(caught.value)


def test_pings_do_not_hold_a_stream_past_its_deadline(
    anthropic_server: AnthropicServer, mode: Mode
) -> None:
    """A server that pings every 50 ms and never ends: the total deadline ends the call."""
    events = list(as_stream(message(text("Hello"))).events or ())
    anthropic_server.script(Reply({}, events=events[:2], pings=0.05))
    model = AnthropicModel("claude-test", base_url=anthropic_server.url, api_key="k", deadline=0.4)
    with pytest.raises(ModelTimeout):
        chunks(model, HELLO, mode)
    model.close()


def test_closing_a_stream_early_closes_its_response(
    anthropic_server: AnthropicServer, model: AnthropicModel
) -> None:
    """A consumer that stops after the first delta leaves nothing open (the next call
    runs on the pool as usual)."""
    anthropic_server.script(as_stream(ANSWER), ANSWER)
    stream = model.stream(HELLO)
    assert isinstance(next(stream), TextDelta)
    stream.close()
    assert model.generate(HELLO).text == "Voilà, ça fait 5."


def test_usage_takes_the_last_cumulative_counts() -> None:
    """message_delta's counts are cumulative: they replace message_start's."""
    reader = StreamReader()
    start = {"model": "m", "usage": {"input_tokens": 10, "output_tokens": 1}}
    reader.read({"type": "message_start", "message": start})
    usage = {
        "output_tokens": 30,
        "input_tokens": 12,
        "output_tokens_details": {"thinking_tokens": 20},
    }
    reader.read({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage})
    reader.read({"type": "message_stop"})
    assert reader.response() == ModelResponse("", (), Usage(12, 30, 0, 20), "stop", "m")


def test_the_sdks_own_stream_raises_an_error_event_with_the_streams_200(
    anthropic_server: AnthropicServer,
) -> None:
    """What the model raises is what the SDK itself raises for the event: an
    ``APIStatusError`` whose status is the stream's 200; ``is_transient`` reads its body."""
    anthropic_server.script(streamed(error_event("overloaded_error", "Overloaded")))
    client = anthropic.Anthropic(base_url=anthropic_server.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        for _ in client.messages.create(
            model="claude-test",
            max_tokens=10,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        ):
            pass
    client.close()
    assert type(caught.value) is anthropic.APIStatusError
    assert caught.value.status_code == 200
    assert is_transient(caught.value)


block_texts = st.text(max_size=40)
blocks = st.one_of(
    st.builds(text, block_texts),
    st.builds(thinking, block_texts, st.text(min_size=1, max_size=40)),
    st.builds(redacted, st.text(min_size=1, max_size=40)),
    st.builds(
        tool_use,
        st.text(min_size=1, max_size=8),
        st.text(min_size=1, max_size=8),
        st.dictionaries(st.text(max_size=5), st.integers() | block_texts, max_size=3),
    ),
)


@settings(max_examples=200, deadline=None, database=None)
@given(
    content=st.lists(blocks, max_size=5, unique_by=lambda b: b.get("id", id(b))),
    size=st.integers(1, 7),
)
def test_a_streamed_message_reads_as_the_same_message_unstreamed(
    content: list[dict[str, Any]], size: int
) -> None:
    """Whatever the blocks and wherever the pieces are cut, the events read back to the
    answer the unstreamed message maps to: text, calls, reasoning payloads byte for byte;
    and the reasoning goes back as the very blocks that came."""
    reply = message(*content)
    reader = StreamReader()
    for _, data in as_stream(reply, size).events or ():
        assert not isinstance(data, str)
        reader.read(json.loads(json.dumps(data)))
    streamed_answer = reader.response()
    assert streamed_answer == from_message(json.loads(json.dumps(reply.body)))
    turn = Message(
        "assistant",
        streamed_answer.text,
        tool_calls=streamed_answer.tool_calls,
        parts=streamed_answer.parts,
    )
    sent = to_wire((Message("user", "hi"), turn)).messages[1]["content"]
    reasoning = [b for b in content if b["type"] in {"thinking", "redacted_thinking"}]
    if isinstance(sent, list):
        assert sent[: len(reasoning)] == reasoning
    else:
        assert not reasoning
