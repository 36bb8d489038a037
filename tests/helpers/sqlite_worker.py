"""A process that runs one turn on a session of a ``SQLiteSessionStore`` file (tests start it).

``python -m tests.helpers.sqlite_worker DB MESSAGE GO [--die] [--hold S] [--lease S]
[--later S]`` prints ``ready``, waits until the file ``GO`` exists (so several workers
start their runs together), then opens the store (making the file, if it is the first) and runs
``MESSAGE`` on session ``("u", "s")``. The agent's first answer calls the ``hold``
tool, which sleeps ``--hold`` seconds inside the run (or, with ``--die``, ends the
process on the spot with ``os._exit``, as a crash would); then it answers
``"done: MESSAGE"``. Its last line is ``ok``, ``busy HOLDER`` or ``conflict``. With
``--later S`` the store reads its lease clock ``S`` seconds ahead, as a process started
that much later would: a test sees a lease expire without waiting for it.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import runner._sessions.sqlite.store as sqlite_store
from runner import (
    Agent,
    ModelResponse,
    Runner,
    ScriptedModel,
    SessionBusy,
    SessionConflict,
    SQLiteSessionStore,
    ToolCall,
)


class Later:
    """The ``time`` the store reads its lease clock from, ``ahead`` seconds in the future."""

    def __init__(self, ahead: float) -> None:
        self.ahead = ahead

    def time(self) -> float:
        """Now, as seen ``ahead`` seconds from now."""
        return time.time() + self.ahead


def main(argv: list[str] | None = None) -> None:
    """Run one turn as the arguments say and print how it ended."""
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("message")
    parser.add_argument("go")
    parser.add_argument("--die", action="store_true")
    parser.add_argument("--hold", type=float, default=0.0)
    parser.add_argument("--lease", type=float, default=60.0)
    parser.add_argument("--later", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.later:
        vars(sqlite_store)["time"] = Later(args.later)  # what the store reads its clock from

    def hold() -> str:
        """Stay inside the run for a while, or die in it."""
        if args.die:
            os._exit(3)
        time.sleep(args.hold)
        return "held"

    script: list[ModelResponse | str] = [
        ModelResponse(tool_calls=(ToolCall("c1", "hold", {}),)),
        f"done: {args.message}",
    ]
    agent = Agent("assistant", ScriptedModel(script), tools=[hold])
    go = Path(args.go)
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.005)
    with (
        SQLiteSessionStore(args.db) as store,
        Runner(agent, sessions=store, session_lease=args.lease) as runner,
    ):
        try:
            runner.run(args.message, user_id="u", session_id="s")
        except SessionBusy as busy:
            print(f"busy {busy.holder}", flush=True)
        except SessionConflict:
            print("conflict", flush=True)
        else:
            print("ok", flush=True)


if __name__ == "__main__":
    main()
