"""Where conversations live between runs: a store keyed by ``(user_id, session_id)``.

Saves are versioned, so no store shared by several runners (or, with a persistent
store, several processes) can drop a turn: a run loads a ``Session`` (messages,
version and session-scoped state), and its save succeeds only if nobody saved the
session since; otherwise the store raises ``SessionConflict`` and the run fails
loudly instead of overwriting the other run's turn. A lease keeps a second run off a
session while one is under way, and the store keeps the states of paused runs.

What a custom ``SessionStore`` must guarantee:

- ``load`` returns a snapshot: later saves never change the messages or the state it
  returned; an unknown session is ``Session((), 0, {})``.
- ``save(user_id, session_id, messages, version=v, state=s)`` is one atomic
  compare-and-set: it stores ``messages`` (and ``s``, when not ``None``; ``None`` keeps
  the stored state) and returns the new version (> ``v``) only if the session's version
  is still ``v``, and raises ``SessionConflict`` otherwise. State values are JSON:
  what a load gives back is what ``json`` reads (a tuple comes back a list), and a
  value ``json`` cannot write is refused with a ``TypeError`` naming its key, before
  anything is stored (``dump_state`` does both).
- ``delete`` forgets the session (its messages, state, paused runs and records); a later
  ``load`` sees a new, empty one. A session made again after ``delete`` never reuses
  a version the forgotten one had, so a run that loaded the old one cannot overwrite
  the new one's turns.
- ``acquire(user_id, session_id, owner=o, ttl=t)`` takes or renews the session's lease
  for ``o`` until ``t`` seconds from now, atomically; while another owner's lease is
  unexpired it raises ``SessionBusy`` naming that owner. ``release(..., owner=o)``
  drops the lease if ``o`` holds it. ``runner._sessions.leases.Leases`` is a ready table.
- ``save_paused(run_id, user_id, session_id, state_json)`` keeps a paused run's state
  (JSON text) by run id, replacing one saved before; ``load_paused(run_id)`` gives it
  back, or ``None``; ``delete_paused(run_id)`` forgets it.

What the inbox needs besides (``InboxStore``, since 0.3; a store without it still runs,
and keeps no records): ``list_paused(limit=n)`` lists the paused runs it keeps, oldest
first, as ``PausedRun``s; ``save_records(run_id, user_id, session_id, records)`` keeps a
run's records (``RunRecords``; after those it keeps of that run already, which a resumed
run adds to) and ``load_records(run_id)`` gives them back as JSON lines
(``runner.load_events`` reads them), or ``None``. It keeps the records of a bounded
number of runs, dropping the oldest run's first, and forgets a session's records with
the session. ``inbox_store(store)`` checks a store has it all.

A store may say whether its calls can block (wait on a file, a lock another process
holds, a network) with a class attribute ``blocks``: an async run makes each call into a
store that blocks in a worker thread, so the event loop goes on meanwhile, and each call
into one whose ``blocks`` is ``False`` on the loop itself. A store that does not say is
taken to block. Such a store's methods are called from several threads (one at a time
per run) and must be safe across threads.
"""

from __future__ import annotations

import json
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, ClassVar, Final, Protocol, TypeAlias, final, runtime_checkable

from hooks import Message
from hooks._slots import slot_init
from runner._checks import STORE_METHODS, got, int_at_least
from runner._errors import SessionConflict
from runner._pause.pending import PendingRequest
from runner._sessions.leases import Leases
from runner._sessions.paused import PausedRun, check_limit, damaged, parsed, unread
from runner._sessions.transcript import Transcript

__all__ = [
    "INBOX_METHODS",
    "InMemorySessions",
    "InboxStore",
    "RunRecords",
    "Session",
    "SessionStore",
    "dump_state",
    "inbox_store",
    "load_state",
]

_NO_STATE: Final[Mapping[str, Any]] = types.MappingProxyType({})


