"""Where conversations live between runs: a store keyed by ``(user_id, session_id)``.

Saves are versioned, so no store shared by several runners (or, with a persistent
store, several processes) can drop a turn: a run loads a ``Session`` (messages and
version), and its save succeeds only if nobody saved the session since; otherwise the
store raises ``SessionConflict`` and the run fails loudly instead of overwriting the
other run's turn.

What a custom ``SessionStore`` must guarantee:

- ``load`` returns a snapshot: later saves never change the messages it returned;
  an unknown session is ``Session((), 0)``.
- ``save(user_id, session_id, messages, version=v)`` is one atomic compare-and-set:
  it stores ``messages`` and returns the new version (> ``v``) only if the session's
  version is still ``v``, and raises ``SessionConflict`` otherwise.
- ``delete`` forgets the session; a later ``load`` sees a new, empty one. A session
  made again after ``delete`` never reuses a version the forgotten one had, so a run
  that loaded the old one cannot overwrite the new one's turns.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, final, runtime_checkable

from hooks import Message
from runner._errors import SessionConflict
from runner._history import Transcript

__all__ = ["InMemorySessions", "Session", "SessionStore"]


@dataclass(frozen=True, slots=True)
class Session:
    """A session as loaded: its messages and the version a save must name."""

    messages: Sequence[Message]
    version: int = 0


@runtime_checkable
class SessionStore(Protocol):
    """A conversation store with versioned saves (see the module docs for the contract)."""

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The session's messages and version; ``Session((), 0)`` for a new session."""
        ...

    def save(
        self, user_id: str, session_id: str, messages: Sequence[Message], /, *, version: int
    ) -> int:
        """Store ``messages`` if the session is still at ``version``; return the new version.

        Raises ``SessionConflict`` when another run saved the session since it was loaded.
        """
        ...

    def delete(self, user_id: str, session_id: str, /) -> None:
        """Forget the session; a missing session is not an error."""
        ...


@final
class InMemorySessions:
    """The default ``SessionStore``: a dict in this process, safe across threads.

    Keeps at most ``max_sessions`` sessions (``None``: no bound), forgetting the least
    recently used one first. A save stores the transcript it is given without copying
    it, so a turn costs the same however long the conversation is.
    """

    __slots__ = ("_forgotten", "_lock", "_max_sessions", "_sessions")

    def __init__(self, *, max_sessions: int | None = 10_000) -> None:
        if max_sessions is not None and (type(max_sessions) is not int or max_sessions < 1):
            msg = f"max_sessions must be a positive int or None, got {max_sessions!r}"
            raise (ValueError if type(max_sessions) is int else TypeError)(msg)
        self._max_sessions = max_sessions
        self._sessions: OrderedDict[tuple[str, str], Session] = OrderedDict()
        # The highest version of any session forgotten (deleted, evicted, cleared): a
        # session made again starts above it, so a stale run's version never matches.
        self._forgotten = 0
        self._lock = threading.Lock()

    @property
    def max_sessions(self) -> int | None:
        """The most sessions kept (``None``: no bound); fixed when the store is made."""
        return self._max_sessions

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The session's messages and version; ``Session((), 0)`` for a new session."""
        key = (user_id, session_id)
        with self._lock:
            session = self._sessions.get(key)
            if session is None:
                return Session(Transcript(), 0)
            self._sessions.move_to_end(key)
            return session

    def save(
        self, user_id: str, session_id: str, messages: Sequence[Message], /, *, version: int
    ) -> int:
        """Store ``messages`` if the session is still at ``version``; return the new version."""
        stored = messages if isinstance(messages, Transcript) else Transcript(messages)
        key = (user_id, session_id)
        with self._lock:
            current = self._sessions.get(key)
            found = 0 if current is None else current.version
            if found != version:
                raise SessionConflict(user_id, session_id, expected=version, found=found)
            new = (self._forgotten if current is None else version) + 1
            self._sessions[key] = Session(stored, new)
            self._sessions.move_to_end(key)
            if self._max_sessions is not None and len(self._sessions) > self._max_sessions:
                self._forget(self._sessions.popitem(last=False)[1])
        return new

    def delete(self, user_id: str, session_id: str, /) -> None:
        """Forget the session; a missing session is not an error."""
        with self._lock:
            session = self._sessions.pop((user_id, session_id), None)
            if session is not None:
                self._forget(session)

    def clear(self) -> None:
        """Forget every session."""
        with self._lock:
            for session in self._sessions.values():
                self._forget(session)
            self._sessions.clear()

    def _forget(self, session: Session) -> None:
        self._forgotten = max(self._forgotten, session.version)

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
