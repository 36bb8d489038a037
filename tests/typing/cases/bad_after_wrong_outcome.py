"""``run_after`` on ``AFTER_TOOL`` takes an outcome of ``ToolResult``.

As with contexts, the point pins ``T`` invariantly, so mypy reports that it cannot
solve ``T`` for the call.
"""

from returns.result import Success

import hooks
from hooks import ModelResponse, Outcome, ToolContext


def dispatch(callbacks: hooks.Callbacks, ctx: ToolContext) -> None:
    hooks.run_after(callbacks, hooks.AFTER_TOOL, Success(ModelResponse()), ctx)  # E: [misc] Cannot infer value of type parameter "T" of "run_after"


async def adispatch(
    callbacks: hooks.Callbacks, outcome: Outcome[ModelResponse], ctx: ToolContext
) -> None:
    await hooks.arun_after(callbacks, hooks.AFTER_TOOL, outcome, ctx)  # E: [misc] Cannot infer value of type parameter "T" of "arun_after"