@slot_init
@dataclass(frozen=True, slots=True)
class Session:
    """A session as loaded: its messages, the version a save must name, its state.

    ``state`` is the session-scoped state by key name (JSON values): the runner seeds a
    run's ``State`` with it and saves the run's session-scoped values back.
    """

    messages: Sequence[Message]
    version: int = 0
    state: Mapping[str, Any] = field(default_factory=lambda: _NO_STATE)


@runtime_checkable
class SessionStore(Protocol):
    """A conversation store with versioned saves and leases (see the module docs)."""

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The session's messages, version and state; ``Session((), 0, {})`` for a new one."""
        ...

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

        Returns the new version; ``state=None`` keeps the stored state. Raises
        ``SessionConflict`` when another run saved the session since it was loaded.
        """
        ...

    def delete(self, user_id: str, session_id: str, /) -> None:
        """Forget the session; a missing session is not an error."""
        ...

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """Take or renew the session's lease for ``owner``; ``SessionBusy`` if another holds it."""
        ...

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """Drop the session's lease if ``owner`` holds it."""
        ...

    def save_paused(self, run_id: str, user_id: str, session_id: str, state_json: str, /) -> None:
        """Keep a paused run's state (JSON text) under its run id."""
        ...

    def load_paused(self, run_id: str, /) -> str | None:
        """The paused run's state as saved, or ``None`` if there is none."""
        ...

    def delete_paused(self, run_id: str, /) -> None:
        """Forget a paused run's state; a missing one is not an error."""
        ...


class RunRecords(Protocol):
    """A run's records as the run hands them to its store's ``save_records``.

    ``jsonl()`` writes them: JSON lines, as ``runner.dump_events`` does (a store that
    keeps text calls it when it saves; one in memory may keep the object and call it
    when the records are read).
    """

    def jsonl(self) -> str:
        """The records as JSON lines, each ended by a newline."""
        ...


@runtime_checkable
class InboxStore(SessionStore, Protocol):
    """A ``SessionStore`` an inbox can list and trace runs from (see the module docs)."""

    def list_paused(self, *, limit: int | None = None) -> tuple[PausedRun, ...]:
        """The paused runs the store keeps, oldest first; at most ``limit`` of them."""
        ...

    def save_records(
        self, run_id: str, user_id: str, session_id: str, records: RunRecords, /
    ) -> None:
        """Keep a run's records, after those of that run the store keeps already."""
        ...

    def load_records(self, run_id: str, /) -> str | None:
        """The run's records as JSON lines, or ``None`` if the store keeps none."""
        ...


INBOX_METHODS: Final = ("list_paused", "save_records", "load_records")
"""What an ``InboxStore`` has besides a ``SessionStore``'s methods."""


def inbox_store(store: object) -> InboxStore:
    """``store``, checked to be an ``InboxStore``: a ``TypeError`` names what it lacks.

    A store written against 0.2's ``SessionStore`` runs as before; what serves an
    inbox calls this when it is made, so such a store is refused there, saying what to add.
    """
    if isinstance(store, InboxStore):
        return store
    missing = [
        name
        for name in (*STORE_METHODS, *INBOX_METHODS)
        if not callable(getattr(store, name, None))
    ]
    msg = (
        f"the inbox needs an InboxStore (a SessionStore with {', '.join(INBOX_METHODS)}), "
        f"got {got(store)}, which has no {', '.join(sorted(missing))}; use InMemorySessions "
        "or SQLiteSessionStore, or add them to it"
    )
    raise TypeError(msg)


_Paused: TypeAlias = tuple[str, str, str, float, "tuple[str, tuple[PendingRequest, ...]] | None"]


