"""A callback module: a model-call budget per run, kept in the invocation's state.

``examples.typed_callbacks`` passes this module as a callback and has mypy check it
against ``hooks.BeforeModel``.
"""

from __future__ import annotations

from typing import Final

from hooks import BeforeResult, Cont, Halt, ModelContext, ModelResponse, StateKey

LIMIT: Final = 3
MODEL_CALLS: Final = StateKey[int]("budget.model_calls")


def before_model(ctx: ModelContext) -> BeforeResult[ModelContext, ModelResponse]:
    """Let ``LIMIT`` model calls through per run, then halt every further one."""
    state = ctx.invocation.state
    calls = state.get(MODEL_CALLS, 0) + 1
    state.set(MODEL_CALLS, calls)
    if calls > LIMIT:
        return Halt(ModelResponse(text=f"(stopped: {LIMIT} model calls is this run's budget)"))
    return Cont(ctx)
