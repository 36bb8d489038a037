"""How a session maps to rows of a ``SQLiteSessionStore`` file: the writes of a save, and
what a load reads back, checked.

``encoded`` turns the messages a save adds into rows (JSON bodies), before any
transaction opens, so a message JSON cannot hold fails the save with nothing written;
``write`` is the compare-and-set a save runs inside its ``BEGIN IMMEDIATE``
transaction. ``session_row``, ``state_of`` and ``messages_of`` read a session back:
its row, its state and its messages.

The file is read as hostile: anything in it that is not what hookline wrote -- a
version or length that is no integer, text that is not UTF-8 or not JSON, a message
row missing or out of place -- is a ``ValueError`` naming the session, the file, what
was expected and what was found. A damaged session is refused, never read short: its
row counts its messages, and a load checks that the file holds exactly positions
``0`` to ``length - 1``. A save deletes only rows it read: the rows after the prefix
it keeps must be the ones the store read at that version, else it is refused too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Final, NamedTuple, NoReturn

from hooks import Message
from runner._checks import got
from runner._errors import SessionConflict
from runner._pause.codec import decode_message, encode_message
from runner._sessions.transcript import Transcript

__all__ = [
    "KEY",
    "MESSAGES",
    "SESSION",
    "Changes",
    "Stored",
    "encoded",
    "messages_of",
    "named",
    "session_row",
    "state_of",
    "write",
]

KEY: Final = "user_id = ? AND session_id = ?"
"""The condition that picks one session's rows."""

SESSION: Final = f"SELECT version, length, CAST(state AS BLOB) FROM sessions WHERE {KEY}"
"""A session's row: its version, its length and its state (as bytes, decoded here)."""

MESSAGES: Final = f"SELECT position, CAST(body AS BLOB) FROM messages WHERE {KEY} ORDER BY position"
"""A session's message rows in order (bodies as bytes, decoded here)."""


def named(key: tuple[str, str], path: str) -> str:
    """The session ``key`` in the file at ``path``, for an error message."""
    return f"session {key[1]!r} of user {key[0]!r} in session store {path!r}"


