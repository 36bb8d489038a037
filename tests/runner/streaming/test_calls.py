"""``Runner.stream`` with concurrent calls of one sub-agent: each call's stream is its own.

One model response calls the same sub-agent twice; in a streamed run the two calls
run concurrently and their pieces interleave. Each piece names the call it belongs to
(``call_id``), and an ``AttemptDiscardedEvent`` is told only for an attempt whose text
really is not the answer, naming that attempt's call.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal, TypeAlias

import pytest

from hooks import (
    BeforeResult,
    Cont,
    Failure,
    ModelContext,
    Outcome,
    PausableResult,
    Pause,
    Result,
    Retry,
    Success,
    ToolContext,
    ToolResult,
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
    ScriptedModel,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResultEvent,
)
from tests.helpers.runs import add, calling

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)

Form: TypeAlias = Literal["astream", "stream"]


def _asked(request: ModelRequest) -> str:
    """The request the sub-agent was given (its last user message)."""
    return next(m.content for m in reversed(request.messages) if m.role == "user")


class Echo:
    """A sub-agent's model: answers ``"<request> is done."`` in 3-character pieces.

    A request in ``failing`` breaks off after two pieces the first time it is asked.
    """

    def __init__(self, failing: Sequence[str] = ()) -> None:
        self.failing = set(failing)

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The whole answer (a run that does not stream)."""
        return ModelResponse(f"{_asked(request)} is done.")

    def pieces(self, request: ModelRequest) -> Iterator[ModelChunk | Exception]:
        """The answer's pieces, then the response (or, once, an error after two pieces)."""
        asked = _asked(request)
        text = f"{asked} is done."
        if asked in self.failing:
            self.failing.discard(asked)
            yield TextDelta(text[:3])
            yield TextDelta(text[3:6])
            yield ConnectionError("the stream broke off")
            return
        for start in range(0, len(text), 3):
            yield TextDelta(text[start : start + 3])
        yield ModelResponse(text)


class AsyncEcho(Echo):
    """``Echo`` streamed with ``astream``, each piece after a turn of the event loop."""

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """The pieces, one per turn of the event loop."""
        for piece in self.pieces(request):
            await asyncio.sleep(0)
            if isinstance(piece, Exception):
                raise piece
            yield piece


class SyncEcho(Echo):
    """``Echo`` streamed with a sync ``stream`` (each step read on the runner's pool)."""

    def stream(self, request: ModelRequest, /) -> Iterator[ModelChunk]:
        """The pieces, one by one."""
        for piece in self.pieces(request):
            if isinstance(piece, Exception):
                raise piece
            yield piece


def echo(form: Form, failing: Sequence[str] = ()) -> Echo:
    """The sub-agent's model in the given streaming form."""
    return AsyncEcho(failing) if form == "astream" else SyncEcho(failing)


@pytest.fixture(params=["astream", "stream"])
def form(request: pytest.FixtureRequest) -> Form:
    """The sub-agent's model streams with ``astream`` and with a sync ``stream``."""
    value: Form = request.param
    return value


def twice(*, text: str = "") -> ModelResponse:
    """The root's answer calling the ``helper`` sub-agent twice in one response."""
    return calling(
        ToolCall("c1", "helper", {"request": "first"}),
        ToolCall("c2", "helper", {"request": "second"}),
        text=text,
    )


def drain(runner: Runner, message: str, **options: Any) -> list[StreamEvent]:
    """Every event of one streamed run."""

    async def main() -> list[StreamEvent]:
        return [event async for event in runner.stream(message, **options)]

    return asyncio.run(main())


def by_call(events: Sequence[StreamEvent]) -> dict[str | None, str]:
    """The text the deltas carried, joined per call they say they belong to."""
    texts: dict[str | None, str] = {}
    for event in events:
        if isinstance(event, TextDelta):
            texts[event.call_id] = texts.get(event.call_id, "") + event.text
    return texts


def discarded(events: Sequence[StreamEvent]) -> list[tuple[str | None, int, str]]:
    """Each discard told: the call it names, its attempt and why."""
    return [
        (event.call_id, event.attempt, event.reason)
        for event in events
        if isinstance(event, AttemptDiscardedEvent)
    ]


