"""``CallState``: one call's hooks share it (before, wraps, error hooks, retries, after);
another call, concurrent or later, never sees it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace

import pytest
from returns.result import Failure, Success

from hooks import (
    CallState,
    Cont,
    ErrorResult,
    Outcome,
    Retry,
    StateKey,
)
from runner import (
    Agent,
    ModelContext,
    ModelResponse,
    Runner,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultEvent,
)
from tests.helpers.runs import Mode, calling, drive

MARK = StateKey[str]("mark")
SEEN = StateKey[list[str]]("seen")


def test_get_set_update_pop_contains() -> None:
    state = CallState()
    assert state.get(MARK) is None
    assert state.get(MARK, "x") == "x"
    assert len(state) == 0
    assert MARK not in state
    assert "mark" not in state
    assert 3 not in state
    state.set(MARK, "a")
    assert state.get(MARK) == "a"
    assert state.get("mark") == "a"
    assert MARK in state
    assert state.update(StateKey[int]("n"), lambda n: n + 1, default=0) == 1
    assert state.update("n", lambda n: n + 1) == 2
    assert sorted(state) == ["mark", "n"]
    assert len(state) == 2
    assert state.pop(MARK) == "a"
    assert state.pop(MARK, "gone") == "gone"
    assert repr(state) == "CallState({'n': 2})"


def test_update_that_raises_stores_nothing() -> None:
    state = CallState()

    def boom(_: object) -> int:
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        state.update("n", boom, default=0)
    assert "n" not in state


def test_session_scoped_key_and_bad_key_refused() -> None:
    state = CallState()
    with pytest.raises(ValueError, match="session-scoped; a call's state lives for one call"):
        state.set(StateKey[int]("n", scope="session"), 1)
    with pytest.raises(TypeError, match="call state keys are StateKey or str, got int"):
        state.get(3)  # type: ignore[call-overload]


def test_contexts_carry_it_through_replace_and_leave_it_out_of_equality(
    invocation_ctx: ToolContext,
) -> None:
    ctx = invocation_ctx
    moved = replace(ctx, attempt=2)
    assert moved.call_state is ctx.call_state
    other = replace(ctx, call_state=CallState())
    assert other == ctx
    assert "call_state" not in repr(ctx)


@pytest.fixture
def invocation_ctx() -> ToolContext:
    from hooks import Invocation

    return ToolContext(Invocation("r", "a", "a"), ToolCall("c", "t", {}))


class Marks:
    """Marks each tool call in its before hook; checks the mark everywhere else."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        assert MARK not in ctx.call_state or ctx.attempt > 1
        ctx.call_state.set(MARK, f"{ctx.call.id}:{ctx.call.args['x']}")
        # A replaced context keeps the call's state.
        return Cont(replace(ctx, call=replace(ctx.call, args={**ctx.call.args})))

    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        self.seen.append(f"wrap {ctx.call_state.get(MARK)}")
        return call_next(ctx)

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        self.seen.append(f"error {ctx.call_state.get(MARK)}")
        return Retry(ctx) if ctx.attempt < 2 else failure

    def after_tool(self, outcome: Outcome[ToolResult], ctx: ToolContext, /) -> Outcome[ToolResult]:
        self.seen.append(f"after {ctx.call_state.get(MARK)}")
        return outcome

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        ctx.call_state.update(SEEN, lambda seen: [*(seen or []), "before"])
        return Cont(ctx)

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Outcome[ModelResponse]:
        self.seen.append(f"model {ctx.call_state.get(SEEN)}")
        return outcome


class AsyncMarks(Marks):
    """``Marks`` with the async wrap an async run needs."""

    async def wrap_tool(  # type: ignore[override]
        self,
        ctx: ToolContext,
        call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
        /,
    ) -> Outcome[ToolResult]:
        self.seen.append(f"wrap {ctx.call_state.get(MARK)}")
        return await call_next(ctx)


def test_one_calls_hooks_share_it_and_no_other_call_sees_it(mode: Mode) -> None:
    failed: list[int] = []

    def flaky(x: int) -> int:
        """Fail the first time for x=1."""
        if x == 1 and not failed:
            failed.append(x)
            raise RuntimeError("once")
        return x

    model = ScriptedModel(
        [
            calling(ToolCall("c1", "flaky", {"x": 1}), ToolCall("c2", "flaky", {"x": 2})),
            "done",
        ]
    )
    marks = Marks() if mode == "sync" else AsyncMarks()
    with Runner(Agent("a", model, tools=[flaky])) as runner:
        result = drive(runner, mode, "go", callbacks=[marks])
    assert result.output == "done"
    assert sorted(marks.seen) == sorted(
        [
            "model ['before']",
            "model ['before']",  # each model call its own list: never ['before', 'before']
            "wrap c1:1",
            "error c1:1",
            "wrap c1:1",  # the retried attempt: the same call's state
            "after c1:1",
            "wrap c2:2",
            "after c2:2",
        ]
    )


def test_concurrent_calls_each_have_their_own() -> None:
    started = asyncio.Event()
    count = 0

    async def slow(x: int) -> int:
        """Wait for the other call, then answer."""
        nonlocal count
        count += 1
        if count == 2:
            started.set()
        await asyncio.wait_for(started.wait(), 5)
        return x

    class Checks:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            ctx.call_state.set(MARK, ctx.call.id)
            await asyncio.sleep(0)
            return Cont(ctx)

        async def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Outcome[ToolResult]:
            assert ctx.call_state.get(MARK) == ctx.call.id
            return Success(ToolResult(f"{ctx.call.id} ok"))

    model = ScriptedModel(
        [calling(ToolCall("c1", "slow", {"x": 1}), ToolCall("c2", "slow", {"x": 2})), "done"]
    )
    with Runner(Agent("a", model, tools=[slow])) as runner:
        result = asyncio.run(runner.arun("go", callbacks=[Checks()]))
    contents = [e.result.content for e in result.events if isinstance(e, ToolResultEvent)]
    assert sorted(contents) == ["c1 ok", "c2 ok"]
