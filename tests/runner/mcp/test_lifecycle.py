"""MCP connections' lives: reconnecting after a server died, no orphan after close,
the extra missing, the inputs of ``MCPTools`` refused."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest

from hooks import Cont, Failure
from runner import (
    Agent,
    MCPError,
    MCPTools,
    ModelRequest,
    ModelResponse,
    Runner,
    RunResult,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultEvent,
)
from runner._mcp.hub import Hub
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import Mode, calling, drive
from tests.runner.mcp.conftest import STDIO, HTTPNotes, OneLoop


def results(result: RunResult) -> list[ToolResult]:
    """The tool results a run recorded, in order."""
    return [event.result for event in result.events if isinstance(event, ToolResultEvent)]


class Errors:
    """Records the tool errors the error hooks see."""

    def __init__(self) -> None:
        self.seen: list[Exception] = []

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        return Cont(ctx)

    def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext) -> Failure[Exception]:
        self.seen.append(failure.failure())
        return failure


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def scripted(*names: str) -> ScriptedModel:
    """A model that calls each tool of ``names`` in a step of its own, then answers."""
    return ScriptedModel(
        [*(calling(ToolCall(str(n), name, {})) for n, name in enumerate(names)), "done"]
    )


@pytest.mark.subprocess
def test_a_stdio_server_that_died_mid_call_is_started_again(mode: Mode) -> None:
    """The call under way when the stdio process died fails as a transient ``MCPError``
    the error hooks see; the next call starts the server again."""
    errors = Errors()
    model = scripted("notes_pid", "notes_crash", "notes_pid")
    agent = Agent("ops", model, tools=[MCPTools("notes", command=STDIO)], callbacks=[errors])
    with Runner(agent) as runner:
        result = drive(runner, mode, "go")
    first, crashed, second = results(result)
    (error,) = errors.seen
    assert isinstance(error, MCPError)
    assert error.transient
    assert crashed.is_error
    assert first.content != second.content
    assert not alive(int(first.content))


@pytest.mark.subprocess
def test_closing_the_runner_stops_its_stdio_servers(mode: Mode) -> None:
    """No orphan: once the runner is closed, its stdio server process has ended, and the
    hub's thread with it (an async run's loop, still open, is not running then)."""
    agent = Agent("ops", scripted("notes_pid"), tools=[MCPTools("notes", command=STDIO)])
    runner = Runner(agent)
    with OneLoop(mode) as loop:
        pid = int(results(loop.drive(runner))[0].content)
        assert alive(pid)
        runner.close()
        assert not alive(pid)
    assert "hookline-mcp" not in {thread.name for thread in threading.enumerate()}


def test_closing_a_runner_that_never_connected_starts_nothing() -> None:
    """A runner whose agent never ran has no connection and no thread to stop."""
    agent = Agent("ops", scripted(), tools=[MCPTools("notes", server=notes_server())])
    before = {thread.ident for thread in threading.enumerate()}
    Runner(agent).close()
    assert {thread.ident for thread in threading.enumerate()} <= before


@pytest.mark.subprocess
def test_an_http_server_restarted_is_reached_again(mode: Mode) -> None:
    """While the HTTP server is down a call fails as a transient ``MCPError``; once it is
    up again the next run's calls reach it."""
    server = HTTPNotes()
    server.start()
    errors = Errors()
    try:
        model = ScriptedModel([calling(ToolCall("1", "notes_pid", {})), "done"] * 3)
        agent = Agent("ops", model, tools=[MCPTools("notes", url=server.url)], callbacks=[errors])
        with Runner(agent) as runner, OneLoop(mode) as loop:
            before = results(loop.drive(runner))[0].content
            server.stop()
            down = results(loop.drive(runner))[0]
            server.start()
            after = results(loop.drive(runner))[0].content
    finally:
        server.stop()
    assert down.is_error
    (error,) = errors.seen
    assert isinstance(error, MCPError)
    assert error.transient
    assert before != after


