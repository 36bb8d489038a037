"""Durable-run overhead: ``DurableRunner`` on SQLite and on Postgres against ``Runner``.

Run ``python -m benchmarks.durable`` (``--quick``: a smoke run, SQLite only).

Two agents whose model and tools are in memory and instant, so what is measured is
the runners' own cost: ``short`` answers at once (one model call), ``long`` calls a
tool five times, one call a turn, then answers (six model calls, five tool calls). A
durable run makes each call a DBOS step and adds two, the session's load and save:
3 steps for ``short``, 13 for ``long``; each step is a write to the system database
(DBOS records every step's output; SQLite syncs each to disk). Reported:

* per step: what a durable run adds per step, the slope between the two agents,
  ((durable - plain) of ``long`` - (durable - plain) of ``short``) / 10;
* per run: what it adds once per run beyond its steps (starting the workflow, asking
  whether its id exists, storing the result), ``short``'s overhead less 3 steps.

Contenders, each with ``run`` and ``arun``: ``Runner`` (in memory), then
``DurableRunner`` on a SQLite file, then on Postgres: a throwaway local cluster
(fsync off, as a test cluster runs; ``--postgres URL`` measures a database of yours).
Each figure is the median of ``--runs`` runs, a fresh run id each, the contenders
taken round-robin so load from other processes hits them alike. The machine's disk
and load move these numbers a lot (a synced write costs what the disk says); no
target: they are reported as measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from dbos import DBOS

from runner import Agent, DurableRunner, ModelRequest, ModelResponse, Runner, RunResult, ToolCall

AGENTS = {"short": 0, "long": 5}  # tool calls per run
STEPS = {name: 2 * calls + 1 + 2 for name, calls in AGENTS.items()}  # with load and save

Figures = dict[tuple[str, str, str], float]  # (runner, form, agent) -> median seconds


class Looping:
    """Calls ``lookup`` ``calls`` times, one call a turn, then answers; instant."""

    def __init__(self, calls: int) -> None:
        self.calls = calls

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next call, or the answer once every call has a result."""
        done = sum(1 for message in request.messages if message.role == "tool")
        if done < self.calls:
            return ModelResponse(tool_calls=(ToolCall(f"call_{done}", "lookup", {"n": done}),))
        return ModelResponse(f"looked up {done} times")


def lookup(n: int) -> int:
    """Return ``n``."""
    return n


def timed(run: Callable[[], RunResult]) -> float:
    """Seconds one ``run()`` takes."""
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


@contextlib.contextmanager
def launched(url: str) -> Iterator[None]:
    """DBOS launched on ``url`` for the block."""
    DBOS(
        config={
            "name": "hookline-bench",
            "system_database_url": url,
            "log_level": "WARNING",
            "executor_id": "bench",
            "serializer": DurableRunner.serializer(),
        }
    )
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy()


def contenders(
    loop: asyncio.AbstractEventLoop, runners: dict[tuple[str, str], Runner | DurableRunner]
) -> dict[tuple[str, str, str], Callable[[], RunResult]]:
    """Each (runner, form, agent) as a call that makes one run."""
    calls: dict[tuple[str, str, str], Callable[[], RunResult]] = {}
    for (kind, name), runner in runners.items():
        calls[kind, "run", name] = partial(runner.run, "go")
        calls[kind, "arun", name] = partial(_awaited, loop, runner, "go")
    return calls


def _awaited(
    loop: asyncio.AbstractEventLoop, runner: Runner | DurableRunner, message: str
) -> RunResult:
    return loop.run_until_complete(runner.arun(message))


def measure(runners: dict[tuple[str, str], Runner | DurableRunner], url: str, runs: int) -> Figures:
    """Median seconds per run of each contender, on DBOS at ``url``."""
    loop = asyncio.new_event_loop()
    calls = contenders(loop, runners)
    timings: dict[tuple[str, str, str], list[float]] = {key: [] for key in calls}
    try:
        with launched(url):
            for (_, _, name), run in calls.items():  # warm up: connections, first writes
                assert run().output == f"looked up {AGENTS[name]} times"
            for _ in range(runs):
                for key, run in calls.items():
                    timings[key].append(timed(run))
    finally:
        loop.close()
    return {key: statistics.median(values) for key, values in timings.items()}


def report(database: str, figures: Figures) -> None:
    """One table per database: ms per run of each contender, and what durability adds."""
    short, long = STEPS["short"], STEPS["long"]
    print(f"{database}: median ms per run   short ({short} steps)  long ({long} steps)")
    for form in ("run", "arun"):
        for kind in ("plain", "durable"):
            label = f"{'Runner' if kind == 'plain' else 'DurableRunner'}.{form}"
            cells = [figures[kind, form, name] * 1e3 for name in AGENTS]
            print(f"  {label:<24} {cells[0]:16.3f} {cells[1]:16.3f}")
        added = {
            name: figures["durable", form, name] - figures["plain", form, name] for name in AGENTS
        }
        per_step = (added["long"] - added["short"]) / (long - short)
        per_run = added["short"] - short * per_step
        print(
            f"  durable {form} adds {per_step * 1e3:.2f} ms per step"
            f" and {per_run * 1e3:.2f} ms per run"
        )


def main(argv: list[str] | None = None) -> int:
    """Print the durable runs' overhead on SQLite and (unless quick) Postgres."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run, SQLite only")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--postgres", help="a Postgres database URL (default: a throwaway one)")
    args = parser.parse_args(argv)
    runs = 2 if args.quick else args.runs
    print(f"hookline durable-run benchmark: {runs} runs of each contender")
    with contextlib.ExitStack() as stack:
        runners: dict[tuple[str, str], Runner | DurableRunner] = {}
        for name, calls in AGENTS.items():
            agent = Agent(name, Looping(calls), tools=[lookup])
            runners["plain", name] = stack.enter_context(Runner(agent))
            durable = DurableRunner(agent, name=f"bench_{name}_{time.monotonic_ns()}")
            runners["durable", name] = stack.enter_context(durable)
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        report("SQLite", measure(runners, f"sqlite:///{directory / 'runs.db'}", runs))
        if not args.quick:
            if args.postgres is None:
                from tests.helpers.postgres import cluster  # the tests' throwaway cluster

                postgres = f"{stack.enter_context(cluster())}/hookline_bench"
            else:
                postgres = args.postgres
            report("Postgres", measure(runners, postgres, runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
