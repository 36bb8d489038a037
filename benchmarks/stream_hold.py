"""Streamed runs with an output guard: the time to the first visible text, held and not.

Run ``python -m benchmarks.stream_hold`` (``--quick`` for a smoke run).

Every run has one output guard (an ``after_model`` that passes the answer on), and is
streamed three ways: ``hold=None`` (each piece shown as generated), ``hold=N`` (the text
so far checked every ``N`` characters, ``--every``) and ``hold="output"`` (nothing shown
until the guard passed the whole answer). For each, from calling ``stream`` to the
consumer holding the first ``TextDelta`` ("first text") and to the run's end ("whole
run"), the median of ``--repeat`` runs, over three models:

* ``scripted``: an embedded model whose ``--pieces`` 4-character pieces each wait one
  turn of the event loop (as ``ScriptedModel.astream``'s do);
* ``paced``: the same pieces, one every ``--pace`` milliseconds, as a model generating
  at that speed sends them;
* ``loopback``: ``OpenAIResponsesModel`` streaming ``--pieces`` text events from the test
  suite's Responses server on 127.0.0.1 (``tests/helpers/responses_server.py``).

Held, the first text comes once the whole answer has: the time to generate it, plus
the guard. Before timing, each mode's text is checked to join to the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any, Final

import openai

from hooks import Outcome, Result
from runner import (
    Agent,
    ModelChunk,
    ModelContext,
    ModelRequest,
    ModelResponse,
    OpenAIResponsesModel,
    RunFinishedEvent,
    Runner,
    TextDelta,
)
from tests.helpers.responses_server import ResponsesServer, as_stream, message, response, usage

HOLDS: Final = ("none", "every", "output")


class Pieces:
    """A model answering ``n`` 4-character pieces, each after ``pace`` seconds (``0``: one
    turn of the event loop), then the whole answer."""

    def __init__(self, n: int, pace: float = 0.0) -> None:
        self.pace = pace
        self.pieces = ["abcd"] * n
        self.response = ModelResponse("".join(self.pieces))

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The whole answer (unused by streamed runs)."""
        return self.response

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """The pieces, then the response."""
        for piece in self.pieces:
            await asyncio.sleep(self.pace)
            yield TextDelta(piece)
        yield self.response


class Guard:
    """An output guard that passes every answer on."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Pass it on."""
        return outcome


async def one(runner: Runner, hold: object) -> tuple[float, float, str]:
    """Seconds to the first text and to the end of one streamed run, and the text shown."""
    start = time.perf_counter()
    first = 0.0
    shown: list[str] = []
    output = ""
    async for event in runner.stream("go", hold=hold):  # type: ignore[arg-type]  # checked
        if isinstance(event, TextDelta):
            if not shown:
                first = time.perf_counter() - start
            shown.append(event.text)
        elif isinstance(event, RunFinishedEvent):
            output = event.result.output
    whole = time.perf_counter() - start
    text = "".join(shown)
    if text != output:
        msg = f"hold={hold!r}: the text shown ({len(text)} chars) is not the answer"
        raise AssertionError(msg)
    return first, whole, text


async def measure(model: Any, repeat: int, every: int) -> dict[str, tuple[float, float]]:
    """Per hold mode, the median seconds to the first text and to the end."""
    holds: dict[str, object] = {"none": None, "every": every, "output": "output"}
    with Runner(Agent("a", model, callbacks=[Guard()])) as runner:
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in HOLDS}
        await one(runner, None)  # warm up
        for _ in range(repeat):
            for name in HOLDS:
                first, whole, _ = await one(runner, holds[name])
                samples[name].append((first, whole))
    return {
        name: (
            statistics.median(first for first, _ in runs),
            statistics.median(whole for _, whole in runs),
        )
        for name, runs in samples.items()
    }


def report(label: str, figures: dict[str, tuple[float, float]], every: int) -> None:
    """Print one model's figures, in milliseconds."""
    print(f"{label}:")
    names = {"none": "hold=None", "every": f"hold={every}", "output": 'hold="output"'}
    for name in HOLDS:
        first, whole = figures[name]
        first_ms, whole_ms = first * 1e3, whole * 1e3
        print(f"  {names[name]:<14} first text {first_ms:8.3f} ms   whole run {whole_ms:8.3f} ms")


async def loopback(pieces: int, repeat: int, every: int) -> dict[str, tuple[float, float]]:
    """The figures for ``OpenAIResponsesModel`` over the local Responses server."""
    reply = as_stream(response(message("abcd" * pieces), used=usage(10, pieces)), size=4)
    with ResponsesServer(max_requests=10**7, always=reply) as server:
        client = openai.AsyncOpenAI(base_url=server.url, api_key="sk-bench", max_retries=0)
        try:
            model = OpenAIResponsesModel("gpt-bench", async_client=client)
            return await measure(model, repeat, every)
        finally:
            await client.close()


def main(argv: list[str] | None = None) -> int:
    """Measure and print the time to the first text and to the end, per hold mode."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stream_hold", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--pieces", type=int, default=64, help="4-character pieces per answer")
    parser.add_argument("--every", type=int, default=32, help="hold=N's characters per check")
    parser.add_argument("--pace", type=float, default=10.0, help="ms between paced pieces")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    pieces, repeat, pace = args.pieces, args.repeat, args.pace / 1e3
    if args.quick:
        pieces, repeat, pace = 8, 2, 0.001
    if pieces < 1 or repeat < 1 or args.every < 1 or pace < 0:
        parser.error("--pieces, --repeat and --every must be positive, --pace not negative")
    print(
        f"time to the first visible text, median of {repeat} runs; answers of {pieces} "
        f"4-character pieces ({pieces * 4} characters), one pass-through after_model guard"
    )
    report(
        "scripted (each piece one loop turn)",
        asyncio.run(measure(Pieces(pieces), repeat, args.every)),
        args.every,
    )
    paced = asyncio.run(measure(Pieces(pieces, pace), repeat, args.every))
    report(f"paced (a piece every {pace * 1e3:g} ms)", paced, args.every)
    report(
        "loopback (OpenAIResponsesModel, 127.0.0.1)",
        asyncio.run(loopback(pieces, repeat, args.every)),
        args.every,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
