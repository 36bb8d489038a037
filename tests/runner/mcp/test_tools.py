"""MCP servers' tools under the runner's hooks, on each transport (in-process, stdio, HTTP)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence

import pytest

from hooks import Cont, Failure, Fallback, Halt, Pause
from runner import (
    Agent,
    Approve,
    ImagePart,
    MCPError,
    MCPTimeout,
    MCPToolError,
    MCPTools,
    ModelRequest,
    Reject,
    Runner,
    RunResult,
    ScriptedModel,
    ToolAnnotations,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    ToolResultEvent,
)
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import Mode, calling, drive
from tests.runner.mcp.conftest import Notes


def results(result: RunResult) -> list[ToolResult]:
    """The tool results a run recorded, in order."""
    return [event.result for event in result.events if isinstance(event, ToolResultEvent)]


def agent_calling(
    tools: Sequence[object], *calls: ToolCall, callbacks: Sequence[object] = ()
) -> Agent:
    """An agent whose model asks for ``calls`` once, then answers "done"."""
    model = ScriptedModel([calling(*calls), "done"])
    return Agent("ops", model, tools=tools, callbacks=callbacks)


def requests(agent: Agent) -> list[ModelRequest]:
    """What the agent's ``ScriptedModel`` was asked."""
    model = agent.model
    assert isinstance(model, ScriptedModel)
    return list(model.requests)


class Seen:
    """Records what each tool call's hooks see."""

    def __init__(self) -> None:
        self.tools: list[ToolInfo] = []
        self.errors: list[Exception] = []

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        self.tools.append(ctx.tool)
        return Cont(ctx)

    def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext) -> Failure[Exception]:
        self.errors.append(failure.failure())
        return failure


def test_an_agent_lists_calls_and_types_an_mcp_servers_tools(notes: Notes, mode: Mode) -> None:
    """The model is offered the server's tools, prefixed; a call runs on the server; the
    hooks see its annotations typed, its server and its output schema."""
    seen = Seen()
    agent = agent_calling(
        [notes()],
        ToolCall("1", "notes_add", {"a": 2, "b": 3}),
        ToolCall("2", "notes_delete", {"title": "x"}),
        callbacks=[seen],
    )
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    assert result.status == "completed"
    offered = {spec.name for spec in requests(agent)[0].tools}
    assert {"notes_add", "notes_write", "notes_delete", "notes_fail"} <= offered
    add, delete = results(result)
    assert add == ToolResult("5", structured={"result": 5})
    assert delete.content == "deleted x"
    info = seen.tools[0]
    assert (info.name, info.server, info.description) == ("notes_add", "notes", "Add two numbers.")
    assert info.annotations == ToolAnnotations(read_only=True, idempotent=True)
    assert info.output_schema is not None
    assert info.output_schema["properties"]["result"]["type"] == "integer"
    assert seen.tools[1].annotations == ToolAnnotations(
        read_only=None, destructive=True, open_world=False
    )


def test_without_prefix_the_servers_names_are_shown(mode: Mode) -> None:
    """``prefix=False``: the model calls the tools by the server's own names."""
    agent = agent_calling(
        [MCPTools("notes", server=notes_server(), prefix=False)],
        ToolCall("1", "add", {"a": 1, "b": 1}),
    )
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    assert [r.content for r in results(result)] == ["2"]


def test_a_guard_halts_a_destructive_mcp_call(notes: Notes, mode: Mode) -> None:
    """A before_tool guard reading the annotations halts the call: the server never runs it."""

    class Guard:
        def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[ToolResult]:
            if ctx.tool.annotations.destructive:
                return Halt(ToolResult(f"refused: {ctx.tool.name}", is_error=True))
            return Cont(ctx)

    source = notes()
    agent = agent_calling(
        [source],
        ToolCall("1", "notes_write", {"title": "t", "text": "hello"}),
        ToolCall("2", "notes_delete", {"title": "t"}),
        callbacks=[Guard()],
    )
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    wrote, refused = results(result)
    assert wrote.content == "wrote t"
    assert refused == ToolResult("refused: notes_delete", is_error=True)


