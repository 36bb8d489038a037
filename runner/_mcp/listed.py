"""``MCPTool``: one tool an MCP server lists, as the model and the hooks see it.

``listing`` turns a server's ``tools/list`` answer into them: the name shown (the
server's prefix, characters the providers refuse replaced), the description, the
input schema, the ``ToolInfo`` its calls' hooks read (the MCP annotations typed).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, final

from hooks import ToolAnnotations, ToolInfo, ToolSpec
from runner._mcp.source import MCPTools

__all__ = ["Listing", "MCPTool", "listing"]

logger: Final = logging.getLogger("runner")

_REFUSED: Final = re.compile(r"[^A-Za-z0-9_-]")
_EMPTY_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


@final
class MCPTool:
    """One listed tool: ``name`` as shown, ``remote`` as the server calls it."""

    __slots__ = ("info", "remote", "source", "spec")

    def __init__(self, source: MCPTools, remote: str, spec: ToolSpec, info: ToolInfo) -> None:
        self.source: Final = source
        self.remote: Final = remote
        self.spec: Final = spec
        self.info: Final = info

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self.spec.name

    def __repr__(self) -> str:
        return f"MCPTool({self.spec.name!r}, server={self.source.name!r})"


Listing = tuple[MCPTool, ...]
"""What a server lists, read once per connection (again after it says the list changed)."""


def listing(source: MCPTools, tools: Sequence[Any]) -> Listing:
    """The ``MCPTool`` of each of ``tools`` (the SDK's ``mcp.types.Tool``); a tool whose
    shown name is too long or repeats an earlier one is left out, with a warning."""
    made: list[MCPTool] = []
    seen: set[str] = set()
    for tool in tools:
        remote: str = tool.name
        shown = _REFUSED.sub("_", f"{source.name}_{remote}" if source.prefix else remote)
        if not shown or len(shown) > 64 or shown in seen:
            why = "repeats another" if shown in seen else "is no valid tool name"
            logger.warning(
                "MCP server %r: tool %r left out: its name %r %s (1 to 64 of A-Z a-z 0-9 _ -)",
                source.name,
                remote,
                shown,
                why,
            )
            continue
        seen.add(shown)
        description: str = tool.description or ""
        schema: Mapping[str, Any] = tool.input_schema or _EMPTY_SCHEMA
        output: Mapping[str, Any] | None = tool.output_schema
        hints = tool.annotations
        annotations = (
            ToolAnnotations()
            if hints is None
            else ToolAnnotations(
                _hint(hints.read_only_hint),
                _hint(hints.destructive_hint),
                _hint(hints.idempotent_hint),
                _hint(hints.open_world_hint),
            )
        )
        spec = ToolSpec(shown, description, schema)
        info = ToolInfo(shown, source.name, description, annotations, output)
        made.append(MCPTool(source, remote, spec, info))
    return tuple(made)


def _hint(value: object) -> bool | None:
    return value if type(value) is bool else None
