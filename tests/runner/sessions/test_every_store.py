"""One test suite for every ``SessionStore`` hookline ships: in memory and SQLite.

Each test runs once per store (the ``store`` fixture) and checks the contract in the
module docstring of ``runner._sessions.store``: snapshots and versions, compare-and-set
saves, delete, session-scoped state, leases and paused runs; then runners sharing a
store, and session-scoped ``StateKey`` values carried from run to run. What only the
SQLite store promises (one file, several processes, a damaged file refused) is in
``tests/runner/sessions/sqlite/test_store.py``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from typing_extensions import override

from hooks import BeforeAgent, BeforeModel, BeforeResult, Cont
from runner import (
    Agent,
    AgentContext,
    InMemorySessions,
    Message,
    ModelContext,
    ModelResponse,
    Runner,
    RunStartedEvent,
    ScriptedModel,
    Session,
    SessionBusy,
    SessionConflict,
    SessionStore,
    SQLiteSessionStore,
    StateKey,
    ToolCall,
    ToolResultEvent,
    Transcript,
)
from tests.helpers.runs import Mode, calling, drive

STORES = ("memory", "sqlite")


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    """Each store, fresh: an ``InMemorySessions``, then a ``SQLiteSessionStore`` in a new file."""
    if request.param == "memory":
        yield InMemorySessions()
    else:
        with SQLiteSessionStore(tmp_path / "sessions.db") as sqlite:
            yield sqlite


class FakeTime:
    """Stands in for the ``time`` module where the stores and run leases read their clocks."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        """Unix time, as the SQLite store reads it."""
        return self.now

    def monotonic(self) -> float:
        """The in-memory leases' and run leases' clock."""
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    """A clock the test moves by hand (``clock.now += 10``), for every lease."""
    fake = FakeTime()
    monkeypatch.setattr("runner._sessions.leases.time", fake)
    monkeypatch.setattr("runner._sessions.sqlite.store.time", fake)
    return fake


def turn(question: str, answer: str) -> tuple[Message, Message]:
    """A user message and the assistant's answer to it."""
    return Message("user", question), Message("assistant", answer)


# -- messages and versions -------------------------------------------------------------


def test_every_store_is_a_session_store(store: SessionStore) -> None:
    """Both stores satisfy the ``SessionStore`` protocol."""
    assert isinstance(store, SessionStore)


def test_a_new_session_is_empty_at_version_0(store: SessionStore) -> None:
    """Loading a session nobody saved gives no messages and version 0."""
    session = store.load("u", "s")
    assert session == Session((), 0)
    assert len(session.messages) == 0
    assert session.version == 0


def test_a_save_at_the_loaded_version_returns_the_next_version(store: SessionStore) -> None:
    """Each save at the version just loaded succeeds and returns that version plus one."""
    assert store.save("u", "s", turn("a", "b"), version=store.load("u", "s").version) == 1
    assert store.save("u", "s", turn("a", "b") * 2, version=store.load("u", "s").version) == 2
    assert store.load("u", "s") == Session(turn("a", "b") * 2, 2)


def test_sessions_are_keyed_by_user_and_session(store: SessionStore) -> None:
    """The same session id under another user, or another id, is another session."""
    store.save("ann", "s", turn("from ann", "ok"), version=0)
    assert store.load("bob", "s") == Session((), 0)
    assert store.load("ann", "t") == Session((), 0)
    assert store.load("ann", "s").messages == turn("from ann", "ok")


def test_a_stale_save_is_refused_and_keeps_the_other_save(store: SessionStore) -> None:
    """A save at a version someone saved over raises ``SessionConflict``; their save stays."""
    first = store.load("u", "s")
    second = store.load("u", "s")
    assert store.save("u", "s", turn("second", "kept"), version=second.version) == 1
    with pytest.raises(SessionConflict) as caught:
        store.save("u", "s", turn("first", "lost"), version=first.version)
    error = caught.value
    assert (error.user_id, error.session_id, error.expected, error.found) == ("u", "s", 0, 1)
    assert isinstance(error, RuntimeError)
    for named in ("'s'", "'u'", "version 0", "version 1"):
        assert named in str(error)
    assert store.load("u", "s") == Session(turn("second", "kept"), 1)


