"""What only the SQLite store promises an inbox: other processes' pauses, damaged rows named,
0.2 files brought up to date, an indexed listing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hooks import Decision
from runner import (
    Approve,
    InMemorySessions,
    PausedRun,
    Reject,
    SQLiteSessionStore,
    load_events,
)
from runner._sessions.paused import pending_of
from runner._sessions.sqlite import store as sqlite_store
from runner._sessions.sqlite.schema import SCHEMA_VERSION
from tests.helpers import ROOT
from tests.helpers.pause_worker import runner_for


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Where the store's file goes (not made yet)."""
    return tmp_path / "sessions.db"


@pytest.fixture
def store(path: Path) -> Iterator[SQLiteSessionStore]:
    """A store in a new file, closed after the test."""
    with SQLiteSessionStore(path) as opened:
        yield opened


def pause_elsewhere(path: Path, *sessions: str) -> list[str]:
    """Pause one run per session in another process (``tests.helpers.pause_worker``); their ids."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.helpers.pause_worker", str(path), *sessions],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    *run_ids, last = done.stdout.split()
    assert last == "ok"
    return run_ids


def test_an_inbox_lists_and_resumes_the_pauses_of_another_process(
    store: SQLiteSessionStore, path: Path
) -> None:
    """Runs another process paused are listed here (by a store opened before they paused),
    with their requests; one resumed here leaves the list, its records in order."""
    assert store.list_paused() == ()
    first, second = pause_elsewhere(path, "s1", "s2")
    listed = store.list_paused()
    assert [(run.run_id, run.session_id, run.agent) for run in listed] == [
        (first, "s1", "files"),
        (second, "s2", "files"),
    ]
    assert [[request.reason for request in run.pending] for run in listed] == [
        ["delete a.txt?", "delete b.txt?"],
        ["delete a.txt?", "delete b.txt?"],
    ]
    kept = store.load_paused(first)
    assert kept is not None
    from runner import RunState

    state = RunState.from_json(kept)
    assert state.pending == listed[0].pending
    decisions: dict[str, Decision] = {
        listed[0].pending[0].id: Approve(),
        listed[0].pending[1].id: Reject("keep it"),
    }
    with runner_for(store, resuming=True) as runner:
        done = runner.resume(state, decisions)
    assert (done.status, done.output) == ("completed", "done")
    assert [run.run_id for run in store.list_paused()] == [second]
    records = store.load_records(first)
    assert records is not None
    kinds = [type(event).__name__ for event in load_events(records)]
    assert kinds[0] == "UserMessageEvent"
    assert kinds.count("PauseEvent") == 2
    assert kinds[-1] == "ModelResponseEvent"
    assert kinds.index("ToolResultEvent") > kinds.index("PauseEvent")


def damage(path: Path, statement: str) -> None:
    """Change the file as something other than hookline might."""
    with sqlite3.connect(path) as other:
        other.execute(statement)


@pytest.mark.parametrize(
    ("statement", "says"),
    [
        ("UPDATE paused SET pending = '['", r"its pending requests are not JSON"),
        ("UPDATE paused SET pending = '[] []'", r"not JSON \(text after the value at 2\)"),
        ("UPDATE paused SET pending = '{}'", r"must be a JSON array, found dict"),
        ("UPDATE paused SET pending = '[{\"id\": 1}]'", r"pending\[0\] must be an object with"),
        ("UPDATE paused SET pending = x'00ff'", r"must be JSON text, found bytes"),
        ("UPDATE paused SET agent = x'41'", r"its agent must be text, found bytes b'A'"),
        ("UPDATE paused SET user_id = x'75'", r"its user_id must be text, found bytes b'u'"),
        ("UPDATE paused SET saved = 'noon'", r"its time must be a number, found str 'noon'"),
        ("UPDATE paused SET pending = NULL", r"its state is not a RunState's JSON"),
    ],
)
def test_a_damaged_paused_row_is_an_error_naming_the_run_and_the_file(
    store: SQLiteSessionStore, path: Path, statement: str, says: str
) -> None:
    """A row changed outside hookline is refused, never skipped: the run, the file, what is
    wrong."""
    (run_id,) = pause_elsewhere(path, "s")
    damage(path, statement)
    with pytest.raises(ValueError, match=says) as raised:
        store.list_paused()
    assert str(raised.value).startswith(
        f"paused run {run_id!r} in session store {str(path)!r} is damaged: "
    )


def test_a_state_saved_by_hand_that_is_no_run_state_is_named_with_why(
    store: SQLiteSessionStore, path: Path
) -> None:
    """``save_paused`` of text that is no ``RunState``: listing says why, naming the file."""
    store.save_paused("by-hand", "u", "s", '{"step": 2}')
    with pytest.raises(
        ValueError,
        match=rf"paused run 'by-hand' in session store '{path}' is damaged: its state is not a "
        r"RunState's JSON \(.*schema",
    ):
        store.list_paused()


def test_records_that_are_no_text_are_an_error_naming_the_run_and_the_file(
    store: SQLiteSessionStore, path: Path
) -> None:
    """A records row changed to bytes is refused when read."""
    (run_id,) = pause_elsewhere(path, "s")
    damage(path, "UPDATE records SET body = x'00ff'")
    with pytest.raises(
        ValueError,
        match=rf"the records of run '{run_id}' in session store '{path}' is damaged: they must "
        r"be text, found bytes",
    ):
        store.load_records(run_id)


VERSION_1 = (
    """CREATE TABLE sessions (
        user_id TEXT NOT NULL, session_id TEXT NOT NULL,
        version INTEGER NOT NULL, length INTEGER NOT NULL, state TEXT NOT NULL,
        PRIMARY KEY (user_id, session_id)) WITHOUT ROWID""",
    """CREATE TABLE messages (
        user_id TEXT NOT NULL, session_id TEXT NOT NULL, position INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (user_id, session_id, position)) WITHOUT ROWID""",
    """CREATE TABLE leases (
        user_id TEXT NOT NULL, session_id TEXT NOT NULL,
        owner TEXT NOT NULL, expires REAL NOT NULL,
        PRIMARY KEY (user_id, session_id)) WITHOUT ROWID""",
    """CREATE TABLE paused (
        run_id TEXT PRIMARY KEY NOT NULL,
        user_id TEXT NOT NULL, session_id TEXT NOT NULL, state TEXT NOT NULL) WITHOUT ROWID""",
    "CREATE INDEX paused_by_session ON paused (user_id, session_id)",
    "CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO meta (name, value) VALUES ('forgotten', 0)",
    "PRAGMA application_id = 1751870574",
    "PRAGMA user_version = 1",
)


def test_a_0_2_file_is_brought_to_the_new_schema_with_its_paused_runs_listed(path: Path) -> None:
    """A file hookline 0.2 wrote (schema 1) opens as schema 2: its paused runs are listed
    (time 0: before any later pause) with their agent and requests, and it keeps records."""
    memory = InMemorySessions()
    with runner_for(memory) as runner:
        paused = runner.run("clean up", user_id="u", session_id="s")
    state = memory.load_paused(paused.run_id)
    with sqlite3.connect(path) as old:
        for statement in VERSION_1:
            old.execute(statement)
        old.execute("INSERT INTO paused VALUES (?, 'u', 's', ?)", (paused.run_id, state))
    with SQLiteSessionStore(path) as store:
        assert store.list_paused() == (
            PausedRun(
                run_id=paused.run_id,
                user_id="u",
                session_id="s",
                agent="files",
                time=0.0,
                pending=paused.pending,
            ),
        )
        assert store.load_paused(paused.run_id) == state
        later = runner_for(store).run("again", user_id="u", session_id="t")
        assert [run.run_id for run in store.list_paused()] == [paused.run_id, later.run_id]
        assert store.load_records(later.run_id) is not None
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_listing_paused_runs_reads_the_time_index(store: SQLiteSessionStore, path: Path) -> None:
    """The listing walks the index by time: no sort of the table, no full state read."""
    with sqlite3.connect(path) as other:
        plan = other.execute(
            "EXPLAIN QUERY PLAN SELECT run_id, user_id, session_id, saved, agent, pending "
            "FROM paused ORDER BY saved, run_id LIMIT 10"
        ).fetchall()
    text = " ".join(str(row) for row in plan)
    assert "paused_by_time" in text
    assert "TEMP B-TREE" not in text


def test_a_listing_sees_a_run_paused_again_and_damage_done_since_the_last(
    store: SQLiteSessionStore, path: Path
) -> None:
    """A run paused again with other requests is listed with the new ones; a row damaged
    after a listing is refused at the next one."""
    memory = InMemorySessions()
    with runner_for(memory) as runner:
        first = runner.run("clean up", user_id="u", session_id="s")
    with runner_for(memory) as runner:
        other = runner.run("clean up more", user_id="u", session_id="t")
    assert first.pending != other.pending
    store.save_paused("r1", "u", "s", first.state.to_json())
    assert [run.pending for run in store.list_paused()] == [first.pending]
    store.save_paused("r1", "u", "s", other.state.to_json())
    assert [run.pending for run in store.list_paused()] == [other.pending]
    assert [run.pending for run in store.list_paused(limit=1)] == [other.pending]
    damage(path, "UPDATE paused SET pending = '[{}]'")
    with pytest.raises(ValueError, match=r"paused run 'r1' in session store .* is damaged"):
        store.list_paused()


class Lines:
    """A run's records as a run hands them over: text that ``jsonl`` gives."""

    def __init__(self, text: str) -> None:
        self.text = text

    def jsonl(self) -> str:
        return self.text


