"""Event-loop stalls: the longest time the loop went without running a heartbeat task
during 1,000 concurrent ``Runner.arun`` calls, on ``SQLiteSessionStore`` and on
``InMemorySessions``.

Run ``python -m benchmarks.loop_stall`` (``--quick`` for a smoke run).

A round runs ``--runs`` concurrent runs, each on its own session of one store, on a
``ScriptedModel`` that answers at once; the SQLite store's file is in a temporary
directory. Beside them a heartbeat task sleeps ``HEARTBEAT_MS`` at a time and notes how
late each wake-up came: that lateness is a stall, the time the loop spent on something
else. The round's figures are its longest stall and the 99th percentile, in ms, and the
longest pause of the cyclic GC during it (``gc.callbacks``). Three ways to start the
runs, each a row:

- ``burst``: every run started at once (``asyncio.gather``), the GC on: the issue's
  figure. The first pass of the loop runs each run's first step, all 1,000 of them.
- ``spread``: ``SPREAD`` runs started per pass of the loop (all still under way
  together, as requests arriving at a server are), the GC on.
- ``spread, no GC``: the same with the cyclic GC off: what the runs and the store cost
  the loop on their own.

What is left once the store is off the loop (measured by timing each loop callback
and each GC pause against the heartbeat's longest gaps): the burst's first pass is the
runs' own first steps, 35-50 µs each, 1,000 of them; the GC rows' longest gaps are
full collections of the cyclic GC (tens of ms with 1,000 runs' objects alive); and
1,000 runs keep the loop busy (about 11 loop callbacks a run, 16-37 µs each), so a pass
holds whatever became ready meanwhile -- on a machine under load, more.

``--repeat`` rounds of each row, taking turns; the median round's figures are printed
beside the worst. Target: the longest stall under ``TARGET_MS``. Before timing, the
benchmark checks every run completed and each store holds every run's turn.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, NamedTuple

from runner import (
    Agent,
    InMemorySessions,
    Runner,
    RunResult,
    ScriptedModel,
    SessionStore,
    SQLiteSessionStore,
)

RUNS: Final = 1_000
TARGET_MS: Final = 20.0
HEARTBEAT_MS: Final = 1.0
SPREAD: Final = 50  # runs started per pass of the loop in the spread rows
PROMPT: Final = "hello"
ANSWER: Final = "hi"
USER: Final = "user"
ROWS: Final = (("burst", 0, True), ("spread", SPREAD, True), ("spread, no GC", SPREAD, False))


class Round(NamedTuple):
    """One round's figures, in ms."""

    longest: float
    p99: float
    gc_pause: float


@contextmanager
def gc_pauses(gc_on: bool) -> Iterator[list[float]]:
    """The cyclic GC's pauses (ms) while inside; the GC off throughout if not ``gc_on``."""
    pauses: list[float] = []
    started = 0.0

    def noted(phase: str, info: dict[str, Any]) -> None:
        nonlocal started
        if phase == "start":
            started = time.perf_counter()
        else:
            pauses.append((time.perf_counter() - started) * 1e3)

    gc.collect()
    if not gc_on:
        gc.disable()
    gc.callbacks.append(noted)
    try:
        yield pauses
    finally:
        gc.callbacks.remove(noted)
        gc.enable()


async def with_heartbeat(
    runner: Runner, runs: int, spread: int
) -> tuple[list[float], list[RunResult]]:
    """``runs`` concurrent runs on sessions ``s0``, ``s1``, ..., ``spread`` started
    per pass of the loop (0: all at once); how late (ms) each heartbeat woke meanwhile."""
    late: list[float] = []
    done = False
    interval = HEARTBEAT_MS / 1e3

    async def heartbeat() -> None:
        clock = time.perf_counter
        while not done:
            asleep = clock()
            await asyncio.sleep(interval)
            late.append(max(0.0, (clock() - asleep - interval) * 1e3))

    beating = asyncio.ensure_future(heartbeat())
    await asyncio.sleep(0)  # the heartbeat is asleep before the first run starts
    try:
        if not spread:
            results = await asyncio.gather(
                *(runner.arun(PROMPT, user_id=USER, session_id=f"s{n}") for n in range(runs))
            )
        else:
            tasks = []
            for n in range(runs):
                run = runner.arun(PROMPT, user_id=USER, session_id=f"s{n}")
                tasks.append(asyncio.ensure_future(run))
                if (n + 1) % spread == 0:
                    await asyncio.sleep(0)
            results = await asyncio.gather(*tasks)
    finally:
        done = True
        await beating
    return late, results


