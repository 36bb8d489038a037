"""``OpenAIChatModel.stream`` / ``astream`` against a local server sending server-sent events.

The server (``tests/helpers/openai_server.py``) writes every event in two halves, so the SDK
reads each one split across reads; the chunks themselves cut text mid-word and tool-call
arguments mid-token, as real servers do.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from runner import (
    AsyncStreamingModel,
    Message,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    ProviderError,
    StreamingModel,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from runner._tools.arguments import UnparsedArguments
from tests.helpers import openai_server
from tests.helpers.openai_server import OpenAIServer, Reply, as_stream, chunk, completion, streamed
from tests.helpers.runs import Mode

FIXTURES = Path(__file__).parent / "fixtures"
HELLO = ModelRequest((Message("user", "Hello!"),))
USAGE = {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}


def collect(model: OpenAIChatModel, mode: Mode, request: ModelRequest = HELLO) -> list[ModelChunk]:
    """Every chunk of one streamed answer: ``stream`` in sync mode, ``astream`` otherwise."""
    if mode == "sync":
        return list(model.stream(request))

    async def drain() -> list[ModelChunk]:
        return [item async for item in model.astream(request)]

    return asyncio.run(drain())


def until_error(model: OpenAIChatModel, mode: Mode) -> tuple[list[ModelChunk], BaseException]:
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
def model(server: OpenAIServer) -> Iterator[OpenAIChatModel]:
    """A model on the local server, its sync client closed after the test."""
    made = OpenAIChatModel("test-model", base_url=server.url)
    yield made
    made.close()


def call_piece(index: int | None = None, **fields: Any) -> dict[str, Any]:
    """A ``delta.tool_calls`` entry: ``index`` (left out when ``None``) and ``fields``."""
    return {**({} if index is None else {"index": index}), **fields}


def opening(index: int, call_id: str, name: str, args: str = "") -> dict[str, Any]:
    """The first piece of a call: its index, id and name, and maybe some argument text."""
    function = {"name": name, "arguments": args}
    return call_piece(index, id=call_id, type="function", function=function)


def arguments(text: str) -> dict[str, str]:
    """A tool-call piece's ``function`` carrying only argument text."""
    return {"arguments": text}


def test_deltas_arrive_as_sent_and_the_whole_response_comes_last(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Text cut mid-word (and mid-character on the wire) streams piece by piece; usage
    comes from the last chunk, which has no choices."""
    server.script(
        streamed(
            chunk({"role": "assistant", "content": "", "refusal": None}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo, wö"}),
            chunk({"content": "rld 🎉"}),
            chunk({}, finish_reason="stop"),
            chunk(usage=USAGE, choices=False),
        )
    )
    assert collect(model, mode) == [
        TextDelta("Hel"),
        TextDelta("lo, wö"),
        TextDelta("rld 🎉"),
        ModelResponse(
            "Hello, wörld 🎉", usage=Usage(11, 5), finish_reason="stop", model="test-model"
        ),
    ]


def test_the_request_asks_for_a_stream_with_usage(server: OpenAIServer, mode: Mode) -> None:
    """The body is ``generate``'s plus ``"stream": true`` and ``include_usage``."""
    server.script(as_stream(completion("hi")))
    tool = ToolSpec("now", "The time.")
    request = ModelRequest((Message("user", "Hello!"),), (tool,))
    made = OpenAIChatModel("test-model", base_url=server.url, temperature=0)
    collect(made, mode, request)
    made.close()
    assert server.bodies == [
        {
            "model": "test-model",
            "messages": [{"role": "user", "content": "Hello!"}],
            "temperature": 0,
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "now",
                        "description": "The time.",
                        "parameters": {"type": "object", "properties": {}},
                    },
                }
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    ]


def test_stream_options_given_go_along_with_include_usage(server: OpenAIServer) -> None:
    """A caller's own ``stream_options`` are kept; ``include_usage`` is set on top."""
    server.script(as_stream(completion("hi")))
    options = {"include_obfuscation": False, "include_usage": False}
    made = OpenAIChatModel("test-model", base_url=server.url, stream_options=options)
    list(made.stream(HELLO))
    made.close()
    assert server.bodies[0]["stream_options"] == {
        "include_obfuscation": False,
        "include_usage": True,
    }


