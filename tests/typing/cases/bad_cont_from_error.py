"""``Cont`` is a before-hook result; an error hook may not return it."""

from returns.result import Failure
from typing_extensions import override

import hooks
from hooks import Cont, ModelContext, ModelResponse


class Recover(hooks.OnModelError):
    @override
    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext
    ) -> hooks.ErrorResult[ModelContext, ModelResponse]:
        return Cont(ctx)  # E: [return-value] Incompatible return value type (got "Cont[ModelContext]", expected "Retry[ModelContext] | Fallback[ModelResponse] | Failure[Exception]")
