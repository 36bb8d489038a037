"""``RunState``: a mapping of the state values, and JSON that survives the process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hooks import Approve, Decision, Edit, Reject, Respond
from runner import Message, PendingRequest, RunState, ToolCall, ToolResult, Usage
from runner._pause.pending import Frame, Question
from tests.helpers import ROOT
from tests.helpers.strategies import json_values, messages, tool_calls, tool_results, usages

names = st.text(min_size=1, max_size=8)
decisions: st.SearchStrategy[Decision] = st.one_of(
    st.just(Approve()),
    st.builds(Edit, st.dictionaries(names, json_values, max_size=3)),
    st.builds(Reject, names),
    st.builds(Respond, st.dictionaries(names, json_values, max_size=3)),
)
requests = st.builds(
    PendingRequest, names, tool_calls, names, names, names, st.just(("approve", "edit", "reject"))
) | st.builds(
    PendingRequest,
    names,
    tool_calls,
    names,
    names,
    names,
    st.just(("respond", "reject")),
    st.just("input"),
    st.none() | st.dictionaries(names, json_values, max_size=3),
    st.none() | st.builds(Question, names, st.none() | names),
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
        (lambda d: d.update(schema=3), "run_state.schema must be 2"),
        (lambda d: d.update(schema=True), "run_state.schema must be 2"),
        (lambda d: d.update(schema=2.0), "run_state.schema must be 2"),
        (lambda d: d.update(schema=1), "schema 1 is hookline 0.2's, which records no callbacks"),
        (lambda d: d.update(run_id=""), "run_state.run_id must be a non-empty string, got str ''"),
        (lambda d: d.pop("callbacks"), "run_state must be an object with 'callbacks'"),
        (lambda d: d.update(callbacks=[1]), "run_state.callbacks\\[0\\] must be a string"),
        (lambda d: d.update(signature=5), "run_state.signature must be a string"),
        (lambda d: d.pop("run_id"), "run_state must be an object with 'run_id'"),
        (lambda d: d.update(status="done"), "run_state.status must be 'completed', 'stopped'"),
        (lambda d: d.update(steps=-1), "run_state.steps must be an int >= 0"),
        (lambda d: d.update(extra=1), "run_state.extra must be absent"),
        (
            lambda d: d.update(decisions={"x": {"kind": "maybe"}}),
            "run_state.decisions.x.kind must be 'approve', 'edit', 'reject' or 'respond'",
        ),
        (
            lambda d: d.update(decisions={"x": {"kind": "reject"}}),
            "run_state.decisions.x must be an object with 'message'",
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
    KEYS = [b"k" * 32]  # both processes are given the key: it signs and verifies the state
    agent = Agent("files", model, tools=[delete_file], callbacks=[Guard()])
    runner = Runner(agent, state_keys=KEYS)
    if sys.argv[1] == "pause":
        result = runner.run("tidy")
        print(result.state.to_json())
    else:
        model = ScriptedModel(["done"])
        agent = Agent("files", model, tools=[delete_file], callbacks=[Guard()])
        runner = Runner(agent, state_keys=KEYS)
        state = RunState.from_json(sys.stdin.read())
        first, second = (request.id for request in state.pending)
        result = runner.resume(state, {first: Approve(), second: Reject("keep b")})
        tools = [m.content for m in model.requests[-1].messages if m.role == "tool"]
        print(json.dumps([result.status, result.output, ran, tools]))
    """
)


@pytest.mark.subprocess
def test_a_run_paused_in_one_process_resumes_in_another() -> None:
    """The JSON of a paused run, signed, is all a new process with a new Runner (and the
    same state key) needs."""
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


@pytest.mark.subprocess
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


ASK = ToolCall("c1", "delete_file", {"path": "a"})
CLEAN = ToolCall("b1", "janitor", {"request": "clean"})
MAIL = ToolCall("m1", "send_mail", {"to": "ann"})
INNER = ToolCall("j1", "delete_file", {"path": "tmp"})


def paused_state() -> RunState:
    """A paused root turn whose batch has a paused call (``c1``, approve or reject only), a
    sub-agent paused inside (``b1``) and a call that ran (``m1``); a decision of each kind."""
    inner = Frame(
        "janitor",
        "boss/janitor",
        Message("user", "clean"),
        (Message("assistant", "", tool_calls=(INNER,)),),
        1,
        requests=MappingProxyType(
            {"j1": PendingRequest("req_j", INNER, "sure?", "janitor", "boss/janitor")}
        ),
    )
    frame = Frame(
        "boss",
        "boss",
        Message("user", "go"),
        (Message("user", "go"), Message("assistant", "", tool_calls=(ASK, CLEAN, MAIL))),
        2,
        results=MappingProxyType({"m1": ToolResult("sent")}),
        requests=MappingProxyType(
            {"c1": PendingRequest("req_c", ASK, "sure?", "boss", "boss", ("approve", "reject"))}
        ),
        children=MappingProxyType({"b1": inner}),
    )
    decided: dict[str, Decision] = {
        "req_a": Approve(),
        "req_e": Edit({"path": "b"}),
        "req_r": Reject("no"),
    }
    return RunState(
        MappingProxyType({"count": 1}),
        "r",
        "boss",
        "u",
        "s",
        "paused",
        3,
        2,
        frame,
        MappingProxyType(decided),
        Usage(5, 7),
        ("count",),
    )


