"""A held stream of a typed agent: its final answer waits for the output guard.

For an agent with an ``output_type`` whose callbacks define ``after_output`` (or
``on_output_error``), the pieces of a final answer go out once the answer was validated
and ``after_output`` passed its value unchanged; a value a hook gave instead goes out as
one ``TextDelta`` of its JSON; a refused or retried answer's pieces never go out. The
runs log what the model generated, what the output guard saw and what the consumer was
shown, in the order it happened.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hooks import (
    BeforeResult,
    Cont,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    InvalidCallbacks,
    ModelContext,
    Outcome,
    OutputContext,
    Pause,
    Result,
    Retry,
    Success,
    audit,
    guard,
    matched,
    shadow,
)
from runner import (
    Agent,
    Approve,
    AttemptDiscardedEvent,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    OpenAIResponsesModel,
    OutputValidationError,
    RetryPolicy,
    RunFinishedEvent,
    Runner,
    ScriptedModel,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolContext,
)
from tests.helpers import openai_server as chat
from tests.helpers import responses_server as responses
from tests.runner.streaming.test_hold import AsyncPieces, Guard, Log, shown

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)


@dataclasses.dataclass
class Point:
    x: int
    y: int


def answer(x: int, y: int) -> ModelResponse:
    """A native answer: the point as JSON text."""
    return ModelResponse(json.dumps({"x": x, "y": y}))


class NativePieces(AsyncPieces):
    """``AsyncPieces`` answering natively in the shape asked (``native_output``)."""

    native_output = True


class ToolPieces(AsyncPieces):
    """``AsyncPieces`` whose tool-call pieces carry each call's own arguments."""

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """The next answer: its text in pieces, each call as one piece, then the answer."""
        reply = self._next()
        assert isinstance(reply, ModelResponse)
        for start in range(0, len(reply.text), 3):
            self.log.append(("piece", reply.text[start : start + 3]))
            yield TextDelta(reply.text[start : start + 3])
        for index, call in enumerate(reply.tool_calls):
            self.log.append(("piece", call.name))
            yield ToolCallDelta(index, call.id, call.name, json.dumps(call.args))
            await asyncio.sleep(0)
        yield reply


class OutputGuard:
    """``after_output``: logs ``("after_output", value)``; replaces a point at ``x == 13``
    with ``Point(0, 0)`` and refuses one at ``x == 66``."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def after_output(self, outcome: Outcome[Any], ctx: OutputContext, /) -> Result[Any, Exception]:
        """Pass the value on, replace it, or refuse it."""
        if type(outcome) is not Success:
            return outcome
        point = outcome.unwrap()
        self.log.append(("after_output", json.dumps(dataclasses.asdict(point))))
        if point.x == 13:
            return Success(Point(0, 0))
        if point.x == 66:
            return Failure(ValueError("refused"))
        return outcome


class FallBack:
    """``on_output_error``: logs ``("output_error", text)`` and falls back to ``Point(7, 7)``."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def on_output_error(
        self, failure: Failure[Exception], ctx: OutputContext, /
    ) -> ErrorResult[OutputContext, Any]:
        """The fallback point."""
        self.log.append(("output_error", ctx.response.text))
        return Fallback(Point(7, 7))


class Retrying:
    """``on_output_error``: logs ``("output_error", text)`` and asks again."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def on_output_error(
        self, failure: Failure[Exception], ctx: OutputContext, /
    ) -> ErrorResult[OutputContext, Any]:
        """Ask the model again."""
        self.log.append(("output_error", ctx.response.text))
        return Retry(ctx)


def consume(runner: Runner[Any, Any], log: Log, **options: Any) -> list[StreamEvent[Any]]:
    """Every event of one streamed run, each text delta logged as ``("shown", text)``,
    each tool-call delta as ``("shown call", name)``."""

    async def main() -> list[StreamEvent[Any]]:
        events: list[StreamEvent[Any]] = []
        async for event in runner.stream("where?", **options):
            if isinstance(event, TextDelta):
                log.append(("shown", event.text))
            elif isinstance(event, ToolCallDelta):
                log.append(("shown call", event.name or ""))
            events.append(event)
        return events

    return asyncio.run(main())


def finished(events: Sequence[StreamEvent[Any]]) -> Any:
    """The run's typed output, from its last event."""
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    return last.result.output


def shown_after(log: Log, entry: tuple[str, str]) -> bool:
    """Whether every piece shown in ``log`` came after ``entry``."""
    at = log.index(entry)
    return all(index > at for index, (kind, _) in enumerate(log) if kind == "shown")


