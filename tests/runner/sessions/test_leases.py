"""Tests of ``runner._sessions.leases``: the in-memory lease table, a run's hold on its session."""

from __future__ import annotations

import pytest

from runner import InMemorySessions, SessionBusy
from runner._sessions.leases import Leases, RunLease


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_lease_expires_exactly_at_its_ttl() -> None:
    """Held until now + ttl: busy just before, free at that moment."""
    clock = Clock()
    leases = Leases(clock)
    leases.acquire("u", "s", owner="a", ttl=10)
    clock.now = 109.999
    with pytest.raises(SessionBusy):
        leases.acquire("u", "s", owner="b", ttl=10)
    clock.now = 110.0
    leases.acquire("u", "s", owner="b", ttl=10)
    assert len(leases) == 1


def test_clear_drops_every_lease() -> None:
    """After ``clear`` any owner takes any session."""
    leases = Leases(Clock())
    leases.acquire("u", "s", owner="a", ttl=10)
    leases.acquire("u", "t", owner="a", ttl=10)
    leases.clear()
    assert len(leases) == 0
    leases.acquire("u", "s", owner="b", ttl=10)


class CountingStore:
    """Counts the acquires and releases a ``RunLease`` makes on its store."""

    def __init__(self) -> None:
        self.inner = InMemorySessions()
        self.calls: list[str] = []

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """Count, then take the lease."""
        self.calls.append(f"acquire {owner} {ttl}")
        self.inner.acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """Count, then drop the lease."""
        self.calls.append(f"release {owner}")
        self.inner.release(user_id, session_id, owner=owner)


def test_a_run_lease_renews_only_once_a_third_of_its_ttl_has_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``renew`` writes to the store only when a third of the ttl went by since the last take."""
    now = [0.0]
    monkeypatch.setattr("runner._sessions.leases.time.monotonic", lambda: now[0])
    store = CountingStore()
    lease = RunLease(store, "u", "s", owner="run-1", ttl=30)
    lease.acquire()
    now[0] = 9.9
    lease.renew()
    assert store.calls == ["acquire run-1 30"]
    now[0] = 10.0
    lease.renew()
    now[0] = 19.9
    lease.renew()
    assert store.calls == ["acquire run-1 30", "acquire run-1 30"]
    lease.release()
    assert store.calls[-1] == "release run-1"


def test_a_run_lease_taken_by_another_is_busy() -> None:
    """A run's lease on a session another owner holds raises ``SessionBusy``."""
    store = InMemorySessions()
    store.acquire("u", "s", owner="other", ttl=30)
    with pytest.raises(SessionBusy, match="run 'other' holds its lease"):
        RunLease(store, "u", "s", owner="run-1", ttl=30).acquire()


def test_a_run_lease_renews_at_exactly_a_third_of_its_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the moment a third of the ttl has gone by, ``renew`` takes the lease again."""
    now = [0.0]
    monkeypatch.setattr("runner._sessions.leases.time.monotonic", lambda: now[0])
    store = CountingStore()
    lease = RunLease(store, "u", "s", owner="run-1", ttl=30)
    lease.acquire()
    now[0] = 10.0
    lease.renew()
    assert store.calls == ["acquire run-1 30", "acquire run-1 30"]


def test_a_run_lease_never_taken_is_taken_by_renew() -> None:
    """``renew`` before any ``acquire`` takes the lease: it was never held."""
    store = CountingStore()
    RunLease(store, "u", "s", owner="run-1", ttl=30).renew()
    assert store.calls == ["acquire run-1 30"]
