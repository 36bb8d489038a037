"""``Runner.stream(..., hold=...)``: a model's pieces go out only once its output guard passed.

The runs log, in one list, what the model generated, what ``after_model`` saw and what
the consumer was shown, in the order it happened: a held piece is one the consumer
holds only after the guard passed the text it belongs to.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import replace
from typing import Any, Literal, TypeAlias

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
    ScriptedModel,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from tests.helpers.runs import add, calling

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)
WITHHELD = "[withheld]"

Log: TypeAlias = list[tuple[str, str]]
ModelForm: TypeAlias = Literal["astream", "stream", "generate"]
GuardForm: TypeAlias = Literal["sync", "async"]


class Pieces:
    """A model answering each script item in 3-character pieces, logging ``("piece", text)``
    as it yields each; an exception in the script breaks off after two pieces."""

    def __init__(self, log: Log, answers: Sequence[ModelResponse | Exception]) -> None:
        self.log = log
        self.answers = list(answers)
        self.calls = 0

    def _next(self) -> ModelResponse | Exception:
        self.calls += 1
        return self.answers.pop(0)

    def _pieces(self, answer: ModelResponse | Exception) -> Iterator[ModelChunk]:
        if isinstance(answer, Exception):
            for piece in ("par", "tial"):
                self.log.append(("piece", piece))
                yield TextDelta(piece)
            raise answer
        for start in range(0, len(answer.text), 3):
            piece = answer.text[start : start + 3]
            self.log.append(("piece", piece))
            yield TextDelta(piece)
        for index, call in enumerate(answer.tool_calls):
            self.log.append(("piece", call.name))
            yield ToolCallDelta(index, call.id, call.name, '{"a": 1, "b": 2}')
        yield answer

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next answer, whole."""
        answer = self._next()
        if isinstance(answer, Exception):
            raise answer
        self.log.append(("piece", answer.text))
        return answer


class AsyncPieces(Pieces):
    """``Pieces`` through ``astream``, each piece after a turn of the event loop."""

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """The next answer in pieces."""
        for chunk in self._pieces(self._next()):
            yield chunk
            await asyncio.sleep(0)


class SyncPieces(Pieces):
    """``Pieces`` through a sync ``stream``."""

    def stream(self, request: ModelRequest, /) -> Iterator[ModelChunk]:
        """The next answer in pieces."""
        yield from self._pieces(self._next())


def model(form: ModelForm, log: Log, answers: Sequence[ModelResponse | Exception]) -> Pieces:
    """A model of ``form``: streaming awaited, streaming on the pool, or answering whole."""
    kinds = {"astream": AsyncPieces, "stream": SyncPieces, "generate": Pieces}
    return kinds[form](log, answers)


class Guard:
    """An output guard: logs ``("after", text)`` for each answer it sees (its
    ``finish_reason`` in ``reasons``) and replaces any whose text holds ``refused``."""

    def __init__(self, log: Log, refused: str = "secret") -> None:
        self.log = log
        self.refused = refused
        self.reasons: list[str | None] = []

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Pass the answer on, or the withheld notice in place of a refused one."""
        if type(outcome) is not Success:
            return outcome
        response = outcome.unwrap()
        self.log.append(("after", response.text))
        self.reasons.append(response.finish_reason)
        if self.refused in response.text:
            return Success(ModelResponse(WITHHELD))
        return outcome


class AsyncGuard(Guard):
    """``Guard`` with an ``async def after_model``."""

    async def after_model(  # type: ignore[override]  # the async twin of the same hook
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """As ``Guard.after_model``, after a turn of the event loop."""
        await asyncio.sleep(0)
        return Guard.after_model(self, outcome, ctx)


def guard(form: GuardForm, log: Log, refused: str = "secret") -> Guard:
    """An output guard with a sync or an async ``after_model``."""
    return Guard(log, refused) if form == "sync" else AsyncGuard(log, refused)


@pytest.fixture(params=["astream", "stream", "generate"])
def model_form(request: pytest.FixtureRequest) -> ModelForm:
    """Each way a model answers a streamed run."""
    value: ModelForm = request.param
    return value


@pytest.fixture(params=["sync", "async"])
def guard_form(request: pytest.FixtureRequest) -> GuardForm:
    """A guard's ``after_model`` as a plain and as an ``async def`` method."""
    value: GuardForm = request.param
    return value


