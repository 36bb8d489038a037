"""``OpenAIResponsesModel`` against ``llmock``, an independent mock of the Responses API
that injects faults: the oracle our own server is not.

The ``llmock`` fixture (its pytest plugin) resets a real llmock server for each test;
the server, on 127.0.0.1 (a free port), is this module's (``llmock_server`` here).
Each test injects one fault and says what the model makes of it -- the error type the
hooks see, whether ``is_transient`` calls it worth a retry -- and, where a retry can
help, that a run with ``RetryTransient`` gets its answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import openai
import pytest

from runner import (
    Agent,
    Message,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    OpenAIResponsesModel,
    ProviderError,
    RetryEvent,
    RetryPolicy,
    RetryTransient,
    RunFinishedEvent,
    Runner,
    StreamEvent,
    TextDelta,
    ToolArgumentsError,
    is_transient,
    retry_after,
)
from tests.helpers.runs import Mode, drive

if TYPE_CHECKING:
    from llmock.pytest_plugin import LLMock
    from llmock.testing import LLMockServer

HELLO = ModelRequest((Message("user", "Hello!"),))
DEADLINE = 1.0


@pytest.fixture(scope="module")
def llmock_server() -> Iterator[LLMockServer]:
    """One llmock server on 127.0.0.1 (a free port) for this module, stopped at its end:
    it overrides the plugin's session-wide one, which would outlive these tests and keep
    its event loop running under every later test (one that fakes ``asyncio.sleep``
    would spin it)."""
    from llmock.testing import LLMockServer

    with LLMockServer() as server:
        yield server


@pytest.fixture
def model(llmock: LLMock) -> Iterator[OpenAIResponsesModel]:
    """A model on the llmock server, its clients closed after the test."""
    made = OpenAIResponsesModel("gpt-5.5", base_url=llmock.base_url("openai"), deadline=DEADLINE)
    yield made
    made.close()


def call(
    model: OpenAIResponsesModel, mode: Mode, *, streamed: bool
) -> tuple[list[object], BaseException | None]:
    """What one call yielded (the response last) and raised (``None`` if nothing)."""
    got: list[object] = []
    try:
        if mode == "sync":
            got.extend(model.stream(HELLO) if streamed else [model.generate(HELLO)])
        else:

            async def run() -> None:
                if streamed:
                    got.extend([item async for item in model.astream(HELLO)])
                else:
                    got.append(await model.agenerate(HELLO))
                await model.aclose()

            asyncio.run(run())
    except Exception as exc:
        return got, exc
    return got, None


STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])


@STREAMED
def test_an_answer(llmock: LLMock, model: OpenAIResponsesModel, mode: Mode, streamed: bool) -> None:
    """No fault: the scripted text, usage, ``stop``; the stream's deltas join to it."""
    llmock.reply("Hello from llmock, in pieces.")
    got, error = call(model, mode, streamed=streamed)
    assert error is None
    final = got[-1]
    assert isinstance(final, ModelResponse)
    assert (final.text, final.finish_reason) == ("Hello from llmock, in pieces.", "stop")
    assert final.usage is not None
    assert final.usage.output_tokens > 0
    if streamed:
        assert "".join(d.text for d in got if isinstance(d, TextDelta)) == final.text
        assert len(got) > 2
    assert llmock.last_request.body["store"] is False
    llmock.assert_resilient()


@STREAMED
def test_a_tool_call(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode, streamed: bool
) -> None:
    """A function call: its name and parsed arguments, finish reason ``tool_calls``."""
    llmock.call_tool("add", {"a": 2, "b": 3})
    got, error = call(model, mode, streamed=streamed)
    assert error is None
    final = got[-1]
    assert isinstance(final, ModelResponse)
    assert [(c.name, dict(c.args)) for c in final.tool_calls] == [("add", {"a": 2, "b": 3})]
    assert final.finish_reason == "tool_calls"


@STREAMED
def test_a_rate_limit(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode, streamed: bool
) -> None:
    """429: ``openai.RateLimitError``, transient, its Retry-After read."""
    llmock.rate_limit(retry_after=0.25)
    _, error = call(model, mode, streamed=streamed)
    assert isinstance(error, openai.RateLimitError)
    assert is_transient(error)
    assert retry_after(error) == 0.25


@pytest.mark.parametrize(
    ("status", "kind"), [(500, openai.InternalServerError), (503, openai.InternalServerError)]
)
def test_a_server_error(
    llmock: LLMock,
    model: OpenAIResponsesModel,
    mode: Mode,
    status: int,
    kind: type[Exception],
) -> None:
    """5xx before the answer: the SDK's status error, transient."""
    llmock.fail(status)
    _, error = call(model, mode, streamed=True)
    assert isinstance(error, kind)
    assert is_transient(error)