@pytest.mark.parametrize("hold", ["auto", "output", 4])
def test_a_passed_answer_s_pieces_go_out_after_after_output(hold: object) -> None:
    """Every hold mode holds a typed agent with ``after_output``: its pieces go out whole,
    the same as unheld, once ``after_output`` passed the value."""
    log: Log = []
    unheld_model = NativePieces([], [answer(1, 2)])
    agent = Agent("geo", unheld_model, output_type=Point, callbacks=[OutputGuard([])])
    unheld = consume(Runner(agent), [], hold=None)
    agent = Agent(
        "geo", NativePieces(log, [answer(1, 2)]), output_type=Point, callbacks=[OutputGuard(log)]
    )
    events = consume(Runner(agent), log, hold=hold)
    assert shown(events) == shown(unheld)
    assert "".join(shown(events)) == answer(1, 2).text
    assert finished(events) == Point(1, 2)
    assert shown_after(log, ("after_output", answer(1, 2).text))
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]


def test_unheld_pieces_go_out_before_the_output_guard() -> None:
    """``hold=None`` streams a typed agent's answer as generated, before ``after_output``."""
    log: Log = []
    agent = Agent(
        "geo", NativePieces(log, [answer(1, 2)]), output_type=Point, callbacks=[OutputGuard(log)]
    )
    consume(Runner(agent), log, hold=None)
    assert log.index(("shown", '{"x')) < log.index(("after_output", answer(1, 2).text))


def test_a_value_after_output_replaced_goes_out_as_its_json_and_nothing_else() -> None:
    """``after_output``'s replacement is shown as one piece of its JSON; no model piece."""
    log: Log = []
    agent = Agent(
        "geo", NativePieces(log, [answer(13, 2)]), output_type=Point, callbacks=[OutputGuard(log)]
    )
    events = consume(Runner(agent), log, hold="output")
    assert shown(events) == ['{"x":0,"y":0}']
    assert finished(events) == Point(0, 0)
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]


def test_a_value_after_output_refused_shows_nothing() -> None:
    """A ``Failure`` from ``after_output``: no piece goes out, the run raises it."""
    log: Log = []
    agent = Agent(
        "geo", NativePieces(log, [answer(66, 2)]), output_type=Point, callbacks=[OutputGuard(log)]
    )
    with pytest.raises(ValueError, match="refused"):
        consume(Runner(agent), log, hold="output")
    assert [entry for entry in log if entry[0] == "shown"] == []


def test_a_fallback_shows_its_json_and_none_of_the_answer_that_did_not_fit() -> None:
    """``on_output_error``'s ``Fallback``: its JSON goes out, never the invalid answer's pieces."""
    log: Log = []
    bad = ModelResponse('{"x": "no"}')
    agent = Agent("geo", NativePieces(log, [bad]), output_type=Point, callbacks=[FallBack(log)])
    events = consume(Runner(agent), log, hold="output")
    assert shown(events) == ['{"x":7,"y":7}']
    assert finished(events) == Point(7, 7)
    assert shown_after(log, ("output_error", bad.text))


def test_a_retried_answer_s_pieces_are_dropped_unshown() -> None:
    """An answer ``on_output_error`` retried never shows; the next one, passed, shows whole."""
    log: Log = []
    bad = ModelResponse('{"x": "no"}')
    model = NativePieces(log, [bad, answer(3, 4)])
    guards = [Retrying(log), OutputGuard(log)]
    agent = Agent("geo", model, output_type=Point, callbacks=guards)
    events = consume(Runner(agent, retry=NO_WAIT), log, hold="output")
    assert "".join(shown(events)) == answer(3, 4).text
    assert finished(events) == Point(3, 4)
    assert shown_after(log, ("after_output", answer(3, 4).text))
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]


def test_auto_holds_by_on_output_error_only_with_a_model_guard_too() -> None:
    """``"auto"`` holds on ``after_output`` (typed agents only), not on ``on_output_error``."""
    log: Log = []
    agent = Agent(
        "geo", NativePieces(log, [answer(1, 2)]), output_type=Point, callbacks=[FallBack(log)]
    )
    consume(Runner(agent), log)
    assert log.index(("shown", '{"x')) < log.index(("piece", "}"))


@pytest.mark.parametrize(
    "placed",
    [
        lambda cb: cb,
        guard,
        lambda cb: matched(cb, agents=["geo"]),
    ],
    ids=["plain", "guard", "matched"],
)
def test_auto_holds_on_a_placed_after_output(placed: Any) -> None:
    """``"auto"`` sees ``after_output`` through ``guard`` and ``matched``."""
    log: Log = []
    model = NativePieces(log, [answer(1, 2)])
    agent = Agent("geo", model, output_type=Point, callbacks=[placed(OutputGuard(log))])
    consume(Runner(agent), log)
    assert shown_after(log, ("after_output", answer(1, 2).text))


