"""``OpenAIResponsesModel`` call by call against the local Responses server: answers,
incomplete and failed responses, error events mid-stream, cut-off streams, bodies that
are no response, deadlines, what it refuses and what it logs.

``answer`` makes one call the way the ``mode`` and ``streamed`` say: ``generate`` /
``stream`` in sync mode, ``agenerate`` / ``astream`` in async mode.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from runner import (
    Agent,
    ErrorEvent,
    Message,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    OpenAIResponsesModel,
    ProviderError,
    ReasoningPart,
    RetryTransient,
    Runner,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
    is_transient,
)
from tests.helpers.openai_server import Reply, keepalive, raw, silent
from tests.helpers.responses_server import (
    ResponsesServer,
    as_stream,
    error_event,
    failed_event,
    function_call,
    message,
    response,
    response_body,
    streamed,
    usage,
)
from tests.helpers.runs import Mode, drive, events_of

HELLO = ModelRequest((Message("user", "Hello!"),))
DEADLINE = 0.3


@pytest.fixture
def model(responses: ResponsesServer) -> Iterator[OpenAIResponsesModel]:
    """A model on the local server with a short deadline."""
    made = OpenAIResponsesModel("test-model", base_url=responses.url, deadline=DEADLINE)
    yield made
    made.close()


def answer(
    model: OpenAIResponsesModel,
    mode: Mode,
    *,
    streamed_call: bool,
    request: ModelRequest = HELLO,
) -> tuple[list[object], BaseException | None]:
    """What one call yielded (the response last) and raised (``None`` if nothing)."""
    got: list[object] = []
    try:
        if mode == "sync":
            if streamed_call:
                got.extend(model.stream(request))
            else:
                got.append(model.generate(request))
        else:

            async def call() -> None:
                if streamed_call:
                    async for item in model.astream(request):
                        got.append(item)
                else:
                    got.append(await model.agenerate(request))

            asyncio.run(call())
    except Exception as exc:
        return got, exc
    return got, None


def answered(reply: Reply, streamed_call: bool) -> Reply:
    """``reply`` as is, or as the server streams it."""
    return as_stream(reply) if streamed_call else reply


STREAMED = pytest.mark.parametrize("streamed_call", [False, True], ids=["whole", "streamed"])


@STREAMED
@pytest.mark.parametrize(
    "outcome",
    [("max_output_tokens", "length"), ("content_filter", "content_filter"), (None, "incomplete")],
)
def test_an_incomplete_response_is_the_text_so_far_with_its_reason(
    responses: ResponsesServer,
    model: OpenAIResponsesModel,
    mode: Mode,
    streamed_call: bool,
    outcome: tuple[str | None, str],
) -> None:
    """``status: incomplete``: the text so far, ``finish_reason`` mapped from its reason."""
    reason, finish = outcome
    cut = response(message("It is fi"), status="incomplete", incomplete=reason, used=usage(9, 4))
    responses.script(answered(cut, streamed_call))
    got, error = answer(model, mode, streamed_call=streamed_call)
    assert error is None
    assert got[-1] == ModelResponse(
        "It is fi", usage=Usage(9, 4), finish_reason=finish, model="test-model-2026-01-01"
    )


@STREAMED
def test_a_refusal_is_the_answers_text(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode, streamed_call: bool
) -> None:
    """A message holding a refusal and no text: the refusal is the text (and its deltas)."""
    responses.script(answered(response(message("I can't help.", refusal=True)), streamed_call))
    got, error = answer(model, mode, streamed_call=streamed_call)
    assert error is None
    final = got[-1]
    assert isinstance(final, ModelResponse)
    assert (final.text, final.finish_reason) == ("I can't help.", "stop")
    if streamed_call:
        assert "".join(d.text for d in got if isinstance(d, TextDelta)) == "I can't help."


@pytest.mark.parametrize(
    ("event", "transient"),
    [
        (error_event("server_error", "The server had an error."), True),
        (error_event("rate_limit_exceeded", "Slow down."), True),
        (error_event("invalid_prompt", "No."), False),
        ({"type": "error", "error": {"type": "server_error", "message": "Nested."}}, True),
        (failed_event("server_error", "It failed."), True),
        (failed_event("invalid_prompt", "Refused."), False),
    ],
    ids=["error-server", "error-rate", "error-prompt", "error-nested", "failed", "failed-prompt"],
)
def test_a_failure_mid_stream_is_the_sdks_api_error(
    responses: ResponsesServer,
    model: OpenAIResponsesModel,
    mode: Mode,
    event: dict[str, Any],
    transient: bool,
) -> None:
    """Deltas, then an ``error`` or ``response.failed`` event: the deltas came, then
    ``openai.APIError`` with the error as its body, transient by its code."""
    started = as_stream(response(message("Hello there")))
    assert started.events is not None
    responses.script(streamed(*list(started.events)[:5], event))
    got, error = answer(model, mode, streamed_call=True)
    assert got == [TextDelta("Hel"), TextDelta("lo ")]
    assert isinstance(error, openai.APIError)
    assert not isinstance(error, openai.APIStatusError)
    assert error.message in {"The server had an error.", "Slow down.", "No.", "Nested.",
                             "It failed.", "Refused."}  # fmt: skip
    assert is_transient(error) is transient


def test_a_failed_body_is_the_sdks_api_error(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """A 200 body whose ``status`` is ``failed``: ``openai.APIError`` with its ``error``."""
    failed = response_body(status="failed", error={"code": "server_error", "message": "Lost."})
    responses.script(Reply(failed))
    _, error = answer(model, mode, streamed_call=False)
    assert isinstance(error, openai.APIError)
    assert error.body == {"code": "server_error", "message": "Lost."}
    assert is_transient(error)


@pytest.mark.parametrize("cut_at", [2, 9], ids=["before-any-item", "mid-arguments"])
def test_a_stream_cut_off_before_its_final_event_is_a_transient_provider_error(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode, cut_at: int
) -> None:
    """The body ends cleanly with no ``response.completed``: a ``ProviderError`` naming
    the URL and the model, worth a retry."""
    whole = as_stream(response(function_call("call_1", "add", '{"a": 2, "b": 3}')))
    assert whole.events is not None
    responses.script(streamed(*list(whole.events)[:cut_at]))
    got, error = answer(model, mode, streamed_call=True)
    assert all(isinstance(delta, ToolCallDelta) for delta in got)
    assert isinstance(error, ProviderError)
    assert "no response.completed" in str(error)
    assert error.url == f"{responses.url}/responses"
    assert error.model == "test-model"
    assert is_transient(error)


@STREAMED
def test_a_body_that_is_no_response_is_a_provider_error(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode, streamed_call: bool
) -> None:
    """An HTML page: a ``ProviderError`` with the status, content type and first bytes."""
    responses.script(raw(b"<html>Bad gateway</html>", "text/html"))
    _, error = answer(model, mode, streamed_call=streamed_call)
    assert isinstance(error, ProviderError)
    assert (error.status, error.content_type) == (200, "text/html")
    assert error.head == b"<html>Bad gateway</html>"
    assert not is_transient(error)


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (Reply({"id": "x", "object": "response"}), "holds no output list"),
        (Reply(response_body(status="in_progress")), "in_progress"),
        (response({"type": "function_call", "name": 7}), "function_call.name must be a string"),
        (response(used={"input_tokens": -1}), "input_tokens must be an int >= 0"),
        (raw(b'{"output": [', "application/json"), "the body is no JSON"),
        (Reply({**response_body(), "status": ["failed"]}), "its status is no string"),
    ],
    ids=["no-output", "background", "bad-name", "bad-usage", "cut-json", "bad-status"],
)
def test_a_response_of_the_wrong_shape_is_a_provider_error(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode, reply: Reply, said: str
) -> None:
    """JSON that is no usable response: a ``ProviderError`` saying what is wrong (JSON cut
    short is transient, the rest not)."""
    responses.script(reply)
    _, error = answer(model, mode, streamed_call=False)
    assert isinstance(error, ProviderError)
    assert said in str(error)
    assert is_transient(error) is (said == "the body is no JSON")


@pytest.mark.parametrize(
    "event",
    [
        "event: response.output_text.delta\ndata: {not json\n\n",
        {"type": "response.output_text.delta", "delta": 7},
        {"type": "response.output_item.done", "output_index": "0", "item": {}},
        {"type": "response.completed", "response": {"output": "none"}},
        {"type": ["response.completed"]},
        {"type": "response.output_item.added", "output_index": [0], "item": {}},
        'data: ["not", "an", "object"]\n\n',
    ],
    ids=["not-json", "bad-delta", "bad-index", "bad-final", "bad-type", "list-index", "array"],
)
def test_an_event_of_the_wrong_shape_is_a_provider_error(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode, event: object
) -> None:
    """A malformed event mid-stream: a ``ProviderError`` quoting it."""
    first = {"type": "response.output_text.delta", "output_index": 0, "delta": "Hi"}
    responses.script(streamed(first, event))  # type: ignore[arg-type]
    got, error = answer(model, mode, streamed_call=True)
    assert got == [TextDelta("Hi")]
    assert isinstance(error, ProviderError)
    assert error.url == f"{responses.url}/responses"


@STREAMED
def test_a_streamed_request_answered_with_json_is_refused(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode, streamed_call: bool
) -> None:
    """A server that ignores ``stream: true``: a ``ProviderError`` saying so."""
    del streamed_call  # the JSON answers a streamed request only
    responses.script(response(message("Hi")))
    _, error = answer(model, mode, streamed_call=True)
    assert isinstance(error, ProviderError)
    assert "ignores stream: true" in str(error)


def test_events_named_only_by_their_sse_field_are_read(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """A server that leaves ``type`` out of the data and names each event in its
    ``event:`` line: the deltas and the answer still come."""
    final = response_body(message("Hi!"))
    responses.script(
        streamed(
            'event: response.output_text.delta\ndata: {"output_index": 0, "delta": "Hi"}\n\n',
            'event: response.output_text.delta\ndata: {"output_index": 0, "delta": "!"}\n\n',
            f"event: response.completed\ndata: {json.dumps({'response': final})}\n\n",
        )
    )
    got, error = answer(model, mode, streamed_call=True)
    assert error is None
    assert got[:2] == [TextDelta("Hi"), TextDelta("!")]
    last = got[-1]
    assert isinstance(last, ModelResponse)
    assert last.text == "Hi!"


def test_the_final_response_without_output_takes_the_done_items(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """A server whose ``response.completed`` lists no output: the items its
    ``output_item.done`` events gave make the answer."""
    call = function_call("call_1", "add", '{"a": 1}')
    responses.script(
        streamed(
            {"type": "response.output_item.added", "output_index": 0, "item": call},
            {"type": "response.output_item.done", "output_index": 0, "item": call},
            {"type": "response.completed", "response": response_body(used=usage(3, 2))},
        )
    )
    got, error = answer(model, mode, streamed_call=True)
    assert error is None
    assert got[0] == ToolCallDelta(0, "call_1", "add", '{"a": 1}')
    final = got[-1]
    assert isinstance(final, ModelResponse)
    assert final.finish_reason == "tool_calls"
    assert [(c.id, c.name, dict(c.args)) for c in final.tool_calls] == [("call_1", "add", {"a": 1})]


def test_streams_that_end_give_their_connection_back(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """Two streamed calls in a row: the second reuses the first's connection (the body is
    read to its end after the final event)."""
    responses.script(as_stream(response(message("One."))), as_stream(response(message("Two."))))
    texts: list[object]
    if mode == "sync":
        texts = [list(model.stream(HELLO))[-1] for _ in range(2)]
    else:

        async def twice() -> list[object]:
            return [[item async for item in model.astream(HELLO)][-1] for _ in range(2)]

        texts = asyncio.run(twice())
    assert [getattr(answer, "text", None) for answer in texts] == ["One.", "Two."]
    assert responses.connections == 1


def test_a_body_going_on_after_the_final_event_does_not_hold_the_answer(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """``response.completed``, then keep-alive bytes for seconds: the answer comes, whole,
    once the short grace for the body's end has passed (well before the deadline)."""
    whole = as_stream(response(message("Done.")))
    assert whole.events is not None
    responses.script(Reply({}, events=whole.events, keepalive=0.02))
    got, error = answer(model, mode, streamed_call=True)
    assert error is None
    final = got[-1]
    assert isinstance(final, ModelResponse)
    assert final.text == "Done."


