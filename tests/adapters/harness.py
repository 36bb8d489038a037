"""The scenario suite's side of an adapter: a framework-neutral agent and the harness
protocol each framework implements to run it.

A scenario describes an agent (``AgentSpec``: what its fake model answers, turn by turn,
and its tools) and hands it, with hookline callbacks, to a ``Harness``; the harness
builds the same agent in its framework (hookline's own ``Runner`` is the reference),
runs it offline with that framework's fake model and tells what happened (``Report``).
This module imports hookline only: every environment can import it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from hooks import Decision

__all__ = ["AgentSpec", "Call", "Harness", "ModelDown", "Report", "ToolFailed", "Turn"]


class ModelDown(RuntimeError):
    """What the fake model raises for a ``Turn(error=...)``."""


class ToolFailed(RuntimeError):
    """What a scenario's tool raises to fail a call (the harness lets it reach the hooks)."""


@dataclass(frozen=True)
class Call:
    """A tool call the fake model makes: the tool's name, its arguments, its id."""

    name: str
    args: Mapping[str, object]
    id: str


@dataclass(frozen=True)
class Turn:
    """One answer of the fake model: text, tool calls, or (``error``) a ``ModelDown``
    raised instead of answering."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class AgentSpec:
    """An agent to build: ``turns`` are its model's answers in order (a harness whose
    model is asked more often than that fails the scenario); ``tools`` are plain sync
    functions taking keyword arguments and returning ``str`` (one may raise
    ``ToolFailed``); each of ``sub_agents`` is offered to the model as a tool named after
    it taking one argument ``request: str``, answering with the sub-agent's final text."""

    name: str
    turns: tuple[Turn, ...]
    tools: Mapping[str, Callable[..., str]] = field(default_factory=dict)
    sub_agents: tuple[AgentSpec, ...] = ()


@dataclass(frozen=True)
class Report:
    """What a run did: ``status``, the final answer's ``text`` (``""`` while paused),
    each tool result the top agent's model read as ``(tool name, content)`` in order (a
    halted or rejected call's result included; a sub-agent's own calls left out), and
    ``handle``, the harness's own object that ``resume`` takes back (the paused run)."""

    status: Literal["done", "paused"]
    text: str
    tool_results: tuple[tuple[str, str], ...]
    handle: object = None


class Harness(Protocol):
    """One framework's way to run a scenario's agent under hookline callbacks.

    ``framework`` is the matrix column's name; ``cannot`` maps a scenario's ``name`` to
    the reason this framework cannot express its verb (the suite marks it a strict xfail
    with that reason: should it pass, the run fails).
    """

    @property
    def framework(self) -> str: ...

    @property
    def cannot(self) -> Mapping[str, str]: ...

    def run(self, agent: AgentSpec, message: str, callbacks: Sequence[object]) -> Report:
        """Run ``agent`` on ``message`` with ``callbacks`` guarding it, to its end or its
        first pause."""
        ...

    def resume(self, report: Report, decision: Decision) -> Report:
        """Go on with the paused run of ``report``, ``decision`` answering its one
        pending call."""
        ...
