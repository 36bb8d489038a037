"""A callback module: one plain function with the ``before_model`` signature."""

from hooks import BeforeResult, Cont, ModelContext, ModelResponse


def before_model(ctx: ModelContext) -> BeforeResult[ModelContext, ModelResponse]:
    return Cont(ctx)
