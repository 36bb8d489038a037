"""Fixtures of the MCP tests: a notes server on each transport (in-process, stdio, HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from runner import MCPTools, Runner, RunResult
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import Mode

ROOT = Path(__file__).resolve().parents[3]
STDIO = [sys.executable, "-m", "tests.helpers.mcp_servers", "stdio"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class HTTPNotes:
    """A notes server on streamable HTTP in a subprocess of its own, on a fixed port, so it
    can stop and start again at the same URL."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server; return once it accepts connections (20 seconds at most)."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.mcp_servers", "http", str(self.port)],
            cwd=ROOT,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                msg = f"the HTTP notes server exited with {self.process.returncode}"
                raise RuntimeError(msg)
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2),
            ):
                return
            time.sleep(0.05)
        msg = "the HTTP notes server did not listen within 20 seconds"
        raise RuntimeError(msg)

    def stop(self) -> None:
        """Kill the server and wait for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=20)
        self.process = None


@pytest.fixture
def http_notes() -> Iterator[HTTPNotes]:
    """A started ``HTTPNotes``, stopped after the test."""
    server = HTTPNotes()
    server.start()
    try:
        yield server
    finally:
        server.stop()


Notes = Callable[..., MCPTools]


@pytest.fixture(
    params=[
        "memory",
        pytest.param("stdio", marks=pytest.mark.subprocess),
        pytest.param("http", marks=pytest.mark.subprocess),
    ]
)
def notes(request: pytest.FixtureRequest) -> Iterator[Notes]:
    """Makes ``MCPTools("notes", ...)`` on each transport in turn (keywords passed on)."""
    kind: str = request.param
    if kind == "http":
        server = HTTPNotes()
        server.start()
        try:
            yield lambda **options: MCPTools("notes", url=server.url, **options)
        finally:
            server.stop()
        return
    if kind == "stdio":
        yield lambda **options: MCPTools("notes", command=STDIO, **options)
        return
    yield lambda **options: MCPTools("notes", server=notes_server(), **options)


class OneLoop:
    """Runs of a runner in ``mode``: sync ``run``s, or ``arun``s all on one event loop kept
    open until the block ends, so an async run finds the connection the last one made."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.loop: asyncio.Runner | None = None

    def __enter__(self) -> OneLoop:
        if self.mode == "async":
            self.loop = asyncio.Runner()
        return self

    def __exit__(self, *_: object) -> None:
        if self.loop is not None:
            self.loop.close()

    def drive(self, runner: Runner, message: str = "go") -> RunResult:
        """One run of ``runner``: ``run``, or ``arun`` on the block's loop."""
        if self.loop is None:
            return runner.run(message)
        return self.loop.run(runner.arun(message))
