"""``HooklineCapability``'s cost: a pydantic-ai agent run with hookline guards against the
same agent without them, on an instant model.

Run ``python -m benchmarks.pydantic_ai_adapter`` in the pydantic-ai environment
(``.venv-pydantic-ai``; ``--quick`` for a smoke run).

One run is one ``await agent.run(...)``: pydantic-ai's own ``FunctionModel`` answers
instantly, first with ``CALLS`` calls of a ``lookup`` tool, then with text, so a run is
two model requests and ``CALLS`` tool calls. Contenders take turns on one event loop:

* ``bare``: the agent without hookline;
* ``passthrough``: the agent with a capability that overrides the hooks hookline's does
  and passes everything through: what pydantic-ai itself charges any such capability;
* ``guarded``: the same agent with ``HooklineCapability([Guards()])``, where ``Guards``
  has a ``before_model`` and a ``before_tool`` that let everything through (each call is
  dispatched, converted and checked; nothing is changed);
* ``audited``: ``guarded`` plus an ``audit(...)`` observer, so every dispatch is traced
  and told as a ``HookEvent``.

Before timing, the benchmark checks that all give the same answer and tool results.
Every run is timed in CPU time of the process (``time.process_time_ns``: the machine is
shared, and wall time there measures the neighbours too), the fast decile (10th
percentile) and the median compared with ``bare``'s; the cyclic GC is off while timing.
Target: ``guarded`` at most 1.1x of
``bare`` (issue 23); the figure is reported, whatever it is.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import sys
import time
from typing import Any, Final

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from hooks import Cont, HookEvent, ModelContext, ToolContext, audit
from runner.adapters.pydantic_ai import HooklineCapability

TARGET: Final = 1.1
CALLS: Final = 3


class Guards:
    """A guard module that lets every model and tool call through."""

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        return Cont(ctx)


class Audit:
    """An audit observer that counts what it is told."""

    def __init__(self) -> None:
        self.told = 0

    def on_event(self, event: HookEvent, /) -> None:
        self.told += 1


class Passthrough(AbstractCapability[Any]):
    """A capability overriding the hooks ``HooklineCapability`` does, changing nothing."""

    async def for_run(self, ctx: RunContext[Any]) -> Passthrough:
        return Passthrough()

    async def wrap_run(self, ctx: RunContext[Any], *, handler: Any) -> Any:
        return await handler()

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        return request_context

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        return response

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        raise error

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: Any
    ) -> ModelResponse:
        response: ModelResponse = await handler(request_context)
        return response

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        return await handler(args)


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Tool calls on the first request of a run, text once their results are in."""
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        return ModelResponse(parts=[TextPart("found them all")])
    return ModelResponse(
        parts=[ToolCallPart("lookup", {"key": f"k{i}"}, tool_call_id=f"c{i}") for i in range(CALLS)]
    )


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def agent(capabilities: list[Any]) -> Agent[None, str]:
    """The benchmark's agent, with ``capabilities``."""
    return Agent(
        FunctionModel(answer),
        name="bench",
        tools=[Tool(lookup)],
        capabilities=capabilities,
    )


def contenders() -> dict[str, Agent[None, str]]:
    """The three agents, bare first."""
    return {
        "bare": agent([]),
        "passthrough": agent([Passthrough()]),
        "guarded": agent([HooklineCapability([Guards()])]),
        "audited": agent([HooklineCapability([Guards(), audit(Audit())])]),
    }


def _seen(messages: list[ModelMessage]) -> list[str]:
    return [
        part.model_response_str()
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


async def check(agents: dict[str, Agent[None, str]]) -> None:
    """Each contender answers the same and its model read the same tool results."""
    found: set[tuple[str, tuple[str, ...]]] = set()
    for name, each in agents.items():
        result = await each.run("look them up")
        found.add((result.output, tuple(sorted(_seen(result.all_messages())))))
        if len(found) != 1:
            msg = f"{name} answered differently: {found}"
            raise AssertionError(msg)


async def turns(agents: dict[str, Agent[None, str]], runs: int) -> dict[str, list[int]]:
    """ns of each run, the contenders taking turns."""
    times: dict[str, list[int]] = {name: [] for name in agents}
    clock = time.process_time_ns
    for _ in range(runs):
        for name, each in agents.items():
            start = clock()
            await each.run("look them up")
            times[name].append(clock() - start)
    return times


def _p10(values: list[int]) -> float:
    ordered = sorted(values)
    return float(ordered[len(ordered) // 10])


def main(argv: list[str] | None = None) -> int:
    """Time the contenders and print each one's ratio to ``bare``; 0 when they agree."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few runs")
    parser.add_argument("--runs", type=int, default=None, help="runs per contender")
    args = parser.parse_args(argv)
    runs = args.runs or (20 if args.quick else 2000)
    agents = contenders()

    async def measure() -> dict[str, list[int]]:
        await check(agents)
        await turns(agents, max(runs // 10, 5))  # warm-up
        gc.collect()
        gc.disable()
        try:
            return await turns(agents, runs)
        finally:
            gc.enable()

    times = asyncio.run(measure())
    print(
        f"pydantic-ai adapter: {runs} runs per contender, each 2 model requests and "
        f"{CALLS} tool calls (python {platform.python_version()}, {sys.platform})"
    )
    bare_p10, bare_median = _p10(times["bare"]), statistics.median(times["bare"])
    for name, values in times.items():
        p10, median = _p10(values), statistics.median(values)
        print(
            f"  {name:11} p10 {p10 / 1000:8.1f} us ({p10 / bare_p10:.3f}x)   "
            f"median {median / 1000:8.1f} us ({median / bare_median:.3f}x)"
        )
    ratio = _p10(times["guarded"]) / bare_p10
    verdict = "within" if ratio <= TARGET else "over"
    print(f"guarded / bare (p10): {ratio:.3f}x, {verdict} the {TARGET}x target")
    own = (_p10(times["guarded"]) - _p10(times["passthrough"])) / (2 + CALLS) / 1000
    print(f"hookline's own work per guarded call (p10, beyond passthrough): {own:.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
