"""A callback module: one plain function with the ``wrap_model`` signature."""

from collections.abc import Callable

from hooks import ModelContext, ModelResponse, Outcome


def wrap_model(
    ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]]
) -> Outcome[ModelResponse]:
    return call_next(ctx)