def test_records_appended_to_records_that_are_no_text_are_refused_and_nothing_written(
    path: Path,
) -> None:
    """A resumed run's records after kept ones that are bytes: refused, the row as it was."""
    with SQLiteSessionStore(path, keep_records=3) as store:
        assert store.keep_records == 3
        store.save_records("r", "u", "s", Lines("one\n"))
        store.save_records("r", "u", "s", Lines("two\n"))
        assert store.load_records("r") == "one\ntwo\n"
        damage(path, "UPDATE records SET body = x'00ff'")
        with pytest.raises(
            ValueError,
            match=rf"^the records of run 'r' in session store '{path}' is damaged: they must be "
            r"text, found bytes b'\\x00\\xff'$",
        ):
            store.save_records("r", "u", "s", Lines("three\n"))
        store.save_records("other", "u", "s", Lines("kept\n"))
        assert store.load_records("other") == "kept\n"
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT body FROM records WHERE run_id = 'r'").fetchall() == [
            (b"\x00\xff",)
        ]


def test_a_paused_row_whose_id_is_no_text_is_an_error_naming_the_file(
    store: SQLiteSessionStore, path: Path
) -> None:
    """The run cannot be named: the message says its id is what it found."""
    store.save_paused("r", "u", "s", '{"step": 2}')
    damage(path, "UPDATE paused SET run_id = x'72'")
    with pytest.raises(
        ValueError,
        match=rf"^a paused run in session store '{path}' is damaged: its id is bytes b'r'$",
    ):
        store.list_paused()


