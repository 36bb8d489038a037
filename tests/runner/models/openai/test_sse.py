"""``EventReader``: server-sent events off bytes cut anywhere, as the SSE standard reads them."""

from __future__ import annotations

import pytest

from runner._models.openai.sse import Event, EventReader

BODY = (
    ": keep-alive\r\n\r\n"
    'data: {"a": 1}\r\n\r\n'
    'event: error\ndata: {"error": {}}\n\n'
    "data: first\ndata:second\rdata:  third\r\r"
    "data: \u2028 and é 🎉\n\n"
    "id: 7\nretry: 10\n\n"
    "data: [DONE]\n\n"
).encode()
EVENTS = [
    Event("", '{"a": 1}'),
    Event("error", '{"error": {}}'),
    Event("", "first\nsecond\n third"),
    Event("", "\u2028 and é 🎉"),
    Event("", "[DONE]"),
]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, len(BODY)])
def test_events_come_whole_however_the_bytes_are_cut(size: int) -> None:
    """Line ends of three kinds (a ``\\r\\n`` cut in two too), comments, ``event`` names,
    data on several lines joined with ``\\n``, one leading space dropped, other fields
    ignored, UTF-8 cut mid-character, U+2028 inside data kept as text."""
    reader = EventReader()
    got: list[Event] = []
    for at in range(0, len(BODY), size):
        got += reader.feed(BODY[at : at + size])
    assert got == EVENTS


def test_an_event_not_ended_by_an_empty_line_is_not_given() -> None:
    """A body that stops mid-event yields nothing of that event."""
    assert EventReader().feed(b'data: {"half": ') == []
    assert EventReader().feed(b"data: whole\n") == []
