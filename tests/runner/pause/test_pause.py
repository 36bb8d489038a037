"""Pause and resume: a ``before_tool`` hook's ``Pause``, the paused run, ``Runner.resume``."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from hooks import (
    Approve,
    Cont,
    Decision,
    Edit,
    Halt,
    HookEvent,
    InvalidResult,
    ModelContext,
    ModelResponse,
    PausableResult,
    Pause,
    Reject,
    Retry,
    StateKey,
    ToolContext,
    ToolResult,
)
from runner import (
    Agent,
    InvalidDecisions,
    Message,
    PauseEvent,
    ResumeRefused,
    RetryPolicy,
    Runner,
    RunResult,
    RunState,
    ScriptedModel,
    ToolCall,
    ToolCallEvent,
    ToolResultEvent,
)
from runner._pause.pending import Frame, HeldBatch, Paused, PendingRequest, request_id
from tests.helpers.runs import Mode, calling, drive, events_of, tool_messages


class Files:
    """Two tools with side effects, counting what really ran."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.sent: list[str] = []

    def tools(self) -> list[object]:
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        def send_mail(to: str) -> str:
            """Send a mail."""
            self.sent.append(to)
            return f"sent to {to}"

        return [delete_file, send_mail]


class AskBeforeDeleting:
    """Pauses ``delete_file`` until a human decided; remembers every decision it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Decision | None, dict[str, Any]]] = []

    def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
        self.seen.append((ctx.call.id, ctx.decision, dict(ctx.call.args)))
        if ctx.call.name == "delete_file" and ctx.decision is None:
            return Pause(f"delete {ctx.call.args['path']}?")
        return Cont(ctx)


def delete(call_id: str, path: str) -> ToolCall:
    return ToolCall(call_id, "delete_file", {"path": path})


def mail(call_id: str, to: str) -> ToolCall:
    return ToolCall(call_id, "send_mail", {"to": to})


def setup(*replies: ModelResponse | str) -> tuple[Runner, Files, AskBeforeDeleting, ScriptedModel]:
    files, guard = Files(), AskBeforeDeleting()
    model = ScriptedModel(list(replies))
    return (
        Runner(Agent("files", model, tools=files.tools(), callbacks=[guard])),
        files,
        guard,
        model,
    )


def resume(
    runner: Runner, mode: Mode, state: RunState, decisions: Mapping[str, Decision]
) -> RunResult:
    if mode == "sync":
        return runner.resume(state, decisions)
    return asyncio.run(runner.aresume(state, decisions))


def test_a_paused_call_ends_the_run_paused_with_its_request(mode: Mode) -> None:
    """A ``Pause`` from ``before_tool`` ends the run ``"paused"``: the tool did not run and the
    request names the call, the reason, where it was called and the decisions allowed."""
    runner, files, _, _ = setup(calling(delete("c1", "a.txt")), "done")
    result = drive(runner, mode, "clean up", session_id="s")
    assert (result.status, result.output, files.deleted) == ("paused", "", [])
    (request,) = result.pending
    assert request.call == delete("c1", "a.txt")
    assert (request.reason, request.agent, request.branch) == ("delete a.txt?", "files", "files")
    assert request.allowed == ("approve", "edit", "reject")
    assert request.id == request_id(result.run_id, "files", 1, "c1")
    assert result.state.pending == result.pending
    assert result.state.status == "paused"
    assert [event.request for event in events_of(result, PauseEvent)] == [request]
    assert not events_of(result, ToolResultEvent)


def test_calls_that_did_not_pause_still_run_and_keep_their_results(mode: Mode) -> None:
    """All paused calls of one model turn are batched; the others ran once, also after resume."""
    runner, files, _, model = setup(
        calling(delete("c1", "a"), mail("c2", "bob"), delete("c3", "b")), "done"
    )
    paused = drive(runner, mode, "tidy", session_id="s")
    assert [request.call.id for request in paused.pending] == ["c1", "c3"]
    assert files.sent == ["bob"]
    decisions = {request.id: Approve() for request in paused.pending}
    result = resume(runner, mode, paused.state, decisions)
    assert (result.status, result.output) == ("completed", "done")
    assert files.sent == ["bob"]
    assert files.deleted == ["a", "b"]
    answers = tool_messages(model.requests[-1])
    assert [(m.tool_call_id, m.content) for m in answers] == [
        ("c1", "deleted a"),
        ("c2", "sent to bob"),
        ("c3", "deleted b"),
    ]


def test_approve_edit_and_reject_do_what_they_say(mode: Mode) -> None:
    """Approve runs the call, Edit runs it with the new args, Reject gives the model an error
    result with the message; the guard sees each decision and the edited args."""
    runner, files, guard, model = setup(
        calling(delete("c1", "a"), delete("c2", "b"), delete("c3", "c")), "done"
    )
    paused = drive(runner, mode, "tidy", session_id="s")
    one, two, three = (request.id for request in paused.pending)
    result = resume(
        runner,
        mode,
        paused.state,
        {one: Approve(), two: Edit({"path": "b.bak"}), three: Reject("keep c")},
    )
    assert result.status == "completed"
    assert files.deleted == ["a", "b.bak"]
    answers = tool_messages(model.requests[-1])
    assert [(m.content) for m in answers] == ["deleted a", "deleted b.bak", "keep c"]
    second_pass = guard.seen[3:]
    assert second_pass == [
        ("c1", Approve(), {"path": "a"}),
        ("c2", Edit({"path": "b.bak"}), {"path": "b.bak"}),
        ("c3", Reject("keep c"), {"path": "c"}),
    ]
    assert [decision for _, decision, _ in guard.seen[:3]] == [None, None, None]
    rejected = [e.result for e in events_of(result, ToolResultEvent) if e.call.id == "c3"]
    assert rejected == [ToolResult("keep c", is_error=True)]


def test_a_guard_may_refuse_an_edit_by_halting_or_pause_again(mode: Mode) -> None:
    """On resume the guard still decides: a Halt stands, a second Pause pauses the run again
    under the same request id, showing the edited call, which is what Approve then runs."""

    class Strict:
        def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
            match ctx.decision:
                case Edit(args) if args.get("path") == "/":
                    return Halt(ToolResult("refused: /", is_error=True))
                case Edit(args) if args.get("path") == "?":
                    return Pause("really?")
                case None:
                    return Pause("delete?")
                case _:
                    return Cont(ctx)

    files = Files()
    model = ScriptedModel([calling(delete("c1", "a"), delete("c2", "b")), "done"])
    runner = Runner(Agent("files", model, tools=files.tools(), callbacks=[Strict()]))
    paused = drive(runner, mode, "tidy", session_id="s")
    one, two = (request.id for request in paused.pending)
    again = resume(runner, mode, paused.state, {one: Edit({"path": "/"}), two: Edit({"path": "?"})})
    assert again.status == "paused"
    assert [(r.id, r.reason, dict(r.call.args)) for r in again.pending] == [
        (two, "really?", {"path": "?"})
    ]
    assert dict(again.state.decisions) == {one: Edit({"path": "/"}), two: Edit({"path": "?"})}
    done = resume(runner, mode, again.state, {two: Approve()})
    assert done.status == "completed"
    assert files.deleted == ["?"]
    assert [m.content for m in tool_messages(model.requests[-1])] == ["refused: /", "deleted ?"]


def test_the_resumed_conversation_is_saved_whole(mode: Mode) -> None:
    """After resume the session holds the user message, the call, its result and the answer."""
    runner, _, _, _ = setup(calling(delete("c1", "a")), "done", "next")
    paused = drive(runner, mode, "tidy", session_id="s")
    resume(runner, mode, paused.state, {paused.pending[0].id: Approve()})
    messages = runner.sessions.load("user", "s").messages
    assert [(m.role, m.content) for m in messages] == [
        ("user", "tidy"),
        ("assistant", ""),
        ("tool", "deleted a"),
        ("assistant", "done"),
    ]
    assert drive(runner, mode, "and?", session_id="s").output == "next"


@pytest.mark.parametrize(
    ("decisions", "field", "names"),
    [
        ({}, "missing", ["first"]),
        ({"first": Approve(), "nope": Approve()}, "unknown", ["nope"]),
        ({"first": "yes"}, "wrong", ["first"]),
    ],
)
def test_decisions_must_answer_exactly_the_pending_requests(
    mode: Mode, decisions: dict[str, object], field: str, names: list[str]
) -> None:
    """A missing, unknown or malformed decision is refused before anything runs."""
    runner, files, _, _ = setup(calling(delete("c1", "a")), "done")
    paused = drive(runner, mode, "tidy", session_id="s")
    first = paused.pending[0].id
    given = {(first if key == "first" else key): value for key, value in decisions.items()}
    with pytest.raises(InvalidDecisions) as caught:
        resume(runner, mode, paused.state, given)  # type: ignore[arg-type]
    expected = [first if name == "first" else name for name in names]
    assert list(getattr(caught.value, field)) == expected
    assert all(name in str(caught.value) for name in expected)
    assert isinstance(caught.value, ValueError)
    assert files.deleted == []


def test_resuming_twice_is_refused(mode: Mode) -> None:
    """The first resume saves the session; a second one with the same state is refused."""
    runner, files, _, _ = setup(calling(delete("c1", "a")), "done", "again")
    paused = drive(runner, mode, "tidy", session_id="s")
    decisions = {paused.pending[0].id: Approve()}
    resume(runner, mode, paused.state, decisions)
    with pytest.raises(ResumeRefused, match="resumed already"):
        resume(runner, mode, paused.state, decisions)
    assert files.deleted == ["a"]


def test_a_state_that_is_not_paused_is_refused(mode: Mode) -> None:
    """A completed run's state cannot be resumed."""
    runner, _, _, _ = setup("hello")
    done = drive(runner, mode, "hi")
    with pytest.raises(ResumeRefused, match="completed, not paused"):
        resume(runner, mode, done.state, {})


