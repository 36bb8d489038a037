"""Run records as JSON lines: ``dump_events`` / ``load_events`` round trips and hostile text."""

from __future__ import annotations

import asyncio
import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runner import (
    Agent,
    AttemptDiscardedEvent,
    ErrorEvent,
    FallbackEvent,
    Message,
    ModelAttemptEvent,
    ModelRequest,
    ModelResponse,
    ModelResponseEvent,
    PauseEvent,
    PendingRequest,
    RetryEvent,
    RunFinishedEvent,
    Runner,
    RunResult,
    RunStartedEvent,
    RunState,
    ScriptedModel,
    ShadowEvent,
    StopEvent,
    StreamEvent,
    TextDelta,
    ToolAttemptEvent,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    Usage,
    UserMessageEvent,
    dump_events,
    load_events,
)
from runner._durable.codec import RecoveredError
from runner._records.lines import Kept
from tests.helpers.runs import Mode, calling, drive
from tests.helpers.strategies import (
    json_values,
    messages,
    responses,
    texts,
    tool_calls,
    tool_results,
    usages,
)

AT: dict[str, Any] = {"agent": "a", "branch": "a", "time": 1.0}
times = st.floats(allow_nan=False, allow_infinity=False)
names = st.text(min_size=1, max_size=8)
specs = st.builds(ToolSpec, names, texts, st.dictionaries(texts, json_values, max_size=3))
requests = st.builds(
    ModelRequest,
    st.lists(messages, max_size=3).map(tuple),
    st.lists(specs, max_size=2).map(tuple),
)
pendings = st.builds(
    PendingRequest,
    id=names,
    call=tool_calls,
    reason=texts,
    agent=names,
    branch=names,
    allowed=st.sampled_from([("approve", "edit", "reject"), ("approve", "reject")]),
)
operations = st.sampled_from(["model", "tool", "agent"])
attempts = st.integers(min_value=1, max_value=9)


