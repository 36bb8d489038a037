"""A ``match`` over ``call_next``'s outcome that forgets ``Failure`` fails at ``assert_never``."""

from collections.abc import Awaitable, Callable

from returns.result import Success
from typing_extensions import assert_never, override

import hooks
from hooks import ModelContext, ModelResponse, Outcome


class Checks(hooks.AsyncWrapModel):
    @override
    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
    ) -> Outcome[ModelResponse]:
        outcome = await call_next(ctx)
        match outcome:
            case Success(response):
                return Success(response)
            case _:
                assert_never(outcome)  # E: [arg-type] Argument 1 to "assert_never" has incompatible type "Failure[Exception]"; expected "Never"
