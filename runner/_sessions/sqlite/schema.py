"""The layout of a ``SQLiteSessionStore`` file, and opening one: made once, checked every time.

The file says what it is: ``PRAGMA application_id`` marks it as hookline's, and
``PRAGMA user_version`` is the schema version. A file of another version, another
application's database, or a file that is no database is refused when the store is
opened, with an error naming the file, what was expected and what was found -- never
read as if it were something else.

Tables (``WITHOUT ROWID``: each is read by its key):

- ``sessions``: one row per session: its version, how many messages it holds, its
  session-scoped state (JSON text);
- ``messages``: one row per message, keyed by session and position (JSON text);
- ``leases``: a session's lease, its owner and when it expires (Unix time);
- ``paused``: a paused run's state (JSON text) by run id, with its session, when it
  was saved (Unix time), its root agent and its pending requests (JSON text; ``NULL``
  when the state is no ``RunState``'s JSON), indexed by time for ``list_paused`` (the
  index holds every column the listing reads: it never reads a state);
- ``records``: a run's records (JSON lines) by run id, with its session, numbered in
  the order they were saved (``seq``: the oldest are dropped first);
- ``meta``: ``forgotten``, the highest version of any deleted session, which a session
  made again starts above.

A file of schema version 1 (hookline 0.2) is brought to version 2 when opened, in one
transaction: its paused runs get their time (0: before any other), agent and pending
requests, and an empty ``records`` table is made.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Final

from runner._sessions.paused import summary

__all__ = ["SCHEMA_VERSION", "open_database"]

SCHEMA_VERSION: Final = 2
"""The version of the layout this hookline reads and writes."""

_APPLICATION_ID: Final = 0x686B6C6E  # "hkln"
# What version 2 adds to version 1's tables (its paused columns are made by _upgrade).
_VERSION_2: Final = (
    # Covering: a listing reads the index alone, in order, never the states.
    "CREATE INDEX paused_by_time ON paused (saved, run_id, user_id, session_id, agent, pending)",
    """CREATE TABLE records (
        seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL, session_id TEXT NOT NULL, body TEXT NOT NULL)""",
    "CREATE INDEX records_by_session ON records (user_id, session_id)",
)
_TABLES: Final = (
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
        user_id TEXT NOT NULL, session_id TEXT NOT NULL, state TEXT NOT NULL,
        saved REAL NOT NULL DEFAULT 0, agent TEXT NOT NULL DEFAULT '', pending TEXT)
        WITHOUT ROWID""",
    "CREATE INDEX paused_by_session ON paused (user_id, session_id)",
    *_VERSION_2,
    "CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO meta (name, value) VALUES ('forgotten', 0)",
)


def open_database(path: str | os.PathLike[str], *, timeout: float) -> sqlite3.Connection:
    """A connection to the store at ``path``, made if new, in WAL mode, schema checked.

    ``timeout`` is how long a statement waits for another connection's lock. The
    connection is in autocommit mode: the store opens each transaction itself. A file
    SQLite cannot open or read raises SQLite's error, of its class and with its codes,
    its message naming the file.
    """
    try:
        db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    except sqlite3.DatabaseError as exc:  # a folder that is missing, a file not readable
        raise _naming(path, exc) from exc
    try:
        # WAL: readers never wait for the writer. NORMAL: a commit does not wait for the
        # disk; a crashed process loses nothing committed (a power cut may lose the last).
        _into_wal(db, timeout)
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("BEGIN IMMEDIATE")  # two processes making one file: one makes it
        try:
            _check_or_make(db, path)
        except BaseException:
            if db.in_transaction:  # else SQLite rolled it back itself
                db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise _naming(path, exc) from exc
    except BaseException:
        db.close()
        raise
    return db


def _naming(path: str | os.PathLike[str], error: sqlite3.DatabaseError) -> sqlite3.DatabaseError:
    """``error`` again, of its class and with its SQLite codes, its message naming the file."""
    named = type(error)(f"cannot open the session store {os.fspath(path)!r}: {error}")
    for code in ("sqlite_errorcode", "sqlite_errorname"):  # absent on one Python raised
        if hasattr(error, code):
            setattr(named, code, getattr(error, code))
    return named


def _into_wal(db: sqlite3.Connection, timeout: float) -> None:
    """Put the file in WAL mode, waiting up to ``timeout`` seconds for another process.

    SQLite answers this pragma "database is locked" at once, without waiting, when
    waiting could deadlock (another process is making the new file): so retry here.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)
        else:
            return


def _check_or_make(db: sqlite3.Connection, path: str | os.PathLike[str]) -> None:
    application: int = db.execute("PRAGMA application_id").fetchone()[0]
    version: int = db.execute("PRAGMA user_version").fetchone()[0]
    where = f"session store {os.fspath(path)!r}"
    if application == 0 and version == 0:
        tables: int = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables:
            msg = (
                f"{where} is a SQLite database of another application ({tables} tables, "
                "no hookline mark); give SQLiteSessionStore a new file or one it made"
            )
            raise ValueError(msg)
        for statement in _TABLES:
            db.execute(statement)
        db.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return
    if application != _APPLICATION_ID:
        msg = (
            f"{where} is a SQLite database of another application (application_id "
            f"{application:#x}, expected hookline's {_APPLICATION_ID:#x})"
        )
        raise ValueError(msg)
    if version == 1:
        _upgrade(db)
        return
    if version != SCHEMA_VERSION:
        newer = "a newer" if version > SCHEMA_VERSION else "an older"
        msg = (
            f"{where} has schema version {version}, written by {newer} hookline; "
            f"this hookline reads schema version {SCHEMA_VERSION} only"
        )
        raise ValueError(msg)


def _upgrade(db: sqlite3.Connection) -> None:
    """Bring a version 1 file to version 2 (inside the opening transaction)."""
    for column in (
        "saved REAL NOT NULL DEFAULT 0",
        "agent TEXT NOT NULL DEFAULT ''",
        "pending TEXT",
    ):
        db.execute(f"ALTER TABLE paused ADD COLUMN {column}")
    for statement in _VERSION_2:
        db.execute(statement)
    rows = db.execute("SELECT run_id, state FROM paused").fetchall()
    for run_id, state in rows:
        found = summary(state) if type(state) is str else None
        if found is not None:
            db.execute(
                "UPDATE paused SET agent = ?, pending = ? WHERE run_id = ?", (*found, run_id)
            )
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
