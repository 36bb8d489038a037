"""``Record``: where a run's events go, appended through one method, in order."""

from __future__ import annotations

from typing import final

from runner._events import Event

__all__ = ["Record"]


@final
class Record:
    """The events of a run, or of one of its concurrent tool calls, in the order they happened.

    Concurrent tool calls each record into their own ``Record``; the run takes them in
    the model's order once they are done (``take``).
    """

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, event: Event) -> None:
        """Record ``event``."""
        self.events.append(event)

    def take(self, other: Record) -> None:
        """Record ``other``'s events after this record's own."""
        self.events.extend(other.events)
