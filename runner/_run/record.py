"""``Record``: where a run's events go, appended through one method, in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, final

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

    __slots__ = ("add", "channel", "events")

    def __init__(self, channel: Channel | None = None) -> None:
        self.events: Final[list[Event]] = []
        self.channel: Final = channel
        # Record ``event`` (and stream it, in a streamed run). Without a stream, adding
        # is the list's own append: an event costs no call of the loop's own.
        self.add: Final[Callable[[Event], None]] = (
            self.events.append if channel is None else self._add_streamed
        )

    def _add_streamed(self, event: Event) -> None:
        self.events.append(event)
        assert self.channel is not None  # only a streamed run's record adds this way
        self.channel.push(event)

    def child(self) -> Record:
        """A record for one of several concurrent calls, streaming to the same channel."""
        return Record(self.channel)

    def take(self, other: Record) -> None:
        """Record ``other``'s events after this record's own."""
        self.events.extend(other.events)
