"""Tests of ``runner._sessions``: the versioned store contract and runners sharing a store.

The contract (the module docstring of ``runner._sessions``): ``load`` returns a
snapshot and a version, ``save`` is a compare-and-set on that version, ``delete``
forgets. The end-to-end tests check that no store shared by runners drops a turn.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from hooks import BeforeResult, Cont
from runner import (
    Agent,
    InMemorySessions,
    Message,
    ModelContext,
    ModelResponse,
    Runner,
    ScriptedModel,
    Session,
    SessionBusy,
    SessionConflict,
    SessionStore,
    StopEvent,
    StopRun,
    ToolCall,
    Transcript,
)
from tests import runner_helpers
from tests.runner_helpers import LeasesAndPauses, Mode, add, calling, drive

mode = runner_helpers.mode


def turn(question: str, answer: str) -> tuple[Message, Message]:
    """A user message and the assistant's answer to it."""
    return Message("user", question), Message("assistant", answer)


# -- the store contract -----------------------------------------------------------------


def test_in_memory_sessions_is_a_session_store() -> None:
    """The default store satisfies the ``SessionStore`` protocol."""
    assert isinstance(InMemorySessions(), SessionStore)


def test_a_new_session_is_empty_at_version_0() -> None:
    """Loading a session nobody saved gives no messages and version 0."""
    session = InMemorySessions().load("u", "s")
    assert session == Session((), 0)
    assert len(session.messages) == 0
    assert session.version == 0


def test_a_save_at_the_loaded_version_returns_the_next_version() -> None:
    """Each save at the version just loaded succeeds and returns that version plus one."""
    store = InMemorySessions()
    assert store.save("u", "s", turn("a", "b"), version=store.load("u", "s").version) == 1
    assert store.save("u", "s", turn("a", "b") * 2, version=store.load("u", "s").version) == 2
    assert store.load("u", "s") == Session(turn("a", "b") * 2, 2)


def test_sessions_are_keyed_by_user_and_session() -> None:
    """The same session id under another user, or another id, is another session."""
    store = InMemorySessions()
    store.save("ann", "s", turn("from ann", "ok"), version=0)
    assert store.load("bob", "s") == Session((), 0)
    assert store.load("ann", "t") == Session((), 0)
    assert store.load("ann", "s").messages == turn("from ann", "ok")
    assert len(store) == 1


def test_a_stale_save_is_refused_and_keeps_the_other_save() -> None:
    """A save at a version someone saved over raises ``SessionConflict``; their save stays."""
    store = InMemorySessions()
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


def test_saves_at_one_version_from_many_threads_succeed_once() -> None:
    """Sixteen threads saving at the same version: exactly one succeeds, the rest conflict."""
    store = InMemorySessions()
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


def test_a_plain_list_can_be_saved_and_is_not_shared() -> None:
    """``save`` takes a list; changing the list afterwards does not change the session."""
    store = InMemorySessions()
    messages = list(turn("a", "b"))
    store.save("u", "s", messages, version=0)
    messages.append(Message("user", "later"))
    messages[0] = Message("user", "changed")
    assert store.load("u", "s").messages == turn("a", "b")


def test_a_loaded_snapshot_never_changes() -> None:
    """Messages loaded before a save are the same after it, whatever the save stored."""
    store = InMemorySessions()
    store.save("u", "s", turn("a", "b"), version=0)
    before = store.load("u", "s")
    store.save("u", "s", (*before.messages, *turn("c", "d")), version=before.version)
    store.save("u", "s", turn("other", "conversation"), version=2)
    assert before == Session(turn("a", "b"), 1)


def test_a_transcript_grown_from_a_loaded_one_leaves_the_snapshot_as_it_was() -> None:
    """Saving the loaded transcript extended in place (no copy) keeps the loaded snapshot."""
    store = InMemorySessions()
    store.save("u", "s", turn("a", "b"), version=0)
    loaded = store.load("u", "s")
    assert isinstance(loaded.messages, Transcript)
    store.save("u", "s", loaded.messages.extend(turn("c", "d")), version=loaded.version)
    assert loaded.messages == turn("a", "b")
    assert store.load("u", "s").messages == turn("a", "b") + turn("c", "d")


