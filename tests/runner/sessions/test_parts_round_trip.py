"""Any conversation, parts and all, comes back from either session store exactly as saved."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner import InMemorySessions, Message, SessionStore, SQLiteSessionStore
from tests.helpers.strategies import messages

_sessions = itertools.count()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(conversation=st.lists(messages, max_size=6))
def test_any_conversation_loads_back_equal_from_each_store(
    kind: str, tmp_path: Path, conversation: list[Message]
) -> None:
    """Saved into a fresh session and loaded again (from a new store object on the same
    file, for SQLite), every message equals what was saved: images' bytes, files' names,
    reasoning payloads byte for byte."""
    session = f"s{next(_sessions)}"
    store: SessionStore
    if kind == "memory":
        store = InMemorySessions()
        store.save("u", session, conversation, version=0)
        loaded = store.load("u", session)
    else:
        path = tmp_path / "sessions.db"
        with SQLiteSessionStore(path) as writer:
            writer.save("u", session, conversation, version=0)
        with SQLiteSessionStore(path) as reader:
            loaded = reader.load("u", session)
    assert list(loaded.messages) == conversation
    assert loaded.version == 1
