"""MCP calls in durable runs: each a step, its idempotency key in the request's ``_meta``."""

from __future__ import annotations

import ast
import asyncio

import pytest
from dbos import DBOS

from runner import Agent, MCPTools, Respond, ScriptedModel, ToolCall, ToolResultEvent
from tests.helpers.durable import drive_durable, durable, unique
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import Mode, calling

pytestmark = [pytest.mark.durable, pytest.mark.usefixtures("launched")]


def test_an_mcp_call_is_a_step_with_its_key_in_meta(mode: Mode) -> None:
    """The call runs as the step ``tool {branch} {name}``; the server reads the step's
    idempotency key (``run:step:call``) in the request's ``_meta``."""
    model = ScriptedModel([calling(ToolCall("c1", "notes_meta", {})), "done"])
    agent = Agent("ops", model, tools=[MCPTools("notes", server=notes_server())])
    run_id = unique("mcp")
    result = drive_durable(durable(agent), mode, "go", run_id=run_id)
    assert result.status == "completed"
    steps = {
        step["function_name"]: step["function_id"] for step in DBOS.list_workflow_steps(run_id)
    }
    step = steps["tool ops notes_meta"]
    (answer,) = [e.result for e in result.events if isinstance(e, ToolResultEvent)]
    meta = ast.literal_eval(answer.content)
    assert meta["hookline/idempotency-key"] == f"{run_id}:{step}:c1"


def test_a_durable_run_pauses_on_a_question_and_resumes_with_the_answer(mode: Mode) -> None:
    """Under ``DurableRunner`` too, a tool's question pauses the run and ``Respond``
    answers it."""
    model = ScriptedModel([calling(ToolCall("c1", "notes_confirm", {"title": "t"})), "done"])
    runner = durable(Agent("ops", model, tools=[MCPTools("notes", server=notes_server())]))
    paused = drive_durable(runner, mode, "go", run_id=unique("ask"))
    (request,) = paused.pending
    assert (request.kind, request.reason) == ("input", "Delete t?")
    decisions = {request.id: Respond({"sure": True})}
    if mode == "sync":
        done = runner.resume(paused.state, decisions)
    else:
        done = asyncio.run(runner.aresume(paused.state, decisions))
    (answer,) = [e.result for e in done.events if isinstance(e, ToolResultEvent)]
    assert answer.content.startswith("deleted t")
