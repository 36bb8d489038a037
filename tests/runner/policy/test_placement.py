"""Placing callbacks in runs: tiers, order constraints, matchers, views, the known-tools
check, ``explain``; sync and async."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from hooks import (
    BEFORE_MODEL,
    BEFORE_TOOL,
    Cont,
    Halt,
    HookEvent,
    InvalidCallbacks,
    Match,
    ModelContext,
    Outcome,
    StopRun,
    ToolAnnotations,
    ToolContext,
    ToolInfo,
    ToolResult,
    audit,
    explain,
    guard,
    matched,
    run_before,
)
from runner import Agent, Runner, ScriptedModel, ToolCall, ToolResultEvent, as_tool
from tests.helpers.runs import Mode, calling, drive


def search(q: str) -> str:
    """Search."""
    return f"found {q}"


def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def fs_read(path: str) -> str:
    """Read a file."""
    return f"read {path}"


class Log:
    """Records which tool calls it saw, at before_tool and after_tool, under a label."""

    def __init__(self, label: str, log: list[str], *, halt: bool = False) -> None:
        self.label = label
        self.log = log
        self.halt = halt

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        self.log.append(f"{self.label} {ctx.call.name}")
        return Halt(ToolResult(f"halted by {self.label}")) if self.halt else Cont(ctx)

    def after_tool(self, outcome: Outcome[ToolResult], ctx: ToolContext, /) -> Outcome[ToolResult]:
        self.log.append(f"{self.label} after {ctx.call.name}")
        return outcome


class ModelLog:
    """Records the agents whose model calls it saw."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        self.log.append(f"model {ctx.invocation.agent}")
        return Cont(ctx)


def calls(*names: str) -> ScriptedModel:
    """A model calling each named tool once (arguments fitting the tools here), then done."""
    args = {"search": {"q": "x"}, "delete": {"path": "/a"}, "fs_read": {"path": "/b"}}
    return ScriptedModel(
        [calling(*(ToolCall(f"c{i}", name, args[name]) for i, name in enumerate(names))), "done"]
    )


def agent(*names: str, callbacks: Sequence[object] = ()) -> Agent:
    return Agent("a", calls(*names), tools=[search, delete, fs_read], callbacks=callbacks)


def test_a_guard_runs_first_whatever_level_lists_it(mode: Mode) -> None:
    """An agent's guard runs before the runner's and the run's default callbacks; guards
    keep their own list order."""
    log: list[str] = []
    runner_cb, run_cb = Log("runner", log), Log("run", log)
    own = [guard(Log("agent-guard", log)), Log("agent", log)]
    with Runner(agent("search", callbacks=own), callbacks=[runner_cb]) as runner:
        drive(runner, mode, "go", callbacks=[run_cb, guard(Log("run-guard", log))])
    before = [entry for entry in log if "after" not in entry]
    assert before == [
        "run-guard search",
        "agent-guard search",
        "runner search",
        "run search",
        "agent search",
    ]
    after = [entry.split()[0] for entry in log if "after" in entry]
    assert after == ["run-guard", "agent-guard", "runner", "run", "agent"]


def test_a_guard_halt_ends_the_chain_before_any_default_callback(mode: Mode) -> None:
    log: list[str] = []
    with Runner(agent("search"), callbacks=[Log("default", log)]) as runner:
        result = drive(runner, mode, "go", callbacks=[guard(Log("guard", log, halt=True))])
    assert log == ["guard search"]
    tool_results = [e.result.content for e in result.events if isinstance(e, ToolResultEvent)]
    assert tool_results == ["halted by guard"]


def test_before_and_after_order_callbacks_within_a_tier(mode: Mode) -> None:
    log: list[str] = []
    first, second, third = Log("first", log), Log("second", log), Log("third", log)
    callbacks = [third, matched(second, after=[first], before=[third]), first]
    with Runner(agent("search")) as runner:
        drive(runner, mode, "go", callbacks=callbacks)
    assert [e for e in log if "after" not in e] == ["first search", "second search", "third search"]