def test_delete_forgets_the_session_only() -> None:
    """``delete`` forgets one session (a later load is new); a missing session is no error."""
    store = InMemorySessions()
    store.save("u", "s", turn("a", "b"), version=0)
    store.save("u", "t", turn("c", "d"), version=0)
    store.delete("u", "s")
    store.delete("u", "s")
    store.delete("nobody", "nothing")
    assert store.load("u", "s") == Session((), 0)
    assert store.load("u", "t").messages == turn("c", "d")
    assert len(store) == 1


def test_a_save_after_delete_by_a_run_that_loaded_before_is_refused() -> None:
    """A run that loaded a session later deleted cannot save over it."""
    store = InMemorySessions()
    store.save("u", "s", turn("a", "b"), version=0)
    stale = store.load("u", "s")
    store.delete("u", "s")
    with pytest.raises(SessionConflict):
        store.save("u", "s", turn("stale", "turn"), version=stale.version)


def test_a_session_made_again_after_delete_never_reuses_a_version() -> None:
    """A stale run's version never matches the session made again after a delete."""
    store = InMemorySessions()
    store.save("u", "s", turn("a", "b"), version=0)
    stale = store.load("u", "s")
    store.delete("u", "s")
    remade = store.save("u", "s", turn("new", "conversation"), version=0)
    assert remade > stale.version
    with pytest.raises(SessionConflict):
        store.save("u", "s", turn("stale", "turn"), version=stale.version)
    assert store.load("u", "s") == Session(turn("new", "conversation"), remade)


def test_clear_forgets_every_session_and_their_versions() -> None:
    """``clear`` empties the store; a stale version cannot save over a session made again."""
    store = InMemorySessions()
    store.save("u", "s", turn("a", "b"), version=0)
    stale = store.load("u", "s")
    store.clear()
    assert len(store) == 0
    assert store.load("u", "s") == Session((), 0)
    store.save("u", "s", turn("new", "conversation"), version=0)
    with pytest.raises(SessionConflict):
        store.save("u", "s", turn("stale", "turn"), version=stale.version)


def test_the_least_recently_used_session_is_forgotten_past_max_sessions() -> None:
    """With ``max_sessions=2`` a third session pushes out the one used longest ago."""
    store = InMemorySessions(max_sessions=2)
    assert store.max_sessions == 2
    store.save("u", "a", turn("a", "a"), version=0)
    store.save("u", "b", turn("b", "b"), version=0)
    store.save("u", "c", turn("c", "c"), version=0)
    assert len(store) == 2
    assert store.load("u", "a") == Session((), 0)
    assert store.load("u", "b").messages == turn("b", "b")
    assert store.load("u", "c").messages == turn("c", "c")


def test_a_recently_loaded_session_survives() -> None:
    """Loading a session makes it recently used: a new session pushes out another one."""
    store = InMemorySessions(max_sessions=2)
    store.save("u", "a", turn("a", "a"), version=0)
    store.save("u", "b", turn("b", "b"), version=0)
    store.load("u", "a")
    store.save("u", "c", turn("c", "c"), version=0)
    assert store.load("u", "a").messages == turn("a", "a")
    assert store.load("u", "b") == Session((), 0)


def test_a_recently_saved_session_survives() -> None:
    """Saving a session makes it recently used."""
    store = InMemorySessions(max_sessions=2)
    store.save("u", "a", turn("a", "a"), version=0)
    store.save("u", "b", turn("b", "b"), version=0)
    store.save("u", "a", turn("a", "again"), version=1)
    store.save("u", "c", turn("c", "c"), version=0)
    assert store.load("u", "a") == Session(turn("a", "again"), 2)
    assert store.load("u", "b") == Session((), 0)


def test_a_run_whose_session_was_evicted_cannot_save_over_it() -> None:
    """A stale version never matches a session evicted and made again."""
    store = InMemorySessions(max_sessions=1)
    store.save("u", "a", turn("a", "a"), version=0)
    stale = store.load("u", "a")
    store.save("u", "b", turn("b", "b"), version=0)  # evicts a
    remade = store.save("u", "a", turn("a", "new"), version=0)  # evicts b
    with pytest.raises(SessionConflict):
        store.save("u", "a", turn("stale", "turn"), version=stale.version)
    assert store.load("u", "a") == Session(turn("a", "new"), remade)


def test_max_sessions_is_fixed_when_the_store_is_made() -> None:
    """``max_sessions`` cannot be changed later, so the bound stays a valid one."""
    store = InMemorySessions(max_sessions=5)
    with pytest.raises(AttributeError):
        store.max_sessions = 0  # type: ignore[misc]
    assert store.max_sessions == 5


