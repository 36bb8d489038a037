"""``OpenAIResponsesModel`` against the SDK's ``client.responses`` called directly, over a
local server.

Run ``python -m benchmarks.responses_adapter`` (``--quick`` for a smoke run).

One round trip is one ``POST /v1/responses`` against the test suite's Responses server
(``tests/helpers/responses_server.py``) on 127.0.0.1, with keep-alive: the request is a
conversation (instructions, a user turn, a reasoning item, a function call and its
output, an answer, a second user turn) offering two tools; the reply is a reasoning item
and a function call with usage. Streamed, the reply is a text of ``--deltas`` pieces,
then the final ``response.completed``. Two contenders share one SDK client (so one
connection pool), sync and async:

* ``sdk``: ``client.responses.create(...)`` with the input and tools already written as
  the wire format's dicts, as a careful developer would hold them; streamed, iterating
  the SDK's ``Stream`` of typed events to its end;
* ``adapter``: ``OpenAIResponsesModel.generate(request)`` / ``agenerate`` / ``stream`` /
  ``astream`` on hookline's ``ModelRequest``: it writes those dicts from the messages
  on every call and maps the answer back to a ``ModelResponse`` (text, tool calls with
  parsed arguments, the reasoning part, usage, finish reason); streamed, a ``TextDelta``
  per text event, then the ``ModelResponse``.

Before timing, the benchmark checks that both send the server the very same body.
Target: the adapter's round trip at most 1.05x the SDK's: sync, async, and streamed (the
same number of deltas on both sides, so the ratio per delta is the ratio per stream; the
time per delta is printed beside it).

How it times: as ``benchmarks/openai_adapter.py`` -- the contenders take turns, each round
trip is timed, the fast decile (10th percentile) is compared with the median beside it,
the cyclic GC off, one event loop for all the async round trips.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import openai

from benchmarks.openai_adapter import Timings, percentile, timed
from runner import (
    Message,
    ModelRequest,
    OpenAIResponsesModel,
    ReasoningPart,
    ToolCall,
    ToolSpec,
)
from tests.helpers.responses_server import (
    ResponsesServer,
    as_stream,
    function_call,
    message,
    reasoning,
    response,
    usage,
)

MODEL: Final = "bench-model"
TARGET: Final = 1.05
SCHEMA: Final = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
INSTRUCTION: Final = "You are a careful calculator. Use the tools."
THOUGHT: Final = reasoning("rs_1", "gAAAAB" + "x" * 600, "Add them.")
REQUEST: Final = ModelRequest(
    (
        Message("system", INSTRUCTION),
        Message("user", "What is 2 + 3?"),
        Message(
            "assistant",
            "",
            tool_calls=(ToolCall("call_1", "add", {"a": 2, "b": 3}),),
            parts=(ReasoningPart("openai", json.dumps(THOUGHT), "Add them."),),
        ),
        Message("tool", "5", tool_call_id="call_1", name="add"),
        Message("assistant", "It is 5."),
        Message("user", "And 5 + 7, then times 2?"),
    ),
    (ToolSpec("add", "Add two integers.", SCHEMA), ToolSpec("mul", "Multiply.", SCHEMA)),
)
WIRE_INPUT: Final[list[Any]] = [
    {"type": "message", "role": "user", "content": "What is 2 + 3?"},
    THOUGHT,
    {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 3}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "5"},
    {"type": "message", "role": "assistant", "content": "It is 5."},
    {"type": "message", "role": "user", "content": "And 5 + 7, then times 2?"},
]
WIRE_TOOLS: Final[list[Any]] = [
    {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": SCHEMA,
        "strict": False,
    }
    for name, description in (("add", "Add two integers."), ("mul", "Multiply."))
]
WIRE: Final[dict[str, Any]] = {
    "model": MODEL,
    "instructions": INSTRUCTION,
    "input": WIRE_INPUT,
    "include": ["reasoning.encrypted_content"],
    "store": False,
    "temperature": 0,
    "tools": WIRE_TOOLS,
}
REPLY: Final = response(
    reasoning("rs_2", "gAAAAB" + "y" * 600, "Add, then multiply."),
    function_call("call_2", "add", '{"a": 5, "b": 7}'),
    used=usage(120, 18, cached=64, reasoning_tokens=12),
)


def streamed_reply(deltas: int) -> Any:
    """A streamed answer of ``deltas`` text pieces of 4 characters."""
    return as_stream(response(message("abcd" * deltas), used=usage(120, deltas)), size=4)


def sync_turns(
    client: openai.OpenAI, model: OpenAIResponsesModel, calls: int, *, streamed: bool
) -> Timings:
    """ns of each round trip, the two contenders taking turns."""

    def sdk_stream() -> None:
        for _ in client.responses.create(**WIRE, stream=True):
            pass

    def adapter_stream() -> None:
        for _ in model.stream(REQUEST):
            pass

    contenders: dict[str, Callable[[], object]] = (
        {"sdk": sdk_stream, "adapter": adapter_stream}
        if streamed
        else {
            "sdk": lambda: client.responses.create(**WIRE),
            "adapter": lambda: model.generate(REQUEST),
        }
    )
    times: Timings = {name: [] for name in contenders}
    clock = time.perf_counter_ns
    for _ in range(calls):
        for name, call in contenders.items():
            start = clock()
            call()
            times[name].append(clock() - start)
    return times


async def async_turns(
    client: openai.AsyncOpenAI, model: OpenAIResponsesModel, calls: int, *, streamed: bool
) -> Timings:
    """ns of each awaited round trip, the two contenders taking turns on one loop."""

    async def sdk_stream() -> None:
        async for _ in await client.responses.create(**WIRE, stream=True):
            pass

    async def adapter_stream() -> None:
        async for _ in model.astream(REQUEST):
            pass

    contenders: dict[str, Callable[[], Awaitable[object]]] = (
        {"sdk": sdk_stream, "adapter": adapter_stream}
        if streamed
        else {
            "sdk": lambda: client.responses.create(**WIRE),
            "adapter": lambda: model.agenerate(REQUEST),
        }
    )
    times: Timings = {name: [] for name in contenders}
    clock = time.perf_counter_ns
    for _ in range(calls):
        for name, call in contenders.items():
            start = clock()
            await call()
            times[name].append(clock() - start)
    return times


def check(server: ResponsesServer, times: Callable[[int], Timings]) -> None:
    """One turn each: both contenders send the server the same body."""
    before = len(server.bodies)
    times(1)
    sdk_body, adapter_body = server.bodies[before:]
    if sdk_body != adapter_body:
        msg = f"the adapter sent {adapter_body!r}, the SDK {sdk_body!r}"
        raise AssertionError(msg)


def report(kind: str, times: Timings, deltas: int = 0) -> bool:
    """Print one line and say whether the target was met."""
    fast = {name: percentile(values, 0.1) for name, values in times.items()}
    middle = {name: percentile(values, 0.5) for name, values in times.items()}
    ratio = fast["adapter"] / fast["sdk"]
    met = ratio <= TARGET
    per = (
        f"   per delta: sdk {fast['sdk'] / deltas / 1000:.1f} µs, "
        f"adapter {fast['adapter'] / deltas / 1000:.1f} µs"
        if deltas
        else ""
    )
    print(
        f"{kind:>14}  sdk {fast['sdk'] / 1000:7.0f} µs (median {middle['sdk'] / 1000:.0f})"
        f"   adapter {fast['adapter'] / 1000:7.0f} µs (median {middle['adapter'] / 1000:.0f})"
        f"   adapter/sdk {ratio:.3f}x   target <= {TARGET:.2f}x: {'met' if met else 'MISSED'}" + per
    )
    return met


def main(argv: list[str] | None = None) -> int:
    """Check, measure and print; returns 0 (a missed target is reported, not an error)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.responses_adapter", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="a few round trips: a smoke run")
    parser.add_argument("--calls", type=int, default=None, help="round trips per contender")
    parser.add_argument("--deltas", type=int, default=64, help="text deltas per streamed answer")
    args = parser.parse_args(argv)
    calls: int = args.calls or (10 if args.quick else 400)
    deltas: int = args.deltas
    if calls < 1 or deltas < 1:
        parser.error("--calls and --deltas must be positive")
    print(
        f"hookline Responses adapter benchmark: Python {platform.python_version()}, "
        f"openai {openai.__version__}, {'quick' if args.quick else 'full'} mode, "
        f"{calls} round trips each (one response against a local server; streamed: "
        f"{deltas} deltas), 10th percentile compared"
    )
    started = time.perf_counter()
    verdicts: list[bool] = []
    for streamed in (False, True):
        reply = streamed_reply(deltas) if streamed else REPLY
        label = "streamed" if streamed else ""
        with ResponsesServer(max_requests=10**7, always=reply) as server:
            options: dict[str, Any] = {
                "base_url": server.url,
                "api_key": "sk-bench",
                "max_retries": 0,
            }
            with openai.OpenAI(**options) as client:
                model = OpenAIResponsesModel(MODEL, client=client, temperature=0)

                def sync(n: int) -> Timings:
                    return sync_turns(client, model, n, streamed=streamed)  # noqa: B023

                check(server, sync)
                kind = f"sync {label}".strip()
                verdicts.append(report(kind, timed(sync, calls), deltas if streamed else 0))
            with asyncio.Runner() as loop:
                aclient = openai.AsyncOpenAI(**options)
                amodel = OpenAIResponsesModel(MODEL, async_client=aclient, temperature=0)

                def in_loop(n: int) -> Timings:
                    return loop.run(async_turns(aclient, amodel, n, streamed=streamed))  # noqa: B023

                check(server, in_loop)
                kind = f"async {label}".strip()
                verdicts.append(report(kind, timed(in_loop, calls), deltas if streamed else 0))
                loop.run(aclient.close())
    missed = verdicts.count(False)
    print(
        f"targets: {len(verdicts) - missed} of {len(verdicts)} met"
        + (f", {missed} MISSED" if missed else "")
    )
    print(f"measured in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