def test_a_context_overflow_is_not_retried(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """400 ``context_length_exceeded``: ``openai.BadRequestError``, not transient."""
    llmock.context_overflow()
    _, error = call(model, mode, streamed=False)
    assert isinstance(error, openai.BadRequestError)
    assert not is_transient(error)


def test_a_truncated_stream_is_a_transient_provider_error(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """The stream ends cleanly, early, with no final event: never taken as an answer."""
    llmock.reply("A long enough answer to be cut in the middle of it.").truncate(after_chunks=3)
    got, error = call(model, mode, streamed=True)
    assert not any(isinstance(item, ModelResponse) for item in got)
    assert isinstance(error, ProviderError)
    assert is_transient(error)


def test_a_malformed_event_is_a_provider_error(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """An event whose JSON is cut in half: a ``ProviderError`` quoting it, transient (JSON
    cut short was cut on the way)."""
    llmock.reply("A long enough answer to be broken in the middle.").corrupt(after_chunks=3)
    _, error = call(model, mode, streamed=True)
    assert isinstance(error, ProviderError)
    assert "no JSON" in str(error)
    assert is_transient(error)


def test_a_disconnect_mid_stream_is_transient(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """The connection drops mid-stream: the transport's error, transient."""
    llmock.reply("A long enough answer to be dropped in the middle.").disconnect(after_chunks=3)
    got, error = call(model, mode, streamed=True)
    assert not any(isinstance(item, ModelResponse) for item in got)
    assert error is not None
    assert is_transient(error), repr(error)


def test_a_stalled_stream_meets_the_deadline(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """The server stops sending for longer than the deadline: ``ModelTimeout``."""
    llmock.reply("A long enough answer to stall in the middle.").stall(after_chunks=3, seconds=5)
    _, error = call(model, mode, streamed=True)
    assert isinstance(error, ModelTimeout)
    assert is_transient(error)


@pytest.mark.parametrize("fault", ["delay", "slow_first_token"])
def test_slowness_within_the_deadline_is_an_answer(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode, fault: str
) -> None:
    """A server slow to start (well within the deadline) still answers."""
    llmock.reply("Slowly.")
    if fault == "delay":
        llmock.delay(0.1)
    else:
        llmock.slow_first_token(0.1)
    got, error = call(model, mode, streamed=fault == "slow_first_token")
    assert error is None
    final = got[-1]
    assert isinstance(final, ModelResponse)
    assert final.text == "Slowly."


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class KeepToolErrors:
    """Keeps each tool error, recovers none."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def on_tool_error(self, failure: Any, ctx: Any, /) -> Any:
        """Keep the error; pass it on."""
        self.errors.append(failure.failure())
        return failure


def test_malformed_arguments_reach_on_tool_error(
    llmock: LLMock, model: OpenAIResponsesModel, mode: Mode
) -> None:
    """A call whose arguments are no JSON: ``ToolArgumentsError`` for the hooks, and the
    run goes on to an answer."""
    llmock.call_tool("add", {"a": 2, "b": 3}).break_tool_call("malformed_arguments")
    llmock.reply("Let me try again.")
    hook = KeepToolErrors()
    runner = Runner(Agent("calc", model, tools=[add]))
    result = drive(runner, mode, "What is 2 + 3?", callbacks=[hook])
    runner.close()
    assert result.output == "Let me try again."
    assert [type(error) for error in hook.errors] == [ToolArgumentsError]


@pytest.mark.parametrize("fault", ["rate_limit", "fail_503", "truncate", "disconnect", "corrupt"])
def test_a_streamed_run_with_retry_transient_recovers(
    llmock: LLMock, model: OpenAIResponsesModel, fault: str
) -> None:
    """``Runner.stream`` with ``RetryTransient``: the fault's attempt is retried (after the
    Retry-After a 429 asks for), the next one answers, and llmock finds the client
    resilient. (The runner's sleep is not faked here: ``asyncio.sleep`` is llmock's too.)"""
    llmock.reply("Recovered.", times=2)
    if fault == "rate_limit":
        llmock.rate_limit(retry_after=0.05)
    elif fault == "fail_503":
        llmock.fail(503)
    elif fault == "truncate":
        llmock.truncate(after_chunks=2)
    elif fault == "disconnect":
        llmock.disconnect(after_chunks=2)
    else:
        llmock.corrupt(after_chunks=2)

    async def main() -> list[StreamEvent]:
        runner = Runner(Agent("a", model), retry=RetryPolicy(max_attempts=3, base_delay=0))
        with runner:
            return [e async for e in runner.stream("hi", callbacks=[RetryTransient()])]

    events = asyncio.run(main())
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    assert last.result.output == "Recovered."
    assert len(llmock.requests) == 2
    retries = [event for event in events if isinstance(event, RetryEvent)]
    assert len(retries) == 1
    if fault == "rate_limit":
        assert retries[0].delay == 0.05
    llmock.assert_resilient()
