"""Tests of ``runner._sessions.sqlite.store``: what only the SQLite store promises.

The shared store suite covers the rest.

One file holds everything and outlives the store that wrote it; its schema is checked
when opened; WAL mode; a turn writes only what it adds; the store is safe across
threads and across processes (two processes racing on one session: one wins and
nothing is lost; a process killed mid-run leaves a session another one continues
once the lease has expired). The tests that count writes or statements watch what the
store sends to SQLite on purpose, on the connection it opened (caught as
``sqlite3.connect`` makes it): they pin the append-per-turn cost model.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

import pytest

from runner import (
    Agent,
    Message,
    Runner,
    ScriptedModel,
    Session,
    SessionBusy,
    SessionConflict,
    SQLiteSessionStore,
    ToolCall,
    Transcript,
)
from runner._sessions.sqlite.schema import SCHEMA_VERSION, _into_wal  # pyright: ignore[reportPrivateUsage]
from tests.helpers import ROOT, runs
from tests.helpers.runs import Mode, calling, drive


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """Where the store's file goes (not made yet)."""
    return tmp_path / "sessions.db"


class Opened(NamedTuple):
    """A store and the SQLite connection it opened."""

    store: SQLiteSessionStore
    db: sqlite3.Connection


def open_store(path: Path, **options: Any) -> Opened:
    """A store on ``path`` (``options`` as ``SQLiteSessionStore`` takes them) and the
    connection it opened, caught as ``sqlite3.connect`` made it."""
    made: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def recording(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        made.append(connect(*args, **kwargs))
        return made[-1]

    with mock.patch.object(sqlite3, "connect", recording):
        store = SQLiteSessionStore(path, **options)
    [db] = made
    return Opened(store, db)


def statements_of(db: sqlite3.Connection, call: Callable[[], object]) -> list[str]:
    """The SQL statements run on the store's connection ``db`` during ``call``."""
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    try:
        call()
    finally:
        db.set_trace_callback(None)
    return statements


@pytest.fixture
def opened(path: Path) -> Iterator[Opened]:
    """A store in a new file and its connection; the store is closed after the test."""
    made = open_store(path)
    with made.store:
        yield made


@pytest.fixture
def store(opened: Opened) -> SQLiteSessionStore:
    """A store in a new file, closed after the test."""
    return opened.store


@pytest.fixture
def db(opened: Opened) -> sqlite3.Connection:
    """The connection ``store`` opened on its file."""
    return opened.db


def turn(question: str, answer: str) -> tuple[Message, Message]:
    """A user message and the assistant's answer to it."""
    return Message("user", question), Message("assistant", answer)


def history(n: int) -> tuple[Message, ...]:
    """``n`` messages: user and assistant taking turns."""
    return tuple(Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(n))


# -- one file ------------------------------------------------------------------------------


def test_a_new_instance_reads_what_another_wrote(path: Path) -> None:
    """Sessions, state and paused runs outlive the store: a new instance reads them."""
    with SQLiteSessionStore(path) as first:
        first.save("u", "s", turn("a", "b"), version=0, state={"n": 1})
        first.save_paused("r1", "u", "s", '{"paused": true}')
    with SQLiteSessionStore(str(path)) as second:
        assert second.load("u", "s") == Session(turn("a", "b"), 1, {"n": 1})
        assert second.load_paused("r1") == '{"paused": true}'


def test_the_file_is_in_wal_mode(store: SQLiteSessionStore, path: Path) -> None:
    """The store puts its file in WAL mode, where reads never wait for a writer."""
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_the_file_carries_its_schema_version(store: SQLiteSessionStore, path: Path) -> None:
    """The file says which schema it holds."""
    with sqlite3.connect(path) as other:
        assert other.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


@pytest.mark.parametrize(("version", "writer"), [(SCHEMA_VERSION + 1, "newer"), (0, "older")])
def test_a_file_of_another_schema_version_is_refused(
    store: SQLiteSessionStore, path: Path, version: int, writer: str
) -> None:
    """A file another version of hookline wrote is refused, naming the file and both versions."""
    store.close()
    with sqlite3.connect(path) as other:
        other.execute(f"PRAGMA user_version = {version}")
    expected = (
        f"^session store '{path}' has schema version {version}, written by an? {writer} "
        f"hookline; this hookline reads schema version {SCHEMA_VERSION} only$"
    )
    with pytest.raises(ValueError, match=expected):
        SQLiteSessionStore(path)


def test_another_applications_database_is_refused(path: Path) -> None:
    """A SQLite file with tables hookline did not make is refused, and left as it was."""
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(ValueError, match="is a SQLite database of another application"):
        SQLiteSessionStore(path)
    with sqlite3.connect(path) as other:
        tables = other.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("invoices",)]


def test_a_file_that_is_no_database_is_refused_naming_it(path: Path) -> None:
    """A text file is no store: SQLite's error says so, with a note naming the file."""
    path.write_text("not a database, " * 100)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        SQLiteSessionStore(path)
    assert (
        str(caught.value) == f"cannot open the session store {str(path)!r}: file is not a database"
    )


