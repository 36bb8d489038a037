"""Tests for the invocation-scoped ``State`` and the ``Invocation`` record."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

from hooks import Invocation, State, StateKey

COUNT = StateKey[int]("count")
NAMES = StateKey[list[str]]("names")


def test_missing_key_gives_none() -> None:
    """Getting a key that was never set gives None."""
    state = State()
    assert state.get("absent") is None
    assert state.get(COUNT) is None


def test_missing_key_gives_the_default() -> None:
    """Getting a missing key with a default gives that default object."""
    state = State()
    default: list[str] = []
    assert state.get("absent", default) is default
    assert state.get(NAMES, default) is default
    total: int = state.get(COUNT, 0) + 1
    assert total == 1


def test_set_then_get_with_a_string_key() -> None:
    """A value stored under a string is got back as the same object."""
    state = State()
    value = {"a": 1}
    state.set("config", value)
    assert state.get("config") is value
    assert state.get("config", "default") is value


def test_set_then_get_with_a_typed_key() -> None:
    """A value stored under a ``StateKey`` is got back, typed."""
    state = State()
    state.set(COUNT, 3)
    count: int | None = state.get(COUNT)
    assert count == 3


def test_set_replaces_the_value() -> None:
    """Setting a key again replaces what was there."""
    state = State()
    state.set(COUNT, 1)
    state.set(COUNT, 2)
    assert state.get(COUNT) == 2
    assert len(state) == 1


def test_falsy_values_are_stored_not_defaulted() -> None:
    """A stored falsy value (0, None, "") is returned rather than the default."""
    state = State()
    for key, value in [("zero", 0), ("none", None), ("empty", "")]:
        state.set(key, value)
        assert state.get(key, "default") == value
        assert key in state


def test_string_and_typed_keys_of_one_name_share_the_entry() -> None:
    """``StateKey("count")`` and the string ``"count"`` address the same entry."""
    state = State()
    state.set("count", 5)
    assert state.get(COUNT) == 5
    state.set(StateKey[int]("count"), 6)
    assert state.get("count") == 6
    state.delete(COUNT)
    assert state.get("count") is None


def test_delete_removes_the_key() -> None:
    """Deleting a key makes it missing again."""
    state = State()
    state.set("key", 1)
    state.delete("key")
    assert state.get("key") is None
    assert "key" not in state
    assert len(state) == 0


def test_delete_of_a_missing_key_is_not_an_error() -> None:
    """Deleting a key that is not there does nothing."""
    state = State()
    state.set("other", 1)
    state.delete("absent")
    state.delete(COUNT)
    assert list(state) == ["other"]


def test_contains_len_and_iteration() -> None:
    """``in`` accepts both key kinds; ``len`` and iteration see the stored names in order."""
    state = State()
    state.set("a", 1)
    state.set(COUNT, 2)
    assert "a" in state
    assert COUNT in state
    assert StateKey[int]("a") in state
    assert "b" not in state
    assert list(state) == ["a", "count"]
    assert len(state) == 2


@pytest.mark.parametrize("key", [3, None, b"a", ("a",)])
def test_contains_is_false_for_non_keys(key: object) -> None:
    """Asking whether a non-key is in the state is False, not an error."""
    state = State()
    state.set("a", 1)
    assert key not in state


@pytest.mark.parametrize("key", [3, None, b"count", ("count",)])
def test_other_key_types_raise_type_error(key: object) -> None:
    """Keys other than ``str`` and ``StateKey`` raise TypeError naming their type."""
    state = State()
    bad: Any = key
    for operation in (lambda: state.get(bad), lambda: state.set(bad, 1), lambda: state.delete(bad)):
        with pytest.raises(TypeError, match=type(key).__name__):
            operation()
    assert len(state) == 0


def test_iterating_is_a_snapshot() -> None:
    """Changing the state while iterating over it does not break the iteration."""
    state = State()
    for name in "abc":
        state.set(name, 1)
    seen = []
    for name in state:
        seen.append(name)
        state.set(name + "2", 2)
        state.delete(name)
    assert seen == ["a", "b", "c"]
    assert list(state) == ["a2", "b2", "c2"]


def test_repr_shows_the_entries() -> None:
    """The repr lists the stored entries."""
    state = State()
    state.set("a", 1)
    assert repr(state) == "State({'a': 1})"


def test_state_key_repr_and_name() -> None:
    """A ``StateKey`` keeps its name and shows it in its repr."""
    key = StateKey[str]("user")
    assert key.name == "user"
    assert repr(key) == "StateKey('user')"


def test_concurrent_sets_of_distinct_keys_all_land() -> None:
    """Eight threads setting distinct keys at once lose no entry."""
    state = State()
    threads_n, per_thread = 8, 500
    barrier = threading.Barrier(threads_n)

    def work(thread: int) -> None:
        barrier.wait()
        for index in range(per_thread):
            state.set(f"{thread}-{index}", (thread, index))
            if index % 7 == 0:
                list(state)  # iterate while others write

    threads = [threading.Thread(target=work, args=(n,)) for n in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(state) == threads_n * per_thread
    assert all(
        state.get(f"{thread}-{index}") == (thread, index)
        for thread in range(threads_n)
        for index in range(per_thread)
    )


def test_concurrent_deletes_and_sets_leave_a_consistent_state() -> None:
    """Threads deleting their own keys while others set theirs leave exactly the kept keys."""
    state = State()
    for n in range(400):
        state.set(f"old-{n}", n)
    barrier = threading.Barrier(8)

    def work(thread: int) -> None:
        barrier.wait()
        for n in range(thread, 400, 8):
            state.delete(f"old-{n}")
            state.set(f"new-{n}", n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(state) == sorted(f"new-{n}" for n in range(400))


@pytest.mark.parametrize("name", [123, None, b"count", COUNT])
def test_a_state_key_name_must_be_a_str(name: object) -> None:
    """``StateKey(123)`` raises TypeError saying a str was expected and what came."""
    bad: Any = name
    with pytest.raises(TypeError, match=f"must be a str, got {type(name).__name__}"):
        StateKey(bad)


def test_a_state_key_is_immutable() -> None:
    """A key's name cannot be reassigned, and it takes no other attribute."""
    key = StateKey[int]("count")
    with pytest.raises(AttributeError, match="immutable"):
        key.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        setattr(key, "other", 1)  # noqa: B010 -- an attribute mypy knows is not there
    assert key.name == "count"