def consume(
    runner: Runner, message: str, log: Log | None = None, **options: Any
) -> list[StreamEvent]:
    """Every event of one streamed run, each text delta logged as ``("shown", text)``."""

    async def main() -> list[StreamEvent]:
        events: list[StreamEvent] = []
        async for event in runner.stream(message, **options):
            if log is not None and isinstance(event, TextDelta):
                log.append(("shown", event.text))
            events.append(event)
        return events

    return asyncio.run(main())


def shown(events: Sequence[StreamEvent]) -> list[str]:
    """The text pieces the consumer was shown."""
    return [event.text for event in events if isinstance(event, TextDelta)]


def kept(events: Sequence[StreamEvent]) -> str:
    """The text a UI keeps: each piece, dropping an attempt's pieces when told to discard it."""
    text, attempt = "", ""
    for event in events:
        if isinstance(event, TextDelta):
            attempt += event.text
        elif isinstance(event, AttemptDiscardedEvent):
            attempt = ""
        elif type(event).__name__ == "ModelResponseEvent":
            text, attempt = text + attempt, ""
    return text + attempt


def output(events: Sequence[StreamEvent]) -> str:
    """The run's output, from its last event."""
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    text: str = last.result.output
    return text


def test_held_pieces_go_out_only_after_after_model_passed_the_answer(
    model_form: ModelForm, guard_form: GuardForm
) -> None:
    """``hold="output"``: the same pieces as an unheld stream, every one after the guard."""
    log: Log = []
    answer = ModelResponse("Hello there, world.")
    with Runner(Agent("a", model(model_form, log, [answer, answer]))) as runner:
        unheld = consume(runner, "hi", callbacks=[guard(guard_form, [])], hold=None)
        events = consume(runner, "hi", log, callbacks=[guard(guard_form, log)], hold="output")
    assert shown(events) == shown(unheld)
    assert "".join(shown(events)) == output(events) == "Hello there, world."
    after = log.index(("after", "Hello there, world."))
    assert all(index > after for index, (kind, _) in enumerate(log) if kind == "shown")
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]


def test_unheld_pieces_go_out_before_the_guard_sees_the_answer() -> None:
    """``hold=None`` and ``"none"`` stream as generated: the first piece before ``after_model``."""
    for hold in (None, "none"):
        log: Log = []
        answer = ModelResponse("Hello there, world.")
        with Runner(Agent("a", AsyncPieces(log, [answer]))) as runner:
            consume(runner, "hi", log, callbacks=[Guard(log)], hold=hold)
        assert log.index(("shown", "Hel")) < log.index(("after", "Hello there, world."))


def test_a_replaced_answer_is_never_shown_and_the_replacement_is(
    model_form: ModelForm, guard_form: GuardForm
) -> None:
    """A refused answer's pieces never go out, nor a discard: the replacement, as one piece."""
    log: Log = []
    answer = ModelResponse("the secret is 42")
    with Runner(Agent("a", model(model_form, log, [answer]))) as runner:
        events = consume(runner, "hi", log, callbacks=[guard(guard_form, log)], hold="output")
    assert shown(events) == [WITHHELD] == [text for kind, text in log if kind == "shown"]
    assert output(events) == WITHHELD
    assert [type(event).__name__ for event in events[1:-1]] == [
        "UserMessageEvent",
        "ModelAttemptEvent",
        "TextDelta",
        "ModelResponseEvent",
    ]


class Refuse:
    """An output guard that fails every answer."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Fail it."""
        return Failure(PermissionError("not shown"))


def test_an_answer_the_guard_fails_shows_nothing_and_the_error_comes_after_the_events() -> None:
    """A failed answer's pieces never go out; the run's error is raised after its events."""
    log: Log = []
    seen: list[StreamEvent] = []

    async def main() -> None:
        runner = Runner(Agent("a", AsyncPieces(log, [ModelResponse("the secret")])))
        with runner:
            async for event in runner.stream("hi", callbacks=[Refuse()], hold="output"):
                seen.append(event)

    with pytest.raises(PermissionError, match="not shown"):
        asyncio.run(main())
    assert not shown(seen)
    assert [type(event).__name__ for event in seen][-1] == "ErrorEvent"