def test_another_run_on_the_session_makes_the_pause_stale(mode: Mode) -> None:
    """A run on the session after the pause moved it on: resuming would overwrite that turn."""
    runner, files, _, _ = setup(calling(delete("c1", "a")), "meanwhile", "done")
    paused = drive(runner, mode, "tidy", session_id="s")
    drive(runner, mode, "something else", session_id="s")
    with pytest.raises(ResumeRefused, match="version 1, not the version 0"):
        resume(runner, mode, paused.state, {paused.pending[0].id: Approve()})
    assert files.deleted == []


def test_agents_and_tools_are_bound_again_by_name(mode: Mode) -> None:
    """A runner whose agent has another name, or lacks the paused tool, refuses the state."""
    runner, _, _, _ = setup(calling(delete("c1", "a")), "done")
    paused = drive(runner, mode, "tidy", session_id="s")
    decisions = {paused.pending[0].id: Approve()}
    other = Runner(Agent("other", ScriptedModel(["x"])))
    with pytest.raises(ResumeRefused, match="a run of agent 'files', this runner runs 'other'"):
        resume(other, mode, paused.state, decisions)

    def send_mail(to: str) -> str:
        """Send a mail."""
        return to

    no_delete = Runner(Agent("files", ScriptedModel(["x"]), tools=[send_mail]))
    with pytest.raises(ResumeRefused, match="no tool 'delete_file' for paused call 'c1'"):
        resume(no_delete, mode, paused.state, decisions)


