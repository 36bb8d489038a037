"""MCP connections per event loop: an async run calls on its own loop's connection, kept
for the loop's next runs, ended with the loop, and closed by the runner on whatever loop
it is, running, stopped or closed."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import threading
import warnings
from collections.abc import Iterator

import pytest

from runner import (
    Agent,
    MCPTools,
    ModelRequest,
    ModelResponse,
    Runner,
    ScriptedModel,
    ToolCall,
    ToolResult,
)
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import calling
from tests.runner.mcp.conftest import STDIO
from tests.runner.mcp.test_lifecycle import Meets, alive, results, scripted

pytestmark = pytest.mark.subprocess


class Pids:
    """A model that calls ``notes_pid`` in every run, then answers with its result."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The call, or the answer once the call's result is in."""
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(last.content)
        return calling(ToolCall("1", "notes_pid", {}))


def threads() -> set[str]:
    """The names of this process's threads."""
    return {thread.name for thread in threading.enumerate()}


@pytest.fixture
def stdio_runner() -> Iterator[Runner]:
    """A runner of an agent whose one tool server is a stdio notes server."""
    with Runner(Agent("ops", Pids(), tools=[MCPTools("notes", command=STDIO)])) as runner:
        yield runner


async def pids(runner: Runner, runs: int) -> list[int]:
    """The server pid each of ``runs`` runs one after another on this loop reached."""
    return [int((await runner.arun("go")).output) for _ in range(runs)]


def test_runs_on_one_loop_share_its_connection_and_no_thread(stdio_runner: Runner) -> None:
    """Async runs on one loop reach the one server their loop's connection started, with
    no thread of the hub's."""
    with asyncio.Runner() as loop:
        reached = loop.run(pids(stdio_runner, 3))
        assert "hookline-mcp" not in threads()
    assert len(set(reached)) == 1


def test_runs_at_once_on_one_loop_share_its_connection() -> None:
    """Two runs at once on one loop call on one connection: the server's rendezvous for
    two meets, which only one server process can."""
    agent = Agent("ops", Meets(), tools=[MCPTools("notes", command=STDIO)])

    async def both(runner: Runner) -> list[str]:
        runs = await asyncio.gather(runner.arun("a"), runner.arun("b"))
        return [run.output for run in runs]

    with Runner(agent) as runner:
        assert asyncio.run(both(runner)) == ["met", "met"]


