"""``OpenAIChatModel`` against the SDK called directly, over a local server.

Run ``python -m benchmarks.openai_adapter`` (``--quick`` for a smoke run).

One round trip is one chat completion against the test suite's OpenAI-compatible server
(``tests/helpers/openai_server.py``) on 127.0.0.1, with keep-alive: the request is a six-message
conversation (system, user, an assistant turn with a tool call, its result, a second
user turn) offering two tools; the reply is a tool call with usage. Two contenders
share one SDK client (so one connection pool), sync and async:

* ``sdk``: ``client.chat.completions.create(...)`` with the messages and tools already
  written as the wire format's dicts, as a careful developer would hold them;
* ``adapter``: ``OpenAIChatModel.generate(request)`` / ``agenerate`` on hookline's
  ``ModelRequest``: it writes those dicts from the messages on every call, and maps the
  completion back to a ``ModelResponse`` (text, tool calls with parsed arguments,
  usage, finish reason).

Before timing, the benchmark checks that both send the server the very same body.
Target: the adapter's round trip at most 1.10x the SDK's, sync and async. It also
prints the adapter's own work alone (the request's dicts and the response's mapping,
no SDK, no network), which is what the ratio's excess should be made of.

How it times: the contenders take turns, one round trip each, ``--calls`` times, and
every round trip is timed (``time.perf_counter_ns``). The server shares the machine
and the interpreter, so a round trip's time swings with any other load: the figure
compared is each contender's fast decile (its 10th percentile), with the median shown
beside it. Turn by turn, load from elsewhere hits both alike. The async round trips
run on one event loop kept for the whole benchmark. The cyclic GC is off while timing,
as in ``timeit``.
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

import openai
from openai.types.chat import ChatCompletion

from runner import Message, ModelRequest, OpenAIChatModel, ToolCall, ToolSpec
from runner._models.openai.wire import from_completion, to_messages, to_tools
from tests.helpers.openai_server import OpenAIServer, completion, tool_call

MODEL: Final = "bench-model"
TARGET: Final = 1.10
SCHEMA: Final = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
REQUEST: Final = ModelRequest(
    (
        Message("system", "You are a careful calculator. Use the tools."),
        Message("user", "What is 2 + 3?"),
        Message("assistant", "", tool_calls=(ToolCall("call_1", "add", {"a": 2, "b": 3}),)),
        Message("tool", "5", tool_call_id="call_1", name="add"),
        Message("assistant", "It is 5."),
        Message("user", "And 5 + 7, then times 2?"),
    ),
    (ToolSpec("add", "Add two integers.", SCHEMA), ToolSpec("mul", "Multiply.", SCHEMA)),
)
WIRE_MESSAGES: Final[list[Any]] = [
    {"role": "system", "content": "You are a careful calculator. Use the tools."},
    {"role": "user", "content": "What is 2 + 3?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
            }
        ],
    },
    {"role": "tool", "content": "5", "tool_call_id": "call_1"},
    {"role": "assistant", "content": "It is 5."},
    {"role": "user", "content": "And 5 + 7, then times 2?"},
]
WIRE_TOOLS: Final[list[Any]] = [
    {
        "type": "function",
        "function": {"name": "add", "description": "Add two integers.", "parameters": SCHEMA},
    },
    {
        "type": "function",
        "function": {"name": "mul", "description": "Multiply.", "parameters": SCHEMA},
    },
]
REPLY: Final = completion(
    None,
    tool_calls=[tool_call("call_2", "add", '{"a": 5, "b": 7}')],
    usage={"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138},
)
Timings = dict[str, list[int]]


def sync_turns(client: openai.OpenAI, model: OpenAIChatModel, calls: int) -> Timings:
    """ns of each round trip, the two contenders taking turns."""
    contenders: dict[str, Callable[[], object]] = {
        "sdk": lambda: client.chat.completions.create(
            model=MODEL, messages=WIRE_MESSAGES, tools=WIRE_TOOLS, temperature=0
        ),
        "adapter": lambda: model.generate(REQUEST),
    }
    times: Timings = {name: [] for name in contenders}
    clock = time.perf_counter_ns
    for _ in range(calls):
        for name, call in contenders.items():
            start = clock()
            call()
            times[name].append(clock() - start)
    return times


async def async_turns(client: openai.AsyncOpenAI, model: OpenAIChatModel, calls: int) -> Timings:
    """ns of each awaited round trip, the two contenders taking turns on one loop."""
    contenders: dict[str, Callable[[], Awaitable[object]]] = {
        "sdk": lambda: client.chat.completions.create(
            model=MODEL, messages=WIRE_MESSAGES, tools=WIRE_TOOLS, temperature=0
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


def check(server: OpenAIServer, times: Callable[[int], Timings]) -> None:
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


def report(kind: str, times: Timings) -> bool:
    """Print one line and say whether the target was met."""
    fast = {name: percentile(values, 0.1) for name, values in times.items()}
    middle = {name: percentile(values, 0.5) for name, values in times.items()}
    ratio = fast["adapter"] / fast["sdk"]
    met = ratio <= TARGET
    print(
        f"{kind:>6}  sdk {fast['sdk'] / 1000:7.0f} µs (median {middle['sdk'] / 1000:.0f})"
        f"   adapter {fast['adapter'] / 1000:7.0f} µs (median {middle['adapter'] / 1000:.0f})"
        f"   adapter/sdk {ratio:.3f}x   target <= {TARGET:.2f}x: {'met' if met else 'MISSED'}"
    )
    return met


def mapping_ns(repeat: int) -> float:
    """ns of the adapter's own work per call: the request's dicts and the response mapped
    back, without the SDK or the network (the best of ``repeat`` loops of 1000)."""
    body = ChatCompletion.model_validate(REPLY.body)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(1000):
            to_messages(REQUEST.messages)
            to_tools(REQUEST.tools)
            from_completion(body)
        best = min(best, (time.perf_counter_ns() - start) / 1000)
    return best


def main(argv: list[str] | None = None) -> int:
    """Check, measure and print; returns 0 (a missed target is reported, not an error)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.openai_adapter", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="a few round trips: a smoke run")
    parser.add_argument("--calls", type=int, default=None, help="round trips per contender")
    args = parser.parse_args(argv)
    calls: int = args.calls or (20 if args.quick else 800)
    if calls < 1:
        parser.error("--calls must be positive")
    print(
        f"hookline OpenAI adapter benchmark: Python {platform.python_version()}, "
        f"openai {openai.__version__}, {'quick' if args.quick else 'full'} mode, "
        f"{calls} round trips each (one chat completion against a local server), "
        "10th percentile compared"
    )
    started = time.perf_counter()
    verdicts: list[bool] = []
    with OpenAIServer(max_requests=10**7, always=REPLY) as server:
        options: dict[str, Any] = {"base_url": server.url, "api_key": "sk-bench", "max_retries": 0}
        with openai.OpenAI(**options) as client:
            model = OpenAIChatModel(MODEL, client=client, temperature=0)

            def sync(n: int) -> Timings:
                return sync_turns(client, model, n)

            check(server, sync)
            verdicts.append(report("sync", timed(sync, calls)))
        with asyncio.Runner() as loop:
            aclient = openai.AsyncOpenAI(**options)
            amodel = OpenAIChatModel(MODEL, async_client=aclient, temperature=0)

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


if __name__ == "__main__":
    sys.exit(main())