def test_saves_at_one_version_from_many_threads_succeed_once(store: SessionStore) -> None:
    """Sixteen threads saving at the same version: exactly one succeeds, the rest conflict."""
    version = store.load("u", "s").version
    barrier = threading.Barrier(16)

    def save(n: int) -> int | None:
        barrier.wait()
        try:
            return store.save("u", "s", turn(str(n), "ok"), version=version)
        except SessionConflict:
            return None

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(save, range(16)))
    winners = [n for n, result in enumerate(results) if result is not None]
    assert len(winners) == 1
    assert results.count(None) == 15
    assert store.load("u", "s") == Session(turn(str(winners[0]), "ok"), 1)


def test_a_plain_list_can_be_saved_and_is_not_shared(store: SessionStore) -> None:
    """``save`` takes a list; changing the list afterwards does not change the session."""
    messages = list(turn("a", "b"))
    store.save("u", "s", messages, version=0)
    messages.append(Message("user", "later"))
    messages[0] = Message("user", "changed")
    assert store.load("u", "s").messages == turn("a", "b")


def test_a_loaded_snapshot_never_changes(store: SessionStore) -> None:
    """Messages loaded before a save are the same after it, whatever the save stored."""
    store.save("u", "s", turn("a", "b"), version=0)
    before = store.load("u", "s")
    store.save("u", "s", (*before.messages, *turn("c", "d")), version=before.version)
    store.save("u", "s", turn("other", "conversation"), version=2)
    assert before == Session(turn("a", "b"), 1)


