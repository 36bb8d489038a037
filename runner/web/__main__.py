"""``python -m runner.web --store FILE --agent module:name``: the inbox, the traces and the
AG-UI endpoint (at ``/agui``), served until stopped.

``--agent`` names an ``Agent``, a ``Runner`` or a function making a ``Runner`` from the
store (``module.path:name``, imported). The address, with its token, is printed when
the server listens; ``--port 0`` (the default) takes a free port.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, cast

from runner import Agent, Runner, SessionStore, SQLiteSessionStore
from runner.web._agui import agui_app
from runner.web._app import RunnerSource, inbox_app
from runner.web._security import LOCAL_HOSTS
from runner.web._serve import Server, bind, uvicorn_server

__all__ = ["load_source", "main"]


def load_source(spec: str) -> RunnerSource:
    """The ``Agent``, ``Runner`` or runner factory ``module.path:name`` names, as a source."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name.isidentifier():
        msg = f"--agent must be module.path:name, got {spec!r}"
        raise SystemExit(msg)
    found: object = getattr(importlib.import_module(module_name), name, None)
    if isinstance(found, Agent):
        agent: Agent[Any, Any] = found  # pyright: ignore[reportUnknownVariableType]  # any Agent

        def make(store: SessionStore) -> Runner:
            return Runner(agent, sessions=store)

        return make
    if isinstance(found, Runner) or callable(found):
        return cast(RunnerSource, found)  # a factory: inbox_app checks what it makes
    msg = f"--agent {spec!r} names no Agent, Runner or function making a Runner"
    raise SystemExit(msg)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse ``argv``, serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m runner.web", description=__doc__)
    parser.add_argument("--store", required=True, help="the SQLiteSessionStore file")
    parser.add_argument("--agent", required=True, help="module.path:name of the agent")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the port (0: a free one)")
    parser.add_argument(
        "--capture", action="store_true", help="serve run content (messages, args, results)"
    )
    args = parser.parse_args(argv)
    source = load_source(args.agent)
    with SQLiteSessionStore(args.store) as store:
        runner = source if isinstance(source, Runner) else source(store)
        app = inbox_app(
            runner,
            store,
            capture=True if args.capture else None,
            hosts=LOCAL_HOSTS | {args.host.lower()},
            agui=agui_app(runner),  # behind the same token and CSRF checks
        )
        sock = bind(args.host, args.port)
        server = Server(app, args.host, sock.getsockname()[1])
        print(f"hookline inbox: {server.address}", flush=True)
        try:
            uvicorn_server(app).run(sockets=[sock])
        finally:
            sock.close()
            app.runner.close()


if __name__ == "__main__":
    main(sys.argv[1:])