def test_tool_call_pieces_accumulate_by_index(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Pieces of two calls, interleaved and two to a chunk, join per call in order."""
    server.script(
        streamed(
            chunk({"role": "assistant", "content": None}),
            chunk({"tool_calls": [opening(0, "c_a", "add")]}),
            chunk({"tool_calls": [call_piece(0, function=arguments('{"a": 1'))]}),
            chunk({"tool_calls": [opening(1, "c_b", "neg", '{"x"')]}),
            chunk(
                {
                    "tool_calls": [
                        call_piece(0, function=arguments(', "b": 2')),
                        call_piece(1, function=arguments(": -3")),
                    ]
                }
            ),
            chunk({"tool_calls": [call_piece(1, function=arguments("}"))]}),
            chunk({"tool_calls": [call_piece(0, function=arguments("}"))]}),
            chunk({}, finish_reason="tool_calls"),
            chunk(usage=USAGE, choices=False),
        )
    )
    assert collect(model, mode) == [
        ToolCallDelta(0, "c_a", "add"),
        ToolCallDelta(0, arguments='{"a": 1'),
        ToolCallDelta(1, "c_b", "neg", '{"x"'),
        ToolCallDelta(0, arguments=', "b": 2'),
        ToolCallDelta(1, arguments=": -3"),
        ToolCallDelta(1, arguments="}"),
        ToolCallDelta(0, arguments="}"),
        ModelResponse(
            "",
            (ToolCall("c_a", "add", {"a": 1, "b": 2}), ToolCall("c_b", "neg", {"x": -3})),
            Usage(11, 5),
            "tool_calls",
            "test-model",
        ),
    ]


def fixture_reply(name: str) -> Reply:
    """The fixture ``name``'s completion, as the server would send it unstreamed."""
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return Reply(data["body"])


@pytest.mark.parametrize(
    "name", ["plain_answer", "tool_calls", "malformed_arguments", "usage_details"]
)
@pytest.mark.parametrize("size", [1, 3, 7])
def test_a_streamed_completion_answers_what_generate_answers(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, name: str, size: int
) -> None:
    """Cut into pieces of any size, a completion streams to the response ``generate`` maps
    from it whole (calls, parsed or unparsed arguments, usage details, finish reason); the
    deltas join to its text and to each call's argument text."""
    reply = fixture_reply(name)
    server.script(reply, as_stream(reply, size))
    expected = model.generate(HELLO)
    items = collect(model, mode)
    assert items[-1] == expected
    assert "".join(item.text for item in items if isinstance(item, TextDelta)) == expected.text
    sent: list[dict[str, Any]] = reply.body["choices"][0]["message"].get("tool_calls") or []
    for index, call in enumerate(sent):
        pieces = [item for item in items if isinstance(item, ToolCallDelta) and item.index == index]
        assert (pieces[0].id, pieces[0].name) == (call["id"], call["function"]["name"])
        assert "".join(piece.arguments for piece in pieces) == call["function"]["arguments"]


def test_malformed_streamed_arguments_come_back_unparsed(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Argument text that joins to no JSON object is kept as ``UnparsedArguments``."""
    server.script(as_stream(fixture_reply("malformed_arguments"), 4))
    response = collect(model, mode)[-1]
    assert isinstance(response, ModelResponse)
    truncated = response.tool_calls[0].args
    assert isinstance(truncated, UnparsedArguments)
    assert truncated.raw == '{"location": "Bos'


def test_indices_a_server_shifts_become_positions(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Calls numbered 1 and 3 by the server are the response's calls 0 and 1, in order."""
    server.script(
        streamed(
            chunk({"content": "Let me look."}),
            chunk({"tool_calls": [opening(1, "c1", "a", "{}")]}),
            chunk({"tool_calls": [opening(3, "c3", "b")]}),
            chunk({"tool_calls": [call_piece(3, function=arguments('{"k": 1}'))]}),
            chunk({}, finish_reason="tool_calls"),
        )
    )
    assert collect(model, mode)[1:] == [
        ToolCallDelta(0, "c1", "a", "{}"),
        ToolCallDelta(1, "c3", "b"),
        ToolCallDelta(1, arguments='{"k": 1}'),
        ModelResponse(
            "Let me look.",
            (ToolCall("c1", "a", {}), ToolCall("c3", "b", {"k": 1})),
            None,
            "tool_calls",
            "test-model",
        ),
    ]


@pytest.mark.parametrize("index", ["absent", "null"])
def test_pieces_without_an_index_follow_their_ids(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, index: str
) -> None:
    """Without ``index`` (Gemini's endpoint) a piece with a new id opens a call, and one
    without an id, or with the same id again, continues the last."""

    def piece(**fields: Any) -> dict[str, Any]:
        return {**fields} if index == "absent" else {"index": None, **fields}

    server.script(
        streamed(
            chunk({"tool_calls": [piece(id="c1", function={"name": "a", "arguments": '{"x": '})]}),
            chunk({"tool_calls": [piece(function=arguments("1}"))]}),
            chunk({"tool_calls": [piece(id="c2", function={"name": "b", "arguments": '{"y"'})]}),
            chunk({"tool_calls": [piece(id="c2", function=arguments(": 2}"))]}),
            chunk({}, finish_reason="tool_calls"),
        )
    )
    assert collect(model, mode) == [
        ToolCallDelta(0, "c1", "a", '{"x": '),
        ToolCallDelta(0, arguments="1}"),
        ToolCallDelta(1, "c2", "b", '{"y"'),
        ToolCallDelta(1, arguments=": 2}"),
        ModelResponse(
            "",
            (ToolCall("c1", "a", {"x": 1}), ToolCall("c2", "b", {"y": 2})),
            None,
            "tool_calls",
            "test-model",
        ),
    ]


def test_an_id_and_name_sent_with_every_piece_count_once(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A server repeating the call's id and name in each piece: the first is kept, and only
    the first delta carries them; a piece that adds nothing makes no delta."""
    same = {"id": "c1", "type": "function"}
    server.script(
        streamed(
            chunk(
                {"tool_calls": [call_piece(0, **same, function={"name": "f", "arguments": '{"q"'})]}
            ),
            chunk(
                {
                    "tool_calls": [
                        call_piece(0, **same, function={"name": "f", "arguments": ': "z"}'})
                    ]
                }
            ),
            chunk({"tool_calls": [call_piece(0, **same, function={"name": "f"})]}),
            chunk({}, finish_reason="tool_calls"),
        )
    )
    assert collect(model, mode) == [
        ToolCallDelta(0, "c1", "f", '{"q"'),
        ToolCallDelta(0, arguments=': "z"}'),
        ModelResponse("", (ToolCall("c1", "f", {"q": "z"}),), None, "tool_calls", "test-model"),
    ]


def test_a_call_without_an_id_is_named_by_its_position(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """As unstreamed, a call that came without an id gets ``call_<n>``."""
    server.script(
        streamed(
            chunk({"tool_calls": [call_piece(0, function={"name": "f", "arguments": "{}"})]}),
            chunk({}, finish_reason="tool_calls"),
        )
    )
    response = collect(model, mode)[-1]
    assert isinstance(response, ModelResponse)
    assert response.tool_calls == (ToolCall("call_0", "f", {}),)


def test_usage_in_a_chunk_whose_choices_are_null(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """vLLM's last chunk says ``"choices": null``: its usage is still read."""
    last = {**chunk(usage=USAGE, choices=False), "choices": None}
    server.script(streamed(chunk({"content": "ok"}, finish_reason="stop"), last))
    assert collect(model, mode)[-1] == ModelResponse(
        "ok", usage=Usage(11, 5), finish_reason="stop", model="test-model"
    )


def test_a_refusal_streams_as_the_text(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Refusal pieces are text deltas and, with no content, the response's text."""
    server.script(
        streamed(
            chunk({"role": "assistant", "content": None, "refusal": ""}),
            chunk({"refusal": "I can't "}),
            chunk({"refusal": "help with that."}, finish_reason="stop"),
        )
    )
    assert collect(model, mode) == [
        TextDelta("I can't "),
        TextDelta("help with that."),
        ModelResponse("I can't help with that.", finish_reason="stop", model="test-model"),
    ]


def test_choices_after_the_first_are_not_the_answer(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """With several choices streamed (``n`` > 1) the answer is the first, as unstreamed."""
    both = chunk({"content": "one"}, finish_reason="stop")
    both["choices"].append({"index": 1, "delta": {"content": "two"}, "finish_reason": "length"})
    server.script(streamed(both))
    assert collect(model, mode) == [
        TextDelta("one"),
        ModelResponse("one", finish_reason="stop", model="test-model"),
    ]


def test_a_choice_sent_without_its_index_is_the_answer(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A server that leaves out the choice's ``index`` still streams the answer."""
    unnumbered = chunk({"content": "fine"}, finish_reason="stop")
    del unnumbered["choices"][0]["index"]
    server.script(streamed(unnumbered))
    assert collect(model, mode) == [
        TextDelta("fine"),
        ModelResponse("fine", finish_reason="stop", model="test-model"),
    ]


def test_an_error_event_mid_stream_is_the_sdks_error_after_the_deltas(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """An error the server sends mid-stream is raised as ``openai.APIError``, unwrapped,
    after the deltas that came before it."""
    failure = {"error": {"message": "overloaded", "type": "server_error", "code": None}}
    server.script(streamed(chunk({"content": "Hal"}), failure, chunk({"content": "f"})))
    got, error = until_error(model, mode)
    assert got == [TextDelta("Hal")]
    assert type(error) is openai.APIError
    assert error.message == "overloaded"


def test_a_status_error_raises_before_any_delta(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A 429 refuses the stream itself: the SDK's ``RateLimitError``, with no delta."""
    server.script(
        openai_server.error(429, "slow down", kind="requests", code="rate_limit_exceeded")
    )
    got, error = until_error(model, mode)
    assert got == []
    assert isinstance(error, openai.RateLimitError)
    assert error.status_code == 429


def test_a_stream_that_holds_no_choice_is_a_provider_error(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """A stream of only a usage chunk, then ``[DONE]``, has no answer: a ``ProviderError``
    naming the completion, not worth a retry."""
    server.script(streamed(chunk(usage=USAGE, choices=False)))
    got, error = until_error(model, mode)
    assert got == []
    assert isinstance(error, ProviderError)
    assert error.problem == "the stream 'chatcmpl-stream' held no choices"
    assert not error.transient


def test_making_the_iterators_sends_no_request(server: OpenAIServer) -> None:
    """The request goes out at the first step: an iterator never stepped sends nothing."""
    made = OpenAIChatModel("test-model", base_url=server.url)
    made.stream(HELLO)

    async def unstarted() -> None:
        made.astream(HELLO)

    asyncio.run(unstarted())
    made.close()
    assert server.bodies == []


class Body(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body sent event by event that knows how far it was read and if closed."""

    def __init__(self, events: list[Mapping[str, Any]]) -> None:
        lines = [json.dumps(event) for event in events] + ["[DONE]"]
        self.pieces = [f"data: {line}\n\n".encode() for line in lines]
        self.sent = 0
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        for piece in self.pieces:
            self.sent += 1
            yield piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            self.sent += 1
            yield piece

    def close(self) -> None:
        """Closed by the client."""
        self.closed = True

    async def aclose(self) -> None:
        """Closed by the async client."""
        self.closed = True


def mock_model(body: Body) -> OpenAIChatModel:
    """A model on clients whose transport answers every request with ``body``."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    transport = httpx2.MockTransport(handle)
    options: dict[str, Any] = {"api_key": "sk-test", "base_url": "https://api.test/v1"}
    return OpenAIChatModel(
        "m",
        client=openai.OpenAI(**options, http_client=httpx2.Client(transport=transport)),
        async_client=openai.AsyncOpenAI(
            **options, http_client=httpx2.AsyncClient(transport=transport)
        ),
    )


def test_stopping_early_closes_the_response(mode: Mode) -> None:
    """A consumer that closes the iterator after one delta closes the HTTP response: the
    rest of the body is never read."""
    body = Body([chunk({"content": str(n)}) for n in range(50)])
    model = mock_model(body)
    if mode == "sync":
        stream = model.stream(HELLO)
        assert next(stream) == TextDelta("0")
        assert not body.closed
        stream.close()
    else:

        async def one() -> None:
            astream = model.astream(HELLO)
            assert await anext(astream) == TextDelta("0")
            assert not body.closed
            await astream.aclose()

        asyncio.run(one())
    assert body.closed
    assert body.sent < 50


def test_a_stream_read_to_the_end_closes_its_response(mode: Mode) -> None:
    """Read to ``[DONE]``, the response is closed (its connection free for the next)."""
    body = Body([chunk({"content": "ok"}, finish_reason="stop")])
    assert collect(mock_model(body), mode)[-1] == ModelResponse(
        "ok", finish_reason="stop", model="test-model"
    )
    assert body.closed


def test_openai_chat_model_is_a_streaming_model_both_ways() -> None:
    """``OpenAIChatModel`` satisfies ``StreamingModel`` and ``AsyncStreamingModel``."""
    model = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1")
    sync: StreamingModel = model
    asynchronous: AsyncStreamingModel = model
    assert callable(sync.stream)
    assert callable(asynchronous.astream)


def test_streamed_calls_in_a_row_reuse_one_connection(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """After ``[DONE]`` the body is read to its end, so the connection goes back to the
    pool: two streamed calls in a row open one connection (each opened its own before)."""
    server.script(as_stream(completion("One.")), as_stream(completion("Two.")))
    if mode == "sync":
        first, second = collect(model, mode)[-1], collect(model, mode)[-1]
    else:

        async def twice() -> list[ModelChunk]:
            return [[item async for item in model.astream(HELLO)][-1] for _ in range(2)]

        first, second = asyncio.run(twice())
    assert [getattr(first, "text", None), getattr(second, "text", None)] == ["One.", "Two."]
    assert server.connections == 1
