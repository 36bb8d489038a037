"""The web tests' fixtures: a SQLite store holding a paused janitor run, the app over it.

``ListingStore`` stands in for the data layer's ``SessionStore.list_paused`` until the
store has it: a ``SQLiteSessionStore`` that lists its paused runs by reading its file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from examples.web_inbox import make_runner, pause_one
from hooks import Message
from runner import PendingRequest, RunResult, RunState, Session, SQLiteSessionStore
from runner.web import WebApp, inbox_app

TOKEN = "t" * 32


@dataclass(frozen=True)
class Listed:
    """A paused run as ``list_paused`` lists it."""

    run_id: str
    user_id: str
    session_id: str
    agent: str
    time: float
    pending: tuple[PendingRequest, ...]


class ListingStore:
    """A SQLite store that lists its paused runs (the data layer's stand-in)."""

    blocks = True

    def __init__(self, path: str | Path) -> None:
        self.inner = SQLiteSessionStore(path)
        self.path = self.inner.path

    def __enter__(self) -> ListingStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.inner.close()

    def load(self, user_id: str, session_id: str, /) -> Session:
        return self.inner.load(user_id, session_id)

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
        return self.inner.save(user_id, session_id, messages, version=version, state=state)

    def delete(self, user_id: str, session_id: str, /) -> None:
        self.inner.delete(user_id, session_id)

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        self.inner.acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        self.inner.release(user_id, session_id, owner=owner)

    def save_paused(self, run_id: str, user_id: str, session_id: str, state_json: str, /) -> None:
        self.inner.save_paused(run_id, user_id, session_id, state_json)

    def load_paused(self, run_id: str, /) -> str | None:
        return self.inner.load_paused(run_id)

    def delete_paused(self, run_id: str, /) -> None:
        self.inner.delete_paused(run_id)

    def list_paused(self, *, limit: int | None = None) -> tuple[Listed, ...]:
        """Every paused run in the file, in run id order."""
        db = sqlite3.connect(self.path)
        try:
            rows = db.execute(
                "SELECT run_id, user_id, session_id, state FROM paused ORDER BY run_id"
            ).fetchall()
        finally:
            db.close()
        listed = []
        for run_id, user_id, session_id, text in rows[:limit]:
            state = RunState.from_json(text)
            listed.append(Listed(run_id, user_id, session_id, state.agent, 0.0, state.pending))
        return tuple(listed)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ListingStore]:
    """A fresh store in the test's folder."""
    with ListingStore(tmp_path / "sessions.db") as opened:
        yield opened


@pytest.fixture
def paused(store: ListingStore) -> RunResult:
    """A janitor run paused on its two deletions, in ``store``."""
    return pause_one(store)


@pytest.fixture
def app(store: ListingStore) -> WebApp:
    """The inbox over ``store``, token ``TOKEN``, content served."""
    return inbox_app(make_runner, store, token=TOKEN, capture=True)
