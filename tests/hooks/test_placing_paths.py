"""Placing's less travelled paths: gates of every kind (sync and async), agent and
argument matches together, gates on observers, a gate's memory, the reprs."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

import pytest
from returns.result import Failure, Success

from hooks import (
    AFTER_TOOL,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_TOOL_ERROR,
    WRAP_TOOL,
    CallState,
    Cont,
    ErrorResult,
    HookEvent,
    Invocation,
    Match,
    ModelContext,
    ModelRequest,
    Outcome,
    Retry,
    StateKey,
    ToolAnnotations,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    arun_after,
    arun_before,
    arun_on_error,
    arun_wrap,
    audit,
    compile_callbacks,
    guard,
    matched,
    run_after,
    run_before,
    run_on_error,
    run_wrap,
    shadow,
)
from hooks._placing import _REMEMBERED, _remembered


def tool_ctx(tool: str = "search", agent: str = "a", **args: object) -> ToolContext:
    tools = {name: ToolInfo(name) for name in ("search", "delete")}
    return ToolContext(Invocation("r", agent, agent, tools=tools), ToolCall("c", tool, dict(args)))


class Sync:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        self.log.append("before")
        return Cont(ctx)

    def after_tool(self, outcome: Outcome[ToolResult], ctx: ToolContext, /) -> Outcome[ToolResult]:
        self.log.append("after")
        return Success(ToolResult("after"))

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        self.log.append("error")
        return Retry(ctx)

    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        self.log.append("wrap")
        return call_next(ctx)


class Async:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        self.log.append("before")
        return Cont(ctx)

    async def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Outcome[ToolResult]:
        self.log.append("after")
        return Success(ToolResult("after"))

    async def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        self.log.append("error")
        return Retry(ctx)

    async def wrap_tool(
        self,
        ctx: ToolContext,
        call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
        /,
    ) -> Outcome[ToolResult]:
        self.log.append("wrap")
        return await call_next(ctx)


@pytest.mark.parametrize("fits", [True, False], ids=["matches", "does not"])
def test_sync_gates_of_every_kind(fits: bool) -> None:
    """Before, after, error and wrap gates ask the match; one that does not fit hands the
    call on as it came (the context, the outcome, the failure, call_next's outcome)."""
    log: list[str] = []
    callbacks = [matched(Sync(log), tools="search", args=lambda args: args.get("q") == "x")]
    ctx = tool_ctx(q="x" if fits else "y")
    given = Success(ToolResult("given"))
    failure: Failure[Exception] = Failure(RuntimeError("down"))
    assert run_before(callbacks, BEFORE_TOOL, ctx) == Cont(ctx)
    after = run_after(callbacks, AFTER_TOOL, given, ctx)
    error = run_on_error(callbacks, ON_TOOL_ERROR, failure, ctx)
    wrapped = run_wrap(callbacks, WRAP_TOOL, ctx, lambda c: Success(ToolResult("op")))
    assert wrapped == Success(ToolResult("op"))
    if fits:
        assert log == ["before", "after", "error", "wrap"]
        assert after == Success(ToolResult("after"))
        assert error == Retry(ctx)
    else:
        assert log == []
        assert after is given
        assert error is failure


@pytest.mark.parametrize("fits", [True, False], ids=["matches", "does not"])
def test_async_gates_of_every_kind(fits: bool) -> None:
    log: list[str] = []
    callbacks = [matched(Async(log), agents="a*", tools=["search"], args=lambda a: "q" in a)]
    ctx = tool_ctx(agent="alpha" if fits else "beta", q="x")
    given = Success(ToolResult("given"))
    failure: Failure[Exception] = Failure(RuntimeError("down"))

    async def op(c: ToolContext) -> Outcome[ToolResult]:
        return Success(ToolResult("op"))

    async def all_points() -> tuple[object, object, object, object]:
        return (
            await arun_before(callbacks, BEFORE_TOOL, ctx),
            await arun_after(callbacks, AFTER_TOOL, given, ctx),
            await arun_on_error(callbacks, ON_TOOL_ERROR, failure, ctx),
            await arun_wrap(callbacks, WRAP_TOOL, ctx, op),
        )

    before, after, error, wrapped = asyncio.run(all_points())
    assert before == Cont(ctx)
    assert wrapped == Success(ToolResult("op"))
    if fits:
        assert log == ["before", "after", "error", "wrap"]
        assert after == Success(ToolResult("after"))
        assert error == Retry(ctx)
    else:
        assert log == []
        assert after is given
        assert error is failure


def test_an_agent_match_gates_model_points_and_a_context_without_invocation_passes() -> None:
    log: list[str] = []

    class Model:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            log.append(ctx.invocation.agent)
            return Cont(ctx)

    callbacks = [matched(Model(), agents=["helper"])]
    for agent in ("root", "helper"):
        ctx = ModelContext(Invocation("r", agent, agent), ModelRequest(()))
        assert run_before(callbacks, BEFORE_MODEL, ctx) == Cont(ctx)
    assert log == ["helper"]


def test_observers_matched_by_agent_are_told_only_that_agents_events() -> None:
    seen: list[str] = []

    class Sees:
        def on_event(self, event: HookEvent, /) -> None:
            seen.append(event.agent)

    class AsyncSees:
        async def on_event(self, event: HookEvent, /) -> None:
            seen.append(f"async {event.agent}")

    compiled = compile_callbacks([matched(Sees(), agents="a"), matched(AsyncSees(), agents="a")])
    chain = compiled.chain("on_event", "event")
    for agent in ("a", "b"):
        event = HookEvent(
            point="before_tool", agent=agent, branch=agent, outcome="cont", duration=0
        )
        chain.fns[0](event)
        asyncio.run(chain.fns[1](event))
    assert seen == ["a", "async a"]


def test_a_gate_remembers_its_answer_per_tool_and_starts_over_when_full() -> None:
    fits = _remembered(Match(tools="search"))
    search = ToolInfo("search")
    assert fits(search) is True
    assert fits(search) is True  # remembered: the same object
    infos = [ToolInfo(f"t{n}") for n in range(_REMEMBERED + 1)]
    assert not any(map(fits, infos))  # past the size it starts over, still answering right
    assert fits(search) is True


def test_reprs_and_descriptions_name_tier_and_match() -> None:
    def only_x(args: object) -> bool:
        return True

    marks = ToolAnnotations(destructive=True, read_only=False)
    match = Match(
        tools=["fs_*", re.compile("rm")],
        server="notes",
        annotations=marks,
        args=only_x,
        agents="a",
    )
    assert repr(match) == (
        "tools=['fs_*', 'rm'], server=['notes'], annotations=(read_only=False, "
        "destructive=True), args=test_reprs_and_descriptions_name_tier_and_match.<locals>.only_x, "
        "agents=['a']"
    )
    log: list[str] = []
    cb = Sync(log)
    assert repr(guard(cb)).startswith("guard(<")
    assert repr(shadow(cb, tools="x")).endswith(", tools=['x'])")
    assert repr(audit(object())).startswith("audit(<object")  # type: ignore[call-overload]
    assert match.without_agent() is not None
    assert Match(agents="a").without_agent() is None
    assert Match(tools="x").without_tool() is None


def test_a_placed_callback_refuses_a_tier_that_is_none() -> None:
    from hooks import Placed

    with pytest.raises(ValueError, match="a tier is 'guard', 'default', 'audit' or 'shadow'"):
        Placed(object(), "first", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="after= takes a list of callbacks"):
        matched(object(), after=3)  # type: ignore[arg-type]


def test_call_state_contains_tells_keys_apart() -> None:
    state = CallState()
    state.set("name", 1)
    assert "name" in state
    assert StateKey[int]("name") in state
    assert 3 not in state
