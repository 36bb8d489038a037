"""Sync and async wraps subclassing the protocols, dispatched with their types kept."""

import asyncio
import time
from collections.abc import Awaitable, Callable

from returns.result import Failure, Success
from typing_extensions import assert_never, assert_type, override

import hooks
from hooks import (
    WRAP_MODEL,
    WRAP_TOOL,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    ToolCall,
    ToolContext,
    ToolResult,
)


class Timing(hooks.WrapModel, hooks.WrapTool):
    def __init__(self) -> None:
        self.seconds: list[float] = []

    @override
    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]]
    ) -> Outcome[ModelResponse]:
        started = time.perf_counter()
        outcome = call_next(ctx)
        self.seconds.append(time.perf_counter() - started)
        return outcome

    @override
    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]]
    ) -> Outcome[ToolResult]:
        outcome = call_next(ctx)
        match outcome:
            case Success(result):
                return Success(result)
            case Failure(error):
                return Success(ToolResult(str(error), is_error=True))
            case _:
                assert_never(outcome)


class Validate(hooks.AsyncWrapModel):
    @override
    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
    ) -> Outcome[ModelResponse]:
        outcome = await call_next(ctx)
        for _ in range(2):
            if type(outcome) is Success and outcome.unwrap().text:
                break
            outcome = await call_next(ctx)
        return outcome


def generate(ctx: ModelContext) -> Outcome[ModelResponse]:
    return Success(ModelResponse("hi"))


async def agenerate(ctx: ModelContext) -> Outcome[ModelResponse]:
    return Success(ModelResponse("hi"))


def run_tool(ctx: ToolContext) -> Outcome[ToolResult]:
    return Success(ToolResult("2"))


async def main(model_ctx: ModelContext, tool_ctx: ToolContext) -> None:
    sync_wrap: hooks.WrapModel = Timing()
    async_wrap: hooks.AsyncWrapModel = Validate()
    outcome = hooks.run_wrap([sync_wrap], WRAP_MODEL, model_ctx, generate)
    assert_type(outcome, Outcome[ModelResponse])
    tool_outcome = hooks.run_wrap([Timing()], WRAP_TOOL, tool_ctx, run_tool)
    assert_type(tool_outcome, Outcome[ToolResult])
    awaited = await hooks.arun_wrap([async_wrap], WRAP_MODEL, model_ctx, agenerate)
    assert_type(awaited, Outcome[ModelResponse])


invocation = hooks.Invocation("run", "user", "agent")
asyncio.run(
    main(ModelContext(invocation, ModelRequest(())), ToolContext(invocation, ToolCall("1", "add")))
)