def test_a_transcript_grown_from_a_loaded_one_leaves_the_snapshot_as_it_was(
    store: SessionStore,
) -> None:
    """Saving the loaded transcript extended in place (no copy) keeps the loaded snapshot."""
    store.save("u", "s", turn("a", "b"), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    store.save("u", "s", loaded.messages.extend(turn("c", "d")), version=loaded.version)
    assert loaded.messages == turn("a", "b")
    assert store.load("u", "s").messages == turn("a", "b") + turn("c", "d")


def test_delete_forgets_the_session_only(store: SessionStore) -> None:
    """``delete`` forgets one session (a later load is new); a missing session is no error."""
    store.save("u", "s", turn("a", "b"), version=0)
    store.save("u", "t", turn("c", "d"), version=0)
    store.delete("u", "s")
    store.delete("u", "s")
    store.delete("nobody", "nothing")
    assert store.load("u", "s") == Session((), 0)
    assert store.load("u", "t").messages == turn("c", "d")


def test_a_save_after_delete_by_a_run_that_loaded_before_is_refused(store: SessionStore) -> None:
    """A run that loaded a session later deleted cannot save over it."""
    store.save("u", "s", turn("a", "b"), version=0)
    stale = store.load("u", "s")
    store.delete("u", "s")
    with pytest.raises(SessionConflict):
        store.save("u", "s", turn("stale", "turn"), version=stale.version)


def test_a_session_made_again_after_delete_never_reuses_a_version(store: SessionStore) -> None:
    """A stale run's version never matches the session made again after a delete."""
    store.save("u", "s", turn("a", "b"), version=0)
    stale = store.load("u", "s")
    store.delete("u", "s")
    remade = store.save("u", "s", turn("new", "conversation"), version=0)
    assert remade > stale.version
    with pytest.raises(SessionConflict):
        store.save("u", "s", turn("stale", "turn"), version=stale.version)
    assert store.load("u", "s") == Session(turn("new", "conversation"), remade)


def test_a_save_keeps_every_field_of_every_message(store: SessionStore) -> None:
    """Tool calls, call ids and names come back as they were saved."""
    messages = (
        Message("user", "add"),
        Message("assistant", "adding", tool_calls=(ToolCall("c1", "add", {"a": 1, "b": [2]}),)),
        Message("tool", "3", tool_call_id="c1", name="add"),
        Message("assistant", "3"),
    )
    store.save("u", "s", messages, version=0)
    assert tuple(store.load("u", "s").messages) == messages


def test_a_save_may_replace_or_drop_the_last_messages(store: SessionStore) -> None:
    """A save of a transcript cut short, or cut and grown again, stores exactly that."""
    store.save("u", "s", turn("a", "b") + turn("c", "d"), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    cut = loaded.messages.prefix(3)
    version = store.save("u", "s", cut, version=loaded.version)
    assert tuple(store.load("u", "s").messages) == (*turn("a", "b"), Message("user", "c"))
    replaced = cut.prefix(2).append(Message("user", "e"))
    store.save("u", "s", replaced, version=version)
    assert tuple(store.load("u", "s").messages) == (*turn("a", "b"), Message("user", "e"))


def test_every_shape_of_save_loads_back_exactly_what_was_saved(store: SessionStore) -> None:
    """Saves that grow, cut, fork mid-way, start over from a plain list and empty the
    session: each load gives exactly the messages of the save before it, no row lost or
    left behind."""
    base = tuple(turn(f"q{n}", f"a{n}")[n % 2] for n in range(8))
    shapes: list[tuple[Message, ...]] = [
        base,
        (*base, *turn("more", "yes")),
        base[:3],
        (*base[:2], Message("user", "forked"), *base[3:6]),
        tuple(turn("fresh", "start")),
        (),
        base[:5],
    ]
    version = 0
    for shape in shapes:
        loaded = store.load("u", "s")
        assert loaded.version == version
        messages = loaded.messages
        assert isinstance(messages, Transcript)
        grown = messages.prefix(messages.common_prefix(shape)).extend(
            shape[messages.common_prefix(shape) :]
        )
        version = store.save("u", "s", grown, version=version)
        assert tuple(store.load("u", "s").messages) == shape
        if isinstance(store, SQLiteSessionStore):  # and as the file holds it
            with SQLiteSessionStore(store.path) as fresh:
                assert tuple(fresh.load("u", "s").messages) == shape


# -- session-scoped state ---------------------------------------------------------------


def test_a_new_session_has_no_state(store: SessionStore) -> None:
    """An unknown session's state is empty, as is a session saved without one."""
    assert store.load("u", "s").state == {}
    store.save("u", "s", turn("a", "b"), version=0)
    assert store.load("u", "s").state == {}


def test_state_is_saved_with_the_session(store: SessionStore) -> None:
    """A save's state comes back with the session: JSON values, a tuple as a list."""
    state = {"count": 2, "names": ["ann", "bob"], "pair": (1, 2), "none": None, "ok": True}
    store.save("u", "s", turn("a", "b"), version=0, state=state)
    assert store.load("u", "s").state == {
        "count": 2,
        "names": ["ann", "bob"],
        "pair": [1, 2],
        "none": None,
        "ok": True,
    }


def test_a_save_without_state_keeps_the_stored_state(store: SessionStore) -> None:
    """``state=None`` keeps what the session holds; a mapping replaces it whole."""
    version = store.save("u", "s", turn("a", "b"), version=0, state={"a": 1, "b": 2})
    version = store.save("u", "s", turn("a", "b") * 2, version=version)
    assert store.load("u", "s").state == {"a": 1, "b": 2}
    store.save("u", "s", turn("a", "b"), version=version, state={"c": 3})
    assert store.load("u", "s").state == {"c": 3}


def test_a_loaded_state_is_a_fresh_copy(store: SessionStore) -> None:
    """Changing the values a load returned changes nothing stored."""
    store.save("u", "s", turn("a", "b"), version=0, state={"names": ["ann"]})
    loaded = store.load("u", "s").state
    loaded["names"].append("mallory")
    assert store.load("u", "s").state == {"names": ["ann"]}


def test_a_value_json_cannot_hold_is_refused_naming_its_key(store: SessionStore) -> None:
    """A set in the state is a ``TypeError`` naming its key, and nothing is saved."""
    version = store.save("u", "s", turn("a", "b"), version=0, state={"ok": 1})
    with pytest.raises(TypeError, match=r"^session state 'tags' must be JSON-serialisable .* set"):
        store.save("u", "s", turn("c", "d"), version=version, state={"ok": 2, "tags": {"x"}})
    assert store.load("u", "s") == Session(turn("a", "b"), version, {"ok": 1})


def test_delete_forgets_the_state(store: SessionStore) -> None:
    """A session made again after ``delete`` starts with no state."""
    store.save("u", "s", turn("a", "b"), version=0, state={"a": 1})
    store.delete("u", "s")
    store.save("u", "s", turn("c", "d"), version=0)
    assert store.load("u", "s").state == {}


# -- leases -----------------------------------------------------------------------------


def test_a_lease_keeps_other_owners_out(store: SessionStore) -> None:
    """While run-a holds the lease, run-b's acquire raises ``SessionBusy`` naming run-a."""
    store.acquire("u", "s", owner="run-a", ttl=30)
    with pytest.raises(SessionBusy) as caught:
        store.acquire("u", "s", owner="run-b", ttl=30)
    error = caught.value
    assert (error.user_id, error.session_id, error.holder) == ("u", "s", "run-a")
    assert isinstance(error, RuntimeError)
    assert str(error).startswith("session 's' of user 'u' is busy: run 'run-a' holds its lease")


def test_the_holder_renews_its_lease(store: SessionStore) -> None:
    """The owner may acquire its lease again; it still keeps others out."""
    store.acquire("u", "s", owner="run-a", ttl=30)
    store.acquire("u", "s", owner="run-a", ttl=30)
    with pytest.raises(SessionBusy):
        store.acquire("u", "s", owner="run-b", ttl=30)


def test_a_released_lease_can_be_taken(store: SessionStore) -> None:
    """After its owner releases it, another owner takes the lease."""
    store.acquire("u", "s", owner="run-a", ttl=30)
    store.release("u", "s", owner="run-a")
    store.acquire("u", "s", owner="run-b", ttl=30)
    with pytest.raises(SessionBusy) as caught:
        store.acquire("u", "s", owner="run-a", ttl=30)
    assert caught.value.holder == "run-b"


def test_only_the_holder_releases_a_lease(store: SessionStore) -> None:
    """A release by another owner, or of a lease nobody holds, changes nothing."""
    store.release("u", "s", owner="nobody")
    store.acquire("u", "s", owner="run-a", ttl=30)
    store.release("u", "s", owner="run-b")
    with pytest.raises(SessionBusy):
        store.acquire("u", "s", owner="run-b", ttl=30)


def test_an_expired_lease_can_be_taken(store: SessionStore, clock: FakeTime) -> None:
    """A lease its owner never released (a dead process) is free once its ttl is over."""
    store.acquire("u", "s", owner="dead", ttl=10)
    clock.now += 9.9
    with pytest.raises(SessionBusy):
        store.acquire("u", "s", owner="next", ttl=30)
    clock.now += 0.1
    store.acquire("u", "s", owner="next", ttl=30)
    with pytest.raises(SessionBusy) as caught:
        store.acquire("u", "s", owner="dead", ttl=30)
    assert caught.value.holder == "next"


def test_an_expired_lease_also_expires_in_real_time(store: SessionStore) -> None:
    """Without a fake clock: a 50 ms lease is free a tenth of a second later."""
    store.acquire("u", "s", owner="dead", ttl=0.05)
    time.sleep(0.1)
    store.acquire("u", "s", owner="next", ttl=30)


def test_renewing_pushes_the_expiry_back(store: SessionStore, clock: FakeTime) -> None:
    """An owner that renews before its ttl is over keeps the lease past the first ttl."""
    store.acquire("u", "s", owner="run-a", ttl=10)
    clock.now += 8
    store.acquire("u", "s", owner="run-a", ttl=10)
    clock.now += 8  # past the first ttl, within the renewal's
    with pytest.raises(SessionBusy):
        store.acquire("u", "s", owner="run-b", ttl=30)
    clock.now += 2
    store.acquire("u", "s", owner="run-b", ttl=30)


def test_leases_are_per_session(store: SessionStore) -> None:
    """One session's lease does not hold another session or another user's."""
    store.acquire("u", "s", owner="run-a", ttl=30)
    store.acquire("u", "t", owner="run-b", ttl=30)
    store.acquire("v", "s", owner="run-c", ttl=30)


def test_many_threads_acquiring_one_lease_one_wins(store: SessionStore) -> None:
    """Sixteen owners acquiring one session's lease at once: exactly one gets it."""
    barrier = threading.Barrier(16)

    def acquire(n: int) -> bool:
        barrier.wait()
        try:
            store.acquire("u", "s", owner=f"run-{n}", ttl=30)
        except SessionBusy:
            return False
        return True

    with ThreadPoolExecutor(16) as pool:
        won = list(pool.map(acquire, range(16)))
    assert won.count(True) == 1


# -- paused runs ------------------------------------------------------------------------


def test_a_paused_state_is_kept_by_run_id(store: SessionStore) -> None:
    """``save_paused`` keeps the text as given; ``load_paused`` gives it back; others are None."""
    text = '{"schema": 1, "run_id": "r1", "pending": ["é"]}'
    store.save_paused("r1", "u", "s", text)
    store.save_paused("r2", "u", "s", "{}")
    assert store.load_paused("r1") == text
    assert store.load_paused("r2") == "{}"
    assert store.load_paused("r3") is None


def test_a_paused_state_saved_again_replaces_the_old(store: SessionStore) -> None:
    """A run that pauses again under its id replaces its saved state."""
    store.save_paused("r1", "u", "s", '{"step": 1}')
    store.save_paused("r1", "u", "s", '{"step": 2}')
    assert store.load_paused("r1") == '{"step": 2}'


def test_delete_paused_forgets_one_run(store: SessionStore) -> None:
    """``delete_paused`` forgets that run only; a missing one is no error."""
    store.save_paused("r1", "u", "s", "{}")
    store.save_paused("r2", "u", "s", "{}")
    store.delete_paused("r1")
    store.delete_paused("r1")
    store.delete_paused("never")
    assert store.load_paused("r1") is None
    assert store.load_paused("r2") == "{}"


def test_deleting_a_session_forgets_its_paused_runs(store: SessionStore) -> None:
    """A deleted session's paused runs go with it; other sessions' stay."""
    store.save("u", "s", turn("a", "b"), version=0)
    store.save_paused("r1", "u", "s", "{}")
    store.save_paused("r2", "u", "t", "{}")
    store.delete("u", "s")
    assert store.load_paused("r1") is None
    assert store.load_paused("r2") == "{}"


# -- runners sharing a store --------------------------------------------------------------


def test_two_runners_racing_on_one_session_lose_no_turn(store: SessionStore) -> None:
    """Two runners sharing a store run one session at once: the second is refused at once.

    The slow run takes the session's lease and waits in its tool; the fast run on the
    other runner raises ``SessionBusy`` naming the slow run, before it loads anything.
    The store then holds the earlier turn and the slow run's, and once the slow run has
    ended the fast runner continues from there.
    """
    started, release = asyncio.Event(), asyncio.Event()

    async def wait() -> str:
        """Wait until the test releases the run."""
        started.set()
        await release.wait()
        return "released"

    slow_model = ScriptedModel([calling(ToolCall("c1", "wait", {})), "slow done"])
    fast_model = ScriptedModel(["earlier done", "third done"])
    slow = Runner(Agent("assistant", slow_model, tools=[wait]), sessions=store)
    fast = Runner(Agent("assistant", fast_model), sessions=store)

    async def race() -> None:
        await fast.arun("earlier", user_id="u", session_id="s")
        slow_run = asyncio.create_task(slow.arun("slow", user_id="u", session_id="s"))
        await started.wait()
        with pytest.raises(SessionBusy) as caught:
            await fast.arun("fast", user_id="u", session_id="s")
        assert (caught.value.user_id, caught.value.session_id) == ("u", "s")
        release.set()
        assert caught.value.holder == (await slow_run).run_id
        third = await fast.arun("third", user_id="u", session_id="s")
        assert third.output == "third done"

    with slow, fast:
        asyncio.run(race())
    earlier = turn("earlier", "earlier done")
    slow_turn = (
        Message("user", "slow"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "wait", {}),)),
        Message("tool", "released", tool_call_id="c1", name="wait"),
        Message("assistant", "slow done"),
    )
    third_turn = turn("third", "third done")
    assert len(fast_model.requests) == 2  # the refused run never reached the model
    assert fast_model.requests[-1].messages == (*earlier, *slow_turn, third_turn[0])
    assert store.load("u", "s") == Session((*earlier, *slow_turn, *third_turn), 3)


