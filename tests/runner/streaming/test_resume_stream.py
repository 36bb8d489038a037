"""``Runner.resume_stream``: a paused run goes on as a stream, with the events ``aresume`` records.

Twin runners pause the same run; one resumes it with ``aresume``, the other with
``resume_stream``, and the two must agree: the same events in the same order, the same
answer, the same tools run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from hooks import (
    Approve,
    Cont,
    Decision,
    Edit,
    ModelContext,
    Outcome,
    PausableResult,
    Pause,
    Reject,
    Result,
    Success,
    ToolContext,
    ToolResult,
)
from runner import (
    Agent,
    InvalidDecisions,
    ModelResponse,
    ResumeRefused,
    RunFinishedEvent,
    Runner,
    RunResult,
    RunStartedEvent,
    RunState,
    ScriptedModel,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResultEvent,
)
from tests.helpers.runs import calling


class Files:
    """A ``delete_file`` tool that logs the paths it deleted."""

    def __init__(self) -> None:
        self.deleted: list[str] = []

    def tool(self) -> Any:
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        return delete_file


class AskFirst:
    """Pauses every ``delete_file`` call until a human decided."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause an undecided delete; let the rest through."""
        if ctx.call.name == "delete_file" and ctx.decision is None:
            return Pause(f"delete {ctx.call.args['path']}?")
        return Cont(ctx)


class Log:
    """An output guard logging the answers it passes, in one list with what was shown."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Log the answer's text; pass it on."""
        if type(outcome) is Success:
            self.log.append(f"after {outcome.unwrap().text}")
        return outcome


def paused(files: Files, *callbacks: object) -> tuple[Runner, RunState]:
    """A runner whose run paused on deleting ``a.txt``, and the paused state."""
    model = ScriptedModel(
        [calling(ToolCall("c1", "delete_file", {"path": "a.txt"})), "All cleaned up."],
        chunk_size=4,
    )
    agent = Agent("files", model, tools=[files.tool()], callbacks=[AskFirst(), *callbacks])
    runner = Runner(agent)
    result = asyncio.run(runner.arun("clean up", session_id="s"))
    assert result.status == "paused"
    return runner, result.state


def streamed(
    runner: Runner,
    state: RunState,
    decisions: Mapping[str, Decision],
    log: list[str] | None = None,
    **options: Any,
) -> list[StreamEvent]:
    """Every event of one streamed resume (each text piece logged as ``shown <text>``)."""

    async def main() -> list[StreamEvent]:
        events: list[StreamEvent] = []
        async for event in runner.resume_stream(state, decisions, **options):
            if log is not None and isinstance(event, TextDelta):
                log.append(f"shown {event.text}")
            events.append(event)
        return events

    return asyncio.run(main())


def recorded(events: Sequence[StreamEvent]) -> list[StreamEvent]:
    """The events a RunResult records: the stream without pieces, start and finish."""
    skipped = (TextDelta, ToolCallDelta, RunStartedEvent, RunFinishedEvent)
    return [event for event in events if not isinstance(event, skipped)]


def finished(events: Sequence[StreamEvent]) -> RunResult:
    """The result the last event carries."""
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    return last.result


def shape(events: Sequence[object]) -> list[tuple[str, str]]:
    """Each event's kind and agent: what twin runs agree on (ids and times differ)."""
    return [(type(event).__name__, str(getattr(event, "agent", ""))) for event in events]


