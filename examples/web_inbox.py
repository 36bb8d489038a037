"""The approval inbox in a browser: a paused run waiting in a store, served by ``runner.web``.

A janitor agent asks to delete files; ``AskBeforeDeleting`` pauses each deletion for a
human. ``python -m examples.web_inbox`` leaves such a paused run in a temporary SQLite
store, serves the inbox over it on 127.0.0.1 for a few seconds (what
``python -m runner.web --store FILE --agent examples.web_inbox:make_runner`` serves for
as long as it runs), prints the address with its token and what the inbox lists, and stops.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from typing_extensions import override

from hooks import BeforeTool, Cont, PausableResult, Pause
from runner import (
    Agent,
    ModelRequest,
    ModelResponse,
    Runner,
    RunResult,
    SessionStore,
    ToolCall,
    ToolContext,
    ToolResult,
)

FOLDER_ENV = "HOOKLINE_JANITOR_FOLDER"


class AskBeforeDeleting(BeforeTool):
    """Deleting waits for a human; any other tool, and a decided call, goes on."""

    @override
    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        if ctx.call.name == "delete_file" and ctx.decision is None:
            return Pause(f"delete {ctx.call.args.get('path')}?")
        return Cont(ctx)


class JanitorModel:
    """Asks to delete two files, then sums up: it answers from the conversation alone."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next step, read off the last message."""
        if request.messages[-1].role == "user":
            calls = (
                ToolCall("c1", "delete_file", {"path": "old.log"}),
                ToolCall("c2", "delete_file", {"path": "notes.txt"}),
            )
            return ModelResponse(tool_calls=calls)
        results = [message.content for message in request.messages if message.role == "tool"]
        return ModelResponse("Done: " + "; ".join(results))


def delete_file(path: str) -> str:
    """Delete one file (here: say so; nothing on disk is touched)."""
    return f"deleted {path}"


def make_runner(store: SessionStore) -> Runner:
    """The janitor over ``store``: what ``python -m runner.web --agent`` is pointed at."""
    agent = Agent("janitor", JanitorModel(), tools=[delete_file])
    return Runner(agent, sessions=store, callbacks=[AskBeforeDeleting()])


def pause_one(store: SessionStore, *, user_id: str = "ann") -> RunResult:
    """Run the janitor until it pauses on its two deletions."""
    with make_runner(store) as runner:
        result = runner.run("tidy the folder", user_id=user_id)
    assert result.status == "paused", result.status
    return result


def main() -> None:
    """Leave a paused run in a temporary store, serve the inbox a few seconds, print, stop."""
    from runner import SQLiteSessionStore
    from runner.web import serve_in_thread

    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    with tempfile.TemporaryDirectory() as directory:
        database = Path(directory) / "sessions.db"
        with SQLiteSessionStore(database) as store:
            paused = pause_one(store)
            with serve_in_thread(make_runner, store) as server:
                print(f"inbox: {server.address}")
                request = urllib.request.Request(
                    server.url("/api/paused"), headers={"Authorization": f"Bearer {server.token}"}
                )
                with urllib.request.urlopen(request, timeout=10) as response:
                    listed = json.load(response)
                for run in listed["runs"]:
                    for pending in run["pending"]:
                        print(f"  waiting in run {run['run_id'][:8]}: {pending['reason']}")
                time.sleep(seconds)
        print(f"stopped; run {paused.run_id[:8]} still waits in {database.name}")


if __name__ == "__main__":
    main()