def test_sequential_runs_on_two_runners_continue_one_conversation(
    store: SessionStore, mode: Mode
) -> None:
    """Runs on two runners sharing a store, one after the other, continue the same session."""
    first_model, second_model = ScriptedModel(["one done"]), ScriptedModel(["two done"])
    with (
        Runner(Agent("assistant", first_model), sessions=store) as first,
        Runner(Agent("assistant", second_model), sessions=store) as second,
    ):
        drive(first, mode, "one", user_id="u", session_id="s")
        drive(second, mode, "two", user_id="u", session_id="s")
    assert second_model.requests[0].messages == (*turn("one", "one done"), Message("user", "two"))
    assert store.load("u", "s") == Session((*turn("one", "one done"), *turn("two", "two done")), 2)


def test_a_save_over_a_session_changed_mid_run_fails_the_run(
    store: SessionStore, mode: Mode
) -> None:
    """A run whose session someone else saved meanwhile raises ``SessionConflict``."""

    def interfere() -> str:
        """Save the session as another process would, while the run is under way."""
        store.save("u", "s", turn("elsewhere", "kept"), version=store.load("u", "s").version)
        return "done"

    model = ScriptedModel([calling(ToolCall("c1", "interfere", {})), "finished"])
    with (
        Runner(Agent("assistant", model, tools=[interfere]), sessions=store) as runner,
        pytest.raises(SessionConflict),
    ):
        drive(runner, mode, "go", user_id="u", session_id="s")
    assert store.load("u", "s") == Session(turn("elsewhere", "kept"), 1)


