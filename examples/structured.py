"""A typed answer: an invoice read with a tool beside it, a misfit retried with feedback.

The clerk agent has ``output_type=Invoice``: its run's ``result.output`` is an
``Invoice``, validated by the same pydantic ``TypeAdapter`` that wrote the schema the
model was given. Its tool ``to_eur`` takes a ``RunContext[Rates]`` first, the run's
dependencies (``runner.run(..., deps=rates)``), which the model never sees. The scripted
model first calls the tool, then gives an invoice whose total is no number: the run
tells it what did not fit (the feedback is in the trace), and its second answer fits.
``after_output`` guards the value: an invoice over the limit would fail the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic
from typing_extensions import override

from hooks import AfterOutput, Failure, Outcome, Result, Success
from runner import (
    Agent,
    ErrorEvent,
    Event,
    ModelAttemptEvent,
    ModelResponse,
    OutputContext,
    RetryEvent,
    RunContext,
    Runner,
    RunResult,
    ScriptedModel,
    ToolCall,
    ToolResultEvent,
)


class Invoice(pydantic.BaseModel):
    """An invoice, its total in euros."""

    number: str
    customer: str
    total_eur: float


@dataclass(frozen=True)
class Rates:
    """What the tools need: euros per unit of each currency."""

    eur_per: dict[str, float]


def to_eur(ctx: RunContext[Rates], amount: float, currency: str) -> float:
    """Convert an amount to euros.

    Args:
        amount: The amount in ``currency``.
        currency: An ISO 4217 code.
    """
    return round(amount * ctx.deps.eur_per[currency], 2)


class Limit(AfterOutput):
    """The output guard: no invoice above ``most`` euros leaves the run."""

    def __init__(self, most: float) -> None:
        self.most = most

    @override
    def after_output(self, outcome: Outcome[Any], ctx: OutputContext, /) -> Result[Any, Exception]:
        match outcome:
            case Success(Invoice() as invoice) if invoice.total_eur > self.most:
                return Failure(PermissionError(f"invoice {invoice.number} is over {self.most} EUR"))
            case _:
                return outcome


DOCUMENT = "Invoice INV-7 to ACME Ltd: 100 USD."


def scripted_model() -> ScriptedModel:
    """A model that converts, answers with a misfit, then with the invoice."""
    return ScriptedModel(
        [
            ModelResponse(
                tool_calls=(ToolCall("c1", "to_eur", {"amount": 100, "currency": "USD"}),)
            ),
            ModelResponse(
                tool_calls=(
                    ToolCall(
                        "c2",
                        "final_result",
                        {"number": "INV-7", "customer": "ACME Ltd", "total_eur": "ninety-two"},
                    ),
                )
            ),
            ModelResponse(
                tool_calls=(
                    ToolCall(
                        "c3",
                        "final_result",
                        {"number": "INV-7", "customer": "ACME Ltd", "total_eur": 92.0},
                    ),
                )
            ),
        ]
    )


def run_demo(model: ScriptedModel | None = None) -> RunResult[Invoice]:
    """Read ``DOCUMENT`` into an ``Invoice``."""
    clerk = Agent(
        "clerk",
        model or scripted_model(),
        tools=[to_eur],
        output_type=Invoice,
        deps_type=Rates,
        callbacks=[Limit(1000)],
        instruction="Read the invoice; give totals in euros.",
    )
    with Runner(clerk) as runner:
        return runner.run(DOCUMENT, deps=Rates({"USD": 0.92, "EUR": 1.0}))


def trace(events: tuple[Event, ...]) -> list[str]:
    """The run's record, a line per step: tool results, failed answers, retries, feedback."""
    lines: list[str] = []
    for event in events:
        if isinstance(event, ToolResultEvent):
            lines.append(f"tool {event.call.name} -> {event.result.content}")
        elif isinstance(event, ErrorEvent) and event.operation == "output":
            lines.append(f"answer {event.attempt} does not fit")
        elif isinstance(event, RetryEvent) and event.operation == "output":
            lines.append(f"asked again (answer {event.attempt})")
        elif isinstance(event, ModelAttemptEvent) and event.request.messages[-1].is_error:
            feedback = event.request.messages[-1].content.splitlines()
            lines.extend(f"  feedback: {line}" for line in feedback)
    return lines


def main() -> None:
    """Run the demo and print the trace and the invoice."""
    result = run_demo()
    for line in trace(result.events):
        print(line)
    print(f"output: {result.output!r}")


if __name__ == "__main__":
    main()
