"""``Retry`` is an error-hook result; a before hook may not return it."""

from typing_extensions import override

import hooks
from hooks import ModelContext, ModelResponse, Retry


class Guard(hooks.BeforeModel):
    @override
    def before_model(self, ctx: ModelContext) -> hooks.BeforeResult[ModelContext, ModelResponse]:
        return Retry(ctx)  # E: [return-value] Incompatible return value type (got "Retry[ModelContext]", expected "Cont[ModelContext] | Halt[ModelResponse]")
