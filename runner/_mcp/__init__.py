"""Tools from MCP servers (the extra ``hookline[mcp]``, the official ``mcp`` SDK).

``MCPTools`` (``source``) names a server an agent takes its tools from; ``Hub`` (``hub``)
holds a runner's connections to them on an event loop thread of its own; ``MCPTool``
(``listed``) is one tool a server lists, as the model and the hooks see it; ``results``
turns a server's answer into a ``ToolResult``. Nothing here imports ``mcp`` until a
connection is made, so importing ``runner`` never does.
"""