def test_an_error_without_sqlite_codes_is_named_without_them(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``DatabaseError`` made in Python (no SQLite codes) is raised naming the file, of
    its class, with no codes made up; one SQLite raised keeps its codes."""

    def failing(db: sqlite3.Connection, timeout: float) -> None:
        raise sqlite3.OperationalError("disk gone")

    monkeypatch.setattr("runner._sessions.sqlite.schema._into_wal", failing)
    with pytest.raises(sqlite3.OperationalError) as caught:
        SQLiteSessionStore(path)
    assert str(caught.value) == f"cannot open the session store {str(path)!r}: disk gone"
    assert not hasattr(caught.value, "sqlite_errorcode")
    assert not hasattr(caught.value, "sqlite_errorname")
    monkeypatch.undo()
    path.write_text("not a database, " * 100)
    with pytest.raises(sqlite3.DatabaseError) as native:
        SQLiteSessionStore(path)
    assert native.value.sqlite_errorcode == sqlite3.SQLITE_NOTADB
    assert native.value.sqlite_errorname == "SQLITE_NOTADB"


class LockedAtFirst:
    """A connection whose ``PRAGMA journal_mode=WAL`` fails ``times`` times with ``code``, as
    SQLite's does while another process is making the file (it does not wait then)."""

    def __init__(self, times: int, code: int = sqlite3.SQLITE_BUSY) -> None:
        self.times = times
        self.code = code
        self.tries = 0

    def execute(self, sql: str) -> None:
        """Fail the first ``times`` calls, then succeed."""
        assert sql == "PRAGMA journal_mode=WAL"
        self.tries += 1
        if self.tries <= self.times:
            error = sqlite3.OperationalError("database is locked")
            error.sqlite_errorcode = self.code
            raise error


def test_a_file_another_process_is_making_is_waited_for() -> None:
    """Going into WAL mode is tried again while SQLite says the file is busy."""
    db = LockedAtFirst(times=3)
    _into_wal(db, 5.0)  # type: ignore[arg-type]
    assert db.tries == 4


class PassingTime:
    """Stands in for the ``time`` module of ``_sqlite_schema``: each sleep moves the clock."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        """The clock, moved only by ``sleep``."""
        return self.now

    def sleep(self, seconds: float) -> None:
        """Move the clock instead of waiting."""
        self.slept.append(seconds)
        self.now += seconds


def test_a_file_busy_past_the_timeout_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file still busy when the timeout has passed raises SQLite's error: tried until the
    clock passed the deadline, pausing 5 ms between tries, and not once after it."""
    clock = PassingTime()
    monkeypatch.setattr("runner._sessions.sqlite.schema.time", clock)
    db = LockedAtFirst(times=1_000)
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        _into_wal(db, 0.05)  # type: ignore[arg-type]
    assert clock.slept == [0.005] * len(clock.slept)
    assert clock.now - 100.0 == pytest.approx(0.05, abs=0.005)
    assert db.tries == len(clock.slept) + 1


def test_another_error_going_into_wal_mode_is_not_retried() -> None:
    """Only a busy file is waited for: any other error is raised at once."""
    db = LockedAtFirst(times=1, code=sqlite3.SQLITE_IOERR)
    with pytest.raises(sqlite3.OperationalError):
        _into_wal(db, 5.0)  # type: ignore[arg-type]
    assert db.tries == 1


def test_a_bad_message_in_the_file_is_named_when_loaded(store: SQLiteSessionStore) -> None:
    """A hand-edited message that is no message fails the load naming the session, the file
    and the field."""
    store.save("u", "s", turn("a", "b"), version=0)
    with sqlite3.connect(store.path) as other:
        other.execute('UPDATE messages SET body = \'{"role": "robot", "content": ""}\'')
    bad = (
        rf"^session 's' of user 'u' in session store {re.escape(repr(store.path))} holds a bad "
        r"message: messages\[0\]\.role must be one of"
    )
    with SQLiteSessionStore(store.path) as fresh, pytest.raises(ValueError, match=bad):
        fresh.load("u", "s")


# -- a damaged file is refused, never read short ----------------------------------------


def damaged(store: SQLiteSessionStore) -> str:
    """The start of the error for session ``s`` of user ``u`` in ``store``'s file, as a regex."""
    return rf"^session 's' of user 'u' in session store {re.escape(repr(store.path))} is damaged: "


def edit(store: SQLiteSessionStore, *statements: str) -> None:
    """Change ``store``'s file by hand, from another connection, as a user or a bad disk might."""
    with sqlite3.connect(store.path) as other:
        for statement in statements:
            other.execute(statement)


def rows(store: SQLiteSessionStore) -> list[tuple[object, ...]]:
    """Every message row of ``store``'s file, by position."""
    with sqlite3.connect(store.path) as other:
        return other.execute("SELECT position, body FROM messages ORDER BY position").fetchall()


def test_a_session_with_a_row_missing_is_refused_naming_it_and_the_file(
    store: SQLiteSessionStore,
) -> None:
    """Row 3 of 10 deleted: the load refuses the session instead of returning nine messages,
    and the next save deletes nothing (the intact last answer stays)."""
    store.save("u", "s", history(10), version=0)
    edit(store, "DELETE FROM messages WHERE position = 3")
    before = rows(store)
    with SQLiteSessionStore(store.path) as fresh:
        with pytest.raises(
            ValueError,
            match=damaged(store) + r"it holds 10 messages, at "
            r"positions 0 to 9, but message 3 is missing \(found position 4 ",
        ):
            fresh.load("u", "s")
        short = (*history(10)[:3], *history(10)[4:], *turn("q", "a"))
        with pytest.raises(ValueError, match=damaged(store) + "it holds 10 messages, so 10 "):
            fresh.save("u", "s", short, version=1)
    assert rows(store) == before


def test_a_session_with_a_row_too_many_or_the_last_missing_is_refused(
    store: SQLiteSessionStore,
) -> None:
    """The rows must be exactly as many as the session's row counts: one short at the end or
    one past the end are refused too."""
    store.save("u", "s", history(4), version=0)
    edit(store, "DELETE FROM messages WHERE position = 3")
    with (
        SQLiteSessionStore(store.path) as fresh,
        pytest.raises(
            ValueError, match=damaged(store) + r".*has 3 message rows \(message 3 is missing\)"
        ),
    ):
        fresh.load("u", "s")
    edit(
        store,
        "INSERT INTO messages SELECT user_id, session_id, 3, body FROM messages WHERE position = 1",
        "INSERT INTO messages SELECT user_id, session_id, 4, body FROM messages WHERE position = 0",
    )
    with (
        SQLiteSessionStore(store.path) as fresh,
        pytest.raises(
            ValueError,
            match=damaged(store) + "it holds 4 messages, but the file has 5 message rows",
        ),
    ):
        fresh.load("u", "s")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            "UPDATE sessions SET version = 'abc'",
            "its version must be an integer >= 1, found str 'abc'",
        ),
        (
            "UPDATE sessions SET version = 1.5",
            "its version must be an integer >= 1, found float 1.5",
        ),
        ("UPDATE sessions SET length = 'x'", "its length must be an integer >= 0, found str 'x'"),
        (
            "UPDATE sessions SET state = 'not json'",
            "its state must be a JSON object, found 'not json'",
        ),
        ("UPDATE sessions SET state = '[1, 2]'", "its state must be a JSON object, found list"),
        (
            "UPDATE sessions SET state = X'ff00'",
            r"its state must be UTF-8 text, found b'\\xff\\x00' \(invalid start byte\)",
        ),
        ("UPDATE sessions SET state = CAST(X'7b22e9223a317d' AS TEXT)", "its state must be UTF-8"),
        (
            "UPDATE messages SET body = X'ff' WHERE position = 1",
            r"messages\[1\] must be UTF-8 text, found b'\\xff'",
        ),
        (
            "UPDATE messages SET body = 'not json' WHERE position = 1",
            r"holds a bad message: messages\[1\] is not JSON",
        ),
        (
            "UPDATE messages SET body = '[' || replace(hex(zeroblob(5000)), '00', '[') "
            "WHERE position = 1",
            r"holds a bad message: messages\[1\] is not JSON",
        ),
        (
            "UPDATE messages SET position = 'one' WHERE position = 1",
            r"message 1 is missing \(found position 'one' in its place\)",
        ),
    ],
)
def test_a_field_the_file_holds_damaged_is_refused_naming_session_and_file(
    store: SQLiteSessionStore, change: str, words: str
) -> None:
    """Each field hookline did not write as it reads it fails the load with a ``ValueError``
    naming the session, the file, what was expected and what was found."""
    store.save("u", "s", turn("a", "b"), version=0, state={"n": 1})
    edit(store, change)
    expected = rf"^session 's' of user 'u' in session store {re.escape(repr(store.path))} .*{words}"
    with SQLiteSessionStore(store.path) as fresh, pytest.raises(ValueError, match=expected):
        fresh.load("u", "s")


