"""What an inbox reads from every store hookline ships: paused runs listed, run records kept.

Each test runs once per store (``InMemorySessions``, ``SQLiteSessionStore``): the
``InboxStore`` part of the contract in ``runner._sessions.store``'s docs. Across
processes, schema upgrades and damaged files: ``tests/runner/sessions/sqlite/test_inbox.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hooks import Decision
from runner import (
    Agent,
    Approve,
    InboxStore,
    InMemorySessions,
    ModelAttemptEvent,
    ModelRequest,
    PausedRun,
    Reject,
    Runner,
    RunResult,
    ScriptedModel,
    Session,
    SessionStore,
    SQLiteSessionStore,
    StreamEvent,
    ToolCall,
    ToolResult,
    inbox_store,
    load_events,
)
from tests.helpers.pause_worker import runner_for
from tests.helpers.runs import Mode, calling, drive

STORES = ("memory", "sqlite")


class Clock:
    """Stands in for the ``time`` module where the stores read the time of a pause."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def time(self) -> float:
        """Unix time, as the stores read it."""
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """A clock the test moves by hand, for both stores' pause times."""
    fake = Clock()
    monkeypatch.setattr("runner._sessions.store.time", fake)
    monkeypatch.setattr("runner._sessions.sqlite.store.time", fake)
    return fake


def make(kind: str, path: Path, **options: Any) -> InboxStore:
    """A fresh store of ``kind``, with ``options`` (``keep_records``)."""
    if kind == "memory":
        return InMemorySessions(**options)
    return SQLiteSessionStore(path / f"{len(list(path.iterdir()))}.db", **options)


@pytest.fixture(params=STORES)
def kind(request: pytest.FixtureRequest) -> str:
    """Which store the test runs on."""
    param: str = request.param
    return param


@pytest.fixture
def store(kind: str, tmp_path: Path) -> Iterator[InboxStore]:
    """Each store, fresh."""
    made = make(kind, tmp_path)
    yield made
    if isinstance(made, SQLiteSessionStore):
        made.close()


def pause(store: SessionStore, mode: Mode, session_id: str) -> RunResult:
    """A run on ``("u", session_id)`` paused on two deletes."""
    with runner_for(store) as runner:
        result = drive(runner, mode, f"clean up {session_id}", user_id="u", session_id=session_id)
    assert result.status == "paused"
    return result


def kinds(events: Sequence[StreamEvent]) -> list[str]:
    return [type(event).__name__ for event in events]


def test_paused_runs_are_listed_oldest_first_with_their_requests(
    store: InboxStore, mode: Mode, clock: Clock
) -> None:
    """Each paused run of a runner: its ids, root agent, the time it paused and its pending
    requests (the result's), oldest first; ``limit`` keeps the oldest."""
    paused: list[RunResult] = []
    for at, session in ((5.0, "b"), (7.0, "a"), (9.0, "c")):
        clock.now = at
        paused.append(pause(store, mode, session))
    listed = store.list_paused()
    assert listed == tuple(
        PausedRun(
            run_id=result.run_id,
            user_id="u",
            session_id=session,
            agent="files",
            time=at,
            pending=result.pending,
        )
        for result, session, at in zip(paused, "bac", (5.0, 7.0, 9.0), strict=True)
    )
    assert [len(run.pending) for run in listed] == [2, 2, 2]
    assert store.list_paused(limit=2) == listed[:2]
    assert store.list_paused(limit=0) == ()
    assert store.list_paused(limit=10) == listed


def test_a_resumed_run_leaves_the_list_and_one_paused_again_moves_last(
    store: InboxStore, mode: Mode, clock: Clock
) -> None:
    """A run resumed to its end is no longer listed; the state of one saved again (paused
    again) is listed at its new time."""
    clock.now = 1.0
    first = pause(store, mode, "one")
    clock.now = 2.0
    second = pause(store, mode, "two")
    clock.now = 3.0
    store.save_paused(first.run_id, "u", "one", first.state.to_json())
    assert [run.run_id for run in store.list_paused()] == [second.run_id, first.run_id]
    decisions: dict[str, Decision] = {
        second.pending[0].id: Approve(),
        second.pending[1].id: Reject("keep it"),
    }
    with runner_for(store, resuming=True) as runner:
        done = runner.resume(second.state, decisions)
    assert (done.status, done.output) == ("completed", "done")
    assert [run.run_id for run in store.list_paused()] == [first.run_id]