def test_a_cycle_is_refused_naming_it() -> None:
    log: list[str] = []
    one, two = Log("one", log), Log("two", log)
    with pytest.raises(InvalidCallbacks, match=r"constraints form a cycle: .* -> .* -> "):
        explain([matched(one, before=[two]), matched(two, before=[one])], BEFORE_TOOL)


def test_a_constraint_against_the_tiers_is_refused() -> None:
    log: list[str] = []
    default = Log("d", log)
    with pytest.raises(InvalidCallbacks, match="tiers run guard, then default, then audit"):
        explain([default, guard(Log("g", log), after=[default])], BEFORE_TOOL)
    one = Log("one", log)
    with pytest.raises(InvalidCallbacks, match="asked to run before itself"):
        explain([matched(one, before=[one])], BEFORE_TOOL)


def test_placing_twice_is_refused() -> None:
    with pytest.raises(InvalidCallbacks, match="is placed already"):
        guard(matched(Log("x", [])))


class Observer:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    def on_event(self, event: HookEvent, /) -> None:
        self.log.append(f"{self.name} {event.point} {event.outcome}")


def test_an_audit_sees_the_call_a_guard_halted_and_observes_last(mode: Mode) -> None:
    log: list[str] = []
    callbacks = [
        audit(Observer("audit", log)),
        guard(Log("g", [], halt=True)),
        Observer("obs", log),
    ]
    with Runner(agent("search")) as runner:
        drive(runner, mode, "go", callbacks=callbacks)
    tool = [entry for entry in log if "before_tool" in entry]
    assert tool == ["obs before_tool halt", "audit before_tool halt"]


def test_an_audit_with_a_hook_that_could_change_a_run_is_refused() -> None:
    class Sneaky(Observer):
        def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            return Cont(ctx)

    with (
        pytest.raises(InvalidCallbacks, match=r"an audit callback only observes .*before_tool"),
        Runner(agent("search")) as runner,
    ):
        runner.run("go", callbacks=[audit(Sneaky("s", []))])
    with pytest.raises(InvalidCallbacks, match="defines no hook method"):
        explain([audit(object())], BEFORE_TOOL)  # type: ignore[call-overload]


def test_an_audit_cannot_stop_a_run(mode: Mode, caplog: pytest.LogCaptureFixture) -> None:
    class Stops:
        def on_event(self, event: HookEvent, /) -> None:
            raise StopRun("audits do not stop runs")

    with Runner(agent("search")) as runner, caplog.at_level(logging.ERROR, "runner"):
        result = drive(runner, mode, "go", callbacks=[audit(Stops())])
    assert result.status == "completed"
    assert result.output == "done"
    assert "raised StopRun" in caplog.text


def test_a_plain_observer_still_stops_a_run(mode: Mode) -> None:
    class Stops:
        def on_event(self, event: HookEvent, /) -> None:
            raise StopRun("stop")

    with Runner(agent("search")) as runner:
        result = drive(runner, mode, "go", callbacks=[Stops()])
    assert result.status != "completed"


@pytest.mark.parametrize(
    ("tools", "seen"),
    [
        ("search", ["search"]),
        ("fs_*", ["fs_read"]),
        (re.compile(r"del.te"), ["delete"]),
        (["search", re.compile("fs_.*")], ["search", "fs_read"]),
    ],
    ids=["exact", "glob", "regex", "list"],
)
def test_a_matched_callback_sees_only_its_tools(mode: Mode, tools: Any, seen: list[str]) -> None:
    log: list[str] = []
    with Runner(agent("search", "delete", "fs_read")) as runner:
        drive(runner, mode, "go", callbacks=[matched(Log("m", log), tools=tools)])
    assert sorted(e.split()[1] for e in log if "after" not in e) == sorted(seen)
    assert sorted(e.split()[2] for e in log if "after" in e) == sorted(seen)


