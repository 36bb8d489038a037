"""The runner's deadline on every model call: ``Runner(..., model_deadline=)``.

Whatever the model, an awaited call (``arun``, ``stream``) that passes the deadline ends
with ``ModelTimeout``, which the error hooks see; a sync call in ``run`` is told what
is left through ``runner.time_left()``. The models here wait on events nobody sets, so
a deadline that did not hold would hang the test (the events are set at teardown, so a
worker thread is never left behind).
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from hooks import ErrorResult, Failure, Fallback
from runner import (
    Agent,
    AttemptDiscardedEvent,
    ErrorEvent,
    ModelContext,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    RetryTransient,
    RunFinishedEvent,
    Runner,
    StreamEvent,
    TextDelta,
    is_transient,
    time_left,
)
from runner._models.deadline import DEFAULT_MODEL_DEADLINE, Bounded
from tests.helpers.runs import events_of

DEADLINE = 0.05


class Late:
    """Falls back to "late" when a model call fails, and keeps the error."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Keep the error, answer "late"."""
        self.errors.append(failure.failure())
        return Fallback(ModelResponse("late"))


class NeverAsync:
    """An async model whose first ``hangs`` calls wait for ever; then it answers."""

    model = "never-async"

    def __init__(self, hangs: int = 1_000) -> None:
        self.hangs = hangs
        self.calls = 0

    async def generate(self, request: ModelRequest) -> ModelResponse:
        """Wait on an event nobody sets, unless the hangs are used up."""
        self.calls += 1
        if self.calls <= self.hangs:
            await asyncio.Event().wait()
        return ModelResponse("answered")