def test_a_pause_inside_a_sub_agent_pauses_the_run_and_resumes_inside_it(mode: Mode) -> None:
    """A sub-agent's paused call pauses the whole run; on resume the sub-agent goes on from
    its pause and answers its parent, which goes on to its own answer."""
    files, guard = Files(), AskBeforeDeleting()
    janitor_model = ScriptedModel([calling(delete("j1", "tmp")), "janitor done"])
    janitor = Agent("janitor", janitor_model, tools=files.tools())
    boss_model = ScriptedModel(
        [
            calling(ToolCall("b1", "janitor", {"request": "clean tmp"}), mail("b2", "ann")),
            "all done",
        ]
    )
    boss = Agent("boss", boss_model, tools=files.tools(), sub_agents=[janitor])
    runner = Runner(boss, callbacks=[guard])
    paused = drive(runner, mode, "go", session_id="s")
    (request,) = paused.pending
    assert (request.branch, request.agent, request.call.id) == ("boss/janitor", "janitor", "j1")
    assert files.sent == ["ann"]
    restored = RunState.from_json(paused.state.to_json())
    result = resume(runner, mode, restored, {request.id: Approve()})
    assert (result.status, result.output) == ("completed", "all done")
    assert files.deleted == ["tmp"]
    assert files.sent == ["ann"]
    assert [m.content for m in tool_messages(boss_model.requests[-1])] == [
        "janitor done",
        "sent to ann",
    ]