@pytest.mark.parametrize(
    ("decision", "deleted", "result"),
    [
        (Approve(), ["a.txt"], "deleted a.txt"),
        (Edit({"path": "b.txt"}), ["b.txt"], "deleted b.txt"),
        (Reject("not that one"), [], "not that one"),
    ],
    ids=["approve", "edit", "reject"],
)
def test_a_streamed_resume_yields_the_events_aresume_records(
    decision: Decision, deleted: list[str], result: str
) -> None:
    """After an approval, an edit or a rejection: start, what ``aresume`` records, finish;
    the answer in pieces, the decided call's result as decided."""
    twin_files, files = Files(), Files()
    twin, twin_state = paused(twin_files)
    runner, state = paused(files)
    with twin, runner:
        expected = asyncio.run(twin.aresume(twin_state, {twin_state.pending[0].id: decision}))
        events = streamed(runner, state, {state.pending[0].id: decision})
    start = events[0]
    assert isinstance(start, RunStartedEvent)
    assert (start.run_id, start.session_id, start.agent) == (state.run_id, "s", "files")
    got = finished(events)
    assert recorded(events) == list(got.events)
    assert shape(got.events) == shape(expected.events)
    assert (
        (got.status, got.output)
        == (expected.status, expected.output)
        == ("completed", "All cleaned up.")
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "All cleaned up."
    assert files.deleted == twin_files.deleted == deleted
    [tool_result] = [e for e in got.events if isinstance(e, ToolResultEvent)]
    assert tool_result.result.content == result
    assert runner.paused(state.run_id) is None  # the resume ended the paused state


def test_a_streamed_resume_holds_as_stream_does() -> None:
    """With an output guard, the resumed answer's pieces go out once it passed the answer;
    ``hold=None`` streams them as generated."""
    for hold, guarded_first in (("auto", True), (None, False)):
        log: list[str] = []
        runner, state = paused(Files(), Log(log))
        log.clear()
        with runner:
            streamed(runner, state, {state.pending[0].id: Approve()}, log, hold=hold)
        after = log.index("after All cleaned up.")
        first = log.index("shown All ")
        assert (after < first) is guarded_first


def test_a_refused_streamed_resume_raises_before_any_event_and_runs_nothing() -> None:
    """Decisions that do not answer the requests raise as the stream starts: no event, no
    tool run, the state still resumable."""
    files = Files()
    runner, state = paused(files)
    seen: list[StreamEvent] = []

    async def main(decisions: Mapping[str, Decision]) -> None:
        async for event in runner.resume_stream(state, decisions):
            seen.append(event)

    with runner:
        with pytest.raises(InvalidDecisions):
            asyncio.run(main({"nope": Approve()}))
        with pytest.raises(TypeError, match="resume takes a RunState"):
            asyncio.run(_resume(runner, object(), {}))
        assert (seen, files.deleted) == ([], [])
        events = streamed(runner, state, {state.pending[0].id: Approve()})
    assert finished(events).output == "All cleaned up."


async def _resume(runner: Runner, state: object, decisions: object) -> None:
    """Drain a streamed resume of whatever was given."""
    async for _ in runner.resume_stream(state, decisions):  # type: ignore[arg-type]  # hostile
        pass


def test_a_streamed_resume_of_a_state_resumed_already_is_refused() -> None:
    """A state goes on once: a second streamed resume of it raises ``ResumeRefused``."""
    runner, state = paused(Files())
    with runner:
        streamed(runner, state, {state.pending[0].id: Approve()})
        with pytest.raises(ResumeRefused):
            streamed(runner, state, {state.pending[0].id: Approve()})


def test_a_streamed_resume_takes_a_bad_hold_as_stream_does() -> None:
    """``hold`` is checked as the stream starts, before the resume runs anything."""
    files = Files()
    runner, state = paused(files)
    with runner, pytest.raises(ValueError, match="stream's hold must be"):
        streamed(runner, state, {state.pending[0].id: Approve()}, hold=0)
    assert files.deleted == []


def test_a_streamed_resume_needs_the_run_callbacks_the_run_paused_under() -> None:
    """A run paused under run callbacks resumes as a stream only with them again."""
    files = Files()
    model = ScriptedModel(
        [calling(ToolCall("c1", "delete_file", {"path": "a.txt"})), "All cleaned up."]
    )
    runner = Runner(Agent("files", model, tools=[files.tool()]))
    guard = AskFirst()
    with runner:
        paused = asyncio.run(runner.arun("clean up", callbacks=[guard]))
        decisions = {paused.pending[0].id: Approve()}
        with pytest.raises(ResumeRefused, match="AskFirst"):
            streamed(runner, paused.state, decisions)
        assert files.deleted == []
        events = streamed(runner, paused.state, decisions, callbacks=[guard])
    assert (finished(events).output, files.deleted) == ("All cleaned up.", ["a.txt"])