def test_a_paused_state_keeps_every_part_of_its_frame() -> None:
    """Results, requests (their allowed decisions too), nested frames and each kind of
    decision come back from JSON as they were; pending reads the batch in call order."""
    state = paused_state()
    again = RunState.from_json(state.to_json())
    assert again == state
    assert again.frame == state.frame
    assert [request.id for request in again.pending] == ["req_c", "req_j"]
    assert again.pending[0].allowed == ("approve", "reject")
    assert dict(again.decisions) == dict(state.decisions)
    assert (again.usage, again.session_keys, again.session_version) == (Usage(5, 7), ("count",), 3)


def test_decisions_are_written_as_their_kind_and_fields() -> None:
    """Approve, Edit and Reject each become a small object naming their kind."""
    decided = json.loads(paused_state().to_json())["decisions"]
    assert decided == {
        "req_a": {"kind": "approve"},
        "req_e": {"kind": "edit", "args": {"path": "b"}},
        "req_r": {"kind": "reject", "message": "no"},
    }


Path_: TypeAlias = tuple[str | int, ...]


def exactly(message: str) -> str:
    """A ``match`` pattern for ``message``, whole and word for word."""
    return f"^{re.escape(message)}$"


def _paused_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(paused_state().to_json())
    return data


def _put(data: dict[str, Any], path: Path_, value: object) -> None:
    target: Any = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


FRAME_FIELDS = "'agent', 'branch', 'message', 'messages', 'step', 'results', 'requests', 'children'"
REQUEST_FIELDS = (
    "'id', 'call', 'reason', 'agent', 'branch', 'allowed', 'kind', 'schema', 'question'"
)
KINDS = "'approve', 'edit', 'reject' or 'respond'"
C1 = "run_state.frame.requests.c1"
B1 = "run_state.frame.children.b1"