def test_invocation_state_and_usage_go_on_across_the_pause(mode: Mode) -> None:
    """What callbacks stored in the state before the pause is there after it."""
    count = StateKey[int]("count")

    class Counter:
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            ctx.invocation.state.update(count, lambda n: (n or 0) + 1)
            return Cont(ctx)

    files, guard = Files(), AskBeforeDeleting()
    model = ScriptedModel([calling(delete("c1", "a")), "done"])
    runner = Runner(Agent("files", model, tools=files.tools(), callbacks=[guard, Counter()]))
    paused = drive(runner, mode, "tidy", session_id="s")
    assert paused.state["count"] == 1
    restored = RunState.from_json(paused.state.to_json())
    result = resume(runner, mode, restored, {paused.pending[0].id: Approve()})
    assert result.state == {"count": 2}
    assert result.run_id == paused.run_id


def test_observers_see_the_pause_as_control_flow(mode: Mode) -> None:
    """The dispatch that paused is told to observers with outcome ``"pause"``, no error."""
    seen: list[HookEvent] = []

    class Watch:
        def on_event(self, event: HookEvent) -> None:
            seen.append(event)

    runner, _, _, _ = setup(calling(delete("c1", "a")), "done")
    drive(runner, mode, "tidy", callbacks=[Watch()])
    (paused,) = [event for event in seen if event.point == "before_tool"]
    assert (paused.outcome, paused.error, paused.call_id) == ("pause", None, "c1")


def test_pause_where_a_call_cannot_wait_is_an_invalid_result(mode: Mode) -> None:
    """``Pause`` from ``before_model`` is refused at run time too, naming what is legal."""

    class Wrong:
        def before_model(self, ctx: ModelContext) -> object:
            return Pause("no")

    runner = Runner(Agent("a", ScriptedModel(["x"])))
    with pytest.raises(InvalidResult) as caught:
        drive(runner, mode, "hi", callbacks=[Wrong()])
    assert caught.value.expected == ("Cont[ModelContext]", "Halt[ModelResponse]")


def test_request_ids_are_stable_and_tell_calls_apart() -> None:
    """The same run, branch, step and call give the same id; any difference another."""
    base = request_id("run", "a", 3, "c1")
    assert base == request_id("run", "a", 3, "c1")
    others = {
        request_id("run2", "a", 3, "c1"),
        request_id("run", "a/b", 3, "c1"),
        request_id("run", "a", 4, "c1"),
        request_id("run", "a", 3, "c2"),
    }
    assert base not in others
    assert len(others) == 4


def test_the_event_order_of_a_paused_and_resumed_call(mode: Mode) -> None:
    """Paused: the call, then its pause. Resumed: the call again, its result, the answer."""
    runner, _, _, _ = setup(calling(delete("c1", "a")), "done")
    paused = drive(runner, mode, "tidy", session_id="s")
    kinds = [type(event).__name__ for event in paused.events]
    assert kinds[-2:] == ["ToolCallEvent", "PauseEvent"]
    result = resume(runner, mode, paused.state, {paused.pending[0].id: Approve()})
    assert [type(event).__name__ for event in result.events] == [
        "ToolCallEvent",
        "ToolAttemptEvent",
        "ToolResultEvent",
        "ModelAttemptEvent",
        "ModelResponseEvent",
    ]
    assert events_of(result, ToolCallEvent)[0].call == delete("c1", "a")


def test_a_state_value_that_is_not_json_is_named() -> None:
    """``to_json`` says which state value cannot be written."""
    state = RunState({"ok": 1, "conn": object()}, "r", "a", "u", "s", "completed")
    with pytest.raises(TypeError, match="state value 'conn' must be JSON data"):
        state.to_json()
    assert json.loads(RunState({"ok": 1}, "r", "a", "u", "s", "completed").to_json())["schema"] == 2


def test_a_streamed_run_shows_its_pause_and_ends_paused() -> None:
    """``Runner.stream`` yields the pause event and finishes with the paused result."""
    from runner import RunFinishedEvent

    runner, _, _, _ = setup(calling(delete("c1", "a")), "done")

    async def drain() -> list[object]:
        return [event async for event in runner.stream("tidy")]

    events = asyncio.run(drain())
    pauses = [event for event in events if isinstance(event, PauseEvent)]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.result.status == "paused"
    assert [pause.request for pause in pauses] == list(finished.result.pending)