def dump_state(state: Mapping[str, Any]) -> str:
    """``state`` as JSON text; a value JSON cannot hold is a ``TypeError`` naming its key."""
    try:
        return json.dumps(dict(state), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        for key, value in state.items():  # find the value to blame, to name its key
            try:
                json.dumps(value)
            except (TypeError, ValueError) as error:
                msg = (
                    f"session state {key!r} must be JSON-serialisable (str, int, float, "
                    f"bool, None, and lists and dicts of them), got {got(value)}: {error}"
                )
                raise TypeError(msg) from None
        raise  # no single value to blame (a key that is no str): as json said


def load_state(text: str) -> Mapping[str, Any]:
    """The state ``dump_state`` wrote, as a fresh dict."""
    state: dict[str, Any] = json.loads(text)
    return state


@final
class InMemorySessions:
    """The default ``SessionStore``: a dict in this process, safe across threads.

    Keeps at most ``max_sessions`` sessions (``None``: no bound), forgetting the least
    recently used one first. A save stores the transcript it is given without copying
    it, so a turn costs the same however long the conversation is; the state is kept
    as JSON text, so a load gives fresh values and a run cannot change a stored state
    by mutating what it loaded.

    An ``InboxStore``: it keeps the records of the last ``keep_records`` runs (0: none)
    as the runs hand them over, and writes their JSON lines when they are read.
    """

    __slots__ = (
        "_forgotten",
        "_keep_records",
        "_leases",
        "_lock",
        "_max_sessions",
        "_paused",
        "_records",
        "_sessions",
    )

    # Its calls never wait on anything but its lock: an async run makes them on the loop.
    blocks: ClassVar[bool] = False

    def __init__(self, *, max_sessions: int | None = 10_000, keep_records: int = 1_000) -> None:
        if max_sessions is not None and (type(max_sessions) is not int or max_sessions < 1):
            msg = f"max_sessions must be a positive int or None, got {max_sessions!r}"
            raise (ValueError if type(max_sessions) is int else TypeError)(msg)
        self._max_sessions = max_sessions
        self._keep_records: Final = int_at_least("keep_records", keep_records, 0)
        # (user, session) -> (messages, version, state as JSON text)
        self._sessions: OrderedDict[tuple[str, str], tuple[Transcript, int, str]] = OrderedDict()
        # run id -> (user, session, state JSON, when saved, its agent and pending requests
        # or None if the state is no RunState's JSON), in the order they were saved
        self._paused: dict[str, _Paused] = {}
        # run id -> (user, session, its records as handed over), oldest run first
        self._records: OrderedDict[str, tuple[str, str, tuple[RunRecords, ...]]] = OrderedDict()
        self._leases: Final = Leases()
        # The highest version of any session forgotten (deleted, evicted, cleared): a
        # session made again starts above it, so a stale run's version never matches.
        self._forgotten = 0
        self._lock = threading.Lock()

    @property
    def max_sessions(self) -> int | None:
        """The most sessions kept (``None``: no bound); fixed when the store is made."""
        return self._max_sessions

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The session's messages, version and state; ``Session((), 0, {})`` for a new one."""
        key = (user_id, session_id)
        with self._lock:
            stored = self._sessions.get(key)
            if stored is None:
                return Session(Transcript(), 0, _NO_STATE)
            self._sessions.move_to_end(key)
        messages, version, state = stored
        return Session(messages, version, _NO_STATE if state == "{}" else load_state(state))

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
        """Store ``messages`` (and ``state``) if the session is still at ``version``."""
        stored = messages if isinstance(messages, Transcript) else Transcript(messages)
        text = None if state is None else dump_state(state)
        key = (user_id, session_id)
        with self._lock:
            current = self._sessions.get(key)
            found = 0 if current is None else current[1]
            if found != version:
                raise SessionConflict(user_id, session_id, expected=version, found=found)
            new = (self._forgotten if current is None else version) + 1
            if text is None:
                text = "{}" if current is None else current[2]
            self._sessions[key] = (stored, new, text)
            self._sessions.move_to_end(key)
            if self._max_sessions is not None and len(self._sessions) > self._max_sessions:
                self._forget(self._sessions.popitem(last=False))
        return new

    def delete(self, user_id: str, session_id: str, /) -> None:
        """Forget the session, its paused runs and its runs' records (a session whose only
        run paused before it was ever saved too); a missing session is not an error."""
        key = (user_id, session_id)
        with self._lock:
            stored = self._sessions.pop(key, None)
            if stored is not None:
                self._forget((key, stored))
            else:
                self._drop_runs(key)

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """Take or renew the session's lease for ``owner``; ``SessionBusy`` if another holds it."""
        self._leases.acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """Drop the session's lease if ``owner`` holds it."""
        self._leases.release(user_id, session_id, owner=owner)

    def save_paused(self, run_id: str, user_id: str, session_id: str, state_json: str, /) -> None:
        """Keep a paused run's state (JSON text) under its run id."""
        paused = (user_id, session_id, state_json, time.time(), parsed(state_json))
        with self._lock:
            self._paused.pop(run_id, None)  # saved again: the newest
            self._paused[run_id] = paused

    def load_paused(self, run_id: str, /) -> str | None:
        """The paused run's state as saved, or ``None`` if there is none."""
        with self._lock:
            paused = self._paused.get(run_id)
        return None if paused is None else paused[2]

    def list_paused(self, *, limit: int | None = None) -> tuple[PausedRun, ...]:
        """The paused runs kept, oldest first; at most ``limit`` (``None``: all).

        A run whose state is not a ``RunState``'s JSON (saved by hand) is a
        ``ValueError`` naming it.
        """
        limit = check_limit(limit)
        with self._lock:
            items = list(islice(self._paused.items(), limit))
        listed: list[PausedRun] = []
        for run_id, (user_id, session_id, state, saved, found) in items:
            if found is None:
                damaged(f"paused run {run_id!r} in InMemorySessions", unread(state))
            listed.append(PausedRun(run_id, user_id, session_id, found[0], saved, found[1]))
        return tuple(listed)

    def save_records(
        self, run_id: str, user_id: str, session_id: str, records: RunRecords, /
    ) -> None:
        """Keep a run's records, after those of that run kept already; the oldest run's
        records are dropped beyond ``keep_records`` runs."""
        if not self._keep_records:
            return
        with self._lock:
            kept = self._records.pop(run_id, None)
            parts = (records,) if kept is None else (*kept[2], records)
            self._records[run_id] = (user_id, session_id, parts)
            while len(self._records) > self._keep_records:
                self._records.popitem(last=False)

    def load_records(self, run_id: str, /) -> str | None:
        """The run's records as JSON lines, or ``None`` if none are kept.

        Records are written when read: one holding a value with no JSON form (a set in a
        tool's result, say) is a ``TypeError`` naming the run and the value.
        """
        with self._lock:
            kept = self._records.get(run_id)
        if kept is None:
            return None
        try:
            return "".join(part.jsonl() for part in kept[2])
        except TypeError as exc:
            msg = f"the records of run {run_id!r} in InMemorySessions cannot be written: {exc}"
            raise TypeError(msg) from exc

    @property
    def keep_records(self) -> int:
        """How many runs' records the store keeps at most; fixed when the store is made."""
        return self._keep_records

    def delete_paused(self, run_id: str, /) -> None:
        """Forget a paused run's state; a missing one is not an error."""
        with self._lock:
            self._paused.pop(run_id, None)

    def clear(self) -> None:
        """Forget every session, paused run and lease."""
        with self._lock:
            for stored in self._sessions.values():
                self._forgotten = max(self._forgotten, stored[1])
            self._sessions.clear()
            self._paused.clear()
            self._records.clear()
        self._leases.clear()

    def _forget(self, item: tuple[tuple[str, str], tuple[Transcript, int, str]]) -> None:
        """Count a forgotten session's version and drop its paused runs and records (lock
        held)."""
        key, (_, version, _) = item
        self._forgotten = max(self._forgotten, version)
        self._drop_runs(key)

    def _drop_runs(self, key: tuple[str, str]) -> None:
        """Drop the paused runs and the records of session ``key`` (lock held)."""
        if self._paused:
            for run_id in [run for run, paused in self._paused.items() if paused[:2] == key]:
                del self._paused[run_id]
        if self._records:
            for run_id in [run for run, kept in self._records.items() if kept[:2] == key]:
                del self._records[run_id]

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)
