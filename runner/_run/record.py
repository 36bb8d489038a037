"""``Record``: where a run's events go, appended through one method, in order."""

from __future__ import annotations

from typing import final

from runner._events import Event
from runner._streaming.channel import Channel

__all__ = ["Record"]


@final
class Record:
    """The events of a run, or of one of its concurrent tool calls, in the order they happened.

    Concurrent tool calls each record into their own ``Record``; the run takes them in
    the model's order once they are done (``take``). In a streamed run every event also
    goes to the ``channel`` as it is recorded, so the stream shows them as they happen.
    """

    __slots__ = ("channel", "events")

    def __init__(self, channel: Channel | None = None) -> None:
        self.events: list[Event] = []
        self.channel = channel

    def add(self, event: Event) -> None:
        """Record ``event`` (and stream it, in a streamed run)."""
        self.events.append(event)
        if self.channel is not None:
            self.channel.push(event)

    def child(self) -> Record:
        """A record for one of several concurrent calls, streaming to the same channel."""
        return Record(self.channel)

    def take(self, other: Record) -> None:
        """Record ``other``'s events after this record's own."""
        self.events.extend(other.events)
