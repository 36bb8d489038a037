"""hookline_middleware's own rules: what it refuses, and the points the scenarios leave out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from hooks import (
    AgentContext,
    Approve,
    Cont,
    Edit,
    Failure,
    Halt,
    HookEvent,
    InvalidCallbacks,
    ModelContext,
    ModelResponse,
    Outcome,
    Reject,
    Respond,
    Retry,
    Success,
    ToolContext,
    ToolResult,
)
from runner.adapters.langchain import hookline_middleware, resume_value
from tests.adapters.harness import AgentSpec, Call, ModelDown, ToolFailed, Turn
from tests.adapters.langchain.harness import build


def _invoke(spec: AgentSpec, callbacks: list[object], content: Any = "hi") -> dict[str, Any]:
    agent = build(spec, callbacks)
    state: dict[str, Any] = agent.invoke(
        {"messages": [HumanMessage(content)]}, {"configurable": {"thread_id": "t"}}
    )
    return state


def test_max_attempts_and_name_are_checked() -> None:
    """max_attempts below 1 is a ValueError; an empty name a TypeError."""
    with pytest.raises(ValueError, match="max_attempts must be an int >= 1, got 0"):
        hookline_middleware([], max_attempts=0)
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        hookline_middleware([], name="")


def test_an_async_hook_in_a_sync_invoke_is_invalid_callbacks() -> None:
    """An agent run with invoke cannot await a hook: InvalidCallbacks before the call runs."""

    class Slow:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            return Cont(ctx)

    ran: list[str] = []

    def tool() -> str:
        ran.append("t")
        return "t"

    spec = AgentSpec("a", (Turn(calls=(Call("t", {}, "c1"),)), Turn(text="x")), {"t": tool})
    with pytest.raises(InvalidCallbacks, match="before_tool is async"):
        _invoke(spec, [Slow()])
    assert ran == []


async def _ainvoke(spec: AgentSpec, callbacks: list[object], config: Any = None) -> Any:
    agent = build(spec, callbacks)
    config = config or {"configurable": {"thread_id": "t"}}
    return await agent.ainvoke({"messages": [HumanMessage("hi")]}, config), agent, config


def test_async_hooks_guard_an_ainvoke_run() -> None:
    """Under ainvoke: an async before_tool halts, an async wrap calls next twice, an async
    observer is told, an async on_model_error falls back."""
    told: list[tuple[str, str]] = []

    class Guard:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
            if ctx.call.name == "rm":
                return Halt(ToolResult("refused", is_error=True))
            return Cont(ctx)

        async def wrap_tool(
            self,
            ctx: ToolContext,
            call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
            /,
        ) -> Outcome[ToolResult]:
            await call_next(ctx)
            return await call_next(ctx)

        async def on_event(self, event: HookEvent, /) -> None:
            told.append((event.point, event.outcome))

    ran: list[str] = []

    def tool(name: str) -> Callable[[], str]:
        def run() -> str:
            ran.append(name)
            return name

        return run

    spec = AgentSpec(
        "a",
        (
            Turn(calls=(Call("rm", {}, "c1"), Call("ls", {}, "c2"))),
            Turn(text="listed"),
        ),
        {"rm": tool("rm"), "ls": tool("ls")},
    )
    state, _, _ = asyncio.run(_ainvoke(spec, [Guard()]))
    assert state["messages"][-1].content == "listed"
    assert ran == ["ls", "ls"]
    assert ("before_tool", "halt") in told
    assert ("wrap_tool", "success") in told


def test_an_async_fallback_stands_in_for_a_failed_model_call() -> None:
    """An async on_model_error's Fallback is the answer of an ainvoke run."""

    class Fallback:
        async def on_model_error(self, failure: Failure[Exception], ctx: ModelContext, /) -> Any:
            from hooks import Fallback as Stand

            return Stand(ModelResponse(text="fallback"))

    state, _, _ = asyncio.run(_ainvoke(AgentSpec("a", (Turn(error="down"),)), [Fallback()]))
    assert state["messages"][-1].content == "fallback"


