"""``Channel``: how a streamed run hands its events to the consumer, as they happen.

The run pushes each recorded event and each delta; the stream takes what waits after
every step of the run (``take``). A delta waits for room while ``limit`` items wait
untaken (a model whose pieces come from memory runs many in one step): nothing buffers
without bound, and a consumer that does not ask for the next item stops the run.
``hold`` says when a model attempt's deltas may go out (``runner._streaming.hold``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final, final

from runner._events import Event, TextDelta, ToolCallDelta

__all__ = ["Channel", "Item"]

Item = Event | TextDelta | ToolCallDelta


@final
class Channel:
    """A one-consumer queue of a run's stream items; deltas wait for room, events do not."""

    __slots__ = ("_items", "_room", "hold", "limit")

    def __init__(self, limit: int = 64, *, hold: int | None = None) -> None:
        self.limit: Final = limit
        self.hold: Final = hold  # checked_hold's reading of the stream's hold
        self._items: deque[Item] = deque()
        self._room = asyncio.Event()

    def push(self, item: Item) -> None:
        """Hand ``item`` on at once (a recorded event, or a delta when there is room)."""
        self._items.append(item)

    def has_room(self) -> bool:
        """Whether a delta can go out at once (fewer than ``limit`` items wait untaken)."""
        return len(self._items) < self.limit

    async def put(self, item: TextDelta | ToolCallDelta) -> None:
        """Hand a delta on, first waiting while ``limit`` items wait untaken."""
        while len(self._items) >= self.limit:
            self._room.clear()
            await self._room.wait()
        self._items.append(item)

    def take(self) -> list[Item]:
        """Every item waiting, in order (and room for more)."""
        if not self._items:
            return []
        items = list(self._items)
        self._items.clear()
        self._room.set()
        return items
