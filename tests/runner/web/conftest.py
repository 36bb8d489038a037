"""The web tests' fixtures: a SQLite store holding a paused janitor run, the app over it.

``Store02`` is a store written against 0.2's ``SessionStore`` (no ``list_paused``, no
records): the inbox refuses it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from examples.web_inbox import make_runner, pause_one
from hooks import Message
from runner import RunResult, Session, SQLiteSessionStore
from runner.web import WebApp, inbox_app

TOKEN = "t" * 32


class Store02:
    """A store of 0.2's protocol: sessions, leases and paused states over a SQLite file."""

    blocks = True

    def __init__(self, path: str | Path) -> None:
        self.inner = SQLiteSessionStore(path)
        self.path = self.inner.path

    def __enter__(self) -> Store02:
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


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteSessionStore]:
    """A fresh store in the test's folder."""
    with SQLiteSessionStore(tmp_path / "sessions.db") as opened:
        yield opened


@pytest.fixture
def paused(store: SQLiteSessionStore) -> RunResult:
    """A janitor run paused on its two deletions, in ``store``."""
    return pause_one(store)


@pytest.fixture
def app(store: SQLiteSessionStore) -> WebApp:
    """The inbox over ``store``, token ``TOKEN``, content served."""
    return inbox_app(make_runner, store, token=TOKEN, capture=True)
