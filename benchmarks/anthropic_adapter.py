"""``AnthropicModel`` against the anthropic SDK called directly, over a local server.

Run ``python -m benchmarks.anthropic_adapter`` (``--quick`` for a smoke run).

One round trip is one ``POST /v1/messages`` against the test suite's loopback Messages API
server (``tests/helpers/anthropic_server.py``) on 127.0.0.1, with keep-alive: the request
is a six-message conversation (the instruction as ``system``, a user turn, an assistant
turn with a thinking block and a tool call, its result, a text turn, a second user turn)
offering two tools; the reply is a thinking block, text and a tool call with usage. Two
contenders share one SDK client (so one connection pool):

* ``sdk``: ``client.messages.create(...)`` with the system text, messages and tools
  already written as the API's dicts, as a careful developer would hold them; streamed,
  ``create(..., stream=True)`` iterated to its last event;
* ``adapter``: ``AnthropicModel.generate(request)`` / ``agenerate`` / ``stream`` on
  hookline's ``ModelRequest``: it writes those dicts from the messages on every call and
  maps the answer back to a ``ModelResponse`` (text, tool call with parsed arguments,
  the thinking block as a ``ReasoningPart``, usage, stop reason); streamed, every delta
  and the final response.

Before timing, the benchmark checks that both send the server the very same body.
Target: the adapter's round trip at most 1.05x the SDK's, sync, async and streamed (the
streamed figure is also given per delta). How it times is as in
``benchmarks/openai_adapter.py``: turns, every round trip timed, the fast decile (10th
percentile) compared, the median beside it, the cyclic GC off.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anthropic

from runner import AnthropicModel, Message, ModelRequest, ReasoningPart, ToolCall, ToolSpec
from runner._models.anthropic.stream import StreamReader
from runner._models.anthropic.wire import from_message, to_tools, to_wire
from tests.helpers.anthropic_server import (
    AnthropicServer,
    as_stream,
    message,
    text,
    thinking,
    tool_use,
)

MODEL: Final = "claude-bench"
MAX_TOKENS: Final = 1024
TARGET: Final = 1.05
SCHEMA: Final = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
SYSTEM: Final = "You are a careful calculator. Use the tools."
THOUGHT: Final = thinking("The user wants 2 + 3: call add.", "EqQBCkYIAxgCIkD+/" + "s" * 200)
REQUEST: Final = ModelRequest(
    (
        Message("system", SYSTEM),
        Message("user", "What is 2 + 3?"),
        Message(
            "assistant",
            "",
            tool_calls=(ToolCall("toolu_1", "add", {"a": 2, "b": 3}),),
            parts=(ReasoningPart("anthropic", json.dumps(THOUGHT), THOUGHT["thinking"]),),
        ),
        Message("tool", "5", tool_call_id="toolu_1", name="add"),
        Message("assistant", "It is 5."),
        Message("user", "And 5 + 7, then times 2?"),
    ),
    (ToolSpec("add", "Add two integers.", SCHEMA), ToolSpec("mul", "Multiply.", SCHEMA)),
)
WIRE_MESSAGES: Final[list[Any]] = [
    {"role": "user", "content": "What is 2 + 3?"},
    {
        "role": "assistant",
        "content": [
            THOUGHT,
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}],
    },
    {"role": "assistant", "content": "It is 5."},
    {"role": "user", "content": "And 5 + 7, then times 2?"},
]
WIRE_TOOLS: Final[list[Any]] = [
    {"name": "add", "description": "Add two integers.", "input_schema": SCHEMA},
    {"name": "mul", "description": "Multiply.", "input_schema": SCHEMA},
]
REPLY: Final = message(
    thinking("5 + 7 first.", "EqQBCkYIAxgCIkD+/" + "t" * 200),
    text("Let me add 5 and 7 first, then I will multiply the sum by two."),
    tool_use("toolu_2", "add", {"a": 5, "b": 7}),
    usage={"input_tokens": 120, "output_tokens": 18, "cache_read_input_tokens": 0},
)
STREAM: Final = as_stream(REPLY, size=4)
Timings = dict[str, list[int]]


def sync_turns(
    client: anthropic.Anthropic, model: AnthropicModel, calls: int, *, stream: bool
) -> Timings:
    """ns of each round trip, the two contenders taking turns."""

    def sdk_streamed() -> None:
        for _ in client.messages.create(
            model=MODEL,
            max_tokens=MAX_TOKENS,
            system=SYSTEM,
            messages=WIRE_MESSAGES,
            tools=WIRE_TOOLS,
            stream=True,
        ):
            pass

    def adapter_streamed() -> None:
        for _ in model.stream(REQUEST):
            pass

    contenders: dict[str, Callable[[], object]] = {
        "sdk": sdk_streamed
        if stream
        else lambda: client.messages.create(
            model=MODEL,
            max_tokens=MAX_TOKENS,
            system=SYSTEM,
            messages=WIRE_MESSAGES,
            tools=WIRE_TOOLS,
        ),
        "adapter": adapter_streamed if stream else lambda: model.generate(REQUEST),
    }
    times: Timings = {name: [] for name in contenders}
    clock = time.perf_counter_ns
    for _ in range(calls):
        for name, call in contenders.items():
            start = clock()
            call()
            times[name].append(clock() - start)
    return times


async def async_turns(
    client: anthropic.AsyncAnthropic, model: AnthropicModel, calls: int
) -> Timings:
    """ns of each awaited round trip, the two contenders taking turns on one loop."""
    contenders: dict[str, Callable[[], Awaitable[object]]] = {
        "sdk": lambda: client.messages.create(
            model=MODEL,
            max_tokens=MAX_TOKENS,
            system=SYSTEM,
            messages=WIRE_MESSAGES,
            tools=WIRE_TOOLS,
        ),
        "adapter": lambda: model.agenerate(REQUEST),
    }
    times: Timings = {name: [] for name in contenders}
    clock = time.perf_counter_ns
    for _ in range(calls):
        for name, call in contenders.items():
            start = clock()
            await call()
            times[name].append(clock() - start)
    return times


def check(server: AnthropicServer, times: Callable[[int], Timings]) -> None:
    """One turn each: both contenders send the server the same body."""
    before = len(server.bodies)
    times(1)
    sdk_body, adapter_body = server.bodies[before:]
    if sdk_body != adapter_body:
        msg = f"the adapter sent {adapter_body!r}, the SDK {sdk_body!r}"
        raise AssertionError(msg)


def timed(times: Callable[[int], Timings], calls: int) -> Timings:
    """``times(calls)`` with the cyclic GC off."""
    gc.collect()
    gc.disable()
    try:
        return times(calls)
    finally:
        gc.enable()


def percentile(values: list[int], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(kind: str, times: Timings, deltas: int = 0) -> bool:
    """Print one line and say whether the target was met."""
    fast = {name: percentile(values, 0.1) for name, values in times.items()}
    middle = {name: percentile(values, 0.5) for name, values in times.items()}
    ratio = fast["adapter"] / fast["sdk"]
    met = ratio <= TARGET
    per = (
        f"   per delta: sdk {fast['sdk'] / deltas / 1000:.1f} µs, adapter "
        f"{fast['adapter'] / deltas / 1000:.1f} µs ({deltas} deltas)"
        if deltas
        else ""
    )
    print(
        f"{kind:>8}  sdk {fast['sdk'] / 1000:7.0f} µs (median {middle['sdk'] / 1000:.0f})"
        f"   adapter {fast['adapter'] / 1000:7.0f} µs (median {middle['adapter'] / 1000:.0f})"
        f"   adapter/sdk {ratio:.3f}x   target <= {TARGET:.2f}x: {'met' if met else 'MISSED'}{per}"
    )
    return met


def mapping_ns(repeat: int) -> float:
    """ns of the adapter's own work per call: the request's dicts and the response mapped
    back, without the SDK or the network (the best of ``repeat`` loops of 1000)."""
    body = json.loads(json.dumps(REPLY.body))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(1000):
            to_wire(REQUEST.messages)
            to_tools(REQUEST.tools)
            from_message(body)
        best = min(best, (time.perf_counter_ns() - start) / 1000)
    return best


def main(argv: list[str] | None = None) -> int:
    """Check, measure and print; returns 0 (a missed target is reported, not an error)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.anthropic_adapter", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="a few round trips: a smoke run")
    parser.add_argument("--calls", type=int, default=None, help="round trips per contender")
    args = parser.parse_args(argv)
    calls: int = args.calls or (20 if args.quick else 600)
    if calls < 1:
        parser.error("--calls must be positive")
    print(
        f"hookline Anthropic adapter benchmark: Python {platform.python_version()}, "
        f"anthropic {anthropic.__version__}, {'quick' if args.quick else 'full'} mode, "
        f"{calls} round trips each (one message against a local server), "
        "10th percentile compared"
    )
    started = time.perf_counter()
    verdicts: list[bool] = []
    deltas = _deltas()
    with AnthropicServer(max_requests=10**7, always=REPLY) as server:
        options: dict[str, Any] = {"base_url": server.url, "api_key": "sk-bench", "max_retries": 0}
        with anthropic.Anthropic(**options) as client:
            model = AnthropicModel(MODEL, client=client, max_tokens=MAX_TOKENS)

            def sync(n: int) -> Timings:
                return sync_turns(client, model, n, stream=False)

            check(server, sync)
            verdicts.append(report("sync", timed(sync, calls)))
            server.always = STREAM

            def streamed(n: int) -> Timings:
                return sync_turns(client, model, n, stream=True)

            check(server, streamed)
            verdicts.append(report("streamed", timed(streamed, calls), deltas))
            server.always = REPLY
        with asyncio.Runner() as loop:
            aclient = anthropic.AsyncAnthropic(**options)
            amodel = AnthropicModel(MODEL, async_client=aclient, max_tokens=MAX_TOKENS)

            def in_loop(n: int) -> Timings:
                return loop.run(async_turns(aclient, amodel, n))

            check(server, in_loop)
            verdicts.append(report("async", timed(in_loop, calls)))
            loop.run(aclient.close())
    own = mapping_ns(repeat=5 if args.quick else 25)
    print(f"adapter's own work (request dicts + response mapping): {own / 1000:.1f} µs per call")
    missed = verdicts.count(False)
    print(
        f"targets: {len(verdicts) - missed} of {len(verdicts)} met"
        + (f", {missed} MISSED" if missed else "")
    )
    print(f"measured in {time.perf_counter() - started:.1f} s")
    return 0


def _deltas() -> int:
    """How many deltas the adapter yields for the benchmark's stream."""
    reader = StreamReader()
    return sum(
        len(reader.read(dict(data))) for _, data in STREAM.events or () if not isinstance(data, str)
    )


if __name__ == "__main__":
    sys.exit(main())
