"""What runs inside a durable run's workflow: a run, or the resume of a paused one.

Each body loads what it needs as steps (the session; for a resume, the paused state
the store keeps), runs the loop on a ``DbosEngine`` (every attempt a step), then makes
the writes the loop asked for (the session's save, a paused state's save or deletion),
each a step, and returns the ``RunResult`` stored by the runner's codec (JSON text). An
error that fails the run is stored, raised as a ``StoredError`` DBOS records, and
rebuilt for the caller. A
recovered workflow executes the same body again: the steps that ended are read off the
record, so it goes on from the step that was under way.

A paused durable run ends its workflow ``"paused"``; its state waits in the store and
in DBOS's record of that workflow (durably: for days, across deploys -- a workflow
parked on ``DBOS.recv`` would pin the application version it started on and hold a
queue slot meanwhile). ``DurableRunner.resume`` starts a workflow of its own for the
decisions, keyed by the paused state and the decisions, which a restart recovers like
any run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, final

from dbos import DBOS

from hooks import Decision, Message
from runner._durable.codec import Codec, stored
from runner._durable.engine import DbosEngine
from runner._events import RunResult
from runner._pause.runstate import RunState, decode_decision
from runner._run.resume import checked_decisions
from runner._sessions.store import RunRecords, Session, SessionStore

if TYPE_CHECKING:
    from runner._run.launch import Launcher

__all__ = ["resume_body", "run_body"]

logger = logging.getLogger("runner")


async def run_body(
    launcher: Launcher,
    message: Message,
    user_id: str,
    session_id: str | None,
    *,
    is_async: bool,
    codec: Codec,
) -> str | bytes:
    """One run inside its workflow: its result stored, or what failed it stored and raised."""
    try:
        if type(message) is not Message:  # a record's inputs are checked like any record
            msg = f"a durable run's message must be a Message, got {type(message).__name__}"
            raise TypeError(msg)
        engine = DbosEngine(_workflow_id(), is_async=is_async, codec=codec)
        return codec.dump(await _run(launcher, engine, message, user_id, session_id))
    except Exception as exc:
        raise stored(exc, codec) from None


async def resume_body(
    launcher: Launcher,
    state_json: str,
    decisions: Mapping[str, Any],
    *,
    is_async: bool,
    codec: Codec,
) -> str | bytes:
    """One resume inside its workflow: stored as ``run_body`` stores a run."""
    try:
        engine = DbosEngine(_workflow_id(), is_async=is_async, codec=codec)
        return codec.dump(await _resume(launcher, engine, state_json, decisions))
    except Exception as exc:
        raise stored(exc, codec) from None


def _workflow_id() -> str:
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None, "a durable run's body runs inside its workflow"
    return workflow_id


async def _run(
    launcher: Launcher, engine: DbosEngine, message: Message, user_id: str, session_id: str | None
) -> RunResult:
    """The session loaded, the loop, the session saved: each a step or steps."""
    run_id, is_async = engine.run_id, engine.is_async
    session_id = engine.new_id() if session_id is None else session_id
    store = launcher.sessions
    loaded = await engine.record("session load", partial(store.load, user_id, session_id))
    deferred = _Deferred(store, loaded, None)
    if is_async:  # the lease taken and given back off the loop, on a store that blocks
        run = await launcher.astart(
            message, user_id, session_id, (), run_id=run_id, engine=engine, sessions=deferred
        )
    else:
        run = launcher.start(
            message,
            user_id,
            session_id,
            (),
            is_async=False,
            run_id=run_id,
            engine=engine,
            sessions=deferred,
        )
    try:
        result = await run.run(launcher.agent, message)
    finally:  # the lease given back: off the loop in an async run, on a store that blocks
        if is_async:
            await launcher.afinish(run)
        else:
            launcher.finish(run)
    for name, write in deferred.writes:
        await engine.record(name, write)
    return result


async def _resume(
    launcher: Launcher, engine: DbosEngine, state_json: str, decisions: Mapping[str, Any]
) -> RunResult:
    """The session and the kept paused state loaded, the resumed loop, the writes: as steps."""
    state = RunState.from_json(state_json)
    decided: dict[str, Decision] = {
        key: decode_decision(value, f"decisions.{key}") for key, value in decisions.items()
    }
    state, every = checked_decisions(launcher.agent, state, decided)
    is_async = engine.is_async
    store = launcher.sessions
    user_id, session_id = state.user_id, state.session_id
    loaded = await engine.record("session load", partial(store.load, user_id, session_id))
    kept = await engine.record("paused load", partial(store.load_paused, state.run_id))
    deferred = _Deferred(store, loaded, kept)
    if is_async:
        run = await launcher.aresumed(state, every, (), engine=engine, sessions=deferred)
    else:
        run = launcher.resumed(state, every, (), is_async=False, engine=engine, sessions=deferred)
    try:
        result = await run.resume(launcher.agent, state)
    finally:  # the lease given back: off the loop in an async run, on a store that blocks
        if is_async:
            await launcher.afinish(run)
        else:
            launcher.finish(run)
    for name, write in deferred.writes:
        await engine.record(name, write)
    return result


@final
class _Deferred:
    """The session store a durable run's loop sees: what was loaded as recorded, writes kept.

    The loop's loads are the run's first steps; its writes (the session's save, a paused
    state's) are made after the loop, each a step, so a run recovered after them
    neither writes twice nor continues a history that already holds its own turn.
    Leases are the store's own: the run takes its session's lease as its run id, the
    same on recovery.
    """

    __slots__ = ("kept", "loaded", "store", "writes")

    def __init__(self, store: SessionStore, loaded: Session, kept: str | None) -> None:
        self.store = store
        self.loaded = loaded
        self.kept = kept
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

    def save_records(
        self, run_id: str, user_id: str, session_id: str, records: RunRecords, /
    ) -> None:
        """Keep the run's records' save for its step after the loop, if the store keeps
        records; the step logs a failure, as a run does: the run's outcome stands."""
        save = getattr(self.store, "save_records", None)
        if save is not None:
            self.writes.append(
                ("records save", partial(_logged, save, run_id, user_id, session_id, records))
            )

    def delete_paused(self, run_id: str, /) -> None:
        """Keep the paused state's deletion for its step after the loop."""
        self.writes.append(("paused delete", partial(self.store.delete_paused, run_id)))

    def load_paused(self, run_id: str, /) -> str | None:
        """The paused state a resume's step recorded (``None`` in a run that is no resume)."""
        return self.kept

    def delete(self, user_id: str, session_id: str, /) -> None:
        """The store's."""
        self.store.delete(user_id, session_id)

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """The store's."""
        self.store.acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """The store's."""
        self.store.release(user_id, session_id, owner=owner)


def _logged(
    save: Callable[[str, str, str, RunRecords], object],
    run_id: str,
    user_id: str,
    session_id: str,
    records: RunRecords,
) -> None:
    """``save`` the run's records; a failure is logged, never the run's."""
    try:
        save(run_id, user_id, session_id, records)
    except Exception:  # the session is saved: losing its trace fails no run
        logger.exception("could not keep the records of run %s in its session store", run_id)
