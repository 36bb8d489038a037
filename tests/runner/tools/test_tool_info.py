"""``ToolContext.tool``: every tool call's hooks know what the tool is, typed.

A function tool, a tool object, a sub-agent: each call's context says the tool's name,
server, description, declared annotations and output schema, so one guard covers every
kind of tool; the info always follows the call's current name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from hooks import BeforeResult, Cont, Halt, PausableResult, Pause
from runner import (
    Agent,
    Runner,
    RunResult,
    ScriptedModel,
    ToolAnnotations,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    ToolResultEvent,
    as_tool,
)
from tests.helpers.runs import Mode, calling, drive, events_of

DESTRUCTIVE = ToolAnnotations(destructive=True, read_only=False)


def remove(path: str) -> str:
    """Delete a file."""
    return f"removed {path}"


def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


class Search:
    """A tool object that says where it comes from and what it returns."""

    name = "search"
    description = "Search the web."
    annotations = ToolAnnotations(read_only=True, open_world=True)
    server = "web"
    output_schema: Mapping[str, Any] = {"type": "object", "properties": {"hits": {}}}

    def run(self, args: Mapping[str, Any], /) -> str:
        """Find nothing."""
        return "no hits"


class Seen:
    """Keeps the ``ToolInfo`` of every call ``before_tool`` saw."""

    def __init__(self) -> None:
        self.tools: list[ToolInfo] = []

    def before_tool(self, ctx: ToolContext) -> BeforeResult[ToolContext, ToolResult]:
        """Keep ``ctx.tool``."""
        self.tools.append(ctx.tool)
        return Cont(ctx)


class NoDestruction:
    """Halts every call to a tool that declares itself destructive."""

    def before_tool(self, ctx: ToolContext) -> BeforeResult[ToolContext, ToolResult]:
        """Halt a destructive tool; let the others run."""
        if ctx.tool.annotations.destructive:
            return Halt(ToolResult(f"{ctx.tool.name} is destructive: refused", is_error=True))
        return Cont(ctx)


def run_calls(
    mode: Mode, agent_tools: list[object], *calls: ToolCall, callbacks: list[object]
) -> RunResult:
    """One run of an agent with ``agent_tools`` whose model asks for ``calls``, then is done."""
    model = ScriptedModel([calling(*calls), "done"])
    with Runner(Agent("a", model, tools=agent_tools)) as runner:
        return drive(runner, mode, "go", callbacks=callbacks)


def test_each_kind_of_tool_is_described_to_its_hooks(mode: Mode) -> None:
    """A function (annotated with ``as_tool``), a tool object and a sub-agent."""
    seen = Seen()
    helper = Agent("helper", ScriptedModel(["helped"]), description="Helps.")
    model = ScriptedModel(
        [
            calling(
                ToolCall("c1", "remove", {"path": "x"}),
                ToolCall("c2", "search", {"q": "y"}),
                ToolCall("c3", "helper", {"request": "z"}),
            ),
            "done",
        ]
    )
    agent = Agent(
        "a", model, tools=[as_tool(remove, annotations=DESTRUCTIVE), Search()], sub_agents=[helper]
    )
    with Runner(agent) as runner:
        drive(runner, mode, "go", callbacks=[seen])
    assert seen.tools == [
        ToolInfo("remove", None, "Delete a file.", DESTRUCTIVE),
        ToolInfo(
            "search",
            "web",
            "Search the web.",
            ToolAnnotations(read_only=True, open_world=True),
            {"type": "object", "properties": {"hits": {}}},
        ),
        ToolInfo("helper", None, "Helps."),
    ]


def test_one_guard_reads_the_annotations_of_every_call(mode: Mode) -> None:
    """The destructive function is halted, the plain one runs."""
    result = run_calls(
        mode,
        [as_tool(remove, annotations=DESTRUCTIVE), read],
        ToolCall("c1", "remove", {"path": "x"}),
        ToolCall("c2", "read", {"path": "y"}),
        callbacks=[NoDestruction()],
    )
    results = {event.call.name: event.result for event in events_of(result, ToolResultEvent)}
    assert results["remove"] == ToolResult("remove is destructive: refused", is_error=True)
    assert results["read"] == ToolResult("contents of y")


def test_an_unknown_tool_is_a_bare_info_and_unannotated_tools_declare_nothing(
    mode: Mode,
) -> None:
    """A call to a tool the agent lacks still has a ``ToolInfo`` (its name only); a plain
    function declares no annotations (every hint ``None``)."""
    seen = Seen()
    run_calls(
        mode,
        [read],
        ToolCall("c1", "nope", {}),
        ToolCall("c2", "read", {"path": "y"}),
        callbacks=[seen],
    )
    assert seen.tools == [ToolInfo("nope"), ToolInfo("read", None, "Read a file.")]
    assert seen.tools[1].annotations == ToolAnnotations(None, None, None, None)


class Rename:
    """Turns every ``read`` into a ``remove`` of the same path."""

    def before_tool(self, ctx: ToolContext) -> BeforeResult[ToolContext, ToolResult]:
        """Rename the call."""
        if ctx.call.name == "read":
            return Cont(replace(ctx, call=replace(ctx.call, name="remove")))
        return Cont(ctx)


def test_the_info_follows_the_calls_current_name(mode: Mode) -> None:
    """A hook that renames a call cannot hide the new tool's annotations from the guards
    after it: they see the tool the call will run."""
    result = run_calls(
        mode,
        [as_tool(remove, annotations=DESTRUCTIVE), read],
        ToolCall("c1", "read", {"path": "x"}),
        callbacks=[Rename(), NoDestruction()],
    )
    [event] = events_of(result, ToolResultEvent)
    assert event.result == ToolResult("remove is destructive: refused", is_error=True)


class PauseDestructive:
    """Pauses destructive calls until a human decided."""

    def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
        """Pause a destructive call once."""
        if ctx.tool.annotations.destructive and ctx.decision is None:
            return Pause(f"{ctx.tool.name} changes things: allow?")
        return Cont(ctx)


def test_a_guard_pauses_on_a_declared_annotation(mode: Mode) -> None:
    """The pause names the tool; the read-only call ran."""
    result = run_calls(
        mode,
        [as_tool(remove, annotations=DESTRUCTIVE), read],
        ToolCall("c1", "remove", {"path": "x"}),
        callbacks=[PauseDestructive()],
    )
    [request] = result.pending
    assert request.reason == "remove changes things: allow?"


@pytest.mark.parametrize(
    ("attribute", "value", "words"),
    [
        (
            "annotations",
            {"destructive": True},
            "tool 'bad''s annotations must be a ToolAnnotations",
        ),
        ("server", 3, "tool 'bad''s server must be a str or None, got int 3"),
        ("output_schema", "object", "tool 'bad''s output_schema must be a JSON schema"),
    ],
)
def test_a_tool_objects_declarations_are_checked_when_the_agent_is_made(
    attribute: str, value: object, words: str
) -> None:
    """Wrong declarations fail at ``Agent(...)``, naming the tool, never mid-run."""

    class Bad:
        name = "bad"

        def run(self, args: Mapping[str, Any], /) -> str:
            return ""

    tool = Bad()
    setattr(tool, attribute, value)
    with pytest.raises(TypeError, match=words.replace("(", r"\(")):
        Agent("a", ScriptedModel(["x"]), tools=[tool])


def test_annotations_are_for_functions_and_must_be_tool_annotations() -> None:
    """``as_tool(obj, annotations=)`` is refused (objects declare their own); a hint that
    is not a bool or None is refused."""
    with pytest.raises(TypeError, match="declares a function's effects"):
        as_tool(Search(), annotations=DESTRUCTIVE)
    with pytest.raises(TypeError, match="FunctionTool annotations must be a ToolAnnotations"):
        as_tool(read, annotations={"read_only": True})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolAnnotations\.read_only must be True, False or None"):
        ToolAnnotations(read_only="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolInfo\.annotations must be a ToolAnnotations"):
        ToolInfo("x", annotations=None)  # type: ignore[arg-type]