WRONG_FIELDS: list[tuple[Path_, object, str]] = [
    (("schema",), 3, "run_state.schema must be 2 (this hookline's RunState format), got int 3"),
    (("run_id",), 1, "run_state.run_id must be a string, got int 1"),
    (("agent",), None, "run_state.agent must be a string, got NoneType None"),
    (("user_id",), ["u"], "run_state.user_id must be a string, got list ['u']"),
    (("session_id",), 2.5, "run_state.session_id must be a string, got float 2.5"),
    (("status",), 3, "run_state.status must be a string, got int 3"),
    (
        ("status",),
        "done",
        "run_state.status must be 'completed', 'stopped' or 'paused', got str 'done'",
    ),
    (("session_version",), "3", "run_state.session_version must be an int >= 0, got str '3'"),
    (("session_version",), True, "run_state.session_version must be an int >= 0, got bool True"),
    (("steps",), -1, "run_state.steps must be an int >= 0, got int -1"),
    (("values",), [1], "run_state.values must be an object, got list [1]"),
    (("values",), 5, "run_state.values must be an object, got int 5"),
    (("decisions",), [], "run_state.decisions must be an object, got list []"),
    (("decisions",), None, "run_state.decisions must be an object, got NoneType None"),
    (("usage",), [], "run_state.usage must be an object, got list []"),
    (
        ("usage", "input_tokens"),
        -1,
        "run_state.usage.input_tokens must be an integer >= 0, got int -1",
    ),
    (("session_keys",), "count", "run_state.session_keys must be an array, got str 'count'"),
    (("session_keys",), ["count", 1], "run_state.session_keys[1] must be a string, got int 1"),
    (("decisions", "req_a"), "yes", "run_state.decisions.req_a must be an object, got str 'yes'"),
    (
        ("decisions", "req_a", "kind"),
        1,
        "run_state.decisions.req_a.kind must be a string, got int 1",
    ),
    (
        ("decisions", "req_a", "kind"),
        "maybe",
        f"run_state.decisions.req_a.kind must be {KINDS}, got str 'maybe'",
    ),
    (
        ("decisions", "req_a", "message"),
        "m",
        "run_state.decisions.req_a.message must be absent (the known fields are 'kind'), "
        "got str 'm'",
    ),
    (
        ("decisions", "req_e", "args"),
        [1],
        "run_state.decisions.req_e.args must be an object, got list [1]",
    ),
    (
        ("decisions", "req_e", "args"),
        None,
        "run_state.decisions.req_e.args must be an object, got NoneType None",
    ),
    (
        ("decisions", "req_r", "message"),
        5,
        "run_state.decisions.req_r.message must be a string, got int 5",
    ),
    (
        ("decisions", "req_r", "extra"),
        1,
        "run_state.decisions.req_r.extra must be absent "
        "(the known fields are 'kind', 'args', 'message', 'value'), got int 1",
    ),
    (("frame",), [], "run_state.frame must be an object, got list []"),
    (
        ("frame", "extra"),
        1,
        f"run_state.frame.extra must be absent (the known fields are {FRAME_FIELDS}), got int 1",
    ),
    (("frame", "agent"), 1, "run_state.frame.agent must be a string, got int 1"),
    (("frame", "branch"), None, "run_state.frame.branch must be a string, got NoneType None"),
    (("frame", "message"), "go", "run_state.frame.message must be an object, got str 'go'"),
    (
        ("frame", "message", "role"),
        "robot",
        "run_state.frame.message.role must be one of 'system', 'user', 'assistant', 'tool', "
        "got str 'robot'",
    ),
    (("frame", "messages"), {}, "run_state.frame.messages must be an array, got dict {}"),
    (
        ("frame", "messages", 1, "content"),
        7,
        "run_state.frame.messages[1].content must be a string, got int 7",
    ),
    (
        ("frame", "messages", 1, "tool_calls", 2, "id"),
        7,
        "run_state.frame.messages[1].tool_calls[2].id must be a string, got int 7",
    ),
    (("frame", "step"), "2", "run_state.frame.step must be an int >= 0, got str '2'"),
    (("frame", "results"), [], "run_state.frame.results must be an object, got list []"),
    (
        ("frame", "results", "m1", "content"),
        1,
        "run_state.frame.results.m1.content must be a string, got int 1",
    ),
    (
        ("frame", "results", "m1", "is_error"),
        "no",
        "run_state.frame.results.m1.is_error must be a boolean, got str 'no'",
    ),
    (("frame", "requests"), None, "run_state.frame.requests must be an object, got NoneType None"),
    (("frame", "requests", "c1"), [], f"{C1} must be an object, got list []"),
    (
        ("frame", "requests", "c1", "extra"),
        1,
        f"{C1}.extra must be absent (the known fields are {REQUEST_FIELDS}), got int 1",
    ),
    (("frame", "requests", "c1", "id"), 1, f"{C1}.id must be a string, got int 1"),
    (("frame", "requests", "c1", "call"), "c1", f"{C1}.call must be an object, got str 'c1'"),
    (("frame", "requests", "c1", "call", "name"), 1, f"{C1}.call.name must be a string, got int 1"),
    (
        ("frame", "requests", "c1", "reason"),
        None,
        f"{C1}.reason must be a string, got NoneType None",
    ),
    (("frame", "requests", "c1", "agent"), 1, f"{C1}.agent must be a string, got int 1"),
    (
        ("frame", "requests", "c1", "kind"),
        "ask",
        f"{C1}.kind must be 'call' or 'input', got str 'ask'",
    ),
    (("frame", "requests", "c1", "schema"), [1], f"{C1}.schema must be an object, got list [1]"),
    (("frame", "requests", "c1", "question"), 1, f"{C1}.question must be an object, got int 1"),
    (
        ("frame", "requests", "c1", "question"),
        {"key": 1, "state": None},
        f"{C1}.question.key must be a string, got int 1",
    ),
    (
        ("frame", "requests", "c1", "question"),
        {"key": "k", "state": 2},
        f"{C1}.question.state must be a string, got int 2",
    ),
    (("frame", "requests", "c1", "branch"), 1, f"{C1}.branch must be a string, got int 1"),
    (
        ("frame", "requests", "c1", "allowed"),
        "all",
        f"{C1}.allowed must be an array, got str 'all'",
    ),
    (
        ("frame", "requests", "c1", "allowed"),
        ["approve", "maybe"],
        f"{C1}.allowed[1] must be {KINDS}, got str 'maybe'",
    ),
    (("frame", "children"), [], "run_state.frame.children must be an object, got list []"),
    (("frame", "children", "b1"), [], f"{B1} must be an object, got list []"),
    (("frame", "children", "b1", "step"), -2, f"{B1}.step must be an int >= 0, got int -2"),
    (
        ("frame", "children", "b1", "requests", "j1", "call", "args"),
        [],
        f"{B1}.requests.j1.call.args must be an object, got list []",
    ),
    (
        ("frame", "children", "b1", "messages", 0, "tool_calls", 0, "name"),
        None,
        f"{B1}.messages[0].tool_calls[0].name must be a string, got NoneType None",
    ),
]


