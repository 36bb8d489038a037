"""The edges of MCP support: answers of every content kind, names the providers refuse,
questions hookline does not answer, a hub used after it closed, a run's unparsed
arguments, a question whose schema is broken."""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import sys
from typing import Any

import mcp_types as types
import pytest
from mcp.server.mcpserver import Context, MCPServer

from runner import (
    Agent,
    ImagePart,
    InvalidDecisions,
    MCPError,
    MCPToolError,
    MCPTools,
    Respond,
    Runner,
    RunState,
    ScriptedModel,
    ToolCall,
    ToolResult,
    ToolResultEvent,
)
from runner._mcp import connection as connection_module
from runner._mcp.hub import Hub
from runner._mcp.listed import listing
from runner._mcp.results import to_result
from runner._run.toolbox import Toolbox
from runner._tools.arguments import UnparsedArguments
from tests.helpers.mcp_servers import PNG, notes_server
from tests.helpers.runs import calling


def answer(*content: Any, is_error: bool = False) -> types.CallToolResult:
    """A server's answer holding ``content``."""
    return types.CallToolResult(content=list(content), is_error=is_error)


def test_every_kind_of_content_reaches_the_result() -> None:
    """Text and embedded text resources are read; an image is a part (one that is no
    image is named); audio and binary resources are named in the text."""
    png = base64.b64encode(PNG).decode()
    result = to_result(
        "notes",
        "t",
        answer(
            types.TextContent(type="text", text="one"),
            types.ImageContent(type="image", data=png, mime_type="image/png"),
            types.ImageContent(type="image", data="!!", mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///a", text="two"),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="file:///b", blob="AAAA"),
            ),
            types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
        ),
    )
    assert result.content.splitlines() == [
        "one",
        "[an image of type 'image/png' that could not be read]",
        "two",
        "[resource content]",
        "[audio content]",
    ]
    assert result.parts == (ImagePart(data=PNG, media_type="image/png"),)
    assert result.structured is None


def test_an_error_answer_keeps_its_whole_result() -> None:
    """``MCPToolError.result`` holds the parts and structured content too."""
    with pytest.raises(MCPToolError) as failed:
        to_result("notes", "t", answer(types.TextContent(type="text", text="no"), is_error=True))
    assert failed.value.result == ToolResult("no", is_error=True)
    assert str(failed.value) == "MCP tool 't' of server 'notes' failed: no"


def test_names_the_providers_refuse_are_mended_or_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A character outside ``[A-Za-z0-9_-]`` is shown as ``_``; a name too long, or one
    that mends into another's, is left out with a warning."""
    schema: dict[str, Any] = {"type": "object"}
    tools = [
        types.Tool(name="read.all", input_schema=schema),
        types.Tool(name="read_all", input_schema=schema),
        types.Tool(name="x" * 70, input_schema=schema),
    ]
    source = MCPTools("notes", server=notes_server())
    with caplog.at_level(logging.WARNING, logger="runner"):
        listed = listing(source, tools)
    assert [(tool.name, tool.remote) for tool in listed] == [("notes_read_all", "read.all")]
    assert repr(listed[0]) == "MCPTool('notes_read_all', server='notes')"
    assert "repeats another" in caplog.text
    assert "is no valid tool name" in caplog.text


def test_a_toolbox_is_a_mapping_of_every_tool() -> None:
    """The hooks' ``Invocation.tools`` of an agent with servers: its own tools and the
    listed ones, by name."""

    def own() -> str:
        """An own tool."""
        return ""

    source = MCPTools("notes", server=notes_server())
    agent = Agent("ops", ScriptedModel(), tools=[own, source])
    hub = Hub()
    try:
        box = Toolbox(agent, hub, is_async=False)
        assert len(box) == 1
        box._merge((listing(source, [types.Tool(name="t", input_schema={"type": "object"})]),))
        assert list(box) == ["own", "notes_t"]
        assert len(box) == 2
        assert "notes_t" in box
        assert "gone" not in box
        assert box["notes_t"].server == "notes"
        assert box.get("gone") is None
        assert repr(box) == "Toolbox('ops', ['own', 'notes_t'])"
    finally:
        hub.close()


def test_a_closed_hub_refuses_work() -> None:
    """After ``close`` (twice is fine) a hub makes no connection and runs nothing."""
    hub = Hub()
    hub.close()
    hub.close()
    source = MCPTools("notes", server=notes_server())
    with pytest.raises(RuntimeError, match="closed"):
        hub.connection(source)

    async def nothing() -> None:
        return None

    work = nothing()
    with pytest.raises(RuntimeError, match="closed"):
        hub.submit(work)
    work.close()


def test_a_stdio_server_without_any_stderr_gets_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """With neither ``sys.stderr`` nor ``sys.__stderr__`` a file, the server's stderr is
    dropped."""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(sys, "__stderr__", None)
    sink = connection_module._errlog()
    try:
        assert sink.fileno() >= 0
        assert sink.name == "/dev/null"
    finally:
        sink.close()