def test_auto_does_not_hold_for_a_shadow_or_another_agent_s_guard() -> None:
    """A shadow's ``after_output`` is never acted on, another agent's never runs here:
    neither holds the pieces."""
    for placed in (
        shadow(OutputGuard([])),
        matched(OutputGuard([]), agents=["other"], allow_unmatched=True),
    ):
        log: Log = []
        model = NativePieces(log, [answer(1, 2)])
        agent = Agent("geo", model, output_type=Point, callbacks=[placed])
        consume(Runner(agent), log)
        assert log.index(("shown", '{"x')) < log.index(("piece", "}"))


def test_an_audit_callback_cannot_bring_an_after_output_to_hold_on() -> None:
    """The audit tier observes only: a callback there with ``after_output`` is refused
    when the runner is made, so it never decides how a stream holds."""
    placed = audit(OutputGuard([]))  # type: ignore[call-overload]  # the checkers refuse it too
    agent = Agent("geo", NativePieces([], []), output_type=Point, callbacks=[placed])
    with pytest.raises(InvalidCallbacks, match="audit callback only observes"):
        Runner(agent)


def test_an_untyped_agent_s_after_output_does_not_hold() -> None:
    """``after_output`` never runs for an agent without ``output_type``: ``"auto"`` streams."""
    log: Log = []
    model = AsyncPieces(log, [ModelResponse("plain words")])
    consume(Runner(Agent("a", model, callbacks=[OutputGuard(log)])), log)
    assert log.index(("shown", "pla")) < log.index(("piece", "ds"))


def test_a_final_result_call_waits_for_the_output_guard() -> None:
    """Through the final-result tool: the call's pieces go out after ``after_output``
    passed; a tool turn before it goes out as ``after_model`` passed it."""
    log: Log = []
    lookup = ModelResponse("look", tool_calls=(ToolCall("c1", "find", {"q": "a"}),))
    final = ModelResponse(tool_calls=(ToolCall("f1", "final_result", {"x": 5, "y": 6}),))

    def find(q: str) -> str:
        """Find ``q``."""
        log.append(("tool", q))
        return "found"

    agent = Agent(
        "geo",
        ToolPieces(log, [lookup, final]),
        tools=[find],
        output_type=Point,
        callbacks=[OutputGuard(log), Guard(log)],
    )
    events = consume(Runner(agent), log)
    assert finished(events) == Point(5, 6)
    assert log.index(("after", "look")) < log.index(("shown", "loo"))
    assert log.index(("shown call", "find")) < log.index(("piece", "final_result"))
    assert shown_after_of(log, ("after_output", '{"x": 5, "y": 6}'), ("shown call", "final_result"))


def shown_after_of(log: Log, entry: tuple[str, str], shown_entry: tuple[str, str]) -> bool:
    """Whether ``shown_entry`` is in ``log`` and came after ``entry``."""
    return log.index(entry) < log.index(shown_entry)


def test_a_streamed_resume_of_a_typed_agent_holds_its_answer() -> None:
    """``resume_stream`` after an approval: the typed answer waits for ``after_output``,
    which replaces it: only the replacement's JSON is shown."""
    log: Log = []

    class Ask:
        def before_tool(self, ctx: ToolContext, /) -> Any:
            return Cont(ctx) if ctx.decision is not None else Pause("ok?")

    def find(q: str) -> str:
        """Find ``q``."""
        return "found"

    call = ModelResponse(tool_calls=(ToolCall("c1", "find", {"q": "a"}),))
    model = NativePieces(log, [call, answer(13, 9)])
    agent = Agent(
        "geo", model, tools=[find], output_type=Point, callbacks=[Ask(), OutputGuard(log)]
    )
    runner = Runner(agent)

    async def main() -> list[StreamEvent[Any]]:
        paused = await runner.arun("where?")
        decisions = {paused.pending[0].id: Approve()}
        events: list[StreamEvent[Any]] = []
        async for event in runner.resume_stream(paused.state, decisions, hold="output"):
            if isinstance(event, TextDelta):
                log.append(("shown", event.text))
            events.append(event)
        return events

    events = asyncio.run(main())
    assert finished(events) == Point(0, 0)
    assert shown(events) == ['{"x":0,"y":0}']
    assert shown_after(log, ("after_output", answer(13, 9).text))


