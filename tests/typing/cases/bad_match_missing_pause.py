"""A ``match`` over ``before_tool``'s dispatch that forgets ``Pause`` fails at ``assert_never``."""

from typing_extensions import assert_never

import hooks
from hooks import Cont, Halt, ToolContext, ToolResult


def dispatch(callbacks: hooks.Callbacks, ctx: ToolContext) -> ToolResult | ToolContext:
    result = hooks.run_before(callbacks, hooks.BEFORE_TOOL, ctx)
    match result:
        case Cont(new_ctx):
            return new_ctx
        case Halt(value):
            return value
        case _:
            assert_never(result)  # E: [arg-type] Argument 1 to "assert_never" has incompatible type "Pause"; expected "Never"
