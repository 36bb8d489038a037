"""How a session maps to rows of a ``SQLiteSessionStore`` file: the writes of a save, and
a message read back.

``encoded`` turns the messages a save adds into rows (JSON bodies), before any
transaction opens, so a message JSON cannot hold fails the save with nothing written;
``write`` is the compare-and-set a save runs inside its ``BEGIN IMMEDIATE``
transaction; ``decoded`` reads one stored message back, naming the session and the
field when the file holds something that is no message.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Final, NamedTuple

from hooks import Message
from runner._errors import SessionConflict
from runner._pause.codec import decode_message, encode_message
from runner._sessions.transcript import Transcript

__all__ = ["KEY", "Changes", "decoded", "encoded", "write"]

KEY: Final = "user_id = ? AND session_id = ?"
"""The condition that picks one session's rows."""


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


class Changes(NamedTuple):
    """What a save writes: the new length, the messages kept, the rows after them, the state."""

    length: int
    kept: int
    rows: list[tuple[str, str, int, str]]
    state: str | None


def write(db: sqlite3.Connection, key: tuple[str, str], version: int, changes: Changes) -> int:
    """The compare-and-set inside a save's transaction; returns the new version."""
    length, kept, rows, state = changes
    row = db.execute(f"SELECT version, length FROM sessions WHERE {KEY}", key).fetchone()
    found = 0 if row is None else int(row[0])
    if found != version:
        raise SessionConflict(key[0], key[1], expected=version, found=found)
    if row is None:
        forgotten = db.execute("SELECT value FROM meta WHERE name = 'forgotten'").fetchone()
        new = int(forgotten[0]) + 1
        db.execute(
            "INSERT INTO sessions (user_id, session_id, version, length, state) "
            "VALUES (?, ?, ?, ?, ?)",
            (*key, new, length, "{}" if state is None else state),
        )
    else:
        new = version + 1
        if kept < row[1]:  # the run replaced or dropped messages the file holds
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


def decoded(key: tuple[str, str], position: int, body: str) -> Message:
    """Message ``position`` of a session as the file holds it; a clear error if it is bad."""
    try:
        return decode_message(json.loads(body), where=f"messages[{position}]")
    except ValueError as exc:
        msg = f"session {key[1]!r} of user {key[0]!r} holds a bad message: {exc}"
        raise ValueError(msg) from exc
