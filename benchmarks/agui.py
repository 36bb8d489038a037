"""Serving a run over AG-UI: what the endpoint adds to ``Runner.stream``'s cost per delta.

Run ``python -m benchmarks.agui`` (``--quick`` for a smoke run).

The model yields N one-character ``TextDelta`` pieces, then its answer. Per-delta cost is
the slope between N = 1 and N = ``--deltas`` (the run's fixed cost falls out):
``Runner.stream`` consumed in a loop, against the same run served by ``agui_app`` -- the
ASGI app called as a server calls it, its request parsed, every event translated to an
AG-UI frame, encoded and handed to ``send`` (here a function that keeps the byte count:
the socket is the server's cost, not the endpoint's). Hook decisions are observed, as by
default. Target: the endpoint at most 1.10x ``Runner.stream`` per delta, for pieces that
wait on the event loop as a network stream's do; pieces from memory are shown too, the
worst case for the endpoint's share. Best of ``--repeat`` samples. Before timing, the
served text is checked to be the model's.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import time
from collections.abc import MutableMapping
from typing import Any

import openai

from benchmarks.stream_runner import Pieces
from runner import Agent, OpenAIResponsesModel, Runner
from runner.web import AGUIApp, agui_app
from tests.helpers.responses_server import ResponsesServer, as_stream, message, response, usage

_threads = itertools.count()


async def streamed(runner: Runner) -> float:
    """Seconds for a whole streamed run, every event consumed."""
    start = time.perf_counter()
    async for _ in runner.stream("go"):
        pass
    return time.perf_counter() - start


async def served(app: AGUIApp, sink: list[bytes] | None = None) -> float:
    """Seconds for a whole run served by ``app``, every frame sent (kept in ``sink``)."""
    body = json.dumps(
        {
            "threadId": f"bench{next(_threads)}",
            "runId": "r",
            "messages": [{"id": "m", "role": "user", "content": "go"}],
        }
    ).encode()
    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    asked = False
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def receive() -> MutableMapping[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": body, "more_body": False}
        await never  # the client stays: cancelled when the response is over
        return {"type": "http.disconnect"}

    sent = 0

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal sent
        chunk: bytes = message.get("body", b"")
        sent += len(chunk)
        if sink is not None:
            sink.append(chunk)

    start = time.perf_counter()
    await app(scope, receive, send)
    return time.perf_counter() - start


async def check(app: AGUIApp, n: int) -> None:
    """The served text is the model's: ``n`` pieces of ``w``."""
    sink: list[bytes] = []
    await served(app, sink)
    frames = [json.loads(line[6:]) for line in b"".join(sink).decode().splitlines() if line]
    text = "".join(f["delta"] for f in frames if f["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "w" * n, f"served {text[:40]!r}..."
    assert frames[-1]["type"] == "RUN_FINISHED", frames[-1]


async def measure(few: Any, many: Any, deltas: int, repeat: int) -> dict[str, float]:
    """Seconds per delta: ``Runner.stream`` and the endpoint serving it (``few`` answers in
    one piece, ``many`` in ``deltas``)."""
    with Runner(Agent("a", few)) as runner_few, Runner(Agent("a", many)) as runner_many:
        apps = {1: agui_app(runner_few), deltas: agui_app(runner_many)}
        await check(apps[deltas], deltas)
        stream_best = {1: float("inf"), deltas: float("inf")}
        served_best = {1: float("inf"), deltas: float("inf")}
        for _ in range(repeat):
            for runner, n in ((runner_few, 1), (runner_many, deltas)):
                stream_best[n] = min(stream_best[n], await streamed(runner))
                served_best[n] = min(served_best[n], await served(apps[n]))
    return {
        "stream": (stream_best[deltas] - stream_best[1]) / (deltas - 1),
        "served": (served_best[deltas] - served_best[1]) / (deltas - 1),
    }


async def scripted(deltas: int, repeat: int, *, waits: bool) -> dict[str, float]:
    """The figures for an embedded model's pieces."""
    return await measure(Pieces(1, waits=waits), Pieces(deltas, waits=waits), deltas, repeat)


async def loopback(deltas: int, repeat: int) -> dict[str, float]:
    """The figures for ``OpenAIResponsesModel`` over the local Responses server."""

    def reply(n: int) -> Any:
        return as_stream(response(message("w" * n), used=usage(10, n)), size=1)

    with (
        ResponsesServer(max_requests=10**7, always=reply(1)) as one,
        ResponsesServer(max_requests=10**7, always=reply(deltas)) as all_,
    ):
        clients = [
            openai.AsyncOpenAI(base_url=server.url, api_key="sk-bench", max_retries=0)
            for server in (one, all_)
        ]
        try:
            few, many = (OpenAIResponsesModel("gpt-bench", async_client=c) for c in clients)
            return await measure(few, many, deltas, repeat)
        finally:
            for client in clients:
                await client.close()


def main(argv: list[str] | None = None) -> int:
    """Print the per-delta cost of ``Runner.stream`` and of the endpoint, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    deltas, repeat = (200, 2) if args.quick else (args.deltas, args.repeat)
    gc.disable()
    try:
        for label, measuring in (
            ("pieces that wait on the loop", scripted(deltas, repeat, waits=True)),
            ("pieces from memory", scripted(deltas, repeat, waits=False)),
            ("loopback (OpenAIResponsesModel, 127.0.0.1)", loopback(deltas, repeat)),
        ):
            figures = asyncio.run(measuring)
            ratio = figures["served"] / figures["stream"]
            print(f"{label}: per delta")
            print(f"  Runner.stream     {figures['stream'] * 1e9:8.0f} ns")
            print(f"  served over AG-UI {figures['served'] * 1e9:8.0f} ns  ({ratio:.2f}x)")
    finally:
        gc.enable()
    print("target: served over AG-UI per delta at most 1.10x Runner.stream")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
