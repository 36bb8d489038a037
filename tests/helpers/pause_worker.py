"""A process that pauses runs in a ``SQLiteSessionStore`` file, for an inbox of another process.

``python -m tests.helpers.pause_worker DB SESSION...`` runs one turn on each session
``("u", SESSION)``: the model asks to delete two files at once, ``AskFirst`` pauses both
calls, and the run ends ``"paused"``. It prints each run's id on a line of its own,
then ``ok``. ``runner_for(store)`` builds the same runner, so a test resumes those runs
in its own process.
"""

from __future__ import annotations

import sys

from hooks import Cont, PausableResult, Pause, ToolContext
from runner import Agent, ModelResponse, Runner, ScriptedModel, SessionStore, ToolCall, ToolResult


class AskFirst:
    """Pauses every ``delete_file`` call until a human decided."""

    def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
        """Pause ``delete_file`` (undecided); let anything else through."""
        if ctx.call.name == "delete_file" and ctx.decision is None:
            return Pause(f"delete {ctx.call.args['path']}?")
        return Cont(ctx)


def delete_file(path: str) -> str:
    """Delete a file (pretend)."""
    return f"deleted {path}"


def runner_for(store: SessionStore, *, resuming: bool = False) -> Runner:
    """The runner whose runs pause: two deletes asked at once, then an answer (``resuming``:
    the answer only, for a runner that resumes those runs)."""
    script: list[ModelResponse | str] = [
        ModelResponse(
            tool_calls=(
                ToolCall("c1", "delete_file", {"path": "a.txt"}),
                ToolCall("c2", "delete_file", {"path": "b.txt"}),
            )
        ),
        "done",
    ]
    if resuming:
        del script[0]
    agent = Agent("files", ScriptedModel(script), tools=[delete_file], callbacks=[AskFirst()])
    return Runner(agent, sessions=store)


def main(argv: list[str]) -> None:
    """Pause one run per session named, printing the run ids."""
    from runner import SQLiteSessionStore  # the helper's own process only

    db, *sessions = argv
    with SQLiteSessionStore(db) as store:
        for session in sessions:
            with runner_for(store) as runner:
                result = runner.run(f"clean up {session}", user_id="u", session_id=session)
            assert result.status == "paused", result.status
            print(result.run_id, flush=True)
    print("ok", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
