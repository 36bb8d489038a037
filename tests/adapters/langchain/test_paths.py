"""The LangChain middleware's less travelled paths: conversions of every role, raising
hooks and observers, the async error paths, and the agent points' refusals."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from hooks import (
    AgentContext,
    Cont,
    Failure,
    Fallback,
    Halt,
    HookEvent,
    ImagePart,
    ModelContext,
    ModelResponse,
    Outcome,
    Retry,
    ToolContext,
    ToolResult,
)
from runner.adapters.langchain import hookline_middleware
from tests.adapters.harness import AgentSpec, Call, ToolFailed, Turn
from tests.adapters.langchain.harness import FakeModel, answers, build, tool


def _invoke(spec: AgentSpec, callbacks: list[object], content: Any = "hi") -> Any:
    return build(spec, callbacks).invoke(
        {"messages": [HumanMessage(content)]}, {"configurable": {"thread_id": "t"}}
    )


async def _ainvoke(spec: AgentSpec, callbacks: list[object]) -> Any:
    return await build(spec, callbacks).ainvoke(
        {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}}
    )


def _tool_turns(name: str = "t", args: dict[str, object] | None = None) -> tuple[Turn, ...]:
    return (Turn(calls=(Call(name, args or {}, "c1"),)), Turn(text="done"))


def test_a_rewritten_request_of_every_role_reaches_the_model_as_written() -> None:
    """A before_model that rebuilds the request: system, user, assistant tool call and tool
    result all go back to LangChain, each as the hook wrote it."""
    received: list[list[str]] = []

    class Upper:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            messages = tuple(replace(m, content=m.content.upper()) for m in ctx.request.messages)
            return Cont(replace(ctx, request=replace(ctx.request, messages=messages)))

    class Seen(FakeModel):
        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            received.append([f"{type(m).__name__}:{m.content}" for m in messages])
            return super()._generate(messages, stop, run_manager, **kw)

    agent = create_agent(
        Seen(messages=answers(_tool_turns())),
        tools=[tool("t", lambda: "result")],
        system_prompt="be brief",
        middleware=[hookline_middleware([Upper()])],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}})
    assert received[-1] == [
        "SystemMessage:BE BRIEF",
        "HumanMessage:HI",
        "AIMessage:",
        "ToolMessage:RESULT",
    ]


def test_text_blocks_are_read_as_text() -> None:
    """A message of text blocks (dicts and plain strings) is its text joined."""
    seen: list[str] = []

    class Read:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            seen.append(ctx.request.messages[-1].content)
            return Cont(ctx)

    content = [{"type": "text", "text": "two "}, "parts"]
    _invoke(AgentSpec("a", (Turn(text="ok"),)), [Read()], content=content)
    assert seen == ["two parts"]


@pytest.mark.parametrize(
    "response",
    [
        ModelResponse(text="x"),
        ToolResult("y", parts=(ImagePart(data=b"\x89PNG", media_type="image/png"),)),
    ],
    ids=["model", "tool"],
)
def test_a_result_with_parts_is_refused_not_dropped(response: object) -> None:
    """A hook's answer carrying images cannot go to LangChain: TypeError naming parts."""

    class Image:
        def before_tool(self, ctx: ToolContext, /) -> Halt[ToolResult]:
            assert isinstance(response, ToolResult)
            return Halt(response)

        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            if isinstance(response, ModelResponse):
                part = ImagePart(data=b"\x89PNG", media_type="image/png")
                message = replace(ctx.request.messages[-1], parts=(part,))
                messages = (*ctx.request.messages[:-1], message)
                return Cont(replace(ctx, request=replace(ctx.request, messages=messages)))
            return Cont(ctx)

    spec = AgentSpec("a", _tool_turns(), {"t": lambda: "t"})
    with pytest.raises(TypeError, match="parts"):
        _invoke(spec, [Image()])


def test_a_raising_hook_propagates_and_observers_are_told() -> None:
    """A before_tool that raises: the error reaches the caller, observers see "raised"."""
    told: list[tuple[str, str]] = []

    class Boom:
        def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            raise LookupError("boom")

        def on_event(self, event: HookEvent, /) -> None:
            told.append((event.point, event.outcome))

    with pytest.raises(LookupError, match="boom"):
        _invoke(AgentSpec("a", _tool_turns(), {"t": lambda: "t"}), [Boom()])
    assert ("before_tool", "raised") in told


def test_an_async_observer_in_a_sync_run_is_told() -> None:
    """An async def on_event in an invoke run runs to its end, as it awaits nothing."""
    told: list[str] = []

    class Seen:
        async def on_event(self, event: HookEvent, /) -> None:
            told.append(event.point)

    _invoke(AgentSpec("a", _tool_turns(), {"t": lambda: "t"}), [Seen()])
    assert "wrap_tool" in told


