"""Tests of ``runner._run.offload``: an async run's calls into a store that blocks are made
off the event loop.

Another connection holds the SQLite file's write lock (``BEGIN IMMEDIATE``) while an
``arun``, ``aresume`` or ``stream`` on that file goes on: a heartbeat task on the loop
keeps ticking while the store's write waits for the lock in a worker thread, and only
the heartbeat lets the lock go -- on a loop the store blocked, the heartbeat could never
run and the store's write would time out. Cancelled while a store call runs, a run
waits for the call, then gives its lease back: no lease is left held, no save half
made. ``InMemorySessions`` says its calls do not block: they stay on the loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest

from hooks import Cont, PausableResult, Pause
from runner import (
    Agent,
    Approve,
    InMemorySessions,
    ModelRequest,
    ModelResponse,
    Runner,
    RunResult,
    ScriptedModel,
    Session,
    SQLiteSessionStore,
    StreamEvent,
    ToolCall,
    ToolContext,
    ToolResult,
)
from runner._run.offload import OffLoop, blocks
from tests.helpers.runs import LeasesAndPauses, Mode, calling, drive

T = TypeVar("T")

TICKS = 20  # heartbeats the loop runs while the store's write waits for the lock
WRITES = ("INSERT", "UPDATE", "DELETE", "BEGIN IMMEDIATE")


class Locked:
    """A store on a SQLite file, another connection that can hold the file's write lock,
    and what the store's connection ran: each statement's thread."""

    def __init__(self, path: Path) -> None:
        # Long enough that the store never gives up before the test lets the lock go.
        self.store = SQLiteSessionStore(path, timeout=30.0)
        self.other = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        self.held = False
        self.waiting = threading.Event()  # a store write started while the lock was held
        self.threads: list[int] = []
        db = self.store._db  # pyright: ignore[reportPrivateUsage]
        assert db is not None
        db.set_trace_callback(self._traced)

    def _traced(self, statement: str) -> None:
        self.threads.append(threading.get_ident())
        if self.held and statement.startswith(WRITES):
            self.waiting.set()

    def hold(self) -> None:
        """Take the file's write lock on the other connection."""
        self.other.execute("BEGIN IMMEDIATE")
        self.held = True

    def let_go(self) -> None:
        """End the other connection's transaction: the store's write goes on."""
        self.held = False
        self.other.execute("COMMIT")

    def leases(self) -> list[tuple[Any, ...]]:
        """The lease rows the file holds, read on the other connection."""
        return self.other.execute("SELECT * FROM leases").fetchall()

    def close(self) -> None:
        self.other.close()
        self.store.close()


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Locked]:
    """A SQLite store whose file another connection can lock."""
    opened = Locked(tmp_path / "sessions.db")
    yield opened
    opened.close()


async def while_locked(locked: Locked, work: Awaitable[T]) -> tuple[T, int]:
    """``work`` run with the file's write lock held by another connection until the store
    waits for it and the loop has run ``TICKS`` heartbeats meanwhile; what ``work``
    gave, and the heartbeats that ran while it was under way and the lock held."""
    locked.hold()
    task = asyncio.ensure_future(work)
    try:
        while not locked.waiting.is_set() and not task.done():
            await asyncio.sleep(0)  # the store's thread has yet to reach the lock
        ticks = 0
        for _ in range(TICKS):
            await asyncio.sleep(0)
            if not task.done() and locked.held:
                ticks += 1
    finally:
        locked.let_go()
    return await task, ticks


def answers(text: str = "hi") -> Agent:
    return Agent("a", ScriptedModel([text]))


def test_arun_leaves_the_loop_running_while_the_store_waits_for_a_lock(locked: Locked) -> None:
    """An arun waits for another connection's write lock in a worker thread: the loop's
    heartbeat runs meanwhile, and every statement of the run ran off the loop."""
    # A lease this short is renewed at every model step: the renewal goes off the loop too.
    runner = Runner(answers(), sessions=locked.store, session_lease=1e-9)

    async def main() -> tuple[RunResult, int, int]:
        result, ticks = await while_locked(locked, runner.arun("hello", session_id="s"))
        return result, ticks, threading.get_ident()

    result, ticks, loop_thread = asyncio.run(main())
    assert (result.status, result.output, ticks) == ("completed", "hi", TICKS)
    assert locked.threads
    assert loop_thread not in locked.threads
    assert [m.content for m in locked.store.load("user", "s").messages] == ["hello", "hi"]
    assert locked.leases() == []


