"""Durable runs: a run killed in the middle, and a restart that finishes it.

``python -m examples.durable`` books a trip with three tools as a DBOS workflow on
SQLite (extra ``hookline[dbos]``), in a process that dies inside the second tool
(``os._exit``: no cleanup, no exception). It then starts the same program again on
the same database: ``DBOS.launch()`` recovers the run, and asking for run
``"trip-1"`` again waits for it. The flight's result comes from the record; the
hotel booking runs again (tools run at least once: it gets the same idempotency key,
so a real booking service would book once); the car is rented once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from dbos import DBOS

from runner import Agent, DurableRunner, ModelRequest, ModelResponse, ToolCall, idempotency_key

ROOT = Path(__file__).resolve().parents[1]
TRIP = ("book_flight", "book_hotel", "rent_car")


class TripModel:
    """Books a flight, a hotel and a car, one per turn, then sums up; offline.

    Like a deployed model it answers from the request alone, so the restarted process
    asks it what the first one asked.
    """

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next booking the conversation has no result for, else the summary."""
        done = [message.content for message in request.messages if message.role == "tool"]
        if len(done) < len(TRIP):
            call = ToolCall(f"call_{len(done) + 1}", TRIP[len(done)], {"city": "Lisbon"})
            return ModelResponse(tool_calls=(call,))
        return ModelResponse("Booked: " + "; ".join(done) + ".")


def process(workdir: Path) -> None:
    """One life of the program: the agent, DBOS on SQLite in ``workdir``, run ``trip-1``."""
    ledger = workdir / "ledger.txt"

    def book(what: str) -> str:
        with ledger.open("a", encoding="utf-8") as file:
            file.write(f"{what:<18} {idempotency_key()}\n")
        return what

    def book_flight(city: str) -> str:
        """Book a flight to ``city``."""
        return book(f"flight to {city}")

    def book_hotel(city: str) -> str:
        """Book a hotel in ``city``."""
        booked = book(f"hotel in {city}")
        if not (workdir / "crashed").exists():
            (workdir / "crashed").touch()
            os._exit(1)  # the process dies mid-run
        return booked

    def rent_car(city: str) -> str:
        """Rent a car in ``city``."""
        return book(f"car in {city}")

    # Made before DBOS.launch(): recovery finds the run's code by the runner's name.
    durable = DurableRunner(Agent("trip", TripModel(), tools=[book_flight, book_hotel, rent_car]))
    database = f"sqlite:///{workdir / 'runs.sqlite'}"
    DBOS(
        config={
            "name": "hookline-example",
            "system_database_url": database,
            "log_level": "WARNING",
            "executor_id": "example-worker",  # this worker's own id, the same when it restarts
            "serializer": DurableRunner.serializer(),  # records as JSON, never pickle
        }
    )
    DBOS.launch()  # recovers the runs a crash interrupted
    try:
        print(durable.run("Book me a trip to Lisbon.", run_id="trip-1").output)
    finally:
        DBOS.destroy()


def run_twice() -> tuple[list[int], str, list[str]]:
    """The program twice on one directory: exit codes, the answer, the ledger's lines."""
    with tempfile.TemporaryDirectory() as workdir:
        command = [sys.executable, "-m", "examples.durable", workdir]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        codes: list[int] = []
        answer = ""
        for _ in range(2):
            done = subprocess.run(
                command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
            )
            codes.append(done.returncode)
            answer = done.stdout.strip()
        ledger = (Path(workdir) / "ledger.txt").read_text(encoding="utf-8").splitlines()
    return codes, answer, ledger


def main() -> None:
    """Show both processes and what each tool did."""
    codes, answer, ledger = run_twice()
    print(f"process 1: killed inside book_hotel (exit code {codes[0]})")
    print(f"process 2: {answer} (exit code {codes[1]})")
    print("each tool execution, with its idempotency key (run:step:call):")
    for line in ledger:
        print(f"  {line}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        process(Path(sys.argv[1]))
    else:
        main()
