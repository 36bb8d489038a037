"""Run records as JSON lines: a run's events (``result.events``, or a stream's) as text.

``dump_events`` writes one line per event, each the event's tagged JSON
(``runner._records.tagged``: ``{"$t": "ToolCallEvent", "v": {...its fields}}``), every
line ended by ``\\n``; ``load_events`` reads such text back into equal events (an
``ErrorEvent``'s error comes back as tagged JSON rebuilds errors: as its class when that
is allowed, else a ``RecoveredError``). Lines are split at ``\\n`` only (JSON escapes it
inside strings), blank lines are skipped.

``load_events`` trusts nothing it reads: a line that is not JSON, not a tagged event, or
holds a field missing, extra or of the wrong kind is a ``ValueError`` naming the line
number, what was expected there and what came. Nothing is unpickled, and no record
makes anything import.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Final, NoReturn, cast, final

from hooks import ModelRequest
from runner._checks import got
from runner._events import (
    AttemptDiscardedEvent,
    ErrorEvent,
    Event,
    FallbackEvent,
    ModelAttemptEvent,
    ModelResponseEvent,
    PauseEvent,
    RetryEvent,
    RunFinishedEvent,
    RunStartedEvent,
    ShadowEvent,
    StopEvent,
    StreamEvent,
    TextDelta,
    ToolAttemptEvent,
    ToolCallDelta,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from runner._records.tagged import LABEL, decode, encode, refuse

__all__ = ["Kept", "dump_events", "load_events"]

_LABEL: Final = "run records"
_KINDS: Final[frozenset[type[object]]] = frozenset(
    {
        UserMessageEvent,
        ModelAttemptEvent,
        ModelResponseEvent,
        ToolCallEvent,
        ToolAttemptEvent,
        ToolResultEvent,
        ErrorEvent,
        RetryEvent,
        FallbackEvent,
        AttemptDiscardedEvent,
        StopEvent,
        PauseEvent,
        ShadowEvent,
        TextDelta,
        ToolCallDelta,
        RunStartedEvent,
        RunFinishedEvent,
    }
)
_TAGS: Final = frozenset(kind.__name__ for kind in _KINDS)
_EXPECTED: Final = f'a tagged event {{"$t": kind, "v": fields}} of a kind in {sorted(_TAGS)}'


def dump_events(events: Iterable[StreamEvent]) -> str:
    """``events`` as JSON lines, one tagged event a line, each ended by a newline.

    Any event of a run or a stream goes (streamed deltas and a stream's start and
    finish too). Something else, or an event holding a value with no JSON form, is a
    ``TypeError`` naming its position (``events[3]``) and what it is.
    """
    token = LABEL.set(_LABEL)
    try:
        lines: list[str] = []
        for index, event in enumerate(events):
            if type(event) not in _KINDS:
                msg = f"{_LABEL}: events[{index}] must be an event of a run, got {got(event)}"
                raise TypeError(msg)
            data = encode(event, f"events[{index}]")
            try:
                line = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            except (TypeError, ValueError) as exc:  # a value inside a message, call or result
                msg = f"{_LABEL}: cannot hold events[{index}] = {got(event)}: {exc}"
                raise TypeError(msg) from None
            lines.append(line)
    finally:
        LABEL.reset(token)
    if not lines:
        return ""
    lines.append("")
    return "\n".join(lines)


def load_events(text: str) -> tuple[StreamEvent, ...]:
    """The events ``dump_events`` wrote as ``text``, in order.

    A ``ValueError`` names the line (counted from 1), what was expected and what came
    when a line is not a tagged event; a ``text`` that is no str is a ``TypeError``.
    """
    given: object = text  # untyped callers pass anything
    if type(given) is not str:
        msg = f"{_LABEL} are read from a str, got {got(given)}"
        raise TypeError(msg)
    token = LABEL.set(_LABEL)
    try:
        events: list[StreamEvent] = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            events.append(_event(line, number))
        return tuple(events)
    finally:
        LABEL.reset(token)


def _event(line: str, number: int) -> StreamEvent:
    where = f"line {number}"
    try:
        data: object = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        msg = f"{_LABEL}: {where} must be JSON, got {got(line)}: {exc}"
        raise ValueError(msg) from None
    came: object = data  # as it came, for the refusal (unnarrowed)
    fields = cast("dict[str, object]", data) if type(data) is dict else None
    tag = None if fields is None else fields.get("$t")
    if fields is None or type(tag) is not str or tag not in _TAGS:
        refuse(where, _EXPECTED, came)
    event: object = decode(fields, where)
    assert type(event) in _KINDS  # an event's tag decodes to that event's class
    return cast("StreamEvent", event)


def _no_constant(name: str) -> NoReturn:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


@final
class Kept:
    """A run's records as the run hands them to its store (a ``RunRecords``).

    Holding the events costs the run nothing; ``jsonl()`` writes them when the store
    wants text. Each model attempt's request is written without its messages (the
    conversation is the session's, and the other records show each turn's own
    messages): so a turn's records cost the same however long its session is.
    """

    __slots__ = ("events",)

    def __init__(self, events: tuple[Event, ...]) -> None:
        self.events: Final = events

    def jsonl(self) -> str:
        """The records as JSON lines (``dump_events``), model requests' messages left out."""
        return dump_events(_kept(event) for event in self.events)


def _kept(event: Event) -> Event:
    if type(event) is not ModelAttemptEvent:
        return event
    return ModelAttemptEvent(
        agent=event.agent,
        branch=event.branch,
        time=event.time,
        request=ModelRequest((), event.request.tools),
        attempt=event.attempt,
    )
