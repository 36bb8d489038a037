"""The LangChain middleware at its edges: agent hooks matched to another agent, runs
without a user message, a rejected call under ainvoke, the message cache starting over,
and a model handler answering other than one AIMessage."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents.middleware import ModelResponse as LCModelResponse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.types import Command

from hooks import (
    AgentContext,
    Cont,
    Failure,
    ModelContext,
    ModelResponse,
    Outcome,
    Pause,
    Reject,
    ToolContext,
    matched,
)
from runner.adapters.langchain import _middleware, resume_value
from tests.adapters.harness import AgentSpec, Call, Turn
from tests.adapters.langchain.harness import build

_CONFIG: Any = {"configurable": {"thread_id": "t"}}


class _AgentHooks:
    """Agent hooks that record being called and would change the run if they ran."""

    def __init__(self) -> None:
        self.called: list[str] = []

    def before_agent(self, ctx: AgentContext, /) -> Cont[AgentContext]:
        self.called.append("before_agent")
        return Cont(ctx)

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Outcome[ModelResponse]:
        self.called.append("after_agent")
        return Failure(PermissionError("after_agent ran"))


def test_agent_hooks_matched_to_another_agent_leave_the_run_alone() -> None:
    """Agent hooks placed for another agent's runs are not called in this agent's run."""
    hooks = _AgentHooks()
    agent = build(AgentSpec("a", (Turn(text="fine"),)), [matched(hooks, agents="other")])
    state = agent.invoke({"messages": [HumanMessage("hi")]}, _CONFIG)
    assert [m.content for m in state["messages"]] == ["hi", "fine"]
    assert hooks.called == []


def test_a_run_without_a_user_message_passes_the_agent_hooks_by() -> None:
    """Agent hooks see the run's user message; a run that holds none is not theirs to
    judge, and the model still answers."""
    hooks = _AgentHooks()
    agent = build(AgentSpec("a", (Turn(text="fine"),)), [hooks])
    state = agent.invoke({"messages": [SystemMessage("be brief")]}, _CONFIG)
    assert state["messages"][-1].content == "fine"
    assert hooks.called == []


def test_async_a_rejected_call_answers_with_the_rejection_and_never_runs() -> None:
    """Under ainvoke: a call paused and resumed with Reject(message) is answered with the
    message as an error; the tool does not run."""
    ran: list[object] = []

    class Ask:
        async def before_tool(self, ctx: ToolContext, /) -> Any:
            return Pause("ok?") if ctx.decision is None else Cont(ctx)

    def pay(**args: object) -> str:
        ran.append(args)
        return "paid"

    turns = (Turn(calls=(Call("pay", {"amount": 5}, "c1"),)), Turn(text="done"))
    agent = build(AgentSpec("a", turns, {"pay": pay}), [Ask()])

    async def go() -> Any:
        paused = await agent.ainvoke({"messages": [HumanMessage("hi")]}, _CONFIG)
        assert paused["__interrupt__"]
        return await agent.ainvoke(Command(resume=resume_value(Reject("not today"))), _CONFIG)

    state = asyncio.run(go())
    (result,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert (result.content, result.status) == ("not today", "error")
    assert ran == []


def test_the_message_cache_starts_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the cache's size the converted messages are dropped and converted again: the
    hooks still see every message as it is."""
    monkeypatch.setattr(_middleware, "_MESSAGES_KEPT", 1)
    seen: list[list[str]] = []

    class Look:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            seen.append([m.content for m in ctx.request.messages])
            return Cont(ctx)

    turns = (Turn(calls=(Call("t", {}, "c1"),)), Turn(text="done"))
    state = build(AgentSpec("a", turns, {"t": lambda: "tool said"}), [Look()]).invoke(
        {"messages": [HumanMessage("hi")]}, _CONFIG
    )
    assert seen == [["hi"], ["hi", "", "tool said"]]
    assert state["messages"][-1].content == "done"


@pytest.mark.parametrize(
    "result",
    [
        [AIMessage("a"), AIMessage("b")],
        [AIMessage("a"), ToolMessage("t", tool_call_id="c1")],
        [HumanMessage("h")],
        [],
    ],
)
def test_a_handler_answering_other_than_one_ai_message_is_refused(result: list[Any]) -> None:
    """Model hooks take one AIMessage per model call; anything else raises, naming what
    the handler answered."""
    names = ", ".join(repr(type(m).__name__) for m in result)
    with pytest.raises(TypeError, match=rf"one AIMessage per model call; .* answered \[{names}\]"):
        _middleware._answer(LCModelResponse(result=result), {})