def interleaved(events: Sequence[StreamEvent]) -> bool:
    """Whether the two calls' pieces really alternated (the runs were concurrent)."""
    order = [e.call_id for e in events if isinstance(e, TextDelta) and e.call_id is not None]
    switches = sum(a != b for a, b in itertools.pairwise(order))
    return switches >= 2  # c1, c2, c1: neither call's pieces came all in one go


def test_two_concurrent_calls_of_one_sub_agent_stream_apart_and_discard_nothing(
    form: Form,
) -> None:
    """No answer was replaced, so no discard is told; each call's pieces join to its answer."""
    helper = Agent("helper", echo(form))
    root = Agent("root", ScriptedModel([twice(), "Both are done."]), sub_agents=[helper])
    with Runner(root) as runner:
        events = drain(runner, "go")
    result = events[-1]
    assert isinstance(result, RunFinishedEvent)
    assert result.result.output == "Both are done."
    assert [e for e in events if isinstance(e, AttemptDiscardedEvent)] == []
    assert by_call(events) == {
        "c1": "first is done.",
        "c2": "second is done.",
        None: "Both are done.",
    }
    if form == "astream":  # each piece waits on the loop: the two calls' pieces alternate
        assert interleaved(events)
    helpers = {(e.agent, e.branch) for e in events if isinstance(e, TextDelta) and e.call_id}
    assert helpers == {("helper", "root/helper")}


def test_a_failed_attempt_in_one_concurrent_call_is_discarded_for_that_call_only(
    form: Form,
) -> None:
    """The second call's first stream breaks off and is retried: one discard, naming ``c2``."""
    helper = Agent("helper", echo(form, failing=["second"]))
    root = Agent("root", ScriptedModel([twice(), "Both are done."]), sub_agents=[helper])
    with Runner(root, retry=NO_WAIT) as runner:
        events = drain(runner, "go", callbacks=[RetryAll()])
    assert discarded(events) == [("c2", 1, "failed")]
    shown = [e for e in events if isinstance(e, TextDelta | AttemptDiscardedEvent)]
    kept = _kept(shown)
    assert kept == {"c1": "first is done.", "c2": "second is done.", None: "Both are done."}


class RetryAll:
    """Retries every failed model call."""

    def on_model_error(self, failure: Failure[Exception], ctx: ModelContext, /) -> Any:
        """Try the same request again."""
        return Retry(ctx)


class ReplaceSecond:
    """Replaces the sub-agent's answer to ``"second"``; keeps every other one."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """A new answer for the request ``"second"``."""
        if type(outcome) is Success and _asked(ctx.request) == "second":
            return Success(ModelResponse("second was replaced."))
        return outcome


def test_an_answer_replaced_in_one_concurrent_call_is_discarded_for_that_call_only(
    form: Form,
) -> None:
    """Unheld, ``after_model`` replaces the answer of ``c2`` alone: one discard, naming ``c2``."""
    helper = Agent("helper", echo(form), callbacks=[ReplaceSecond()])
    root = Agent("root", ScriptedModel([twice(), "Both are done."]), sub_agents=[helper])
    with Runner(root) as runner:
        events = drain(runner, "go", hold=None)
    assert discarded(events) == [("c2", 1, "replaced")]
    end = events[-1]
    assert isinstance(end, RunFinishedEvent)
    answers = {
        e.call.id: e.result.content for e in end.result.events if isinstance(e, ToolResultEvent)
    }
    assert answers == {"c1": "first is done.", "c2": "second was replaced."}


def test_held_an_answer_replaced_in_one_concurrent_call_shows_only_its_replacement(
    form: Form,
) -> None:
    """Held, ``after_model`` replacing ``c2``'s answer: no discard, ``c2`` shows only the
    replacement and ``c1`` its own text, each under its call."""
    helper = Agent("helper", echo(form), callbacks=[ReplaceSecond()])
    root = Agent("root", ScriptedModel([twice(), "Both are done."]), sub_agents=[helper])
    with Runner(root) as runner:
        events = drain(runner, "go", hold="output")
    assert discarded(events) == []
    assert by_call(events) == {
        "c1": "first is done.",
        "c2": "second was replaced.",
        None: "Both are done.",
    }


def _kept(shown: Sequence[TextDelta | AttemptDiscardedEvent]) -> dict[str | None, str]:
    """What a UI keeps: each call's text, dropping a call's text when a discard names it."""
    kept: dict[str | None, str] = {}
    for event in shown:
        if isinstance(event, AttemptDiscardedEvent):
            kept[event.call_id] = ""
        else:
            kept[event.call_id] = kept.get(event.call_id, "") + event.text
    return kept


def test_the_root_agents_pieces_and_discards_name_no_call() -> None:
    """The root agent answers no call: its deltas and discards have ``call_id`` None."""
    model = AsyncEcho(failing=["go"])
    root = Agent("root", model)
    with Runner(root, retry=NO_WAIT) as runner:
        events = drain(runner, "go", callbacks=[RetryAll()])
    assert discarded(events) == [(None, 1, "failed")]
    assert {e.call_id for e in events if isinstance(e, TextDelta | ToolCallDelta)} == {None}


def test_a_sub_agents_tool_call_pieces_name_the_call_it_answers() -> None:
    """The sub-agent's ``ToolCallDelta`` carries its own call's ``id`` and, in
    ``call_id``, the root's call it answers; the root's own pieces name none."""
    helper = Agent(
        "helper",
        ScriptedModel([calling(ToolCall("h1", "add", {"a": 1, "b": 2})), "3"]),
        tools=[add],
    )
    root = Agent(
        "root",
        ScriptedModel([calling(ToolCall("c1", "helper", {"request": "add"})), "It is 3."]),
        sub_agents=[helper],
    )
    with Runner(root) as runner:
        events = drain(runner, "go")
    starts = [
        (e.agent, e.id, e.call_id)
        for e in events
        if isinstance(e, ToolCallDelta) and e.id is not None
    ]
    assert starts == [("root", "c1", None), ("helper", "h1", "c1")]
    assert by_call(events) == {"c1": "3", None: "It is 3."}


class Seen:
    """A stream hook noting each delta's call and text, passing it on unchanged."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, str]] = []

    def on_delta(self, ctx: DeltaContext, /) -> BeforeResult[DeltaContext, ModelResponse]:
        """Note the delta; pass it."""
        if isinstance(ctx.delta, TextDelta):
            self.seen.append((ctx.delta.call_id, ctx.delta.text))
        return Cont(ctx)