def test_an_async_observer_that_waits_in_a_sync_run_is_logged() -> None:
    """An async observer that awaits the loop cannot run in a sync run: logged, run goes on."""

    class Waits:
        async def on_event(self, event: HookEvent, /) -> None:
            await asyncio.sleep(0)

    state = _invoke(AgentSpec("a", (Turn(text="fine"),)), [Waits()])
    assert state["messages"][-1].content == "fine"


def test_async_paths_raise_retry_fall_back_and_halt(caplog: pytest.LogCaptureFixture) -> None:
    """Under ainvoke: a raising hook is told and raised; a changed Retry passes before_tool
    again; a halt answers; an observer that raises is logged."""
    told: list[tuple[str, str, int]] = []
    guarded: list[dict[str, object]] = []

    class Flow:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
            guarded.append(dict(ctx.call.args))
            if ctx.call.args.get("n") == 3:
                return Halt(ToolResult("three is refused", is_error=True))
            return Cont(ctx)

        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            n = ctx.call.args.get("n")
            assert isinstance(n, int)
            return Retry(replace(ctx, call=replace(ctx.call, args={"n": n + 1})))

        async def on_event(self, event: HookEvent, /) -> None:
            told.append((event.point, event.outcome, event.attempt))
            raise RuntimeError("observer down")

    def t(n: int) -> str:
        raise ToolFailed(f"n={n}")

    spec = AgentSpec("a", _tool_turns("t", {"n": 1}), {"t": t})
    with caplog.at_level(logging.ERROR, logger="hookline.adapters.langchain"):
        state = asyncio.run(_ainvoke(spec, [Flow()]))
    assert guarded == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert state["messages"][2].content == "three is refused"
    assert ("on_tool_error", "retry", 2) in told
    assert "observer down" in caplog.text

    class Boom:
        async def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            raise LookupError("async boom")

        async def on_event(self, event: HookEvent, /) -> None:
            told.append((event.point, event.outcome, event.attempt))

    with pytest.raises(LookupError, match="async boom"):
        asyncio.run(_ainvoke(AgentSpec("a", (Turn(text="x"),)), [Boom()]))
    assert ("before_model", "raised", 1) in told


def test_async_error_hooks_fall_back_or_give_up() -> None:
    """Under ainvoke: a Fallback is the tool's result; a Failure leaves the error result."""

    class Stand:
        async def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Any:
            if ctx.call.name == "a":
                return Fallback(ToolResult("stood in"))
            return failure

    def broken() -> str:
        raise ToolFailed("broken")

    turns = (Turn(calls=(Call("a", {}, "c1"), Call("b", {}, "c2"))), Turn(text="done"))
    state = asyncio.run(_ainvoke(AgentSpec("x", turns, {"a": broken, "b": broken}), [Stand()]))
    results = {m.name: m.content for m in state["messages"] if m.type == "tool"}
    assert results == {"a": "stood in", "b": "ToolFailed: broken"}


def test_no_hooks_at_a_point_leave_the_call_alone_in_both_forms() -> None:
    """Callbacks without tool or model points: the agent runs as without the middleware."""

    class AgentOnly:
        def before_agent(self, ctx: AgentContext, /) -> Cont[AgentContext]:
            return Cont(ctx)

    spec = AgentSpec("a", _tool_turns(), {"t": lambda: "t"})
    assert _invoke(spec, [AgentOnly()])["messages"][-1].content == "done"
    spec = AgentSpec("a", _tool_turns(), {"t": lambda: "t"})
    assert asyncio.run(_ainvoke(spec, [AgentOnly()]))["messages"][-1].content == "done"


def test_async_before_model_halt_answers() -> None:
    """Under ainvoke, before_model's Halt is the answer."""

    class Stop:
        async def before_model(self, ctx: ModelContext, /) -> Halt[ModelResponse]:
            return Halt(ModelResponse(text="halted"))

    state = asyncio.run(_ainvoke(AgentSpec("a", ()), [Stop()]))
    assert state["messages"][-1].content == "halted"


def test_before_agent_rewrites_the_message_and_after_agent_may_fail() -> None:
    """before_agent's changed message replaces the user's; after_agent's Failure is raised."""

    class Agent:
        def before_agent(self, ctx: AgentContext, /) -> Cont[AgentContext]:
            message = replace(ctx.message, content=ctx.message.content + "!")
            return Cont(replace(ctx, message=message))

        def after_agent(
            self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
        ) -> Outcome[ModelResponse]:
            assert ctx.message.content == "hi!"
            return Failure(PermissionError("not this answer"))

    with pytest.raises(PermissionError, match="not this answer"):
        _invoke(AgentSpec("a", (Turn(text="x"),)), [Agent()])


def test_after_agent_keeping_the_answer_changes_nothing() -> None:
    """An after_agent that returns the outcome it got leaves the messages as they were."""

    class Keep:
        def after_agent(
            self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
        ) -> Outcome[ModelResponse]:
            return outcome

    state = _invoke(AgentSpec("a", (Turn(text="same"),)), [Keep()])
    assert [m.content for m in state["messages"]] == ["hi", "same"]
