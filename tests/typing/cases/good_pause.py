"""``Pause`` from ``before_tool``; a match over a point that cannot pause needs no ``Pause`` case."""

from typing_extensions import assert_never, assert_type, override

import hooks
from hooks import (
    Approve,
    Cont,
    Edit,
    Halt,
    ModelContext,
    Pause,
    Reject,
    Respond,
    ToolContext,
    ToolResult,
)


class Guard(hooks.BeforeTool):
    @override
    def before_tool(self, ctx: ToolContext) -> hooks.PausableResult[ToolContext, ToolResult]:
        match ctx.decision:
            case None:
                return Pause(f"run {ctx.call.name}?")
            case Approve() | Reject() | Respond():
                return Cont(ctx)
            case Edit(args):
                return Cont(ctx) if "path" in args else Halt(ToolResult("no path", is_error=True))
            case _:
                assert_never(ctx.decision)


class OldGuard(hooks.BeforeTool):
    """A guard written before ``Pause`` existed still satisfies the protocol."""

    @override
    def before_tool(self, ctx: ToolContext) -> hooks.BeforeResult[ToolContext, ToolResult]:
        return Cont(ctx)


def tool(callbacks: hooks.Callbacks, ctx: ToolContext) -> str:
    result = hooks.run_before(callbacks, hooks.BEFORE_TOOL, ctx)
    match result:
        case Cont(passed):
            return passed.call.name
        case Halt(value):
            return value.content
        case Pause(reason):
            assert_type(reason, str)
            return reason
        case _:
            assert_never(result)


def model(callbacks: hooks.Callbacks, ctx: ModelContext) -> str:
    result = hooks.run_before(callbacks, hooks.BEFORE_MODEL, ctx)
    match result:
        case Cont(passed):
            return str(len(passed.request.messages))
        case Halt(response):
            return response.text
        case _:
            assert_never(result)


async def atool(callbacks: hooks.Callbacks, ctx: ToolContext) -> str:
    result = await hooks.arun_before(callbacks, hooks.BEFORE_TOOL, ctx)
    assert_type(result, hooks.PausableResult[ToolContext, ToolResult])
    return "paused" if isinstance(result, Pause) else "on"


async def amodel(callbacks: hooks.Callbacks, ctx: ModelContext) -> str:
    result = await hooks.arun_before(callbacks, hooks.BEFORE_MODEL, ctx)
    assert_type(result, hooks.BeforeResult[ModelContext, hooks.ModelResponse])
    return "on"


CALLBACKS: list[hooks.BeforeTool] = [Guard(), OldGuard()]
