"""``hookline_middleware`` against the same LangChain agent without it.

Run ``python -m benchmarks.langchain_adapter`` in ``.venv-langchain`` (``--quick`` for a
smoke run; ``make test-langchain`` runs that).

One run is one ``agent.invoke`` of a LangChain 1.x ``create_agent`` graph on an instant
fake model (``GenericFakeChatModel``): the model asks for one tool call, the tool answers,
the model answers -- two model calls and one tool call, each of them a guarded call when
hookline guards it. Three contenders, the same agent but for its middleware:

* ``bare``: no middleware, LangChain's own run;
* ``native``: a plain LangChain ``AgentMiddleware`` whose ``wrap_model_call`` and
  ``wrap_tool_call`` check the call and pass it on, what a hand-written guard costs;
* ``hookline``: ``hookline_middleware([guard])`` with a guard defining ``before_model``
  and ``before_tool`` that let every call through (the chains run, the messages are
  converted for the model hooks).

The figure is each contender's fast decile (10th percentile) over ``--runs`` runs taken
in turns, one run each, so load from elsewhere hits all alike; the GC is off while
timing. Target: hookline at most 1.10x ``bare``.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware, AgentState, InputAgentState
from langchain.agents.middleware import ModelRequest as LCModelRequest
from langchain.agents.middleware import ModelResponse as LCModelResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from hooks import Cont, ModelContext, ToolContext
from runner.adapters.langchain import hookline_middleware


class _Model(GenericFakeChatModel):
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> _Model:
        return self


class Guard:
    """A guard that lets every model and tool call through."""

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        if ctx.call.name == "rm":
            raise AssertionError
        return Cont(ctx)


class NativeGuard(AgentMiddleware[AgentState[Any], Any, Any]):
    """The same guard written against LangChain's middleware directly."""

    def wrap_model_call(
        self,
        request: LCModelRequest[Any],
        handler: Callable[[LCModelRequest[Any]], LCModelResponse[Any]],
    ) -> LCModelResponse[Any]:
        """Pass the call on."""
        return handler(request)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Check the tool's name, then pass the call on."""
        if request.tool_call["name"] == "rm":
            raise AssertionError
        return handler(request)


def _answers() -> Any:
    call = {"name": "add", "args": {"a": 2, "b": 3}, "id": "c1", "type": "tool_call"}
    return itertools.cycle([AIMessage("", tool_calls=[call]), AIMessage("5")])


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def agent(middleware: Sequence[AgentMiddleware[Any, Any, Any]]) -> Callable[[], object]:
    """One run of the agent with ``middleware``, as a function."""
    graph = create_agent(
        _Model(messages=_answers()),
        tools=[StructuredTool.from_function(add)],
        middleware=middleware,
    )
    asked: InputAgentState = {"messages": [HumanMessage("what is 2 + 3?")]}

    def run() -> object:
        state = graph.invoke(asked)  # pyright: ignore[reportUnknownMemberType]
        assert state["messages"][-1].content == "5"
        return state

    return run


def measure(runs: int) -> dict[str, list[int]]:
    """Each contender's run times in nanoseconds, taken in turns."""
    contenders = {
        "bare": agent([]),
        "native": agent([NativeGuard()]),
        "hookline": agent([hookline_middleware([Guard()])]),
    }
    times: dict[str, list[int]] = {name: [] for name in contenders}
    for run in contenders.values():  # warm up: imports, graph compilation, caches
        for _ in range(5):
            run()
    gc.disable()
    try:
        for _ in range(runs):
            for name, run in contenders.items():
                start = time.perf_counter_ns()
                run()
                times[name].append(time.perf_counter_ns() - start)
    finally:
        gc.enable()
    return times


def fast_decile(values: list[int]) -> float:
    """The 10th percentile of ``values``."""
    return statistics.quantiles(values, n=10)[0] if len(values) > 1 else float(values[0])


def main(argv: Sequence[str] | None = None) -> int:
    """Print each contender's fast decile and median, and hookline's ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20 runs")
    args = parser.parse_args(argv)
    runs = 20 if args.quick else args.runs
    times = measure(runs)
    print(f"python {platform.python_version()}, {runs} runs each, in turns")
    print(f"{'contender':<10} {'p10 (us)':>10} {'median (us)':>12}")
    for name, values in times.items():
        p10, median = fast_decile(values) / 1e3, statistics.median(values) / 1e3
        print(f"{name:<10} {p10:>10.1f} {median:>12.1f}")
    bare, native = fast_decile(times["bare"]), fast_decile(times["native"])
    hookline = fast_decile(times["hookline"])
    print(f"hookline/bare   {hookline / bare:.2f}x (target <= 1.10x)")
    print(f"hookline/native {hookline / native:.2f}x")
    print(f"per guarded call (3 a run): +{(hookline - bare) / 3 / 1e3:.1f} us over bare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