def test_a_bad_limit_is_refused(store: InboxStore) -> None:
    """``limit`` is ``None`` or an int >= 0: anything else is refused naming it."""
    with pytest.raises(ValueError, match="limit must be None or an int >= 0, got -1"):
        store.list_paused(limit=-1)
    with pytest.raises(TypeError, match="limit must be None or an int >= 0, got str '3'"):
        store.list_paused(limit="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limit must be None or an int >= 0, got bool True"):
        store.list_paused(limit=True)


def test_a_paused_state_that_is_no_run_state_is_an_error_naming_the_run(
    store: InboxStore,
) -> None:
    """A state saved by hand that is no ``RunState``'s JSON is never skipped: listing names
    the run and why; the state is kept as saved."""
    store.save_paused("by-hand", "u", "s", '{"step": 2}')
    with pytest.raises(ValueError, match=r"paused run 'by-hand' in .* is damaged: its state is"):
        store.list_paused()
    assert store.load_paused("by-hand") == '{"step": 2}'
    store.delete_paused("by-hand")
    assert store.list_paused() == ()


def test_a_run_keeps_its_records_in_its_store(store: InboxStore, mode: Mode) -> None:
    """A finished run's records are its events, each model attempt's request without its
    messages (its tools kept)."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "3"])

    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    with Runner(Agent("calc", model, tools=[add]), sessions=store) as runner:
        result = drive(runner, mode, "1 + 2?", user_id="u", session_id="s")
    text = store.load_records(result.run_id)
    assert text is not None
    events = load_events(text)
    assert kinds(events) == kinds(result.events)
    for kept, original in zip(events, result.events, strict=True):
        if isinstance(original, ModelAttemptEvent):
            assert kept == ModelAttemptEvent(
                agent=original.agent,
                branch=original.branch,
                time=original.time,
                request=ModelRequest((), original.request.tools),
                attempt=original.attempt,
            )
        else:
            assert kept == original
    assert store.load_records("no such run") is None


def test_a_resumed_run_s_records_follow_its_paused_part(store: InboxStore, mode: Mode) -> None:
    """The records of a run paused then resumed: the paused part's events, then the resumed
    part's, under the one run id."""
    paused = pause(store, mode, "s")
    before = store.load_records(paused.run_id)
    assert before is not None
    assert kinds(load_events(before)) == kinds(paused.events)
    decisions: dict[str, Decision] = {
        paused.pending[0].id: Approve(),
        paused.pending[1].id: Reject("no"),
    }
    with runner_for(store, resuming=True) as runner:
        resumed = runner.resume(paused.state, decisions)
    assert resumed.status == "completed"
    after = store.load_records(paused.run_id)
    assert after is not None
    assert after.startswith(before)
    assert kinds(load_events(after)) == kinds((*paused.events, *resumed.events))


def test_the_records_of_the_oldest_runs_are_dropped_past_keep_records(
    kind: str, tmp_path: Path, mode: Mode
) -> None:
    """``keep_records=2``: a third run's records drop the first run's; ``0`` keeps none."""
    store = make(kind, tmp_path, keep_records=2)
    runs = [pause(store, mode, f"s{n}") for n in range(3)]
    kept = [store.load_records(result.run_id) is not None for result in runs]
    assert kept == [False, True, True]
    none = make(kind, tmp_path, keep_records=0)
    result = pause(none, mode, "s")
    assert none.load_records(result.run_id) is None
    assert [run.run_id for run in none.list_paused()] == [result.run_id]


@pytest.mark.parametrize(
    ("value", "error"), [(-1, ValueError), ("10", TypeError), (None, TypeError)]
)
def test_a_bad_keep_records_is_refused(
    kind: str, tmp_path: Path, value: object, error: type[Exception]
) -> None:
    """``keep_records`` is an int >= 0."""
    with pytest.raises(error, match="keep_records must be an int >= 0"):
        make(kind, tmp_path, keep_records=value)


def test_deleting_a_session_forgets_its_runs_records(store: InboxStore, mode: Mode) -> None:
    """``delete`` forgets the session's records and paused runs, of a session whose only
    run paused before any save too; another session's stay."""
    gone = pause(store, mode, "gone")
    kept = pause(store, mode, "kept")
    store.delete("u", "gone")
    assert store.load_records(gone.run_id) is None
    assert store.load_records(kept.run_id) is not None
    assert [run.run_id for run in store.list_paused()] == [kept.run_id]


