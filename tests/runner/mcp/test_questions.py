"""A question an MCP tool asks during its call (an elicitation) pauses the run; ``Respond``
answers it, ``Reject`` declines it, in this process or another."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner import (
    Agent,
    Approve,
    Decision,
    InvalidDecisions,
    MCPTools,
    Reject,
    Respond,
    Runner,
    RunResult,
    RunState,
    ScriptedModel,
    ToolCall,
    ToolResult,
    ToolResultEvent,
)
from tests.helpers.mcp_servers import SURE, notes_server
from tests.helpers.runs import Mode, calling, drive
from tests.runner.mcp.conftest import ROOT, HTTPNotes

KEY = b"k" * 32


def results(result: RunResult) -> list[ToolResult]:
    """The tool results a run recorded, in order."""
    return [event.result for event in result.events if isinstance(event, ToolResultEvent)]


def asking(source: MCPTools) -> Agent:
    """An agent whose model calls ``notes_confirm`` once, then answers with its result."""
    model = ScriptedModel([calling(ToolCall("c1", "notes_confirm", {"title": "t"})), "done"])
    return Agent("ops", model, tools=[source])


def resume(
    runner: Runner, mode: Mode, state: RunState, decisions: dict[str, Decision]
) -> RunResult:
    """``resume`` in sync mode, ``aresume`` otherwise."""
    if mode == "sync":
        return runner.resume(state, decisions)
    return asyncio.run(runner.aresume(state, decisions))


def test_a_question_pauses_the_run_as_an_input_request(mode: Mode) -> None:
    """The run pauses: one request of kind "input" with the server's message and schema,
    answered by ``Respond`` or ``Reject``."""
    with Runner(asking(MCPTools("notes", server=notes_server()))) as runner:
        paused = drive(runner, mode, "go")
    assert paused.status == "paused"
    (request,) = paused.pending
    assert (request.kind, request.reason, request.allowed) == (
        "input",
        "Delete t?",
        ("respond", "reject"),
    )
    assert request.schema == SURE
    assert request.call == ToolCall("c1", "notes_confirm", {"title": "t"})
    assert results(paused) == []


@pytest.mark.parametrize(
    ("decision", "said"),
    [
        (Respond({"sure": True}), "deleted t (deleting t, {'sure': True})"),
        (Respond({"sure": False}), "kept t (accept)"),
        (Reject("no"), "kept t (decline)"),
    ],
)
def test_respond_answers_and_reject_declines(mode: Mode, decision: Decision, said: str) -> None:
    """The resumed call is sent again with the answer (or the decline) and the server's
    request state; the server's result is what the model reads."""
    with Runner(asking(MCPTools("notes", server=notes_server()))) as runner:
        paused = drive(runner, mode, "go")
        (request,) = paused.pending
        done = resume(runner, mode, paused.state, {request.id: decision})
    assert done.status == "completed"
    assert [r.content for r in results(done)] == [said]


@pytest.mark.parametrize(
    ("decision", "problem"),
    [
        (Respond({"why": "x"}), "'sure' is a required property"),
        (Respond({"sure": "yes"}), "sure: 'yes' is not of type 'boolean'"),
        (Approve(), "it takes respond or reject, got approve"),
    ],
)
def test_an_answer_that_does_not_fit_is_refused_before_it_is_sent(
    decision: Decision, problem: str
) -> None:
    """``Respond``'s value is checked against the question's schema, and a question takes
    no ``Approve``: ``InvalidDecisions`` says why, and the run stays paused."""
    with Runner(asking(MCPTools("notes", server=notes_server()))) as runner:
        paused = runner.run("go")
        (request,) = paused.pending
        with pytest.raises(InvalidDecisions, match=problem) as refused:
            runner.resume(paused.state, {request.id: decision})
        assert problem in refused.value.misfit[request.id]
        done = runner.resume(paused.state, {request.id: Respond({"sure": True})})
    assert done.status == "completed"


def test_respond_on_a_paused_call_is_refused() -> None:
    """A call a guard paused takes approve, edit or reject, never an answer."""
    from tests.runner.mcp.test_tools import PauseDestructive

    agent = Agent(
        "ops",
        ScriptedModel([calling(ToolCall("c1", "notes_delete", {"title": "t"})), "done"]),
        tools=[MCPTools("notes", server=notes_server())],
        callbacks=[PauseDestructive()],
    )
    with Runner(agent) as runner:
        paused = runner.run("go")
        (request,) = paused.pending
        assert request.kind == "call"
        with pytest.raises(InvalidDecisions, match="takes approve or edit or reject, got respond"):
            runner.resume(paused.state, {request.id: Respond({"x": 1})})


