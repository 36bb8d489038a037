"""Subclassing a protocol checks each method's parameters against it."""

from typing_extensions import override

import hooks
from hooks import Cont, ModelContext, ToolContext, ToolResult


class WrongContext(hooks.BeforeTool):
    @override
    def before_tool(self, ctx: ModelContext) -> hooks.BeforeResult[ToolContext, ToolResult]:  # E: [override] Argument 1 of "before_tool" is incompatible with supertype "hooks._protocols.BeforeTool"; supertype defines the argument type as "ToolContext"
        raise NotImplementedError


class KeywordOnly(hooks.BeforeTool):
    @override
    def before_tool(self, *, ctx: ToolContext) -> hooks.BeforeResult[ToolContext, ToolResult]:  # E: [override] Signature of "before_tool" incompatible with supertype "hooks._protocols.BeforeTool"
        return Cont(ctx)
