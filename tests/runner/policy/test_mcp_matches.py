"""Matches on MCP tools: checked against the tools a real (in-process) server lists,
once it listed them; a match that fits one of them guards it."""

from __future__ import annotations

import pytest

from hooks import Cont, Halt, InvalidCallbacks, ToolAnnotations, ToolContext, ToolResult, matched
from runner import Agent, MCPTools, Runner, ScriptedModel, ToolCall, ToolResultEvent
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import Mode, calling, drive


class Deny:
    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        return Halt(ToolResult(f"{ctx.call.name} denied", is_error=True))


def local(q: str) -> str:
    """A function tool beside the server's."""
    return q


def notes_agent() -> Agent:
    model = ScriptedModel(
        [
            calling(
                ToolCall("c1", "notes_add", {"a": 1, "b": 2}),
                ToolCall("c2", "notes_delete", {"title": "x"}),
            ),
            "done",
        ]
    )
    return Agent("a", model, tools=[MCPTools("notes", server=notes_server()), local])


def results(result: object) -> dict[str, str]:
    return {
        e.call.name: e.result.content
        for e in result.events  # type: ignore[attr-defined]
        if isinstance(e, ToolResultEvent)
    }


def test_a_match_on_listed_tools_guards_them(mode: Mode) -> None:
    """By the server's own name of a tool, and by annotations the server declares."""
    by_name = matched(Deny(), tools="add", server="notes")
    with Runner(notes_agent()) as runner:
        result = drive(runner, mode, "go", callbacks=[by_name])
    assert results(result)["notes_add"] == "notes_add denied"
    assert results(result)["notes_delete"] != "notes_delete denied"
    destructive = matched(Deny(), annotations=ToolAnnotations(destructive=True))
    with Runner(notes_agent()) as runner:
        result = drive(runner, mode, "go", callbacks=[destructive])
    assert results(result)["notes_delete"] == "notes_delete denied"
    assert results(result)["notes_add"] != "notes_add denied"


def test_a_match_no_listed_tool_fits_is_refused_once_listed(mode: Mode) -> None:
    """Not known when the runner is made (the server has not listed yet): refused when
    the run has the server's list, with a did-you-mean, and again on every run."""
    typo = matched(Deny(), tools="notes_delte")
    with Runner(notes_agent(), callbacks=[typo]) as runner:
        for _ in range(2):
            with pytest.raises(InvalidCallbacks, match="did you mean 'notes_delete'"):
                drive(runner, mode, "go")


def test_a_match_bound_to_a_server_it_cannot_fit_is_refused(mode: Mode) -> None:
    with Runner(notes_agent()) as runner:
        with pytest.raises(InvalidCallbacks, match="can match no tool"):
            drive(runner, mode, "go", callbacks=[matched(Deny(), server="notes", tools="local")])
        allowed = matched(Deny(), server="notes", tools="local", allow_unmatched=True)
        assert drive(runner, mode, "go", callbacks=[allowed]).output == "done"
