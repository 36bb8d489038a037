"""One guarded agent, any provider: ``HOOKLINE_MODEL`` picks the model, the callbacks stay.

``python -m examples.providers`` runs offline on the embedded ``ScriptedModel``. The
same agent, tools and guards run on a real model when ``HOOKLINE_MODEL`` names one
(``examples.quickstart.model_from_env``)::

    HOOKLINE_MODEL=openai:gpt-5.5 OPENAI_API_KEY=...                 # the Responses API
    HOOKLINE_MODEL=openai-chat:llama3.2 OPENAI_BASE_URL=http://localhost:11434/v1
    HOOKLINE_MODEL=anthropic:claude-sonnet-5-5 ANTHROPIC_API_KEY=...  # the Messages API

The agent keeps notes with three tools; the callbacks are provider-blind:

- ``NoDestruction`` (``before_tool``) halts every call to a tool that declares itself
  destructive (``ctx.tool.annotations``), whatever the model asked;
- ``LoopGuard`` halts the third identical call; ``TruncateToolResult`` cuts long notes;
- an observer prints which callback decided each hook point that changed something.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Final

from hooks import BeforeResult, Cont, Halt, HookEvent, ToolContext, ToolResult, observing
from runner import (
    Agent,
    LoopGuard,
    Model,
    Rule,
    Runner,
    RunResult,
    ScriptedModel,
    ToolAnnotations,
    TruncateToolResult,
    as_tool,
)

MESSAGES: Final = ("read groceries", "delete groceries", "what do my notes say?")

NOTES: Final = {"groceries": "eggs, milk, bread", "todo": "call the plumber"}


def read_note(name: str) -> str:
    """Read one note.

    Args:
        name: the note's name.
    """
    return NOTES.get(name, f"there is no note {name!r}")


def list_notes() -> str:
    """List the notes' names."""
    return ", ".join(sorted(NOTES))


def delete_note(name: str) -> str:
    """Delete one note.

    Args:
        name: the note's name.
    """
    NOTES.pop(name, None)  # never reached while NoDestruction is in the callbacks
    return f"deleted {name}"


TOOLS: Final = (
    as_tool(read_note, annotations=ToolAnnotations(read_only=True)),
    as_tool(list_notes, annotations=ToolAnnotations(read_only=True)),
    as_tool(delete_note, annotations=ToolAnnotations(destructive=True)),
)


class NoDestruction:
    """Halts every call to a tool that says it destroys something."""

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Refuse a destructive tool; let the rest run."""
        if ctx.tool.annotations.destructive:
            refusal = f"{ctx.tool.name} is destructive and this agent may not use it"
            return Halt(ToolResult(refusal, is_error=True))
        return Cont(ctx)


@dataclass
class Decisions:
    """The hook points a callback decided, as ``point tool: outcome (callback)`` lines."""

    lines: list[str] = field(default_factory=list[str])

    def see(self, event: HookEvent) -> None:
        """Keep the dispatches some callback decided."""
        if event.callback is not None:
            where = f" {event.tool}" if event.tool else ""
            self.lines.append(f"{event.point}{where}: {event.outcome} ({event.callback})")


def offline_model() -> ScriptedModel:
    """The embedded model: asks for the tool a message names, then reads its result out."""
    return ScriptedModel(
        rules=[
            Rule(r"^read (?P<name>\w+)$", tool="read_note", args={"name": "{name}"}),
            Rule(r"^delete (?P<name>\w+)$", tool="delete_note", args={"name": "{name}"}),
            Rule(r"notes", tool="list_notes", args={}),
            Rule(r".*", on="tool", reply="{content}"),
        ],
        default="I can read, list and (not) delete notes.",
    )


def agent(model: Model) -> Agent:
    """The notes agent on ``model``."""
    return Agent(
        "notes",
        model,
        tools=list(TOOLS),
        instruction="You keep the user's notes with your tools. Answer in one sentence.",
    )


def run(model: Model) -> list[tuple[RunResult, list[str]]]:
    """Each of ``MESSAGES`` in one session on ``model``: its result and the decisions."""
    done: list[tuple[RunResult, list[str]]] = []
    with Runner(agent(model)) as runner:
        session = None
        for message in MESSAGES:
            decisions = Decisions()
            callbacks = [
                NoDestruction(),
                LoopGuard(3),
                TruncateToolResult(2_000),
                observing(decisions.see),
            ]
            result = runner.run(message, session_id=session, callbacks=callbacks)
            session = result.session_id
            done.append((result, decisions.lines))
    return done


def main() -> None:
    """Run the messages on the model ``HOOKLINE_MODEL`` names (offline by default)."""
    from examples.quickstart import model_from_env

    model = model_from_env() if os.environ.get("HOOKLINE_MODEL") else offline_model()
    print(f"model: {type(model).__name__} {getattr(model, 'model', '')}".rstrip())
    for message, (result, decided) in zip(MESSAGES, run(model), strict=True):
        print(f"> {message}\n  {result.output}")
        for line in decided:
            print(f"    {line}")
    close = getattr(model, "close", None)
    if callable(close):
        close()


if __name__ == "__main__":
    main()
