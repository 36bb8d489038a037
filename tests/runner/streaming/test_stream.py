"""``Runner.stream``: the run's events as they happen, deltas included, hooks intact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest

from hooks import (
    BeforeResult,
    Cont,
    Failure,
    Halt,
    ModelContext,
    Outcome,
    Result,
    Retry,
    Success,
)
from runner import (
    Agent,
    AttemptDiscardedEvent,
    DeltaContext,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    RunFinishedEvent,
    Runner,
    RunStartedEvent,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from runner._streaming.channel import Channel
from tests.helpers.runs import add, calling

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)


class Streaming:
    """An async streaming model: each answer's text in 3-character pieces, then the response.

    An exception in the script is raised after ``fail_after`` deltas of the text before it.
    """

    def __init__(self, answers: Sequence[ModelResponse | Exception]) -> None:
        self.answers = list(answers)
        self.pulled = 0  # deltas the consumer side has taken from this model
        self.calls = 0

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next answer, whole (a run that does not stream)."""
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """Yield the next answer in pieces."""
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            for piece in ("par", "tial"):
                self.pulled += 1
                yield TextDelta(piece)
                await asyncio.sleep(0)
            raise answer
        for start in range(0, len(answer.text), 3):
            self.pulled += 1
            yield TextDelta(answer.text[start : start + 3])
            await asyncio.sleep(0)
        for index, call in enumerate(answer.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, '{"a": 1, "b": 2}')
        yield answer


def drain(runner: Runner, message: str, **options: Any) -> list[StreamEvent]:
    """Every event of one streamed run."""

    async def main() -> list[StreamEvent]:
        return [event async for event in runner.stream(message, **options)]

    return asyncio.run(main())


def deltas(events: Sequence[StreamEvent]) -> str:
    """The text the deltas carried, joined."""
    return "".join(event.text for event in events if isinstance(event, TextDelta))


def recorded(events: Sequence[StreamEvent]) -> list[StreamEvent]:
    """The events a RunResult records: the stream without deltas, start and finish."""
    skipped = (TextDelta, ToolCallDelta, RunStartedEvent, RunFinishedEvent)
    return [event for event in events if not isinstance(event, skipped)]


def finished(events: Sequence[StreamEvent]) -> RunFinishedEvent:
    """The last event, which must be the finish."""
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    return last


def test_deltas_join_to_the_output_and_the_stream_agrees_with_the_record() -> None:
    """Start first, finish last, text in pieces, and the rest is exactly result.events."""
    model = Streaming([ModelResponse("Hello there, world.")])
    with Runner(Agent("assistant", model)) as runner:
        events = drain(runner, "hi")
    assert isinstance(events[0], RunStartedEvent)
    result = finished(events).result
    assert deltas(events) == result.output == "Hello there, world."
    assert recorded(events) == list(result.events)
    assert {(e.agent, e.branch) for e in events if isinstance(e, TextDelta)} == {
        ("assistant", "assistant")
    }


def test_a_tool_round_trip_streams_in_the_order_things_happen() -> None:
    """Model attempt, its tool-call delta, the response, the tool, then the second answer."""
    first = calling(ToolCall("c1", "add", {"a": 1, "b": 2}))
    model = Streaming([first, ModelResponse("It is 3.")])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        events = drain(runner, "add")
    kinds = [type(event).__name__ for event in events]
    assert kinds == [
        "RunStartedEvent",
        "UserMessageEvent",
        "ModelAttemptEvent",
        "ToolCallDelta",
        "ModelResponseEvent",
        "ToolCallEvent",
        "ToolAttemptEvent",
        "ToolResultEvent",
        "ModelAttemptEvent",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "ModelResponseEvent",
        "RunFinishedEvent",
    ]
    assert finished(events).result.output == "It is 3."


class RetryOnce:
    """Retries a failed model call once; counts after_model calls."""

    def __init__(self) -> None:
        self.after: list[int] = []

    def on_model_error(self, failure: Failure[Exception], ctx: ModelContext, /) -> Any:
        """Retry as it is."""
        return Retry(ctx)

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Count, pass on."""
        self.after.append(ctx.attempt)
        return outcome


def test_a_retry_after_partial_output_says_to_discard_it_before_new_text() -> None:
    """Unheld, the failed attempt's text is announced discarded; after_model sees one whole
    answer."""
    hooks = RetryOnce()
    model = Streaming([ConnectionError("cut"), ModelResponse("Fine.")])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        events = drain(runner, "hi", callbacks=[hooks], hold=None)
    kinds = [type(event).__name__ for event in events]
    discard = kinds.index("AttemptDiscardedEvent")
    assert kinds[discard - 3 : discard + 3] == [
        "TextDelta",
        "TextDelta",
        "ErrorEvent",
        "AttemptDiscardedEvent",
        "RetryEvent",
        "ModelAttemptEvent",
    ]
    [discarded] = [e for e in events if isinstance(e, AttemptDiscardedEvent)]
    assert (discarded.attempt, discarded.reason) == (1, "failed")
    assert deltas(events[discard:]) == "Fine."
    assert hooks.after == [2]
    assert recorded(events) == list(finished(events).result.events)


class Replace:
    """An after_model hook that replaces every answer."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Answer something else."""
        return Success(ModelResponse("Replaced."))


