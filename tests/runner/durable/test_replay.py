"""A replayed durable run (a DBOS fork of a finished one) reads its steps off the record.

Forking a run from its last step re-executes its body on a new id with every earlier
step recorded: what recovery does after a crash, in one process.
"""

from __future__ import annotations

import asyncio

import pytest
from dbos import DBOS

from hooks import BeforeResult, BeforeTool, Cont, ErrorResult, Failure, OnToolError, Retry
from runner import (
    Agent,
    DurableRunner,
    ErrorEvent,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    RetryTransient,
    RunResult,
    ScriptedModel,
    ToolContext,
    ToolResult,
    Usage,
)
from runner._durable.codec import RecoveredError
from tests.helpers.durable import Booking, drive_durable, durable, unique, untimed
from tests.helpers.runs import Mode

pytestmark = [pytest.mark.durable, pytest.mark.usefixtures("launched")]


class Refused(Exception):
    """A provider's error, like openai's: its ``__init__`` wants keywords, so plain pickle fails."""

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


def replayed(runner: DurableRunner, result: RunResult) -> RunResult:
    """``result``'s run again on a new id, every step but the session save read off the record."""
    steps = DBOS.list_workflow_steps(result.run_id)
    [save] = [step["function_id"] for step in steps if step["function_name"] == "session save"]
    return runner.result(DBOS.fork_workflow(result.run_id, save).workflow_id)


def test_a_replay_runs_nothing_again_and_leaves_the_same_result(mode: Mode) -> None:
    """No model or tool call is made again; the events, times included, and usage are the same."""
    executed: list[str] = []

    def flight(city: str) -> str:
        """Book a flight."""
        executed.append(city)
        return f"flight to {city}"

    model = Booking("flight", usage=Usage(input_tokens=5))
    runner = durable(Agent("replayed", model, tools=[flight]))
    first = drive_durable(runner, mode, "book Paris")
    again = replayed(runner, first)
    assert (executed, model.calls) == (["Paris"], 2)
    assert again.events == first.events
    assert again.usage == first.usage == Usage(input_tokens=10)
    assert again.run_id != first.run_id


def test_error_hooks_see_the_stored_error_and_decide_alike_on_replay() -> None:
    """The hook gets a copy of the tool's error (class and attributes kept: the runner names it
    in ``errors``) on the first run and on the replay, and retries both times; the failed
    attempt is not run again."""
    seen: list[tuple[str, int]] = []
    attempts: list[int] = []

    def book(city: str) -> str:
        """Refused once."""
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:
            raise Refused("busy", status_code=503)
        return f"booked {city}"

    class RetryServerErrors(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            error = failure.failure()
            assert isinstance(error, Refused)
            seen.append((type(error).__name__, error.status_code))
            return Retry(ctx) if error.status_code >= 500 else failure

    agent = Agent("stored", Booking("book"), tools=[book])
    runner = durable(agent, callbacks=[RetryServerErrors()], errors=[Refused])
    first = runner.run("book Paris")
    again = replayed(runner, first)
    assert seen == [("Refused", 503)] * 2
    assert attempts == [1, 2]
    assert untimed(again) == untimed(first)


def test_an_effectful_hook_does_its_effect_once_in_a_dbos_step(mode: Mode) -> None:
    """A hook whose effect is a ``@DBOS.step()`` function: the replay reads its result."""
    audited: list[str] = []

    @DBOS.step(name=f"audit {mode}")
    def audit(tool: str) -> int:
        audited.append(tool)
        return len(audited)

    class Audit(BeforeTool):
        def __init__(self) -> None:
            self.numbers: list[int] = []

        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            self.numbers.append(audit(ctx.call.name))
            return Cont(ctx)

    def flight(city: str) -> str:
        """Book a flight."""
        return f"flight to {city}"

    hook = Audit()
    runner = durable(Agent("audited", Booking("flight"), tools=[flight]), callbacks=[hook])
    first = drive_durable(runner, mode, "book Paris")
    replayed(runner, first)
    assert audited == ["flight"]
    assert hook.numbers == [1, 1]


def test_a_replayed_model_error_fails_the_run_alike() -> None:
    """A run that failed with a model error fails the same way when replayed."""
    model = ScriptedModel([Refused("no", status_code=401)])
    runner, run_id = durable(Agent("broken", model), errors=[Refused]), unique("broken")
    with pytest.raises(Refused):
        runner.run("hello", run_id=run_id)
    steps = DBOS.list_workflow_steps(run_id)
    assert [step["function_name"] for step in steps] == ["session load", "model broken"]
    fork = DBOS.fork_workflow(run_id, steps[-1]["function_id"] + 1).workflow_id
    with pytest.raises(Refused, match="no") as raised:
        runner.result(fork)
    assert raised.value.status_code == 401
    with pytest.raises(Refused, match="no"):
        asyncio.run(runner.aresult(fork))
    assert model.calls == 1


class Overloaded(Exception):
    """A provider's error hookline does not know: transient by its status alone."""

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class OverloadedOnce:
    """Raises ``Overloaded`` (503) on its first call, then answers."""

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Overloaded once, then an answer."""
        self.calls += 1
        if self.calls == 1:
            raise Overloaded("try later", status_code=503)
        return ModelResponse("hello")


def test_retry_transient_retries_an_unknown_provider_error_alike_on_replay(mode: Mode) -> None:
    """An error of a class no runner named comes back a ``RecoveredError`` keeping its status:
    ``RetryTransient`` retries it on the first run and decides alike on the replay."""
    model = OverloadedOnce()
    runner = durable(
        Agent("overloaded", model),
        callbacks=[RetryTransient(base_delay=0.001)],
        retry=RetryPolicy(base_delay=0.001, jitter=0.0),
    )
    first = drive_durable(runner, mode, "hi")
    again = replayed(runner, first)
    assert (first.output, first.status, model.calls) == ("hello", "completed", 2)
    [error] = [event.error for event in first.events if isinstance(event, ErrorEvent)]
    assert type(error) is RecoveredError
    assert (error.type_name, str(error)) == (f"{__name__}:Overloaded", "try later")
    assert error.status_code == 503  # type: ignore[attr-defined]
    assert untimed(again) == untimed(first)
    assert model.calls == 2