def asking_server() -> MCPServer:
    """Tools that ask what hookline does not answer, or only pass a state along."""
    server = MCPServer("asks", log_level="CRITICAL")
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    form = types.ElicitRequestFormParams(message="?", requested_schema=schema)

    @server.tool()
    def two() -> types.InputRequiredResult:
        """Ask two questions at once."""
        ask = types.ElicitRequest(params=form)
        return types.InputRequiredResult(input_requests={"a": ask, "b": ask})

    @server.tool()
    def roots() -> types.InputRequiredResult:
        """Ask for the client's roots."""
        return types.InputRequiredResult(input_requests={"r": types.ListRootsRequest()})

    @server.tool()
    def later(ctx: Context) -> str | types.InputRequiredResult:
        """Answer on the second round, once the state came back."""
        if ctx.request_state is None:
            return types.InputRequiredResult(request_state="round 2")
        return f"answered in {ctx.request_state}"

    @server.tool()
    def never() -> types.InputRequiredResult:
        """Pass a state along forever."""
        return types.InputRequiredResult(request_state="again")

    return server


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("asks_two", "MCPError: MCP server 'asks', tool 'two': it asked 2 questions at once"),
        ("asks_roots", "it asked for roots/list (not a form)"),
        ("asks_later", "answered in round 2"),
        ("asks_never", "no answer after 10 rounds"),
    ],
)
def test_questions_hookline_does_not_answer_fail_the_call(tool: str, said: str) -> None:
    """Several questions at once, or another input request than a form, fail the call
    with an ``MCPError``; a bare request state is sent back, 10 rounds at most."""
    model = ScriptedModel([calling(ToolCall("c1", tool, {})), "done"])
    agent = Agent("ops", model, tools=[MCPTools("asks", server=asking_server())])
    with Runner(agent) as runner:
        result = runner.run("go")
    (got,) = [e.result for e in result.events if isinstance(e, ToolResultEvent)]
    assert said in got.content


def test_unparsed_arguments_of_an_mcp_call_are_a_tool_arguments_error() -> None:
    """A model's arguments that were no JSON object never reach the server."""
    call = ToolCall("c1", "notes_add", UnparsedArguments("{oops", "not JSON"))
    agent = Agent(
        "ops",
        ScriptedModel([calling(call), "done"]),
        tools=[MCPTools("notes", server=notes_server())],
    )
    with Runner(agent) as runner:
        result = runner.run("go")
    (got,) = [e.result for e in result.events if isinstance(e, ToolResultEvent)]
    assert got.is_error
    assert got.content.startswith("ToolArgumentsError")


def test_a_question_whose_schema_is_broken_takes_no_answer() -> None:
    """A state whose question carries no valid JSON schema refuses every ``Respond``."""
    model = ScriptedModel([calling(ToolCall("c1", "notes_confirm", {"title": "t"})), "done"])
    agent = Agent("ops", model, tools=[MCPTools("notes", server=notes_server())])
    with Runner(agent, state_keys=[b"k" * 32]) as runner:
        paused = runner.run("go")
        data = paused.state.to_json().replace('"type": "boolean"', '"type": 5')
        assert data != paused.state.to_json()
        (request,) = paused.pending
        with pytest.raises(InvalidDecisions, match="no valid JSON schema"):
            runner.resume(RunState.from_json(data), {request.id: Respond({"sure": True})})


def test_an_mcp_error_says_where_and_what() -> None:
    """An ``MCPError`` names the server, the tool (or the listing) and its code."""
    assert str(MCPError("notes", None, "down", transient=True)) == (
        "MCP server 'notes', listing the tools: down"
    )
    assert (
        str(MCPError("notes", "t", "no", code=-1)) == "MCP server 'notes', tool 't': no (code -1)"
    )


def test_an_async_run_reaches_a_server_from_a_second_loop() -> None:
    """The connection of an ``asyncio.run`` ends with its loop: another ``asyncio.run``
    connects anew and reaches the same server."""
    model = ScriptedModel([calling(ToolCall("c1", "notes_pid", {})), "done"] * 2)
    agent = Agent("ops", model, tools=[MCPTools("notes", server=notes_server())])
    with Runner(agent) as runner:
        first = asyncio.run(runner.arun("go"))
        second = asyncio.run(runner.arun("go"))
    pids = [
        e.result.content
        for r in (first, second)
        for e in r.events
        if isinstance(e, ToolResultEvent)
    ]
    assert pids[0] == pids[1]


@pytest.mark.parametrize(
    ("tools", "version"),
    [(None, "2026-07-28"), (types.ToolsCapability(list_changed=True), "2025-06-18")],
)
def test_a_session_that_lists_no_changes_is_not_listened_to(
    tools: types.ToolsCapability | None, version: str
) -> None:
    """A server that announces no tool list changes, or an older session (whose changes
    come as notifications), gets no ``subscriptions/listen``: the owner only waits."""
    from types import SimpleNamespace

    from runner._mcp.connection import Connection

    class Unlistened:
        server_capabilities = SimpleNamespace(tools=tools)
        protocol_version = version

        def listen(self, **_: object) -> None:
            raise AssertionError("listened")

    async def own() -> None:
        stop = asyncio.Event()
        stop.set()
        await Connection(MCPTools("notes", server=notes_server()))._until(Unlistened(), stop)

    asyncio.run(own())