def test_an_after_model_replacement_discards_the_streamed_text() -> None:
    """Unheld, the text already shown is announced discarded; the answer is the replacement."""
    model = Streaming([ModelResponse("Original.")])
    with Runner(Agent("assistant", model)) as runner:
        events = drain(runner, "hi", callbacks=[Replace()], hold="none")
    [discarded] = [e for e in events if isinstance(e, AttemptDiscardedEvent)]
    assert discarded.reason == "replaced"
    assert finished(events).result.output == "Replaced."


class Plain:
    """A model that cannot stream."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer whole."""
        return ModelResponse("whole answer")


def test_a_model_without_a_stream_is_streamed_as_one_delta() -> None:
    """A plain model's answer arrives whole, as one delta."""
    with Runner(Agent("assistant", Plain())) as runner:
        events = drain(runner, "hi")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["whole answer"]


class SyncStreaming:
    """A sync streaming model, read on the thread pool."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Unused by streamed runs."""
        raise AssertionError("streamed runs call stream")

    def stream(self, request: ModelRequest, /) -> Iterator[ModelChunk]:
        """Two pieces, then the response."""
        yield TextDelta("syn")
        yield TextDelta("c.")
        yield ModelResponse("sync.")


def test_a_sync_streaming_model_streams_too() -> None:
    """``stream`` is read one piece at a time off the event loop."""
    with Runner(Agent("assistant", SyncStreaming())) as runner:
        events = drain(runner, "hi")
    assert deltas(events) == finished(events).result.output == "sync."


def test_a_consumer_that_stops_cancels_the_run_and_saves_nothing() -> None:
    """Breaking out mid-stream ends the run; the session stays as it was and can go on."""
    model = Streaming([ModelResponse("A long answer that will not be read."), ModelResponse("Ok.")])

    async def main(runner: Runner) -> None:
        stream = runner.stream("hi", session_id="s")
        async for event in stream:
            if isinstance(event, TextDelta):
                break
        await stream.aclose()
        result = await runner.arun("again", session_id="s")
        assert result.output == "Ok."

    with Runner(Agent("assistant", model)) as runner:
        asyncio.run(main(runner))
        session = runner.sessions.load("user", "s")
    assert [m.content for m in session.messages] == ["again", "Ok."]


def test_a_slow_consumer_slows_the_model() -> None:
    """The run goes on only as the consumer reads: a consumer that does not ask for the
    next item stops the model, which never runs more than the channel's limit ahead."""
    model = Streaming([ModelResponse("x" * 3 * 500)])

    async def main(runner: Runner) -> tuple[int, int]:
        stream = runner.stream("hi")
        await anext(stream)  # started
        await anext(stream)  # the user's message
        before = model.pulled
        for _ in range(50):
            await asyncio.sleep(0)
        idle = model.pulled - before  # nobody asked for more: the model was not read
        while not isinstance(await anext(stream), TextDelta):
            pass
        for _ in range(50):
            await asyncio.sleep(0)
        ahead = model.pulled
        await stream.aclose()
        return idle, ahead

    with Runner(Agent("assistant", model)) as runner:
        idle, ahead = asyncio.run(main(runner))
    assert idle == 0
    assert 0 < ahead <= 64 + 1


def test_an_unrecovered_error_is_raised_after_the_events_that_led_to_it() -> None:
    """The consumer sees the attempt and its error, then the model's error is raised."""
    model = Streaming([ConnectionError("down")])
    seen: list[StreamEvent] = []

    async def main(runner: Runner) -> None:
        async for event in runner.stream("hi"):
            seen.append(event)

    once = RetryPolicy(max_attempts=1)
    with Runner(Agent("assistant", model), retry=once) as runner, pytest.raises(ConnectionError):
        asyncio.run(main(runner))
    kinds = [type(event).__name__ for event in seen]
    assert kinds[-2:] == ["ErrorEvent", "AttemptDiscardedEvent"]