class PauseDestructive:
    """Pauses every destructive call until a human decided."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Pause:
        if ctx.tool.annotations.destructive and ctx.decision is None:
            return Pause(f"{ctx.tool.server} wants to {ctx.call.name}")
        return Cont(ctx)


@pytest.mark.parametrize("approve", [True, False])
def test_a_destructive_mcp_call_pauses_and_resumes(mode: Mode, approve: bool) -> None:
    """A guard pauses a destructive MCP call; approved, it runs on resume, rejected, the
    model reads the refusal."""
    agent = agent_calling(
        [MCPTools("notes", server=notes_server())],
        ToolCall("1", "notes_delete", {"title": "t"}),
        callbacks=[PauseDestructive()],
    )
    with Runner(agent) as runner:
        paused = drive(runner, mode, "go")
        assert paused.status == "paused"
        (request,) = paused.pending
        assert request.reason == "notes wants to notes_delete"
        decision = Approve() if approve else Reject("no deleting")
        if mode == "sync":
            done = runner.resume(paused.state, {request.id: decision})
        else:
            done = asyncio.run(runner.aresume(paused.state, {request.id: decision}))
    assert done.status == "completed"
    (result,) = results(done)
    if approve:
        assert result.content == "deleted t"
    else:
        assert result.is_error
        assert "no deleting" in result.content


def test_is_error_reaches_on_tool_error_as_mcp_tool_error(notes: Notes, mode: Mode) -> None:
    """``isError: true`` is an ``MCPToolError`` the error hooks see; unrecovered, the
    model reads it as an error result."""
    seen = Seen()
    agent = agent_calling(
        [notes()], ToolCall("1", "notes_fail", {"reason": "disk full"}), callbacks=[seen]
    )
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    (error,) = seen.errors
    assert isinstance(error, MCPToolError)
    said = "Error executing tool fail: disk full"  # as the SDK's server words it
    assert (error.server, error.tool, error.content) == ("notes", "fail", said)
    assert error.result == ToolResult(said, is_error=True)
    (tool_result,) = results(result)
    assert tool_result.is_error
    assert "disk full" in tool_result.content


def test_an_error_hook_recovers_from_an_mcp_tool_error(mode: Mode) -> None:
    """A recovery replaces the server's error answer."""

    class Recover:
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext
        ) -> Fallback[ToolResult]:
            return Fallback(ToolResult(f"recovered from {ctx.tool.server}"))

    agent = agent_calling(
        [MCPTools("notes", server=notes_server())],
        ToolCall("1", "notes_fail", {"reason": "x"}),
        callbacks=[Recover()],
    )
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    assert results(result) == [ToolResult("recovered from notes")]


def test_a_protocol_error_is_an_mcp_error(notes: Notes, mode: Mode) -> None:
    """A JSON-RPC error answer is an ``MCPError`` with its code, not transient."""
    seen = Seen()
    agent = agent_calling([notes()], ToolCall("1", "notes_refuse", {}), callbacks=[seen])
    with Runner(agent) as runner:
        drive(runner, mode, "go")
    (error,) = seen.errors
    assert type(error) is MCPError
    assert (error.server, error.tool, error.code, error.transient) == (
        "notes",
        "refuse",
        -32050,
        False,
    )
    assert "refused by policy" in str(error)


def test_a_call_past_its_deadline_is_an_mcp_timeout(notes: Notes, mode: Mode) -> None:
    """A call that outlasts ``deadline`` fails with ``MCPTimeout``, a transient
    ``TimeoutError``; the connection serves the next call."""
    seen = Seen()
    model = ScriptedModel(
        [
            calling(ToolCall("1", "notes_slow", {"seconds": 30})),
            calling(ToolCall("2", "notes_add", {"a": 1, "b": 2})),
            "done",
        ]
    )
    agent = Agent("ops", model, tools=[notes(deadline=0.5)], callbacks=[seen])
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    (error,) = seen.errors
    assert isinstance(error, MCPTimeout)
    assert isinstance(error, TimeoutError)
    assert (error.deadline, error.transient) == (0.5, True)
    assert results(result)[1].content == "3"