def test_two_loops_have_a_connection_each(stdio_runner: Runner) -> None:
    """Two loops running at once, on two threads, each reach a server of their own."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(asyncio.run, pids(stdio_runner, 2)) for _ in range(2)]
        one, two = (run.result(timeout=60) for run in runs)
    assert len(set(one)) == 1
    assert len(set(two)) == 1
    assert one[0] != two[0]
    assert not alive(one[0])
    assert not alive(two[0])


def test_a_loop_that_ended_before_close_took_its_server_with_it(stdio_runner: Runner) -> None:
    """``asyncio.run`` ends its loop's connection: the stdio server has stopped before the
    runner closes, the next ``asyncio.run`` starts another, and closing returns."""
    (first,) = asyncio.run(pids(stdio_runner, 1))
    assert not alive(first)
    (second,) = asyncio.run(pids(stdio_runner, 1))
    assert second != first
    stdio_runner.close()
    assert not alive(second)


def collect_a_closed_loops_leftovers() -> None:
    """Collect what a loop closed with its tasks pending left (their transports, never
    closed, warn as they go: asyncio's warning, not the runner's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def test_a_loop_closed_with_its_connection_open_has_its_server_killed() -> None:
    """A loop closed by hand with the connection's owner still pending cannot close it:
    the runner's close kills the stdio server instead, and returns."""
    runner = Runner(Agent("ops", Pids(), tools=[MCPTools("notes", command=STDIO)]))
    loop = asyncio.new_event_loop()
    try:
        (pid,) = loop.run_until_complete(pids(runner, 1))
    finally:
        loop.close()
    assert alive(pid)
    runner.close()
    assert not alive(pid)
    collect_a_closed_loops_leftovers()


def test_a_loop_closed_by_hand_is_forgotten_when_a_new_loop_connects() -> None:
    """The next loop to connect kills the server of a loop closed with its connection open,
    without waiting for the runner's close."""
    runner = Runner(Agent("ops", Pids(), tools=[MCPTools("notes", command=STDIO)]))
    loop = asyncio.new_event_loop()
    try:
        (pid,) = loop.run_until_complete(pids(runner, 1))
    finally:
        loop.close()
    with runner:
        (other,) = asyncio.run(pids(runner, 1))
        assert not alive(pid)
    assert other != pid
    collect_a_closed_loops_leftovers()


def test_a_loop_running_elsewhere_gets_its_connection_closed(stdio_runner: Runner) -> None:
    """Closing the runner from another thread while the loop runs on: the close is sent to
    that loop, the server stops, and the loop goes on."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    try:
        (pid,) = asyncio.run_coroutine_threadsafe(pids(stdio_runner, 1), loop).result(60)
        assert alive(pid)
        stdio_runner.close()
        assert not alive(pid)
        assert loop.is_running()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=60)
        loop.close()


def test_a_runner_closed_inside_its_loop_stops_the_server_while_the_loop_runs() -> None:
    """``with Runner(...)`` left inside async code: the close, on a thread of its own,
    reaches the loop's connection while the loop runs, and the server stops."""

    async def main() -> int:
        agent = Agent("ops", scripted("notes_pid"), tools=[MCPTools("notes", command=STDIO)])
        with Runner(agent) as runner:
            pid = int(results(await runner.arun("go"))[0].content)
        [closing] = [t for t in threading.enumerate() if t.name == "hookline-mcp-close"]
        await asyncio.to_thread(closing.join, 60)
        assert not alive(pid)
        return pid

    assert not alive(asyncio.run(main()))


def test_a_server_that_died_is_started_again_on_the_same_loop() -> None:
    """On one loop, a run whose call crashed the stdio server fails that call; the loop's
    next run connects again to a new server."""
    agent = Agent(
        "ops",
        ScriptedModel(
            [
                calling(ToolCall("1", "notes_pid", {})),
                calling(ToolCall("2", "notes_crash", {})),
                "done",
                calling(ToolCall("3", "notes_pid", {})),
                "done",
            ]
        ),
        tools=[MCPTools("notes", command=STDIO)],
    )

    async def twice(runner: Runner) -> list[list[ToolResult]]:
        return [results(await runner.arun("go")) for _ in range(2)]

    with Runner(agent) as runner:
        (first, crashed), (second,) = asyncio.run(twice(runner))
    assert crashed.is_error
    assert "the connection was lost" in crashed.content
    assert first.content != second.content
    assert not alive(int(first.content))


def test_a_hub_closed_on_its_connections_loop_closes_them_there() -> None:
    """``Hub.close`` called on the loop a connection lives on cannot wait for it: it sends
    the close to that loop, where it ends the connection and stops the server."""
    from runner._mcp import hub as hub_module

    async def main() -> int:
        hub = hub_module.Hub()
        connection = hub.on_loop(MCPTools("notes", command=STDIO))
        await connection.listing()
        child = connection._child
        assert child is not None
        pid = child.pid
        assert alive(pid)
        hub.close()
        await asyncio.gather(*hub_module._CLOSING)
        return pid

    assert not alive(asyncio.run(main()))


def test_a_loop_that_ends_while_its_server_stops_still_stops_it() -> None:
    """``asyncio.run`` ending while the connection's owner is stopping the stdio server
    (a runner closed just before: ``with Runner(...)`` left at the end of ``main``)
    cancels the owner halfway through: the loop still ends (nothing waits for ever on a
    server left running), the server has stopped, and nothing is left unclosed."""
    agent = Agent("ops", Pids(), tools=[MCPTools("notes", command=STDIO)])
    runner = Runner(agent)

    async def main() -> int:
        (pid,) = await pids(runner, 1)
        connection = runner._launcher._hub.on_loop(agent.sources[0])  # type: ignore[union-attr]
        stop = connection._stop
        assert stop is not None
        stop.set()  # the owner leaves the client: the server is being stopped
        for _ in range(8):
            await asyncio.sleep(0)
        return pid  # the loop ends now, its tasks cancelled: the owner's stop among them

    ended: list[int] = []
    thread = threading.Thread(target=lambda: ended.append(asyncio.run(main())), daemon=True)
    thread.start()
    thread.join(60)  # a watchdog, not a timing: a hung loop never ends
    assert not thread.is_alive()
    gc.collect()  # an unclosed transport would warn here, as an error
    assert not alive(ended[0])
    runner.close()


def test_a_servers_stop_holds_off_a_cancel_until_the_server_ended() -> None:
    """The owner's own stop of a stdio server (stdin closed, its exit awaited) is not cut
    short by a cancel: the cancel is raised once the server has ended."""
    from runner._mcp import hub as hub_module

    async def main() -> tuple[bool, int]:
        hub = hub_module.Hub()
        connection = hub.on_loop(MCPTools("notes", command=STDIO))
        await connection.listing()
        child = connection._child
        assert child is not None
        stopping = asyncio.create_task(child.stop())
        await asyncio.sleep(0)
        stopping.cancel()
        try:
            await stopping
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        ended = not alive(child.pid)
        hub.close()
        await asyncio.gather(*hub_module._CLOSING)
        return cancelled and ended, child.pid

    held, pid = asyncio.run(main())
    assert held
    assert not alive(pid)


def test_what_a_server_lists_is_known_from_any_loops_connection() -> None:
    """``Hub.current``: a server's listing, from whichever connection has it -- an async
    run's on its loop as much as a sync run's -- and none once that loop has ended."""
    from runner._mcp import hub as hub_module

    source = MCPTools("notes", server=notes_server())
    hub = hub_module.Hub()

    async def listed() -> list[str] | None:
        await hub.on_loop(source).listing()
        here = hub.current(source)
        return None if here is None else [tool.remote for tool in here]

    try:
        assert hub.current(source) is None
        with asyncio.Runner() as loop:
            names = loop.run(listed())
            assert names is not None
            assert "add" in names
            assert hub.current(source) is not None
        assert hub.current(source) is None
    finally:
        hub.close()