def test_a_file_another_application_marked_is_refused_naming_both_ids(path: Path) -> None:
    """A SQLite file with another ``application_id`` is refused and left as it was."""
    with sqlite3.connect(path) as other:
        other.execute("PRAGMA application_id = 42")
        other.execute("PRAGMA user_version = 2")
    with pytest.raises(
        ValueError,
        match=rf"^session store '{path}' is a SQLite database of another application "
        r"\(application_id 0x2a, expected hookline's 0x686b6c6e\)$",
    ):
        SQLiteSessionStore(path)
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA application_id").fetchone() == (42,)
        assert other.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)


def test_a_0_2_file_s_damaged_paused_run_is_kept_and_named_when_listed(path: Path) -> None:
    """Upgrading schema 1 keeps a paused run whose state is not a ``RunState``; listing
    names it, loading gives its state back as it was."""
    with sqlite3.connect(path) as old:
        for statement in VERSION_1:
            old.execute(statement)
        old.execute("INSERT INTO paused VALUES ('bad', 'u', 's', 'not json')")
    with SQLiteSessionStore(path) as store:
        with pytest.raises(
            ValueError,
            match=rf"^paused run 'bad' in session store '{path}' is damaged: its state is not "
            r"a RunState's JSON",
        ):
            store.list_paused()
        assert store.load_paused("bad") == "not json"
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


@pytest.mark.parametrize(("bound", "reads"), [(100, 2), (1, 4)], ids=["within", "past"])
def test_a_bounded_listing_remembers_read_requests_only_up_to_the_bound(
    store: SQLiteSessionStore, monkeypatch: pytest.MonkeyPatch, bound: int, reads: int
) -> None:
    """Listings with a limit reuse the requests read before while the store remembers at
    most its bound of runs; past it every listing reads them again."""
    memory = InMemorySessions()
    with runner_for(memory) as runner:
        paused = runner.run("clean up", user_id="u", session_id="s")
    state = memory.load_paused(paused.run_id)
    assert state is not None
    store.save_paused("a", "u", "s", state)
    store.save_paused("b", "u", "t", state)
    calls: list[str] = []

    def counting(text: object, run_id: str, where: str) -> Any:
        calls.append(run_id)
        return pending_of(text, run_id, where)

    monkeypatch.setattr(sqlite_store, "_KNOWN_MAX", bound)
    monkeypatch.setattr(sqlite_store, "pending_of", counting)
    for _ in range(2):
        listed = store.list_paused(limit=2)
        assert [run.pending for run in listed] == [paused.pending, paused.pending]
    assert len(calls) == reads
