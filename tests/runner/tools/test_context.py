"""Tests of a run's dependencies: ``run(..., deps=)``, ``RunContext[Deps]`` and ``deps_type``."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from runner import (
    Agent,
    AgentContext,
    BeforeResult,
    Cont,
    FunctionTool,
    ModelResponse,
    Pause,
    Runner,
    RunResult,
    ScriptedModel,
    ToolCall,
    ToolContext,
)
from runner import RunContext as Ctx
from tests.helpers.runs import Mode


@dataclasses.dataclass
class Db:
    """What the tools need: a table of rates."""

    rates: dict[str, float]


class OtherDb:
    """Something else."""


seen: list[Ctx[Db]] = []


def rate(ctx: Ctx[Db], currency: str) -> float:
    """The rate of ``currency``.

    Args:
        currency: An ISO code.
    """
    seen.append(ctx)
    return ctx.deps.rates[currency]


async def arate(ctx: Ctx[Db], currency: str) -> float:
    """The rate of ``currency``, awaited."""
    await asyncio.sleep(0)
    seen.append(ctx)
    return ctx.deps.rates[currency]


def call(name: str = "rate", call_id: str = "c1") -> ModelResponse:
    """A model answer calling ``name`` for EUR."""
    return ModelResponse(tool_calls=(ToolCall(call_id, name, {"currency": "EUR"}),))


def go(runner: Runner[Any, Any], mode: Mode, message: str, **kwargs: Any) -> RunResult[Any]:
    """One run, through ``run`` or ``arun``."""
    if mode == "sync":
        return runner.run(message, **kwargs)
    return asyncio.run(runner.arun(message, **kwargs))


@pytest.fixture(autouse=True)
def _forget() -> None:
    seen.clear()


def test_the_context_parameter_is_no_argument_of_the_model_s() -> None:
    """The schema shows ``currency`` only; the tool says it takes a ``Db``."""
    tool = FunctionTool(rate)
    assert tool.parameters["properties"] == {
        "currency": {"type": "string", "description": "An ISO code."}
    }
    assert tool.parameters["required"] == ["currency"]
    assert tool.deps_type is Db


def test_a_tool_gets_the_run_s_deps_ids_and_call_id(mode: Mode) -> None:
    """``RunContext`` carries the deps given to the run, its state and ids, the call's id."""
    db = Db({"EUR": 1.1})
    model = ScriptedModel([call(), "done"])
    agent = Agent("fx", model, tools=[rate], deps_type=Db)
    result = go(Runner(agent), mode, "rate?", deps=db, user_id="ann")
    assert model.requests[1].messages[-1].content == "1.1"
    (ctx,) = seen
    assert ctx.deps is db
    assert (ctx.run_id, ctx.user_id, ctx.session_id) == (result.run_id, "ann", result.session_id)
    assert (ctx.agent, ctx.call_id) == ("fx", "c1")


def test_an_async_tool_gets_its_context_too() -> None:
    """An ``async def`` tool taking a ``RunContext`` is awaited with it."""
    db = Db({"EUR": 2.0})
    model = ScriptedModel([call("arate"), "done"])
    agent = Agent("fx", model, tools=[arate], deps_type=Db)
    asyncio.run(Runner(agent).arun("rate?", deps=db))
    assert seen[0].deps is db
    assert model.requests[1].messages[-1].content == "2.0"


def test_hooks_see_the_deps_on_the_invocation(mode: Mode) -> None:
    """``ctx.invocation.deps`` is the object the run was given, for every hook."""
    found: list[object] = []

    class Look:
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            found.append(ctx.invocation.deps)
            return Cont(ctx)

        def before_tool(self, ctx: ToolContext, /) -> Any:
            found.append(ctx.invocation.deps)
            return Cont(ctx)

    db = Db({"EUR": 1.0})
    agent = Agent("fx", ScriptedModel([call(), "done"]), tools=[rate], deps_type=Db)
    go(Runner(agent, callbacks=[Look()]), mode, "rate?", deps=db)
    assert found == [db, db]


def test_a_run_without_the_declared_deps_is_refused_before_it_starts(mode: Mode) -> None:
    """No deps, or deps of another type, is a ``TypeError`` naming the agent and the type."""
    model = ScriptedModel([call(), "done"])
    runner = Runner(Agent("fx", model, tools=[rate], deps_type=Db))
    method = "run" if mode == "sync" else "arun"
    with pytest.raises(TypeError, match=rf"takes deps of type Db, but {method} was given none"):
        go(runner, mode, "rate?")
    with pytest.raises(TypeError, match="takes deps of type Db, got OtherDb"):
        go(runner, mode, "rate?", deps=OtherDb())
    assert model.requests == []


