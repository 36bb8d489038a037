"""``Halt`` from ``before_model`` must carry a ``ModelResponse``."""

from typing_extensions import override

import hooks
from hooks import Halt, ModelContext, ModelResponse


class Guard(hooks.BeforeModel):
    @override
    def before_model(self, ctx: ModelContext) -> hooks.BeforeResult[ModelContext, ModelResponse]:
        return Halt("blocked")  # E: [arg-type] Argument 1 to "Halt" has incompatible type "str"; expected "ModelResponse"
