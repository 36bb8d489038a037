"""``SQLiteSessionStore``: sessions in one SQLite file, shared by runners and processes.

Everything an ``InboxStore`` keeps -- messages (one row each, JSON), session-scoped
state, leases, paused runs and run records -- lives in one file (``schema`` gives its layout,
``rows`` how a session maps to rows and what a read checks). Several runners, threads
and processes may use one file at once: each save is a compare-and-set inside a
``BEGIN IMMEDIATE`` transaction, a lease is one atomic upsert, and WAL mode lets reads
go on while one process writes. A session the file holds damaged is refused, never
read short.

A turn costs the same at 10,000 messages as at none. The store keeps, per session,
the transcript it last loaded or saved and the version that goes with it (a version
is never reused, so the pair names what the file holds). ``load`` asks the file for
the session's row only and, when its version and length have not moved, hands the
kept transcript back; ``save`` writes only the messages after the longest prefix it
shares with the kept one (found at once for a transcript the run grew from it, or
cut, or forked) -- an append per turn, not a rewrite of the history.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, NoReturn, cast, final

from hooks import Message
from runner._checks import got, int_at_least, non_negative_float, positive_int
from runner._errors import SessionBusy
from runner._pause.pending import PendingRequest
from runner._sessions.paused import PausedRun, check_limit, damaged, pending_of, summary, unread
from runner._sessions.sqlite.rows import (
    KEY,
    MESSAGES,
    SESSION,
    Changes,
    Stored,
    encoded,
    messages_of,
    session_row,
    state_of,
    write,
)
from runner._sessions.sqlite.schema import open_database
from runner._sessions.store import RunRecords, Session, dump_state
from runner._sessions.transcript import Transcript

__all__ = ["SQLiteSessionStore"]

_PAUSED: Final = (
    "SELECT run_id, user_id, session_id, saved, agent, pending FROM paused "
    "ORDER BY saved, run_id LIMIT ?"
)
# Drop all but the newest ``?`` runs' records (no row is past the offset: none dropped).
_DROP_RECORDS: Final = (
    "DELETE FROM records WHERE seq <= (SELECT seq FROM records ORDER BY seq DESC LIMIT 1 OFFSET ?)"
)
_KNOWN_MAX: Final = 100_000  # the most runs whose read requests a store keeps between listings
_LEASE: Final = (
    "INSERT INTO leases (user_id, session_id, owner, expires) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (user_id, session_id) DO UPDATE SET owner = excluded.owner, "
    "expires = excluded.expires WHERE leases.owner = excluded.owner OR leases.expires <= ?"
)


@final
class SQLiteSessionStore:
    """A ``SessionStore`` in the SQLite file at ``path`` (made if missing); safe across threads
    and processes.

    ``timeout`` is how long an operation waits for another process's write (seconds);
    ``cache_sessions`` bounds the sessions whose transcript the store keeps in memory
    (the least recently used is dropped: it is read from the file again when needed).
    Lease times are Unix time, so processes on one machine agree on them. A context
    manager: leaving it closes the store.

    ``keep_records`` bounds the runs whose records the file keeps (0: none); the
    oldest run's are dropped first. ``list_paused`` reads an index and the runs'
    pending requests, never their whole states.
    """

    __slots__ = (
        "_cache",
        "_cache_sessions",
        "_db",
        "_keep_records",
        "_lock",
        "_pending",
        "path",
    )

    # Its calls wait on the file (another process's write lock, the disk): an async run
    # makes them in a worker thread. One connection serves every thread
    # (check_same_thread=False), each use of it under ``_lock``.
    blocks: ClassVar[bool] = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 5.0,
        cache_sessions: int = 1_000,
        keep_records: int = 10_000,
    ) -> None:
        given: object = path  # callers without a type checker pass anything
        if not isinstance(given, str | os.PathLike):
            msg = f"path must be a str or os.PathLike, got {got(given)}"
            raise TypeError(msg)
        self.path: Final = os.fspath(path)
        self._cache_sessions: Final = positive_int("cache_sessions", cache_sessions)
        self._keep_records: Final = int_at_least("keep_records", keep_records, 0)
        self._db: sqlite3.Connection | None = open_database(
            path, timeout=non_negative_float("timeout", timeout)
        )
        # (user, session) -> (version, the transcript the file holds at that version)
        self._cache: OrderedDict[tuple[str, str], tuple[int, Transcript]] = OrderedDict()
        self._lock: Final = threading.Lock()
        # run id -> (its pending requests' JSON as listed, those requests read): a listing
        # reads again only the runs paused (or paused again) since the last one.
        self._pending: dict[str, tuple[str, tuple[PendingRequest, ...]]] = {}

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The session's messages, version and state; ``Session((), 0, {})`` for a new one.

        A session the file holds damaged (a message row missing or out of place, a field
        that is not what hookline wrote) is refused with a ``ValueError`` naming the
        session and the file.
        """
        key = (user_id, session_id)
        with self._lock:
            db = self._open()
            row = db.execute(SESSION, key).fetchone()
            if row is None:
                return Session(Transcript(), 0)
            stored = session_row(key, self.path, row)
            cached = self._cache.get(key)
            if cached is not None and (cached[0], len(cached[1])) == stored[:2]:
                self._cache.move_to_end(key)
                messages = cached[1]
            else:
                stored, messages = self._read(db, key)
        return Session(messages, stored.version, state_of(key, self.path, stored.state))

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
        """Store ``messages`` (and ``state``) if the session is still at ``version``.

        Writes the messages after the longest prefix the session holds already, and
        deletes only rows the store read: a session changed outside hookline since (a
        row missing or added) is refused with the ``ValueError`` ``load`` gives.
        """
        stored = messages if isinstance(messages, Transcript) else Transcript(messages)
        text = None if state is None else dump_state(state)
        key = (user_id, session_id)
        with self._lock:
            db = self._open()
            cached = self._cache.get(key)
            read = cached[1] if cached and cached[0] == version else None
            kept = 0 if read is None else read.common_prefix(stored)
            changes = Changes(
                len(stored),
                kept,
                encoded(key, stored, kept),
                text,
                None if read is None else len(read),
            )
            db.execute("BEGIN IMMEDIATE")
            try:
                new = write(db, key, self.path, version, changes)
            except BaseException:
                if db.in_transaction:  # else SQLite rolled back itself (interrupt, disk full)
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            self._cache[key] = (new, stored)
            self._cache.move_to_end(key)
            if len(self._cache) > self._cache_sessions:
                self._cache.popitem(last=False)
        return new

    def delete(self, user_id: str, session_id: str, /) -> None:
        """Forget the session, its state, its paused runs and its runs' records (those of a
        session never saved too); a missing one is not an error.

        A session the file holds damaged is forgotten too: deleting it is the way to
        start it again.
        """
        key = (user_id, session_id)
        with self._lock:
            db = self._open()
            self._cache.pop(key, None)
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(f"SELECT version FROM sessions WHERE {KEY}", key).fetchone()
                # Rows of the session go even without its row: messages (then damage),
                # paused runs and records (a session whose first run paused is unsaved).
                for table in ("messages", "paused", "records"):
                    db.execute(f"DELETE FROM {table} WHERE {KEY}", key)
                if row is not None:
                    db.execute(f"DELETE FROM sessions WHERE {KEY}", key)
                    if type(row[0]) is int:  # a damaged version was never handed to a run
                        db.execute(
                            "UPDATE meta SET value = max(value, ?) WHERE name = 'forgotten'",
                            (row[0],),
                        )
            except BaseException:
                if db.in_transaction:  # else SQLite rolled back itself (interrupt, disk full)
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """Take or renew the session's lease for ``owner``; ``SessionBusy`` if another holds it."""
        with self._lock:
            db = self._open()
            while True:
                now = time.time()
                taken = db.execute(_LEASE, (user_id, session_id, owner, now + ttl, now))
                if taken.rowcount:
                    return
                holder = db.execute(
                    f"SELECT owner FROM leases WHERE {KEY}", (user_id, session_id)
                ).fetchone()
                if holder is not None:  # else released just now: try again
                    raise SessionBusy(user_id, session_id, holder=holder[0])

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """Drop the session's lease if ``owner`` holds it."""
        with self._lock:
            self._open().execute(
                f"DELETE FROM leases WHERE {KEY} AND owner = ?", (user_id, session_id, owner)
            )

    def save_paused(self, run_id: str, user_id: str, session_id: str, state_json: str, /) -> None:
        """Keep a paused run's state (JSON text) under its run id, with the time, its agent
        and its pending requests (read from the state) for ``list_paused``."""
        agent, pending = summary(state_json) or ("", None)
        row = (run_id, user_id, session_id, state_json, time.time(), agent, pending)
        with self._lock:
            self._open().execute(
                "INSERT OR REPLACE INTO paused "
                "(run_id, user_id, session_id, state, saved, agent, pending) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )

    def load_paused(self, run_id: str, /) -> str | None:
        """The paused run's state as saved, or ``None`` if there is none.

        A state that is not UTF-8 text is a ``ValueError`` naming the run and the file.
        """
        with self._lock:
            row = (
                self._open()
                .execute("SELECT CAST(state AS BLOB) FROM paused WHERE run_id = ?", (run_id,))
                .fetchone()
            )
        if row is None:
            return None
        try:
            return bytes(row[0]).decode()
        except UnicodeDecodeError as exc:
            msg = (
                f"paused run {run_id!r} in session store {self.path!r} is damaged: its state "
                f"must be UTF-8 text, found {row[0]!r:.60} ({exc.reason}); the file was "
                "changed outside hookline"
            )
            raise ValueError(msg) from None

    def delete_paused(self, run_id: str, /) -> None:
        """Forget a paused run's state; a missing one is not an error."""
        with self._lock:
            self._open().execute("DELETE FROM paused WHERE run_id = ?", (run_id,))

    def list_paused(self, *, limit: int | None = None) -> tuple[PausedRun, ...]:
        """The paused runs the file keeps (any process's), oldest first; at most ``limit``.

        A row that is not what hookline wrote (a state that is no ``RunState``'s JSON,
        a field of the wrong kind) is a ``ValueError`` naming the run and the file.
        """
        bound = check_limit(limit)
        with self._lock:
            rows = self._open().execute(_PAUSED, (-1 if bound is None else bound,)).fetchall()
        known = self._pending
        seen: dict[str, tuple[str, tuple[PendingRequest, ...]]] = {}
        listed = tuple(self._paused_run(row, known, seen) for row in rows)
        if bound is None:  # every run the file keeps: what is not listed is gone
            self._pending = seen
        elif len(known) + len(seen) <= _KNOWN_MAX:
            known.update(seen)
        return listed

    def save_records(
        self, run_id: str, user_id: str, session_id: str, records: RunRecords, /
    ) -> None:
        """Keep a run's records (JSON lines), after those of that run kept already; the
        oldest run's are dropped beyond ``keep_records`` runs."""
        if not self._keep_records:
            return
        text = records.jsonl()
        with self._lock:
            db = self._open()
            db.execute("BEGIN IMMEDIATE")
            try:
                kept = db.execute("SELECT body FROM records WHERE run_id = ?", (run_id,)).fetchone()
                if kept is not None:  # a resumed run: its records go on
                    db.execute("DELETE FROM records WHERE run_id = ?", (run_id,))
                    text = self._text(run_id, kept[0]) + text
                db.execute(
                    "INSERT INTO records (run_id, user_id, session_id, body) VALUES (?, ?, ?, ?)",
                    (run_id, user_id, session_id, text),
                )
                db.execute(_DROP_RECORDS, (self._keep_records,))
            except BaseException:
                if db.in_transaction:  # else SQLite rolled back itself (interrupt, disk full)
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def load_records(self, run_id: str, /) -> str | None:
        """The run's records as JSON lines, or ``None`` if the file keeps none.

        Records that are not text are a ``ValueError`` naming the run and the file.
        """
        with self._lock:
            row = (
                self._open()
                .execute("SELECT body FROM records WHERE run_id = ?", (run_id,))
                .fetchone()
            )
        return None if row is None else self._text(run_id, row[0])

    @property
    def keep_records(self) -> int:
        """How many runs' records the file keeps at most (as this store writes it)."""
        return self._keep_records

    def close(self) -> None:
        """Close the file; the store refuses every call after. Closing twice is harmless."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._cache.clear()

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._db is None

    def __enter__(self) -> SQLiteSessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({self.path!r})"

    def _paused_run(
        self,
        row: Sequence[object],
        known: Mapping[str, tuple[str, tuple[PendingRequest, ...]]],
        seen: dict[str, tuple[str, tuple[PendingRequest, ...]]],
    ) -> PausedRun:
        """A ``list_paused`` row, checked; its requests read unless ``known`` holds them
        for the same text; each row's requests put in ``seen``."""
        run_id, user_id, session_id, saved, agent, pending = row
        if (
            type(run_id) is not str
            or type(user_id) is not str
            or type(session_id) is not str
            or type(agent) is not str
            or (type(saved) is not float and type(saved) is not int)
            or pending is None
        ):
            self._refuse_row(row)
        had = known.get(run_id)
        if had is not None and had[0] == pending:
            requests = had[1]
        else:
            requests = pending_of(pending, run_id, f"session store {self.path!r}")
        seen[run_id] = (cast("str", pending), requests)
        return PausedRun(run_id, user_id, session_id, agent, float(saved), requests)

    def _refuse_row(self, row: Sequence[object]) -> NoReturn:
        """Name what is wrong with a ``list_paused`` row (the quick check found something)."""
        run_id, user_id, session_id, saved, agent, pending = row
        if type(run_id) is not str:
            damaged(f"a paused run in session store {self.path!r}", f"its id is {got(run_id)}")
        where = f"paused run {run_id!r} in session store {self.path!r}"
        for name, value in (("user_id", user_id), ("session_id", session_id), ("agent", agent)):
            if type(value) is not str:
                damaged(where, f"its {name} must be text, found {got(value)}")
        if type(saved) is not float and type(saved) is not int:
            damaged(where, f"its time must be a number, found {got(saved)}")
        assert pending is None  # the only other thing the quick check refuses
        with self._lock:
            state = (
                self._open()
                .execute("SELECT state FROM paused WHERE run_id = ?", (run_id,))
                .fetchone()
            )
        damaged(where, unread(None if state is None else state[0]))

    def _text(self, run_id: str, body: object) -> str:
        """A run's records as the file holds them, checked to be text."""
        if type(body) is not str:
            damaged(
                f"the records of run {run_id!r} in session store {self.path!r}",
                f"they must be text, found {got(body)}",
            )
        return body

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            msg = f"{self!r} is closed; open the file again with a new SQLiteSessionStore"
            raise RuntimeError(msg)
        return self._db

    def _read(self, db: sqlite3.Connection, key: tuple[str, str]) -> tuple[Stored, Transcript]:
        """The session's row and its messages, read in one transaction and checked; kept
        for next time."""
        db.execute("BEGIN")  # one snapshot: the row and the messages of one version
        try:
            row = db.execute(SESSION, key).fetchone()
            bodies = db.execute(MESSAGES, key).fetchall()
        finally:
            if db.in_transaction:  # else SQLite ended it itself on an error
                db.execute("COMMIT")
        if row is None:  # deleted between the two looks
            return Stored(0, 0, "{}"), Transcript()
        stored = session_row(key, self.path, row)
        messages = messages_of(key, self.path, stored.length, bodies)
        self._cache[key] = (stored.version, messages)
        if len(self._cache) > self._cache_sessions:
            self._cache.popitem(last=False)
        return stored, messages
