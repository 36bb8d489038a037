"""Telemetry of MCP calls: an execute_tool span with the MCP conventions' attributes."""

from __future__ import annotations

import pytest

from runner import Agent, MCPTools, ScriptedModel, ToolCall
from runner._telemetry.genai import mcp_attributes
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import Mode, add, calling
from tests.helpers.spans import Traced, attributes


def test_an_mcp_call_is_an_extension_span_naming_its_server(traced: Traced, mode: Mode) -> None:
    """execute_tool of an MCP tool: type ``extension``, the method ``tools/call``, the
    server's name, the tool's description; a function tool beside it stays a function."""
    model = ScriptedModel(
        [
            calling(
                ToolCall("c1", "notes_add", {"a": 1, "b": 2}),
                ToolCall("c2", "add", {"a": 1, "b": 1}),
            ),
            "done",
        ]
    )
    agent = Agent("ops", model, tools=[add, MCPTools("notes", server=notes_server())])
    traced.run(agent, mode)
    assert attributes(traced.one("execute_tool notes_add")) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "notes_add",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "extension",
        "gen_ai.tool.description": "Add two numbers.",
        "mcp.method.name": "tools/call",
        "hookline.mcp.server": "notes",
        "hookline.attempt": 1,
    }
    assert attributes(traced.one("execute_tool add"))["gen_ai.tool.type"] == "function"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            MCPTools("web", url="https://mcp.example.com/mcp"),
            {"network.transport": "tcp", "server.address": "mcp.example.com", "server.port": 443},
        ),
        (
            MCPTools("web", url="http://127.0.0.1:8123/mcp"),
            {"network.transport": "tcp", "server.address": "127.0.0.1", "server.port": 8123},
        ),
        (MCPTools("web", command=["server"]), {"network.transport": "pipe"}),
        (MCPTools("web", server=notes_server()), {}),
    ],
)
def test_the_transport_is_named_as_the_conventions_name_it(
    source: MCPTools, expected: dict[str, object]
) -> None:
    """stdio is a ``pipe``; HTTP is ``tcp`` with the server's address and port."""
    assert mcp_attributes(source) == {
        "mcp.method.name": "tools/call",
        "hookline.mcp.server": "web",
        **expected,
    }
