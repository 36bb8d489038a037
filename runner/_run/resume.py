"""What ``Runner.resume`` checks before a paused run goes on: nothing runs on a bad state.

The state must be a paused run's, of this runner's root agent; every agent turn and
paused call in it must name an agent and a tool this runner has (they are bound again
by name: a new process builds its own); the decisions must answer exactly the
pending requests, each with ``Approve()``, ``Edit(args)`` or ``Reject(message)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import cast

from hooks import Approve, Decision, Edit, Reject
from runner._agent import Agent
from runner._errors import InvalidDecisions, ResumeRefused
from runner._pause.pending import Frame
from runner._pause.runstate import RunState

__all__ = ["checked_decisions"]


def checked_decisions(
    root: Agent, state: object, decisions: object
) -> tuple[RunState, Mapping[str, Decision]]:
    """``state`` and every decision so far, once ``state`` can go on here with ``decisions``."""
    if not isinstance(state, RunState):
        msg = f"resume takes a RunState (RunState.from_json reads one), got {type(state).__name__}"
        raise TypeError(msg)
    if not isinstance(decisions, Mapping):
        msg = (
            "resume's decisions must be a mapping of request id to Approve(), Edit(args) "
            f"or Reject(message), got {type(decisions).__name__}"
        )
        raise TypeError(msg)
    frame = state.frame
    if state.status != "paused":
        raise ResumeRefused(state.run_id, f"it is {state.status}, not paused")
    if frame is None:  # a hand-made or edited state: from_json reads one as it is
        problem = "it is paused but holds no paused turn (its frame is None)"
        raise ResumeRefused(state.run_id, problem)
    if state.agent != root.name:
        problem = f"it is a run of agent {state.agent!r}, this runner runs {root.name!r}"
        raise ResumeRefused(state.run_id, problem)
    _bind(state.run_id, root, frame)
    given = cast("Mapping[object, object]", decisions)
    pending = [request.id for request in state.pending]
    missing = tuple(key for key in pending if key not in given)
    unknown = tuple(str(key) for key in given if key not in pending)
    wrong = tuple(
        str(key)
        for key, decision in given.items()
        if key in pending and not isinstance(decision, Approve | Edit | Reject)
    )
    if missing or unknown or wrong:
        raise InvalidDecisions(state.run_id, missing=missing, unknown=unknown, wrong=wrong)
    every: dict[str, Decision] = dict(state.decisions)
    every.update({key: cast("Decision", given[key]) for key in pending})
    return state, MappingProxyType(every)


def _bind(run_id: str, root: Agent, frame: Frame) -> None:
    """Refuse a frame whose agent, sub-agents or paused tools this runner lacks."""
    agent = _agent_at(run_id, root, frame.branch)
    for call in frame.calls:
        tool = agent.tools.get(call.name)
        if call.id in frame.requests and tool is None:
            problem = f"agent {agent.name!r} has no tool {call.name!r} for paused call {call.id!r}"
            raise ResumeRefused(run_id, problem)
        child = frame.children.get(call.id)
        if child is not None:
            _bind(run_id, root, child)


def _agent_at(run_id: str, root: Agent, branch: str) -> Agent:
    names = branch.split("/")
    if names[0] != root.name:
        raise ResumeRefused(run_id, f"its branch {branch!r} does not start at {root.name!r}")
    agent = root
    for name in names[1:]:
        sub = agent.tools.get(name)
        if not isinstance(sub, Agent):
            problem = f"agent {agent.name!r} has no sub-agent {name!r} (branch {branch!r})"
            raise ResumeRefused(run_id, problem)
        agent = sub
    return agent