class Blocking:
    """A sync model that blocks its thread until ``release`` is set; reads ``time_left``."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.left: list[float] = []

    def generate(self, request: ModelRequest) -> ModelResponse:
        """Block (on a worker thread in ``arun``) until released."""
        self.left.append(time_left())
        self.release.wait(timeout=30)
        return ModelResponse("released")


class Stalls:
    """A streaming model: one delta, then a wait for ever."""

    def generate(self, request: ModelRequest) -> ModelResponse:
        """Not used: the run streams."""
        raise AssertionError("streamed runs call astream")

    async def astream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """Say "Hel", then stall."""
        yield TextDelta("Hel")
        await asyncio.Event().wait()
        yield ModelResponse("Hello")


@pytest.fixture
def blocking() -> Iterator[Blocking]:
    """A blocking model, released at teardown so its worker thread ends."""
    model = Blocking()
    yield model
    model.release.set()


def test_every_runner_has_a_finite_model_deadline() -> None:
    """Unless given, each model call has 600 seconds."""
    runner = Runner(Agent("a", NeverAsync()))
    assert runner.model_deadline == DEFAULT_MODEL_DEADLINE == 600.0
    assert Runner(Agent("a", NeverAsync()), model_deadline=2).model_deadline == 2.0


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, 86_401, True, "3", None])
def test_a_model_deadline_must_be_a_positive_finite_number(bad: object) -> None:
    """Anything else, or more than a day, is refused when the runner is made."""
    with pytest.raises(ValueError, match="Runner's model_deadline must be a positive finite"):
        Runner(Agent("a", NeverAsync()), model_deadline=bad)  # type: ignore[arg-type]


def test_an_async_model_past_the_deadline_fails_with_model_timeout() -> None:
    """The call is cancelled at the deadline; the error hooks see ``ModelTimeout`` naming
    the model and the deadline, a transient ``TimeoutError``."""
    late = Late()
    runner = Runner(Agent("a", NeverAsync()), model_deadline=DEADLINE)
    result = asyncio.run(runner.arun("hi", callbacks=[late]))
    assert result.output == "late"
    [error] = late.errors
    assert isinstance(error, ModelTimeout)
    assert is_transient(error)
    assert (error.model, error.deadline) == ("never-async", DEADLINE)
    assert "within its deadline of 0.05s" in str(error)


def test_retry_transient_retries_a_call_past_the_runner_deadline() -> None:
    """The first call hangs, the retry answers: one ``ErrorEvent`` with ``ModelTimeout``."""
    model = NeverAsync(hangs=1)
    runner = Runner(Agent("a", model), model_deadline=DEADLINE)
    result = asyncio.run(runner.arun("hi", callbacks=[RetryTransient(base_delay=0.0)]))
    assert result.output == "answered"
    assert model.calls == 2
    assert [type(event.error) for event in events_of(result, ErrorEvent)] == [ModelTimeout]


def test_a_sync_model_in_arun_is_left_at_the_deadline(blocking: Blocking) -> None:
    """A sync model runs on a worker thread, which cannot be stopped: the run stops
    waiting for it at the deadline. The thread read a finite time left."""
    late = Late()
    runner = Runner(Agent("a", blocking), model_deadline=DEADLINE)
    result = asyncio.run(runner.arun("hi", callbacks=[late]))
    assert result.output == "late"
    assert [type(error) for error in late.errors] == [ModelTimeout]
    blocking.release.set()  # the thread was left running: close() waits for its pool
    runner.close()
    [left] = blocking.left
    assert 0 <= left <= DEADLINE  # finite, and never more than the runner allows


def test_a_stalled_stream_fails_at_the_deadline_and_the_consumer_is_not_cancelled() -> None:
    """The streamed run is stepped in the consumer's task: the deadline cancels what the
    call waits on, never that task. What was shown is discarded; the fallback stands."""
    late = Late()
    runner = Runner(Agent("a", Stalls()), model_deadline=DEADLINE)

    async def consume() -> tuple[list[StreamEvent], int]:
        seen = [event async for event in runner.stream("hi", callbacks=[late])]
        task = asyncio.current_task()
        assert task is not None
        return seen, task.cancelling()

    seen, cancelling = asyncio.run(consume())
    assert cancelling == 0
    assert [type(error) for error in late.errors] == [ModelTimeout]
    assert [event.text for event in seen if isinstance(event, TextDelta)] == ["Hel"]
    assert any(isinstance(event, AttemptDiscardedEvent) for event in seen)
    assert isinstance(seen[-1], RunFinishedEvent)
    assert seen[-1].result.output == "late"


def test_a_sync_run_tells_the_model_what_is_left(blocking: Blocking) -> None:
    """``run`` cannot stop a sync call: the model reads ``time_left()``, at most the
    deadline; outside a call there is no deadline."""
    blocking.release.set()
    runner = Runner(Agent("a", blocking), model_deadline=30)
    assert runner.run("hi").output == "released"
    [left] = blocking.left
    assert 0 <= left <= 30
    assert time_left() == math.inf


def test_a_task_cancelled_during_a_call_stays_cancelled() -> None:
    """A cancellation of the run's task is the caller's, not a timeout: it propagates."""
    runner = Runner(Agent("a", NeverAsync()), model_deadline=30)

    async def cancel_it() -> None:
        task = asyncio.create_task(runner.arun("hi"))
        await asyncio.sleep(0.01)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel_it())


def test_a_cancellation_asked_after_the_deadline_fired_is_not_taken_for_it() -> None:
    """The deadline fires and, before the call has seen it, the task is cancelled too:
    the task's own cancellation wins, as with ``asyncio.timeout``. Without it, the same
    call ends with ``ModelTimeout``."""

    async def main(cancel: bool) -> str:
        loop = asyncio.get_running_loop()
        gate: asyncio.Future[str] = loop.create_future()

        async def bounded() -> str:
            return await Bounded(gate, 0.01, "m")

        task = asyncio.create_task(bounded())
        await asyncio.sleep(0)  # the call waits on gate; its timer is armed, due first
        if cancel:
            loop.call_later(0.01, task.cancel)  # due just after the deadline's timer
        return await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main(cancel=True))
    with pytest.raises(ModelTimeout):
        asyncio.run(main(cancel=False))


def test_bounded_returns_at_once_without_a_timer_and_after_waits_within_time() -> None:
    """A call that never waits returns its value with no timer armed; one that waits and
    finishes in time returns its value; a bare yield past the deadline is cancelled."""

    async def main() -> None:
        loop = asyncio.get_running_loop()

        async def at_once() -> int:
            return 1

        async def after_sleep() -> int:
            await asyncio.sleep(0)
            return 2

        async def spins() -> int:
            while True:
                await asyncio.sleep(0)  # a bare yield each time: nothing to cancel

        timers = len(loop._scheduled)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType]
        assert await Bounded(at_once(), 5, "m") == 1
        assert len(loop._scheduled) == timers  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownArgumentType]
        assert await Bounded(after_sleep(), 5, "m") == 2
        with pytest.raises(ModelTimeout):
            await Bounded(spins(), 0.01, "m")

    asyncio.run(main())


def test_an_error_of_the_call_passes_through_unchanged() -> None:
    """What the awaited call raises, before or after waiting, is raised as is."""

    async def main() -> None:
        async def fails_at_once() -> None:
            raise KeyError("now")

        async def fails_later() -> None:
            await asyncio.sleep(0)
            raise KeyError("later")

        with pytest.raises(KeyError, match="now"):
            await Bounded(fails_at_once(), 5, "m")
        with pytest.raises(KeyError, match="later"):
            await Bounded(fails_later(), 5, "m")

    asyncio.run(main())


def test_a_model_without_a_name_is_named_by_its_class() -> None:
    """``ModelTimeout`` names the model by its ``model`` attribute, else its class."""
    late = Late()

    class Anonymous:
        async def generate(self, request: ModelRequest) -> ModelResponse:
            await asyncio.Event().wait()
            raise AssertionError("never")

    runner = Runner(Agent("a", Anonymous()), model_deadline=DEADLINE)
    asyncio.run(runner.arun("hi", callbacks=[late]))
    [error] = late.errors
    assert isinstance(error, ModelTimeout)
    assert error.model.endswith("Anonymous")
