"""A small notes MCP server built with the ``mcp`` SDK, for the MCP tests.

``notes_server()`` makes a fresh in-process server. Run as a module it serves one over
stdio (``python -m tests.helpers.mcp_servers stdio``) or streamable HTTP on
127.0.0.1 (``python -m tests.helpers.mcp_servers http PORT``), the transports
``MCPTools(command=...)`` and ``MCPTools(url=...)`` reach.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


SURE: dict[str, Any] = {
    "type": "object",
    "properties": {"sure": {"type": "boolean"}, "why": {"type": "string"}},
    "required": ["sure"],
}
"""The schema of the answer ``confirm`` asks for."""


class Sure(BaseModel):
    """The answer ``ask_live`` asks for."""

    sure: bool


def notes_server() -> MCPServer:
    """A notes server: read, write and delete notes, and tools that fail on purpose."""
    server = MCPServer("notes", log_level="CRITICAL")
    notes: dict[str, str] = {}

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def write(title: str, text: str) -> str:
        """Write a note."""
        notes[title] = text
        return f"wrote {title}"

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=True, open_world_hint=False))
    def delete(title: str) -> str:
        """Delete a note."""
        notes.pop(title, None)
        return f"deleted {title}"

    @server.tool()
    def fail(reason: str) -> str:
        """Fail with isError."""
        raise ToolError(reason)

    @server.tool()
    def refuse() -> str:
        """Answer a JSON-RPC error."""
        raise MCPError(-32050, "refused by policy")

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return "slept"

    @server.tool(structured_output=False)
    def picture() -> list[Any]:
        """An image and a caption."""
        return [
            types.TextContent(type="text", text="a dot"),
            types.ImageContent(
                type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"
            ),
        ]

    arrived: list[anyio.Event] = []

    @server.tool()
    async def rendezvous(n: int) -> str:
        """Answer once ``n`` calls are under way at once (10 seconds at most)."""
        met = anyio.Event()
        arrived.append(met)
        if len(arrived) >= n:
            for each in arrived:
                each.set()
        with anyio.fail_after(10):
            await met.wait()
        return "met"

    @server.tool()
    def crash() -> str:
        """End the server's process at once (stdio and HTTP servers only)."""
        os._exit(1)

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=True))
    def confirm(title: str, ctx: Context) -> str | types.InputRequiredResult:
        """Delete a note once the user confirmed, asking them first (an elicitation)."""
        answer = (ctx.input_responses or {}).get("confirm")
        if answer is None:
            form = types.ElicitRequestFormParams(message=f"Delete {title}?", requested_schema=SURE)
            return types.InputRequiredResult(
                input_requests={"confirm": types.ElicitRequest(params=form)},
                request_state=f"deleting {title}",
            )
        assert isinstance(answer, types.ElicitResult)
        if answer.action != "accept" or not (answer.content or {}).get("sure"):
            return f"kept {title} ({answer.action})"
        notes.pop(title, None)
        return f"deleted {title} ({ctx.request_state}, {answer.content})"

    @server.tool()
    async def ask_live(ctx: Context) -> str:
        """Ask on the live connection (an elicitation/create request), as servers on
        sessions older than 2026-07-28 do."""
        answer = await ctx.elicit("Sure?", Sure)
        data = getattr(answer, "data", None)
        return f"{answer.action} {None if data is None else data.sure}"

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def meta(ctx: Context) -> str:
        """The request's _meta as the server got it."""
        got = ctx.request_context.meta
        return repr(dict(got) if got else {})

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of HTTP header ``name`` of the request ("" when none)."""
        headers = ctx.headers or {}
        return headers.get(name, "")

    @server.tool()
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool named ``name`` and tell the client the list changed."""

        def grown() -> str:
            return f"{name} works"

        server.add_tool(grown, name=name, description="A grown tool.")
        await ctx.notify_tools_changed()
        return f"grew {name}"

    return server


def main(argv: list[str]) -> None:
    """Serve a notes server over stdio or HTTP."""
    server = notes_server()
    if argv[0] == "stdio":
        server.run("stdio")
        return
    import uvicorn

    uvicorn.run(
        server.streamable_http_app(), host="127.0.0.1", port=int(argv[1]), log_level="error"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
