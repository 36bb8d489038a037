"""``DurableRunner.resume_stream``: refused, saying why and what to use instead."""

from __future__ import annotations

import asyncio

import pytest

from hooks import Approve, Cont, PausableResult, Pause, ToolContext, ToolResult
from runner import Agent, InMemorySessions, ScriptedModel, ToolCall
from tests.helpers.durable import durable, unique
from tests.helpers.runs import calling

pytestmark = [pytest.mark.durable, pytest.mark.usefixtures("launched")]


class AskFirst:
    """Pauses every call until a human decided."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause an undecided call."""
        return Pause("go?") if ctx.decision is None else Cont(ctx)


def test_a_durable_runner_refuses_to_stream_a_resume_saying_why() -> None:
    """``resume_stream`` raises ``NotImplementedError`` naming the reason and ``aresume``; the
    paused run is left as it was, and ``aresume`` goes on with it."""

    def book(city: str) -> str:
        """Book a trip."""
        return f"booked {city}"

    model = ScriptedModel([calling(ToolCall("c1", "book", {"city": "Rome"})), "Booked."])
    runner = durable(
        Agent("trip", model, tools=[book]), callbacks=[AskFirst()], sessions=InMemorySessions()
    )
    paused = runner.run("book Rome", run_id=unique("stream"))
    decisions = {paused.pending[0].id: Approve()}
    with pytest.raises(NotImplementedError, match="a durable run is not streamed") as raised:
        runner.resume_stream(paused.state, decisions)
    assert "await runner.aresume(state, decisions)" in str(raised.value)
    assert runner.paused(paused.run_id) is not None
    done = asyncio.run(runner.aresume(paused.state, decisions))
    assert (done.status, done.output) == ("completed", "Booked.")
