"""A model Retry that leaves the request as it was: the same messages go to the model
again, in sync and async callbacks alike."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from returns.result import Failure

from hooks import ModelContext, Retry
from runner.adapters.pydantic_ai import HooklineCapability


class _Down(RuntimeError):
    pass


class _RetrySame:
    def __init__(self) -> None:
        self.attempts: list[int] = []

    def on_model_error(self, failure: Failure[Exception], ctx: ModelContext, /) -> Any:
        self.attempts.append(ctx.attempt)
        return Retry(ctx)


class _ARetrySame(_RetrySame):
    async def on_model_error(self, failure: Failure[Exception], ctx: ModelContext, /) -> Any:
        return super().on_model_error(failure, ctx)


@pytest.mark.parametrize("hook", [_RetrySame, _ARetrySame])
def test_an_unchanged_model_retry_sends_the_same_messages_again(hook: type[_RetrySame]) -> None:
    """The failed request's messages are what the retried attempt sends."""
    seen: list[list[ModelMessage]] = []
    answers: list[ModelResponse | Exception] = [_Down("503"), ModelResponse([TextPart("ok")])]

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        given = answers.pop(0)
        if isinstance(given, Exception):
            raise given
        return given

    retry = hook()
    agent = Agent(FunctionModel(answer), capabilities=[HooklineCapability([retry])])
    assert agent.run_sync("hi").output == "ok"
    assert retry.attempts == [1]
    assert len(seen) == 2
    assert [m.parts for m in seen[1]] == [m.parts for m in seen[0]]
