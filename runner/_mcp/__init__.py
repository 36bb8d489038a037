"""Tools from MCP servers (the extra ``hookline[mcp]``, the official ``mcp`` SDK).

``MCPTools`` (``source``) names a server an agent takes its tools from; ``Hub`` (``hub``)
holds a runner's connections to them, one per server and event loop (an async run's on
its own loop, a sync run's on a loop thread of the hub's); ``Connection``
(``connection``) is one of them, with its owner task, and ``Child`` (``child``) a stdio
server's process; ``MCPTool`` (``listed``) is one tool a server lists, as the model and
the hooks see it; ``results`` turns a server's answer into a ``ToolResult``. Nothing
here imports ``mcp`` until a connection is made, so importing ``runner`` never does.
"""