def test_a_run_holds_its_sessions_lease_until_it_ends(store: SessionStore, mode: Mode) -> None:
    """During a run its run id holds the lease (another owner is refused); after, nobody."""
    seen: list[str] = []

    def probe() -> str:
        """Try to take the session's lease as another process would."""
        try:
            store.acquire("u", "s", owner="intruder", ttl=30)
        except SessionBusy as busy:
            seen.append(busy.holder)
            return "busy"
        return "free"

    model = ScriptedModel([calling(ToolCall("c1", "probe", {})), "done"])
    with Runner(Agent("assistant", model, tools=[probe]), sessions=store) as runner:
        result = drive(runner, mode, "go", user_id="u", session_id="s")
    assert seen == [result.run_id]
    store.acquire("u", "s", owner="intruder", ttl=30)  # released at the end of the run


def test_a_failed_run_releases_its_lease(store: SessionStore, mode: Mode) -> None:
    """A run whose model fails releases the lease: the next run on the session goes ahead."""
    model = ScriptedModel([RuntimeError("model down"), "ok"])
    with Runner(Agent("assistant", model), sessions=store) as runner:
        with pytest.raises(RuntimeError, match="model down"):
            drive(runner, mode, "one", user_id="u", session_id="s")
        assert drive(runner, mode, "two", user_id="u", session_id="s").output == "ok"