class OldStore:
    """A store written against 0.2's ``SessionStore``: its eight methods, no more."""

    def __init__(self) -> None:
        self.inner = InMemorySessions()

    def load(self, user_id: str, session_id: str, /) -> Session:
        return self.inner.load(user_id, session_id)

    def save(self, user_id: str, session_id: str, messages: Any, /, **kw: Any) -> int:
        return self.inner.save(user_id, session_id, messages, **kw)

    def delete(self, user_id: str, session_id: str, /) -> None:
        self.inner.delete(user_id, session_id)

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        self.inner.acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        self.inner.release(user_id, session_id, owner=owner)

    def save_paused(self, run_id: str, user_id: str, session_id: str, state: str, /) -> None:
        self.inner.save_paused(run_id, user_id, session_id, state)

    def load_paused(self, run_id: str, /) -> str | None:
        return self.inner.load_paused(run_id)

    def delete_paused(self, run_id: str, /) -> None:
        self.inner.delete_paused(run_id)


def test_a_0_2_store_still_runs_and_the_inbox_refuses_it_saying_what_it_lacks(
    mode: Mode,
) -> None:
    """A store without the inbox's methods runs, pauses and resumes as before (keeping no
    records); ``inbox_store`` refuses it naming the methods to add."""
    old = OldStore()
    assert isinstance(old, SessionStore)
    assert not isinstance(old, InboxStore)
    paused = pause(old, mode, "s")
    with runner_for(old, resuming=True) as runner:
        decisions: dict[str, Decision] = {request.id: Approve() for request in paused.pending}
        assert runner.resume(paused.state, decisions).output == "done"
    assert old.load_paused(paused.run_id) is None
    with pytest.raises(
        TypeError,
        match=r"the inbox needs an InboxStore .* got OldStore .*, which has no list_paused, "
        r"load_records, save_records; use InMemorySessions or SQLiteSessionStore",
    ):
        inbox_store(old)
    with pytest.raises(TypeError, match=r"got int 3, which has no acquire, delete"):
        inbox_store(3)
    mine = InMemorySessions()
    assert inbox_store(mine) is mine


class Failing(OldStore):
    """A store whose records cannot be kept."""

    def list_paused(self, *, limit: int | None = None) -> tuple[PausedRun, ...]:
        return self.inner.list_paused(limit=limit)

    def save_records(self, *args: Any) -> None:
        raise OSError("disk full")

    def load_records(self, run_id: str, /) -> str | None:
        return self.inner.load_records(run_id)


def test_records_that_cannot_be_kept_fail_no_run(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    """A store failing to keep a run's records: the run ends as it would, the failure is
    logged naming the run."""
    store = Failing()
    with caplog.at_level(logging.ERROR, logger="runner"):
        paused = pause(store, mode, "s")
    assert [run.run_id for run in store.list_paused()] == [paused.run_id]
    assert f"could not keep the records of run {paused.run_id}" in caplog.text
    assert "disk full" in caplog.text


def test_a_store_keeps_records_it_is_handed_and_reads_them_once_asked(store: InboxStore) -> None:
    """``save_records`` of a record object: the store reads its JSON lines (when it saves or
    when asked) and appends a run's later records."""

    class Lines:
        def __init__(self, text: str) -> None:
            self.text = text

        def jsonl(self) -> str:
            return self.text

    store.save_records("r1", "u", "s", Lines('{"a":1}\n'))
    store.save_records("r2", "u", "s", Lines("x\n"))
    store.save_records("r1", "u", "s", Lines('{"b":2}\n'))
    assert store.load_records("r1") == '{"a":1}\n{"b":2}\n'
    assert store.load_records("r2") == "x\n"


def test_records_with_no_json_form_are_named_when_read_from_memory(mode: Mode) -> None:
    """The in-memory store writes a run's records when read: a tool result holding a set
    is a ``TypeError`` naming the run and the value (SQLite, which writes them at the
    save, logs it then: ``test_records_that_cannot_be_kept_fail_no_run``)."""

    def tags() -> ToolResult:
        """Tags, as a set."""
        return ToolResult("tags", structured={"tags": {"a"}})

    model = ScriptedModel([calling(ToolCall("c1", "tags", {})), "ok"])
    store = InMemorySessions()
    with Runner(Agent("tagger", model, tools=[tags]), sessions=store) as runner:
        result = drive(runner, mode, "tags?", user_id="u", session_id="s")
    with pytest.raises(
        TypeError,
        match=rf"the records of run '{result.run_id}' in InMemorySessions cannot be written: "
        r"run records: cannot hold events\[\d+\] = ToolResultEvent",
    ):
        store.load_records(result.run_id)
