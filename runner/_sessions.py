"""Where conversations live between runs: a store keyed by ``(user_id, session_id)``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, final

from hooks import Message

__all__ = ["InMemorySessions", "SessionStore"]


class SessionStore(Protocol):
    """A conversation store: a second run with the same ids continues the conversation."""

    def load(self, user_id: str, session_id: str, /) -> list[Message]:
        """The messages of the session so far; an empty list for a new session."""
        ...

    def save(self, user_id: str, session_id: str, messages: Sequence[Message], /) -> None:
        """Replace the session's messages with ``messages``."""
        ...


@final
class InMemorySessions:
    """The default ``SessionStore``: a dict in this process, safe across threads."""

    __slots__ = ("_lock", "_sessions")

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], tuple[Message, ...]] = {}
        self._lock = threading.Lock()

    def load(self, user_id: str, session_id: str, /) -> list[Message]:
        """The messages of the session so far; an empty list for a new session."""
        with self._lock:
            return list(self._sessions.get((user_id, session_id), ()))

    def save(self, user_id: str, session_id: str, messages: Sequence[Message], /) -> None:
        """Replace the session's messages with ``messages``."""
        with self._lock:
            self._sessions[user_id, session_id] = tuple(messages)

    def clear(self) -> None:
        """Forget every session."""
        with self._lock:
            self._sessions.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
