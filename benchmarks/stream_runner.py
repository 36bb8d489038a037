"""Streamed runs: what ``Runner.stream`` adds per delta, and the time to the first one.

Run ``python -m benchmarks.stream_runner`` (``--quick`` for a smoke run).

The model yields N ``TextDelta`` pieces and then its ``ModelResponse``. Per-delta cost
is the slope between N = 1 and N = ``--deltas``, so the run's fixed cost (ids, events,
the session) falls out: ``Runner.stream`` (each delta through the channel to the
consumer) against iterating the model's own ``astream`` in a loop. Target: at most
3x, for a model whose pieces wait on the event loop as a network stream's do; pieces
straight from memory (no wait) are shown too, the worst case for the runner's share.
Time to first delta: from calling ``stream`` to the consumer holding the first
``TextDelta``. Best of ``--repeat`` samples.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import AsyncIterator

from runner import Agent, ModelChunk, ModelRequest, ModelResponse, Runner, TextDelta


class Pieces:
    """A model streaming ``n`` one-character pieces, then the whole answer.

    ``waits``: each piece first yields to the event loop, as a model reading a network
    stream does (``ScriptedModel.astream`` does too); without it the pieces come from
    memory, the worst case for the runner's share.
    """

    def __init__(self, n: int, *, waits: bool = False) -> None:
        self.n = n
        self.waits = waits
        self.response = ModelResponse("w" * n)

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The whole answer (unused by streamed runs)."""
        return self.response

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """``n`` deltas, then the response."""
        delta = TextDelta("w")
        for _ in range(self.n):
            if self.waits:
                await asyncio.sleep(0)
            yield delta
        yield self.response


REQUEST = ModelRequest(())


async def bare(model: Pieces) -> float:
    """Seconds to iterate the model's own stream to its end."""
    start = time.perf_counter()
    async for _ in model.astream(REQUEST):
        pass
    return time.perf_counter() - start


async def streamed(runner: Runner) -> float:
    """Seconds for a whole streamed run, every event consumed."""
    start = time.perf_counter()
    async for _ in runner.stream("go"):
        pass
    return time.perf_counter() - start


async def first_delta(runner: Runner) -> float:
    """Seconds from calling ``stream`` to holding the first delta."""
    start = time.perf_counter()
    stream = runner.stream("go")
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    elapsed = time.perf_counter() - start
    await stream.aclose()
    return elapsed


async def measure(deltas: int, repeat: int, *, waits: bool) -> dict[str, float]:
    """The figures, in seconds: per delta (bare, stream) and to the first delta."""
    few, many = Pieces(1, waits=waits), Pieces(deltas, waits=waits)
    with (
        Runner(Agent("a", few)) as runner_few,
        Runner(Agent("a", many)) as runner_many,
    ):
        best = {"bare": float("inf"), "stream": float("inf"), "first": float("inf")}
        bare_best = {1: float("inf"), deltas: float("inf")}
        stream_best = {1: float("inf"), deltas: float("inf")}
        for _ in range(repeat):
            for model in (few, many):
                bare_best[model.n] = min(bare_best[model.n], await bare(model))
            for runner, n in ((runner_few, 1), (runner_many, deltas)):
                stream_best[n] = min(stream_best[n], await streamed(runner))
            best["first"] = min(best["first"], await first_delta(runner_many))
        best["bare"] = (bare_best[deltas] - bare_best[1]) / (deltas - 1)
        best["stream"] = (stream_best[deltas] - stream_best[1]) / (deltas - 1)
        best["bare_first"] = bare_best[1]
    return best


def main(argv: list[str] | None = None) -> int:
    """Print the per-delta cost and the time to the first delta, with their ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    deltas, repeat = (200, 2) if args.quick else (args.deltas, args.repeat)
    gc.disable()
    try:
        for waits, label in ((True, "pieces that wait on the loop"), (False, "pieces from memory")):
            figures = asyncio.run(measure(deltas, repeat, waits=waits))
            ratio = figures["stream"] / figures["bare"]
            print(f"{label}: per delta")
            print(f"  model's own astream {figures['bare'] * 1e9:8.0f} ns")
            print(f"  Runner.stream       {figures['stream'] * 1e9:8.0f} ns  ({ratio:.2f}x)")
            print(f"  first delta: {figures['first'] * 1e6:.0f} µs after calling stream")
    finally:
        gc.enable()
    print("target: Runner.stream per delta at most 3x the model's own stream")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