def test_auto_holds_the_agents_with_an_output_guard_and_streams_the_others() -> None:
    """The default: a sub-agent with ``after_model`` is held, the root agent without is not."""
    log: Log = []
    helper = Agent(
        "helper", AsyncPieces(log, [ModelResponse("helper says hi")]), callbacks=[Guard(log)]
    )
    first = ModelResponse("calling", tool_calls=(ToolCall("c1", "helper", {"request": "go"}),))
    root = Agent(
        "root", AsyncPieces(log, [first, ModelResponse("All done now.")]), sub_agents=[helper]
    )
    with Runner(root) as runner:
        events = consume(runner, "go", log)
    assert output(events) == "All done now."
    # The root's own text goes out as it comes, before its model finished the answer.
    assert log.index(("shown", "All")) < log.index(("piece", "."))
    # The helper's text goes out once its guard passed it.
    after = log.index(("after", "helper says hi"))
    helper_shown = [
        index
        for index, (kind, text) in enumerate(log)
        if kind == "shown" and text in {"hel", "per", " sa", "ys ", "hi"}
    ]
    assert helper_shown
    assert all(index > after for index in helper_shown)


def test_auto_streams_a_run_without_an_output_guard_as_generated() -> None:
    """No ``after_model`` anywhere: the default shows each piece as it comes."""
    log: Log = []
    with Runner(Agent("a", AsyncPieces(log, [ModelResponse("Hello there.")]))) as runner:
        events = consume(runner, "hi", log)
    assert log.index(("shown", "Hel")) < log.index(("piece", "re."))
    assert "".join(shown(events)) == "Hello there."


def test_every_n_characters_the_text_so_far_is_checked_and_passed_text_goes_out() -> None:
    """``hold=N``: the guard sees the text so far (``finish_reason="partial"``) each time it grew
    by ``N``; what it passed goes out, nothing past a refused check does; the final answer
    still decides, a replacement discarding what went out."""
    log: Log = []
    text = "abcdefghijkl secret mnop"
    checker = Guard(log)
    with Runner(Agent("a", AsyncPieces(log, [ModelResponse(text)]))) as runner:
        events = consume(runner, "hi", log, callbacks=[checker], hold=5)
    checked = [seen for kind, seen in log if kind == "after"]
    assert checker.reasons == ["partial"] * (len(checked) - 1) + [None]
    assert checked[-1] == text
    sizes = [len(seen) for seen in checked[:-1]]
    assert all(later - earlier >= 5 for earlier, later in zip([0, *sizes], sizes, strict=False))
    # Each piece went out after a check that saw it, and no check that saw "secret" let one out.
    passed, so_far = "", ""
    for kind, seen in log:
        if kind == "after" and "secret" not in seen:
            passed = seen
        elif kind == "shown" and seen != WITHHELD:
            so_far += seen
            assert passed.startswith(so_far)
    before_discard = [
        event.text
        for event in events[
            : next(i for i, e in enumerate(events) if isinstance(e, AttemptDiscardedEvent))
        ]
        if isinstance(event, TextDelta)
    ]
    assert before_discard
    assert "secret" not in "".join(before_discard)
    assert text.startswith("".join(before_discard))
    assert shown(events)[-1] == WITHHELD
    assert kept(events) == output(events) == WITHHELD


def test_every_n_characters_with_a_passing_guard_shows_the_whole_answer_in_its_pieces() -> None:
    """A guard that passes everything: the pieces are the unheld stream's, all shown."""
    log: Log = []
    answer = ModelResponse("Hello there, world.")
    with Runner(Agent("a", AsyncPieces(log, [answer, answer]))) as runner:
        unheld = consume(runner, "hi", hold=None, callbacks=[Guard([])])
        events = consume(runner, "hi", log, callbacks=[Guard(log)], hold=4)
    assert shown(events) == shown(unheld)
    # Some piece went out before the whole answer was checked.
    assert log.index(("shown", "Hel")) < log.index(("after", "Hello there, world."))


