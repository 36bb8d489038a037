"""Ask a human before a side effect: ``Pause``, a saved ``RunState``, a resume after a restart.

A janitor agent deletes files. ``AskBeforeDeleting`` lets every other tool through but
pauses each ``delete_file`` call until a human decided: the run ends ``"paused"`` with
one request per call. The program then "restarts" -- a new store and a new runner over
the same SQLite file, nothing else kept -- finds the paused run by its id, approves one
deletion and rejects the other, and the run finishes: the approved file is gone, the
model is told why the other one stays. On resume the guard runs again and sees the
decision in ``ctx.decision``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import override

from hooks import Approve, BeforeTool, Cont, Halt, PausableResult, Pause, Reject
from runner import (
    Agent,
    ModelRequest,
    ModelResponse,
    PendingRequest,
    Runner,
    RunResult,
    SQLiteSessionStore,
    ToolCall,
    ToolContext,
    ToolResult,
)


def make_tools(folder: Path) -> list[object]:
    """The janitor's tools, working in ``folder``."""

    def list_files() -> str:
        """The files in the folder."""
        return ", ".join(sorted(path.name for path in folder.iterdir()))

    def delete_file(path: str) -> str:
        """Delete one file of the folder."""
        (folder / path).unlink()
        return f"deleted {path}"

    return [list_files, delete_file]


class AskBeforeDeleting(BeforeTool):
    """Deleting waits for a human; a decision on a resumed call is checked once more."""

    @override
    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        if ctx.call.name != "delete_file":
            return Cont(ctx)
        if ctx.decision is None:
            return Pause(f"delete {ctx.call.args['path']}?")
        if ".." in str(ctx.call.args.get("path")):  # an edit cannot leave the folder
            return Halt(ToolResult("refused: outside the folder", is_error=True))
        return Cont(ctx)


class JanitorModel:
    """A stand-in for a real model that answers from the conversation alone, so a new
    process picks up where the old one stopped: list, delete the clutter, report."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next step, read off the last message."""
        last = request.messages[-1]
        if last.role == "user":
            return ModelResponse(tool_calls=(ToolCall("c1", "list_files"),))
        if last.name == "list_files":
            clutter = [name for name in last.content.split(", ") if not name.endswith(".md")]
            calls = [ToolCall(f"d{n}", "delete_file", {"path": f}) for n, f in enumerate(clutter)]
            return ModelResponse(tool_calls=tuple(calls))
        results = [m.content for m in request.messages if m.role == "tool"][1:]
        return ModelResponse(f"Done: {'; '.join(results)}.")


def make_runner(store: SQLiteSessionStore, folder: Path) -> Runner:
    """The janitor over ``store``, working in ``folder``."""
    agent = Agent("janitor", JanitorModel(), tools=make_tools(folder))
    return Runner(agent, sessions=store, callbacks=[AskBeforeDeleting()])


@dataclass(frozen=True)
class Demo:
    """What happened: the paused run, its requests, the resumed run, the folder after."""

    paused: RunResult
    pending: tuple[PendingRequest, ...]
    finished: RunResult
    left: list[str]


def run_demo(directory: Path) -> Demo:
    """Pause, restart, approve one deletion and reject the other, finish."""
    folder = directory / "files"
    folder.mkdir()
    for name in ("old.log", "notes.txt", "keep.md"):
        (folder / name).write_text(name)
    database = directory / "janitor.db"
    with SQLiteSessionStore(database) as store, make_runner(store, folder) as runner:
        paused = runner.run("tidy the folder", user_id="ann", session_id="chores")
    # A restart: only the file and the run id are kept.
    with SQLiteSessionStore(database) as store, make_runner(store, folder) as runner:
        state = runner.paused(paused.run_id)
        assert state is not None  # the store kept it
        notes, old_log = state.pending  # in call order: the listing is sorted
        finished = runner.resume(state, {old_log.id: Approve(), notes.id: Reject("keep notes")})
    return Demo(paused, state.pending, finished, sorted(p.name for p in folder.iterdir()))


def main() -> None:
    """Run the demo in a temporary directory and print what happened."""
    with tempfile.TemporaryDirectory() as directory:
        demo = run_demo(Path(directory))
    print(f"run {demo.paused.run_id[:8]}: {demo.paused.status}")
    for request in demo.pending:
        print(f"  waiting: {request.reason} (request {request.id})")
    print("restarted; approved old.log, rejected notes.txt")
    print(f"run {demo.finished.run_id[:8]}: {demo.finished.status}: {demo.finished.output}")
    print(f"left in the folder: {', '.join(demo.left)}")


if __name__ == "__main__":
    main()