class Censor:
    """A stream hook: drops deltas holding 'b', upper-cases the rest."""

    def on_delta(self, ctx: DeltaContext, /) -> BeforeResult[DeltaContext, ModelResponse]:
        """Change or drop the text delta."""
        delta = ctx.delta
        if not isinstance(delta, TextDelta):
            return Cont(ctx)
        if "b" in delta.text:
            return Cont(replace(ctx, delta=None))
        return Cont(replace(ctx, delta=replace(delta, text=delta.text.upper())))


def test_a_stream_hook_changes_and_drops_what_the_consumer_sees_not_the_answer() -> None:
    """The consumer gets the changed pieces; the run's answer is still the model's."""
    model = Streaming([ModelResponse("aaabbbccc")])
    with Runner(Agent("assistant", model)) as runner:
        events = drain(runner, "hi", callbacks=[Censor()])
    assert deltas(events) == "AAACCC"
    assert finished(events).result.output == "aaabbbccc"
    assert not [e for e in events if isinstance(e, AttemptDiscardedEvent)]


class Cutoff:
    """A stream hook that halts the model call at its second delta."""

    def __init__(self) -> None:
        self.seen = 0

    def on_delta(self, ctx: DeltaContext, /) -> BeforeResult[DeltaContext, ModelResponse]:
        """Let one delta through, then stop the call with a short answer."""
        self.seen += 1
        if self.seen == 2:
            return Halt(ModelResponse("Cut short."))
        return Cont(ctx)


class Closing(Streaming):
    """A streaming model that notes when its stream was closed early."""

    def __init__(self, answers: Sequence[ModelResponse | Exception]) -> None:
        super().__init__(answers)
        self.closed = False

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """Stream as ``Streaming`` does; note a close before the end."""
        finished_stream = False
        try:
            async for chunk in super().astream(request):
                yield chunk
            finished_stream = True
        finally:
            self.closed = not finished_stream


def test_a_stream_hook_halting_cancels_the_model_call() -> None:
    """The model's stream is closed mid-way; the hook's response is the answer, the text
    already shown is discarded."""
    model = Closing([ModelResponse("a long answer in many pieces")])
    with Runner(Agent("assistant", model)) as runner:
        events = drain(runner, "hi", callbacks=[Cutoff()])
    assert model.closed
    assert model.pulled == 2
    assert finished(events).result.output == "Cut short."
    [discarded] = [e for e in events if isinstance(e, AttemptDiscardedEvent)]
    assert discarded.reason == "replaced"


def test_cancelling_the_consumer_cancels_the_model_call_and_leaves_no_task() -> None:
    """A consumer task cancelled while the model waits: the model sees the cancellation,
    the session keeps nothing, and no task of the run is left behind."""
    cancelled: list[str] = []

    class Slow:
        def generate(self, request: ModelRequest, /) -> ModelResponse:
            return ModelResponse("unused")

        async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
            yield TextDelta("wait")
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.append("model")
                raise
            yield ModelResponse("never")

    async def main(runner: Runner) -> set[asyncio.Task[Any]]:
        async def consume() -> None:
            async for _ in runner.stream("hi", session_id="s"):
                pass

        task = asyncio.ensure_future(consume())
        for _ in range(20):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return asyncio.all_tasks() - {asyncio.current_task()}

    with Runner(Agent("assistant", Slow())) as runner:
        left = asyncio.run(main(runner))
        assert runner.sessions.load("user", "s").messages == ()
    assert cancelled == ["model"]
    assert left == set()


def test_a_channel_lets_sixty_four_items_wait_before_a_delta_has_no_room() -> None:
    """By default 64 items may wait untaken: with 63 there is room, with 64 none; events are
    pushed even then; taking them all makes room again."""
    channel = Channel()
    assert channel.limit == 64
    for index in range(63):
        channel.push(TextDelta(str(index)))
    assert channel.has_room()
    channel.push(TextDelta("63"))
    assert not channel.has_room()
    channel.push(TextDelta("an event goes in anyway"))
    assert len(channel.take()) == 65
    assert channel.has_room()
    assert channel.take() == []


def test_a_delta_put_into_a_full_channel_waits_until_the_items_are_taken() -> None:
    """``put`` waits while ``limit`` items wait untaken, then hands on that very delta after
    them."""

    async def main() -> None:
        channel = Channel(limit=2)
        channel.push(TextDelta("a"))
        channel.push(TextDelta("b"))
        put = asyncio.ensure_future(channel.put(TextDelta("c")))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not put.done()
        assert channel.take() == [TextDelta("a"), TextDelta("b")]
        await put
        assert channel.take() == [TextDelta("c")]

    asyncio.run(main())


