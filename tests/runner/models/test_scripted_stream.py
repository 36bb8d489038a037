"""``ScriptedModel.stream`` / ``astream``: what ``generate`` answers, in chunks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from datetime import date

import pytest

from runner import (
    AsyncStreamingModel,
    Message,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    Rule,
    ScriptedModel,
    ScriptExhausted,
    ScriptItem,
    StreamingModel,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from runner._models.scripted_stream import arguments_text, deltas
from runner._tools.arguments import UnparsedArguments
from tests.helpers.runs import Mode

HELLO = ModelRequest((Message("user", "Hello there"),))


def chunks(model: ScriptedModel, request: ModelRequest, mode: Mode) -> list[ModelChunk]:
    """Every chunk of one streamed answer: ``stream`` in sync mode, ``astream`` otherwise."""
    if mode == "sync":
        return list(model.stream(request))

    async def drain() -> list[ModelChunk]:
        return [chunk async for chunk in model.astream(request)]

    return asyncio.run(drain())


def joined(items: list[ModelChunk]) -> tuple[str, dict[int, tuple[str, str, str]]]:
    """The deltas of ``items`` put together: the text, and each call's id, name, arguments."""
    text = "".join(item.text for item in items if isinstance(item, TextDelta))
    calls: dict[int, tuple[str, str, str]] = {}
    for item in items:
        if isinstance(item, ToolCallDelta):
            call_id, name, arguments = calls.get(item.index, ("", "", ""))
            calls[item.index] = (
                call_id + (item.id or ""),
                name + (item.name or ""),
                arguments + item.arguments,
            )
    return text, calls


def test_text_goes_out_in_pieces_of_chunk_size_then_the_whole_response(mode: Mode) -> None:
    """The text streams in pieces of ``chunk_size`` characters, the response comes last."""
    model = ScriptedModel(["Hello, world!"], chunk_size=5)
    assert chunks(model, HELLO, mode) == [
        TextDelta("Hello"),
        TextDelta(", wor"),
        TextDelta("ld!"),
        ModelResponse("Hello, world!"),
    ]


def test_the_default_chunk_size_is_eight(mode: Mode) -> None:
    """Without ``chunk_size`` the pieces are 8 characters long."""
    model = ScriptedModel(["abcdefghijklmnopq"])
    assert model.chunk_size == 8
    assert chunks(model, HELLO, mode)[:3] == [
        TextDelta("abcdefgh"),
        TextDelta("ijklmnop"),
        TextDelta("q"),
    ]


def test_each_tool_call_streams_its_id_and_name_then_its_json_arguments(mode: Mode) -> None:
    """A call's first delta carries its id and name; its JSON arguments follow in pieces."""
    response = ModelResponse(
        "Ok",
        (ToolCall("c1", "add", {"a": 2, "b": 3}), ToolCall("c2", "now", {})),
        Usage(10, 4),
        "tool_calls",
    )
    items = chunks(ScriptedModel([response], chunk_size=6), HELLO, mode)
    assert items == [
        TextDelta("Ok"),
        ToolCallDelta(0, "c1", "add"),
        ToolCallDelta(0, arguments='{"a": '),
        ToolCallDelta(0, arguments='2, "b"'),
        ToolCallDelta(0, arguments=": 3}"),
        ToolCallDelta(1, "c2", "now"),
        ToolCallDelta(1, arguments="{}"),
        response,
    ]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 1000])
def test_deltas_join_to_the_response_generate_gives(mode: Mode, size: int) -> None:
    """At any chunk size the deltas join to the text and calls of ``generate``'s answer."""
    script: list[ScriptItem] = [
        ModelResponse("Café ☕ then a tool", (ToolCall("c1", "look", {"q": "naïve", "n": [1]}),)),
        "plain text",
    ]
    rules = [Rule(r"weather in (\w+)", reply="Looking up {1}", tool="weather", args={"c": "{1}"})]
    generating = ScriptedModel(script, rules=rules, default="no idea")
    streaming = ScriptedModel(script, rules=rules, default="no idea", chunk_size=size)
    for text in ("Hello", "Hello", "weather in Paris", "hm"):
        request = ModelRequest((Message("user", text),))
        expected = generating.generate(request)
        items = chunks(streaming, request, mode)
        assert items[-1] == expected
        assert all(not isinstance(item, ModelResponse) for item in items[:-1])
        text_of, calls = joined(items)
        assert text_of == expected.text
        assert calls == {
            index: (call.id, call.name, arguments_text(call))
            for index, call in enumerate(expected.tool_calls)
        }
    assert streaming.requests == generating.requests
    assert streaming.calls == generating.calls == 4


