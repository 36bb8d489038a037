"""A class implementing three protocols, each method marked ``@override``."""

from returns.result import Failure, Result
from typing_extensions import override

import hooks
from hooks import Cont, Fallback, Halt, ModelContext, ModelResponse, Outcome, Retry


class Guard(hooks.BeforeModel, hooks.AfterModel, hooks.OnModelError):
    @override
    def before_model(self, context: ModelContext) -> hooks.BeforeResult[ModelContext, ModelResponse]:
        if not context.request.messages:
            return Halt(ModelResponse(text="nothing to answer"))
        return Cont(context)

    @override
    def after_model(
        self, result: Outcome[ModelResponse], context: ModelContext
    ) -> Result[ModelResponse, Exception]:
        return result

    @override
    def on_model_error(
        self, error: Failure[Exception], context: ModelContext
    ) -> hooks.ErrorResult[ModelContext, ModelResponse]:
        if context.attempt < 3:
            return Retry(context, delay=0.1)
        if isinstance(error.failure(), TimeoutError):
            return Fallback(ModelResponse(text="the model timed out"))
        return error


guard = Guard()
before: hooks.BeforeModel = guard
after: hooks.AfterModel = guard
on_error: hooks.OnModelError = guard
