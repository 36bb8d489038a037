"""The scenario suite: each scenario one hookline verb at one point, run by any ``Harness``.

Every scenario builds its agent (``AgentSpec``) and callbacks, runs them through the
harness and asserts what the callbacks saw and what the model read. The same checks run
against hookline's own ``Runner`` (the reference, in the main environment) and against
each adapter in its own environment; a verb a framework cannot express is named in its
harness's ``cannot`` and runs as a strict xfail with that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pytest
from returns.result import Failure, Success

from hooks import (
    Approve,
    Budget,
    Cont,
    Edit,
    Fallback,
    Halt,
    HookEvent,
    ModelContext,
    ModelResponse,
    Outcome,
    PausableResult,
    Pause,
    Reject,
    Retry,
    ToolContext,
    ToolResult,
    audit,
    guard,
    matched,
)
from tests.adapters.harness import AgentSpec, Call, Harness, ModelDown, ToolFailed, Turn

__all__ = ["SCENARIOS", "Scenario", "scenario_params", "scenario_tests"]


@dataclass(frozen=True)
class Scenario:
    """One verb at one point: ``name`` (the test id), ``verb`` (the matrix's row) and
    ``check``, which runs it through a harness and asserts."""

    name: str
    verb: str
    check: Callable[[Harness], None]


def _calls_then(text: str, *calls: Call) -> tuple[Turn, ...]:
    """A model that makes ``calls`` in one turn, then answers ``text``."""
    return (Turn(calls=calls), Turn(text=text))


def _ran() -> tuple[list[tuple[str, dict[str, object]]], Callable[..., Callable[..., str]]]:
    """A log of tool runs and a maker of tools that append to it."""
    log: list[tuple[str, dict[str, object]]] = []

    def tool(name: str, answer: Callable[..., str] | None = None) -> Callable[..., str]:
        def run(**args: object) -> str:
            log.append((name, dict(args)))
            return f"{name} ran" if answer is None else answer(**args)

        return run

    return log, tool


def _search(tool: Callable[..., Callable[..., str]]) -> Mapping[str, Callable[..., str]]:
    return {"search": tool("search"), "delete": tool("delete")}


# -- a guard halts a tool ---------------------------------------------------------------


class _NoDelete:
    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        if ctx.call.name == "delete":
            return Halt(ToolResult("refused: delete is not allowed", is_error=True))
        return Cont(ctx)


def guard_halts_tool(harness: Harness) -> None:
    """A before_tool Halt answers the call: the tool never runs, the model reads the halt."""
    log, tool = _ran()
    agent = AgentSpec(
        "assistant",
        _calls_then("done", Call("delete", {"path": "/etc"}, "c1")),
        _search(tool),
    )
    report = harness.run(agent, "clean up", [_NoDelete()])
    assert report.status == "done"
    assert report.text == "done"
    assert log == []
    assert report.tool_results == (("delete", "refused: delete is not allowed"),)


# -- a redaction rewrites arguments -----------------------------------------------------


class _Redact:
    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        args = {k: "[redacted]" if k == "secret" else v for k, v in ctx.call.args.items()}
        return Cont(replace(ctx, call=replace(ctx.call, args=args)))


def redaction_rewrites_args(harness: Harness) -> None:
    """A before_tool Cont with changed arguments: the tool runs with the rewritten ones."""
    log, tool = _ran()
    agent = AgentSpec(
        "assistant",
        _calls_then("sent", Call("send", {"to": "bob", "secret": "hunter2"}, "c1")),
        {"send": tool("send")},
    )
    report = harness.run(agent, "send it", [_Redact()])
    assert report.text == "sent"
    assert log == [("send", {"to": "bob", "secret": "[redacted]"})]


# -- a retry with a changed call re-runs the guard --------------------------------------


class _FixPath:
    def __init__(self) -> None:
        self.guarded: list[dict[str, object]] = []

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        self.guarded.append(dict(ctx.call.args))
        return Cont(ctx)

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> Retry[ToolContext] | Failure[Exception]:
        if ctx.call.args.get("path") == "/tmp/missing":
            return Retry(replace(ctx, call=replace(ctx.call, args={"path": "/tmp/found"})))
        return failure


def retry_changed_call_reruns_guard(harness: Harness) -> None:
    """on_tool_error's Retry with changed arguments runs the call again, its guard first."""
    log, tool = _ran()

    def read(path: str) -> str:
        if path == "/tmp/missing":
            raise ToolFailed(f"no such file: {path}")
        return f"contents of {path}"

    agent = AgentSpec(
        "assistant",
        _calls_then("read", Call("read", {"path": "/tmp/missing"}, "c1")),
        {"read": tool("read", read)},
    )
    fixer = _FixPath()
    report = harness.run(agent, "read it", [fixer])
    assert report.text == "read"
    assert fixer.guarded == [{"path": "/tmp/missing"}, {"path": "/tmp/found"}]
    assert log == [("read", {"path": "/tmp/missing"}), ("read", {"path": "/tmp/found"})]
    assert report.tool_results == (("read", "contents of /tmp/found"),)


# -- a fallback model answer ------------------------------------------------------------


class _Fallback:
    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> Fallback[ModelResponse] | Failure[Exception]:
        if isinstance(failure.failure(), ModelDown):
            return Fallback(ModelResponse(text="the model is down; try later"))
        return failure


def fallback_model_answer(harness: Harness) -> None:
    """on_model_error's Fallback stands in for a model call that raised."""
    agent = AgentSpec("assistant", (Turn(error="503 from the provider"),))
    report = harness.run(agent, "hello", [_Fallback()])
    assert report.status == "done"
    assert report.text == "the model is down; try later"


# -- a wrap that calls next twice -------------------------------------------------------


class _Twice:
    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        first = call_next(ctx)
        second = call_next(ctx)
        match first, second:
            case Success(a), Success(b):
                return Success(ToolResult(f"{a.content} | {b.content}"))
            case _:
                return second


def wrap_calls_next_twice(harness: Harness) -> None:
    """A wrap_tool that calls call_next twice runs the tool twice and answers once."""
    counter = iter(range(1, 10))
    log, tool = _ran()
    agent = AgentSpec(
        "assistant",
        _calls_then("counted", Call("count", {}, "c1")),
        {"count": tool("count", lambda: f"call {next(counter)}")},
    )
    report = harness.run(agent, "count", [_Twice()])
    assert report.text == "counted"
    assert log == [("count", {}), ("count", {})]
    assert report.tool_results == (("count", "call 1 | call 2"),)


# -- a pause, then approve / edit / reject ----------------------------------------------


class _Approval:
    def __init__(self) -> None:
        self.decisions: list[object] = []

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        if ctx.call.name != "transfer":
            return Cont(ctx)
        self.decisions.append(ctx.decision)
        if ctx.decision is None:
            return Pause(f"transfer {ctx.call.args.get('amount')}?")
        return Cont(ctx)


def _paused(harness: Harness) -> tuple[_Approval, list[tuple[str, dict[str, object]]], Any]:
    log, tool = _ran()
    agent = AgentSpec(
        "assistant",
        _calls_then("transfer handled", Call("transfer", {"amount": 100}, "c1")),
        {"transfer": tool("transfer")},
    )
    approval = _Approval()
    report = harness.run(agent, "pay", [approval])
    assert report.status == "paused"
    assert log == []
    return approval, log, report


def pause_approve(harness: Harness) -> None:
    """A Pause stops the run before the tool; Approve() runs it, the guard told so."""
    approval, log, report = _paused(harness)
    done = harness.resume(report, Approve())
    assert done.status == "done"
    assert done.text == "transfer handled"
    assert log == [("transfer", {"amount": 100})]
    assert approval.decisions == [None, Approve()]


def pause_edit(harness: Harness) -> None:
    """Edit(args) runs the paused call with the human's arguments."""
    approval, log, report = _paused(harness)
    done = harness.resume(report, Edit({"amount": 10}))
    assert done.text == "transfer handled"
    assert log == [("transfer", {"amount": 10})]
    assert approval.decisions == [None, Edit({"amount": 10})]


def pause_reject(harness: Harness) -> None:
    """Reject(message) never runs the tool; the model reads the message as the result."""
    approval, log, report = _paused(harness)
    done = harness.resume(report, Reject("not today"))
    assert done.text == "transfer handled"
    assert log == []
    assert done.tool_results == (("transfer", "not today"),)
    assert approval.decisions == [None, Reject("not today")]


# -- the audit tier sees a halted call --------------------------------------------------


def audit_sees_halted_call(harness: Harness) -> None:
    """An audit observer is told of the before_tool dispatch that halted, naming the guard."""
    seen: list[HookEvent] = []

    class Seen:
        def on_event(self, event: HookEvent, /) -> None:
            seen.append(event)

    _, tool = _ran()
    agent = AgentSpec(
        "assistant",
        _calls_then("done", Call("delete", {"path": "/"}, "c1")),
        _search(tool),
    )
    harness.run(agent, "clean", [audit(Seen()), _NoDelete()])
    halted = [e for e in seen if e.point == "before_tool" and e.outcome == "halt"]
    assert len(halted) == 1
    assert halted[0].tool == "delete"
    assert halted[0].call_id == "c1"
    assert halted[0].callback is not None
    assert "_NoDelete" in halted[0].callback


# -- a matched callback sees only its tools ---------------------------------------------


class _Names:
    def __init__(self) -> None:
        self.names: list[str] = []

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        self.names.append(ctx.call.name)
        return Cont(ctx)


def matched_sees_only_its_tools(harness: Harness) -> None:
    """A callback matched to one tool is asked about that tool's calls only."""
    _, tool = _ran()
    agent = AgentSpec(
        "assistant",
        _calls_then(
            "both", Call("search", {"query": "q"}, "c1"), Call("delete", {"path": "/x"}, "c2")
        ),
        _search(tool),
    )
    names = _Names()
    report = harness.run(agent, "go", [matched(names, tools="search")])
    assert report.text == "both"
    assert names.names == ["search"]


# -- a guard-tier callback runs first ---------------------------------------------------


def guard_tier_runs_first(harness: Harness) -> None:
    """guard(cb) runs before callbacks listed ahead of it: they never see what it halted."""
    log, tool = _ran()
    agent = AgentSpec(
        "assistant",
        _calls_then("done", Call("delete", {"path": "/"}, "c1")),
        _search(tool),
    )
    before = _Names()
    report = harness.run(agent, "clean", [before, guard(_NoDelete())])
    assert before.names == []
    assert log == []
    assert report.tool_results == (("delete", "refused: delete is not allowed"),)


# -- a budget across sub-agents ---------------------------------------------------------


def budget_across_sub_agents(harness: Harness) -> None:
    """One Budget(tool_calls=3) counts the sub-agent's tool calls with its parent's: the
    call to the sub-agent and its two searches spend it, the parent's next call is refused."""
    log, tool = _ran()
    researcher = AgentSpec(
        "researcher",
        _calls_then(
            "found", Call("search", {"query": "a"}, "s1"), Call("search", {"query": "b"}, "s2")
        ),
        _search(tool),
    )
    agent = AgentSpec(
        "assistant",
        (
            Turn(calls=(Call("researcher", {"request": "look"}, "c1"),)),
            Turn(calls=(Call("search", {"query": "c"}, "c2"),)),
            Turn(text="over budget"),
        ),
        _search(tool),
        sub_agents=(researcher,),
    )
    report = harness.run(agent, "research", [guard(Budget(tool_calls=3))])
    assert report.text == "over budget"
    # a framework may run one turn's calls at once: their order is not the verb's
    assert sorted(log, key=repr) == [("search", {"query": "a"}), ("search", {"query": "b"})]
    assert report.tool_results[0] == ("researcher", "found")
    name, content = report.tool_results[1]
    assert name == "search"
    assert "budget" in content


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("guard_halts_tool", "a guard halts a tool", guard_halts_tool),
    Scenario("redaction_rewrites_args", "a redaction rewrites args", redaction_rewrites_args),
    Scenario(
        "retry_changed_call_reruns_guard",
        "a retry with a changed call re-runs the guard",
        retry_changed_call_reruns_guard,
    ),
    Scenario("fallback_model_answer", "a fallback model answer", fallback_model_answer),
    Scenario("wrap_calls_next_twice", "a wrap that calls next twice", wrap_calls_next_twice),
    Scenario("pause_approve", "a pause, then approve", pause_approve),
    Scenario("pause_edit", "a pause, then edit", pause_edit),
    Scenario("pause_reject", "a pause, then reject", pause_reject),
    Scenario("audit_sees_halted_call", "an audit tier sees a halted call", audit_sees_halted_call),
    Scenario(
        "matched_sees_only_its_tools",
        "a matched callback sees only its tools",
        matched_sees_only_its_tools,
    ),
    Scenario("guard_tier_runs_first", "a guard-tier callback runs first", guard_tier_runs_first),
    Scenario("budget_across_sub_agents", "a budget across sub-agents", budget_across_sub_agents),
)


def scenario_params(harness: Harness) -> list[Any]:
    """The scenarios as pytest params for ``harness``: those it ``cannot`` run are strict
    xfails with its reason."""
    unknown = set(harness.cannot) - {s.name for s in SCENARIOS}
    assert not unknown, f"{harness.framework}: cannot names unknown scenarios {unknown}"
    return [
        pytest.param(
            scenario,
            id=scenario.name,
            marks=(
                [pytest.mark.xfail(strict=True, reason=harness.cannot[scenario.name])]
                if scenario.name in harness.cannot
                else []
            ),
        )
        for scenario in SCENARIOS
    ]


def scenario_tests(harness: Harness) -> Callable[[Scenario], None]:
    """A test function running every scenario against ``harness`` (assign it to a
    ``test_`` name in the framework's test module)."""

    @pytest.mark.parametrize("scenario", scenario_params(harness))
    def test_scenario(scenario: Scenario) -> None:
        scenario.check(harness)

    test_scenario.harness = harness  # type: ignore[attr-defined]  # the matrix recorder reads it
    return test_scenario
