"""``AnthropicModel`` against ``llmock``, an independent Messages API mock that injects faults.

The ``llmock`` fixture (its pytest plugin) runs one real server on a free 127.0.0.1
port, here for this module (``llmock_server`` below), and resets it per test; each test
injects one of its faults, runs the calculator agent through a ``Runner`` with
``RetryTransient`` and asks llmock's own verdict whether the client handled the fault
(``assert_resilient(strict=True)``: no error and no warning: Retry-After honoured,
nothing non-retryable retried, no truncated or malformed stream accepted, no stall sat
through). The fault modes llmock 0.2.2 offers: HTTP errors (429 with Retry-After, 5xx,
529, 4xx), a delay before the answer, a slow first token, and in a stream: a
disconnect, a truncation (no ``message_stop``), a malformed event, a stall. It has no
error event mid-stream: the loopback server's tests cover that one (``test_stream.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from llmock.pytest_plugin import LLMock
from llmock.testing import LLMockServer

from runner import (
    Agent,
    AnthropicModel,
    ErrorEvent,
    ModelTimeout,
    ProviderError,
    RetryPolicy,
    RetryTransient,
    RunFinishedEvent,
    Runner,
    RunResult,
    StreamEvent,
    ToolResultEvent,
)
from tests.helpers.runs import Mode, drive, events_of


@pytest.fixture(scope="module")
def llmock_server() -> Iterator[LLMockServer]:
    """llmock's server for this module only (the plugin's lives for the session): stopped
    when the module ends, so its uvicorn loop cannot spin under a later test that patches
    ``asyncio.sleep`` (the ``waits`` fixture) and fill what that test records."""
    with LLMockServer() as server:
        yield server


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def runner_on(llmock: LLMock, **options: Any) -> tuple[Runner, AnthropicModel]:
    """The calculator agent on llmock's Anthropic endpoint, three attempts per call."""
    model = AnthropicModel("claude-sonnet-4-6", base_url=llmock.base_url("anthropic"), **options)
    agent = Agent("calc", model, tools=[add], instruction="Add with the tool.")
    return Runner(agent, retry=RetryPolicy(max_attempts=3, base_delay=0.05)), model


def streamed(runner: Runner) -> RunResult:
    """One run through ``Runner.stream`` (``astream``), with ``RetryTransient``."""

    async def main() -> RunResult:
        events: list[StreamEvent] = [
            event async for event in runner.stream("What is 2 + 3?", callbacks=[RetryTransient()])
        ]
        last = events[-1]
        assert isinstance(last, RunFinishedEvent)
        return last.result

    return asyncio.run(main())


def test_a_tool_round_trip_through_llmock(llmock: LLMock, mode: Mode) -> None:
    """llmock calls ``add``; its result goes back as a tool_result llmock accepts."""
    llmock.call_tool("add", {"a": 2, "b": 3}).reply("It is 5.")
    runner, model = runner_on(llmock)
    with runner:
        result = drive(runner, mode, "What is 2 + 3?", callbacks=[RetryTransient()])
    model.close()
    assert result.output == "It is 5."
    assert [event.result.content for event in events_of(result, ToolResultEvent)] == ["5"]
    llmock.assert_resilient(strict=True)


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_http_errors_are_retried_honouring_retry_after(
    llmock: LLMock, mode: Mode, status: int
) -> None:
    """A transient status (with Retry-After 0.2 s) is retried once, after the wait."""
    llmock.fail(status, retry_after=0.2).tool_mode("off").reply("It is 5.")
    runner, model = runner_on(llmock)
    with runner:
        result = drive(runner, mode, "What is 2 + 3?", callbacks=[RetryTransient()])
    model.close()
    assert result.output == "It is 5."
    (error,) = events_of(result, ErrorEvent)
    assert isinstance(error.error, anthropic.APIStatusError)
    assert error.error.status_code == status
    llmock.assert_resilient(strict=True)


def test_a_client_error_is_not_retried(llmock: LLMock, mode: Mode) -> None:
    """A 400 is the request's fault: the run fails with it after one attempt."""
    llmock.fail(400).tool_mode("off")
    runner, model = runner_on(llmock)
    with runner, pytest.raises(anthropic.BadRequestError):
        drive(runner, mode, "What is 2 + 3?", callbacks=[RetryTransient()])
    model.close()
    assert len(llmock.requests) == 1
    llmock.assert_resilient(strict=True)


def test_a_delay_and_a_slow_first_token_are_waited_for(llmock: LLMock) -> None:
    """Slowness within the deadline is no fault: both answers arrive."""
    llmock.delay(0.2).slow_first_token(0.2).tool_mode("off").reply("It is 5.", times=None)
    runner, model = runner_on(llmock)
    with runner:
        assert drive(runner, "sync", "What is 2 + 3?").output == "It is 5."
        assert streamed(runner).output == "It is 5."
    model.close()
    llmock.assert_resilient(strict=True)


@pytest.mark.parametrize(
    ("fault", "raised"),
    [
        ("disconnect", Exception),  # the transport's protocol error
        ("truncate", ProviderError),
        ("corrupt", ProviderError),
    ],
)
def test_a_broken_stream_is_retried(llmock: LLMock, fault: str, raised: type[Exception]) -> None:
    """A stream cut, ended early or corrupted is never taken as an answer: it is retried
    and the second stream's answer is the run's. Events 20 ms apart, as a model writes
    them: so llmock sees the client stop reading at a malformed event (sent all at once,
    the rest of the stream may be written before the client hangs up)."""
    getattr(llmock, fault)(after_chunks=2)
    llmock.pace(20).tool_mode("off").reply("It is 5.", times=None)
    runner, _ = runner_on(llmock)
    with runner:
        result = streamed(runner)
    assert result.output == "It is 5."
    (error,) = events_of(result, ErrorEvent)
    assert isinstance(error.error, raised)
    llmock.assert_resilient(strict=True)


def test_a_stalled_stream_ends_at_the_deadline_and_is_retried(llmock: LLMock) -> None:
    """A stream that stops sending for 5 s: the model's 0.5 s deadline ends the attempt
    (``ModelTimeout``), and the retry answers."""
    llmock.stall(after_chunks=2, seconds=5.0).tool_mode("off").reply("It is 5.", times=None)
    runner, _ = runner_on(llmock, deadline=0.5)
    with runner:
        result = streamed(runner)
    assert result.output == "It is 5."
    (error,) = events_of(result, ErrorEvent)
    assert isinstance(error.error, ModelTimeout)
    llmock.assert_resilient(strict=True)
