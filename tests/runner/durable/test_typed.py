"""``DurableRunner`` refuses, when made, what it cannot serve yet: typed answers and deps."""

from __future__ import annotations

import dataclasses

import pytest

from runner import Agent, DurableRunner, RunContext, ScriptedModel


@dataclasses.dataclass
class Point:
    x: int


def peek(ctx: RunContext[Point], key: str) -> str:
    """Peek."""
    return key


@pytest.mark.parametrize(
    ("agent", "what"),
    [
        (Agent("typed", ScriptedModel(), output_type=Point), "an output_type"),
        (Agent("needy", ScriptedModel(), tools=[peek], deps_type=Point), "a deps_type"),
        (
            Agent(
                "boss",
                ScriptedModel(),
                sub_agents=[Agent("sub", ScriptedModel(), output_type=Point)],
            ),
            "an output_type",
        ),
    ],
)
def test_an_agent_with_output_type_or_deps_is_refused_up_front(agent: Agent, what: str) -> None:
    """A sub-agent's counts too; the error says which agent and why, nothing is registered."""
    with pytest.raises(NotImplementedError, match=f"it has {what}, which only Runner supports"):
        DurableRunner(agent)