def test_the_question_survives_the_run_states_json() -> None:
    """The request's kind, schema and the server's key and state go through
    ``RunState`` JSON unchanged."""
    with Runner(asking(MCPTools("notes", server=notes_server()))) as runner:
        paused = runner.run("go")
    state = RunState.from_json(paused.state.to_json())
    assert state.pending == paused.pending
    (request,) = state.pending
    assert request.question is not None
    assert request.question.key == "confirm"
    assert request.question.state  # the server's, sealed: opaque to the client


@pytest.mark.subprocess
def test_a_question_is_answered_from_another_process(tmp_path: Path) -> None:
    """A run paused on an HTTP server's question is resumed by a new process with
    ``Respond``: the server takes the answer with its request state."""
    server = HTTPNotes()
    server.start()
    try:
        source = MCPTools("notes", url=server.url)
        with Runner(asking(source), state_keys=[KEY]) as runner:
            paused = runner.run("go")
        (request,) = paused.pending
        saved = tmp_path / "state.json"
        saved.write_text(paused.state.to_json())
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.helpers.mcp_resume",
                server.url,
                str(saved),
                request.id,
                json.dumps({"sure": True, "why": "old"}),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    finally:
        server.stop()
    assert done.stdout.splitlines()[-1] == "deleted t (deleting t, {'sure': True, 'why': 'old'})"


def test_a_sub_agents_mcp_tool_asks_and_the_run_resumes_inside_it(mode: Mode) -> None:
    """A sub-agent's MCP tools are listed for its own turn; its tool's question pauses the
    whole run, and the answer resumes the call inside the sub-agent's turn."""
    clerk = Agent(
        "clerk",
        ScriptedModel([calling(ToolCall("c1", "notes_confirm", {"title": "t"})), "clerk done"]),
        tools=[MCPTools("notes", server=notes_server())],
        description="Deletes notes.",
    )
    boss = Agent(
        "boss",
        ScriptedModel([calling(ToolCall("b1", "clerk", {"request": "delete t"})), "all done"]),
        sub_agents=[clerk],
    )
    with Runner(boss) as runner:
        paused = drive(runner, mode, "go")
        (request,) = paused.pending
        assert (request.kind, request.agent, request.branch) == ("input", "clerk", "boss/clerk")
        done = resume(runner, mode, paused.state, {request.id: Respond({"sure": True})})
    assert done.output == "all done"
    contents = [r.content for r in results(done)]
    assert contents[0].startswith("deleted t")
    assert contents[-1] == "clerk done"


@pytest.fixture
def handshake(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections made with the handshake of sessions older than 2026-07-28, whose
    servers ask their questions on the live connection."""
    monkeypatch.setattr("runner._mcp.connection.MODE", "legacy")


def ask_live(elicit: object) -> Agent:
    """An agent calling ``notes_ask_live`` once, its server answered by ``elicit``."""
    model = ScriptedModel([calling(ToolCall("c1", "notes_ask_live", {})), "done"])
    return Agent("ops", model, tools=[MCPTools("notes", server=notes_server(), elicit=elicit)])  # type: ignore[arg-type]


def live_answer(agent: Agent, mode: Mode) -> ToolResult:
    """The one tool result of a run of ``agent``."""
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    assert result.status == "completed"
    (only,) = results(result)
    return only


@pytest.mark.usefixtures("handshake")
def test_a_live_question_is_answered_by_elicit_in_process(mode: Mode) -> None:
    """``elicit(message, schema)`` answers a question asked on the live connection, sync
    or async; its answer is checked against the schema; ``None`` declines."""
    asked: list[tuple[str, object]] = []

    def sure(message: str, schema: object) -> dict[str, object]:
        asked.append((message, schema))
        return {"sure": True}

    async def unsure(message: str, schema: object) -> dict[str, object]:
        return {"sure": False}

    assert live_answer(ask_live(sure), mode).content == "accept True"
    assert asked[0][0] == "Sure?"
    assert live_answer(ask_live(unsure), mode).content == "accept False"
    assert live_answer(ask_live(lambda message, schema: None), mode).content == "decline None"


@pytest.mark.usefixtures("handshake")
def test_an_elicit_that_fails_or_does_not_fit_cancels(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    """An answer that does not fit the schema, or an ``elicit`` that raises, cancels the
    question (logged); the server decides what its call returns."""

    def wrong(message: str, schema: object) -> dict[str, object]:
        return {"sure": "very"}

    def broken(message: str, schema: object) -> dict[str, object]:
        raise RuntimeError("no human here")

    assert live_answer(ask_live(wrong), mode).content == "cancel None"
    assert live_answer(ask_live(broken), mode).content == "cancel None"
    assert live_answer(ask_live(lambda message, schema: [1]), mode).content == "cancel None"
    assert "elicit failed" in caplog.text


@pytest.mark.usefixtures("handshake")
def test_without_elicit_a_live_question_is_refused(mode: Mode) -> None:
    """No ``elicit``: the SDK tells the server elicitation is not supported, and the call
    fails."""
    agent = ask_live(None)
    result = live_answer(agent, mode)
    assert result.is_error
