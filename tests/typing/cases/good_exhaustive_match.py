"""``match`` over each result union is exhaustive and types every capture."""

from returns.result import Failure, Success
from typing_extensions import assert_never, assert_type

import hooks
from hooks import Cont, Fallback, Halt, ModelContext, ModelResponse, Retry


def before(callbacks: hooks.Callbacks, ctx: ModelContext) -> ModelResponse | None:
    result = hooks.run_before(callbacks, hooks.BEFORE_MODEL, ctx)
    match result:
        case Cont(new_ctx):
            assert_type(new_ctx, ModelContext)
            return None
        case Halt(response):
            assert_type(response, ModelResponse)
            return response
        case _:
            assert_never(result)


def after(outcome: hooks.Outcome[ModelResponse]) -> str:
    match outcome:
        case Success(response):
            assert_type(response, ModelResponse)
            return response.text
        case Failure(error):
            assert_type(error, Exception)
            return str(error)
        case _:
            assert_never(outcome)


def on_error(result: hooks.ErrorResult[ModelContext, ModelResponse]) -> str:
    match result:
        case Retry(ctx):
            assert_type(ctx, ModelContext)
            return f"retry in {result.delay}s"
        case Fallback(response):
            assert_type(response, ModelResponse)
            return response.text
        case Failure(error):
            assert_type(error, Exception)
            return str(error)
        case _:
            assert_never(result)