def test_the_store_keeps_a_paused_state_until_a_resume_ends_it(mode: Mode) -> None:
    """``runner.paused(run_id)`` reads the state the store kept; once resumed it is gone."""
    runner, _, _, _ = setup(calling(delete("c1", "a")), "done")
    paused = drive(runner, mode, "tidy", session_id="s")
    kept = runner.paused(paused.run_id)
    assert kept == paused.state
    assert kept is not None
    assert kept.pending == paused.pending
    resume(runner, mode, kept, {kept.pending[0].id: Approve()})
    assert runner.paused(paused.run_id) is None
    assert runner.paused("no-such-run") is None


def test_session_scoped_values_set_before_the_pause_stay_session_scoped(mode: Mode) -> None:
    """A session-scoped value first set before the pause is saved with the session when the
    resumed run ends; an invocation-scoped one is not."""
    asked = StateKey[int]("asked", scope="session")
    note = StateKey[str]("note")

    class Count:
        def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
            if ctx.decision is None:
                ctx.invocation.state.update(asked, lambda n: n + 1, default=0)
                ctx.invocation.state.set(note, "x")
            return Cont(ctx)

    files, guard = Files(), AskBeforeDeleting()
    model = ScriptedModel([calling(delete("c1", "a")), "done"])
    runner = Runner(Agent("files", model, tools=files.tools(), callbacks=[Count(), guard]))
    paused = drive(runner, mode, "tidy", session_id="s")
    assert paused.state.session_keys == ("asked",)
    restored = RunState.from_json(paused.state.to_json())
    resume(runner, mode, restored, {paused.pending[0].id: Approve()})
    assert dict(runner.sessions.load("user", "s").state) == {"asked": 1}


def test_a_state_resumed_into_a_second_pause_cannot_be_resumed_again(mode: Mode) -> None:
    """Resuming pauses again and saves nothing to the session, yet the first state is
    refused: the store keeps the later one."""
    runner, files, _, _ = setup(calling(delete("c1", "a"), delete("c2", "b")), "done")
    paused = drive(runner, mode, "tidy", session_id="s")
    one, two = (request.id for request in paused.pending)

    class PauseAgain:
        """Pauses ``c2`` once more, the first time it sees it."""

        def __init__(self) -> None:
            self.paused = False

        def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
            if ctx.call.id == "c2" and not self.paused:
                self.paused = True
                return Pause("again")
            return Cont(ctx)

    guard = PauseAgain()
    again = (
        runner.resume(paused.state, {one: Approve(), two: Approve()}, callbacks=[guard])
        if mode == "sync"
        else asyncio.run(
            runner.aresume(paused.state, {one: Approve(), two: Approve()}, callbacks=[guard])
        )
    )
    assert again.status == "paused"
    with pytest.raises(ResumeRefused, match="keeps another paused state of it"):
        resume(runner, mode, paused.state, {one: Approve(), two: Approve()})
    assert files.deleted == ["a"]
    with pytest.raises(ResumeRefused, match=r"does not bring: .*PauseAgain"):
        resume(runner, mode, again.state, {two: Approve()})  # it paused under PauseAgain
    done = (
        runner.resume(again.state, {two: Approve()}, callbacks=[guard])
        if mode == "sync"
        else asyncio.run(runner.aresume(again.state, {two: Approve()}, callbacks=[guard]))
    )
    assert done.status == "completed"
    assert files.deleted == ["a", "b"]


def test_a_request_id_has_a_fixed_form_and_value() -> None:
    """``req_`` and 24 hex digits of a hash of run, branch, step and call: the same value in
    every process and release, so ids kept in a store stay valid."""
    assert request_id("run", "a", 3, "c1") == "req_4f0bf3304db4a3cf99d3a53a"
    for args in (("r", "b", 0, "c"), ("run", "a/b", 12, "call_9"), ("é", "a", 10**9, "")):
        assert re.fullmatch(r"req_[0-9a-f]{24}", request_id(*args))


def _turn(branch: str, *calls: ToolCall) -> tuple[Message, ...]:
    return (Message("user", branch), Message("assistant", "", tool_calls=calls))


def _request(call: ToolCall, branch: str) -> PendingRequest:
    return PendingRequest(f"req_{call.id}", call, "?", branch.rsplit("/", 1)[-1], branch)


def test_a_frame_defaults_to_no_results_requests_or_children() -> None:
    """A frame built with its defaults holds empty, read-only tables and nothing pending."""
    frame = Frame("a", "a", Message("user", "hi"), (), 0)
    for table in (frame.results, frame.requests, frame.children):
        assert dict(table) == {}
        with pytest.raises(TypeError):
            table["x"] = 1  # type: ignore[index]  # read-only: the assignment must fail
    assert (frame.calls, list(frame.pending())) == ((), [])