def test_image_content_becomes_an_image_part(notes: Notes, mode: Mode) -> None:
    """Text is what the model reads; an image is an ``ImagePart`` of the result."""
    from tests.helpers.mcp_servers import PNG

    agent = agent_calling([notes()], ToolCall("1", "notes_picture", {}))
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    (picture,) = results(result)
    assert picture == ToolResult("a dot", parts=(ImagePart(data=PNG, media_type="image/png"),))
    (message,) = [m for m in requests(agent)[1].messages if m.role == "tool"]
    assert message.parts == picture.parts


def test_a_changed_tool_list_is_read_again(mode: Mode) -> None:
    """After the server says its tool list changed, the next model request offers the new
    tool and a call of it runs."""
    model = ScriptedModel(
        [
            calling(ToolCall("1", "notes_grow", {"name": "sprout"})),
            calling(ToolCall("2", "notes_sprout", {})),
            "done",
        ]
    )
    agent = Agent("ops", model, tools=[MCPTools("notes", server=notes_server())])
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    names = [{spec.name for spec in request.tools} for request in model.requests]
    assert "notes_sprout" not in names[0]
    assert "notes_sprout" in names[1]
    assert [r.content for r in results(result)] == ["grew sprout", "sprout works"]


def test_concurrent_calls_share_one_connection(notes: Notes) -> None:
    """An async run's calls of one response run at once on the one connection: each
    waits on the server until all are under way, and they all come back."""
    calls = [ToolCall(str(n), "notes_rendezvous", {"n": 6}) for n in range(6)]
    agent = agent_calling([notes()], *calls)
    with Runner(agent) as runner:
        result = asyncio.run(runner.arun("go"))
    assert [r.content for r in results(result)] == ["met"] * 6


def test_a_stream_runs_mcp_calls() -> None:
    """``Runner.stream`` drives MCP calls like ``arun``."""
    agent = agent_calling(
        [MCPTools("notes", server=notes_server())], ToolCall("1", "notes_add", {"a": 4, "b": 4})
    )

    async def consume() -> list[ToolResult]:
        with Runner(agent) as runner:
            return [
                event.result
                async for event in runner.stream("go")
                if isinstance(event, ToolResultEvent)
            ]

    assert [r.content for r in asyncio.run(consume())] == ["8"]


def test_an_agents_own_tool_wins_a_name_clash(mode: Mode, caplog: pytest.LogCaptureFixture) -> None:
    """A listed tool shown under the name of one of the agent's own is left out, with a
    warning; the agent's own runs."""

    def notes_add(a: int, b: int) -> int:
        """Multiply, in fact."""
        return a * b

    agent = agent_calling(
        [notes_add, MCPTools("notes", server=notes_server())],
        ToolCall("1", "notes_add", {"a": 3, "b": 4}),
    )
    with caplog.at_level(logging.WARNING, logger="runner"), Runner(agent) as runner:
        result = drive(runner, mode, "go")
    assert [r.content for r in results(result)] == ["12"]
    assert "left out" in caplog.text


@pytest.mark.subprocess
def test_an_unreachable_server_offers_no_tools(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that cannot start leaves the agent its own tools, with a warning; a call
    of one of its tools is an unknown tool."""
    source = MCPTools("gone", command=[sys.executable, "-c", "raise SystemExit(3)"])
    agent = agent_calling([source], ToolCall("1", "gone_x", {}))
    with caplog.at_level(logging.WARNING, logger="runner"), Runner(agent) as runner:
        result = drive(runner, mode, "go")
    assert result.status == "completed"
    assert requests(agent)[0].tools == ()
    assert "no tool list" in caplog.text
    (unknown,) = results(result)
    assert unknown.is_error
    assert "UnknownToolError" in unknown.content


def test_a_plain_run_sends_no_idempotency_key(mode: Mode) -> None:
    """Only a durable run's tool step carries a key in ``_meta``: a plain run repeats no call."""
    agent = agent_calling(
        [MCPTools("notes", server=notes_server())], ToolCall("1", "notes_meta", {})
    )
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    (meta,) = results(result)
    assert "hookline/idempotency-key" not in meta.content
