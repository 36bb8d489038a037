"""A class implementing async protocol twins, dispatched by the async functions."""

import asyncio

from returns.result import Failure, Result
from typing_extensions import assert_type, override

import hooks
from hooks import Cont, Fallback, Halt, ModelContext, ModelRequest, ModelResponse, Outcome


class Guard(hooks.AsyncBeforeModel, hooks.AsyncAfterModel, hooks.AsyncOnModelError):
    @override
    async def before_model(
        self, context: ModelContext
    ) -> hooks.BeforeResult[ModelContext, ModelResponse]:
        await asyncio.sleep(0)
        if not context.request.messages:
            return Halt(ModelResponse(text="nothing to answer"))
        return Cont(context)

    @override
    async def after_model(
        self, result: Outcome[ModelResponse], context: ModelContext
    ) -> Result[ModelResponse, Exception]:
        return result

    @override
    async def on_model_error(
        self, error: Failure[Exception], context: ModelContext
    ) -> hooks.ErrorResult[ModelContext, ModelResponse]:
        return Fallback(ModelResponse(text="fallback"))


async def main(ctx: ModelContext) -> None:
    guard: hooks.AsyncBeforeModel = Guard()
    result = await hooks.arun_before([guard], hooks.BEFORE_MODEL, ctx)
    assert_type(result, Cont[ModelContext] | Halt[ModelResponse])


ctx = ModelContext(hooks.Invocation("run", "agent", "agent"), ModelRequest(()))
asyncio.run(main(ctx))
