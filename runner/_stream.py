"""``Channel``: how a streamed run hands its events to the consumer, as they happen.

The run pushes each recorded event (never blocking: a step records a handful) and
puts each delta (waiting while ``limit`` items wait unread: a slow consumer slows the
model's stream, so nothing buffers without bound). The consumer takes what waits in
batches (one wake-up per batch, not per delta) until the run closes the channel.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final, final

from runner._events import Event, TextDelta, ToolCallDelta

__all__ = ["Channel"]

Item = Event | TextDelta | ToolCallDelta


@final
class Channel:
    """A one-consumer queue of a run's stream items; deltas wait for room, events do not."""

    __slots__ = ("_closed", "_items", "_ready", "_room", "limit")

    def __init__(self, limit: int = 64) -> None:
        self.limit: Final = limit
        self._items: deque[Item] = deque()
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._closed = False

    def push(self, item: Item) -> None:
        """Hand ``item`` on at once (a recorded event)."""
        self._items.append(item)
        self._ready.set()

    def has_room(self) -> bool:
        """Whether a delta can go out at once (fewer than ``limit`` items wait unread)."""
        return len(self._items) < self.limit

    async def put(self, item: TextDelta | ToolCallDelta) -> None:
        """Hand a delta on, first waiting while ``limit`` items wait unread."""
        while len(self._items) >= self.limit:
            self._room.clear()
            await self._room.wait()
        self.push(item)

    def close(self) -> None:
        """No more items: iteration ends once the waiting ones are read."""
        self._closed = True
        self._ready.set()

    async def batch(self) -> list[Item]:
        """Every item waiting, in order, once there is one; ``[]`` once closed and read."""
        while not self._items:
            if self._closed:
                return []
            self._ready.clear()
            await self._ready.wait()
        items = list(self._items)
        self._items.clear()
        self._room.set()
        return items