def test_a_stream_closed_early_releases_its_lease(store: SessionStore) -> None:
    """A consumer that stops a streamed run midway leaves the session free for the next run."""

    async def main(runner: Runner) -> str:
        stream = runner.stream("one", user_id="u", session_id="s")
        async for _ in stream:
            break  # the run has started: it holds the lease
        with pytest.raises(SessionBusy):
            store.acquire("u", "s", owner="intruder", ttl=30)
        await stream.aclose()
        return (await runner.arun("two", user_id="u", session_id="s")).output

    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        assert asyncio.run(main(runner)) == "ok"


def test_a_run_on_a_session_held_elsewhere_is_refused_before_it_starts(
    store: SessionStore, mode: Mode
) -> None:
    """A session another process holds: the run raises ``SessionBusy``; the model is not asked."""
    store.acquire("u", "s", owner="elsewhere", ttl=30)
    model = ScriptedModel(default="ok")
    with Runner(Agent("assistant", model), sessions=store) as runner:
        with pytest.raises(SessionBusy) as caught:
            drive(runner, mode, "go", user_id="u", session_id="s")
        assert caught.value.holder == "elsewhere"
        assert model.requests == []
        store.release("u", "s", owner="elsewhere")
        assert drive(runner, mode, "go", user_id="u", session_id="s").output == "ok"


def test_a_long_run_renews_its_lease_at_model_steps(
    store: SessionStore, mode: Mode, clock: FakeTime
) -> None:
    """A run longer than its lease's ttl renews it at each model step and keeps others out."""
    seen: list[str] = []

    def slow() -> str:
        """Take 40% of the lease's ttl, then check who holds the session."""
        clock.now += 12
        try:
            store.acquire("u", "s", owner="intruder", ttl=30)
        except SessionBusy as busy:
            seen.append(busy.holder)
        return "done"

    calls = [calling(ToolCall(f"c{n}", "slow", {})) for n in range(4)]
    agent = Agent("assistant", ScriptedModel([*calls, "done"]), tools=[slow])
    with Runner(agent, sessions=store, session_lease=30) as runner:
        result = drive(runner, mode, "go", user_id="u", session_id="s")
    assert seen == [result.run_id] * 4  # the last 48 s after the start: still held


def probe(store: SessionStore, user_id: str, session_id: str) -> str:
    """Try to take a session's lease as another process would: who holds it, or ``"free"``."""
    try:
        store.acquire(user_id, session_id, owner="intruder", ttl=30)
    except SessionBusy as busy:
        return busy.holder
    store.release(user_id, session_id, owner="intruder")
    return "free"


class Probe(BeforeModel):
    """Probes the lease of the session its run is on, which it can name."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.seen: list[str] = []

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Probe, then go on."""
        invocation = ctx.invocation
        self.seen.append(probe(self.store, invocation.user_id, invocation.session_id))
        return Cont(ctx)