def test_aresume_leaves_the_loop_running_while_the_store_waits_for_a_lock(
    locked: Locked,
) -> None:
    """An aresume's store calls wait for another connection's lock off the loop."""

    def remove(path: str) -> str:
        """Remove a file."""
        return f"removed {path}"

    class Guard:
        def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
            return Pause("remove?") if ctx.decision is None else Cont(ctx)

    model = ScriptedModel([calling(ToolCall("c1", "remove", {"path": "x"})), "done"])
    runner = Runner(Agent("a", model, tools=[remove]), sessions=locked.store, callbacks=[Guard()])

    async def main() -> tuple[RunResult, int, int]:
        paused = await runner.arun("tidy", session_id="s")
        assert paused.status == "paused"
        locked.threads.clear()
        decisions = {request.id: Approve() for request in paused.pending}
        result, ticks = await while_locked(locked, runner.aresume(paused.state, decisions))
        return result, ticks, threading.get_ident()

    result, ticks, loop_thread = asyncio.run(main())
    assert (result.status, result.output, ticks) == ("completed", "done", TICKS)
    assert locked.threads
    assert loop_thread not in locked.threads
    assert locked.leases() == []


def test_stream_leaves_the_loop_running_while_the_store_waits_for_a_lock(
    locked: Locked,
) -> None:
    """A streamed run's store calls wait for another connection's lock off the loop."""
    runner = Runner(answers(), sessions=locked.store)

    async def consume() -> list[StreamEvent]:
        return [event async for event in runner.stream("hello", session_id="s")]

    async def main() -> tuple[list[StreamEvent], int, int]:
        events, ticks = await while_locked(locked, consume())
        return events, ticks, threading.get_ident()

    events, ticks, loop_thread = asyncio.run(main())
    assert (type(events[-1]).__name__, ticks) == ("RunFinishedEvent", TICKS)
    assert locked.threads
    assert loop_thread not in locked.threads
    assert [m.content for m in locked.store.load("user", "s").messages] == ["hello", "hi"]


def test_a_run_cancelled_while_taking_its_lease_leaves_no_lease(locked: Locked) -> None:
    """Cancelled while its lease waits for a lock in a thread, an arun waits for the call to
    end, then gives the lease back: the session is free for the next run."""
    runner = Runner(answers(), sessions=locked.store)

    async def main() -> bool:
        locked.hold()
        task = asyncio.ensure_future(runner.arun("hello", session_id="s"))
        try:
            while not locked.waiting.is_set():
                await asyncio.sleep(0)
            task.cancel()
            for _ in range(TICKS):
                await asyncio.sleep(0)
            waited = not task.done()  # the lease's call still runs: the run waits for it
        finally:
            locked.let_go()
        with pytest.raises(asyncio.CancelledError):
            await task
        return waited

    assert asyncio.run(main())
    assert locked.leases() == []
    assert locked.store.load("user", "s") == Session((), 0)
    assert asyncio.run(runner.arun("again", session_id="s")).status == "completed"


def test_a_run_cancelled_while_saving_saves_whole_and_leaves_no_lease(locked: Locked) -> None:
    """Cancelled while its save waits for a lock in a thread, an arun lets the save end --
    the whole turn stored, in one transaction -- and gives its lease back."""

    class LockingModel:
        """Answers, the file locked by the other connection as it does (before the save)."""

        async def generate(self, request: ModelRequest, /) -> ModelResponse:
            locked.hold()
            return ModelResponse("hi")

    runner = Runner(Agent("a", LockingModel()), sessions=locked.store)

    async def main() -> None:
        task = asyncio.ensure_future(runner.arun("hello", session_id="s"))
        try:
            while not locked.waiting.is_set():
                await asyncio.sleep(0)
            task.cancel()
            for _ in range(TICKS):
                await asyncio.sleep(0)
        finally:
            locked.let_go()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    session = locked.store.load("user", "s")
    assert ([m.content for m in session.messages], session.version) == (["hello", "hi"], 1)
    assert locked.leases() == []