def test_a_regex_must_match_the_whole_name(mode: Mode) -> None:
    log: list[str] = []
    with Runner(agent("search", "fs_read")) as runner:
        drive(
            runner,
            mode,
            "go",
            callbacks=[matched(Log("m", log), tools=re.compile("read"), allow_unmatched=True)],
        )
    assert log == []


def test_annotations_and_args_match(mode: Mode) -> None:
    log: list[str] = []
    flagged = as_tool(delete, annotations=ToolAnnotations(destructive=True))
    model = calls("delete", "search", "delete")
    tools: list[object] = [flagged, search]
    by_marks = matched(Log("marks", log), annotations=ToolAnnotations(destructive=True))
    by_args = matched(Log("args", log), args=lambda args: args.get("q") == "x")
    with Runner(Agent("a", model, tools=tools)) as runner:
        drive(runner, mode, "go", callbacks=[by_marks, by_args])
    before = sorted(e for e in log if "after" not in e)
    assert before == ["args search", "marks delete", "marks delete"]


def test_mcp_unsaid_hints_take_the_mcp_defaults() -> None:
    destructive = Match(annotations=ToolAnnotations(destructive=True))
    read_only = Match(annotations=ToolAnnotations(read_only=False))
    mcp = ToolInfo("notes_rm", "notes")
    function = ToolInfo("rm")
    assert destructive.tool(mcp)
    assert read_only.tool(mcp)
    assert not destructive.tool(function)
    assert not read_only.tool(function)
    said = ToolInfo("notes_ls", "notes", annotations=ToolAnnotations(destructive=False))
    assert not destructive.tool(said)
    reads = ToolInfo("notes_cat", "notes", annotations=ToolAnnotations(read_only=True))
    assert not destructive.tool(reads)  # destructive means something only when not read-only


def test_an_mcp_tool_matches_by_its_own_name_and_its_server() -> None:
    info = ToolInfo("notes_add", "notes")
    assert Match(tools="add").tool(info)
    assert Match(tools="notes_add").tool(info)
    assert Match(server="notes").tool(info)
    assert not Match(server="other").tool(info)
    assert not Match(tools="add").tool(ToolInfo("notes_add"))  # no server: its name only


def test_agents_match_model_hooks_too(mode: Mode) -> None:
    log: list[str] = []
    helper = Agent("helper", ScriptedModel(["helped"]))
    root = Agent(
        "root",
        ScriptedModel([calling(ToolCall("c", "helper", {"request": "x"})), "ok"]),
        sub_agents=[helper],
    )
    with Runner(root) as runner:
        drive(runner, mode, "go", callbacks=[matched(ModelLog(log), agents="help*")])
    assert log == ["model helper"]


def test_a_callback_matched_to_other_tools_is_never_called(mode: Mode) -> None:
    """The view for a tool leaves a non-matching callback out: not even its gate runs."""
    asked: list[str] = []

    def never(args: Any) -> bool:
        asked.append("asked")
        return True

    log: list[str] = []
    callbacks = [matched(Log("m", log), tools="delete", args=never)]
    with Runner(agent("search", "search")) as runner:
        drive(runner, mode, "go", callbacks=callbacks)
    assert log == []
    assert asked == []


def test_direct_dispatch_honours_the_matches() -> None:
    from hooks import Invocation

    log: list[str] = []
    ctx = ToolContext(Invocation("r", "a", "a"), ToolCall("c", "search", {"q": "x"}))
    result = run_before([matched(Log("m", log, halt=True), tools="delete")], BEFORE_TOOL, ctx)
    assert result == Cont(ctx)
    assert log == []