class Eager:
    """A streaming model whose pieces come from memory: it never waits between them."""

    def __init__(self, pieces: Sequence[str]) -> None:
        self.pieces = pieces
        self.pulled = 0

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Unused by streamed runs."""
        raise AssertionError("streamed runs call astream")

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """Every piece at once, then the response."""
        for piece in self.pieces:
            self.pulled += 1
            yield TextDelta(piece)
        yield ModelResponse("".join(self.pieces))


def test_a_model_that_never_waits_stops_when_the_channel_is_full() -> None:
    """Pieces from memory fill the channel to its 64 items in one step, and the model waits
    there for the consumer: when the first delta arrives the model was read exactly that far
    (plus the piece that waits); every piece still arrives, in order."""
    model = Eager([f"{index}," for index in range(300)])

    async def main() -> tuple[int, int, list[StreamEvent]]:
        events: list[StreamEvent] = []
        pulled = -1
        async for event in runner.stream("hi"):
            if isinstance(event, TextDelta) and pulled < 0:
                pulled = model.pulled
            events.append(event)
        first = next(i for i, event in enumerate(events) if isinstance(event, TextDelta))
        return pulled, first - 1, events  # the items that waited with the first deltas

    with Runner(Agent("assistant", model)) as runner:
        pulled, before, events = asyncio.run(main())
    assert before == 2  # the user's message and the model attempt, pushed in the same step
    assert pulled == 64 - before + 1
    assert deltas(events) == finished(events).result.output == "".join(model.pieces)


def test_a_consumer_cancelled_while_the_stream_closes_stays_cancelled_and_frees_the_session() -> (
    None
):
    """Cancelled again while ``aclose()`` waits for the cancelled run's cleanup, the consumer
    ends cancelled (the run's cleanup sees it), and the session is free for the next run."""
    log: list[str] = []
    winding = asyncio.Event()

    class SlowToStop:
        def generate(self, request: ModelRequest, /) -> ModelResponse:
            return ModelResponse("Ok.")

        async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
            yield TextDelta("wait")
            try:
                await asyncio.sleep(60)
            finally:
                winding.set()
                try:
                    for _ in range(1000):
                        await asyncio.sleep(0)
                except asyncio.CancelledError:
                    log.append("cleanup cancelled")
                    raise
                log.append("cleanup ran out")  # only if the second cancellation was lost
            yield ModelResponse("never")

    async def main(runner: Runner) -> str:
        async def consumer() -> None:
            stream = runner.stream("hi", session_id="s")
            async for event in stream:
                if isinstance(event, TextDelta):
                    break
            await stream.aclose()
            log.append("went on")  # only if the consumer's cancellation was swallowed

        task = asyncio.create_task(consumer())
        await winding.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return (await runner.arun("again", session_id="s")).output

    with Runner(Agent("assistant", SlowToStop())) as runner:
        assert asyncio.run(main(runner)) == "Ok."
        session = runner.sessions.load("user", "s")
    assert log == ["cleanup cancelled"]
    assert [m.content for m in session.messages] == ["again", "Ok."]


class Agenerates:
    """A sync model that also answers with ``async def agenerate``; no stream of its own."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Unused: a streamed run awaits agenerate."""
        raise AssertionError("a streamed run awaits agenerate")

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer whole, after a wait."""
        await asyncio.sleep(0)
        return ModelResponse("awaited answer")


def test_a_model_with_agenerate_is_awaited_and_streamed_as_one_delta() -> None:
    """Its answer arrives whole, as one delta, awaited on the loop."""
    with Runner(Agent("assistant", Agenerates())) as runner:
        events = drain(runner, "hi")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["awaited answer"]
    assert finished(events).result.output == "awaited answer"


class Yields:
    """A streaming model yielding what is given, in order."""

    def __init__(self, *items: object) -> None:
        self.items = items

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Unused by streamed runs."""
        raise AssertionError("streamed runs call astream")

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[Any]:
        """Yield the items."""
        for item in self.items:
            yield item


@pytest.mark.parametrize(
    ("items", "words"),
    [
        (
            (ModelResponse("one"), TextDelta("more")),
            "a model stream yielded TextDelta after its ModelResponse",
        ),
        (
            (TextDelta("a"), {"text": "b"}),
            "a model stream yields TextDelta, ToolCallDelta, then one ModelResponse; got dict",
        ),
        ((TextDelta("a"),), "a model stream ended without its ModelResponse"),
    ],
)
def test_a_stream_out_of_order_fails_the_attempt_saying_what_came(
    items: tuple[object, ...], words: str
) -> None:
    """What a stream must yield is checked as it comes: the attempt fails with a
    ``TypeError`` the error hooks see; the run fails with it, unrecovered."""
    with (
        Runner(Agent("assistant", Yields(*items))) as runner,
        pytest.raises(TypeError, match=words),
    ):
        drain(runner, "hi")
