"""Runs the server drives, as they go: their records so far and whoever watches them.

A ``Live`` run collects the JSON records of one resumed run (each hook decision as its
observer is told, the run's events when it ends) and hands each to every watcher's
queue; a watcher that joins late gets what came before first. Everything happens on the
server's event loop: no locks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Final, final

__all__ = ["Live", "LiveRuns"]

_END: Final[dict[str, Any]] = {"kind": "end"}


@final
class Live:
    """One run the server drives: its records so far, ``started`` at its first record that
    shows it going on."""

    __slots__ = ("_watchers", "done", "records", "started")

    def __init__(self) -> None:
        self.records: Final[list[dict[str, Any]]] = []
        self.started: Final = asyncio.Event()
        self.done = False
        self._watchers: Final[set[asyncio.Queue[dict[str, Any]]]] = set()

    def push(self, record: dict[str, Any], *, starts: bool = True) -> None:
        """Add ``record`` (numbered in arrival order) and hand it to every watcher;
        ``starts=False`` for a record that does not yet mean the run goes on."""
        record = record | {"seq": len(self.records)}
        self.records.append(record)
        if starts:
            self.started.set()
        for queue in self._watchers:
            queue.put_nowait(record)

    def finish(self, record: dict[str, Any]) -> None:
        """The run ended as ``record`` says; watchers get it, then the end."""
        self.push(record)
        self.done = True
        for queue in self._watchers:
            queue.put_nowait(_END)

    async def watch(self) -> AsyncIterator[dict[str, Any]]:
        """Every record so far, then each new one, until the run ends."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for record in self.records:  # no await between the copy and joining: none is lost
            queue.put_nowait(record)
        if self.done:
            queue.put_nowait(_END)
        self._watchers.add(queue)
        try:
            while (record := await queue.get()) is not _END:
                yield record
        finally:
            self._watchers.discard(queue)


@final
class LiveRuns:
    """The runs this server resumed, by run id (the latest resume of each), at most ``keep``."""

    __slots__ = ("_keep", "_runs")

    def __init__(self, keep: int = 256) -> None:
        self._keep: Final = keep
        self._runs: Final[dict[str, Live]] = {}

    def start(self, run_id: str) -> Live:
        """A new live record for ``run_id``, replacing an earlier one; the oldest ended go."""
        self._runs.pop(run_id, None)
        live = self._runs[run_id] = Live()
        for old in [key for key, run in self._runs.items() if run.done]:
            if len(self._runs) <= self._keep:
                break
            del self._runs[old]
        return live

    def get(self, run_id: str) -> Live | None:
        """The live record of ``run_id``, if this server resumed it."""
        return self._runs.get(run_id)

    def drop(self, run_id: str) -> None:
        """Forget ``run_id``'s live record (a resume that was refused)."""
        self._runs.pop(run_id, None)