def test_a_held_attempt_that_fails_is_neither_shown_nor_announced_discarded() -> None:
    """A retried attempt's pieces stayed held: no discard to announce, only the answer shown."""

    class RetryOnce(Guard):
        def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> ErrorResult[ModelContext, ModelResponse]:
            return Retry(ctx)

    log: Log = []
    pieces = AsyncPieces(log, [ConnectionError("cut"), ModelResponse("Fine.")])
    with Runner(Agent("a", pieces), retry=NO_WAIT) as runner:
        events = consume(runner, "hi", callbacks=[RetryOnce(log)])
    assert shown(events) == ["Fin", "e."]
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]
    assert ("piece", "par") in log


class Short:
    """Answers every model call itself, before the model is called."""

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Halt with a canned answer."""
        return Halt(ModelResponse("canned"))


class Backup:
    """Falls back to a backup answer when the model fails."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """The backup answer."""
        return Fallback(ModelResponse("backup"))


@pytest.mark.parametrize(
    ("hook", "answers", "expected"),
    [(Short(), [], "canned"), (Backup(), [ConnectionError("down")], "backup")],
    ids=["halt", "fallback"],
)
def test_a_held_stream_is_shown_an_answer_no_attempt_streamed(
    hook: object, answers: list[ModelResponse | Exception], expected: str
) -> None:
    """A halt's or a fallback's answer goes out as one piece, after the partial one is dropped."""
    with Runner(Agent("a", AsyncPieces([], answers))) as runner:
        held = consume(runner, "hi", callbacks=[hook], hold="output")
        unheld = consume(runner, "hi", callbacks=[hook], hold=None) if not answers else held
    assert shown(held) == [expected]
    assert output(held) == expected
    if not answers:
        assert shown(unheld) == []  # unheld, the stream shows the model's pieces only


def test_held_tool_call_pieces_go_out_after_the_guard_passed_the_answer() -> None:
    """A held answer's tool-call pieces wait for ``after_model`` too."""
    log: Log = []
    answers = [calling(ToolCall("c1", "add", {"a": 1, "b": 2})), ModelResponse("It is 3.")]
    with Runner(Agent("a", AsyncPieces(log, answers), tools=[add])) as runner:
        events = asyncio.run(_events(runner, log, callbacks=[Guard(log)], hold="output"))
    kinds = [type(event).__name__ for event in events]
    assert kinds.index("ToolCallDelta") < kinds.index("ToolCallEvent")
    assert log.index(("after", "")) < log.index(("call", "add"))
    assert output(events) == "It is 3."


class CallFirst(AsyncPieces):
    """``AsyncPieces`` sending an answer's tool-call pieces before its text."""

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """The tool-call pieces, the text in pieces, then the response."""
        answer = self._next()
        assert isinstance(answer, ModelResponse)
        for index, call in enumerate(answer.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, '{"a": 1, "b": 2}')
        for start in range(0, len(answer.text), 3):
            yield TextDelta(answer.text[start : start + 3])
            await asyncio.sleep(0)
        yield answer


def test_checked_every_n_characters_a_tool_call_piece_waits_for_the_whole_answer() -> None:
    """``hold=N``: from an attempt's first tool-call piece on, no check lets anything out."""
    log: Log = []
    first = ModelResponse("Adding up now.", tool_calls=(ToolCall("c1", "add", {"a": 1, "b": 2}),))
    answers = [first, ModelResponse("It is 3.")]
    with Runner(Agent("a", CallFirst(log, answers), tools=[add])) as runner:
        events = asyncio.run(_events(runner, log, callbacks=[Guard(log)], hold=3))
    after = log.index(("after", "Adding up now."))
    assert after < log.index(("call", "add"))
    assert after < log.index(("shown", "Add"))
    assert output(events) == "It is 3."


async def _events(runner: Runner, log: Log, **options: Any) -> list[StreamEvent]:
    """A streamed run's events, each tool-call piece logged as ``("call", name)``, each text
    piece as ``("shown", text)``."""
    events: list[StreamEvent] = []
    async for event in runner.stream("add", **options):
        if isinstance(event, ToolCallDelta) and event.name is not None:
            log.append(("call", event.name))
        elif isinstance(event, TextDelta):
            log.append(("shown", event.text))
        events.append(event)
    return events


class Mask:
    """A stream hook showing each digit as ``*``."""

    def on_delta(self, ctx: DeltaContext, /) -> BeforeResult[DeltaContext, ModelResponse]:
        """The piece with its digits masked."""
        delta = ctx.delta
        if isinstance(delta, TextDelta):
            masked = "".join("*" if char.isdigit() else char for char in delta.text)
            return Cont(replace(ctx, delta=replace(delta, text=masked)))
        return Cont(ctx)


