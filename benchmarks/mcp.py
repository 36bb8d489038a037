"""An MCP call through hookline's hooks against the ``mcp`` client's own ``call_tool``.

Run ``python -m benchmarks.mcp`` (``--quick`` for a smoke run).

One round trip is one call of the notes server's ``add`` tool (``tests/helpers/mcp_servers.py``),
over stdio (a subprocess) and over streamable HTTP on 127.0.0.1 (a uvicorn subprocess).
Two contenders, each with a connection of its own to the same kind of server:

* ``sdk``: ``await client.call_tool("add", {...})`` on an ``mcp.Client`` entered once;
* ``hookline``: a whole ``Runner.arun`` of an agent whose model asks for ``notes_add``
  once, then answers: a guard reads ``ctx.tool.annotations`` in ``before_tool``, the
  call goes out on the runner's connection on this loop, the result is recorded, the
  model is asked again. Everything a run adds to the call is counted against hookline;
* ``plain``: the same run with an ``async`` Python function tool in place of the MCP
  tool: a run's fixed cost (two model turns, the hooks, the record), which any tool pays.

Printed: ``run/sdk`` (hookline over sdk) and ``mcp/sdk``: hookline less the plain run's
fixed cost, over sdk -- what reaching the server through hookline (the guard, the
deadline, the result's conversion) adds to the SDK's own call. Target: ``mcp/sdk`` at
most 1.05x on each transport.

How it times: the contenders take turns, one round trip each, ``--calls`` times, each
timed with ``time.perf_counter_ns``; the figure compared is each one's fast decile (its
10th percentile: the servers share the machine), with the median beside it. The cyclic
GC is off while timing, as in ``timeit``. It also prints ``mcp/sdk`` paired by round (the
median of each round's hookline less plain over sdk), which a slow spell of the machine
moves less, as all three of a round share it. Beside the round trips it prints the CPU time
this thread spent on each (``time.thread_time_ns``, median), which a busy machine
disturbs less: hookline's less the plain run's less the SDK's is what reaching the
server through hookline costs per call (work on another thread is not counted: the
figure means nothing for a call that crosses to one).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcp import Client, StdioServerParameters, stdio_client

from hooks import Cont
from runner import Agent, MCPTools, ModelRequest, ModelResponse, Runner, ToolCall, ToolContext
from tests.runner.mcp.conftest import STDIO, HTTPNotes

TARGET: Final = 1.05
ARGS: Final = {"a": 2, "b": 3}


class OneCall:
    """A model that asks for ``notes_add`` once, then answers with its result."""

    async def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The call, or the answer once the call's result is in."""
        last = request.messages[-1]
        if last.role == "tool":
            return ModelResponse(last.content)
        return ModelResponse(tool_calls=(ToolCall("c1", "notes_add", ARGS),))


class Guard:
    """The before_tool guard every call passes: it reads the typed annotations."""

    def __init__(self, read_only: bool | None = True) -> None:
        self.read_only = read_only

    @classmethod
    def plain(cls) -> Guard:
        """The guard of the plain run, whose function tool declares nothing."""
        return cls(None)

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext]:
        """Let the call through once its annotations were read."""
        assert ctx.tool.annotations.read_only is self.read_only
        return Cont(ctx)


def percentile(times: list[int], fraction: float) -> float:
    """The ``fraction`` percentile of ``times`` (ns), in microseconds."""
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] / 1000


