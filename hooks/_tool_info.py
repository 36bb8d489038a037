"""What a tool call's hooks know about its tool: ``ToolInfo`` and its ``ToolAnnotations``.

Every tool call's context has one (``ToolContext.tool``): a function tool's, a tool
object's, a sub-agent's or an MCP server's tool alike, so one policy covers them all.
The annotations are hints as the tool declares them (MCP's ``readOnlyHint``,
``destructiveHint``, ``idempotentHint``, ``openWorldHint``): ``None`` where it says
nothing. They are what a tool *says* about itself: a guard that trusts
``read_only=True`` trusts the tool's author.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from hooks._slots import slot_init

__all__ = ["ToolAnnotations", "ToolInfo"]


@slot_init
@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """What a tool declares about its effects; each ``True``, ``False`` or ``None`` (unsaid).

    ``read_only``: it changes nothing. ``destructive``: it may delete or overwrite
    (meaningful when not read-only). ``idempotent``: calling it again with the same
    arguments does nothing more. ``open_world``: it reaches outside systems (the web,
    other people), not a closed domain.
    """

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def __post_init__(self) -> None:
        for name in ("read_only", "destructive", "idempotent", "open_world"):
            value: object = getattr(self, name)
            if value is not None and type(value) is not bool:
                _refuse(self, name, "True, False or None", value)


NO_ANNOTATIONS = ToolAnnotations()
"""A tool that declares nothing about its effects."""


@slot_init
@dataclass(frozen=True, slots=True)
class ToolInfo:
    """A tool as its call's hooks see it.

    ``name`` is the name the model calls it by (an MCP tool's with its server's prefix);
    ``server`` the ``MCPTools`` it comes from, ``None`` for a function tool, a tool
    object or a sub-agent; ``description`` what the model is told; ``annotations``
    what it declares about its effects; ``output_schema`` the JSON schema of its
    structured results, when it has one.
    """

    name: str
    server: str | None = None
    description: str = ""
    annotations: ToolAnnotations = NO_ANNOTATIONS
    output_schema: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        name: object = self.name
        server: object = self.server
        description: object = self.description
        annotations: object = self.annotations
        schema: object = self.output_schema
        if not isinstance(name, str):
            _refuse(self, "name", "a str", name)
        if server is not None and not isinstance(server, str):
            _refuse(self, "server", "a str or None", server)
        if not isinstance(description, str):
            _refuse(self, "description", "a str", description)
        if type(annotations) is not ToolAnnotations:
            _refuse(self, "annotations", "a ToolAnnotations", annotations)
        if schema is not None and not isinstance(schema, Mapping):
            _refuse(self, "output_schema", "a JSON schema (a mapping) or None", schema)


def _refuse(record: object, name: str, expected: str, got: object) -> NoReturn:
    msg = f"{type(record).__name__}.{name} must be {expected}, got {type(got).__name__} {got!r:.60}"
    raise TypeError(msg)
