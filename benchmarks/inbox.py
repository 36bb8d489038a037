"""The inbox's data: listing paused runs from SQLite, and what keeping run records costs a turn.

Run ``python -m benchmarks.inbox`` (``--quick`` for a smoke run).

A file in a temporary directory is filled with ``--runs`` paused runs (10,000 by
default) through ``SQLiteSessionStore.save_paused``, each the state of a real run paused
on two tool calls (two pending requests). Then ``list_paused()`` is timed: once on a store
opened afresh (the first listing a server makes) and as the best of ``--repeat``
listings; ``list_paused(limit=50)`` (a page) likewise. Before timing, the benchmark checks
the listing holds every run, oldest first, each with its two requests.

Target: the whole listing of 10,000 paused runs in under 100 ms, for the best listing
(a store reads again only the requests of runs paused since its last listing, as a
serving inbox lists again and again); the first listing of a store opened afresh, which
reads every request, is printed beside it and has no target.

Second figure, no target: a turn (one ``Runner.run`` on an existing session, the model
answering at once) on SQLite keeping its run's records against one keeping none
(``keep_records=0``): what writing the records costs a turn. Times are best-of samples
with the cyclic GC off (``benchmarks.runner.best_of``).
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from benchmarks.runner import best_of
from runner import Agent, InMemorySessions, Runner, ScriptedModel, SQLiteSessionStore
from tests.helpers.pause_worker import runner_for

RUNS: Final = 10_000
LIST_MAX_MS: Final = 100.0
PAGE: Final = 50


def paused_state() -> str:
    """The state of a real run paused on two deletes, as a store keeps it."""
    memory = InMemorySessions()
    with runner_for(memory) as runner:
        result = runner.run("clean up", user_id="u", session_id="s")
    state = memory.load_paused(result.run_id)
    assert state is not None
    return state


def fill(path: Path, runs: int) -> None:
    """``runs`` paused runs in the file, one session each, through the store's own save."""
    state = paused_state()
    with SQLiteSessionStore(path) as store:
        for n in range(runs):
            store.save_paused(f"run-{n:05d}", "u", f"s{n}", state)


def check(path: Path, runs: int) -> None:
    """The listing holds every run, oldest first, each with its two requests."""
    with SQLiteSessionStore(path) as store:
        listed = store.list_paused()
    assert [run.run_id for run in listed] == [f"run-{n:05d}" for n in range(runs)]
    assert all(len(run.pending) == 2 for run in listed)
    assert [run.time for run in listed] == sorted(run.time for run in listed)


def timed(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """ms of the first call and the best of ``repeat``."""
    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    best = first
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return first * 1e3, best * 1e3


def turn_cost(folder: Path, *, repeat: int, sample_ns: int) -> dict[str, float]:
    """µs per SQLite turn keeping records and keeping none."""
    stores = {
        "records kept": SQLiteSessionStore(folder / "kept.db"),
        "no records": SQLiteSessionStore(folder / "none.db", keep_records=0),
    }
    runners = {
        name: Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=store)
        for name, store in stores.items()
    }
    counter = itertools.count()

    def sampler(runner: Runner) -> Callable[[int], int]:
        def sample(n: int) -> int:
            session = f"s{next(counter)}"
            runner.run("hi", user_id="u", session_id=session)  # the session exists
            start = time.perf_counter_ns()
            for _ in range(n):
                runner.run("hi", user_id="u", session_id=session)
            return time.perf_counter_ns() - start

        return sample

    try:
        best = best_of(
            {name: sampler(runner) for name, runner in runners.items()},
            lambda: None,
            repeat=repeat,
            sample_ns=sample_ns,
        )
    finally:
        for runner in runners.values():
            runner.close()
        for store in stores.values():
            store.close()
    return {name: ns / 1e3 for name, ns in best.items()}


def main(argv: list[str] | None = None) -> int:
    """Print the listing's ms and a turn's µs with and without records; the target's verdict."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--sample-ms", type=float, default=100.0)
    args = parser.parse_args(argv)
    runs, repeat, sample_ms = (
        (500, 2, 5.0) if args.quick else (args.runs, args.repeat, args.sample_ms)
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "inbox.db"
        fill(path, runs)
        check(path, runs)
        with SQLiteSessionStore(path) as store:
            whole = timed(store.list_paused, repeat)
            page = timed(lambda: store.list_paused(limit=PAGE), repeat)
        turns = turn_cost(Path(folder), repeat=repeat, sample_ns=int(sample_ms * 1e6))
    print(f"inbox: list_paused from SQLite, {runs:,} paused runs (2 requests each)")
    print(f"  whole list: {whole[1]:.1f} ms (best), {whole[0]:.1f} ms on a store opened afresh")
    print(f"  a page of {PAGE}: {page[1]:.2f} ms (best), {page[0]:.2f} ms first")
    ok = whole[1] < LIST_MAX_MS
    scale = "" if runs == RUNS else f" (measured at {runs:,}, not {RUNS:,}: no verdict)"
    verdict = ("ok" if ok else "MISSED") if runs == RUNS else "n/a"
    print(f"  target: {RUNS:,} paused runs listed in < {LIST_MAX_MS:g} ms: {verdict}{scale}")
    kept, none = turns["records kept"], turns["no records"]
    print(
        f"run records: a SQLite turn keeping its records {kept:.1f} µs, keeping none "
        f"{none:.1f} µs (+{kept - none:.1f} µs)"
    )
    print(f"targets: {'all met' if ok or runs != RUNS else 'some missed'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
