"""What ``Runner.resume`` checks before a paused run goes on: nothing runs on a bad state.

The state must be a paused run's, of this runner's root agent; every agent turn and
paused call in it must name an agent and a tool this runner has (they are bound again
by name: a new process builds its own); the decisions must answer exactly the
pending requests, each with ``Approve()``, ``Edit(args)`` or ``Reject(message)``;
each request must be its frame's: the id the run gave it, the call id, tool name,
agent and branch of the paused call it stands for (what runs on ``Approve()`` is the
request's call, the one a human was shown).

The callbacks a paused run had besides its agents' own (the runner's and the run's)
are recorded in its state by ``describe``: a module by its name, an object by its
class's ``module.QualName``. A resume must bring each of them again, as many times
(the resuming runner's callbacks and the resume's own count together); more are
allowed. Two instances of one class read the same: the record says which guards were
in force, not how they were configured.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Iterable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any, Final, cast

from hooks import Approve, AsyncObserver, Decision, Edit, Observer, Placed, Reject, Respond
from runner._agent import Agent
from runner._errors import InvalidDecisions, ResumeRefused
from runner._pause.pending import DecisionKind, Frame, PendingRequest, request_id
from runner._pause.runstate import RunState

__all__ = ["check_callbacks", "checked_decisions", "describe"]


def describe(callbacks: Iterable[object]) -> tuple[str, ...]:
    """Each callback's stable description: a module's name, an object's class's
    ``module.QualName``; a placed one's with its tier and match
    (``guard(guards.Approval, tools=['rm'])``). A function made an observer with
    ``observing(fn)`` is left out: it can only look, so a resume need not bring it (an
    observer that must see the resumed run too is listed as ``audit(...)``)."""
    return tuple(
        _stable(callback)
        for callback in callbacks
        if type(callback) is not Observer and type(callback) is not AsyncObserver
    )


def _stable(callback: object) -> str:
    if isinstance(callback, Placed):
        placed: Placed[object] = callback  # pyright: ignore[reportUnknownVariableType]
        name = "matched" if placed.tier == "default" else placed.tier
        match = "" if placed.match is None else f", {placed.match!r}"
        return f"{name}({_stable(placed.callback)}{match})"
    if isinstance(callback, ModuleType):
        return callback.__name__
    return f"{type(callback).__module__}.{type(callback).__qualname__}"


def check_callbacks(state: RunState, present: Iterable[object]) -> None:
    """Refuse (``ResumeRefused``) a resume that lacks a callback the paused run had."""
    if not state.callbacks:
        return
    missing = Counter(state.callbacks) - Counter(describe(present))
    if missing:
        names = ", ".join(
            name if count == 1 else f"{name} (x{count})" for name, count in missing.items()
        )
        problem = (
            f"it paused under callbacks this resume does not bring: {names}; pass them "
            "again (runner.resume(state, decisions, callbacks=[...])) so they check the resume"
        )
        raise ResumeRefused(state.run_id, problem)


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
    if len(set(pending)) != len(pending):
        raise ResumeRefused(state.run_id, "two of its pending requests share an id")
    known = frozenset(pending)
    missing = tuple(key for key in pending if key not in given)
    unknown = tuple(str(key) for key in given if key not in known)
    wrong = tuple(
        str(key)
        for key, decision in given.items()
        if key in known and not isinstance(decision, Approve | Edit | Reject | Respond)
    )
    if missing or unknown or wrong:
        raise InvalidDecisions(state.run_id, missing=missing, unknown=unknown, wrong=wrong)
    for request in state.pending:
        misfit = _misfit(request, cast("Decision", given[request.id]))
        if misfit is not None:
            raise InvalidDecisions(state.run_id, misfit={request.id: misfit})
    every: dict[str, Decision] = dict(state.decisions)
    every.update({key: cast("Decision", given[key]) for key in pending})
    return state, MappingProxyType(every)


_KINDS: Final[dict[type, DecisionKind]] = {
    Approve: "approve",
    Edit: "edit",
    Reject: "reject",
    Respond: "respond",
}


def _misfit(request: PendingRequest, decision: Decision) -> str | None:
    """Why ``decision`` cannot answer ``request`` (a kind it does not allow, an answer that
    does not fit the question's schema), or ``None`` when it can."""
    kind = _KINDS[type(decision)]
    if kind not in request.allowed:
        return f"it takes {' or '.join(request.allowed)}, got {kind}"
    if type(decision) is not Respond or request.schema is None:
        return None
    # jsonschema comes with the mcp SDK, the only source of questions (and has no stubs).
    jsonschema: Any = importlib.import_module("jsonschema")

    try:
        jsonschema.validate(dict(decision.value), dict(request.schema))
    except jsonschema.ValidationError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "the answer"
        return f"the answer does not fit the question's schema: {where}: {error.message}"
    except jsonschema.SchemaError as error:
        return f"the question's schema is no valid JSON schema: {error.message}"
    return None


def _bind(run_id: str, root: Agent, frame: Frame) -> None:
    """Refuse a frame whose agent, sub-agents or paused tools this runner lacks, or whose
    requests and children are not its own paused calls'."""
    agent = _agent_at(run_id, root, frame.branch)
    if frame.agent != agent.name:
        problem = f"its frame at branch {frame.branch!r} names agent {frame.agent!r}"
        raise ResumeRefused(run_id, problem)
    ids = {call.id for call in frame.calls}
    if len(ids) != len(frame.calls):
        raise ResumeRefused(run_id, f"two paused calls at branch {frame.branch!r} share an id")
    held = (*frame.results, *frame.requests, *frame.children)
    for call_id in held:
        if call_id not in ids:
            problem = f"it holds call {call_id!r} that its frame at {frame.branch!r} never made"
            raise ResumeRefused(run_id, problem)
    if len(set(held)) != len(held):
        problem = f"a call at branch {frame.branch!r} is held twice (ran, paused, sub-agent)"
        raise ResumeRefused(run_id, problem)
    for call in frame.calls:
        request = frame.requests.get(call.id)
        if request is not None and (
            request.id != request_id(run_id, frame.branch, frame.step, call.id)
            or (request.call.id, request.call.name) != (call.id, call.name)
            or (request.agent, request.branch) != (frame.agent, frame.branch)
        ):
            problem = f"its request {request.id!r} is not the one its paused call {call.id!r} made"
            raise ResumeRefused(run_id, problem)
        tool = agent.tools.get(call.name)
        # An agent with MCP servers may hold it: the call finds it when it runs again.
        if call.id in frame.requests and tool is None and not agent.sources:
            problem = f"agent {agent.name!r} has no tool {call.name!r} for paused call {call.id!r}"
            raise ResumeRefused(run_id, problem)
        child = frame.children.get(call.id)
        if child is not None:
            if child.branch != f"{frame.branch}/{call.name}":
                problem = (
                    f"the sub-agent turn of call {call.id!r} is at branch {child.branch!r}, "
                    f"not {frame.branch + '/' + call.name!r}"
                )
                raise ResumeRefused(run_id, problem)
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
