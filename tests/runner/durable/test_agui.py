"""``runner.web.agui_app`` over a ``DurableRunner``: its runs and resumes, which are not
streamed, are sent once they ended, from their record, and pass the AG-UI validator."""

from __future__ import annotations

import pytest

from hooks import Cont, PausableResult, Pause, ToolContext, ToolResult
from runner import Agent, InMemorySessions, ScriptedModel, ToolCall
from runner.web import agui_app
from tests.helpers.agui import post, problems, resume_input, run_input
from tests.helpers.durable import durable
from tests.helpers.runs import calling

pytestmark = [pytest.mark.durable, pytest.mark.usefixtures("launched")]


class AskFirst:
    """Pauses every call until a human decided."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause an undecided call."""
        return Pause("go?") if ctx.decision is None else Cont(ctx)


def test_a_durable_run_pauses_and_resumes_over_agui() -> None:
    """A durable run's pause is an interrupt; the resume goes on with ``aresume`` and is
    sent from its record; a second resume of it is refused with 409."""
    booked: list[str] = []

    def book(city: str) -> str:
        """Book a trip."""
        booked.append(city)
        return f"booked {city}"

    model = ScriptedModel([calling(ToolCall("c1", "book", {"city": "Rome"})), "Booked."])
    runner = durable(
        Agent("trip", model, tools=[book]), callbacks=[AskFirst()], sessions=InMemorySessions()
    )
    app = agui_app(runner)
    paused = post(app, run_input("book Rome"))
    assert paused.status == 200, paused.text
    (interrupt,) = paused.last["outcome"]["interrupts"]
    assert interrupt["message"] == "go?"
    assert problems(paused.text) == []
    decided = resume_input([(interrupt["id"], {"decision": "approve"})])
    resumed = post(app, decided)
    assert resumed.status == 200, resumed.text
    assert resumed.last["result"] == "Booked."
    assert resumed.text_of() == "Booked."
    assert booked == ["Rome"]
    assert problems(resumed.text) == []
    again = post(app, decided)
    assert again.status == 409
    assert booked == ["Rome"]


def test_a_failing_durable_run_ends_with_run_error() -> None:
    """A durable run that fails is RUN_STARTED then RUN_ERROR naming the error."""
    model = ScriptedModel([RuntimeError("model down")])
    app = agui_app(durable(Agent("broken", model), sessions=InMemorySessions()))
    answer = post(app, run_input("hi"))
    assert answer.status == 200
    assert answer.types == ["RUN_STARTED", "RUN_ERROR"]
    assert answer.last["message"] == "RuntimeError: model down"
    assert problems(answer.text) == []