def test_a_paused_state_that_is_not_utf8_is_refused_naming_run_and_file(
    store: SQLiteSessionStore,
) -> None:
    """A paused run's state that is not UTF-8 text fails ``load_paused`` naming the run and
    the file; one that is text comes back as saved."""
    store.save_paused("r1", "u", "s", '{"é": 1}')
    assert store.load_paused("r1") == '{"é": 1}'
    edit(store, "UPDATE paused SET state = CAST(X'7b22ff22' AS TEXT)")
    expected = (
        rf"^paused run 'r1' in session store {re.escape(repr(store.path))} is damaged: its "
        r"state must be UTF-8 text, found b'\{\"\\xff\"' \(invalid start byte\)"
    )
    with pytest.raises(ValueError, match=expected):
        store.load_paused("r1")


def test_a_save_never_deletes_a_row_it_did_not_read(store: SQLiteSessionStore) -> None:
    """A row added by hand after the store read the session is not deleted by a save that
    replaces the last message: the save is refused and the file is left as it was."""
    store.save("u", "s", history(4), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    edit(store, 'INSERT INTO messages VALUES (\'u\', \'s\', 4, \'{"role":"user","content":"x"}\')')
    before = rows(store)
    replaced = loaded.messages.prefix(3).append(Message("assistant", "replaced"))
    with pytest.raises(ValueError, match=damaged(store) + r"it holds 4 messages, so 1 message"):
        store.save("u", "s", replaced, version=loaded.version)
    assert rows(store) == before


def test_a_session_whose_length_changed_under_its_version_is_refused_on_save(
    store: SQLiteSessionStore,
) -> None:
    """A session's row counted again by hand at the same version: the store's save is refused,
    as the file no longer holds what the store read."""
    store.save("u", "s", history(4), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    edit(
        store,
        "UPDATE sessions SET length = 5",
        'INSERT INTO messages VALUES (\'u\', \'s\', 4, \'{"role":"user","content":"x"}\')',
    )
    before = rows(store)
    with pytest.raises(ValueError, match=damaged(store) + "it holds 5 messages, but 4 were read"):
        store.save("u", "s", loaded.messages.extend(turn("q", "a")), version=loaded.version)
    assert rows(store) == before


def test_a_session_whose_length_changed_under_its_version_is_read_again(
    store: SQLiteSessionStore,
) -> None:
    """A kept transcript is handed back only if the file still counts as many messages."""
    store.save("u", "s", history(4), version=0)
    store.load("u", "s")
    edit(store, "UPDATE sessions SET length = 5")
    with pytest.raises(ValueError, match=damaged(store) + r".*\(message 4 is missing\)"):
        store.load("u", "s")


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM messages WHERE position = 1",
        "UPDATE sessions SET version = 'abc'",
        "DELETE FROM sessions",  # its message rows left behind
    ],
)
def test_a_damaged_session_is_deleted_and_made_again(
    store: SQLiteSessionStore, damage: str
) -> None:
    """``delete`` forgets a damaged session, its stray rows and all: the session starts
    again (above the version it had, when that was intact), and other sessions keep
    theirs."""
    store.save("u", "s", history(3), version=0)
    store.save("u", "s", history(4), version=1)
    store.save("u", "other", history(2), version=0)
    edit(
        store,
        f"{damage} AND session_id = 's'"
        if "WHERE" in damage
        else damage + " WHERE session_id = 's'",
    )
    with SQLiteSessionStore(store.path) as fresh:
        fresh.delete("u", "s")
        assert fresh.load("u", "s") == Session((), 0)
        version = fresh.save("u", "s", turn("a", "b"), version=0)
        assert fresh.load("u", "s") == Session(turn("a", "b"), version)
        if "messages" in damage:  # the version was intact: the new one starts above it
            assert version == 3
        assert fresh.load("u", "other") == Session(history(2), 1)


