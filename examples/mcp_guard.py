"""Guard an MCP server's tools with the hooks a function tool has: pause every destructive call.

A small notes server (built with the official ``mcp`` SDK, run in-process: no network)
lists ``read``, ``write`` and ``delete``, each declaring its effects in MCP annotations
(``readOnlyHint``, ``destructiveHint``). The agent gets them with ``MCPTools("notes",
server=...)``; its model sees them as ``notes_read``, ``notes_write``, ``notes_delete``.
``PauseDestructive`` reads ``ctx.tool.annotations`` -- typed, the same for a function
tool -- and pauses every destructive call until a human decided: the run ends
``"paused"``, the human rejects deleting one note and approves the other, and the run
finishes. Needs the extra: ``pip install 'hookline[mcp]'``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations as MCPAnnotations
from typing_extensions import override

from hooks import Approve, BeforeTool, Cont, Decision, PausableResult, Pause, Reject
from runner import (
    Agent,
    MCPTools,
    ModelRequest,
    ModelResponse,
    Runner,
    RunResult,
    ToolCall,
    ToolContext,
    ToolResult,
)


def notes_server(notes: dict[str, str]) -> MCPServer:
    """An MCP server over ``notes``, its tools annotated with their effects."""
    server = MCPServer("notes", log_level="CRITICAL")

    @server.tool(annotations=MCPAnnotations(read_only_hint=True))
    def read() -> str:
        """The titles of the notes."""
        return ", ".join(sorted(notes))

    @server.tool(annotations=MCPAnnotations(read_only_hint=False, destructive_hint=False))
    def write(title: str, text: str) -> str:
        """Write a note."""
        notes[title] = text
        return f"wrote {title}"

    @server.tool(annotations=MCPAnnotations(read_only_hint=False, destructive_hint=True))
    def delete(title: str) -> str:
        """Delete a note."""
        notes.pop(title)
        return f"deleted {title}"

    return server


class PauseDestructive(BeforeTool):
    """Every call whose tool declares itself destructive waits for a human."""

    @override
    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        tool = ctx.tool
        if tool.annotations.destructive and ctx.decision is None:
            return Pause(f"{tool.server}: {ctx.call.name}({dict(ctx.call.args)})?")
        return Cont(ctx)


class TidyModel:
    """A stand-in model: read the notes, write a summary, delete the drafts, report."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next step, read off the last message."""
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=(ToolCall("r", "notes_read"),))
        if last.name == "notes_read":
            drafts = [t for t in last.content.split(", ") if t.startswith("draft")]
            calls = [
                ToolCall("w", "notes_write", {"title": "summary", "text": "all tidy"}),
                *(ToolCall(f"d{n}", "notes_delete", {"title": t}) for n, t in enumerate(drafts)),
            ]
            return ModelResponse(tool_calls=tuple(calls))
        results = [m.content for m in request.messages if m.role == "tool"][1:]
        return ModelResponse(f"Done: {'; '.join(results)}.")


@dataclass(frozen=True)
class Demo:
    """What the demo saw: the pause, the end, the notes left."""

    paused: RunResult
    finished: RunResult
    notes: dict[str, str]


def run_demo() -> Demo:
    """Pause the destructive calls, reject one, approve the other, finish."""
    notes = {"draft-1": "x", "draft-2": "y", "plan": "ship it"}
    tools = MCPTools("notes", server=notes_server(notes))
    agent = Agent("tidy", TidyModel(), tools=[tools], callbacks=[PauseDestructive()])
    with Runner(agent) as runner:
        paused = runner.run("tidy my notes")
        first, second = paused.pending
        decisions: dict[str, Decision] = {first.id: Reject("keep draft-1"), second.id: Approve()}
        finished = runner.resume(paused.state, decisions)
    return Demo(paused, finished, dict(notes))


def main() -> None:
    """Print the pause and the end."""
    demo = run_demo()
    print(f"status: {demo.paused.status}")
    for request in demo.paused.pending:
        print(f"  waiting: {request.reason}")
    print(f"status: {demo.finished.status}")
    print(f"  {demo.finished.output}")
    print(f"  notes left: {sorted(demo.notes)}")
    assert demo.finished.status == "completed"
    assert sorted(demo.notes) == ["draft-1", "plan", "summary"]


if __name__ == "__main__":
    main()
