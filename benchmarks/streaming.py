"""The models' streams: ``ScriptedModel``'s against a bare generator, and
``OpenAIChatModel``'s own work per chunk.

Run ``python -m benchmarks.streaming`` (``--quick`` for a smoke run).

``ScriptedModel`` answers with a text of N * 8 characters, streamed in pieces of 8
(``chunk_size``), N ``TextDelta`` then the ``ModelResponse``. Contenders, draining the
whole stream:

* ``bare``: an async generator yielding the same N strings from memory, then the response;
* ``bare+wait``: the same, awaiting ``asyncio.sleep(0)`` before each item, the pace
  ``ScriptedModel.astream`` keeps on purpose (each piece gives the loop a turn, as a
  network stream's does);
* ``ScriptedModel.astream``; and, sync, ``ScriptedModel.stream`` against a bare
  generator of the strings and one making a ``TextDelta`` of each (a frozen dataclass:
  making one is most of a sync delta's cost).

Per delta is the slope between N = 1 and N = ``--deltas``, so what each stream costs once
(the script's lookup, the request kept) falls out. Time to first delta: from calling
``astream`` (or the bare generator) to holding the first item. The runner's own share
per delta is ``benchmarks/stream_runner.py``'s.

``OpenAIChatModel`` reads each SDK chunk with ``StreamReader.read``: timed alone over
parsed chunks of a streamed answer (text, then a tool call's arguments), beside what the
SDK itself spends per chunk to parse one (``json.loads`` and ``construct_type``, as its
``Stream`` does), before the reader sees anything.

How it times: best of ``--repeat`` samples, the contenders taking turns, the cyclic GC
off, one event loop for all the async figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import sys
import time
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Final

from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk

from runner import Message, ModelRequest, ModelResponse, ScriptedModel, TextDelta
from runner._models.openai.stream import StreamReader
from tests.helpers.openai_server import as_stream, completion, tool_call

SIZE: Final = 8
REQUEST: Final = ModelRequest((Message("user", "Tell me a long story."),))


def pieces(n: int) -> list[str]:
    """The N strings ``ScriptedModel`` streams for a text of ``n * SIZE`` characters."""
    text = "abcdefgh" * n
    return [text[at : at + SIZE] for at in range(0, len(text), SIZE)]


async def bare(strings: list[str], response: ModelResponse) -> AsyncGenerator[object, None]:
    """The strings, then the response, straight from memory."""
    for piece in strings:
        yield piece
    yield response


async def bare_wait(strings: list[str], response: ModelResponse) -> AsyncGenerator[object, None]:
    """The strings, then the response, each after one turn of the event loop."""
    for piece in strings:
        await asyncio.sleep(0)
        yield piece
    await asyncio.sleep(0)
    yield response


def bare_deltas(strings: list[str], response: ModelResponse) -> Generator[object, None, None]:
    """A ``TextDelta`` made of each string, then the response: what the deltas alone cost."""
    for piece in strings:
        yield TextDelta(piece)
    yield response


def bare_sync(strings: list[str], response: ModelResponse) -> Generator[object, None, None]:
    """The strings, then the response, from a plain generator."""
    yield from strings
    yield response


AsyncContenders = dict[str, Callable[[], AsyncGenerator[object, None]]]
SyncContenders = dict[str, Callable[[], Generator[object, None, None]]]


def contenders(n: int) -> tuple[AsyncContenders, SyncContenders]:
    """The async and sync streams of an answer of ``n`` deltas, by name."""
    strings = pieces(n)
    response = ModelResponse("".join(strings))
    model = ScriptedModel(default=response.text, chunk_size=SIZE, keep_requests=0)
    asynchronous: AsyncContenders = {
        "bare": lambda: bare(strings, response),
        "bare+wait": lambda: bare_wait(strings, response),
        "ScriptedModel.astream": lambda: model.astream(REQUEST),
    }
    synchronous: SyncContenders = {
        "bare sync": lambda: bare_sync(strings, response),
        "bare sync TextDelta": lambda: bare_deltas(strings, response),
        "ScriptedModel.stream": lambda: model.stream(REQUEST),
    }
    return asynchronous, synchronous


async def drain(stream: AsyncGenerator[object, None]) -> float:
    """Seconds to iterate ``stream`` to its end."""
    start = time.perf_counter()
    async for _ in stream:
        pass
    return time.perf_counter() - start


def drain_sync(stream: Generator[object, None, None]) -> float:
    """Seconds to iterate ``stream`` to its end."""
    start = time.perf_counter()
    for _ in stream:
        pass
    return time.perf_counter() - start


async def first(make: Callable[[], AsyncGenerator[object, None]], times: int) -> float:
    """Seconds, per stream, from making it to holding its first item (``times`` streams)."""
    total = 0.0
    for _ in range(times):
        start = time.perf_counter()
        stream = make()
        await anext(stream)
        total += time.perf_counter() - start
        await stream.aclose()
    return total / times


def first_sync(make: Callable[[], Generator[object, None, None]], times: int) -> float:
    """``first`` for a sync stream."""
    total = 0.0
    for _ in range(times):
        start = time.perf_counter()
        stream = make()
        next(stream)
        total += time.perf_counter() - start
        stream.close()
    return total / times


async def per_delta(deltas: int, repeat: int) -> dict[str, tuple[float, float]]:
    """For each contender: seconds per delta (the slope) and to the first item (best)."""
    few, many = contenders(1), contenders(deltas)
    best: dict[tuple[str, int], float] = {}
    firsts: dict[str, float] = {}
    for _ in range(repeat):
        for n, (asynchronous, synchronous) in ((1, few), (deltas, many)):
            for name, make in asynchronous.items():
                best[name, n] = min(best.get((name, n), float("inf")), await drain(make()))
            for name, make_sync in synchronous.items():
                elapsed = drain_sync(make_sync())
                best[name, n] = min(best.get((name, n), float("inf")), elapsed)
        for name, make in few[0].items():
            firsts[name] = min(firsts.get(name, float("inf")), await first(make, 100))
        for name, make_sync in few[1].items():
            firsts[name] = min(firsts.get(name, float("inf")), first_sync(make_sync, 100))
    names = [*few[0], *few[1]]
    return {
        name: ((best[name, deltas] - best[name, 1]) / (deltas - 1), firsts[name]) for name in names
    }


def chunks_of_an_answer() -> list[ChatCompletionChunk]:
    """The SDK's chunks of a streamed answer: 400 characters of text in pieces of 4, then
    a tool call whose 120 characters of arguments come in pieces of 4, and usage."""
    arguments = json.dumps({"query": "x" * 100, "limit": 5})
    reply = completion(
        "word " * 80,
        tool_calls=[tool_call("call_1", "search", arguments)],
        usage={"prompt_tokens": 50, "completion_tokens": 150, "total_tokens": 200},
    )
    events = as_stream(reply, 4).events or ()
    return [ChatCompletionChunk.model_validate(event) for event in events]


def reader_per_chunk(repeat: int) -> tuple[float, float, int]:
    """Seconds per chunk: ``StreamReader.read`` (and ``response`` once), and the SDK's
    own parse of one chunk; and how many chunks the answer has."""
    parsed = chunks_of_an_answer()
    lines = [json.dumps(chunk.model_dump(mode="json")) for chunk in parsed]
    reader_best = sdk_best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(20):
            reader = StreamReader()
            for chunk in parsed:
                reader.read(chunk)
            reader.response()
        reader_best = min(reader_best, (time.perf_counter() - start) / 20 / len(parsed))
        start = time.perf_counter()
        for _ in range(20):
            for line in lines:
                construct_type(type_=ChatCompletionChunk, value=json.loads(line))
        sdk_best = min(sdk_best, (time.perf_counter() - start) / 20 / len(parsed))
    return reader_best, sdk_best, len(parsed)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streaming", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--deltas", type=int, default=2000, help="deltas in the long answer")
    parser.add_argument("--repeat", type=int, default=15, help="samples per figure")
    args = parser.parse_args(argv)
    deltas, repeat = (100, 2) if args.quick else (args.deltas, args.repeat)
    if deltas < 2 or repeat < 1:
        parser.error("--deltas must be at least 2 and --repeat positive")
    print(
        f"hookline model streams: Python {platform.python_version()}, "
        f"{'quick' if args.quick else 'full'} mode, {deltas} deltas of {SIZE} characters, "
        f"best of {repeat}"
    )
    gc.collect()
    gc.disable()
    try:
        with asyncio.Runner() as loop:
            figures = loop.run(per_delta(deltas, repeat))
        reader, sdk, count = reader_per_chunk(repeat)
    finally:
        gc.enable()
    baseline = {
        "ScriptedModel.astream": "bare+wait",
        "ScriptedModel.stream": "bare sync TextDelta",
    }
    print("per delta                       first item")
    for name, (delta, first_item) in figures.items():
        ratio = f"  ({delta / figures[baseline.get(name, name)][0]:.2f}x {baseline.get(name)})"
        shown = ratio if name in baseline else ""
        print(f"  {name:<22} {delta * 1e9:6.0f} ns   {first_item * 1e6:7.2f} µs{shown}")
    print(
        f"OpenAIChatModel per chunk ({count} chunks): StreamReader.read {reader * 1e9:.0f} ns,"
        f" the SDK's own parse {sdk * 1e9:.0f} ns ({reader / sdk:.2f}x of it)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
