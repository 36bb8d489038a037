"""``@override`` catches a misspelled hook method; the real one stays abstract."""

from typing_extensions import override

import hooks
from hooks import Cont, ModelContext, ModelResponse


class Guard(hooks.BeforeModel):
    @override
    def before_modle(self, ctx: ModelContext) -> hooks.BeforeResult[ModelContext, ModelResponse]:  # E: [misc] Method "before_modle" is marked as an override, but no base method was found with this name
        return Cont(ctx)


guard = Guard()  # E: [abstract] Cannot instantiate abstract class "Guard" with abstract attribute "before_model"