def test_max_sessions_none_keeps_every_session() -> None:
    """``max_sessions=None`` never forgets a session."""
    store = InMemorySessions(max_sessions=None)
    for n in range(100):
        store.save("u", str(n), turn("q", "a"), version=0)
    assert len(store) == 100


@pytest.mark.parametrize(
    ("max_sessions", "error"),
    [(0, ValueError), (-1, ValueError), ("10", TypeError), (2.0, TypeError), (True, TypeError)],
)
def test_an_invalid_max_sessions_is_refused(max_sessions: object, error: type[Exception]) -> None:
    """``max_sessions`` must be a positive int or ``None``: a wrong value or type is refused."""
    with pytest.raises(error, match="max_sessions must be a positive int or None"):
        InMemorySessions(max_sessions=max_sessions)  # type: ignore[arg-type]


# -- runners sharing a store --------------------------------------------------------------


def test_two_runners_racing_on_one_session_lose_no_turn() -> None:
    """Two runners sharing a store run one session at once: the second is refused at once.

    The slow run takes the session's lease and waits in its tool; the fast run on the
    other runner raises ``SessionBusy`` naming the slow run, before it loads anything.
    The store then holds the earlier turn and the slow run's, and once the slow run has
    ended the fast runner continues from there.
    """
    store = InMemorySessions()
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
        await fast.run_async("earlier", user_id="u", session_id="s")
        slow_run = asyncio.create_task(slow.run_async("slow", user_id="u", session_id="s"))
        await started.wait()
        with pytest.raises(SessionBusy) as caught:
            await fast.run_async("fast", user_id="u", session_id="s")
        assert (caught.value.user_id, caught.value.session_id) == ("u", "s")
        release.set()
        assert caught.value.holder == (await slow_run).run_id
        third = await fast.run_async("third", user_id="u", session_id="s")
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


def test_sequential_runs_on_two_runners_continue_one_conversation(mode: Mode) -> None:
    """Runs on two runners sharing a store, one after the other, continue the same session."""
    store = InMemorySessions()
    first_model, second_model = ScriptedModel(["one done"]), ScriptedModel(["two done"])
    with (
        Runner(Agent("assistant", first_model), sessions=store) as first,
        Runner(Agent("assistant", second_model), sessions=store) as second,
    ):
        drive(first, mode, "one", user_id="u", session_id="s")
        drive(second, mode, "two", user_id="u", session_id="s")
    assert second_model.requests[0].messages == (*turn("one", "one done"), Message("user", "two"))
    assert store.load("u", "s") == Session((*turn("one", "one done"), *turn("two", "two done")), 2)


def test_a_save_over_a_session_changed_mid_run_fails_the_run(mode: Mode) -> None:
    """A run whose session someone else saved meanwhile raises ``SessionConflict``."""
    store = InMemorySessions()

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


def test_a_runner_refuses_sessions_that_are_not_a_store() -> None:
    """``sessions=`` must be a ``SessionStore``: a dict, or a store without versions, is refused."""

    class Unversioned:
        def load(self, user_id: str, session_id: str, /) -> list[Message]:
            return []

        def save(self, user_id: str, session_id: str, messages: Sequence[Message], /) -> None:
            pass

    agent = Agent("assistant", ScriptedModel(default="ok"))
    refused: tuple[object, ...] = ({}, Unversioned())
    for sessions in refused:
        with pytest.raises(TypeError, match="sessions must be a SessionStore"):
            Runner(agent, sessions=sessions)  # type: ignore[arg-type]


def test_a_store_without_leases_is_refused_naming_what_it_lacks() -> None:
    """A store written for the protocol before leases is told which methods it lacks."""

    class Unleased:
        def load(self, user_id: str, session_id: str, /) -> Session:
            return Session(())

        def save(
            self, user_id: str, session_id: str, messages: Sequence[Message], /, *, version: int
        ) -> int:
            return version + 1

        def delete(self, user_id: str, session_id: str, /) -> None:
            pass

    agent = Agent("assistant", ScriptedModel(default="ok"))
    lacks = "; this one has no acquire, release, save_paused, load_paused, delete_paused$"
    with pytest.raises(
        TypeError, match="^sessions must be a SessionStore, got Unleased; .*" + lacks
    ):
        Runner(agent, sessions=Unleased())  # type: ignore[arg-type]


