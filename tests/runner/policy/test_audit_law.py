"""The audit tier's law (hypothesis): in any generated run -- calls passed, halted,
paused, failing, recovered by a fallback -- an audit callback is told every dispatch,
the same ones a plain observer is told, and a before_tool for every call the model asked
for, even when a guard ahead of everything halted or paused it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure

from hooks import (
    Cont,
    ErrorResult,
    Fallback,
    Halt,
    HookEvent,
    PausableResult,
    Pause,
    ToolContext,
    ToolResult,
    audit,
    guard,
)
from runner import Agent, ModelResponse, Runner, ScriptedModel, ToolCall, ToolCallEvent
from tests.helpers.runs import calling

FATES = ("pass", "halt", "pause", "fail", "fallback")


class Fates:
    """A guard deciding each call's fate by its argument."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        fate = ctx.call.args["fate"]
        if fate == "halt":
            return Halt(ToolResult("halted"))
        if fate == "pause":
            return Pause("ask")
        return Cont(ctx)

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        if ctx.call.args["fate"] == "fallback":
            return Fallback(ToolResult("fell back"))
        return failure


class Seen:
    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, str]] = []

    def on_event(self, event: HookEvent, /) -> None:
        self.events.append((event.point, event.call_id, event.outcome))


def act(fate: str) -> str:
    """Fail when told to."""
    if fate in ("fail", "fallback"):
        raise RuntimeError(fate)
    return fate


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(FATES), min_size=1, max_size=3), min_size=1, max_size=3))
def test_an_audit_is_told_every_dispatch(turns: list[list[str]]) -> None:
    script: list[ModelResponse | str] = [
        calling(*(ToolCall(f"t{t}c{c}", "act", {"fate": f}) for c, f in enumerate(fates)))
        for t, fates in enumerate(turns)
    ]
    script.append("done")
    audited, plain = Seen(), Seen()
    with Runner(Agent("a", ScriptedModel(script), tools=[act])) as runner:
        result = runner.run("go", callbacks=[audit(audited), guard(Fates()), plain])
    assert audited.events == plain.events
    asked = [e.call.id for e in result.events if isinstance(e, ToolCallEvent)]
    told = [call for point, call, _ in audited.events if point == "before_tool"]
    assert told == asked
    outcomes = {(point, outcome) for point, _, outcome in audited.events}
    ran = {fate for fates in turns for fate in fates}
    if result.status == "completed":  # every turn ran: each fate was met and told
        expected = {
            "halt": ("before_tool", "halt"),
            "fallback": ("on_tool_error", "fallback"),
            "fail": ("on_tool_error", "failure"),
            "pass": ("after_tool", "success"),
        }
        assert {expected[fate] for fate in ran if fate in expected} <= outcomes
    else:
        assert ("before_tool", "pause") in outcomes
