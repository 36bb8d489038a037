"""A hook point fixes the context type its dispatch accepts.

``BeforePoint`` is invariant in its context type, so mypy cannot solve ``C`` from a
``ModelContext`` point and a ``ToolContext`` argument; it says so on the call's line
(rather than as an ``arg-type`` error naming the argument).
"""

import hooks
from hooks import ToolContext


def dispatch(callbacks: hooks.Callbacks, tool_ctx: ToolContext) -> None:
    hooks.run_before(callbacks, hooks.BEFORE_MODEL, tool_ctx)  # E: [misc] Cannot infer value of type parameter "C" of "run_before"


async def adispatch(callbacks: hooks.Callbacks, tool_ctx: ToolContext) -> None:
    await hooks.arun_before(callbacks, hooks.BEFORE_MODEL, tool_ctx)  # E: [misc] Cannot infer value of type parameter "C" of "arun_before"