def test_a_stream_hook_sees_which_call_each_delta_belongs_to(form: Form) -> None:
    """Deltas through an ``on_delta`` hook carry their call too, and nothing is discarded."""
    hook = Seen()
    helper = Agent("helper", echo(form), callbacks=[hook])
    root = Agent("root", ScriptedModel([twice(), "Both are done."]), sub_agents=[helper])
    with Runner(root) as runner:
        events = drain(runner, "go")
    assert discarded(events) == []
    joined: dict[str | None, str] = {}
    for call_id, text in hook.seen:
        joined[call_id] = joined.get(call_id, "") + text
    assert joined == {"c1": "first is done.", "c2": "second is done."}
    assert by_call(events) == {**joined, None: "Both are done."}


class SlowGuard:
    """An async ``before_tool`` guard that takes turns of the event loop to decide, logging
    ``guarded <tag>`` as it returns; it pauses the calls tagged ``"stop"``."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Let the call through (or pause it) after three turns of the loop."""
        for _ in range(3):
            await asyncio.sleep(0)
        tag = str(ctx.call.args["tag"])
        self.log.append(f"guarded {tag}")
        return Pause("stop?") if tag == "stop" else Cont(ctx)


@pytest.mark.parametrize("hold", ["output", None])
def test_a_streamed_tool_call_starts_only_once_the_hooks_guarding_it_returned(
    hold: str | None,
) -> None:
    """Concurrent calls of a streamed run: each tool starts after its ``before_tool``
    returned, and a call the guard paused never starts."""
    log: list[str] = []

    async def mark(tag: str) -> str:
        """Log that the call ran."""
        log.append(f"ran {tag}")
        return tag

    calls = tuple(ToolCall(f"c{i}", "mark", {"tag": tag}) for i, tag in enumerate("ab"))
    both = ModelResponse("", tool_calls=(*calls, ToolCall("c9", "mark", {"tag": "stop"})))
    agent = Agent("a", ScriptedModel([both, "done"]), tools=[mark], callbacks=[SlowGuard(log)])
    with Runner(agent) as runner:
        events = drain(runner, "go", hold=hold)
    end = events[-1]
    assert isinstance(end, RunFinishedEvent)
    assert end.result.status == "paused"
    for tag in "ab":
        assert log.index(f"guarded {tag}") < log.index(f"ran {tag}")
    assert "ran stop" not in log