async def race(
    contenders: dict[str, Callable[[], Awaitable[Any]]], calls: int
) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Each contender ``calls`` times, taking turns; every round trip's time in ns, and
    the CPU time this thread spent on it (in ns)."""
    times: dict[str, list[int]] = {name: [] for name in contenders}
    cpu: dict[str, list[int]] = {name: [] for name in contenders}
    for fn in contenders.values():  # warm: connect, list, first calls
        for _ in range(5):
            await fn()
    gc.disable()
    try:
        for _ in range(calls):
            for name, fn in contenders.items():
                began, worked = time.perf_counter_ns(), time.thread_time_ns()
                await fn()
                times[name].append(time.perf_counter_ns() - began)
                cpu[name].append(time.thread_time_ns() - worked)
    finally:
        gc.enable()
    return times, cpu


async def notes_add(a: int, b: int) -> int:
    """Add two numbers (the plain run's tool, named as the MCP one is shown; ``async``,
    so an async run awaits it on its loop, as it does an MCP call: no worker thread)."""
    return a + b


async def transport(name: str, sdk_target: Any, source: MCPTools, calls: int) -> float:
    """Time the contenders on one transport; print the figures; the p10 ``mcp/sdk``."""
    agent = Agent("ops", OneCall(), tools=[source])
    plain_agent = Agent("ops", OneCall(), tools=[notes_add])
    with (
        Runner(agent, callbacks=[Guard()]) as runner,
        Runner(plain_agent, callbacks=[Guard.plain()]) as plain_runner,
    ):
        async with Client(sdk_target) as client:

            async def sdk() -> None:
                result = await client.call_tool("add", ARGS)
                assert result.content[0].text == "5"  # type: ignore[union-attr]

            async def hookline() -> None:
                result = await runner.arun("add")
                assert result.output == "5"

            async def plain() -> None:
                result = await plain_runner.arun("add")
                assert result.output == "5"

            times, cpu = await race({"sdk": sdk, "hookline": hookline, "plain": plain}, calls)
    fast = {who: percentile(spent, 0.10) for who, spent in times.items()}
    middle = {who: percentile(spent, 0.50) for who, spent in times.items()}
    work = {who: percentile(spent, 0.50) for who, spent in cpu.items()}
    run_ratio = fast["hookline"] / fast["sdk"]
    ratio = (fast["hookline"] - fast["plain"]) / fast["sdk"]
    excess = work["hookline"] - work["plain"] - work["sdk"]
    rounds = zip(times["hookline"], times["plain"], times["sdk"], strict=True)
    paired = sorted((mcp - plain) / sdk for mcp, plain, sdk in rounds)[len(times["sdk"]) // 2]
    print(
        f"{name:>5}: sdk p10 {fast['sdk']:8.1f} us (median {middle['sdk']:8.1f})  "
        f"hookline p10 {fast['hookline']:8.1f} us (median {middle['hookline']:8.1f})  "
        f"plain run p10 {fast['plain']:6.1f} us\n"
        f"       run/sdk {run_ratio:.3f}x  mcp/sdk {ratio:.3f}x (target <= {TARGET}x)  "
        f"paired by round, median {paired:.3f}x\n"
        f"       CPU of this process, median: sdk {work['sdk']:6.1f} us  hookline "
        f"{work['hookline']:6.1f} us  plain run {work['plain']:6.1f} us  "
        f"MCP call's excess {excess:+6.1f} us"
    )
    return ratio


async def measure(calls: int) -> dict[str, float]:
    """Both transports' ratios."""
    params = StdioServerParameters(command=STDIO[0], args=STDIO[1:])
    stdio = stdio_client(params, errlog=sys.__stderr__ or sys.stderr)
    ratios = {"stdio": await transport("stdio", stdio, MCPTools("notes", command=STDIO), calls)}
    server = HTTPNotes()
    server.start()
    try:
        url = server.url
        ratios["http"] = await transport("http", url, MCPTools("notes", url=url), calls)
    finally:
        server.stop()
    return ratios


def main(argv: list[str] | None = None) -> int:
    """Print the round trips and ratios; 0 when both meet the target (always in --quick)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20 calls")
    options = parser.parse_args(argv)
    calls = 20 if options.quick else options.calls
    print(f"python {platform.python_version()} on {platform.machine()}, {calls} calls each")
    ratios = asyncio.run(measure(calls))
    met = all(ratio <= TARGET for ratio in ratios.values())
    return 0 if options.quick or met else 1


if __name__ == "__main__":
    sys.exit(main())