def test_pending_reads_requests_in_call_order_through_nested_children() -> None:
    """A frame's pending requests follow its batch's call order; a sub-agent call's come from
    its own frame, in that frame's call order, at any depth; calls that ran add nothing."""
    one, ran, deep, two = (delete(name, name) for name in ("c1", "c2", "c3", "c4"))
    inner_one, inner_two = delete("d1", "x"), delete("d2", "y")
    deepest = Frame(
        "c",
        "a/b/c",
        Message("user", "go"),
        _turn("a/b/c", inner_two, inner_one),
        1,
        requests={"d1": _request(inner_one, "a/b/c"), "d2": _request(inner_two, "a/b/c")},
    )
    middle = Frame(
        "b",
        "a/b",
        Message("user", "go"),
        _turn("a/b", ToolCall("s1", "c", {"request": "go"})),
        1,
        children={"s1": deepest},
    )
    root = Frame(
        "a",
        "a",
        Message("user", "go"),
        _turn("a", two, deep, ran, one),
        1,
        results={"c2": ToolResult("done")},
        requests={"c1": _request(one, "a"), "c4": _request(two, "a")},
        children={"c3": middle},
    )
    assert [request.id for request in root.pending()] == ["req_c4", "req_d2", "req_d1", "req_c1"]


def test_a_batch_whose_calls_and_outcomes_differ_in_length_is_a_bug_caught() -> None:
    """``HeldBatch.frame`` pairs each call with what it came to; a missing outcome is a
    ``ValueError``, never a call silently left out of the paused turn."""
    calls = (delete("c1", "a"), delete("c2", "b"))
    paused = HeldBatch(2, calls, [ToolResult("deleted a")])
    with pytest.raises(ValueError, match="zip"):
        paused.frame("files", "files", Message("user", "tidy"), _turn("files", *calls))


def test_the_pause_signal_says_where_it_comes_from() -> None:
    """Never meant to escape, the signal still reads as its reason or branch if it does."""
    frame = Frame("b", "a/b", Message("user", "go"), (), 4)
    call = delete("c1", "a")
    assert str(Paused("needs a human", call=call)) == "needs a human"
    assert Paused("needs a human", call=call).call is call
    assert str(Paused(frame=frame)) == "a/b"
    assert Paused(frame=frame).frame is frame


def test_concurrent_paused_calls_get_the_ids_of_their_step() -> None:
    """In ``arun`` the calls of one response run concurrently; each paused one's request
    id is the one its run, branch, model step and call id give."""
    runner, _, _, _ = setup(calling(delete("c1", "a"), mail("c2", "bob"), delete("c3", "b")), "ok")
    paused = asyncio.run(runner.arun("tidy", session_id="s"))
    assert [request.id for request in paused.pending] == [
        request_id(paused.run_id, "files", 1, "c1"),
        request_id(paused.run_id, "files", 1, "c3"),
    ]


def test_a_retry_that_changes_the_call_may_be_paused_by_the_guard(mode: Mode) -> None:
    """An error hook's ``Retry`` with other arguments passes ``before_tool`` again, and a
    guard that pauses it pauses the run with the changed call in its request."""

    class Guard:
        def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
            if ctx.call.args.get("path") == "b" and ctx.decision is None:
                return Pause("the retry wants b: ok?")
            return Cont(ctx)

    class RetryOnB:
        def on_tool_error(self, failure: object, ctx: ToolContext) -> object:
            return Retry(replace(ctx, call=replace(ctx.call, args={"path": "b"})))

    def delete_file(path: str) -> str:
        """Delete a file."""
        if path == "a":
            raise FileNotFoundError(path)
        return f"deleted {path}"

    model = ScriptedModel([calling(delete("c1", "a")), "done"])
    agent = Agent("files", model, tools=[delete_file])
    runner = Runner(agent, callbacks=[Guard(), RetryOnB()], retry=RetryPolicy(max_attempts=2))
    paused = drive(runner, mode, "tidy", session_id="s")
    (request,) = paused.pending
    assert (request.reason, dict(request.call.args)) == ("the retry wants b: ok?", {"path": "b"})
    assert request.id == request_id(paused.run_id, "files", 1, "c1")
