"""Session stores: what a turn costs on ``SQLiteSessionStore`` against ``InMemorySessions``.

Run ``python -m benchmarks.sessions`` (``--quick`` for a smoke run).

A turn is one ``Runner.run`` on an existing session whose model answers at once: the
run takes the session's lease, loads the session, saves its two new messages and
releases the lease -- on SQLite, one read and three small write transactions (WAL,
``synchronous=NORMAL``) in a file in a temporary directory. Each store is timed with
the session starting every sample at 0 and at 10,000 messages (each sample puts it
back; its turns add two messages each).

Targets: a SQLite turn adds at most 1 ms to an in-memory one, at 0 and at 10,000
messages; and a SQLite turn at 10,000 messages costs at most 1.2x one at 0 (the store
appends, it never rewrites the history). Before timing, the benchmark checks that both
stores end a turn holding the same conversation.

How it times: a sample is a loop of back-to-back turns sized to about ``--sample-ms``;
a figure is the best sample of ``--repeat`` divided by its turns. Samples of the four
contenders are taken round-robin, so a burst of load from another process hits them
all alike. The cyclic GC is off while timing.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from benchmarks.runner import best_of
from runner import (
    Agent,
    InMemorySessions,
    Message,
    ModelRequest,
    ModelResponse,
    Runner,
    SessionStore,
    SQLiteSessionStore,
)

HISTORY: Final = 10_000
ADDED_MAX_MS: Final = 1.0  # a SQLite turn over an in-memory one, at 0 and at HISTORY
GROWTH_MAX: Final = 1.2  # a SQLite turn at HISTORY messages over one at 0
PROMPT: Final = "hello"
ANSWER: Final = ModelResponse("hi")
USER: Final = "user"
SIZES: Final = (0, HISTORY)


class AnswerModel:
    """Answers every request at once."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The same answer."""
        return ANSWER


def history(length: int) -> list[Message]:
    """A conversation of ``length`` messages: questions and answers, in turn."""
    return [
        Message("user", f"question {n}") if n % 2 == 0 else Message("assistant", f"answer {n}")
        for n in range(length)
    ]


@contextmanager
def stores() -> Iterator[dict[str, SessionStore]]:
    """Both stores, the SQLite one in a new file that is removed afterwards."""
    with (
        tempfile.TemporaryDirectory() as directory,
        SQLiteSessionStore(Path(directory) / "sessions.db") as sqlite,
    ):
        yield {"memory": InMemorySessions(), "sqlite": sqlite}


def reset(store: SessionStore) -> None:
    """Put each session back to its starting history."""
    for size in SIZES:
        store.delete(USER, str(size))
        if size:
            store.save(USER, str(size), history(size), version=0)


def check(all_stores: dict[str, SessionStore]) -> None:
    """Assert a turn on each store, at each size, leaves the same conversation behind."""
    for size in SIZES:
        saved = []
        for store in all_stores.values():
            reset(store)
            with Runner(Agent("assistant", AnswerModel()), sessions=store) as runner:
                output = runner.run(PROMPT, user_id=USER, session_id=str(size)).output
            if output != ANSWER.text:
                msg = f"a turn answered {output!r}"
                raise AssertionError(msg)
            saved.append(tuple(store.load(USER, str(size)).messages))
        expected = (*history(size), Message("user", PROMPT), Message("assistant", ANSWER.text))
        if any(messages != expected for messages in saved):
            msg = f"a turn at {size} messages left {[len(m) for m in saved]} messages"
            raise AssertionError(msg)


def sampler(runner: Runner, session_id: str) -> Callable[[int], int]:
    """A sample of ``n`` turns on ``session_id``, in ns."""

    def sample(n: int) -> int:
        run, prompt = runner.run, PROMPT
        timer = time.perf_counter_ns
        runs = itertools.repeat(None, n)
        start = timer()
        for _ in runs:
            run(prompt, user_id=USER, session_id=session_id)
        return timer() - start

    return sample


def measure(*, repeat: int, sample_ns: int) -> dict[tuple[str, int], float]:
    """ns per turn, per (store, size): the best of ``repeat`` round-robin samples."""
    with stores() as all_stores:
        check(all_stores)
        runners = {
            name: Runner(Agent("assistant", AnswerModel()), sessions=store)
            for name, store in all_stores.items()
        }

        def reset_all() -> None:
            for store in all_stores.values():
                reset(store)

        reset_all()
        labels = {f"{name}@{size}": (name, size) for name in runners for size in SIZES}
        try:
            best = best_of(
                {
                    label: sampler(runners[name], str(size))
                    for label, (name, size) in labels.items()
                },
                reset_all,
                repeat=repeat,
                sample_ns=sample_ns,
            )
        finally:
            for runner in runners.values():
                runner.close()
    return {labels[label]: figure for label, figure in best.items()}


def main(argv: list[str] | None = None) -> int:
    """Print µs per turn on each store at 0 and 10,000 messages, and the targets' verdicts."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--sample-ms", type=float, default=100.0)
    args = parser.parse_args(argv)
    repeat, sample_ms = (2, 5.0) if args.quick else (args.repeat, args.sample_ms)
    figures = measure(repeat=repeat, sample_ns=int(sample_ms * 1e6))
    print("session stores: µs per turn (one Runner.run on an existing session), agent->model")
    print(f"{'':>10}{'0 messages':>16}{f'{HISTORY:,} messages':>18}")
    for name in ("memory", "sqlite"):
        row = "".join(
            f"{figures[name, size] / 1e3:>{width}.1f}"
            for size, width in zip(SIZES, (16, 18), strict=True)
        )
        print(f"{name:>10}{row}")
    verdicts = []
    for size in SIZES:
        added = (figures["sqlite", size] - figures["memory", size]) / 1e6
        ok = added <= ADDED_MAX_MS
        verdicts.append(ok)
        print(
            f"  SQLite adds {added:.3f} ms a turn at {size:,} messages, "
            f"target <= {ADDED_MAX_MS:g} ms: {'ok' if ok else 'MISSED'}"
        )
    growth = figures["sqlite", HISTORY] / figures["sqlite", 0]
    verdicts.append(growth <= GROWTH_MAX)
    print(
        f"  a SQLite turn at {HISTORY:,} messages {growth:.2f}x one at 0, "
        f"target <= {GROWTH_MAX:g}x: {'ok' if verdicts[-1] else 'MISSED'}"
    )
    print(f"targets: {'all met' if all(verdicts) else 'some missed'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