class Recording(LeasesAndPauses):
    """A store in memory that records the thread of each call; says nothing of blocking."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = InMemorySessions()
        self.threads: list[int] = []

    def load(self, user_id: str, session_id: str, /) -> Session:
        self.threads.append(threading.get_ident())
        return self.inner.load(user_id, session_id)

    def save(
        self, user_id: str, session_id: str, messages: Any, /, *, version: int, state: Any = None
    ) -> int:
        self.threads.append(threading.get_ident())
        return self.inner.save(user_id, session_id, messages, version=version, state=state)

    def delete(self, user_id: str, session_id: str, /) -> None:
        self.inner.delete(user_id, session_id)

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        self.threads.append(threading.get_ident())
        super().acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        self.threads.append(threading.get_ident())
        super().release(user_id, session_id, owner=owner)


class NotBlocking(Recording):
    """The same store, saying its calls do not block."""

    blocks: ClassVar[bool] = False


class SaysNo(Recording):
    """The same store, saying something that is not ``False`` about blocking."""

    blocks: ClassVar[object] = 0


def threads_of(store: Recording, mode: Mode) -> tuple[set[int], int]:
    """The threads ``store``'s calls ran in during a run in ``mode`` (a lease taken, a
    load, a save, a release), and the thread the run was driven from."""
    runner = Runner(answers(), sessions=store)
    if mode == "sync":
        drive(runner, mode, "hello", session_id="s")
        return set(store.threads), threading.get_ident()

    async def main() -> int:
        await runner.arun("hello", session_id="s")
        return threading.get_ident()

    driver = asyncio.run(main())
    assert len(store.threads) == 4
    return set(store.threads), driver


@pytest.mark.parametrize("store", [Recording, SaysNo])
def test_an_async_run_calls_a_store_that_may_block_in_another_thread(
    store: Callable[[], Recording],
) -> None:
    """A store that does not say its calls do not block is called off the loop."""
    threads, loop_thread = threads_of(store(), "async")
    assert loop_thread not in threads


def test_an_async_run_calls_a_store_that_does_not_block_on_the_loop() -> None:
    """A store whose ``blocks`` is ``False`` is called on the loop, every call."""
    assert threads_of(NotBlocking(), "async") == ({threading.get_ident()}, threading.get_ident())


def test_a_sync_run_calls_any_store_in_its_own_thread() -> None:
    """A sync run makes every store call in the thread that runs it, as before."""
    assert threads_of(Recording(), "sync") == ({threading.get_ident()}, threading.get_ident())


@pytest.mark.parametrize(
    ("store", "expected"),
    [(InMemorySessions, False), (SQLiteSessionStore, True), (LeasesAndPauses, True)],
)
def test_what_each_store_says_of_blocking(store: type[object], expected: bool) -> None:
    """The in-memory store's calls do not block; SQLite's do; a store that says nothing may."""
    assert blocks(store) is expected


def test_the_runners_store_pool_is_shut_with_the_runner(locked: Locked) -> None:
    """Closing a runner after async runs on a store that blocks ends the store's threads."""
    before = set(threading.enumerate())
    runner = Runner(answers(), sessions=locked.store)
    asyncio.run(runner.arun("hello", session_id="s"))
    made = [t for t in set(threading.enumerate()) - before if t.name.startswith("hookline-store")]
    assert made
    runner.close()
    for thread in made:
        thread.join()  # returns: the pool was shut, its idle threads end


def test_the_sessions_are_the_same_after_runs_on_and_off_the_loop(locked: Locked) -> None:
    """Store calls off the loop change nothing a run sees: a session grown by sync and async
    turns holds every turn in order."""
    runner = Runner(Agent("a", ScriptedModel(["one", "two", "three"])), sessions=locked.store)
    drive(runner, "sync", "1", session_id="s")
    drive(runner, "async", "2", session_id="s")
    drive(runner, "sync", "3", session_id="s")
    messages = locked.store.load("user", "s").messages
    assert [(m.role, m.content) for m in messages] == [
        ("user", "1"),
        ("assistant", "one"),
        ("user", "2"),
        ("assistant", "two"),
        ("user", "3"),
        ("assistant", "three"),
    ]