def test_a_tool_s_deps_must_fit_the_agent_s_deps_type() -> None:
    """``RunContext[Db]`` on an agent without ``deps_type``, or with another, is refused."""
    with pytest.raises(TypeError, match="declares no deps_type"):
        Agent("fx", ScriptedModel(), tools=[rate])
    with pytest.raises(
        TypeError, match="takes RunContext\\[Db\\], but the agent deps_type is OtherDb"
    ):
        Agent("fx", ScriptedModel(), tools=[rate], deps_type=OtherDb)

    @dataclasses.dataclass
    class MoreDb(Db):
        extra: int = 0

    Agent("fx", ScriptedModel(), tools=[rate], deps_type=MoreDb)  # a subclass fits


def test_a_bare_run_context_takes_any_deps(mode: Mode) -> None:
    """A tool annotated ``RunContext`` alone gets whatever the run was given."""
    got: list[object] = []

    def peek(ctx: Ctx, key: str) -> str:
        """Peek."""
        got.append(ctx.deps)
        return key

    model = ScriptedModel([ModelResponse(tool_calls=(ToolCall("p", "peek", {"key": "k"}),)), "ok"])
    go(Runner(Agent("a", model, tools=[peek])), mode, "go")
    assert got == [None]


def test_a_context_tool_run_by_hand_says_it_needs_a_runner() -> None:
    """``FunctionTool.run`` has no run to take a context from: a clear ``TypeError``."""
    with pytest.raises(TypeError, match="takes a RunContext first"):
        FunctionTool(rate).run({"currency": "EUR"})


def test_a_resume_is_given_its_deps_again(mode: Mode) -> None:
    """Deps are never saved: ``resume`` without them is refused, with them the tool gets them."""

    class Ask:
        def before_tool(self, ctx: ToolContext, /) -> Any:
            return Cont(ctx) if ctx.decision is not None else Pause("ok?")

    from runner import Approve

    model = ScriptedModel([call(), "done"])
    runner = Runner(Agent("fx", model, tools=[rate], deps_type=Db, callbacks=[Ask()]))
    db = Db({"EUR": 3.0})
    paused = go(runner, mode, "rate?", deps=db)
    assert paused.status == "paused"
    assert "deps" not in paused.state.to_json()
    decisions = {paused.pending[0].id: Approve()}
    with pytest.raises(TypeError, match="a paused run keeps none: give them again"):
        runner.resume(paused.state, decisions)  # type: ignore[call-arg]
    if mode == "sync":
        result = runner.resume(paused.state, decisions, deps=db)
    else:
        result = asyncio.run(runner.aresume(paused.state, decisions, deps=db))
    assert result.output == "done"
    assert seen[-1].deps is db


@pytest.mark.parametrize(
    ("deps_type", "good", "bad"),
    [
        (int | str, "x", 1.5),
        (dict[str, int], {"a": 1}, ["a"]),
    ],
)
def test_a_union_or_generic_deps_type_is_checked_by_what_run_time_can_tell(
    deps_type: Any, good: object, bad: object
) -> None:
    """A union is checked as one, a generic alias by its origin; a wrong value is refused."""
    runner = Runner(Agent("a", ScriptedModel(["ok"]), deps_type=deps_type))
    assert runner.run("go", deps=good).output == "ok"
    with pytest.raises(TypeError, match="takes deps of type"):
        runner.run("go", deps=bad)


def test_a_deps_type_that_is_no_type_is_refused() -> None:
    """``deps_type=5`` is a ``TypeError`` when the agent is made."""
    with pytest.raises(TypeError, match="deps_type must be a type, got int 5"):
        Agent("a", ScriptedModel(), deps_type=5)  # type: ignore[call-overload]


def test_a_sub_agent_s_tool_gets_the_run_s_deps(mode: Mode) -> None:
    """Deps reach every agent of the run: a sub-agent's tool sees the same object."""
    db = Db({"EUR": 4.0})
    helper = Agent("helper", ScriptedModel([call(), "four"]), tools=[rate], deps_type=Db)
    boss_model = ScriptedModel(
        [ModelResponse(tool_calls=(ToolCall("s1", "helper", {"request": "rate"}),)), "done"]
    )
    boss = Agent("boss", boss_model, sub_agents=[helper], deps_type=Db)
    assert go(Runner(boss), mode, "go", deps=db).output == "done"
    assert [(ctx.deps, ctx.agent) for ctx in seen] == [(db, "helper")]
