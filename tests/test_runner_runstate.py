"""``RunState``: a mapping of the state values, and JSON that survives the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hooks import Approve, Decision, Edit, Reject
from runner import PendingRequest, RunState
from runner._pending import Frame
from tests.message_strategies import json_values, messages, tool_calls, tool_results, usages

ROOT = Path(__file__).resolve().parents[1]

names = st.text(min_size=1, max_size=8)
decisions: st.SearchStrategy[Decision] = st.one_of(
    st.just(Approve()),
    st.builds(Edit, st.dictionaries(names, json_values, max_size=3)),
    st.builds(Reject, names),
)
requests = st.builds(
    PendingRequest, names, tool_calls, names, names, names, st.just(("approve", "edit", "reject"))
)


def frames(depth: int = 2) -> st.SearchStrategy[Frame]:
    children = st.dictionaries(names, frames(depth - 1), max_size=2) if depth else st.just({})
    return st.builds(
        Frame,
        names,
        names,
        messages,
        st.lists(messages, max_size=3).map(tuple),
        st.integers(0, 50),
        st.dictionaries(names, tool_results, max_size=2).map(MappingProxyType),
        st.dictionaries(names, requests, max_size=2).map(MappingProxyType),
        children.map(MappingProxyType),
    )


states = st.builds(
    RunState,
    st.dictionaries(names, json_values, max_size=3).map(MappingProxyType),
    names,
    names,
    names,
    names,
    st.sampled_from(["completed", "stopped", "paused"]),
    st.integers(0, 2**40),
    st.integers(0, 1000),
    st.none() | frames(),
    st.dictionaries(names, decisions, max_size=3).map(MappingProxyType),
    usages,
    st.lists(names, max_size=3).map(tuple),
)


@given(states)
def test_a_state_round_trips_through_json_unchanged(state: RunState) -> None:
    """``from_json(to_json(s))`` equals ``s`` in every field, pending requests included."""
    again = RunState.from_json(state.to_json())
    assert again == state
    assert again.pending == state.pending
    assert again.frame == state.frame
    assert dict(again.decisions) == dict(state.decisions)
    assert (again.run_id, again.session_version, again.steps) == (
        state.run_id,
        state.session_version,
        state.steps,
    )


def test_a_state_reads_as_the_mapping_of_its_values() -> None:
    """``state["k"]``, ``len``, iteration and equality with a dict read the state values."""
    state = RunState({"a": 1, "b": [2]}, "r", "agent", "u", "s", "completed")
    assert (state["a"], len(state), sorted(state)) == (1, 2, ["a", "b"])
    assert state == {"a": 1, "b": [2]}
    assert state != {"a": 1}
    assert "RunState(run_id='r', status='completed'" in repr(state)


def _valid() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RunState({}, "r", "a", "u", "s", "completed").to_json())
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(schema=2), "run_state.schema must be 1"),
        (lambda d: d.pop("run_id"), "run_state must be an object with 'run_id'"),
        (lambda d: d.update(status="done"), "run_state.status must be 'completed', 'stopped'"),
        (lambda d: d.update(steps=-1), "run_state.steps must be an int >= 0"),
        (lambda d: d.update(extra=1), "run_state.extra must be absent"),
        (
            lambda d: d.update(decisions={"x": {"kind": "maybe"}}),
            "run_state.decisions.x.kind must be 'approve', 'edit' or 'reject'",
        ),
        (
            lambda d: d.update(decisions={"x": {"kind": "reject"}}),
            "run_state.decisions.x.message must be a string",
        ),
    ],
)
def test_a_malformed_state_is_refused_naming_the_field(change: Any, message: str) -> None:
    """``from_json`` says which field is wrong, what it expected and what it got."""
    data = _valid()
    change(data)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RunState.from_json(json.dumps(data))


def test_text_that_is_no_json_is_refused() -> None:
    """Not JSON at all: a ValueError quoting the start of the text."""
    with pytest.raises(ValueError, match="a RunState must be JSON text, got 'nope"):
        RunState.from_json("nope")


SCRIPT = textwrap.dedent(
    """
    import json, sys
    from hooks import Approve, Cont, Pause, Reject, ToolCall, ModelResponse
    from runner import Agent, Runner, RunState, ScriptedModel

    ran = []

    def delete_file(path: str) -> str:
        \"\"\"Delete a file.\"\"\"
        ran.append(path)
        return "deleted " + path

    class Guard:
        def before_tool(self, ctx):
            if ctx.decision is None:
                return Pause("delete " + ctx.call.args["path"] + "?")
            return Cont(ctx)

    calls = tuple(ToolCall(n, "delete_file", {"path": p}) for n, p in (("c1", "a"), ("c2", "b")))
    model = ScriptedModel([ModelResponse(tool_calls=calls), "done"])
    runner = Runner(Agent("files", model, tools=[delete_file], callbacks=[Guard()]))
    if sys.argv[1] == "pause":
        result = runner.run("tidy")
        print(result.state.to_json())
    else:
        model = ScriptedModel(["done"])
        runner = Runner(Agent("files", model, tools=[delete_file], callbacks=[Guard()]))
        state = RunState.from_json(sys.stdin.read())
        first, second = (request.id for request in state.pending)
        result = runner.resume(state, {first: Approve(), second: Reject("keep b")})
        tools = [m.content for m in model.requests[-1].messages if m.role == "tool"]
        print(json.dumps([result.status, result.output, ran, tools]))
    """
)


def test_a_run_paused_in_one_process_resumes_in_another() -> None:
    """The JSON of a paused run is all a new process with a new Runner needs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    paused = subprocess.run(
        [sys.executable, "-c", SCRIPT, "pause"], capture_output=True, text=True, env=env, check=True
    )
    resumed = subprocess.run(
        [sys.executable, "-c", SCRIPT, "resume"],
        input=paused.stdout,
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert json.loads(resumed.stdout) == ["completed", "done", ["a"], ["deleted a", "keep b"]]


STORE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from hooks import Approve, Cont, Edit, Pause, ToolCall, ModelResponse
    from runner import Agent, Runner, ScriptedModel, SQLiteSessionStore

    ran = []

    def delete_file(path: str) -> str:
        \"\"\"Delete a file.\"\"\"
        ran.append(path)
        return "deleted " + path

    class Guard:
        def before_tool(self, ctx):
            return Pause("sure?") if ctx.decision is None else Cont(ctx)

    path, step = sys.argv[1], sys.argv[2]
    call = ModelResponse(tool_calls=(ToolCall("c1", "delete_file", {"path": "a"}),))
    model = ScriptedModel([call, "done"] if step == "pause" else ["done"])
    with SQLiteSessionStore(path) as store:
        agent = Agent("files", model, tools=[delete_file], callbacks=[Guard()])
        runner = Runner(agent, sessions=store)
        if step == "pause":
            print(runner.run("tidy", user_id="u", session_id="s").run_id)
        else:
            state = runner.paused(sys.argv[3])
            result = runner.resume(state, {state.pending[0].id: Edit({"path": "b"})})
            messages = [m.content for m in store.load("u", "s").messages]
            print(json.dumps([result.status, ran, messages, runner.paused(sys.argv[3])]))
    """
)


def test_a_paused_run_kept_in_a_sqlite_file_resumes_in_another_process(tmp_path: Path) -> None:
    """A new process finds the paused run in the file by its id, resumes it, and the
    session in the file holds the whole turn; the paused state is gone after."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    database = str(tmp_path / "runs.db")

    def step(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", STORE_SCRIPT, database, *args],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=60,
        )
        return done.stdout.strip()

    run_id = step("pause")
    status, ran, messages, left = json.loads(step("resume", run_id))
    assert (status, ran, left) == ("completed", ["b"], None)
    assert messages == ["tidy", "", "deleted b", "done"]