@STREAMED
def test_keep_alive_bytes_do_not_hold_a_call_past_its_deadline(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode, streamed_call: bool
) -> None:
    """Headers, then a byte every 50 ms: the call ends at its deadline with ``ModelTimeout``,
    naming the model and the URL."""
    kind = "text/event-stream" if streamed_call else "application/json"
    responses.script(keepalive(0.05, kind))
    _, error = answer(model, mode, streamed_call=streamed_call)
    assert isinstance(error, ModelTimeout)
    assert is_transient(error)
    assert (error.model, error.deadline) == ("test-model", DEADLINE)
    assert error.url == f"{responses.url}/responses"


def test_a_server_that_never_answers_meets_the_deadline(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """No headers at all: the wait for them is bounded by the deadline too."""
    responses.script(silent())
    _, error = answer(model, mode, streamed_call=False)
    assert isinstance(error, ModelTimeout)


def test_a_stream_that_stalls_after_deltas_meets_the_deadline(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """Deltas, then keep-alive bytes only: the deltas came, then ``ModelTimeout``."""
    delta = {"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"}
    responses.script(Reply({}, events=[delta], keepalive=0.05))
    got, error = answer(model, mode, streamed_call=True)
    assert got == [TextDelta("Hel")]
    assert isinstance(error, ModelTimeout)


def test_the_runner_deadline_bounds_the_model_when_sooner(
    responses: ResponsesServer, mode: Mode
) -> None:
    """A model allowed 30 seconds under a runner allowing 0.3: ``ModelTimeout`` by the
    runner's deadline; ``RetryTransient`` retries it and the next attempt answers."""
    responses.script(keepalive(0.05), response(message("In time.")))
    made = OpenAIResponsesModel("test-model", base_url=responses.url, deadline=30)
    runner = Runner(Agent("a", made), model_deadline=DEADLINE)
    result = drive(runner, mode, "hi", callbacks=[RetryTransient(base_delay=0.0)])
    runner.close()
    made.close()
    assert result.output == "In time."
    [event] = events_of(result, ErrorEvent)
    assert isinstance(event.error, ModelTimeout)
    assert event.error.deadline <= DEADLINE


ANTHROPIC = ReasoningPart("anthropic", '{"type": "thinking", "signature": "s"}', "hm")
OPENAI = ReasoningPart("openai", '{"type": "reasoning", "id": "rs_9", "summary": []}', "")


def test_another_providers_reasoning_is_left_out_and_logged(
    responses: ResponsesServer,
    model: OpenAIResponsesModel,
    mode: Mode,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An assistant turn carrying Anthropic's thinking and OpenAI's reasoning: only the
    OpenAI item is sent; one INFO record on ``runner`` says what was left out and why."""
    responses.script(response(message("Fine.")))
    request = ModelRequest(
        (
            Message("user", "Hi"),
            Message("assistant", "Hello.", parts=(ANTHROPIC, OPENAI, ANTHROPIC)),
            Message("user", "Again?"),
        )
    )
    with caplog.at_level(logging.INFO, logger="runner"):
        _, error = answer(model, mode, streamed_call=False, request=request)
    assert error is None
    assert responses.bodies[0]["input"] == [
        {"type": "message", "role": "user", "content": "Hi"},
        {"type": "reasoning", "id": "rs_9", "summary": []},
        {"type": "message", "role": "assistant", "content": "Hello."},
        {"type": "message", "role": "user", "content": "Again?"},
    ]
    [record] = [r for r in caplog.records if r.name == "runner"]
    assert record.levelno == logging.INFO
    assert "left out reasoning parts (2 of 'anthropic')" in record.getMessage()
    assert "only OpenAI's own" in record.getMessage()


def test_no_record_when_nothing_is_left_out(
    responses: ResponsesServer, model: OpenAIResponsesModel, caplog: pytest.LogCaptureFixture
) -> None:
    """A call that sends every part logs nothing."""
    responses.script(response(message("Fine.")))
    request = ModelRequest((Message("user", "Hi"), Message("assistant", "", parts=(OPENAI,))))
    with caplog.at_level(logging.INFO, logger="runner"):
        model.generate(request)
    assert [r for r in caplog.records if r.name == "runner"] == []


def test_params_defaults_and_strict_tools_go_into_the_request(
    responses: ResponsesServer,
) -> None:
    """Params go into every request; ``store`` may be overridden; ``include`` keeps the
    encrypted reasoning beside the caller's; ``strict_tools`` marks the tools strict;
    the system messages that open the conversation are the ``instructions``."""
    responses.script(response(message("Hi")))
    made = OpenAIResponsesModel(
        "test-model",
        base_url=responses.url,
        store=True,
        include=["message.output_text.logprobs"],
        reasoning={"effort": "high", "summary": "auto"},
        max_output_tokens=99,
        strict_tools=True,
    )
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    request = ModelRequest(
        (
            Message("system", "Be brief."),
            Message("system", "Be kind."),
            Message("user", "Hi"),
            Message("system", "Now be formal."),
        ),
        (ToolSpec("noop", "Nothing.", schema), ToolSpec("free")),
    )
    made.generate(request)
    made.close()
    assert responses.bodies == [
        {
            "model": "test-model",
            "instructions": "Be brief.\n\nBe kind.",
            "input": [
                {"type": "message", "role": "user", "content": "Hi"},
                {"type": "message", "role": "system", "content": "Now be formal."},
            ],
            "include": ["message.output_text.logprobs", "reasoning.encrypted_content"],
            "store": True,
            "reasoning": {"effort": "high", "summary": "auto"},
            "max_output_tokens": 99,
            "tools": [
                {
                    "type": "function",
                    "name": "noop",
                    "description": "Nothing.",
                    "parameters": schema,
                    "strict": True,
                },
                {
                    "type": "function",
                    "name": "free",
                    "description": "",
                    "parameters": {"type": "object", "properties": {}},
                    "strict": True,
                },
            ],
        }
    ]


@pytest.mark.parametrize(
    "param", ["input", "instructions", "tools", "stream", "previous_response_id", "conversation"]
)
def test_what_the_model_sets_itself_is_refused(param: str) -> None:
    """A reserved keyword is a ``TypeError`` naming it."""
    given: dict[str, Any] = {param: "x"}
    with pytest.raises(TypeError, match=f"sets {param} itself"):
        OpenAIResponsesModel("m", base_url="http://127.0.0.1:9/v1", **given)


@pytest.mark.parametrize(
    ("options", "kind", "said"),
    [
        ({"model": 7}, TypeError, "model must be a str"),
        ({"model": ""}, ValueError, "must name a model"),
        ({"strict_tools": "yes"}, TypeError, "strict_tools must be a bool"),
        ({"include": "reasoning.encrypted_content"}, TypeError, "include must be a list of str"),
        ({"deadline": 0}, ValueError, "deadline must be a positive finite number"),
    ],
)
def test_bad_arguments_are_refused_clearly(
    options: dict[str, Any], kind: type[Exception], said: str
) -> None:
    """Each wrong argument fails when the model is made, saying which and why."""
    arguments = {"model": "m", "base_url": "http://127.0.0.1:9/v1", **options}
    with pytest.raises(kind, match=said):
        OpenAIResponsesModel(**arguments)


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no ``openai`` importable, the ImportError gives the exact install command."""
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError, match=r"pip install 'hookline\[openai\]'") as raised:
        OpenAIResponsesModel("gpt-5.5")
    assert raised.value.name == "openai"


def test_the_model_says_who_serves_it() -> None:
    """``provider`` is what telemetry names; ``model`` and the repr name the model."""
    made = OpenAIResponsesModel("gpt-5.5", base_url="http://127.0.0.1:9/v1")
    assert (made.provider, made.model, made.deadline) == ("openai", "gpt-5.5", 300.0)
    assert repr(made) == "OpenAIResponsesModel('gpt-5.5', base_url='http://127.0.0.1:9/v1')"


def test_a_model_made_on_one_loop_serves_the_next(
    responses: ResponsesServer, model: OpenAIResponsesModel
) -> None:
    """Two ``asyncio.run`` in turn: each gets an answer (a client per loop)."""
    responses.script(response(message("One.")), response(message("Two.")))
    texts = [asyncio.run(model.agenerate(HELLO)).text for _ in range(2)]
    assert texts == ["One.", "Two."]


def test_a_calls_first_arguments_in_its_added_item_are_a_delta(
    responses: ResponsesServer, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """A ``function_call`` item that begins with arguments: they are the first delta's, so
    the deltas join to the call's arguments."""
    call = function_call("call_1", "add", '{"a": 1, "b": 2}')
    begun = {"type": "response.output_item.added", "output_index": 0}
    more = {"type": "response.function_call_arguments.delta", "output_index": 0}
    responses.script(
        streamed(
            {**begun, "item": {**call, "arguments": '{"a": 1'}},
            {**more, "delta": ', "b": 2}'},
            {"type": "response.completed", "response": response_body(call)},
        )
    )
    got, error = answer(model, mode, streamed_call=True)
    assert error is None
    assert got[:2] == [
        ToolCallDelta(0, "call_1", "add", '{"a": 1'),
        ToolCallDelta(0, None, None, ', "b": 2}'),
    ]
