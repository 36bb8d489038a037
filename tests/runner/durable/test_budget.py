"""A durable run's ``Budget``: rebuilt alike when a replay reads the calls off the record."""

from __future__ import annotations

import pytest
from dbos import DBOS

from runner import Agent, Budget, DurableRunner, RunResult, ToolResultEvent, Usage
from tests.helpers.durable import Booking, drive_durable, durable, untimed
from tests.helpers.runs import Mode

pytestmark = [pytest.mark.durable, pytest.mark.usefixtures("launched")]


def replayed(runner: DurableRunner, result: RunResult) -> RunResult:
    """``result``'s run again on a new id, every step but the session save read off the record."""
    steps = DBOS.list_workflow_steps(result.run_id)
    [save] = [step["function_id"] for step in steps if step["function_name"] == "session save"]
    return runner.result(DBOS.fork_workflow(result.run_id, save).workflow_id)


def test_a_replay_spends_and_refuses_as_the_first_execution_did(mode: Mode) -> None:
    """The budget's entry is rebuilt from the recorded answers: the same tokens, the same
    calls run, the same call refused; no tool runs again."""
    executed: list[str] = []

    def flight(city: str) -> str:
        """Book a flight."""
        executed.append(f"flight {city}")
        return f"flight to {city}"

    def hotel(city: str) -> str:
        """Book a hotel."""
        executed.append(f"hotel {city}")
        return f"hotel in {city}"

    model = Booking("flight", "hotel", usage=Usage(input_tokens=40, output_tokens=10))
    budget = Budget(tokens=100_000, tool_calls=1)
    runner = durable(Agent("budgeted", model, tools=[flight, hotel]), callbacks=[budget])
    first = drive_durable(runner, mode, "book Paris")
    again = replayed(runner, first)
    assert executed == ["flight Paris"]
    [ran, refused] = [event.result for event in first.events if isinstance(event, ToolResultEvent)]
    assert ran.content == "flight to Paris"
    assert refused.content.startswith("the run's budget of 1 tool call(s) is spent: hotel")
    assert budget.spent(first.state.data) == {
        "tokens": 150,
        "usd": 0.0,
        "model_calls": 3,
        "tool_calls": 1,
        "refused": 1,
    }
    assert again.state.data == first.state.data
    assert untimed(again) == untimed(first)


def test_a_replay_stops_where_the_first_execution_stopped(mode: Mode) -> None:
    """The model call the budget refused is refused again, with the same reason."""

    def flight(city: str) -> str:
        """Book a flight."""
        return f"flight to {city}"

    def hotel(city: str) -> str:
        """Book a hotel."""
        return f"hotel in {city}"

    model = Booking("flight", "hotel", usage=Usage(input_tokens=40, output_tokens=10))
    budget = Budget(model_calls=2)
    runner = durable(Agent("stopped", model, tools=[flight, hotel]), callbacks=[budget])
    first = drive_durable(runner, mode, "book Paris")
    again = replayed(runner, first)
    assert first.status == again.status == "stopped"
    assert first.stop_reason == again.stop_reason
    assert first.stop_reason == "Budget refused a model call: the run's 2 model call(s) are made"
    assert model.calls == 2
    assert again.state.data == first.state.data