def test_held_pieces_are_the_ones_the_stream_hooks_made() -> None:
    """``on_delta`` sees each piece as it comes; what it shows is what is held and let out."""
    log: Log = []
    with Runner(Agent("a", AsyncPieces(log, [ModelResponse("pin 1234 ok")]))) as runner:
        events = consume(runner, "hi", log, callbacks=[Mask(), Guard(log)], hold="output")
    assert "".join(shown(events)) == "pin **** ok"
    assert output(events) == "pin 1234 ok"
    assert log.index(("after", "pin 1234 ok")) < log.index(("shown", "pin"))


@pytest.mark.parametrize(
    ("hold", "error", "named"),
    [
        (0, ValueError, "got int 0"),
        (-3, ValueError, "got int -3"),
        ("OUTPUT", ValueError, "got str 'OUTPUT'"),
        ("", ValueError, "got str ''"),
        (True, TypeError, "got bool True"),
        (2.5, TypeError, "got float 2.5"),
        (b"output", TypeError, "got bytes b'output'"),
        (["output"], TypeError, "got list ['output']"),
    ],
)
def test_a_bad_hold_is_refused_naming_what_came_before_anything_runs(
    hold: object, error: type[Exception], named: str
) -> None:
    """A hold that is none of the modes raises, naming the modes and the value; no model call."""
    pieces = AsyncPieces([], [ModelResponse("never")])
    with Runner(Agent("a", pieces)) as runner:
        with pytest.raises(error, match="stream's hold must be") as raised:
            consume(runner, "hi", hold=hold)
        assert named in str(raised.value)
        assert '"auto", "output", "none", None or an int >= 1' in str(raised.value)
        assert pieces.calls == 0
        assert runner.sessions.load("user", "s").version == 0


class StrSub(str):
    """A str subclass pretending to be another text."""

    __slots__ = ()

    def __str__(self) -> str:
        return "none"


def test_a_str_subclass_hold_is_read_as_its_own_text() -> None:
    """A hold given as a str subclass is read by its characters, never by its ``__str__``."""
    with Runner(Agent("a", AsyncPieces([], [ModelResponse("Hello there.")]))) as runner:
        events = consume(runner, "hi", hold=StrSub("output"), callbacks=[Guard([])])
    assert "".join(shown(events)) == "Hello there."


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(alphabet="ab x.", max_size=30),
    chunk=st.integers(min_value=1, max_value=7),
    hold=st.sampled_from(["output", 1, 2, 5, 11]),
)
def test_held_text_never_shows_a_character_a_guard_refused_and_keeps_the_answer(
    text: str, chunk: int, hold: str | int
) -> None:
    """For any answer and chunking, held: no piece holds text a check refused (here: any
    ``x``), and the text kept after discards is the run's output."""
    with Runner(Agent("a", ScriptedModel([text], chunk_size=chunk))) as runner:
        events = consume(runner, "hi", callbacks=[Guard([], refused="x")], hold=hold)
    assert not any("x" in piece for piece in shown(events))
    assert kept(events) == output(events) == (WITHHELD if "x" in text else text)


@settings(max_examples=40, deadline=None)
@given(
    text=st.text(alphabet="ab x.", max_size=30),
    chunk=st.integers(min_value=1, max_value=7),
    hold=st.sampled_from(["output", "none", None, 1, 4, 50]),
)
def test_whatever_the_hold_a_passed_answer_is_shown_whole_in_the_models_pieces(
    text: str, chunk: int, hold: str | int | None
) -> None:
    """For any answer, chunking and hold, a guard that passes everything: the pieces shown
    are the model's pieces, joined they are the output, and nothing is discarded."""
    with Runner(Agent("a", ScriptedModel([text], chunk_size=chunk))) as runner:
        events = consume(runner, "hi", callbacks=[Guard([], refused="\0")], hold=hold)
    expected = [text[at : at + chunk] for at in range(0, len(text), chunk)]
    assert shown(events) == expected
    assert "".join(shown(events)) == output(events) == text
    assert not [event for event in events if isinstance(event, AttemptDiscardedEvent)]