def test_a_sync_and_an_async_run_reach_one_server() -> None:
    """A sync run (on the hub's connection) and an async run (on its own loop's) both
    reach one in-process server."""
    import asyncio

    model = ScriptedModel(
        [
            calling(ToolCall("1", "notes_write", {"title": "t", "text": "x"})),
            "done",
            calling(ToolCall("2", "notes_rendezvous", {"n": 1})),
            "done",
        ]
    )
    agent = Agent("ops", model, tools=[MCPTools("notes", server=notes_server())])
    with Runner(agent) as runner:
        wrote = results(runner.run("go"))
        met = results(asyncio.run(runner.arun("go")))
    assert [r.content for r in wrote + met] == ["wrote t", "met"]


def test_without_the_extra_mcp_tools_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the mcp SDK, ``MCPTools`` is an ``ImportError`` naming the extra."""
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(ImportError, match=r"pip install 'hookline\[mcp\]'"):
        MCPTools("notes", url="http://127.0.0.1:1/mcp")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, "exactly one of url=, command= or server=, got none"),
        ({"url": "http://x", "command": ["x"]}, ValueError, "got url, command"),
        ({"url": "ftp://x"}, ValueError, "http:// or https://"),
        ({"url": 3}, TypeError, "http:// or https://"),
        ({"command": []}, TypeError, "non-empty list of str"),
        ({"command": "server"}, ValueError, "non-empty list of str"),
        ({"command": ["x", 3]}, TypeError, "non-empty list of str"),
        ({"server": object()}, TypeError, "in-process mcp server"),
        ({"url": "http://x", "env": {"A": "b"}}, ValueError, "pass command= too"),
        ({"command": ["x"], "headers": {"A": "b"}}, ValueError, "pass url= too"),
        ({"command": ["x"], "env": {"A": 1}}, TypeError, "mapping of str to str"),
        ({"url": "http://x", "prefix": 1}, TypeError, "True or False"),
        ({"url": "http://x", "deadline": 0}, ValueError, "deadline must be a positive"),
        ({"url": "http://x", "elicit": 3}, TypeError, "a function"),
    ],
)
def test_mcp_tools_refuses_bad_inputs(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    """Every input is checked when the ``MCPTools`` is made, with a message saying what
    was expected."""
    with pytest.raises(error, match=match):
        MCPTools("notes", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "error"), [("a b", ValueError), ("x" * 65, ValueError), (3, TypeError)]
)
def test_mcp_tools_refuses_a_bad_name(name: object, error: type[Exception]) -> None:
    """The name is an identifier and a valid tool name."""
    with pytest.raises(error):
        MCPTools(name, url="http://x")  # type: ignore[arg-type]


def test_an_agent_refuses_two_servers_of_one_name() -> None:
    """Two ``MCPTools`` of one name would show the same tool names."""
    one, two = (MCPTools("notes", server=notes_server()) for _ in range(2))
    with pytest.raises(ValueError, match="two MCPTools named 'notes'"):
        Agent("ops", scripted(), tools=[one, two])


def test_mcp_tools_is_immutable_and_says_what_it_reaches() -> None:
    """Its fields cannot change; its repr names the transport."""
    source = MCPTools("notes", command=["notes-server", "--quiet"])
    with pytest.raises(AttributeError, match="immutable"):
        source.url = "http://x"  # type: ignore[misc]
    assert repr(source) == "MCPTools('notes', stdio: notes-server --quiet)"
    assert MCPTools("web", url="http://h/mcp").transport == "http"
    assert MCPTools("mem", server=notes_server()).transport == "memory"
    assert "mcp=['notes']" in repr(Agent("ops", scripted(), tools=[source]))


@pytest.mark.subprocess
def test_an_http_server_gets_the_given_headers(mode: Mode) -> None:
    """``headers`` go with every HTTP request of the connection."""
    server = HTTPNotes()
    server.start()
    try:
        source = MCPTools("notes", url=server.url, headers={"X-Test": "yes"})
        model = ScriptedModel([calling(ToolCall("1", "notes_header", {"name": "x-test"})), "done"])
        with Runner(Agent("ops", model, tools=[source])) as runner:
            result = drive(runner, mode, "go")
    finally:
        server.stop()
    assert [r.content for r in results(result)] == ["yes"]


@pytest.mark.subprocess
def test_a_stdio_server_starts_when_stderr_is_no_file(capsys: pytest.CaptureFixture[str]) -> None:
    """Under a replaced ``sys.stderr`` (a notebook's, a test's capture: no file number) the
    server's stderr goes to the process's own, and the server starts."""
    assert capsys is not None  # sys.stderr is the capture now
    agent = Agent("ops", scripted("notes_pid"), tools=[MCPTools("notes", command=STDIO)])
    with Runner(agent) as runner:
        result = runner.run("go")
    assert int(results(result)[0].content) > 0


@pytest.mark.subprocess
def test_a_stdio_server_killed_between_runs_is_started_again(mode: Mode) -> None:
    """A server killed while no call was under way: the next call learns it (a transient
    ``MCPError``: the SDK's session notices only when it sends), the one after reaches a
    new server."""
    import signal

    errors = Errors()
    model = ScriptedModel([calling(ToolCall("1", "notes_pid", {})), "done"] * 3)
    agent = Agent("ops", model, tools=[MCPTools("notes", command=STDIO)], callbacks=[errors])
    with Runner(agent) as runner, OneLoop(mode) as loop:
        first = int(results(loop.drive(runner))[0].content)
        os.kill(first, signal.SIGKILL)
        lost = results(loop.drive(runner))[0]
        second = results(loop.drive(runner))[0]
    (error,) = errors.seen
    assert isinstance(error, MCPError)
    assert error.transient
    assert lost.is_error
    assert int(second.content) not in (first, 0)


class Meets:
    """A model that calls ``notes_rendezvous`` for two, then answers, in every run."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The call, or the answer once the call's result is in."""
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(last.content)
        return calling(ToolCall("1", "notes_rendezvous", {"n": 2}))


def test_sync_runs_in_threads_share_one_connection_at_once() -> None:
    """Two sync runs on two threads call the server at the same time on the runner's one
    connection: each call waits on the server until the other is under way."""
    import concurrent.futures

    agent = Agent("ops", Meets(), tools=[MCPTools("notes", server=notes_server())])
    with Runner(agent) as runner, concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(runner.run, "go", session_id=f"s{n}") for n in range(2)]
        done = [future.result(timeout=60) for future in runs]
    assert [result.output for result in done] == ["met", "met"]


