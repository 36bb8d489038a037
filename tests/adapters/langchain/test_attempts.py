"""The LangChain middleware's attempts: a Retry whose changed call the before hooks answer
(the tool not run again), in both forms; the async form with an async tool, which LangChain
runs through the middleware's async wrap."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from hooks import Cont, Failure, Fallback, Halt, HookEvent, Retry, ToolContext, ToolResult
from runner.adapters.langchain import hookline_middleware
from tests.adapters.harness import AgentSpec, Call, ToolFailed, Turn
from tests.adapters.langchain.harness import FakeModel, answers, build

_TURNS = (Turn(calls=(Call("t", {"n": 1}, "c1"),)), Turn(text="done"))
_CONFIG: Any = {"configurable": {"thread_id": "t"}}


def _retried(ctx: ToolContext) -> Retry[ToolContext]:
    n = ctx.call.args.get("n")
    assert isinstance(n, int)
    return Retry(replace(ctx, call=replace(ctx.call, args={"n": n + 1})))


def _guard(
    seen: list[tuple[object, int]], ctx: ToolContext
) -> Cont[ToolContext] | Halt[ToolResult]:
    seen.append((ctx.call.args.get("n"), ctx.attempt))
    if ctx.call.args.get("n") == 2:
        return Halt(ToolResult("two is answered by the guard"))
    return Cont(ctx)


def _async_agent(ran: list[int], callbacks: list[object]) -> Any:
    """An agent whose one tool ``t`` is async and fails naming its ``n``."""

    async def t(n: int) -> str:
        ran.append(n)
        raise ToolFailed(f"n={n}")

    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    return create_agent(
        FakeModel(messages=answers(_TURNS)),
        tools=[StructuredTool(name="t", description="t", args_schema=schema, coroutine=t)],
        middleware=[hookline_middleware(callbacks, name="a")],
        checkpointer=InMemorySaver(),
    )


def test_a_retried_call_the_guard_answers_ends_with_the_guards_answer() -> None:
    """A Retry that changed the call passes before_tool again; a Halt there is the call's
    result, and the tool does not run again."""
    seen: list[tuple[object, int]] = []
    ran: list[int] = []

    def t(n: int) -> str:
        ran.append(n)
        raise ToolFailed(f"n={n}")

    class Flow:
        def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
            return _guard(seen, ctx)

        def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            return _retried(ctx)

    state = build(AgentSpec("a", _TURNS, {"t": t}), [Flow()]).invoke(
        {"messages": [HumanMessage("hi")]}, _CONFIG
    )
    assert seen == [(1, 1), (2, 2)]
    assert ran == [1]
    assert state["messages"][2].content == "two is answered by the guard"


def test_async_a_retried_call_the_guard_answers_ends_with_the_guards_answer() -> None:
    """The same under ainvoke with an async tool; a sync observer is told of each dispatch."""
    seen: list[tuple[object, int]] = []
    ran: list[int] = []
    told: list[tuple[str, str, int]] = []

    class Flow:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
            return _guard(seen, ctx)

        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            return _retried(ctx)

        def on_event(self, event: HookEvent, /) -> None:
            told.append((event.point, event.outcome, event.attempt))

    agent = _async_agent(ran, [Flow()])
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage("hi")]}, _CONFIG))
    assert seen == [(1, 1), (2, 2)]
    assert ran == [1]
    assert state["messages"][2].content == "two is answered by the guard"
    assert ("on_tool_error", "retry", 1) in told
    assert ("before_tool", "halt", 2) in told


def test_async_a_retry_the_guard_lets_through_runs_the_tool_again() -> None:
    """Under ainvoke with an async tool: a changed Retry the guard lets through runs the
    tool with the new arguments, until the budget ends it and the failure stands."""
    ran: list[int] = []

    class Flow:
        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            return _retried(ctx)

    agent = _async_agent(ran, [Flow()])
    state = asyncio.run(agent.ainvoke({"messages": [HumanMessage("hi")]}, _CONFIG))
    assert ran[:2] == [1, 2]
    assert len(ran) >= 2
    assert state["messages"][2].status == "error"
    assert f"n={ran[-1]}" in state["messages"][2].content


def test_async_error_hooks_fall_back_or_give_up_with_an_async_tool() -> None:
    """Under ainvoke with an async tool: a Fallback is the result; a Failure stands."""

    class Stand:
        def __init__(self, fall_back: bool) -> None:
            self.fall_back = fall_back

        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            return Fallback(ToolResult("stood in")) if self.fall_back else failure

    ran: list[int] = []
    kept = asyncio.run(
        _async_agent(ran, [Stand(fall_back=True)]).ainvoke(
            {"messages": [HumanMessage("hi")]}, _CONFIG
        )
    )
    assert kept["messages"][2].content == "stood in"
    failed = asyncio.run(
        _async_agent(ran, [Stand(fall_back=False)]).ainvoke(
            {"messages": [HumanMessage("hi")]}, _CONFIG
        )
    )
    assert failed["messages"][2].status == "error"
    assert failed["messages"][2].content == "ToolFailed: n=1"
