"""``Hub``: a runner's MCP connections, one per server and event loop.

An async run (``arun``, ``stream``) calls a server on its own event loop: the hub keeps a
connection per server on each loop that asked for one, made there on first use, and the
run's tasks call the SDK's session directly, with no thread to cross. A sync run (no
loop) uses the hub's own loop instead, run by a daemon thread the hub starts on first
such use: the work is submitted to it (``asyncio.run_coroutine_threadsafe``) and the run
blocks until it ends. Several runs at once on one loop (or on the hub's) share its
connection.

A connection ends with its loop: ``asyncio.run`` cancels the owner task as it finishes,
and the owner leaves the client (a stdio child stopped first: ``child``); the next run,
on a new loop, connects anew. ``close`` ends
every owner still open -- on a loop running in another thread by a task sent to it, on a
stopped loop by running it in the closing thread -- and stops the hub's thread; a stdio
child whose loop closed with its owner pending, or whose owner did not end within 10
seconds, is killed (its process group). Nothing waits on a loop that cannot run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import threading
import time
from collections.abc import Coroutine, Mapping
from typing import Any, Final, TypeVar, final

from runner._mcp.connection import Answer, Connection
from runner._mcp.listed import Listing
from runner._mcp.source import MCPTools

__all__ = ["Answer", "Connection", "Hub"]

logger: Final = logging.getLogger("runner")

T = TypeVar("T")

_CLOSE_WAIT: Final = 10.0  # seconds close() waits for the connections to end
_LOOK: Final = 0.05  # seconds between close()'s looks at a loop that may end meanwhile
_NONE: Final[Mapping[int, Connection]] = {}
_CLOSING: Final[set[asyncio.Task[None]]] = set()  # closings sent to a loop, held until done


@final
class Hub:
    """The MCP connections of one runner, each made on first use, closed by ``close``."""

    __slots__ = ("_closed", "_connections", "_lock", "_loop", "_looped", "_thread")

    def __init__(self) -> None:
        self._lock: Final = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._connections: dict[int, Connection] = {}  # on the hub's loop, for sync runs
        self._looped: dict[asyncio.AbstractEventLoop, dict[int, Connection]] = {}
        self._closed = False

    def connection(self, source: MCPTools) -> Connection:
        """The connection to ``source`` on the hub's own loop, for a sync run (made, not
        yet connected, on first ask)."""
        with self._lock:
            self._check_open()
            return _made(self._connections, source)

    def on_loop(self, source: MCPTools) -> Connection:
        """The connection to ``source`` on the running event loop, for an async run (made,
        not yet connected, on first ask on that loop); ``RuntimeError`` with no loop."""
        loop = asyncio.get_running_loop()
        made = self._looped.get(loop, _NONE).get(id(source))  # the hot path takes no lock
        if made is not None and not self._closed:
            return made
        with self._lock:
            self._check_open()
            group = self._looped.get(loop)
            if group is None:  # a new loop: forget the closed ones first
                for ended in [each for each in self._looped if each.is_closed()]:
                    for connection in self._looped.pop(ended).values():
                        connection.abandon()
                group = self._looped[loop] = {}
            return _made(group, source)

    def current(self, source: MCPTools) -> Listing | None:
        """What ``source`` lists now on any of its connections (the hub's first, then each
        loop's), when one is connected and unchanged; safe from any thread, no wait."""
        with self._lock:
            made = [self._connections.get(id(source))]
            made += [group.get(id(source)) for group in self._looped.values()]
        for connection in made:
            listed = None if connection is None else connection.current()
            if listed is not None:
                return listed
        return None

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``work`` on the hub's loop (started on first use); its future."""
        try:
            loop = self._running()
        except BaseException:
            work.close()  # never awaited: closed, so no warning says so
            raise
        return asyncio.run_coroutine_threadsafe(work, loop)

    def wait(self, work: Coroutine[Any, Any, T]) -> T:
        """``work`` run on the hub's loop, the calling thread blocked until it ends."""
        return self.submit(work).result()

    def close(self) -> None:
        """Close every connection (stdio children stopped) and stop the hub's thread.

        Waits up to 10 seconds in all for the connections to end; idempotent.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
            connections = list(self._connections.values())
            looped = [(each, list(group.values())) for each, group in self._looped.items()]
            self._connections.clear()
            self._looped.clear()
        until = time.monotonic() + _CLOSE_WAIT
        for each, group in looped:
            _close_on(each, group, until)
        if loop is None or thread is None:
            return
        _close_on(loop, connections, until)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not threading.current_thread():
            thread.join(timeout=max(0.0, until - time.monotonic()))

    def _check_open(self) -> None:
        if self._closed:
            msg = "the runner's MCP connections are closed; make a new runner"
            raise RuntimeError(msg)

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            self._check_open()
            if self._loop is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()
                thread = threading.Thread(
                    target=_serve, args=(loop, started), name="hookline-mcp", daemon=True
                )
                thread.start()
                started.wait()
                self._loop, self._thread = loop, thread
            return self._loop


def _made(connections: dict[int, Connection], source: MCPTools) -> Connection:
    made = connections.get(id(source))
    if made is None:
        made = connections[id(source)] = Connection(source)
    return made


def _serve(loop: asyncio.AbstractEventLoop, started: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(started.set)
    try:
        loop.run_forever()
    finally:  # its async generators finalized, its worker threads (a sync elicit's) joined
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def _close_on(loop: asyncio.AbstractEventLoop, connections: list[Connection], until: float) -> None:
    """Close ``connections`` on their ``loop`` as it is now, by ``until`` (monotonic): the
    stdio children of those that could not close are killed."""
    if not connections:
        return
    try:
        here = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    if here is loop:  # on the loop's own thread: it cannot be waited for, it closes them
        task = loop.create_task(_close_all(connections))
        _CLOSING.add(task)
        task.add_done_callback(_CLOSING.discard)
        return
    closing = _close_all(connections)
    try:
        if loop.is_closed():
            closing.close()
        elif not loop.is_running():
            loop.run_until_complete(closing)  # stopped: run here until they closed
        else:
            _wait_for(loop, asyncio.run_coroutine_threadsafe(closing, loop), connections, until)
    except RuntimeError:
        # The loop closed, started elsewhere or ended its tasks meanwhile, or another
        # runs in this thread: whatever owner is left is abandoned below.
        if inspect.getcoroutinestate(closing) == inspect.CORO_CREATED:
            closing.close()
    except Exception:
        logger.exception("closing the MCP connections failed")
    for connection in connections:
        connection.abandon()


def _wait_for(
    loop: asyncio.AbstractEventLoop,
    closing: concurrent.futures.Future[None],
    connections: list[Connection],
    until: float,
) -> None:
    """Wait, while ``loop`` may still run them and by ``until`` at the latest, for
    ``closing`` and for the owners of ``connections`` to end (a loop that ends its tasks
    cancels ``closing``, and its owners then end on their own)."""
    while not loop.is_closed() and not (closing.done() and all(c.ended() for c in connections)):
        left = until - time.monotonic()
        if left <= 0:
            closing.cancel()
            return
        if closing.done():
            time.sleep(min(_LOOK, left))  # the owners' own ends: nothing to wait on
        else:
            concurrent.futures.wait((closing,), timeout=min(_LOOK, left))


async def _close_all(connections: list[Connection]) -> None:
    await asyncio.gather(*(connection.close() for connection in connections))