@pytest.mark.subprocess
def test_retry_transient_retries_a_call_on_a_lost_connection(
    mode: Mode, waits: list[tuple[str, float]]
) -> None:
    """``RetryTransient`` retries the call that found the server gone: the retry starts a
    new server, and the run never sees the loss."""
    import signal

    from runner import RetryPolicy, RetryTransient

    model = ScriptedModel([calling(ToolCall("1", "notes_pid", {})), "done"] * 2)
    agent = Agent("ops", model, tools=[MCPTools("notes", command=STDIO)])
    retry = RetryPolicy(max_attempts=2)
    with Runner(agent, retry=retry, callbacks=[RetryTransient()]) as runner, OneLoop(mode) as loop:
        first = int(results(loop.drive(runner))[0].content)
        os.kill(first, signal.SIGKILL)
        second = results(loop.drive(runner))[0]
    assert int(second.content) != first
    assert len(waits) == 1


@pytest.mark.subprocess
def test_closing_the_runner_on_an_event_loop_never_blocks_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``with Runner(...)`` left inside async code: the stdio servers are stopped on a
    thread of their own, so ``close()`` returns while they stop (here the hub's close is
    held until the test lets it go); they have stopped once that thread ends."""
    let_go = threading.Event()
    original = Hub.close

    def held(hub: Hub) -> None:
        let_go.wait(timeout=30)
        original(hub)

    monkeypatch.setattr(Hub, "close", held)
    agent = Agent("ops", scripted("notes_pid"), tools=[MCPTools("notes", command=STDIO)])

    async def main() -> int:
        runner = Runner(agent)
        result = await runner.arun("go")
        runner.close()  # returns at once: the hub's close waits on let_go, elsewhere
        return int(results(result)[0].content)

    pid = asyncio.run(main())
    assert not let_go.is_set()
    [closing] = [t for t in threading.enumerate() if t.name == "hookline-mcp-close"]
    let_go.set()
    closing.join(timeout=30)
    assert not alive(pid)
    assert "hookline-mcp" not in {thread.name for thread in threading.enumerate()}
