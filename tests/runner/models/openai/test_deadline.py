"""Every model call has a total deadline: ``OpenAIChatModel(..., deadline=)``.

The SDK's timeout is per read: a server that sends a keep-alive byte now and then would
hold a call forever under it. The deadline counts the whole call; past it the call ends
with ``ModelTimeout``, which error hooks see and ``RetryTransient`` retries. The local
server's slow replies end by themselves after ``KEEPALIVE_FOR`` seconds, so a deadline
that did not hold fails these tests (with another error) instead of hanging them.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Iterator

import httpx2
import pytest

from runner import (
    Agent,
    ErrorEvent,
    Message,
    ModelRequest,
    ModelTimeout,
    OpenAIChatModel,
    RetryTransient,
    Runner,
    TextDelta,
    is_transient,
)
from runner._models.openai.call import _Watchdog  # pyright: ignore[reportPrivateUsage]
from tests.helpers.openai_server import (
    OpenAIServer,
    Reply,
    chunk,
    completion,
    keepalive,
    silent,
    stall,
)
from tests.helpers.runs import Mode, drive, events_of

HELLO = ModelRequest((Message("user", "Hello!"),))
DEADLINE = 0.3


@pytest.fixture
def model(server: OpenAIServer) -> Iterator[OpenAIChatModel]:
    """A model on the local server with a short deadline."""
    made = OpenAIChatModel("test-model", base_url=server.url, deadline=DEADLINE)
    yield made
    made.close()


def raised(model: OpenAIChatModel, mode: Mode, *, streamed: bool) -> tuple[list[object], Exception]:
    """What one call yielded (streams) and raised: ``generate``/``stream`` in sync mode,
    ``agenerate``/``astream`` otherwise."""
    got: list[object] = []
    try:
        if mode == "sync":
            if streamed:
                got.extend(model.stream(HELLO))
            else:
                model.generate(HELLO)
        else:

            async def call() -> None:
                if streamed:
                    async for item in model.astream(HELLO):
                        got.append(item)
                else:
                    await model.agenerate(HELLO)

            asyncio.run(call())
    except Exception as exc:
        return got, exc
    raise AssertionError(f"the call answered: {got}")


@pytest.mark.parametrize("streamed_call", [False, True], ids=["whole", "streamed"])
def test_keep_alive_bytes_do_not_hold_a_call_past_its_deadline(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, streamed_call: bool
) -> None:
    """Headers, then a byte every 50 ms: each read succeeds, the call still ends at its
    deadline with ``ModelTimeout``, a transient ``TimeoutError``."""
    kind = "text/event-stream" if streamed_call else "application/json"
    server.script(keepalive(0.05, kind))
    _, error = raised(model, mode, streamed=streamed_call)
    assert isinstance(error, ModelTimeout)
    assert isinstance(error, TimeoutError)
    assert is_transient(error)
    assert (error.model, error.deadline) == ("test-model", DEADLINE)
    assert error.url == f"{server.url}/chat/completions"


@pytest.mark.parametrize("streamed_call", [False, True], ids=["whole", "streamed"])
def test_a_server_that_never_answers_meets_the_deadline(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode, streamed_call: bool
) -> None:
    """No headers at all: the wait for them is bounded by the deadline too."""
    server.script(silent())
    _, error = raised(model, mode, streamed=streamed_call)
    assert isinstance(error, ModelTimeout)


def test_a_stream_that_stalls_after_deltas_meets_the_deadline(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """Deltas, then keep-alive bytes only: the deltas came, then ``ModelTimeout``."""
    server.script(Reply({}, events=[chunk({"content": "Hel"})], done=False, keepalive=0.05))
    got, error = raised(model, mode, streamed=True)
    assert got == [TextDelta("Hel")]
    assert isinstance(error, ModelTimeout)


def test_a_timed_out_call_is_retried_by_retry_transient(
    server: OpenAIServer, model: OpenAIChatModel, mode: Mode
) -> None:
    """The error hooks see ``ModelTimeout``; ``RetryTransient`` retries it; the next
    attempt answers."""
    server.script(keepalive(0.05), completion("In time."))
    runner = Runner(Agent("a", model))
    result = drive(runner, mode, "hi", callbacks=[RetryTransient()])
    runner.close()
    assert result.output == "In time."
    assert [type(event.error) for event in events_of(result, ErrorEvent)] == [ModelTimeout]


def test_the_default_deadline_is_finite() -> None:
    """Without ``deadline=`` a call still has one: 300 seconds."""
    assert OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1").deadline == 300.0


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, 86_401, 1e300, True, "3", None])
def test_a_deadline_must_be_a_positive_finite_number(bad: object) -> None:
    """Anything else, or more than a day, is refused when the model is made."""
    with pytest.raises(ValueError, match="deadline must be a positive finite number"):
        OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", deadline=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("streamed_call", [False, True], ids=["whole", "streamed"])
def test_a_server_silent_mid_body_is_left_at_the_deadline(
    server: OpenAIServer, mode: Mode, streamed_call: bool
) -> None:
    """A first piece of the body, then silence, under a per-read timeout far longer than the
    deadline (the caller's ``httpx`` timeout): the call still ends with ``ModelTimeout``
    and hangs up while the server is still waiting (sync: the deadline shuts the socket)."""
    made = OpenAIChatModel(
        "test-model", base_url=server.url, deadline=DEADLINE, timeout=httpx2.Timeout(30.0)
    )
    if streamed_call:
        server.script(stall(b'data: {"id": "chatcmpl-1", ', "text/event-stream"))
    else:
        server.script(stall(b'{"id": "chatcmpl-1", '))
    _, error = raised(made, mode, streamed=streamed_call)
    made.close()
    assert isinstance(error, ModelTimeout)
    assert wait_for_hangup(server)


def wait_for_hangup(server: OpenAIServer) -> bool:
    """Whether the server saw the client hang up (it looks for ``KEEPALIVE_FOR`` at most)."""
    for _ in range(200):
        if server.hangups:
            return True
        threading.Event().wait(0.01)
    return bool(server.hangups)


def test_the_watchdog_runs_what_is_due_and_never_what_was_cancelled() -> None:
    """The sync calls' deadline thread: a watch due runs once; one cancelled before its
    time (a call that ended) never runs, so a connection back in the pool is never cut."""
    watchdog = _Watchdog()
    due, cancelled = threading.Event(), threading.Event()
    kept = watchdog.watch(time.monotonic() + 0.5, cancelled.set)
    watchdog.watch(time.monotonic(), due.set)
    watchdog.cancel(kept)
    assert due.wait(5)
    assert not cancelled.wait(0.7)
    watchdog.cancel(kept)  # twice is harmless


def test_the_runner_deadline_bounds_the_model_when_sooner(server: OpenAIServer, mode: Mode) -> None:
    """A model allowed 30 seconds under a runner allowing 0.3: the call ends with
    ``ModelTimeout`` by the runner's deadline, in ``run`` (the model reads ``time_left``)
    as in ``arun``; the error names the model and its URL."""
    server.script(keepalive(0.05), completion("In time."))
    made = OpenAIChatModel("test-model", base_url=server.url, deadline=30)
    runner = Runner(Agent("a", made), model_deadline=DEADLINE)
    result = drive(runner, mode, "hi", callbacks=[RetryTransient(base_delay=0.0)])
    runner.close()
    made.close()
    assert result.output == "In time."
    [event] = events_of(result, ErrorEvent)
    assert isinstance(event.error, ModelTimeout)
    assert event.error.deadline <= DEADLINE
