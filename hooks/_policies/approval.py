"""``RequireApproval``: the calls a human must approve first pause the run until one does.

A call pauses (``Pause(reason)``) when its tool is named by ``tools`` (names or globs,
``fnmatch``-style) or, with ``destructive=True`` (the default), when the tool declares
itself destructive (``ctx.tool.annotations.destructive``) and not read-only. An MCP
tool that declares nothing counts as destructive: the MCP specification's defaults for
an unannotated tool are ``readOnlyHint: false`` and ``destructiveHint: true``. A
function tool that declares nothing does not. On resume the human's decision is in
``ctx.decision`` and the call goes on: approved or edited, through the guards after
this one; rejected, answered with the rejection.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import Final, final

from hooks._contexts import ToolContext
from hooks._messages import ToolResult
from hooks._results import Cont, PausableResult, Pause
from hooks._tool_info import ToolInfo

__all__ = ["RequireApproval"]


@final
class RequireApproval:
    """Pauses every call of the tools ``tools`` names (globs allowed) and, if
    ``destructive``, of every tool that declares itself destructive (an MCP tool that
    declares nothing included), until a human approves it."""

    __slots__ = ("destructive", "reason", "tools")

    def __init__(
        self,
        tools: Sequence[str] = (),
        *,
        destructive: bool = True,
        reason: str = "{tool} needs a human's approval",
    ) -> None:
        given: object = tools
        names: tuple[object, ...] = () if isinstance(given, str) else tuple(tools)
        if isinstance(given, str) or not all(isinstance(name, str) and name for name in names):
            msg = f"RequireApproval's tools are a list of names or globs, got {given!r:.60}"
            raise TypeError(msg)
        flag: object = destructive
        if type(flag) is not bool:
            msg = f"RequireApproval's destructive must be True or False, got {flag!r:.60}"
            raise TypeError(msg)
        if not tools and not destructive:
            msg = "RequireApproval with no tools and destructive=False would pause nothing"
            raise ValueError(msg)
        self.tools: Final = tuple(tools)
        self.destructive: Final = destructive
        self.reason: Final = reason

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause a call that needs approval and has none yet; let the rest through."""
        if ctx.decision is not None:
            return Cont(ctx)
        tool = ctx.tool
        if self.needs(tool):
            return Pause(self.reason.format(tool=tool.name))
        return Cont(ctx)

    def needs(self, tool: ToolInfo) -> bool:
        """Whether a call of ``tool`` waits for a human."""
        if any(fnmatch.fnmatchcase(tool.name, pattern) for pattern in self.tools):
            return True
        annotations = tool.annotations
        if not self.destructive or annotations.read_only is True:
            return False  # destructive means something only of a tool that changes things
        declared = annotations.destructive
        if declared is None:
            return tool.server is not None  # MCP's default for an unannotated tool
        return declared

    def __repr__(self) -> str:
        return f"RequireApproval({list(self.tools)!r}, destructive={self.destructive})"
