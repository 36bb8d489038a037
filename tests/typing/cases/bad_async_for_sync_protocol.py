"""An async method cannot satisfy the sync protocol: its twin is AsyncBeforeModel."""

from typing_extensions import override

import hooks
from hooks import Cont, ModelContext, ModelResponse


class Guard(hooks.BeforeModel):
    @override
    async def before_model(self, ctx: ModelContext) -> hooks.BeforeResult[ModelContext, ModelResponse]:  # E: [override] Return type "Coroutine[Any, Any, Cont[ModelContext] | Halt[ModelResponse]]" of "before_model" incompatible with return type "Cont[ModelContext] | Halt[ModelResponse]" in supertype
        return Cont(ctx)