@pytest.mark.parametrize(("path", "value", "message"), WRONG_FIELDS)
def test_each_wrong_field_is_named_by_its_path(path: Path_, value: object, message: str) -> None:
    """``from_json`` refuses a wrong field with a ``ValueError`` naming its full path (nested
    frames, requests, calls and messages included), what it must be and what it holds."""
    data = _paused_data()
    _put(data, path, value)
    with pytest.raises(ValueError, match=exactly(message)):
        RunState.from_json(json.dumps(data))


def test_text_that_is_no_json_is_quoted_up_to_sixty_characters() -> None:
    """The message quotes the first 60 characters of the text and says what JSON found."""
    message = "Expecting value: line 1 column 1 (char 0)"
    with pytest.raises(
        ValueError, match=exactly(f"a RunState must be JSON text, got {'x' * 60!r}: {message}")
    ):
        RunState.from_json("x" * 100)


def test_json_that_is_no_object_is_refused() -> None:
    """A JSON array is no state: the message says it must be an object."""
    with pytest.raises(ValueError, match=exactly("run_state must be an object, got list []")):
        RunState.from_json("[]")


def _circular() -> list[object]:
    loop: list[object] = []
    loop.append(loop)
    return loop


@pytest.mark.parametrize(
    ("value", "shown"), [({1, 2}, "set {1, 2}"), (_circular(), "list [[...]]")]
)
def test_a_state_value_that_is_no_json_is_named_with_its_type(value: object, shown: str) -> None:
    """``to_json`` names the value's key, says what JSON data is and shows the value's type
    and repr (a value JSON cannot take, or one that contains itself)."""
    state = RunState({"ok": 1, "tags": value}, "r", "a", "u", "s", "completed")
    with pytest.raises(TypeError) as caught:
        state.to_json()
    assert str(caught.value) == (
        "state value 'tags' must be JSON data (str, int, float, bool, None, lists and "
        f"str-keyed dicts of them) to go into a RunState, got {shown}"
    )


def test_the_json_does_not_depend_on_the_order_values_were_set_in() -> None:
    """Two states with the same values and decisions set in another order write the same
    JSON, so they are equal."""
    first = RunState(
        {"a": 1, "b": {"y": 2, "x": 3}},
        "r",
        "a",
        "u",
        "s",
        "completed",
        decisions={"d1": Approve(), "d2": Reject("no")},
    )
    second = RunState(
        {"b": {"x": 3, "y": 2}, "a": 1},
        "r",
        "a",
        "u",
        "s",
        "completed",
        decisions={"d2": Reject("no"), "d1": Approve()},
    )
    assert first.to_json() == second.to_json()
    assert first == second


def test_text_beyond_ascii_is_written_as_itself() -> None:
    """Non-ASCII text goes into the JSON as it is (UTF-8 text a person can read), not as
    ``\\u`` escapes, and reads back the same."""
    state = RunState({"greeting": "grüße 日本"}, "r", "a", "u", "s", "completed")
    text = state.to_json()
    assert '"greeting": "grüße 日本"' in text
    assert RunState.from_json(text.encode())["greeting"] == "grüße 日本"


def test_a_state_equals_a_state_in_every_field_and_a_mapping_in_its_values() -> None:
    """Against another ``RunState`` every field counts; against any other mapping only the
    values; against anything else equality is not defined (so ``==`` is False)."""
    state = paused_state()
    assert state == RunState.from_json(state.to_json())
    assert state != replace(state, steps=state.steps + 1)
    assert state != replace(state, run_id="other")
    assert state == {"count": 1}
    assert state == MappingProxyType({"count": 1})
    assert state != {"count": 2}
    assert state.__eq__(["count"]) is NotImplemented
    assert state != ["count"]
    assert state != 1


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (
            {"kind": "edit", "args": {}, "message": "x"},
            "run_state.decisions.x.message must be absent",
        ),
        (
            {"kind": "reject", "message": "no", "args": {}},
            "run_state.decisions.x.args must be absent",
        ),
        ({"kind": "edit"}, "run_state.decisions.x must be an object with 'args'"),
    ],
)
def test_a_decision_with_another_kind_s_field_is_refused(
    decision: dict[str, object], message: str
) -> None:
    """An edit carries args only, a reject its message only: nothing is dropped silently."""
    data = _valid()
    data["decisions"] = {"x": decision}
    with pytest.raises(ValueError, match=message):
        RunState.from_json(json.dumps(data))