def test_a_forgotten_count_that_is_no_integer_is_refused_naming_the_file(
    store: SQLiteSessionStore,
) -> None:
    """The file's count of forgotten versions, hand-edited to text: a new session's save is
    refused naming the file and what it found, and nothing is written."""
    edit(store, "UPDATE meta SET value = 'x' WHERE name = 'forgotten'")
    expected = (
        rf"^session store {re.escape(repr(store.path))} is damaged: meta 'forgotten' must be "
        r"an integer, found str 'x'$"
    )
    with pytest.raises(ValueError, match=expected):
        store.save("u", "s", turn("a", "b"), version=0)
    assert rows(store) == []


def test_a_run_on_a_damaged_session_fails_and_writes_nothing(
    store: SQLiteSessionStore, mode: Mode
) -> None:
    """A run on a session the file holds damaged fails with the load's error, saves nothing and
    leaves the session free for the next run."""
    store.save("u", "s", history(10), version=0)
    edit(store, "DELETE FROM messages WHERE position = 3")
    before = rows(store)
    refused = pytest.raises(ValueError, match=damaged(store) + ".*message 3 is missing")
    agent = Agent("assistant", ScriptedModel(default="ok"))
    with SQLiteSessionStore(store.path) as fresh:
        with Runner(agent, sessions=fresh) as runner, refused:
            drive(runner, mode, "hi", user_id="u", session_id="s")
        fresh.acquire("u", "s", owner="next", ttl=1)
    assert rows(store) == before


def test_a_file_sqlite_cannot_open_is_refused_naming_it(tmp_path: Path) -> None:
    """A path in a folder that does not exist: SQLite's error, with the file named in it."""
    missing = tmp_path / "no such folder" / "sessions.db"
    with pytest.raises(sqlite3.OperationalError) as caught:
        SQLiteSessionStore(missing)
    assert str(caught.value) == (
        f"cannot open the session store {str(missing)!r}: unable to open database file"
    )


def test_a_message_json_cannot_hold_is_refused_naming_it(store: SQLiteSessionStore) -> None:
    """A tool call whose arguments JSON cannot hold fails the save; nothing is stored."""
    bad = Message("assistant", "", tool_calls=(ToolCall("c1", "tag", {"tags": {"x"}}),))
    with pytest.raises(TypeError, match=r"^message 1 of session 's' of user 'u' cannot be stored"):
        store.save("u", "s", (Message("user", "a"), bad), version=0)
    assert store.load("u", "s") == Session((), 0)


def test_a_closed_store_refuses_every_call(store: SQLiteSessionStore) -> None:
    """After ``close`` each call raises a ``RuntimeError`` naming the store; closing twice is
    fine."""
    store.close()
    store.close()
    assert store.closed
    with pytest.raises(RuntimeError, match=r"^SQLiteSessionStore\('.*sessions.db'\) is closed"):
        store.load("u", "s")
    with pytest.raises(RuntimeError, match="is closed"):
        store.acquire("u", "s", owner="o", ttl=1)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"path": 3}, TypeError, "path must be a str or os.PathLike, got int 3"),
        ({"timeout": -1}, ValueError, "timeout must be a finite number >= 0, got -1"),
        ({"cache_sessions": 0}, ValueError, "cache_sessions must be a positive int, got 0"),
    ],
)
def test_bad_arguments_are_refused(
    path: Path, kwargs: dict[str, object], error: type[Exception], words: str
) -> None:
    """Each argument is checked when the store is made, and named in the error."""
    arguments: dict[str, object] = {"path": path, **kwargs}
    with pytest.raises(error, match=f"^{words}"):
        SQLiteSessionStore(**arguments)  # type: ignore[arg-type]