def test_update_stores_and_returns_the_new_value() -> None:
    """``update(key, fn)`` stores ``fn(current)`` and returns it; a missing key gives None."""
    state = State()
    seen: list[int | None] = []

    def bump(current: int | None) -> int:
        seen.append(current)
        return (current or 0) + 1

    assert state.update(COUNT, bump) == 1
    assert state.update(COUNT, bump) == 2
    assert seen == [None, 1]
    assert state.get(COUNT) == 2


def test_update_with_a_default_gives_it_for_a_missing_key() -> None:
    """With ``default=``, ``fn`` receives the default when the key is missing, else the value."""
    state = State()
    assert state.update(NAMES, lambda names: [*names, "a"], default=[]) == ["a"]
    assert state.update(NAMES, lambda names: [*names, "b"], default=[]) == ["a", "b"]
    state.set("none", None)
    assert state.update("none", lambda value: value, default="unused") is None


def test_update_with_a_raising_function_stores_nothing() -> None:
    """When ``fn`` raises, the error propagates and the stored value is unchanged."""
    state = State()
    state.set(COUNT, 5)

    def broken(current: int | None) -> int:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        state.update(COUNT, broken)
    assert state.get(COUNT) == 5


def test_update_may_read_the_state() -> None:
    """``fn`` may read the state it updates without waiting for itself."""
    state = State()
    state.set("step", 3)
    assert state.update(COUNT, lambda n: (n or 0) + state.get("step"), default=0) == 3


