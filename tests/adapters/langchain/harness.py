"""The LangChain harness: a scenario's agent as a LangChain 1.x ``create_agent`` graph
guarded by ``hookline_middleware``, on a fake chat model, offline."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from hooks import Decision
from runner.adapters.langchain import hookline_middleware, resume_value
from tests.adapters.harness import AgentSpec, ModelDown, Report, Turn

__all__ = ["FakeModel", "LangChainHarness", "answers", "build", "tool"]

_ANY_ARGS: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}


class FakeModel(GenericFakeChatModel):
    """LangChain's ``GenericFakeChatModel`` answering scripted messages, raising scripted
    errors, and taking tools (it answers the same whatever they are)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> FakeModel:
        """The model itself: its answers do not depend on the tools."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        item = next(self.messages)
        assert isinstance(item, AIMessage)
        error = item.response_metadata.get("scenario_error")
        if error is not None:
            raise ModelDown(error)
        return ChatResult(generations=[ChatGeneration(message=item)])


def answers(turns: Sequence[Turn]) -> Iterator[AIMessage | str]:
    """The turns as messages; an error turn is one the model raises ``ModelDown`` for."""
    for turn in turns:
        if turn.error is not None:
            yield AIMessage("", response_metadata={"scenario_error": turn.error})
        else:
            calls = [
                {"name": c.name, "args": dict(c.args), "id": c.id, "type": "tool_call"}
                for c in turn.calls
            ]
            yield AIMessage(turn.text, tool_calls=calls)


def tool(name: str, fn: Callable[..., str]) -> BaseTool:
    return StructuredTool(
        name=name,
        description=f"the scenario's {name} tool",
        args_schema=dict(_ANY_ARGS),
        func=fn,
    )


def build(spec: AgentSpec, callbacks: Sequence[object]) -> Any:
    """The agent of ``spec`` with ``callbacks`` guarding it and each of its sub-agents."""
    tools = [tool(name, fn) for name, fn in spec.tools.items()]
    for sub in spec.sub_agents:
        tools.append(_sub_agent(sub, callbacks))
    return create_agent(
        FakeModel(messages=answers(spec.turns)),
        tools=tools,
        middleware=[hookline_middleware(callbacks, name=spec.name)],
        checkpointer=InMemorySaver(),
    )


def _sub_agent(spec: AgentSpec, callbacks: Sequence[object]) -> BaseTool:
    agent = build(spec, callbacks)
    threads = itertools.count(1)

    def ask(request: str) -> str:
        config = {"configurable": {"thread_id": f"{spec.name}-{next(threads)}"}}
        state = agent.invoke({"messages": [{"role": "user", "content": request}]}, config)
        return str(state["messages"][-1].content)

    return StructuredTool.from_function(
        ask, name=spec.name, description=f"the {spec.name} sub-agent"
    )


def _report(state: Mapping[str, Any], handle: object) -> Report:
    messages = state["messages"]
    results = tuple((str(m.name), str(m.content)) for m in messages if isinstance(m, ToolMessage))
    if state.get("__interrupt__"):
        return Report("paused", "", results, handle)
    return Report("done", str(messages[-1].content), results, handle)


class LangChainHarness:
    """Runs a scenario on a LangChain agent built by ``build``."""

    framework = "LangChain"
    cannot: Mapping[str, str] = MappingProxyType({})

    def __init__(self) -> None:
        self._threads = itertools.count(1)

    def run(self, agent: AgentSpec, message: str, callbacks: Sequence[object]) -> Report:
        """Invoke a fresh agent on a fresh thread."""
        graph = build(agent, callbacks)
        config = {"configurable": {"thread_id": f"run-{next(self._threads)}"}}
        state = graph.invoke({"messages": [{"role": "user", "content": message}]}, config)
        return _report(state, (graph, config))

    def resume(self, report: Report, decision: Decision) -> Report:
        """Resume the interrupted thread with ``decision`` as the interrupt's answer."""
        handle = report.handle
        assert isinstance(handle, tuple)
        graph, config = handle
        state = graph.invoke(Command(resume=resume_value(decision)), config)
        return _report(state, (graph, config))
