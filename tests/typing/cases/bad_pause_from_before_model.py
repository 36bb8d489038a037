"""``Pause`` is legal only where a call can wait for a human: not from ``before_model``."""

from typing_extensions import override

import hooks
from hooks import ModelContext, ModelResponse, Pause


class Guard(hooks.BeforeModel):
    @override
    def before_model(self, ctx: ModelContext) -> hooks.BeforeResult[ModelContext, ModelResponse]:
        return Pause("ask first")  # E: [return-value] Incompatible return value type (got "Pause", expected "Cont[ModelContext] | Halt[ModelResponse]")


def guard(ctx: ModelContext) -> hooks.BeforeResult[ModelContext, ModelResponse]:
    return Pause("ask first")  # E: [return-value] Incompatible return value type (got "Pause", expected "Cont[ModelContext] | Halt[ModelResponse]")
