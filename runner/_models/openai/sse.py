"""Server-sent events read off a response body as its bytes arrive, as the SSE standard says.

A body is UTF-8 text in lines (ended by ``\\r\\n``, ``\\n`` or ``\\r``); a line ``field:
value`` adds to the event being read (one space after the colon is dropped), ``data``
lines join with ``\\n``, a line starting with ``:`` is a comment (servers send them to
keep a connection alive), and an empty line ends the event. An event with no ``data``
line is none. Bytes may arrive cut anywhere, inside a line or a UTF-8 character.
"""

from __future__ import annotations

import codecs
import re
from typing import Final, NamedTuple, final

__all__ = ["Event", "EventReader"]

# Only these end a line: JSON text may hold U+2028 and the like, which str.splitlines splits at.
_LINE_END: Final = re.compile(r"\r\n|\r|\n")


class Event(NamedTuple):
    """One server-sent event: its ``event`` name (``""`` if none was given) and its data."""

    name: str
    data: str


@final
class EventReader:
    """Turns a body's bytes, fed as they come, into the events they complete."""

    __slots__ = ("_data", "_decoder", "_name", "_pending", "_rest")

    def __init__(self) -> None:
        self._decoder: Final = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._rest = ""  # text after the last line end
        self._pending = False  # the text so far ended in "\r": a "\n" may follow
        self._name = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[Event]:
        """The events ``chunk`` completes, in order."""
        text = self._decoder.decode(chunk)
        if not text:
            return []  # a piece of a character, or nothing
        if self._pending and text.startswith("\n"):
            text = text[1:]  # the "\n" of a "\r\n" cut in two
        buffer = self._rest + text
        events: list[Event] = []
        start = 0
        for end in _LINE_END.finditer(buffer):
            event = self._line(buffer[start : end.start()])
            start = end.end()
            if event is not None:
                events.append(event)
        self._rest = buffer[start:]
        self._pending = bool(buffer) and not self._rest and buffer.endswith("\r")
        return events

    def _line(self, line: str) -> Event | None:
        if not line:
            if not self._data:
                self._name = ""
                return None
            event = Event(self._name, "\n".join(self._data))
            self._name, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._name = value
        return None