# -- an append per turn ----------------------------------------------------------------


def test_a_turn_appends_its_messages_and_rewrites_nothing(
    store: SQLiteSessionStore, db: sqlite3.Connection
) -> None:
    """At 10,000 messages, a turn of two writes two message rows and the session's row."""
    store.save("u", "s", history(10_000), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    before = db.total_changes
    store.save("u", "s", loaded.messages.extend(turn("q", "a")), version=loaded.version)
    assert db.total_changes - before == 3
    assert tuple(store.load("u", "s").messages) == (*history(10_000), *turn("q", "a"))


def test_a_replaced_last_message_rewrites_that_message_only(
    store: SQLiteSessionStore, db: sqlite3.Connection
) -> None:
    """A run that replaced its last message deletes one row and writes one (and the session's)."""
    store.save("u", "s", history(1_000), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    replaced = loaded.messages.prefix(999).append(Message("assistant", "replaced"))
    before = db.total_changes
    store.save("u", "s", replaced, version=loaded.version)
    assert db.total_changes - before == 3
    assert tuple(store.load("u", "s").messages) == (*history(999), Message("assistant", "replaced"))


def test_a_runner_turn_writes_only_what_it_adds(
    store: SQLiteSessionStore, db: sqlite3.Connection, mode: Mode
) -> None:
    """A whole run at 10,000 messages: the lease, two messages, the session's row, the run's
    records, the release."""
    store.save("u", "s", history(10_000), version=0)
    store.load("u", "s")  # as a previous turn of this process would have
    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        before = db.total_changes
        drive(runner, mode, "hi", user_id="u", session_id="s")
    assert db.total_changes - before == 6
    assert len(store.load("u", "s").messages) == 10_002


def test_an_unchanged_session_loads_with_one_query(
    store: SQLiteSessionStore, db: sqlite3.Connection
) -> None:
    """A session the store loaded or saved, unchanged since, costs one small query to load."""
    store.save("u", "s", history(1_000), version=0)
    loaded: list[Session] = []
    statements = statements_of(db, lambda: loaded.append(store.load("u", "s")))
    assert len(loaded[0].messages) == 1_000
    assert len(statements) == 1
    assert statements[0].startswith("SELECT version, length, CAST(state AS BLOB) FROM sessions")


def test_a_save_by_another_process_is_read_in_full(path: Path) -> None:
    """A session another store saved since is read again from the file, not from memory."""
    with SQLiteSessionStore(path) as mine, SQLiteSessionStore(path) as theirs:
        mine.save("u", "s", turn("a", "b"), version=0)
        seen = theirs.load("u", "s")
        assert isinstance(seen.messages, Transcript)
        theirs.save("u", "s", seen.messages.extend(turn("c", "d")), version=seen.version)
        assert mine.load("u", "s") == Session((*turn("a", "b"), *turn("c", "d")), 2)
        with pytest.raises(SessionConflict):  # mine's kept transcript is no excuse
            mine.save("u", "s", turn("x", "y"), version=1)


def test_the_kept_transcripts_are_bounded(path: Path) -> None:
    """``cache_sessions`` bounds what the store keeps in memory; sessions still load in full."""
    with SQLiteSessionStore(path, cache_sessions=2) as store:
        for n in range(5):
            store.save("u", f"s{n}", turn(str(n), "ok"), version=0)
        assert [store.load("u", f"s{n}").messages for n in range(5)] == [
            turn(str(n), "ok") for n in range(5)
        ]


# -- threads --------------------------------------------------------------------------


def test_runs_on_many_threads_share_one_store(store: SQLiteSessionStore) -> None:
    """Eight threads, each running five turns on its own session through one store and runner."""
    model = ScriptedModel(default="ok")
    barrier = threading.Barrier(8)

    def chat(n: int) -> None:
        barrier.wait()
        for k in range(5):
            runner.run(f"{n}.{k}", user_id="u", session_id=f"s{n}")

    with Runner(Agent("assistant", model), sessions=store) as runner, ThreadPoolExecutor(8) as pool:
        list(pool.map(chat, range(8)))
    for n in range(8):
        expected = [m for k in range(5) for m in turn(f"{n}.{k}", "ok")]
        assert store.load("u", f"s{n}") == Session(expected, 5)


# -- processes ------------------------------------------------------------------------


def start_workers(db: Path, *arguments: list[str]) -> list[subprocess.Popen[str]]:
    """One ``tests.helpers.sqlite_worker`` process per argument list, started together once
    all are ready.

    A worker prints ``ready`` and nothing more until its go file exists, so ``ready`` is all
    the pipe holds when it is read: the line read after it (``finish``) must not arrive
    with it, as ``communicate`` reads the pipe itself and never sees what ``readline``
    buffered beyond its line.
    """
    go = db.with_name(f"go-{uuid.uuid4().hex}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.sqlite_worker", str(db), *args, str(go)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        for args in arguments
    ]
    for worker in workers:
        assert worker.stdout is not None
        assert worker.stdout.readline() == "ready\n"
    go.touch()
    return workers


def finish(worker: subprocess.Popen[str]) -> tuple[int, str]:
    """The worker's exit code and its last line.

    Read through ``worker.stdout`` itself: ``readline`` in ``start_workers`` may have
    buffered the line after ``ready`` already, which ``communicate`` (reading the pipe
    underneath) would miss.
    """
    assert worker.stdout is not None
    code = worker.wait(timeout=60)
    with worker.stdout as out:
        return code, out.read().strip()


def worker_turn(message: str) -> tuple[Message, ...]:
    """The four messages a worker's completed turn adds to the session."""
    call = ToolCall("c1", "hold", {})
    return (
        Message("user", message),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "held", tool_call_id="c1", name="hold"),
        Message("assistant", f"done: {message}"),
    )


@pytest.mark.subprocess
def test_processes_racing_on_one_session_one_wins_nothing_lost(tmp_path: Path) -> None:
    """Four processes run one session at once on a new file: one wins, three are told it is
    busy before they load; run again one by one, each turn lands whole and in order."""
    db = tmp_path / "race.db"
    names = [f"p{n}" for n in range(4)]
    workers = start_workers(db, *([name, "--hold", "1.0"] for name in names))
    outcomes = [finish(worker) for worker in workers]
    assert all(code == 0 for code, _ in outcomes)
    lines = [line for _, line in outcomes]
    assert lines.count("ok") == 1
    assert sum(line.startswith("busy ") for line in lines) == 3
    winner = names[lines.index("ok")]
    with SQLiteSessionStore(db) as store:
        assert store.load("u", "s") == Session(worker_turn(winner), 1)
    losers = [name for name in names if name != winner]
    for name in losers:
        (again,) = start_workers(db, [name])
        assert finish(again) == (0, "ok")
    with SQLiteSessionStore(db) as store:
        expected = [m for name in (winner, *losers) for m in worker_turn(name)]
        assert store.load("u", "s") == Session(expected, 4)


@pytest.mark.subprocess
def test_a_killed_process_leaves_a_session_another_continues(tmp_path: Path) -> None:
    """A process that dies mid-run (``os._exit``) keeps the session busy until its lease
    expires; then another process continues it, and nothing of the dead run was saved.
    (The later processes read the lease clock ahead instead of waiting for it.)"""
    db = tmp_path / "killed.db"
    (first,) = start_workers(db, ["first"])
    assert finish(first) == (0, "ok")
    (dying,) = start_workers(db, ["dying", "--die", "--lease", "60"])
    assert finish(dying) == (3, "")
    with SQLiteSessionStore(db) as store, pytest.raises(SessionBusy) as caught:
        store.acquire("u", "s", owner="too-early", ttl=1)
    assert caught.value.holder != "too-early"  # the dead run's id
    (too_soon,) = start_workers(db, ["too_soon", "--later", "30"])
    assert finish(too_soon) == (0, f"busy {caught.value.holder}")
    (later,) = start_workers(db, ["later", "--later", "61"])  # the lease has expired
    assert finish(later) == (0, "ok")
    with SQLiteSessionStore(db) as store:
        session = store.load("u", "s")
    assert session.messages == (*worker_turn("first"), *worker_turn("later"))


@pytest.mark.subprocess
def test_stores_in_two_processes_conflict_instead_of_losing_a_turn(
    store: SQLiteSessionStore, path: Path
) -> None:
    """A save from another process since this store loaded: this store's save is refused."""
    loaded = store.load("u", "s")
    code = (
        "from runner import SQLiteSessionStore, Message\n"
        f"with SQLiteSessionStore({str(path)!r}) as other:\n"
        "    other.save('u', 's', [Message('user', 'theirs')], version=0)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT, timeout=60)
    with pytest.raises(SessionConflict):
        store.save("u", "s", [Message("user", "mine")], version=loaded.version)
    assert store.load("u", "s").messages == (Message("user", "theirs"),)


@pytest.mark.subprocess
def test_a_paused_state_is_seen_by_another_process(store: SQLiteSessionStore) -> None:
    """A paused run's state saved by one process is read by another."""
    store.save_paused("r1", "u", "s", '{"step": 2}')
    code = (
        "from runner import SQLiteSessionStore\n"
        f"with SQLiteSessionStore({store.path!r}) as other:\n"
        "    print(other.load_paused('r1'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert done.stdout == '{"step": 2}\n'


def test_a_runner_over_sqlite_continues_a_conversation(
    store: SQLiteSessionStore, mode: Mode
) -> None:
    """Runs on a SQLite store continue one conversation, tool calls and all."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "3", "again"])
    with Runner(Agent("assistant", model, tools=[runs.add]), sessions=store) as runner:
        drive(runner, mode, "1 + 2?", user_id="u", session_id="s")
        drive(runner, mode, "again", user_id="u", session_id="s")
    with SQLiteSessionStore(store.path) as fresh:
        messages = fresh.load("u", "s").messages
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert messages[1].tool_calls == (ToolCall("c1", "add", {"a": 1, "b": 2}),)
    assert model.requests[-1].messages == tuple(messages[:5])


# -- what the file holds and what the store keeps (mutation-test hardening) ----------------


def test_messages_and_state_are_stored_as_compact_utf8_json(store: SQLiteSessionStore) -> None:
    """The file holds each message and the state as compact JSON, non-ASCII text as is."""
    store.save("u", "s", (Message("user", "héllo"),), version=0, state={"k": ["é", 1]})
    with sqlite3.connect(store.path) as other:
        assert other.execute("SELECT body FROM messages").fetchall() == [
            ('{"role":"user","content":"héllo"}',)
        ]
        assert other.execute("SELECT state FROM sessions").fetchall() == [('{"k":["é",1]}',)]


def test_an_append_deletes_no_message_row(
    store: SQLiteSessionStore, db: sqlite3.Connection
) -> None:
    """A save that only adds messages runs no DELETE: the file's rows are kept as they are."""
    store.save("u", "s", turn("a", "b"), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    grown = loaded.messages.extend(turn("c", "d"))
    run = statements_of(db, lambda: store.save("u", "s", grown, version=loaded.version))
    assert not [sql for sql in run if sql.startswith("DELETE")]


def test_a_session_read_from_the_file_is_appended_to_not_rewritten(path: Path) -> None:
    """A store that read a session another wrote then saves a turn writes that turn only."""
    with SQLiteSessionStore(path) as writer:
        writer.save("u", "s", history(100), version=0)
    store, db = open_store(path)
    with store:
        loaded = store.load("u", "s")
        assert isinstance(loaded.messages, Transcript)
        before = db.total_changes
        store.save("u", "s", loaded.messages.extend(turn("q", "a")), version=loaded.version)
        assert db.total_changes - before == 3
        assert len(statements_of(db, lambda: store.load("u", "s"))) == 1


@pytest.mark.parametrize("how", ["read", "saved"])
def test_the_least_recently_used_session_leaves_the_memory_first(path: Path, how: str) -> None:
    """Past ``cache_sessions`` the session used longest ago is dropped, the newest kept."""
    with SQLiteSessionStore(path) as writer:
        for name in ("s0", "s1"):
            writer.save("u", name, turn(name, "ok"), version=0)
    store, db = open_store(path, cache_sessions=1)
    with store:
        if how == "read":
            store.load("u", "s0")
            store.load("u", "s1")
        else:
            store.save("u", "s0", turn("s0", "again"), version=1)
            store.save("u", "s1", turn("s1", "again"), version=1)
        assert len(statements_of(db, lambda: store.load("u", "s1"))) == 1
        assert len(statements_of(db, lambda: store.load("u", "s0"))) > 1


def test_the_kept_sessions_fill_up_to_cache_sessions(path: Path) -> None:
    """Up to ``cache_sessions`` sessions read from the file are kept: each loads in one query."""
    with SQLiteSessionStore(path) as writer:
        for name in ("s0", "s1"):
            writer.save("u", name, turn(name, "ok"), version=0)
    store, db = open_store(path, cache_sessions=2)
    with store:
        store.load("u", "s0")
        store.load("u", "s1")
        assert len(statements_of(db, lambda: store.load("u", "s0"))) == 1
        assert len(statements_of(db, lambda: store.load("u", "s1"))) == 1


def test_a_session_deleted_while_it_is_read_loads_as_new(path: Path) -> None:
    """A session another process deletes between the version check and the read is empty."""
    with SQLiteSessionStore(path) as writer:
        writer.save("u", "s", turn("a", "b"), version=0, state={"n": 1})
    store, db = open_store(path)
    with store, SQLiteSessionStore(path) as other:

        def delete_at_begin(sql: str) -> None:
            if sql == "BEGIN":
                other.delete("u", "s")

        db.set_trace_callback(delete_at_begin)
        loaded = store.load("u", "s")
        db.set_trace_callback(None)
        assert loaded == Session((), 0, {})


def test_the_defaults_wait_five_seconds_and_keep_a_thousand_sessions(
    store: SQLiteSessionStore, db: sqlite3.Connection
) -> None:
    """A store made with defaults waits 5 s for a lock and keeps 1,000 transcripts: of 1,001
    sessions saved, the first one saved is read from the file again, the second is not."""
    assert db.execute("PRAGMA busy_timeout").fetchone() == (5000,)
    for n in range(1_001):
        store.save("u", f"s{n}", (), version=0)
    assert len(statements_of(db, lambda: store.load("u", "s1"))) == 1
    assert len(statements_of(db, lambda: store.load("u", "s0"))) > 1


def test_a_delete_that_fails_midway_changes_nothing(
    store: SQLiteSessionStore, db: sqlite3.Connection
) -> None:
    """A delete interrupted inside its transaction raises, keeps the session, and the store
    goes on working."""
    store.save("u", "s", turn("a", "b"), version=0)
    interrupting = [False]

    def watch(sql: str) -> None:
        interrupting[0] = sql.startswith("DELETE FROM messages")

    db.set_trace_callback(watch)
    db.set_progress_handler(lambda: interrupting[0], 1)
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        store.delete("u", "s")
    db.set_progress_handler(None, 1)
    db.set_trace_callback(None)
    assert store.load("u", "s") == Session(turn("a", "b"), 1)
    store.delete("u", "s")
    assert store.load("u", "s") == Session((), 0)


def test_a_save_that_fails_midway_raises_its_own_error_and_changes_nothing(
    store: SQLiteSessionStore, db: sqlite3.Connection
) -> None:
    """A save interrupted inside its transaction raises that error (SQLite already rolled back),
    keeps the session as it was, and the store goes on working."""
    store.save("u", "s", turn("a", "b"), version=0)
    interrupting = [False]

    def watch(sql: str) -> None:
        interrupting[0] = sql.startswith("INSERT INTO messages")

    db.set_trace_callback(watch)
    db.set_progress_handler(lambda: interrupting[0], 1)
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        store.save("u", "s", (*turn("a", "b"), *turn("c", "d")), version=1)
    db.set_progress_handler(None, 1)
    db.set_trace_callback(None)
    assert store.load("u", "s") == Session(turn("a", "b"), 1)
    assert store.save("u", "s", turn("x", "y"), version=1) == 2


@pytest.mark.parametrize(("table", "event"), [("paused", "DELETE"), ("messages", "INSERT")])
def test_a_statement_refused_midway_rolls_the_whole_call_back(
    store: SQLiteSessionStore, table: str, event: str
) -> None:
    """A delete or save whose statement the file refuses (a trigger here) raises that error,
    undoes what it wrote before it, and leaves the store working."""
    store.save("u", "s", turn("a", "b"), version=0)
    store.save_paused("r1", "u", "s", "{}")
    with sqlite3.connect(store.path) as other:
        other.execute(
            f"CREATE TRIGGER refuse BEFORE {event} ON {table} BEGIN SELECT RAISE(ABORT, 'no'); END"
        )
    call = (
        (lambda: store.delete("u", "s"))
        if event == "DELETE"
        else (lambda: store.save("u", "s", (*turn("a", "b"), *turn("c", "d")), version=1))
    )
    with pytest.raises(sqlite3.IntegrityError, match=r"^no$"):
        call()
    assert store.load("u", "s") == Session(turn("a", "b"), 1)
    with sqlite3.connect(store.path) as other:
        other.execute("DROP TRIGGER refuse")
    call()


# -- SQLite ending a transaction itself, another process acting between two looks -----------


class Interrupting:
    """Interrupts ``db``'s statements once one starting with ``start`` has begun, as a
    ``sqlite3_interrupt`` from elsewhere would (SQLite then rolls the transaction back)."""

    def __init__(self, db: sqlite3.Connection, start: str) -> None:
        self.start = start
        self.armed = False
        db.set_trace_callback(self.trace)
        db.set_progress_handler(self.progress, 1)

    def trace(self, sql: str) -> None:
        if sql.startswith(self.start):
            self.armed = True

    def progress(self) -> bool:
        return self.armed


def test_a_file_whose_making_is_interrupted_is_refused_and_made_on_the_next_open(
    path: Path,
) -> None:
    """SQLite's rollback of the interrupted making leaves an empty file, opened later."""
    connect = sqlite3.connect

    def interrupted(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db: sqlite3.Connection = connect(*args, **kwargs)
        Interrupting(db, "CREATE TABLE")
        return db

    with (
        mock.patch.object(sqlite3, "connect", interrupted),
        pytest.raises(
            sqlite3.OperationalError,
            match=rf"^cannot open the session store {re.escape(repr(str(path)))}: interrupted$",
        ),
    ):
        SQLiteSessionStore(path)
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
    with SQLiteSessionStore(path) as store:
        store.save("u", "s", turn("a", "b"), version=0)
        assert store.load("u", "s").messages == turn("a", "b")


class Text:
    """A run's records: the text ``jsonl`` gives."""

    def __init__(self, text: str) -> None:
        self.text = text

    def jsonl(self) -> str:
        return self.text


def test_an_interrupted_save_of_records_keeps_those_kept_and_the_store_goes_on(
    path: Path,
) -> None:
    """SQLite rolls the interrupted save back: the records kept are as they were."""
    store, db = open_store(path)
    with store:
        store.save_records("r", "u", "s", Text("one\n"))
        Interrupting(db, "INSERT INTO records")
        with pytest.raises(sqlite3.OperationalError, match=r"^interrupted$"):
            store.save_records("r", "u", "s", Text("two\n"))
        assert not db.in_transaction
        db.set_trace_callback(None)
        db.set_progress_handler(None, 1)
        assert store.load_records("r") == "one\n"
        store.save_records("r", "u", "s", Text("three\n"))
        assert store.load_records("r") == "one\nthree\n"


def test_a_lease_released_between_two_looks_is_taken(path: Path) -> None:
    """Refused by the holder, then the holder is gone when asked who: the lease is taken."""
    store, db = open_store(path)
    with store:
        store.acquire("u", "s", owner="a", ttl=60)
        asked: list[str] = []

        def release_when_asked(sql: str) -> None:
            if sql.startswith("SELECT owner FROM leases"):
                asked.append(sql)
                with sqlite3.connect(path) as other:
                    other.execute("DELETE FROM leases")

        db.set_trace_callback(release_when_asked)
        store.acquire("u", "s", owner="b", ttl=60)
        db.set_trace_callback(None)
        assert len(asked) == 1
        with pytest.raises(SessionBusy, match="run 'b' holds its lease"):
            store.acquire("u", "s", owner="c", ttl=60)
