"""Typed callbacks: one class implementing four protocols, and a module checked by mypy.

``Inspector`` subclasses ``BeforeModel``, ``AfterModel``, ``BeforeTool`` and
``AfterTool``; ``@override`` on each method makes mypy check its signature against the
protocol (and catch a misspelled name). Each after hook takes its outcome apart with an
exhaustive ``match``: leave out a case and mypy reports the ``assert_never`` line.
``examples._budget_module`` is a plain module; assigning it to a ``hooks.BeforeModel``
name below has mypy check it too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final, assert_never

from typing_extensions import override

import examples._budget_module as budget
import hooks
from hooks import (
    BeforeResult,
    Cont,
    Failure,
    Halt,
    ModelContext,
    ModelResponse,
    Outcome,
    Result,
    Success,
    ToolCall,
    ToolContext,
    ToolResult,
)
from runner import Agent, Rule, Runner, ScriptedModel

# mypy checks the module against the protocol, as it checks Inspector's methods.
budget_check: hooks.BeforeModel = budget

NEEDS_A_HUMAN: Final = frozenset({"delete_file"})
MAX_CHARS: Final = 40


class Inspector(hooks.BeforeModel, hooks.AfterModel, hooks.BeforeTool, hooks.AfterTool):
    """Log model and tool calls, refuse dangerous tools, cut long tool results short."""

    def __init__(self) -> None:
        self.log: list[str] = []

    @override
    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        count = len(ctx.request.messages)
        self.log.append(f"before_model  {count} message{'s' * (count != 1)} -> cont")
        return Cont(ctx)

    @override
    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        match outcome:
            case Success(ModelResponse(tool_calls=calls)) if calls:
                names = ", ".join(call.name for call in calls)
                self.log.append(f"after_model   success: calls {names}")
            case Success(response):
                self.log.append(f"after_model   success: {response.text!r}")
            case Failure(error):
                self.log.append(f"after_model   failure: {type(error).__name__}")
            case _:
                assert_never(outcome)
        return outcome

    @override
    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        name = ctx.call.name
        if name in NEEDS_A_HUMAN:
            self.log.append(f"before_tool   {name} -> halt (needs a human)")
            return Halt(ToolResult(f"refused: {name} needs a human", is_error=True))
        self.log.append(f"before_tool   {name} -> cont")
        return Cont(ctx)

    @override
    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        match outcome:
            case Success(result) if len(result.content) > MAX_CHARS:
                self.log.append(f"after_tool    success: {len(result.content)} chars, cut")
                return Success(replace(result, content=result.content[:MAX_CHARS] + "..."))
            case Success(result):
                self.log.append(f"after_tool    success: {result.content!r}")
            case Failure(error):
                self.log.append(f"after_tool    failure: {type(error).__name__}: {error}")
            case _:
                assert_never(outcome)
        return outcome


# -- tools and model


def read_file(path: str) -> str:
    """Read a text file."""
    return f"{path}: " + "lorem ipsum " * 10


def delete_file(path: str) -> str:
    """Delete a file (never reached here: Inspector refuses it)."""
    return f"deleted {path}"


def tidy_model() -> ScriptedModel:
    """Read then delete in one response; afterwards keep reading until stopped."""
    both = (
        ToolCall("call_1", "read_file", {"path": "notes.txt"}),
        ToolCall("call_2", "delete_file", {"path": "notes.txt"}),
    )
    return ScriptedModel(
        [ModelResponse(text="Reading, then deleting.", tool_calls=both)],
        rules=[
            Rule(r"^refused", on="tool", reply="I read notes.txt; deleting it needs you."),
            Rule(r"keep reading", tool="read_file", args={"path": "notes.txt"}),
            Rule(r".*", on="tool", tool="read_file", args={"path": "notes.txt"}),
        ],
    )


MESSAGES: Final = ("tidy up notes.txt", "keep reading notes.txt")


def run_inspected() -> list[tuple[str, list[str], str]]:
    """Each message, what ``Inspector`` logged for it, and the answer."""
    agent = Agent("assistant", tidy_model(), tools=[read_file, delete_file])
    runs: list[tuple[str, list[str], str]] = []
    with Runner(agent) as runner:
        for message in MESSAGES:
            inspector = Inspector()
            # The budget goes first: a call it halts never reaches the inspector.
            result = runner.run(message, callbacks=[budget, inspector])
            runs.append((message, inspector.log, result.output))
    return runs


def main() -> None:
    """Run two messages through Inspector and the budget module; print what each saw."""
    print(f"typed callbacks: Inspector (four protocols) + budget module ({budget.LIMIT} calls)")
    for message, log, answer in run_inspected():
        print(f"\nuser: {message}")
        for line in log:
            print(f"  {line}")
        print(f"answer: {answer}")


if __name__ == "__main__":
    main()
