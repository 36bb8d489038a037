"""MCP calls in durable runs: each a step, its idempotency key in the request's ``_meta``."""

from __future__ import annotations

import ast

import pytest
from dbos import DBOS

from runner import Agent, MCPTools, ScriptedModel, ToolCall, ToolResultEvent
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