def test_arguments_stream_as_the_json_text_of_the_arguments() -> None:
    """Joined, a call's argument deltas read back as its arguments (UTF-8 kept as is)."""
    call = ToolCall("c1", "find", {"city": "Zürich", "tags": ["a", "b"], "limit": 2})
    text = "".join(
        delta.arguments
        for delta in deltas(ModelResponse(tool_calls=(call,)), 4)
        if isinstance(delta, ToolCallDelta)
    )
    assert text == '{"city": "Zürich", "tags": ["a", "b"], "limit": 2}'
    assert json.loads(text) == call.args


def test_unparsed_arguments_stream_as_the_text_the_model_sent() -> None:
    """A call whose arguments were no JSON object streams their raw text, not ``{}``."""
    call = ToolCall("c1", "find", UnparsedArguments('{"city": "Zür', "truncated"))
    assert arguments_text(call) == '{"city": "Zür'


def test_argument_values_json_cannot_hold_stream_as_their_str() -> None:
    """A scripted argument JSON cannot hold does not fail the stream: it shows as its ``str``."""
    call = ToolCall("c1", "book", {"on": date(2026, 1, 2)})
    assert arguments_text(call) == '{"on": "2026-01-02"}'


def test_an_empty_answer_is_the_response_alone(mode: Mode) -> None:
    """No text and no tool calls: no delta, only the response."""
    assert chunks(ScriptedModel([ModelResponse()]), HELLO, mode) == [ModelResponse()]


def test_a_scripted_exception_raises_before_any_delta(mode: Mode) -> None:
    """An exception in the script is raised by the first step; the request still counts."""
    boom = ConnectionError("down")
    model = ScriptedModel([boom, "after"])
    with pytest.raises(ConnectionError) as caught:
        chunks(model, HELLO, mode)
    assert caught.value is boom
    assert model.requests == [HELLO]
    assert model.calls == 1
    assert chunks(model, HELLO, mode)[-1] == ModelResponse("after")


def test_an_exhausted_script_raises_script_exhausted(mode: Mode) -> None:
    """With no script, rule or default left, streaming raises what ``generate`` raises."""
    with pytest.raises(ScriptExhausted):
        chunks(ScriptedModel(), HELLO, mode)


def test_the_request_is_taken_at_the_first_step() -> None:
    """Making the iterators sends nothing; the first ``next`` takes the request."""
    model = ScriptedModel(["one", "two"])
    stream = model.stream(HELLO)
    astream = model.astream(HELLO)
    assert model.calls == 0
    assert next(stream) == TextDelta("one")
    assert model.calls == 1

    async def first() -> ModelChunk:
        return await anext(astream)

    assert asyncio.run(first()) == TextDelta("two")
    assert model.calls == 2


def test_concurrent_astreams_interleave() -> None:
    """Two ``astream`` consumers on one loop take turns chunk by chunk, as network streams."""
    model = ScriptedModel(["aaaa", "bbbb"], chunk_size=1)
    order: list[str] = []

    async def consume() -> None:
        async for item in model.astream(HELLO):
            if isinstance(item, TextDelta):
                order.append(item.text)

    async def both() -> None:
        await asyncio.gather(consume(), consume())

    asyncio.run(both())
    assert "".join(order) == "abababab"


@pytest.mark.parametrize(
    ("size", "error", "message"),
    [
        (0, ValueError, "ScriptedModel.chunk_size must be a positive int, got 0"),
        (-3, ValueError, "ScriptedModel.chunk_size must be a positive int, got -3"),
        (True, TypeError, "ScriptedModel.chunk_size must be a positive int, got bool True"),
        (2.5, TypeError, "ScriptedModel.chunk_size must be a positive int, got float 2.5"),
        ("8", TypeError, "ScriptedModel.chunk_size must be a positive int, got str '8'"),
    ],
)
def test_chunk_size_must_be_a_positive_int(
    size: object, error: type[Exception], message: str
) -> None:
    """A chunk size that is no int >= 1 is refused when the model is made, saying what came."""
    with pytest.raises(error) as caught:
        ScriptedModel(chunk_size=size)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    assert str(caught.value) == message


def test_scripted_model_is_a_streaming_model_both_ways() -> None:
    """``ScriptedModel`` satisfies ``StreamingModel`` and ``AsyncStreamingModel``."""
    model = ScriptedModel(["hi", ModelResponse()])
    sync: StreamingModel = model
    asynchronous: AsyncStreamingModel = model
    stream: Iterator[ModelChunk] = sync.stream(HELLO)
    assert list(stream) == [TextDelta("hi"), ModelResponse("hi")]

    async def drain() -> list[ModelChunk]:
        astream: AsyncIterator[ModelChunk] = asynchronous.astream(HELLO)
        return [item async for item in astream]

    assert asyncio.run(drain()) == [ModelResponse()]