def test_sixteen_threads_updating_one_key_lose_no_update() -> None:
    """Concurrent ``update`` calls on one key each land: 16 threads x 2,000 increments."""
    state = State()
    threads_n, per_thread = 16, 2000
    barrier = threading.Barrier(threads_n)

    def increment(current: int) -> int:
        value = current + 1
        for _ in range(3):  # widen the window a read-then-write would lose updates in
            value = value * 1
        return value

    def work() -> None:
        barrier.wait()
        for _ in range(per_thread):
            state.update(COUNT, increment, default=0)

    threads = [threading.Thread(target=work) for _ in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state.get(COUNT) == threads_n * per_thread


def test_snapshot_is_a_read_only_copy() -> None:
    """``snapshot()`` holds the entries as they were, cannot be changed, and does not follow
    later changes."""
    state = State()
    state.set(COUNT, 1)
    state.set("name", "a")
    snapshot = state.snapshot()
    assert dict(snapshot) == {"count": 1, "name": "a"}
    with pytest.raises(TypeError):
        snapshot["count"] = 2  # type: ignore[index]
    state.set(COUNT, 3)
    state.delete("name")
    assert dict(snapshot) == {"count": 1, "name": "a"}


def test_invocation_defaults() -> None:
    """An ``Invocation`` defaults to user ``"user"``, no session id and a fresh empty state."""
    invocation = Invocation(id="i1", agent="assistant", branch="assistant")
    assert invocation.user_id == "user"
    assert invocation.session_id == ""
    assert isinstance(invocation.state, State)
    assert len(invocation.state) == 0


def test_each_invocation_gets_its_own_state() -> None:
    """Two invocations built with the default state do not share it."""
    first = Invocation(id="i1", agent="a", branch="a")
    second = Invocation(id="i2", agent="a", branch="a")
    first.state.set("key", 1)
    assert second.state.get("key") is None
    assert first.state is not second.state


def test_invocation_is_frozen() -> None:
    """An ``Invocation``'s fields cannot be reassigned."""
    invocation = Invocation(id="i1", agent="a", branch="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        invocation.agent = "b"  # type: ignore[misc]


def test_invocation_equality_ignores_state_and_repr_hides_it() -> None:
    """Invocations compare by their ids and names, not by their state, which the repr omits."""
    first = Invocation(id="i1", agent="a", branch="a/b", user_id="u", session_id="s")
    second = Invocation(id="i1", agent="a", branch="a/b", user_id="u", session_id="s")
    first.state.set("key", "secret")
    assert first == second
    assert "secret" not in repr(first)
    assert "a/b" in repr(first)
    assert first != dataclasses.replace(second, branch="a")


def test_invocation_carries_the_given_state() -> None:
    """An ``Invocation`` given a state holds that very object."""
    state = State()
    invocation = Invocation(id="i", agent="a", branch="a", state=state)
    assert invocation.state is state


# -- scopes ------------------------------------------------------------------------------

TURNS = StateKey[int]("turns", scope="session")


def test_a_key_is_invocation_scoped_unless_told() -> None:
    """``scope`` defaults to ``"invocation"``; a session-scoped key says so in its repr."""
    assert COUNT.scope == "invocation"
    assert TURNS.scope == "session"
    assert repr(TURNS) == "StateKey('turns', scope='session')"
    assert repr(StateKey[int]("n", scope="invocation")) == "StateKey('n')"


@pytest.mark.parametrize(
    ("scope", "error"), [("run", ValueError), ("Session", ValueError), (None, TypeError)]
)
def test_an_unknown_scope_is_refused(scope: object, error: type[Exception]) -> None:
    """A scope other than "invocation" or "session" is refused, naming the key and the scope."""
    bad: Any = scope
    expected = (
        f"^StateKey\\('k'\\) scope must be 'invocation' or 'session', got {type(scope).__name__}"
    )
    with pytest.raises(error, match=expected):
        StateKey("k", scope=bad)


def test_a_keys_scope_is_immutable() -> None:
    """A key's scope cannot be reassigned."""
    with pytest.raises(AttributeError):
        TURNS.scope = "invocation"  # type: ignore[misc]
    assert TURNS.scope == "session"


def test_values_set_through_a_session_key_are_in_the_session_snapshot() -> None:
    """``snapshot(scope=...)`` splits the entries: session-scoped ones, and the others."""
    state = State()
    state.set(TURNS, 1)
    state.set(COUNT, 2)
    state.set("plain", 3)
    assert state.snapshot(scope="session") == {"turns": 1}
    assert state.snapshot(scope="invocation") == {"count": 2, "plain": 3}
    assert state.snapshot() == {"turns": 1, "count": 2, "plain": 3}


def test_update_through_a_session_key_makes_it_session_scoped() -> None:
    """``update`` with a session key marks the name like ``set`` does."""
    state = State()
    state.update(TURNS, lambda n: n + 1, default=0)
    assert state.snapshot(scope="session") == {"turns": 1}


def test_seeded_session_values_stay_session_scoped_whoever_writes_them() -> None:
    """A name seeded as session state stays so when a plain string or another key writes it."""
    state = State()
    state.seed({"turns": 4, "topic": "tax"}, scope="session")
    state.set("turns", 5)
    state.set(StateKey[str]("topic"), "vat")
    assert state.snapshot(scope="session") == {"turns": 5, "topic": "vat"}
    assert state.snapshot(scope="invocation") == {}


def test_seeded_invocation_values_are_plain_entries() -> None:
    """``seed`` without a scope stores invocation-scoped entries."""
    state = State()
    state.seed({"a": 1})
    assert state.get("a") == 1
    assert state.snapshot(scope="session") == {}


def test_a_deleted_session_value_leaves_the_session_snapshot() -> None:
    """Deleting a session-scoped entry drops it from what the session keeps."""
    state = State()
    state.seed({"turns": 4, "topic": "tax"}, scope="session")
    state.delete(TURNS)
    assert state.snapshot(scope="session") == {"topic": "tax"}


def test_a_session_snapshot_is_a_read_only_copy() -> None:
    """The session snapshot does not change with the state and cannot be written."""
    state = State()
    state.set(TURNS, 1)
    snapshot = state.snapshot(scope="session")
    state.set(TURNS, 2)
    assert snapshot == {"turns": 1}
    with pytest.raises(TypeError):
        snapshot["turns"] = 3  # type: ignore[index]


def test_an_unknown_scope_is_refused_by_seed_and_snapshot() -> None:
    """``seed`` and ``snapshot`` name a bad scope."""
    state = State()
    with pytest.raises(ValueError, match=r"^scope must be 'invocation' or 'session', got 'run'"):
        state.seed({}, scope="run")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^scope must be 'invocation', 'session' or None"):
        state.snapshot(scope="run")  # type: ignore[arg-type]