def encoded(
    key: tuple[str, str], messages: Transcript, start: int
) -> list[tuple[str, str, int, str]]:
    """The rows of ``messages`` from ``start`` on; a value JSON cannot hold names its
    message."""
    rows: list[tuple[str, str, int, str]] = []
    for position in range(start, len(messages)):  # by index: islice walks the prefix
        message = messages[position]
        try:
            body = json.dumps(encode_message(message), ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            msg = (
                f"message {position} of session {key[1]!r} of user {key[0]!r} cannot be "
                f"stored as JSON ({message!r:.80}): {exc}"
            )
            raise TypeError(msg) from None
        rows.append((*key, position, body))
    return rows


class Stored(NamedTuple):
    """A session's row as checked: its version, its length, its state as JSON text."""

    version: int
    length: int
    state: str


def session_row(key: tuple[str, str], path: str, row: Sequence[Any]) -> Stored:
    """The session's row (as ``SESSION`` reads it), checked: a bad field is a ``ValueError``."""
    version, length, state = row
    if type(version) is not int or version < 1:
        _damaged(key, path, f"its version must be an integer >= 1, found {got(version)}")
    if type(length) is not int or length < 0:
        _damaged(key, path, f"its length must be an integer >= 0, found {got(length)}")
    return Stored(version, length, _text(key, path, "its state", state))


def state_of(key: tuple[str, str], path: str, text: str) -> dict[str, Any]:
    """The session state stored as ``text``: a JSON object, else a ``ValueError``."""
    try:
        state: object = json.loads(text)
    except (ValueError, RecursionError) as exc:
        _damaged(key, path, f"its state must be a JSON object, found {text!r:.60} ({exc})")
    if not isinstance(state, dict):
        _damaged(key, path, f"its state must be a JSON object, found {got(state)}")
    return state  # pyright: ignore[reportUnknownVariableType]


def messages_of(key: tuple[str, str], path: str, length: int, rows: Sequence[Any]) -> Transcript:
    """The session's messages from its rows (as ``MESSAGES`` reads them), checked.

    The rows must be exactly positions ``0`` to ``length - 1``; each body a message as
    UTF-8 JSON. Anything else is a ``ValueError`` naming the first row that is wrong.
    """
    for expected, (position, _) in zip(range(length), rows, strict=False):
        if type(position) is not int or position != expected:
            _damaged(
                key,
                path,
                f"it holds {length} messages, at positions 0 to {length - 1}, but message "
                f"{expected} is missing (found position {position!r:.60} in its place)",
            )
    if len(rows) != length:
        _damaged(
            key,
            path,
            f"it holds {length} messages, at positions 0 to {length - 1}, but the file "
            f"has {len(rows)} message rows (message {len(rows)} is missing)"
            if len(rows) < length
            else f"it holds {length} messages, but the file has {len(rows)} message rows",
        )
    return Transcript(_message(key, path, position, body) for position, body in rows)


def _message(key: tuple[str, str], path: str, position: int, body: object) -> Message:
    """Message ``position`` of a session as the file holds it; a ``ValueError`` if bad."""
    where = f"messages[{position}]"
    text = _text(key, path, where, body)
    try:
        data: object = json.loads(text)
    except (ValueError, RecursionError) as exc:
        msg = f"{named(key, path)} holds a bad message: {where} is not JSON ({exc})"
        raise ValueError(msg) from None
    try:
        return decode_message(data, where=where)
    except ValueError as exc:
        msg = f"{named(key, path)} holds a bad message: {exc}"
        raise ValueError(msg) from exc


def _text(key: tuple[str, str], path: str, what: str, value: object) -> str:
    """``value`` (bytes, as the file held it) as text; not UTF-8 is a ``ValueError``."""
    if not isinstance(value, bytes):  # CAST(... AS BLOB) gives bytes for every stored value
        _damaged(key, path, f"{what} must be UTF-8 text, found {got(value)}")
    try:
        return value.decode()
    except UnicodeDecodeError as exc:
        _damaged(key, path, f"{what} must be UTF-8 text, found {value!r:.60} ({exc.reason})")


def _damaged(key: tuple[str, str], path: str, problem: str) -> NoReturn:
    """Refuse a session the file holds damaged: a ``ValueError`` naming it and the file."""
    msg = f"{named(key, path)} is damaged: {problem}; the file was changed outside hookline"
    raise ValueError(msg)


class Changes(NamedTuple):
    """What a save writes: the new length, the messages kept, the rows after them, the state,
    and the length of the transcript the store read at the version saved (``None``: none)."""

    length: int
    kept: int
    rows: list[tuple[str, str, int, str]]
    state: str | None
    read: int | None


def write(
    db: sqlite3.Connection, key: tuple[str, str], path: str, version: int, changes: Changes
) -> int:
    """The compare-and-set inside a save's transaction; returns the new version.

    Before it deletes or adds a row, the session must be as the store read it: a file
    changed outside hookline is refused with the ``ValueError`` a load gives.
    """
    length, kept, rows, state, read = changes
    found_row = db.execute(SESSION, key).fetchone()
    stored = None if found_row is None else session_row(key, path, found_row)
    found = 0 if stored is None else stored.version
    if found != version:
        raise SessionConflict(key[0], key[1], expected=version, found=found)
    had = 0 if stored is None else stored.length
    if read is not None and read != had:
        _damaged(key, path, f"it holds {had} messages, but {read} were read at version {found}")
    _check_tail(db, key, path, had, kept)
    if stored is None:
        forgotten = db.execute("SELECT value FROM meta WHERE name = 'forgotten'").fetchone()
        if forgotten is None or type(forgotten[0]) is not int:
            msg = (
                f"session store {path!r} is damaged: meta 'forgotten' must be an integer, "
                f"found {'no row' if forgotten is None else got(forgotten[0])}"
            )
            raise ValueError(msg)
        new = forgotten[0] + 1
        db.execute(
            "INSERT INTO sessions (user_id, session_id, version, length, state) "
            "VALUES (?, ?, ?, ?, ?)",
            (*key, new, length, "{}" if state is None else state),
        )
    else:
        new = version + 1
        if kept < had:  # the run replaced or dropped messages the file holds
            db.execute(f"DELETE FROM messages WHERE {KEY} AND position >= ?", (*key, kept))
        if state is None:
            db.execute(
                f"UPDATE sessions SET version = ?, length = ? WHERE {KEY}", (new, length, *key)
            )
        else:
            db.execute(
                f"UPDATE sessions SET version = ?, length = ?, state = ? WHERE {KEY}",
                (new, length, state, *key),
            )
    db.executemany(
        "INSERT INTO messages (user_id, session_id, position, body) VALUES (?, ?, ?, ?)", rows
    )
    return new


def _check_tail(
    db: sqlite3.Connection, key: tuple[str, str], path: str, had: int, kept: int
) -> None:
    """Refuse unless the rows from position ``kept`` on are exactly ``kept`` to ``had - 1``.

    Those are the rows a save deletes or writes over: reading only them keeps a turn's
    cost independent of the session's length.
    """
    count, first, last, odd = db.execute(
        "SELECT count(*), min(position), max(position), total(typeof(position) <> 'integer') "
        f"FROM messages WHERE {KEY} AND position >= ?",
        (*key, kept),
    ).fetchone()
    if count == had - kept and not odd and (count == 0 or (first, last) == (kept, had - 1)):
        return
    _damaged(
        key,
        path,
        f"it holds {had} messages, so {had - kept} message rows from position {kept} on, "
        f"but the file has {count} there (at positions {first!r} to {last!r})",
    )
