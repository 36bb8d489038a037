"""``Runner.stream`` and ``resume_stream`` take each ``hold`` mode and yield ``StreamEvent``."""

from collections.abc import AsyncGenerator

from typing_extensions import assert_type

from hooks import Approve
from runner import Agent, Runner, RunState, ScriptedModel, StreamEvent


async def main(runner: Runner, state: RunState) -> None:
    for hold in ("auto", "output", "none", None, 64):
        assert_type(runner.stream("hi", hold=hold), AsyncGenerator[StreamEvent, None])
    resumed = runner.resume_stream(state, {"r1": Approve()}, hold="output")
    assert_type(resumed, AsyncGenerator[StreamEvent, None])
    async for event in resumed:
        assert_type(event, StreamEvent)


runner = Runner(Agent("a", ScriptedModel(["hi"])))
