"""Telemetry overhead: a run traced through a no-op tracer provider against an untraced one.

Run ``python -m benchmarks.telemetry`` (``--quick`` for a smoke run).

Two scenarios, each one whole run of one agent: ``agent->model`` (the model answers at
once) and ``model->tool->model`` (it calls one tool, then answers: two chat spans and
an execute_tool span under the agent's). Contenders, each measured through
``Runner.run`` and ``Runner.arun``:

* ``untraced``: ``Runner(agent)``, the cost of a run as it was before telemetry;
* ``no-op``: ``Runner(agent, tracer_provider=NoOpTracerProvider())``, what an
  application pays for passing a provider that records nothing (tracing switched off,
  or a sampler that drops the trace). Target: at most 1.3x ``untraced``;
* ``sdk``: the OpenTelemetry SDK's ``TracerProvider`` recording every span (no
  exporter, so export costs nothing): the price of real tracing, shown, not targeted.

The model and the tool are trivial, so the figures are the runner's own work. A sample
is a loop of back-to-back runs sized to about ``--sample-ms``; a figure is the best
sample of ``--repeat`` divided by its runs. Contenders are sampled round-robin, so a
burst of load from another process hits them all alike; the cyclic GC is off while
timing, and the runners' in-memory sessions are emptied between samples.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import time
from collections.abc import Callable
from typing import Final

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NoOpTracerProvider

from runner import Agent, InMemorySessions, ModelRequest, ModelResponse, Runner, ToolCall

__all__ = ["main"]

TARGET: Final = 1.3
ANSWER: Final = ModelResponse("It is sunny in Paris.")
CALL: Final = ModelResponse(tool_calls=(ToolCall("call_1", "weather", {"city": "Paris"}),))


class AnswerModel:
    """``agent->model``: answers at once (sync and async)."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The answer."""
        return ANSWER

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """The answer, awaited."""
        return ANSWER


class ToolModel:
    """``model->tool->model``: calls the tool, then answers once it has its result."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The call, or the answer after the tool's result."""
        return ANSWER if request.messages[-1].role == "tool" else CALL

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """``generate``, awaited."""
        return self.generate(request)


async def weather(city: str) -> str:
    """The weather in ``city`` (async, so arun runs it on the loop, not a thread)."""
    return f"sunny in {city}"


def sync_weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


SCENARIOS: Final = ("agent->model", "model->tool->model")
CONTENDERS: Final = ("untraced", "no-op", "sdk")


def agent_for(scenario: str, *, is_async: bool) -> Agent:
    """The scenario's agent; its tool async for arun, sync for run."""
    if scenario == "agent->model":
        return Agent("assistant", AnswerModel())
    tool = weather if is_async else sync_weather
    return Agent("assistant", ToolModel(), tools=[tool])


def runner_for(scenario: str, contender: str, *, is_async: bool) -> Runner:
    """A runner of the scenario's agent, traced as the contender says."""
    agent = agent_for(scenario, is_async=is_async)
    if contender == "untraced":
        return Runner(agent)
    provider = NoOpTracerProvider() if contender == "no-op" else TracerProvider()
    return Runner(agent, tracer_provider=provider)


def timed_sync(runner: Runner, runs: int) -> float:
    """Seconds for ``runs`` back-to-back ``run`` calls."""
    start = time.perf_counter()
    for _ in range(runs):
        runner.run("What is the weather in Paris?")
    return time.perf_counter() - start


async def timed_async(runner: Runner, runs: int) -> float:
    """Seconds for ``runs`` back-to-back ``arun`` calls."""
    start = time.perf_counter()
    for _ in range(runs):
        await runner.arun("What is the weather in Paris?")
    return time.perf_counter() - start


def measure(scenario: str, *, is_async: bool, sample_ms: float, repeat: int) -> dict[str, float]:
    """Nanoseconds per run for each contender: the best of ``repeat`` round-robin samples."""
    runners = {name: runner_for(scenario, name, is_async=is_async) for name in CONTENDERS}
    with asyncio.Runner() as loop:

        def timed(runner: Runner, runs: int) -> float:
            if is_async:
                return loop.run(timed_async(runner, runs))
            return timed_sync(runner, runs)

        # Size each contender's sample from a first timing, so a sample is ~sample_ms.
        sizes = {
            name: _size(functools.partial(timed, runner), sample_ms)
            for name, runner in runners.items()
        }
        best = dict.fromkeys(CONTENDERS, float("inf"))
        for _ in range(repeat):
            for name, runner in runners.items():
                _forget(runner)
                best[name] = min(best[name], timed(runner, sizes[name]) / sizes[name])
        for runner in runners.values():
            runner.close()
    return {name: seconds * 1e9 for name, seconds in best.items()}


def _size(timed: Callable[[int], float], sample_ms: float) -> int:
    """Runs that take about ``sample_ms`` (at least 10)."""
    runs = 10
    while (elapsed := timed(runs)) < sample_ms / 1e3 / 4:
        runs *= 4
    return max(10, int(runs * sample_ms / 1e3 / elapsed))


def _forget(runner: Runner) -> None:
    sessions = runner.sessions
    if isinstance(sessions, InMemorySessions):
        sessions.clear()


def main(argv: list[str] | None = None) -> int:
    """Print ns per run for each contender and the ratios to an untraced run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--sample-ms", type=float, default=40.0)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    sample_ms, repeat = (2.0, 2) if args.quick else (args.sample_ms, args.repeat)
    worst = 0.0
    gc.disable()
    try:
        for scenario in SCENARIOS:
            print(scenario)
            for is_async, form in ((False, "Runner.run"), (True, "Runner.arun")):
                ns = measure(scenario, is_async=is_async, sample_ms=sample_ms, repeat=repeat)
                base = ns["untraced"]
                worst = max(worst, ns["no-op"] / base)
                cells = "  ".join(
                    f"{name} {ns[name] / 1e3:6.1f} µs ({ns[name] / base:.2f}x)"
                    for name in CONTENDERS
                )
                print(f"  {form:17} {cells}")
    finally:
        gc.enable()
    print(f"target: no-op at most {TARGET}x untraced; worst here {worst:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