def test_a_misspelled_tool_is_refused_with_a_did_you_mean(mode: Mode) -> None:
    with pytest.raises(InvalidCallbacks, match=r"can match no tool .*did you mean 'search'"):
        Runner(agent("search"), callbacks=[matched(Log("m", []), tools="serch")])
    with Runner(agent("search")) as runner:
        with pytest.raises(InvalidCallbacks, match=r"known: delete, fs_read, search"):
            drive(runner, mode, "go", callbacks=[guard(Log("m", []), tools="nothing_*")])
        drive(
            runner,
            mode,
            "go",
            callbacks=[matched(Log("m", []), tools="serch", allow_unmatched=True)],
        )


def test_an_unknown_server_or_agent_is_refused() -> None:
    with pytest.raises(InvalidCallbacks, match="can match no MCP server"):
        Runner(agent("search"), callbacks=[matched(Log("m", []), server="notes")])
    with pytest.raises(InvalidCallbacks, match=r"can match no agent .*did you mean 'a'"):
        Runner(agent("search"), callbacks=[matched(ModelLog([]), agents=["aa"])])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tools": []}, "an empty list matches nothing"),
        ({"tools": 3}, "names are a str, a re.Pattern or a list"),
        ({"tools": [""]}, "names are non-empty str"),
        ({"tools": re.compile(b"x")}, "a regex must be a str pattern"),
        ({"server": ""}, "server: an MCPTools name"),
        ({"annotations": {"destructive": True}}, "annotations: a ToolAnnotations"),
        ({"annotations": ToolAnnotations()}, "sets no value to match"),
        ({"args": "q"}, "args: a predicate"),
        ({"before": "x"}, "before= takes a list of callbacks"),
        ({"allow_unmatched": 1}, "allow_unmatched must be True or False"),
    ],
)
def test_bad_placements_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        matched(Log("m", []), **kwargs)


def test_explain_draws_the_chain_for_a_tool() -> None:
    log: list[str] = []
    callbacks = [matched(Log("m", log), tools="delete"), audit(Observer("o", log))]
    with Runner(agent("search"), callbacks=[guard(Log("g", log))]) as runner:
        every = runner.explain(BEFORE_TOOL, callbacks=callbacks)
        one = runner.explain(BEFORE_TOOL, tool="search", callbacks=callbacks)
        assert str(one) == "before_tool (tool 'search'):\n  1. guard   Log instance"
        assert [step.tier for step in every.steps] == ["guard", "default"]
        assert every.steps[1].match == "tools=['delete']"
        assert str(runner.explain(BEFORE_MODEL)) == "before_model: no callback"
        with pytest.raises(ValueError, match="has no tool 'nope'"):
            runner.explain(BEFORE_TOOL, tool="nope")
        with pytest.raises(ValueError, match="has no agent 'b'"):
            runner.explain(BEFORE_TOOL, agent="b")


def test_a_resume_must_bring_the_same_placement() -> None:
    from hooks import PausableResult, Pause
    from runner import Approve, ResumeRefused

    class Asks:
        def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
            return Cont(ctx) if ctx.decision is not None else Pause("ok?")

    asks = Asks()
    with Runner(agent("search")) as runner:
        paused = runner.run("go", callbacks=[guard(asks, tools="search")])
        assert paused.status == "paused"
        decisions = {paused.pending[0].id: Approve()}
        with pytest.raises(ResumeRefused, match=r"guard\(tests\..*Asks, tools=\['search'\]\)"):
            runner.resume(paused.state, decisions, callbacks=[asks])
        done = runner.resume(paused.state, decisions, callbacks=[guard(asks, tools="search")])
    assert done.output == "done"


Check = Callable[[ToolContext], Awaitable[Cont[ToolContext]]]


def test_async_gates_await_the_matched_method() -> None:
    import asyncio

    log: list[str] = []

    class Async:
        async def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            log.append(ctx.call.name)
            return Cont(ctx)

        async def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Outcome[ToolResult]:
            log.append(f"after {ctx.call.name}")
            return outcome

    with Runner(agent("search", "delete")) as runner:
        asyncio.run(runner.arun("go", callbacks=[matched(Async(), args=lambda a: "q" in a)]))
    assert log == ["search", "after search"]