# An answer: a point (x 13: replaced, x 66: refused by after_output) or JSON that does not fit.
_answers = st.lists(
    st.one_of(
        st.builds(answer, st.sampled_from([1, 13, 66]), st.integers(0, 9)),
        st.just(ModelResponse('{"x": "no"}')),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=40, deadline=None)
@given(answers=_answers, hold=st.sampled_from(["auto", "output", 3]))
def test_no_piece_shown_is_of_an_answer_the_output_guard_refused(
    answers: list[ModelResponse], hold: object
) -> None:
    """Whatever the answers and the hold: what is shown is the answer the run ends with
    (the model's own pieces after ``after_output`` passed it, or the JSON of a value a
    hook gave), never a piece of an answer that did not fit or that was refused."""
    log: Log = []
    spent = [ModelResponse('{"x": "no"}')] * NO_WAIT.max_attempts  # past the script: no fit
    model = NativePieces(log, [*answers, *spent])
    agent = Agent("geo", model, output_type=Point, callbacks=[Retrying(log), OutputGuard(log)])
    try:
        events = consume(Runner(agent, retry=NO_WAIT), log, hold=hold)
    except (ValueError, OutputValidationError):  # refused, or the budget spent
        assert [entry for entry in log if entry[0] == "shown"] == []
        return
    value = finished(events)
    text = "".join(shown(events))
    if value == Point(0, 0):  # after_output replaced a point at x 13
        assert text == '{"x":0,"y":0}'
    else:
        assert json.loads(text) == dataclasses.asdict(value)
        assert shown_after(log, ("after_output", text))
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]


@pytest.fixture
def responses_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[responses.ResponsesServer]:
    chat.forget_environment(monkeypatch)
    with responses.ResponsesServer() as running:
        yield running
    assert running.unexpected == 0


def test_a_native_json_stream_waits_for_the_output_guard(
    responses_server: responses.ResponsesServer,
) -> None:
    """On the Responses API's loopback, its JSON streamed in pieces: an answer that does
    not fit is retried unshown; the next one's pieces go out after ``after_output``."""
    misfit = '{"x": "no", "y": 1}'
    fit = '{"x": 21, "y": 22}'
    responses_server.script(
        responses.as_stream(responses.response(responses.message(misfit))),
        responses.as_stream(responses.response(responses.message(fit))),
    )
    log: Log = []
    model = OpenAIResponsesModel("test-model", base_url=responses_server.url)
    agent = Agent("geo", model, output_type=Point, callbacks=[Retrying(log), OutputGuard(log)])
    try:
        events = consume(Runner(agent, retry=NO_WAIT), log)
    finally:
        model.close()
    assert responses_server.bodies[0]["stream"] is True
    assert responses_server.bodies[0]["text"]["format"]["type"] == "json_schema"
    assert finished(events) == Point(21, 22)
    pieces = shown(events)
    assert "".join(pieces) == fit
    assert len(pieces) > 1  # the model's own pieces, not one replacement
    assert ("output_error", misfit) in log
    assert shown_after(log, ("after_output", fit))


def test_a_before_model_halt_s_answer_waits_for_the_output_guard_too() -> None:
    """A ``before_model`` halt's answer is a final answer: shown after ``after_output``,
    as the JSON of the value it passed or put in its place."""

    class Cached:
        def __init__(self, text: str) -> None:
            self.text = text

        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            return Halt(ModelResponse(self.text))

    for text, value in (('{"x": 1, "y": 1}', Point(1, 1)), ('{"x": 13, "y": 1}', Point(0, 0))):
        log: Log = []
        model = NativePieces(log, [])
        agent = Agent("geo", model, output_type=Point, callbacks=[Cached(text), OutputGuard(log)])
        events = consume(Runner(agent), log, hold="output")
        assert finished(events) == value
        assert shown(events) == [json.dumps(dataclasses.asdict(value), separators=(",", ":"))]
        assert shown_after(log, ("after_output", json.dumps(json.loads(text))))


class Keyed(NativePieces):
    """``NativePieces`` answering each request by its last message: ``answers[text]``."""

    def __init__(self, log: Log, answers: dict[str, ModelResponse]) -> None:
        super().__init__(log, [])
        self.by_message = answers

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """The answer to the request's last message, in pieces."""
        for chunk in self._pieces(self.by_message[request.messages[-1].content]):
            yield chunk
            await asyncio.sleep(0)


def test_concurrent_typed_sub_agent_calls_each_wait_for_their_own_guard() -> None:
    """Two calls of a typed sub-agent at once: the passed one shows its pieces under its
    call, the replaced one only its replacement's JSON under its own."""
    log: Log = []
    geo = Agent(
        "geo",
        Keyed(log, {"first": answer(1, 2), "second": answer(13, 5)}),
        output_type=Point,
        callbacks=[OutputGuard(log)],
    )
    twice = ModelResponse(
        tool_calls=(
            ToolCall("c1", "geo", {"request": "first"}),
            ToolCall("c2", "geo", {"request": "second"}),
        )
    )
    root = Agent("root", ScriptedModel([twice, "Both placed."]), sub_agents=[geo])
    events = consume(Runner(root), log)
    assert finished(events) == "Both placed."
    texts: dict[str | None, list[str]] = {}
    for event in events:
        if isinstance(event, TextDelta):
            texts.setdefault(event.call_id, []).append(event.text)
    assert "".join(texts["c1"]) == answer(1, 2).text
    assert len(texts["c1"]) > 1
    assert texts["c2"] == ['{"x":0,"y":0}']
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]