def _record(cls: type[Any], **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.builds(cls, agent=names, branch=names, time=times, **fields)


# Every kind of event but ErrorEvent (an error is equal to itself only: checked apart).
run_events: st.SearchStrategy[Any] = st.one_of(
    _record(UserMessageEvent, message=messages),
    _record(ModelAttemptEvent, request=requests, attempt=attempts),
    _record(ModelResponseEvent, response=responses),
    _record(ToolCallEvent, call=tool_calls),
    _record(ToolAttemptEvent, call=tool_calls, attempt=attempts),
    _record(ToolResultEvent, call=tool_calls, result=tool_results),
    _record(RetryEvent, operation=operations, attempt=attempts, delay=times, changed=st.booleans()),
    _record(FallbackEvent, operation=operations, attempt=attempts),
    _record(
        AttemptDiscardedEvent,
        attempt=attempts,
        reason=st.sampled_from(["failed", "replaced"]),
        call_id=st.none() | texts,
    ),
    _record(StopEvent, reason=texts),
    _record(PauseEvent, request=pendings),
    _record(
        ShadowEvent,
        point=texts,
        callback=texts,
        live=texts,
        would=texts,
        tool=st.none() | texts,
        call_id=st.none() | texts,
        detail=texts,
    ),
)
states = st.builds(
    RunState,
    st.dictionaries(texts, json_values, max_size=2).map(MappingProxyType),
    run_id=names,
    agent=texts,
    user_id=texts,
    session_id=texts,
    status=st.sampled_from(["completed", "stopped"]),
    usage=usages,
)
results = st.builds(
    RunResult,
    texts,
    st.lists(run_events, max_size=3).map(tuple),
    st.sampled_from(["completed", "stopped"]),
    stop_reason=st.none() | texts,
    session_id=texts,
    response=st.none() | responses,
    run_id=texts,
    state=states,
    usage=usages,
)
streamed_events: st.SearchStrategy[Any] = st.one_of(
    st.builds(TextDelta, texts, agent=texts, branch=texts, call_id=st.none() | texts),
    st.builds(
        ToolCallDelta,
        st.integers(min_value=0, max_value=9),
        id=st.none() | texts,
        name=st.none() | texts,
        arguments=texts,
        agent=texts,
        branch=texts,
        call_id=st.none() | texts,
    ),
    st.builds(RunStartedEvent, run_id=texts, session_id=texts, agent=texts, time=times),
    st.builds(RunFinishedEvent, result=results, time=times),
)


@given(st.lists(run_events | streamed_events, max_size=6).map(tuple))
def test_loading_what_was_dumped_gives_the_same_events(events: tuple[StreamEvent, ...]) -> None:
    """Any run's or stream's events, of every kind: ``load_events(dump_events(e)) == e``, one
    line a record, each line JSON."""
    text = dump_events(events)
    assert load_events(text) == events
    lines = text.split("\n")
    assert lines[-1] == ""
    assert len(lines) == len(events) + 1
    for line, event in zip(lines, events, strict=False):
        assert json.loads(line)["$t"] == type(event).__name__


@given(texts, st.integers(min_value=1, max_value=3), operations)
def test_an_error_event_comes_back_as_its_class_with_its_args(
    message: str, attempt: int, operation: str
) -> None:
    """An ``ErrorEvent``'s error is rebuilt as its allowed class, with its args; the rest of
    the event is equal."""
    event = ErrorEvent(
        agent="a",
        branch="a",
        time=1.0,
        error=ConnectionError(message),
        operation=operation,  # type: ignore[arg-type]
        attempt=attempt,
    )
    (copy,) = load_events(dump_events([event]))
    assert isinstance(copy, ErrorEvent)
    assert (type(copy.error), copy.error.args) == (ConnectionError, (message,))
    assert (copy.agent, copy.branch, copy.time, copy.operation, copy.attempt) == (
        "a",
        "a",
        1.0,
        operation,
        attempt,
    )


class PrivateError(Exception):
    """A class no record may rebuild (a test module's)."""


def test_an_error_of_a_class_not_allowed_is_a_recovered_error() -> None:
    """An error of a class outside the allow-list comes back a ``RecoveredError`` naming it."""
    event = ErrorEvent(**AT, error=PrivateError("nope"), operation="tool")
    (copy,) = load_events(dump_events([event]))
    assert isinstance(copy, ErrorEvent)
    assert isinstance(copy.error, RecoveredError)
    assert copy.error.type_name == f"{__name__}:PrivateError"
    assert str(copy.error) == "nope"


def test_a_real_run_and_its_stream_round_trip(mode: Mode) -> None:
    """The events of a run with a tool call, and every event its stream yields, load back equal."""

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    call = calling(ToolCall("c1", "add", {"a": 1, "b": 2}))
    model = ScriptedModel([call, "3", call, "3"])  # the run, then the stream
    with Runner(Agent("calc", model, tools=[add])) as runner:
        result = drive(runner, mode, "1 + 2?")
        streamed = asyncio.run(_streamed(runner, "1 + 2?"))
    assert load_events(dump_events(result.events)) == result.events
    kinds = {type(event) for event in streamed}
    assert {RunStartedEvent, RunFinishedEvent, ToolResultEvent} <= kinds
    copy = load_events(dump_events(streamed))
    assert [type(event) for event in copy] == [type(event) for event in streamed]
    assert copy[:-1] == streamed[:-1]
    finished = copy[-1]
    assert isinstance(finished, RunFinishedEvent)
    original = streamed[-1]
    assert isinstance(original, RunFinishedEvent)
    assert finished.result.events == original.result.events
    assert (finished.result.output, finished.result.run_id) == ("3", original.result.run_id)


async def _streamed(runner: Runner, message: str) -> tuple[StreamEvent, ...]:
    return tuple([event async for event in runner.stream(message)])


def test_no_events_are_no_text_and_blank_lines_are_skipped() -> None:
    """``dump_events(())`` is ``""``; blank lines and a missing last newline load the same."""
    assert dump_events(()) == ""
    assert load_events("") == ()
    event = StopEvent(**AT, reason="enough")
    line = dump_events([event]).rstrip("\n")
    assert load_events(f"\n{line}\n\n  \n{line}") == (event, event)
    assert load_events(f"{line}\r\n{line}\r\n") == (event, event)


def test_a_line_break_inside_a_text_stays_inside_its_line() -> None:
    """Texts with newlines, separators JSON leaves raw (U+2028) and quotes stay in their line."""
    event = TextDelta('one\ntwo\u2028three\r"four"\u0085')
    text = dump_events([event, event])
    assert text.count("\n") == 2
    assert load_events(text) == (event, event)


def test_what_is_no_event_is_refused_naming_its_position() -> None:
    """Something else among the events is a ``TypeError`` naming where it was."""
    event = StopEvent(**AT, reason="enough")
    with pytest.raises(TypeError, match=r"events\[1\] must be an event of a run, got str 'no'"):
        dump_events([event, "no"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"run records are read from a str, got bytes"):
        load_events(b"{}")  # type: ignore[arg-type]


def test_a_value_with_no_json_form_is_refused_naming_where() -> None:
    """A tool call whose args hold a set (no JSON form) is a ``TypeError`` naming the value."""
    event = ToolCallEvent(**AT, call=ToolCall("c1", "t", {"x": {1, 2}}))
    with pytest.raises(TypeError, match=r"run records: cannot hold events\[0\] = .*set"):
        dump_events([event])


GOOD = dump_events([StopEvent(**AT, reason="enough")]).rstrip("\n")
HOSTILE = [
    ("not json", r"line 2 must be JSON, got str 'not json'"),
    ("[1, 2]", r"line 2 must be a tagged event .* got list \[1, 2\]"),
    ('{"$t": "Popen", "v": {}}', r"line 2 must be a tagged event .* got dict"),
    ('{"$t": "tuple", "v": []}', r"line 2 must be a tagged event"),
    (
        '{"$t": "StopEvent", "v": {"agent": "a"}}',
        r"line 2<StopEvent> must be an object with exactly",
    ),
    (
        '{"$t": "StopEvent", "v": {"agent": "a", "branch": "b", "time": 1, "reason": 5}}',
        r"line 2<StopEvent>.reason must be a str, got int 5",
    ),
    (
        '{"$t": "ToolCallEvent", "v": {"agent": "a", "branch": "a", "time": 1, "call": 3}}',
        r"line 2<ToolCallEvent>.call must be a ToolCall, got int 3",
    ),
    (
        '{"$t": "ErrorEvent", "v": {"agent": "a", "branch": "a", "time": 1, "operation": "tool",'
        ' "attempt": 1, "error": {"$t": "pickle", "v": "gASV"}}}',
        r"line 2<ErrorEvent>.error must be a known tag",
    ),
    ('{"$t": "StopEvent", "v": NaN}', r"line 2 must be JSON"),
    ("[" * 100_000, r"line 2 must be JSON"),
    (
        '{"$t": "StopEvent", "v": {"agent": "a", "branch": "a", "time": 1, "reason": '
        + '{"$t": "tuple", "v": [' * 300
        + "]}" * 300
        + "}}",
        r"line 2<StopEvent>.reason(<tuple>\[0\])+ must be a record nested at most 200 deep",
    ),
    (
        '{"$t": "PauseEvent", "v": {"agent": "a", "branch": "a", "time": 1, "request": '
        '{"$t": "PendingRequest", "v": {"id": "p", "call": {"$t": "ToolCall", "v": '
        '{"id": "c", "name": "t", "args": {}}}, "reason": "r", "agent": "a", "branch": "a", '
        '"allowed": {"$t": "tuple", "v": ["explode"]}, "kind": "call", "schema": null, '
        '"question": null}}}}',
        r"line 2<PauseEvent>.request<PendingRequest>.allowed must be a tuple\[Literal",
    ),
    (
        '{"$t": "RetryEvent", "v": {"agent": "a", "branch": "a", "time": "noon", '
        '"operation": "tool", "attempt": 1, "delay": 0.5, "changed": false}}',
        r"line 2<RetryEvent>.time must be a float, got str 'noon'",
    ),
]


@pytest.mark.parametrize(("line", "says"), HOSTILE)
def test_a_bad_line_is_a_value_error_naming_it_what_was_expected_and_what_came(
    line: str, says: str
) -> None:
    """Each hostile line is a ``ValueError`` naming line 2 (after a good line 1); nothing
    it names is imported or unpickled."""
    with pytest.raises(ValueError, match=says) as raised:
        load_events(f"{GOOD}\n{line}\n{GOOD}\n")
    assert str(raised.value).startswith("run records: line 2")


def test_kept_records_leave_model_requests_messages_out() -> None:
    """What a run hands its store writes each model attempt without its request's messages
    (its tools kept); every other event is whole."""
    tools = (ToolSpec("t", "T."),)
    asked = ModelRequest((Message("user", "old"), Message("user", "hi")), tools)
    events = (
        UserMessageEvent(**AT, message=Message("user", "hi")),
        ModelAttemptEvent(**AT, request=asked, attempt=2),
        ModelResponseEvent(**AT, response=ModelResponse("yo", usage=Usage(1, 2))),
    )
    copy = load_events(Kept(events).jsonl())
    assert copy == (
        events[0],
        ModelAttemptEvent(**AT, request=ModelRequest((), tools), attempt=2),
        events[2],
    )


def test_a_tool_result_event_round_trips_its_parts_and_structured_content() -> None:
    """A tool result with an error flag and structured content comes back equal."""
    call = ToolCall("c1", "t", {"q": [1, "two", None]})
    event = ToolResultEvent(**AT, call=call, result=ToolResult("r", True, (), {"k": [1.5, False]}))
    assert load_events(dump_events([event])) == (event,)