@pytest.mark.parametrize("where", ["runner", "run", "agent"])
def test_a_fresh_session_is_held_where_a_callback_can_name_it(
    store: SessionStore, mode: Mode, where: str
) -> None:
    """A run that starts a session (no ``session_id``) holds its lease when a callback, which
    sees the new id, runs in it: the runner's, the run's or the agent's own."""
    watch = Probe(store)
    agent = Agent("assistant", ScriptedModel(default="ok"), callbacks=[watch] * (where == "agent"))
    callbacks = [watch] * (where == "run")
    with Runner(agent, sessions=store, callbacks=[watch] * (where == "runner")) as runner:
        result = drive(runner, mode, "go", user_id="u", callbacks=callbacks)
    assert watch.seen == [result.run_id]
    assert probe(store, "u", result.session_id) == "free"  # released at the end of the run


def test_a_fresh_session_is_held_once_its_stream_shows_it(store: SessionStore) -> None:
    """A streamed run that starts a session holds its lease from the first event, which names
    the session."""

    async def main(runner: Runner) -> tuple[str, RunStartedEvent]:
        stream = runner.stream("go", user_id="u")
        started = await anext(stream)
        assert isinstance(started, RunStartedEvent)
        holder = probe(store, "u", started.session_id)
        await stream.aclose()
        return holder, started

    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        holder, started = asyncio.run(main(runner))
    assert holder == started.run_id
    assert probe(store, "u", started.session_id) == "free"


class ProbeAtChatEnd(SpanProcessor):
    """Probes the lease of the session each ended ``chat`` span names, as an exporter could."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.seen: list[str] = []

    @override
    def on_end(self, span: ReadableSpan) -> None:
        """Probe the span's conversation, if it is a model call's."""
        session_id = (span.attributes or {}).get("gen_ai.conversation.id")
        if span.name.startswith("chat") and isinstance(session_id, str):
            self.seen.append(probe(self.store, "u", session_id))


def test_a_fresh_session_is_held_in_a_traced_run(store: SessionStore, mode: Mode) -> None:
    """A traced run that starts a session holds its lease: its spans name the session, and a
    span processor sees them before the run ends."""
    provider = TracerProvider()
    watch = ProbeAtChatEnd(store)
    provider.add_span_processor(watch)
    agent = Agent("assistant", ScriptedModel(default="ok"))
    with Runner(agent, sessions=store, tracer_provider=provider) as runner:
        result = drive(runner, mode, "go", user_id="u")
    assert watch.seen == [result.run_id]


def test_a_runners_own_store_shared_with_another_runner_holds_each_session(mode: Mode) -> None:
    """A runner's default store given to a second runner: a run of the second on a session
    the first is running raises ``SessionBusy`` naming the first one's run."""

    def meanwhile() -> str:
        """Run the same session on the second runner, from inside the first one's run."""
        try:
            second.run("meanwhile", user_id="u", session_id="s")
        except SessionBusy as busy:
            return f"busy: {busy.holder}"
        return "ran"

    model = ScriptedModel([calling(ToolCall("c1", "meanwhile", {})), "done"])
    first = Runner(Agent("assistant", model, tools=[meanwhile]))
    second = Runner(Agent("assistant", ScriptedModel(default="second")), sessions=first.sessions)
    with first, second:
        result = drive(first, mode, "go", user_id="u", session_id="s")
        assert second.run("after", user_id="u", session_id="s").output == "second"
    (answer,) = [event.result.content for event in result.events if type(event) is ToolResultEvent]
    assert answer == f"busy: {result.run_id}"


@pytest.mark.parametrize(
    ("lease", "error"),
    [(0, ValueError), (-1.0, ValueError), ("60", TypeError), (float("nan"), ValueError)],
)
def test_an_invalid_session_lease_is_refused(lease: object, error: type[Exception]) -> None:
    """``session_lease`` must be a finite number of seconds above 0."""
    with pytest.raises(error, match=r"^session_lease must be a finite number"):
        Runner(Agent("assistant", ScriptedModel()), session_lease=lease)  # type: ignore[arg-type]


def test_the_default_session_lease_is_a_minute() -> None:
    """A runner holds a session's lease for 60 s at a time unless told otherwise."""
    with Runner(Agent("assistant", ScriptedModel())) as runner:
        assert runner.session_lease == 60.0


# -- session-scoped state, run to run ------------------------------------------------------

TURNS = StateKey[int]("turns", scope="session")
SEEN = StateKey[list[str]]("seen", scope="session")
SCRATCH = StateKey[str]("scratch")


