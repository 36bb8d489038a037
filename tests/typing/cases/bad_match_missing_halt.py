"""A ``match`` over a before result that forgets ``Halt`` fails at ``assert_never``."""

from typing_extensions import assert_never

import hooks
from hooks import Cont, ModelContext


def dispatch(callbacks: hooks.Callbacks, ctx: ModelContext) -> ModelContext:
    result = hooks.run_before(callbacks, hooks.BEFORE_MODEL, ctx)
    match result:
        case Cont(new_ctx):
            return new_ctx
        case _:
            assert_never(result)  # E: [arg-type] Argument 1 to "assert_never" has incompatible type "Halt[ModelResponse]"; expected "Never"
