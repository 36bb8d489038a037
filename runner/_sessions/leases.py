"""Leases: the one-run-per-session rule, kept by the session store across runners.

A run takes its session's lease when it starts (``acquire``, for ``ttl`` seconds),
renews it as it goes and releases it at its end. While one owner's lease is
unexpired, another owner's ``acquire`` raises ``SessionBusy``; a lease its owner
never released (the process died) expires, and the session can be continued.

- ``Leases``: a lease table in memory, for stores in one process (``InMemorySessions``,
  a custom store); its clock is ``time.monotonic`` unless one is given.
- ``RunLease``: one run's hold on its session, over any store: renewed at a model
  step only once a third of its ttl has gone by, so a turn does not write to a
  durable store at every step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final, Protocol, final

from runner._errors import SessionBusy

__all__ = ["Keeper", "Leases", "RunLease"]


class Keeper(Protocol):
    """Who keeps the leases of sessions: a ``SessionStore``, or a ``Leases`` table."""

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """Take or renew the lease for ``owner``; ``SessionBusy`` if another holds it."""
        ...

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """Drop the lease if ``owner`` holds it."""
        ...


@final
class Leases:
    """Leases by ``(user_id, session_id)`` held in this process; safe across threads."""

    __slots__ = ("_clock", "_held", "_lock")

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._clock: Final = clock
        self._held: dict[tuple[str, str], tuple[str, float]] = {}  # -> (owner, expires)
        self._lock: Final = threading.Lock()

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """Take or renew the lease for ``owner`` until now + ``ttl``; ``SessionBusy`` if held."""
        key = (user_id, session_id)
        with self._lock:
            now = time.monotonic() if self._clock is None else self._clock()
            held = self._held.get(key)
            if held is not None and held[0] != owner and held[1] > now:
                raise SessionBusy(user_id, session_id, holder=held[0])
            self._held[key] = (owner, now + ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """Drop the lease if ``owner`` holds it; otherwise nothing happens."""
        key = (user_id, session_id)
        with self._lock:
            held = self._held.get(key)
            if held is not None and held[0] == owner:
                del self._held[key]

    def clear(self) -> None:
        """Drop every lease."""
        with self._lock:
            self._held.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)


@final
class RunLease:
    """One run's lease on its session: ``acquire`` at the start, ``renew``, ``release``."""

    __slots__ = ("_renewed", "owner", "session_id", "store", "ttl", "user_id")

    def __init__(
        self, store: Keeper, user_id: str, session_id: str, *, owner: str, ttl: float
    ) -> None:
        self.store: Final = store
        self.user_id: Final = user_id
        self.session_id: Final = session_id
        self.owner: Final = owner
        self.ttl: Final = ttl
        self._renewed = -float("inf")

    def acquire(self) -> None:
        """Take the lease (or renew it); ``SessionBusy`` when another run holds it."""
        renewed = time.monotonic()
        self.store.acquire(self.user_id, self.session_id, owner=self.owner, ttl=self.ttl)
        self._renewed = renewed

    def due(self) -> bool:
        """Whether a third of the lease's ttl has gone by since it was last taken."""
        return time.monotonic() - self._renewed >= self.ttl / 3

    def renew(self) -> None:
        """Renew the lease if a third of its ttl has gone by since it was last taken."""
        if self.due():
            self.acquire()

    def release(self) -> None:
        """Give the lease up."""
        self.store.release(self.user_id, self.session_id, owner=self.owner)
