"""The reference harness: a scenario's agent on hookline's own ``Runner``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from hooks import Decision, ModelResponse, ToolCall
from runner import Agent, FunctionTool, Runner, RunResult, ScriptedModel, ToolResultEvent
from runner._models.scripted import ScriptItem
from tests.adapters.harness import AgentSpec, ModelDown, Report

__all__ = ["RunnerHarness"]


def _agent(spec: AgentSpec) -> Agent:
    script: list[ScriptItem] = []
    for turn in spec.turns:
        if turn.error is not None:
            script.append(ModelDown(turn.error))
        else:
            calls = tuple(ToolCall(c.id, c.name, dict(c.args)) for c in turn.calls)
            script.append(ModelResponse(text=turn.text, tool_calls=calls))
    tools = [_named(name, fn) for name, fn in spec.tools.items()]
    return Agent(
        name=spec.name,
        model=ScriptedModel(script),
        tools=tools,
        sub_agents=[_agent(sub) for sub in spec.sub_agents],
    )


def _named(name: str, fn: Callable[..., str]) -> FunctionTool:
    return FunctionTool(fn, name=name)


def _report(result: RunResult) -> Report:
    results = tuple(
        (e.call.name, e.result.content)
        for e in result.events
        if type(e) is ToolResultEvent and "/" not in e.branch  # the top agent's own
    )
    if result.status == "paused":
        return Report("paused", result.output, results, result)
    return Report("done", result.output, results, result)


class RunnerHarness:
    """Runs a scenario on ``Runner`` with the scenario's callbacks as the run's."""

    framework = "Runner"
    cannot: Mapping[str, str] = MappingProxyType({})

    def __init__(self) -> None:
        self._runner: Runner | None = None
        self._callbacks: Sequence[object] = ()

    def run(self, agent: AgentSpec, message: str, callbacks: Sequence[object]) -> Report:
        """Run ``agent`` on a fresh ``Runner`` (one attempt per call, as the adapters)."""
        self._runner = Runner(_agent(agent))
        self._callbacks = callbacks
        return _report(self._runner.run(message, callbacks=callbacks))

    def resume(self, report: Report, decision: Decision) -> Report:
        """Resume the paused run with ``decision`` for its one pending request."""
        assert self._runner is not None
        result = report.handle
        assert isinstance(result, RunResult)
        (pending,) = result.pending
        return _report(
            self._runner.resume(result.state, {pending.id: decision}, callbacks=self._callbacks)
        )