def offload_on_one_thread() -> tuple[OffLoop, ThreadPoolExecutor]:
    """An ``OffLoop`` on a pool of one thread, and the pool."""
    pool = ThreadPoolExecutor(max_workers=1)
    return OffLoop(lambda: pool), pool


def test_a_call_cancelled_while_queued_never_runs() -> None:
    """A call still waiting for a thread when its caller is cancelled is never made."""
    offload, pool = offload_on_one_thread()
    gate = threading.Event()
    made: list[str] = []

    async def main() -> None:
        busy = asyncio.ensure_future(offload.call(gate.wait))  # holds the only thread
        queued = asyncio.ensure_future(offload.call(made.append, "queued"))
        await asyncio.sleep(0)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        gate.set()
        assert await busy is True

    asyncio.run(main())
    pool.shutdown(wait=True)
    assert made == []


def test_a_call_cancelled_while_running_ends_before_its_caller_does() -> None:
    """A caller cancelled (twice) while its call runs waits for the call's end, then raises
    ``CancelledError``; what the call raised meanwhile is dropped."""
    offload, pool = offload_on_one_thread()
    started, gate = threading.Event(), threading.Event()
    ended: list[str] = []

    def call() -> None:
        started.set()
        gate.wait()
        ended.append("ended")
        raise ValueError("dropped")

    async def main() -> bool:
        caller = asyncio.ensure_future(offload.call(call))
        while not started.is_set():
            await asyncio.sleep(0)
        caller.cancel()
        await asyncio.sleep(0)
        caller.cancel()
        for _ in range(TICKS):
            await asyncio.sleep(0)
        waiting = not caller.done()
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await caller
        return waiting

    assert asyncio.run(main())
    pool.shutdown(wait=True)
    assert ended == ["ended"]


@pytest.mark.parametrize("raised", [ValueError("no"), KeyError("k")])
def test_a_call_gives_its_value_or_raises_its_error_in_the_callers_context(
    raised: Exception,
) -> None:
    """A call's value comes back, its error is raised as it was, and it sees the caller's
    context variables."""
    offload, pool = offload_on_one_thread()
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen")

    def failing() -> None:
        raise raised

    async def main() -> str:
        seen.set("caller's")
        with pytest.raises(type(raised)) as caught:
            await offload.call(failing)
        assert caught.value is raised
        return await offload.call(seen.get)

    assert asyncio.run(main()) == "caller's"
    pool.shutdown(wait=True)


class Failing(Recording):
    """A store that may block, whose load or save raises."""

    def __init__(self, failing: str) -> None:
        super().__init__()
        self.failing = failing

    def load(self, user_id: str, session_id: str, /) -> Session:
        if self.failing == "load":
            raise ValueError("damaged")
        return super().load(user_id, session_id)

    def save(
        self, user_id: str, session_id: str, messages: Any, /, *, version: int, state: Any = None
    ) -> int:
        if self.failing == "save":
            raise ValueError("disk full")
        return super().save(user_id, session_id, messages, version=version, state=state)


@pytest.mark.parametrize(("failing", "message"), [("load", "damaged"), ("save", "disk full")])
def test_a_store_error_off_the_loop_is_the_runs_and_the_lease_is_given_back(
    failing: str, message: str
) -> None:
    """A load or save that raises in its thread fails the async run with that error, and the
    run gives its lease back: the session is free for the next run."""
    store = Failing(failing)
    runner = Runner(Agent("a", ScriptedModel(default="hi")), sessions=store)
    with pytest.raises(ValueError, match=message):
        asyncio.run(runner.arun("hello", session_id="s"))
    assert len(store.leases) == 0
    store.failing = ""
    assert asyncio.run(runner.arun("again", session_id="s")).status == "completed"
