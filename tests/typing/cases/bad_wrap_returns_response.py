"""A wrap returns an ``Outcome``: a bare ``ModelResponse`` is rejected, in the body and in
the signature."""

from collections.abc import Callable

from typing_extensions import override

import hooks
from hooks import ModelContext, ModelResponse, Outcome


class Unwraps(hooks.WrapModel):
    @override
    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]]
    ) -> Outcome[ModelResponse]:
        return call_next(ctx).unwrap()  # E: [return-value] Incompatible return value type (got "ModelResponse", expected "Success[ModelResponse] | Failure[Exception]")


class Declares(hooks.WrapModel):
    @override
    def wrap_model(  # E: [override] Return type "ModelResponse" of "wrap_model" incompatible with return type "Success[ModelResponse] | Failure[Exception]" in supertype
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]]
    ) -> ModelResponse:
        return ModelResponse("hi")