def check(store: SessionStore, results: list[RunResult]) -> None:
    """Assert every run completed with the answer, and the store holds each turn."""
    if any(result.status != "completed" or result.output != ANSWER for result in results):
        msg = f"a run did not complete with {ANSWER!r}"
        raise AssertionError(msg)
    for n in range(len(results)):
        messages = [m.content for m in store.load(USER, f"s{n}").messages]
        if messages != [PROMPT, ANSWER]:
            msg = f"session s{n} holds {messages!r}"
            raise AssertionError(msg)


def p99(late: list[float]) -> float:
    """The 99th percentile of the stalls (the longest one when there are few)."""
    if len(late) < 100:
        return max(late, default=0.0)
    return statistics.quantiles(late, n=100)[98]


@contextmanager
def fresh(name: str, directory: str, number: int) -> Iterator[SessionStore]:
    """A new, empty store of kind ``name`` (a SQLite one in a new file in ``directory``)."""
    if name == "memory":
        yield InMemorySessions(max_sessions=None)
        return
    with SQLiteSessionStore(Path(directory) / f"sessions-{number}.db") as store:
        yield store


def measure(*, runs: int, repeat: int) -> dict[tuple[str, str], list[Round]]:
    """Per (store, row), each round's figures, each round on a new store; rounds taking
    turns."""
    figures: dict[tuple[str, str], list[Round]] = {}
    number = 0
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(repeat):
            for row, spread, gc_on in ROWS:
                for name in ("sqlite", "memory"):
                    number += 1
                    with fresh(name, directory, number) as store:
                        agent = Agent("assistant", ScriptedModel(default=ANSWER))
                        runner = Runner(agent, sessions=store)
                        try:
                            with gc_pauses(gc_on) as pauses:
                                ran = with_heartbeat(runner, runs, spread)
                                late, results = asyncio.run(ran)
                        finally:
                            runner.close()
                        check(store, results)
                    figures.setdefault((name, row), []).append(
                        Round(max(late, default=0.0), p99(late), max(pauses, default=0.0))
                    )
    return figures


def main(argv: list[str] | None = None) -> int:
    """Print each store's longest loop stall, p99 and GC pause per row, and the verdicts."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    runs, repeat = (50, 1) if args.quick else (args.runs, args.repeat)
    figures = measure(runs=runs, repeat=repeat)
    print(
        f"event-loop stalls during {runs:,} concurrent Runner.arun, ms (a heartbeat every "
        f"{HEARTBEAT_MS:g} ms; the median of {repeat} rounds, the worst in brackets)"
    )
    print(f"{'':>24}{'longest stall':>18}{'p99':>16}{'longest GC pause':>20}")
    verdicts = []
    for (name, row), rounds in figures.items():
        cells = []
        for field, width in (("longest", 18), ("p99", 16), ("gc_pause", 20)):
            values = [getattr(r, field) for r in rounds]
            cells.append(f"{f'{statistics.median(values):.1f} ({max(values):.1f})':>{width}}")
        print(f"{f'{name}, {row}':>24}{''.join(cells)}")
    for name in ("sqlite", "memory"):
        for row, _, _ in ROWS:
            longest = statistics.median(r.longest for r in figures[name, row])
            ok = longest < TARGET_MS
            verdicts.append(ok)
            print(
                f"  {name}, {row}: longest stall {longest:.1f} ms, target < {TARGET_MS:g} ms: "
                f"{'ok' if ok else 'MISSED'}"
            )
    print(f"targets: {'all met' if all(verdicts) else 'some missed'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
