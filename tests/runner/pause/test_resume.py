"""What ``Runner.resume`` checks before a paused run goes on (``runner._run.resume``).

Each refusal is checked word for word: the message is the contract (the run, what was
expected, what was got), and nothing runs when a check fails. Sub-agent branches are
bound again by name at every depth (``a/b/c``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hooks import (
    Approve,
    Cont,
    Decision,
    Edit,
    PausableResult,
    Pause,
    Reject,
    ToolContext,
    ToolResult,
)
from runner import (
    Agent,
    InMemorySessions,
    InvalidDecisions,
    ModelResponse,
    ResumeRefused,
    Runner,
    RunResult,
    RunState,
    ScriptedModel,
    ToolCall,
)
from tests.helpers.runs import Mode, calling, drive, tool_messages


class Deletes:
    """A ``delete_file`` tool that logs the paths it deleted."""

    def __init__(self) -> None:
        self.deleted: list[str] = []

    def tool(self) -> Any:
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        return delete_file


class Guard:
    """Pauses every ``delete_file`` call until a human decided."""

    def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
        if ctx.call.name == "delete_file" and ctx.decision is None:
            return Pause(f"delete {ctx.call.args['path']}?")
        return Cont(ctx)


def delete(call_id: str, path: str) -> ToolCall:
    return ToolCall(call_id, "delete_file", {"path": path})


def ask(call_id: str, agent: str) -> ToolCall:
    return ToolCall(call_id, agent, {"request": "go"})


def script(fresh: bool, first: ToolCall, answer: str) -> ScriptedModel:
    """A model asking for ``first`` then answering; only the answer when ``fresh`` (a new
    process's runner, resuming after the call was asked for)."""
    return ScriptedModel([answer] if fresh else [calling(first), answer])


def tree(deletes: Deletes, *, fresh: bool = False) -> Agent:
    """Agent ``a`` asks sub-agent ``b``, which asks sub-agent ``c``, which deletes ``x``."""
    c = Agent("c", script(fresh, delete("c1", "x"), "c done"), tools=[deletes.tool()])
    b = Agent("b", script(fresh, ask("b1", "c"), "b done"), sub_agents=[c])
    return Agent("a", script(fresh, ask("a1", "b"), "a done"), sub_agents=[b])


def paused_deep(mode: Mode) -> RunState:
    """The state of a run of ``tree`` paused three agents deep (``a/b/c``)."""
    result = drive(Runner(tree(Deletes()), callbacks=[Guard()]), mode, "tidy", session_id="s")
    assert result.status == "paused"
    return result.state


def resume(runner: Runner, mode: Mode, state: Any, decisions: Any) -> RunResult:
    """``resume`` in sync mode, ``aresume`` otherwise (the arguments as given)."""
    if mode == "sync":
        return runner.resume(state, decisions)
    return asyncio.run(runner.aresume(state, decisions))


def refused(runner: Runner, mode: Mode, state: RunState, decisions: Any) -> ResumeRefused:
    """The ``ResumeRefused`` resuming ``state`` raises."""
    with pytest.raises(ResumeRefused) as caught:
        resume(runner, mode, state, decisions)
    return caught.value


def approve_all(state: RunState) -> dict[str, Approve]:
    return {request.id: Approve() for request in state.pending}


@pytest.mark.parametrize(
    ("given", "kind"), [("{}", "str"), ({"status": "paused"}, "dict"), (None, "NoneType")]
)
def test_resume_takes_a_run_state_and_names_what_it_got(
    mode: Mode, given: object, kind: str
) -> None:
    """Anything but a ``RunState`` (its JSON text, a dict, nothing) is a ``TypeError`` naming
    the type and where a state comes from."""
    runner = Runner(tree(Deletes()), callbacks=[Guard()])
    with pytest.raises(TypeError) as caught:
        resume(runner, mode, given, {})
    assert str(caught.value) == (
        f"resume takes a RunState (RunState.from_json reads one), got {kind}"
    )


@pytest.mark.parametrize(
    ("given", "kind"), [([("req", Approve())], "list"), (None, "NoneType"), ("approve", "str")]
)
def test_decisions_must_be_a_mapping_and_the_error_names_what_came(
    mode: Mode, given: object, kind: str
) -> None:
    """Decisions that are not a mapping (pairs, nothing, a word) are a ``TypeError`` saying
    what they must be and naming the type given; nothing runs."""
    deletes = Deletes()
    state = paused_deep(mode)
    runner = Runner(tree(deletes, fresh=True), callbacks=[Guard()])
    with pytest.raises(TypeError) as caught:
        resume(runner, mode, state, given)
    assert str(caught.value) == (
        "resume's decisions must be a mapping of request id to Approve(), Edit(args) "
        f"or Reject(message), got {kind}"
    )
    assert deletes.deleted == []


def test_a_finished_state_is_refused_even_when_it_holds_a_frame(mode: Mode) -> None:
    """Only a paused state goes on: one marked completed is refused though it kept its
    paused turn, naming the run and its status."""
    state = paused_deep(mode)
    done = replace(state, status="completed")
    error = refused(Runner(tree(Deletes(), fresh=True)), mode, done, approve_all(state))
    assert error.run_id == state.run_id
    assert str(error) == f"run {state.run_id!r} cannot be resumed: it is completed, not paused"


def test_a_paused_state_without_its_paused_turn_is_refused(mode: Mode) -> None:
    """A state marked paused that holds no frame (a hand-made or edited one) is refused,
    saying what is missing rather than contradicting itself."""
    state = replace(paused_deep(mode), frame=None)
    error = refused(Runner(tree(Deletes(), fresh=True)), mode, state, {})
    assert error.run_id == state.run_id
    assert str(error) == (
        f"run {state.run_id!r} cannot be resumed: it is paused but holds no paused turn "
        "(its frame is None)"
    )


def test_a_state_of_another_root_agent_is_refused(mode: Mode) -> None:
    """A runner over another root agent names the state's agent and its own."""
    state = paused_deep(mode)
    other = Runner(Agent("z", ScriptedModel(["x"])))
    error = refused(other, mode, state, approve_all(state))
    assert error.run_id == state.run_id
    assert str(error) == (
        f"run {state.run_id!r} cannot be resumed: it is a run of agent 'a', this runner runs 'z'"
    )


def test_a_frame_whose_branch_starts_elsewhere_is_refused(mode: Mode) -> None:
    """A paused turn's branch must start at the root agent: the branch and the root are named."""
    state = paused_deep(mode)
    assert state.frame is not None
    moved = replace(state, frame=replace(state.frame, branch="z/b"))
    error = refused(Runner(tree(Deletes(), fresh=True)), mode, moved, approve_all(state))
    assert error.run_id == state.run_id
    assert error.problem == "its branch 'z/b' does not start at 'a'"
    assert str(error) == f"run {state.run_id!r} cannot be resumed: {error.problem}"


def test_a_missing_sub_agent_deep_in_the_branch_is_named(mode: Mode) -> None:
    """Resuming ``a/b/c`` on agents where ``b`` has no sub-agent ``c`` is refused, naming the
    agent, the missing sub-agent and the branch; nothing runs."""
    state = paused_deep(mode)
    a_model, b_model = ScriptedModel(["a done"]), ScriptedModel(["b done"])
    b = Agent("b", b_model)
    runner = Runner(Agent("a", a_model, sub_agents=[b]), callbacks=[Guard()])
    error = refused(runner, mode, state, approve_all(state))
    assert error.run_id == state.run_id
    assert str(error) == (
        f"run {state.run_id!r} cannot be resumed: agent 'b' has no sub-agent 'c' (branch 'a/b/c')"
    )
    assert (a_model.requests, b_model.requests) == ([], [])


def test_a_tool_where_a_sub_agent_was_is_no_sub_agent(mode: Mode) -> None:
    """A plain tool named like the sub-agent the branch passes through does not bind it."""
    state = paused_deep(mode)

    def b(request: str) -> str:
        """Not an agent."""
        return request

    runner = Runner(Agent("a", ScriptedModel(["a done"]), tools=[b]), callbacks=[Guard()])
    error = refused(runner, mode, state, approve_all(state))
    assert error.run_id == state.run_id
    assert str(error) == (
        f"run {state.run_id!r} cannot be resumed: agent 'a' has no sub-agent 'b' (branch 'a/b')"
    )


def test_a_deep_sub_agent_lacking_the_paused_tool_is_refused(mode: Mode) -> None:
    """The innermost agent ``c`` of ``a/b/c`` must have the paused call's tool: the agent, the
    tool and the call are named."""
    state = paused_deep(mode)
    c = Agent("c", ScriptedModel(["c done"]))
    b = Agent("b", ScriptedModel(["b done"]), sub_agents=[c])
    runner = Runner(Agent("a", ScriptedModel(["a done"]), sub_agents=[b]), callbacks=[Guard()])
    error = refused(runner, mode, state, approve_all(state))
    assert error.run_id == state.run_id
    assert str(error) == (
        f"run {state.run_id!r} cannot be resumed: agent 'c' has no tool 'delete_file' "
        "for paused call 'c1'"
    )


def test_a_run_paused_three_agents_deep_resumes_on_a_new_runner(mode: Mode) -> None:
    """A pause in ``a/b/c`` names its branch; a new runner over the same agent definitions
    (from the JSON, as another process would) binds every level and finishes the run."""
    deletes = Deletes()
    store = InMemorySessions()  # the store both runners share, as two processes share a file
    first = Runner(tree(Deletes()), callbacks=[Guard()], sessions=store)
    paused = drive(first, mode, "tidy", session_id="s")
    (request,) = paused.pending
    assert (request.agent, request.branch, request.call) == ("c", "a/b/c", delete("c1", "x"))
    again = Runner(tree(deletes, fresh=True), callbacks=[Guard()], sessions=store)
    state = RunState.from_json(paused.state.to_json())
    result = resume(again, mode, state, {request.id: Edit({"path": "y"})})
    assert (result.status, result.output, deletes.deleted) == ("completed", "a done", ["y"])


def sub(name: str, deletes: Deletes, *paths: str) -> Agent:
    """A sub-agent deleting ``paths`` in one batch, then answering ``"<name> done"``."""
    calls = [delete(f"{name}{index}", path) for index, path in enumerate(paths)]
    return Agent(name, ScriptedModel([calling(*calls), f"{name} done"]), tools=[deletes.tool()])


def test_pending_requests_follow_the_call_order_across_sub_agents(mode: Mode) -> None:
    """One batch of three calls -- sub-agent ``left``, a direct delete, sub-agent ``right``,
    each pausing -- gives the requests in call order, each sub-agent's in its own call order;
    approving all finishes every call."""
    deletes = Deletes()
    left, right = sub("left", deletes, "l0", "l1"), sub("right", deletes, "r0", "r1")
    root_model = ScriptedModel(
        [calling(ask("p1", "left"), delete("p2", "root"), ask("p3", "right")), "done"]
    )
    root = Agent("root", root_model, tools=[deletes.tool()], sub_agents=[left, right])
    runner = Runner(root, callbacks=[Guard()])
    paused = drive(runner, mode, "tidy", session_id="s")
    assert [(r.branch, r.call.args["path"]) for r in paused.pending] == [
        ("root/left", "l0"),
        ("root/left", "l1"),
        ("root", "root"),
        ("root/right", "r0"),
        ("root/right", "r1"),
    ]
    assert RunState.from_json(paused.state.to_json()).pending == paused.pending
    decisions: dict[str, Decision] = {r.id: Approve() for r in paused.pending}
    decisions[paused.pending[2].id] = Reject("keep root")
    result = resume(runner, mode, paused.state, decisions)
    assert (result.status, result.output) == ("completed", "done")
    assert sorted(deletes.deleted) == ["l0", "l1", "r0", "r1"]
    answers = [m.content for m in tool_messages(root_model.requests[-1])]
    assert answers == ["left done", "keep root", "right done"]


def test_decisions_that_miss_and_add_requests_are_named_together(mode: Mode) -> None:
    """A missing decision and an unknown one are both named, with the run, in one error."""
    state = paused_deep(mode)
    (request,) = state.pending
    with pytest.raises(InvalidDecisions) as caught:
        resume(Runner(tree(Deletes(), fresh=True)), mode, state, {"nope": Approve()})
    assert caught.value.run_id == state.run_id
    assert str(caught.value) == (
        f"run {state.run_id!r}: no decision for pending request(s) {request.id}; "
        "decision(s) for unknown request(s) nope"
    )


def test_a_decision_that_is_no_decision_is_named_with_the_run(mode: Mode) -> None:
    """A pending request answered with something other than a decision is named, with what a
    decision is; nothing runs."""
    state = paused_deep(mode)
    (request,) = state.pending
    deletes = Deletes()
    with pytest.raises(InvalidDecisions) as caught:
        resume(Runner(tree(deletes, fresh=True)), mode, state, {request.id: "yes"})
    assert (caught.value.run_id, caught.value.wrong) == (state.run_id, (request.id,))
    assert str(caught.value) == (
        f"run {state.run_id!r}: request(s) {request.id} got something other than "
        "Approve(), Edit(args), Reject(message) or Respond(value)"
    )
    assert deletes.deleted == []


def test_two_resumes_of_one_paused_run_at_once_run_its_calls_once(
    mode: Mode, tmp_path: Path
) -> None:
    """Two runners (two processes' stores on one file) resuming one paused run at once: the
    second is refused while the first holds the session's lease, and the paused call runs
    once -- a resume takes the lease as an owner of its own, not as the run's id."""
    from runner import SessionBusy, SQLiteSessionStore

    deleted: list[str] = []
    rival: list[BaseException] = []

    def make(store: SQLiteSessionStore, *script: ModelResponse) -> Runner:
        def delete_file(path: str) -> str:
            """Delete a file; the first time, a rival resume is tried meanwhile."""
            deleted.append(path)
            if len(deleted) == 1:
                with Runner(agent_of(), sessions=other) as second:
                    try:
                        second.resume(state, {request.id: Approve()})
                    except BaseException as error:  # what the rival was told
                        rival.append(error)
            return f"deleted {path}"

        def agent_of(*script: ModelResponse) -> Agent:
            model = ScriptedModel(list(script) or [ModelResponse("done")])
            return Agent("janitor", model, tools=[delete_file], callbacks=[Guard()])

        return Runner(agent_of(*script), sessions=store)

    with (
        SQLiteSessionStore(tmp_path / "s.db") as store,
        SQLiteSessionStore(tmp_path / "s.db") as other,
    ):
        with make(store, calling(ToolCall("c1", "delete_file", {"path": "a"}))) as first:
            paused = first.run("tidy", session_id="s")
        state = paused.state
        (request,) = paused.pending
        with make(store) as first:
            result = (
                first.resume(state, {request.id: Approve()})
                if mode == "sync"
                else asyncio.run(first.aresume(state, {request.id: Approve()}))
            )
    assert result.status == "completed"
    assert deleted == ["a"]
    (error,) = rival
    assert isinstance(error, SessionBusy)