class CountTurns(BeforeAgent):
    """Counts the session's turns and the messages it saw, in session state; notes each run's
    starting count."""

    def __init__(self) -> None:
        self.started_at: list[int | None] = []

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Count one turn, remember the message, and leave a scratch value for this run."""
        state = ctx.invocation.state
        self.started_at.append(state.get(TURNS))
        state.update(TURNS, lambda n: n + 1, default=0)
        state.set(SEEN, [*state.get(SEEN, []), ctx.message.content])
        state.set(SCRATCH, "this run only")
        return Cont(ctx)


def test_session_state_carries_from_run_to_run(store: SessionStore, mode: Mode) -> None:
    """A session-scoped key's value is seeded into the next run of the session and saved."""
    counter = CountTurns()
    model = ScriptedModel(default="ok")
    with Runner(Agent("assistant", model), sessions=store, callbacks=[counter]) as runner:
        results = [
            drive(runner, mode, m, user_id="u", session_id="s") for m in ("one", "two", "three")
        ]
    assert counter.started_at == [None, 1, 2]
    assert results[-1].state == {
        "turns": 3,
        "seen": ["one", "two", "three"],
        "scratch": "this run only",
    }
    assert store.load("u", "s").state == {"turns": 3, "seen": ["one", "two", "three"]}


def test_session_state_is_per_session(store: SessionStore, mode: Mode) -> None:
    """Another session, or another user's session, starts from no state."""
    counter = CountTurns()
    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        for user, session in (("u", "s"), ("u", "s"), ("u", "t"), ("v", "s")):
            drive(runner, mode, "hi", user_id=user, session_id=session, callbacks=[counter])
    assert counter.started_at == [None, 1, None, None]


def test_session_state_reaches_a_new_runner(store: SessionStore, mode: Mode) -> None:
    """A runner made later (a restart, with a store that outlives it) sees the state."""
    first, second = CountTurns(), CountTurns()
    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        drive(runner, mode, "one", user_id="u", session_id="s", callbacks=[first])
    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        drive(runner, mode, "two", user_id="u", session_id="s", callbacks=[second])
    assert (first.started_at, second.started_at) == ([None], [1])


def test_a_session_value_deleted_in_a_run_is_gone_from_the_session(
    store: SessionStore, mode: Mode
) -> None:
    """``state.delete`` of a session-scoped key removes it from what the session keeps."""

    class Forget(BeforeAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            ctx.invocation.state.delete(SEEN)
            return Cont(ctx)

    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        drive(runner, mode, "one", user_id="u", session_id="s", callbacks=[CountTurns()])
        drive(runner, mode, "two", user_id="u", session_id="s", callbacks=[Forget()])
    assert store.load("u", "s").state == {"turns": 1}


def test_a_value_that_is_no_json_fails_the_run_naming_its_key(
    store: SessionStore, mode: Mode
) -> None:
    """A session-scoped value JSON cannot hold fails the run at its save, naming the key."""
    tags = StateKey[set[str]]("tags", scope="session")

    class Tag(BeforeAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            ctx.invocation.state.set(tags, {"urgent"})
            return Cont(ctx)

    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        with pytest.raises(TypeError, match=r"^session state 'tags' must be JSON-serialisable"):
            drive(runner, mode, "go", user_id="u", session_id="s", callbacks=[Tag()])
        assert store.load("u", "s") == Session((), 0)  # nothing saved
        store.acquire("u", "s", owner="next", ttl=30)  # and the lease was released


def test_state_seeded_from_the_session_is_visible_to_every_hook(
    store: SessionStore, mode: Mode
) -> None:
    """A session saved with state (by any writer) seeds the run: hooks read it by name."""
    store.save("u", "s", turn("a", "b"), version=0, state={"turns": 41, "plain": "kept"})
    read: list[Any] = []

    class Read(BeforeAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            read.extend((ctx.invocation.state.get(TURNS), ctx.invocation.state.get("plain")))
            return Cont(ctx)

    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        drive(runner, mode, "go", user_id="u", session_id="s", callbacks=[Read()])
    assert read == [41, "kept"]
    assert store.load("u", "s").state == {"turns": 41, "plain": "kept"}


def test_async_runs_on_many_sessions_keep_their_own_state(store: SessionStore) -> None:
    """Concurrent async runs on eight sessions of one store each count their own turns."""
    counter = CountTurns()

    async def main(runner: Runner) -> None:
        for _ in range(3):
            await asyncio.gather(
                *(runner.arun("hi", user_id="u", session_id=f"s{n}") for n in range(8))
            )

    with Runner(
        Agent("assistant", ScriptedModel(default="ok")), sessions=store, callbacks=[counter]
    ) as runner:
        asyncio.run(main(runner))
    assert [store.load("u", f"s{n}").state["turns"] for n in range(8)] == [3] * 8
