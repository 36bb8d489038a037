"""Tests of ``runner._sessions.store``: the versioned store contract and runners sharing a store.

The contract (the module docstring of ``runner._sessions.store``): ``load`` returns a
snapshot and a version, ``save`` is a compare-and-set on that version, ``delete``
forgets. The end-to-end tests check that no store shared by runners drops a turn.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from hooks import BeforeResult, Cont
from runner import (
    Agent,
    AgentContext,
    InMemorySessions,
    Message,
    ModelContext,
    ModelResponse,
    Runner,
    ScriptedModel,
    Session,
    SessionConflict,
    SessionStore,
    StateKey,
    StopEvent,
    StopRun,
    ToolCall,
    Transcript,
)
from runner._sessions.store import dump_state
from tests.helpers.runs import LeasesAndPauses, Mode, add, calling, drive


def turn(question: str, answer: str) -> tuple[Message, Message]:
    """A user message and the assistant's answer to it."""
    return Message("user", question), Message("assistant", answer)


# -- the store contract -----------------------------------------------------------------


def test_in_memory_sessions_is_a_session_store() -> None:
    """The default store satisfies the ``SessionStore`` protocol."""
    assert isinstance(InMemorySessions(), SessionStore)


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


class StateLog(DictStore):
    """A ``DictStore`` that notes the state each save is given (``None``: keep the stored)."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[dict[str, Any] | None] = []

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
        """Note the state, then save."""
        self.given.append(None if state is None else dict(state))
        return super().save(user_id, session_id, messages, version=version, state=state)


class SetState:
    """Sets a session-scoped and an invocation-scoped value, or only the latter."""

    def __init__(self, *, session: bool) -> None:
        self.session = session

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Set the values and go on."""
        state = ctx.invocation.state
        if self.session:
            state.set(StateKey[int]("turns", scope="session"), 1)
        state.set("scratch", "this run only")
        return Cont(ctx)


def test_a_run_writes_session_state_only_when_there_is_some(mode: Mode) -> None:
    """A session with no state that gets none is saved without state (``None``: keep it); a
    session-scoped value is written, and kept by the runs after it; an invocation-scoped
    one never is."""
    store = StateLog()
    with Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store) as runner:
        drive(runner, mode, "one", user_id="u", session_id="s")
        drive(runner, mode, "two", user_id="u", session_id="s", callbacks=[SetState(session=True)])
        drive(runner, mode, "three", user_id="u", session_id="s")
        drive(runner, mode, "one", user_id="u", session_id="t", callbacks=[SetState(session=False)])
    assert store.given == [None, {"turns": 1}, {"turns": 1}, None]
    assert (store.states["u", "s"], store.states.get(("u", "t"))) == ({"turns": 1}, None)


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


# -- state as text and transcripts kept as given (mutation-test hardening) -----------------


def test_a_state_value_json_cannot_hold_is_named_with_its_type_and_repr() -> None:
    """``dump_state`` names the key, the value's type and repr, and json's reason."""
    expected = (
        "session state 'tags' must be JSON-serialisable (str, int, float, bool, None, and "
        "lists and dicts of them), got set {1}: Object of type set is not JSON serializable"
    )
    with pytest.raises(TypeError) as caught:
        dump_state({"ok": 1, "tags": {1}})
    assert str(caught.value) == expected


def test_state_text_is_compact_and_keeps_non_ascii_text() -> None:
    """The state is written as compact JSON with non-ASCII characters as they are."""
    assert dump_state({"k": ["é", 1]}) == '{"k":["é",1]}'


def test_the_in_memory_store_keeps_the_transcript_it_is_given() -> None:
    """A saved transcript is stored, not copied: a load gives that very transcript back."""
    store = InMemorySessions()
    saved = Transcript(turn("a", "b"))
    store.save("u", "s", saved, version=0)
    assert store.load("u", "s").messages is saved
