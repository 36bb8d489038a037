"""``call_next`` takes the point's context: a wrap handing it a ``ToolContext`` is rejected."""

from collections.abc import Callable

from typing_extensions import override

import hooks
from hooks import ModelContext, ModelResponse, Outcome, ToolCall, ToolContext


class Wrong(hooks.WrapModel):
    @override
    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]]
    ) -> Outcome[ModelResponse]:
        tool_ctx = ToolContext(ctx.invocation, ToolCall("call-1", "add"))
        return call_next(tool_ctx)  # E: [arg-type] Argument 1 has incompatible type "ToolContext"; expected "ModelContext"
