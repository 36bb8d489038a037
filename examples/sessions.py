"""A conversation that outlives its process: ``SQLiteSessionStore`` and session-scoped state.

A research assistant may call the paid ``search`` tool three times per session --
across runs, and across restarts. ``SearchBudget`` keeps the count under a
session-scoped key, ``StateKey[int]("searches", scope="session")``: the runner seeds
each run's state with what the session kept and saves the count back with the
session's messages. A plain (invocation-scoped) key would start from nothing every run.

Two turns run on one runner; then the program "restarts" -- a new store and a new
runner over the same file -- and the conversation, and the count, go on: the third
search runs, the fourth is refused by the budget and the model is told why. While a
run holds the session, another runner (in this process or another) cannot start one
on it: ``SessionBusy``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from typing_extensions import override

from hooks import AfterTool, BeforeResult, BeforeTool, Cont, Halt, Outcome, Result, Success
from runner import (
    Agent,
    Rule,
    Runner,
    RunResult,
    ScriptedModel,
    SessionBusy,
    SQLiteSessionStore,
    StateKey,
    ToolContext,
    ToolResult,
)

SEARCHES: Final = StateKey[int]("searches", scope="session")
LIMIT: Final = 3


def search(query: str) -> str:
    """Search the web (a paid call)."""
    return f"3 results for {query!r}"


class SearchBudget(BeforeTool, AfterTool):
    """At most ``LIMIT`` searches per session: refuses the next, counts each that ran."""

    @override
    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        used = ctx.invocation.state.get(SEARCHES, 0)
        if ctx.call.name == "search" and used >= LIMIT:
            refusal = f"search budget used up ({LIMIT} per session)"
            return Halt(ToolResult(refusal, is_error=True))
        return Cont(ctx)

    @override
    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        if ctx.call.name == "search" and isinstance(outcome, Success):
            ctx.invocation.state.update(SEARCHES, lambda n: n + 1, default=0)
        return outcome


def make_runner(store: SQLiteSessionStore) -> Runner:
    """The assistant over ``store``: searches what it is asked to, reports what it found."""
    model = ScriptedModel(
        rules=[
            Rule(r"search (?P<q>.+)", tool="search", args={"query": "{q}"}),
            Rule(r".*", on="tool", reply="{content}"),
        ]
    )
    agent = Agent("researcher", model, tools=[search], callbacks=[SearchBudget()])
    return Runner(agent, sessions=store)


@dataclass(frozen=True)
class Demo:
    """What the program did: each turn's result, the refused run, what the file holds."""

    results: list[RunResult]
    busy: SessionBusy
    messages: int
    state: dict[str, object]


def run_demo(path: Path) -> Demo:
    """Two turns, a restart over the same file, two more turns; a busy session shown."""
    results: list[RunResult] = []
    with SQLiteSessionStore(path) as store, make_runner(store) as runner:
        for question in ("search sqlite wal", "search sqlite leases"):
            results.append(runner.run(question, user_id="ann", session_id="research"))
    # A restart: nothing survives but the file.
    with SQLiteSessionStore(path) as store, make_runner(store) as runner:
        for question in ("search busy timeout", "search one more thing"):
            results.append(runner.run(question, user_id="ann", session_id="research"))
        store.acquire("ann", "research", owner="run-elsewhere", ttl=30)  # as if mid-run
        try:
            runner.run("search anything", user_id="ann", session_id="research")
        except SessionBusy as busy:
            refused = busy
        else:
            raise AssertionError("a held session took a second run")
        store.release("ann", "research", owner="run-elsewhere")
        session = store.load("ann", "research")
    return Demo(results, refused, len(session.messages), dict(session.state))


def main() -> None:
    """Run the demo in a temporary directory and print what happened."""
    with tempfile.TemporaryDirectory() as directory:
        demo = run_demo(Path(directory) / "sessions.db")
    for number, result in enumerate(demo.results, 1):
        print(f"turn {number}: {result.output}")
    print(f"refused while held elsewhere: {demo.busy}")
    print(f"the file keeps {demo.messages} messages and the session state {demo.state}")


if __name__ == "__main__":
    main()