class DictStore(LeasesAndPauses):
    """A custom ``SessionStore``: a dict of message tuples with versions and states."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[tuple[str, str], tuple[tuple[Message, ...], int]] = {}
        self.states: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The session's messages, version and state."""
        with self.lock:
            messages, version = self.data.get((user_id, session_id), ((), 0))
            state = json.loads(json.dumps(self.states.get((user_id, session_id), {})))
        return Session(messages, version, state)

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
        """Compare-and-set on ``version``."""
        with self.lock:
            _, found = self.data.get((user_id, session_id), ((), 0))
            if found != version:
                raise SessionConflict(user_id, session_id, expected=version, found=found)
            self.data[user_id, session_id] = (tuple(messages), version + 1)
            if state is not None:
                self.states[user_id, session_id] = json.loads(json.dumps(dict(state)))
        return version + 1

    def delete(self, user_id: str, session_id: str, /) -> None:
        """Forget the session."""
        with self.lock:
            self.data.pop((user_id, session_id), None)
            self.states.pop((user_id, session_id), None)


def test_a_custom_store_continues_conversations(mode: Mode) -> None:
    """A custom versioned store is loaded and saved by each run, sync and async alike."""
    store = DictStore()
    assert isinstance(store, SessionStore)
    model = ScriptedModel(["one done", "two done"])
    with Runner(Agent("assistant", model), sessions=store) as runner:
        drive(runner, mode, "one", user_id="u", session_id="s")
        drive(runner, mode, "two", user_id="u", session_id="s")
    assert model.requests[1].messages == (*turn("one", "one done"), Message("user", "two"))
    assert store.data["u", "s"] == ((*turn("one", "one done"), *turn("two", "two done")), 2)


def test_a_custom_stores_conflict_fails_the_run(mode: Mode) -> None:
    """A custom store's ``SessionConflict`` reaches the caller and keeps the other save."""
    store = DictStore()

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
    assert store.data["u", "s"] == (turn("elsewhere", "kept"), 1)


# -- what a stopped run leaves: its record and its session ----------------------------------


class StopAtModelCall:
    """Stops the run at the ``n``-th ``before_model`` of the agents it is given to."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Go on until the ``n``-th call, then stop."""
        self.calls += 1
        if self.calls == self.n:
            raise StopRun(f"model call {self.n}")
        return Cont(ctx)


def test_a_run_stopped_after_all_tool_results_keeps_them_in_the_session(mode: Mode) -> None:
    """Every call of the last tool-calling turn was answered: the session keeps the whole turn."""
    calls = (ToolCall("a", "add", {"a": 1, "b": 2}), ToolCall("b", "add", {"a": 3, "b": 4}))
    model = ScriptedModel([calling(*calls), "unreached", "second answer"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        first = drive(runner, mode, "first", session_id="s", callbacks=[StopAtModelCall(2)])
        drive(runner, mode, "second", session_id="s")
    assert first.status == "stopped"
    sent = model.requests[-1].messages
    assert [(m.role, m.content, m.tool_call_id) for m in sent] == [
        ("user", "first", None),
        ("assistant", "", None),
        ("tool", "3", "a"),
        ("tool", "7", "b"),
        ("user", "second", None),
    ]
    assert sent[1].tool_calls == calls


def test_a_stop_is_the_last_event_naming_the_run_its_time_and_reason(mode: Mode) -> None:
    """Stopped inside a sub-agent, the run's ``StopEvent`` names the root agent, when and why."""
    helper = Agent("helper", ScriptedModel(["unreached"]), callbacks=[StopAtModelCall(1)])
    model = ScriptedModel([calling(ToolCall("c1", "helper", {"request": "look"}))])
    start = time.time()
    with Runner(Agent("assistant", model, sub_agents=[helper])) as runner:
        result = drive(runner, mode, "go")
    end = time.time()
    last = result.events[-1]
    assert isinstance(last, StopEvent)
    assert (last.agent, last.branch, last.reason) == ("assistant", "assistant", "model call 1")
    assert start <= last.time <= end
    assert (result.status, result.stop_reason, result.output) == (
        "stopped",
        "model call 1",
        "",
    )


def test_the_default_store_keeps_10000_sessions() -> None:
    """``InMemorySessions()`` is bounded at 10,000 sessions."""
    assert InMemorySessions().max_sessions == 10_000