def test_an_ainvoke_run_pauses_and_resumes() -> None:
    """An async guard's Pause interrupts an ainvoke run; resumed, the call runs with Edit's args."""
    from langgraph.types import Command

    decisions: list[object] = []

    class Ask:
        async def before_tool(self, ctx: ToolContext, /) -> Any:
            from hooks import Pause

            decisions.append(ctx.decision)
            return Pause("ok?") if ctx.decision is None else Cont(ctx)

    ran: list[object] = []

    def pay(**args: object) -> str:
        ran.append(args)
        return "paid"

    spec = AgentSpec(
        "a", (Turn(calls=(Call("pay", {"amount": 5}, "c1"),)), Turn(text="done")), {"pay": pay}
    )

    async def go() -> Any:
        state, agent, config = await _ainvoke(spec, [Ask()])
        assert state["__interrupt__"]
        resume: Command[Any] = Command(resume=resume_value(Edit({"amount": 1})))
        return await agent.ainvoke(resume, config)

    state = asyncio.run(go())
    assert state["messages"][-1].content == "done"
    assert ran == [{"amount": 1}]
    assert decisions == [None, Edit({"amount": 1})]


def test_a_misspelled_hook_is_refused_at_construction() -> None:
    """The list is validated as a Runner validates it: before_tol is InvalidCallbacks."""

    class Typo:
        def before_tol(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            return Cont(ctx)

    with pytest.raises(InvalidCallbacks, match="before_tool"):
        hookline_middleware([Typo()])


@pytest.mark.parametrize("decision", [Approve(), Edit({"a": 1}), Reject("no")])
def test_resume_value_is_a_plain_dict(decision: Approve | Edit | Reject) -> None:
    """Each decision becomes a dict a checkpointer can store."""
    value = resume_value(decision)
    assert isinstance(value, dict)
    assert value["decision"] == type(decision).__name__.lower()


def test_resume_value_refuses_what_a_tool_call_cannot_take() -> None:
    """Respond answers an MCP question, not a paused call: TypeError."""
    with pytest.raises(TypeError, match="resume_value takes Approve"):
        resume_value(Respond({"answer": "x"}))


def test_resuming_with_something_else_is_a_type_error() -> None:
    """Command(resume=...) must carry resume_value(...): anything else is refused."""
    from langgraph.types import Command

    class Ask:
        def before_tool(self, ctx: ToolContext, /) -> Any:
            from hooks import Pause

            return Pause("ok?")

    spec = AgentSpec("a", (Turn(calls=(Call("t", {}, "c1"),)), Turn(text="x")), {"t": lambda: "t"})
    agent = build(spec, [Ask()])
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [HumanMessage("go")]}, config)
    with pytest.raises(TypeError, match="resume_value"):
        agent.invoke(Command(resume="yes"), config)


def test_a_content_block_hooks_cannot_see_is_refused_not_dropped() -> None:
    """An image block in a message is a TypeError when a model hook would receive it."""

    class Look:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            return Cont(ctx)

    image = [{"type": "image", "url": "https://example.invalid/x.png"}]
    with pytest.raises(TypeError, match="'image' content block"):
        _invoke(AgentSpec("a", (Turn(text="x"),)), [Look()], content=image)


def test_before_model_halt_answers_without_the_model() -> None:
    """A Halt at before_model is the answer; the fake model's script is never read."""

    class Stop:
        def before_model(self, ctx: ModelContext, /) -> Halt[ModelResponse]:
            return Halt(ModelResponse(text="halted"))

    state = _invoke(AgentSpec("a", ()), [Stop()])
    assert state["messages"][-1].content == "halted"


def test_before_model_sees_the_conversation_and_may_rewrite_it() -> None:
    """The model hook sees the user's text; a changed request is what the model gets."""
    seen: list[str] = []

    class Shout:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            seen.append(ctx.request.messages[-1].content)
            messages = [replace(m, content=m.content.upper()) for m in ctx.request.messages]
            return Cont(replace(ctx, request=replace(ctx.request, messages=messages)))

    state = _invoke(AgentSpec("a", (Turn(text="ok"),)), [Shout()], content="hello")
    assert seen == ["hello"]
    assert state["messages"][-1].content == "ok"


def test_after_model_replaces_the_answer() -> None:
    """after_model's changed outcome is the AI message the agent keeps."""

    class Polite:
        def after_model(
            self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
        ) -> Outcome[ModelResponse]:
            match outcome:
                case Success(response):
                    return Success(replace(response, text=response.text + ", please"))
            return outcome

    state = _invoke(AgentSpec("a", (Turn(text="sit"),)), [Polite()])
    assert state["messages"][-1].content == "sit, please"


def test_after_agent_replaces_the_final_answer() -> None:
    """after_agent's changed outcome replaces the run's last AI message in place."""

    class Sign:
        def after_agent(
            self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
        ) -> Outcome[ModelResponse]:
            match outcome:
                case Success(response):
                    return Success(replace(response, text=response.text + " -- bot"))
            return outcome

    state = _invoke(AgentSpec("a", (Turn(text="done"),)), [Sign()])
    assert [m.content for m in state["messages"]] == ["hi", "done -- bot"]


