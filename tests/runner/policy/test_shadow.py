"""``shadow(cb)``: a candidate policy beside the live chain -- its differing decisions
recorded (an event, a span event), never acted on; sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from returns.result import Failure, Success

from hooks import (
    BEFORE_TOOL,
    Cont,
    ErrorResult,
    Halt,
    InvalidCallbacks,
    Outcome,
    Retry,
    StopRun,
    ToolContext,
    ToolResult,
    explain,
    guard,
    shadow,
)
from runner import (
    Agent,
    Runner,
    ScriptedModel,
    ShadowEvent,
    ToolCall,
    ToolResultEvent,
)
from tests.helpers.runs import Mode, calling, drive


def search(q: str) -> str:
    """Search."""
    return f"found {q}"


def delete(path: str) -> str:
    """Delete."""
    return f"deleted {path}"


def two_calls() -> Agent:
    model = ScriptedModel(
        [
            calling(ToolCall("c1", "search", {"q": "x"}), ToolCall("c2", "delete", {"path": "/"})),
            "done",
        ]
    )
    return Agent("a", model, tools=[search, delete])


class Strict:
    """A candidate: would halt every delete."""

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        if ctx.call.name == "delete":
            return Halt(ToolResult("deletes are off", is_error=True))
        return Cont(ctx)


class Lenient:
    """The live policy: halts nothing but searches for 'x'."""

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        if ctx.call.name == "search":
            return Halt(ToolResult("no searching"))
        return Cont(ctx)


def shadows(events: object) -> list[ShadowEvent]:
    return [e for e in events if isinstance(e, ShadowEvent)]  # type: ignore[attr-defined]


def test_a_shadow_records_where_it_differs_and_changes_nothing(mode: Mode) -> None:
    with Runner(two_calls()) as runner:
        result = drive(runner, mode, "go", callbacks=[Lenient(), shadow(Strict())])
    results = {e.call.name: e.result for e in result.events if isinstance(e, ToolResultEvent)}
    assert results["delete"] == ToolResult("deleted /")  # the shadow's halt was not acted on
    assert results["search"] == ToolResult("no searching")
    found = shadows(result.events)
    assert {(e.tool, e.live, e.would) for e in found} == {
        ("delete", "cont", "halt"),  # it would have halted what the live chain passed
        ("search", "halt", "cont"),  # and passed what the live chain halted
    }
    strict = next(e for e in found if e.tool == "delete")
    assert strict.point == "before_tool"
    assert strict.callback == "Strict instance"
    assert strict.call_id == "c2"
    assert "deletes are off" in strict.detail


def test_a_shadow_that_agrees_records_nothing(mode: Mode) -> None:
    with Runner(two_calls()) as runner:
        result = drive(runner, mode, "go", callbacks=[Strict(), shadow(Strict())])
    assert shadows(result.events) == []


def test_a_raising_shadow_is_recorded_not_raised(mode: Mode) -> None:
    class Broken:
        def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            raise StopRun("a shadow cannot stop a run")

    with Runner(two_calls()) as runner:
        result = drive(runner, mode, "go", callbacks=[shadow(Broken())])
    assert result.output == "done"
    assert {(e.would, e.detail) for e in shadows(result.events)} == {
        ("raised", "StopRun: a shadow cannot stop a run")
    }


def test_after_and_error_points_are_shadowed(mode: Mode) -> None:
    attempts: list[int] = []

    def flaky(q: str) -> str:
        """Fail once."""
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("once")
        return q

    class Candidate:
        def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Outcome[ToolResult]:
            return Success(ToolResult("rewritten"))

        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            return Retry(ctx)

    model = ScriptedModel([calling(ToolCall("c", "flaky", {"q": "x"})), "done"])
    with Runner(Agent("a", model, tools=[flaky])) as runner:
        result = drive(runner, mode, "go", callbacks=[shadow(Candidate())])
    found = {(e.point, e.live, e.would) for e in shadows(result.events)}
    assert found == {("on_tool_error", "pass", "retry"), ("after_tool", "pass", "replace")}
    assert len(attempts) == 1  # the shadow's Retry was not acted on: the call failed once


def test_a_matched_shadow_is_asked_only_on_its_calls(mode: Mode) -> None:
    with Runner(two_calls()) as runner:
        result = drive(
            runner, mode, "go", callbacks=[shadow(Strict(), tools="search"), guard(Lenient())]
        )
    assert shadows(result.events)[0].tool == "search"
    assert len(shadows(result.events)) == 1


def test_a_shadow_is_not_in_the_live_chain() -> None:
    assert explain([shadow(Strict())], BEFORE_TOOL).steps == ()


def test_a_shadow_cannot_wrap() -> None:
    class Wraps:
        def wrap_tool(
            self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
        ) -> Outcome[ToolResult]:
            return call_next(ctx)

    with pytest.raises(InvalidCallbacks, match="a shadow cannot wrap"):
        explain([shadow(Wraps())], BEFORE_TOOL)


def test_a_sync_run_refuses_an_async_shadow() -> None:
    class Async:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            return Cont(ctx)

    with Runner(two_calls()) as runner:
        with pytest.raises(InvalidCallbacks, match="is async"):
            runner.run("go", callbacks=[shadow(Async())])
        result = asyncio.run(runner.arun("go", callbacks=[shadow(Async())]))
    assert result.output == "done"


def test_an_async_shadow_is_awaited() -> None:
    class Async:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
            await asyncio.sleep(0)
            return Halt(ToolResult("no"))

    with Runner(two_calls()) as runner:
        result = asyncio.run(runner.arun("go", callbacks=[shadow(Async())]))
    assert {e.would for e in shadows(result.events)} == {"halt"}
