"""The pydantic-ai harness: a scenario's agent as a pydantic-ai ``Agent`` guarded by
``HooklineCapability``, its model pydantic-ai's own ``FunctionModel``, offline."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pydantic_ai import Agent, AgentRunResult, RunContext, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from hooks import Decision
from runner.adapters.pydantic_ai import HooklineCapability, deferred_results
from tests.adapters.harness import AgentSpec, ModelDown, Report, Turn

__all__ = ["PydanticAIHarness", "build_agent"]

# Any JSON object: the scenarios' tools take keyword arguments of any name.
_ANY_ARGS: Mapping[str, object] = MappingProxyType(
    {"type": "object", "properties": {}, "additionalProperties": True}
)
_REQUEST: Mapping[str, object] = MappingProxyType(
    {"type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"]}
)


def _model(name: str, turns: Sequence[Turn]) -> FunctionModel:
    """A model answering ``turns`` in order; asked once more than that, it fails the run."""
    answers: Iterator[Turn] = iter(turns)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = next(answers, None)
        if turn is None:
            msg = f"{name}'s model was asked more often than its {len(turns)} turn(s)"
            raise AssertionError(msg)
        if turn.error is not None:
            raise ModelDown(turn.error)
        parts: list[TextPart | ToolCallPart] = [TextPart(turn.text)] if turn.text else []
        parts.extend(ToolCallPart(c.name, dict(c.args), tool_call_id=c.id) for c in turn.calls)
        return ModelResponse(parts=parts)

    return FunctionModel(answer, model_name=name)


def build_agent(spec: AgentSpec, callbacks: Sequence[object]) -> Agent[None, Any]:
    """``spec`` as a pydantic-ai agent guarded by ``callbacks``; its sub-agents are tools
    that run them (guarded by the same callbacks) and answer with their final text."""
    tools: list[Tool[Any]] = [
        Tool.from_schema(fn, name=name, description=name, json_schema=dict(_ANY_ARGS))
        for name, fn in spec.tools.items()
    ]
    tools.extend(_sub_agent(sub, callbacks) for sub in spec.sub_agents)
    return Agent(
        _model(spec.name, spec.turns),
        name=spec.name,
        tools=tools,
        capabilities=[HooklineCapability(callbacks, max_attempts=3)],
        output_type=[str, DeferredToolRequests],
    )


def _sub_agent(spec: AgentSpec, callbacks: Sequence[object]) -> Tool[Any]:
    agent = build_agent(spec, callbacks)

    async def run(ctx: RunContext[Any], request: str) -> str:
        result = await agent.run(request, usage=ctx.usage)
        output = result.output
        if not isinstance(output, str):
            msg = f"the sub-agent {spec.name} paused: the scenarios do not pause in one"
            raise TypeError(msg)
        return output

    return Tool.from_schema(
        run, name=spec.name, description=spec.name, json_schema=dict(_REQUEST), takes_ctx=True
    )


@dataclass(frozen=True)
class _Paused:
    """A paused run: its agent, its messages, the one call waiting for a decision."""

    agent: Agent[None, Any]
    messages: list[ModelMessage]
    call_id: str


def _report(agent: Agent[None, Any], result: AgentRunResult[Any]) -> Report:
    results = tuple(
        (part.tool_name, part.model_response_str())
        for message in result.new_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    )
    output: object = result.output
    if isinstance(output, DeferredToolRequests):
        (call,) = output.approvals
        return Report(
            "paused", "", results, _Paused(agent, result.all_messages(), call.tool_call_id)
        )
    assert isinstance(output, str)
    return Report("done", output, results)


class PydanticAIHarness:
    """Runs a scenario's agent on pydantic-ai with ``HooklineCapability`` guarding it."""

    framework = "pydantic-ai"
    cannot: Mapping[str, str] = MappingProxyType({})

    def run(self, agent: AgentSpec, message: str, callbacks: Sequence[object]) -> Report:
        """Run ``agent`` on ``message`` to its end or its first pause."""
        built = build_agent(agent, callbacks)
        return _report(built, built.run_sync(message))

    def resume(self, report: Report, decision: Decision) -> Report:
        """Answer the paused call with ``decision`` (pydantic-ai's deferred tool results)."""
        paused = report.handle
        assert isinstance(paused, _Paused)
        results = deferred_results({paused.call_id: decision})
        resumed = paused.agent.run_sync(
            message_history=paused.messages, deferred_tool_results=results
        )
        earlier = report.tool_results
        done = _report(paused.agent, resumed)
        return Report(done.status, done.text, earlier + done.tool_results, done.handle)