def test_an_unrecovered_model_error_is_raised() -> None:
    """No error hook recovers: the model's own exception reaches the caller."""

    class Looks:
        def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> Failure[Exception]:
            return failure

    with pytest.raises(ModelDown, match="down"):
        _invoke(AgentSpec("a", (Turn(error="down"),)), [Looks()])


def test_a_retry_past_max_attempts_leaves_the_failure_as_an_error_result() -> None:
    """Retry is honoured while ctx.attempt < max_attempts; then the tool's error is the result."""
    attempts: list[int] = []

    class Again:
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> Retry[ToolContext]:
            attempts.append(ctx.attempt)
            return Retry(ctx)

    def broken() -> str:
        raise ToolFailed("still broken")

    spec = AgentSpec("a", (Turn(calls=(Call("b", {}, "c1"),)), Turn(text="gave up")), {"b": broken})
    state = _invoke(spec, [Again()])
    assert attempts == [1, 2, 3]
    tool = state["messages"][2]
    assert (tool.content, tool.status) == ("ToolFailed: still broken", "error")


def test_a_raising_observer_is_logged_and_the_run_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    """An observer that raises never changes the run; its error is logged."""

    class Broken:
        def on_event(self, event: HookEvent, /) -> None:
            raise RuntimeError("observer down")

    with caplog.at_level(logging.ERROR, logger="hookline.adapters.langchain"):
        state = _invoke(AgentSpec("a", (Turn(text="fine"),)), [Broken()])
    assert state["messages"][-1].content == "fine"
    assert "observer" in caplog.text


def test_a_halted_tool_result_reads_as_an_error() -> None:
    """A Halt with an error ToolResult is a ToolMessage with status error."""

    class No:
        def before_tool(self, ctx: ToolContext, /) -> Halt[ToolResult]:
            return Halt(ToolResult("no", is_error=True))

    spec = AgentSpec("a", (Turn(calls=(Call("t", {}, "c1"),)), Turn(text="ok")), {"t": lambda: "t"})
    state = _invoke(spec, [No()])
    assert (state["messages"][2].content, state["messages"][2].status) == ("no", "error")


def test_pauses_never_resumed_are_forgotten_past_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A middleware keeps the questions of at most _RUNS_KEPT paused calls, newest kept."""
    from runner.adapters.langchain import _middleware

    monkeypatch.setattr(_middleware, "_RUNS_KEPT", 2)

    class Ask:
        def before_tool(self, ctx: ToolContext, /) -> Any:
            from hooks import Pause

            return Pause("ok?")

    middleware = hookline_middleware([Ask()])  # one middleware, three paused threads
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.adapters.langchain.harness import FakeModel, answers, tool

    for thread in range(3):
        turns = (Turn(calls=(Call("t", {}, f"c{thread}"),)), Turn(text="x"))
        agent = create_agent(
            FakeModel(messages=answers(turns)),
            tools=[tool("t", lambda: "t")],
            middleware=[middleware],
            checkpointer=InMemorySaver(),
        )
        config: Any = {"configurable": {"thread_id": str(thread)}}
        state = agent.invoke({"messages": [HumanMessage("go")]}, config)
        assert state["__interrupt__"]
    assert [call for _, call in middleware._paused] == ["c1", "c2"]


def test_decisions_are_span_events_naming_the_deciding_callback() -> None:
    """Inside a recording OpenTelemetry span, each dispatch is a hookline.hook event; the
    halted tool call's names the guard (no observer needed)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    class No:
        def before_tool(self, ctx: ToolContext, /) -> Halt[ToolResult]:
            return Halt(ToolResult("no", is_error=True))

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spec = AgentSpec("a", (Turn(calls=(Call("t", {}, "c1"),)), Turn(text="ok")), {"t": lambda: "t"})
    with provider.get_tracer("test").start_as_current_span("agent"):
        _invoke(spec, [No()])
    (span,) = exporter.get_finished_spans()
    hooks = [dict(e.attributes or {}) for e in span.events if e.name == "hookline.hook"]
    (halted,) = [h for h in hooks if h["hookline.hook.tag"] == "halt"]
    assert halted["hookline.hook.point"] == "before_tool"
    assert halted["gen_ai.tool.name"] == "t"
    assert halted["hookline.attempt"] == 1
    assert str(halted["hookline.hook.callback"]).endswith("No instance")
