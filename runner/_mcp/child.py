"""``Child``: a stdio MCP server's process, as the SDK's transport started it.

The SDK stops its server when the connection's owner leaves the client (stdin closed,
then terminated, then killed), shielded from anyio's cancellation but not from a native
``task.cancel()``: ``asyncio.run`` cancels every task as it finishes, and one that lands
inside that stop cuts it short, the process left running and the SDK's reader waiting
for its output to end -- for ever. So the owner stops the server itself first (``stop``:
its stdin closed, its exit awaited, a cancel meanwhile held off, killed after 2
seconds); the SDK's stop then finds it ended. ``end`` kills one still running after
all, and ``kill`` one whose owner never ends (its loop closed with it pending).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import signal
from typing import Any, Final, final

__all__ = ["Child"]

logger: Final = logging.getLogger("runner")

_KILL_WAIT: Final = 2.0  # seconds a killed server is given to die
_STOP_WAIT: Final = 2.0  # seconds a server is given to exit once its stdin closed


@final
class Child:
    """The server process of an entered stdio transport: its ``pid``, and the SDK's
    process object, read from the transport's generator frame."""

    __slots__ = ("_process", "pid")

    def __init__(self, pid: int, process: object) -> None:
        self.pid: Final = pid
        self._process: Final = process

    @staticmethod
    def of(transport: object) -> Child | None:
        """The process the SDK's entered stdio ``transport`` started (its generator's
        frame holds it); ``None`` when there is none to read."""
        frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
        process: object = None if frame is None else frame.f_locals.get("process")
        pid: object = getattr(process, "pid", None)
        return Child(pid, process) if type(pid) is int else None

    def running(self) -> bool:
        """Whether the process has not been seen to end (its exit not yet collected)."""
        return getattr(self._process, "returncode", 0) is None

    async def stop(self) -> None:
        """Close the server's stdin and wait for it to exit, killing it after 2 seconds; a
        cancel that comes meanwhile is held until it has ended, then raised."""
        process: Any = getattr(self._process, "_process", None)  # asyncio's, under anyio's
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(Exception):  # closed already
            process.stdin.close()
        loop = asyncio.get_running_loop()
        until, killed, cancelled = loop.time() + _STOP_WAIT, False, False
        exited: asyncio.Task[int] = loop.create_task(process.wait())
        try:
            while process.returncode is None:  # set by the loop's child watcher
                left = until - loop.time()
                if left <= 0:
                    if killed:  # not even a kill ends it: the SDK's own stop goes on
                        break
                    self.kill()
                    until, killed = loop.time() + _KILL_WAIT, True
                    continue
                if exited.done():  # cancelled as its loop ends: wait again
                    exited = loop.create_task(process.wait())
                try:
                    await asyncio.wait((exited,), timeout=left)
                except asyncio.CancelledError:
                    cancelled = True  # held: a server left running would hang the SDK's stop
        finally:
            exited.cancel()
        if cancelled:
            raise asyncio.CancelledError

    def end(self, server: str) -> None:
        """Kill the process if it still runs (the SDK's stop was cut short), and close the
        transport the SDK left open; on the loop the process was started on."""
        if not self.running():
            return
        logger.warning(
            "MCP server %r: its stop was cut short; killing process %d", server, self.pid
        )
        self.kill()
        asyncio_process: object = getattr(self._process, "_process", None)
        transport: object = getattr(asyncio_process, "_transport", None)
        close: object = getattr(transport, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # its loop may be closing: the kill did it
                close()

    def kill(self) -> None:
        """Kill the process and its group, and wait (2 seconds at most) until it has died
        where the system can tell (a Linux pidfd); safe from any thread."""
        try:
            dying: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # gone already, or no pidfd here: nothing to wait on
            dying = None
        try:
            # OSError: it has ended already; AttributeError: no process groups (Windows,
            # where the SDK's job object ends the server with this process)
            with contextlib.suppress(OSError, AttributeError):
                os.killpg(self.pid, signal.SIGKILL)
            if dying is not None:
                select.select([dying], [], [], _KILL_WAIT)
        finally:
            if dying is not None:
                os.close(dying)
