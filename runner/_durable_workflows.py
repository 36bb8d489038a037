"""The DBOS side of a ``DurableRunner``: its two workflows, and how a run starts, waits, queues.

A run is the workflow ``hookline:{name}`` (``Runner.run``'s loop, driven without an
event loop) or ``hookline:{name}:async`` (``run_async``'s), keyed by the run id. Its
body: load the session (a step), run the loop on a ``DbosEngine`` (every attempt a
step), save the session (a step), return the ``RunResult`` stored as bytes. An error
that fails the run is stored too, raised as a ``StoredError`` DBOS records, and
rebuilt for the caller. A recovered run executes the same body again: the steps that
ended are read off the record, so it goes on from the step that was under way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final, final

from dbos import DBOS, SetWorkflowID, WorkflowHandle, WorkflowHandleAsync, WorkflowStatus
from dbos import error as dbos_errors

from hooks import Message
from runner._drive import complete
from runner._durable_codec import StoredError, dump, load, stored
from runner._durable_engine import DbosEngine
from runner._events import RunResult
from runner._sessions import Session, SessionStore

if TYPE_CHECKING:
    from runner._runner import Runner

__all__ = ["Workflows"]


@final
class Workflows:
    """The workflows of one ``DurableRunner``, registered with DBOS under its name."""

    __slots__ = ("_async", "_sync", "async_name", "name")

    def __init__(self, name: str, runner: Runner) -> None:
        self.name: Final = f"hookline:{name}"
        self.async_name: Final = f"hookline:{name}:async"

        def run(message: Message, user_id: str, session_id: str | None) -> bytes:
            return complete(_body(runner, message, user_id, session_id, is_async=False))

        async def run_async(message: Message, user_id: str, session_id: str | None) -> bytes:
            return await _body(runner, message, user_id, session_id, is_async=True)

        self._sync: Final = DBOS.workflow(name=self.name)(run)
        self._async: Final = DBOS.workflow(name=self.async_name)(run_async)

    def run(self, run_id: str, message: Message, user_id: str, session_id: str | None) -> RunResult:
        """Start run ``run_id``, or wait for it if it exists; its result, or its error raised."""
        if self._exists(DBOS.get_workflow_status(run_id)):
            return self.result(run_id)
        with SetWorkflowID(run_id):
            return _result(lambda: self._sync(message, user_id, session_id))

    async def run_async(
        self, run_id: str, message: Message, user_id: str, session_id: str | None
    ) -> RunResult:
        """``run`` for async code, on the async workflow."""
        if self._exists(await DBOS.get_workflow_status_async(run_id)):
            return await self.result_async(run_id)
        try:
            with SetWorkflowID(run_id):
                blob = await self._async(message, user_id, session_id)
        except StoredError as failed:
            raise load(failed.blob) from None
        result: RunResult = load(blob)
        return result

    def enqueue(
        self, queue: str, run_id: str, message: Message, user_id: str, session_id: str | None
    ) -> None:
        """Put run ``run_id`` on DBOS queue ``queue``, for any process listening to it."""
        found = DBOS.retrieve_queue(queue)
        if found is None:
            msg = (
                f"no DBOS queue named {queue!r}; register it after DBOS.launch(), in the "
                f"processes that run its runs too: DBOS.register_queue({queue!r})"
            )
            raise LookupError(msg)
        with SetWorkflowID(run_id):
            found.enqueue(self._sync, message, user_id, session_id)

    def result(self, run_id: str) -> RunResult:
        """Wait for run ``run_id`` (started, queued or recovering anywhere) to end."""
        handle: WorkflowHandle[bytes] = _known(run_id, DBOS.retrieve_workflow)
        return _result(handle.get_result)

    async def result_async(self, run_id: str) -> RunResult:
        """``result`` for async code."""
        try:
            handle: WorkflowHandleAsync[bytes] = await DBOS.retrieve_workflow_async(run_id)
        except dbos_errors.DBOSNonExistentWorkflowError:
            raise _unknown(run_id) from None
        try:
            result: RunResult = load(await handle.get_result())
        except StoredError as failed:
            raise load(failed.blob) from None
        return result

    def _exists(self, status: WorkflowStatus | None) -> bool:
        """Whether the run exists (asked first: attaching to a recovering run makes DBOS warn)."""
        if status is None:
            return False
        if status.name not in (self.name, self.async_name):
            msg = (
                f"run id {status.workflow_id!r} names a run of DBOS workflow {status.name!r}, "
                f"not one of this runner's ({self.name!r}); give each run its own id"
            )
            raise ValueError(msg)
        return True


async def _body(
    runner: Runner, message: Message, user_id: str, session_id: str | None, *, is_async: bool
) -> bytes:
    """One run inside its workflow: its result stored, or what failed it stored and raised."""
    try:
        return dump(await _run(runner, message, user_id, session_id, is_async=is_async))
    except Exception as exc:
        raise stored(exc) from None


async def _run(
    runner: Runner, message: Message, user_id: str, session_id: str | None, *, is_async: bool
) -> RunResult:
    """The session loaded, the loop, the session saved: each a step or steps.

    Pause and resume (issue 11) will fit here: a paused result waits for its
    decisions with ``DBOS.recv`` (a durable wait a restart resumes), then the loop
    resumes in this same workflow, before the session is saved.
    """
    run_id = DBOS.workflow_id
    assert run_id is not None, "a durable run's body runs inside its workflow"
    engine = DbosEngine(run_id, is_async=is_async)
    session_id = engine.new_id() if session_id is None else session_id
    store = runner.sessions
    loaded = await engine.record("session load", partial(store.load, user_id, session_id))
    deferred = _Deferred(store, loaded)
    run = runner._start(
        message,
        user_id,
        session_id,
        (),
        is_async=is_async,
        run_id=run_id,
        engine=engine,
        sessions=deferred,
    )
    try:
        result = await run.run(runner.agent, message)
    finally:
        runner._finish(run)
    for name, write in deferred.writes:
        await engine.record(name, write)
    return result


@final
class _Deferred:
    """The session store a durable run's loop sees: the session as recorded, writes kept.

    The loop's load is the run's first step; its writes (the session's save, a paused
    state's) are made after the loop, each a step, so a run recovered after them
    neither writes twice nor continues a history that already holds its own turn.
    Leases are the store's own: the run takes its session's lease as its run id, the
    same on recovery.
    """

    __slots__ = ("loaded", "store", "writes")

    def __init__(self, store: SessionStore, loaded: Session) -> None:
        self.store = store
        self.loaded = loaded
        self.writes: list[tuple[str, Callable[[], object]]] = []

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The session as the run's first step recorded it."""
        return self.loaded

    def save(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Message],
        /,
        *,
        version: int,
        state: Mapping[str, Any] | None = None,
    ) -> int:
        """Keep the save for its step after the loop."""
        save = partial(self.store.save, user_id, session_id, messages, version=version, state=state)
        self.writes.append(("session save", save))
        return version + 1

    def save_paused(self, run_id: str, user_id: str, session_id: str, state_json: str, /) -> None:
        """Keep the paused state's save for its step after the loop."""
        save = partial(self.store.save_paused, run_id, user_id, session_id, state_json)
        self.writes.append(("paused save", save))

    def delete_paused(self, run_id: str, /) -> None:
        """Keep the paused state's deletion for its step after the loop."""
        self.writes.append(("paused delete", partial(self.store.delete_paused, run_id)))

    def load_paused(self, run_id: str, /) -> str | None:
        """The store's."""
        return self.store.load_paused(run_id)

    def delete(self, user_id: str, session_id: str, /) -> None:
        """The store's."""
        self.store.delete(user_id, session_id)

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """The store's."""
        self.store.acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """The store's."""
        self.store.release(user_id, session_id, owner=owner)


def _result(get: Callable[[], bytes]) -> RunResult:
    try:
        result: RunResult = load(get())
    except StoredError as failed:
        raise load(failed.blob) from None
    return result


def _known(run_id: str, retrieve: Callable[[str], Any]) -> Any:
    try:
        return retrieve(run_id)
    except dbos_errors.DBOSNonExistentWorkflowError:
        raise _unknown(run_id) from None


def _unknown(run_id: str) -> LookupError:
    return LookupError(f"no durable run {run_id!r} in DBOS's system database")
