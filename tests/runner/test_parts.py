"""Tests of the runner's parts: the Runner's lifecycle and misuse, InMemorySessions.

Agent, tools, ScriptedModel and RetryPolicy are tested in ``test_runner_inputs.py``."""

from __future__ import annotations

import asyncio
import gc
import re
import threading
import weakref
from collections.abc import Callable

import pytest

from hooks import (
    BeforeAgent,
    BeforeResult,
    CompiledCallbacks,
    Cont,
    InvalidCallbacks,
    compile_callbacks,
)
from runner import (
    Agent,
    AgentContext,
    InMemorySessions,
    Message,
    ModelResponse,
    Runner,
    ScriptedModel,
    ToolCall,
    ToolResultEvent,
)
from runner._run.callbacks import CallbackTable
from tests.helpers.runs import AsyncScripted, Mode, add, calling, drive, events_of

# -- Runner lifecycle and misuse ----------------------------------------------------


class Seen(BeforeAgent):
    """Records that a run started."""

    def __init__(self) -> None:
        self.started = 0

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Count and go on."""
        self.started += 1
        return Cont(ctx)


def test_runner_is_a_context_manager_that_refuses_use_after_close(mode: Mode) -> None:
    """Leaving the ``with`` closes the runner; a closed runner refuses to run or re-enter."""
    with Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner:
        assert repr(runner) == "<Runner 'assistant' open>"
        drive(runner, mode, "hi")
    assert runner.closed
    assert repr(runner) == "<Runner 'assistant' closed>"
    with pytest.raises(RuntimeError, match="closed"):
        drive(runner, mode, "again")
    with pytest.raises(RuntimeError, match="closed"), runner:
        pass
    runner.close()  # closing twice is fine
    assert runner.closed


def test_runs_that_start_sessions_get_random_ids_all_different(mode: Mode) -> None:
    """Each run that starts a session gets a run id and a session id of 128 random bits in
    hex, no two alike; a run that continues a session gets a new run id only."""
    with Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner:
        results = [drive(runner, mode, "hi") for _ in range(50)]
        again = drive(runner, mode, "hi", session_id=results[0].session_id)
    ids = [r.run_id for r in results] + [r.session_id for r in results] + [again.run_id]
    assert all(re.fullmatch(r"[0-9a-f]{32}", each) for each in ids)
    assert len(set(ids)) == 101
    assert again.session_id == results[0].session_id


def test_close_stops_the_tool_threads() -> None:
    """Closing the runner shuts the thread pool that ran sync tools in ``arun``."""

    def tool_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("hookline-tool")]

    model = ScriptedModel(
        [
            calling(ToolCall("a", "add", {"a": 1, "b": 1}), ToolCall("b", "add", {"a": 2, "b": 2})),
            "done",
        ]
    )
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = asyncio.run(runner.arun("go"))
        assert tool_threads()
    assert [e.result.content for e in events_of(result, ToolResultEvent)] == ["2", "4"]
    assert tool_threads() == []


def test_close_forgets_the_runners_own_sessions_only() -> None:
    """A runner clears the session store it made, never one it was given."""
    mine = Runner(Agent("assistant", ScriptedModel(default="ok")))
    mine.run("hi", session_id="s")
    given = InMemorySessions()
    theirs = Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=given)
    theirs.run("hi", session_id="s")
    mine.close()
    theirs.close()
    assert isinstance(mine.sessions, InMemorySessions)
    assert len(mine.sessions) == 0
    assert len(given) == 1


def test_runner_validates_its_arguments() -> None:
    """A runner needs an ``Agent``, ``max_steps >= 1`` and valid callbacks."""
    with pytest.raises(TypeError, match="Agent"):
        Runner(ScriptedModel())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_steps"):
        Runner(Agent("assistant", ScriptedModel()), max_steps=0)

    class Typo:
        def before_modle(self, ctx: object) -> object:
            return Cont(ctx)

    with pytest.raises(InvalidCallbacks, match="before_model"):
        Runner(Agent("assistant", ScriptedModel()), callbacks=[Typo()])
    with (
        Runner(Agent("assistant", ScriptedModel())) as runner,
        pytest.raises(InvalidCallbacks, match="before_model"),
    ):
        runner.run("hi", callbacks=[Typo()])


def test_runs_take_a_str_or_a_message(mode: Mode) -> None:
    """A str is a user message; a ``Message`` is used as it is; anything else is refused."""
    model = ScriptedModel(default="ok")
    with Runner(Agent("assistant", model)) as runner:
        drive(runner, mode, "text")
        drive(runner, mode, Message("user", "message"))
        with pytest.raises(TypeError, match="str or a Message"):
            drive(runner, mode, 42)  # type: ignore[arg-type]
    assert [r.messages[-1].content for r in model.requests] == ["text", "message"]


async def _async_tool(x: int) -> int:
    """An async tool."""
    return x


class AsyncHook:
    """A callback with an async before_model."""

    async def before_model(self, ctx: object) -> object:
        """Never awaited by a sync run."""
        return Cont(ctx)


def _with_async_model() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", AsyncScripted(ScriptedModel(["ok"]))), {}


def _with_async_tool() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", ScriptedModel(["ok"]), tools=[_async_tool]), {}


def _with_async_sub_agent_tool() -> tuple[Agent, dict[str, list[object]]]:
    sub = Agent("researcher", ScriptedModel(["ok"]), tools=[_async_tool])
    return Agent("assistant", ScriptedModel(["ok"]), sub_agents=[sub]), {}


def _with_async_agent_callback() -> tuple[Agent, dict[str, list[object]]]:
    sub = Agent("researcher", ScriptedModel(["ok"]), callbacks=[AsyncHook()])
    return Agent("assistant", ScriptedModel(["ok"]), sub_agents=[sub]), {}


def _with_async_runner_callback() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", ScriptedModel(["ok"])), {"runner": [AsyncHook()]}


def _with_async_run_callback() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", ScriptedModel(["ok"])), {"run": [AsyncHook()]}


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (_with_async_model, TypeError, "async model"),
        (_with_async_tool, TypeError, "async tools"),
        (_with_async_sub_agent_tool, TypeError, "'researcher' has async tools"),
        (_with_async_agent_callback, InvalidCallbacks, "before_model is async"),
        (_with_async_runner_callback, InvalidCallbacks, "before_model is async"),
        (_with_async_run_callback, InvalidCallbacks, "before_model is async"),
    ],
    ids=["model", "tool", "sub-agent-tool", "agent-callback", "runner-callback", "run-callback"],
)
def test_sync_run_refuses_async_parts_before_anything_runs(
    make: Callable[[], tuple[Agent, dict[str, list[object]]]], error: type[Exception], match: str
) -> None:
    """``run`` with an async model, tool or callback anywhere raises before any hook runs."""
    agent, where = make()
    seen = Seen()
    runner_callbacks = [seen, *where.get("runner", [])]
    with Runner(agent, callbacks=runner_callbacks) as runner:
        with pytest.raises(error, match=match):
            runner.run("hi", callbacks=where.get("run", []))
        assert seen.started == 0
        # The same parts are fine in arun.
        assert asyncio.run(runner.arun("hi", callbacks=where.get("run", []))).output == "ok"


@pytest.mark.parametrize("where", ["runner", "run"])
def test_a_refused_sync_run_is_refused_again_with_the_same_callbacks(where: str) -> None:
    """A refusal is never remembered as a pass: the same list is refused on every sync run,
    before and after an async run that could use it, and no hook runs."""
    seen, hooks = Seen(), [AsyncHook()]
    runner_callbacks: list[object] = [seen, *hooks] if where == "runner" else [seen]
    run_callbacks = hooks if where == "run" else []
    with Runner(Agent("assistant", ScriptedModel(default="ok")), callbacks=runner_callbacks) as r:
        for _ in range(2):
            with pytest.raises(InvalidCallbacks, match="before_model is async"):
                r.run("hi", callbacks=run_callbacks)
        assert seen.started == 0
        assert asyncio.run(r.arun("hi", callbacks=run_callbacks)).output == "ok"
        with pytest.raises(InvalidCallbacks, match="before_model is async"):
            r.run("hi", callbacks=run_callbacks)
    assert seen.started == 1


class PlainToolWrap:
    """A plain def tool wrap: a sync run takes it, an async run refuses it."""

    def wrap_tool(self, ctx: object, call_next: Callable[[object], object], /) -> object:
        """Call on."""
        return call_next(ctx)


def test_a_refused_async_run_is_refused_again_with_the_same_callbacks() -> None:
    """A plain def wrap is refused on every async run, before and after sync runs that take
    it, and no hook runs."""
    seen = Seen()
    wraps = [PlainToolWrap()]
    with Runner(Agent("assistant", ScriptedModel(default="ok")), callbacks=[seen]) as runner:
        for _ in range(2):
            with pytest.raises(InvalidCallbacks, match="plain def"):
                asyncio.run(runner.arun("hi", callbacks=wraps))
        assert seen.started == 0
        assert runner.run("hi", callbacks=wraps).output == "ok"
        with pytest.raises(InvalidCallbacks, match="plain def"):
            asyncio.run(runner.arun("hi", callbacks=wraps))
    assert seen.started == 1


def test_run_inside_a_running_loop_is_refused() -> None:
    """``run`` called from async code raises ``RuntimeError`` pointing to ``arun``."""
    model = ScriptedModel(["ok"])

    async def main(runner: Runner) -> None:
        with pytest.raises(RuntimeError, match="arun"):
            runner.run("hi")

    with Runner(Agent("assistant", model)) as runner:
        asyncio.run(main(runner))
    assert model.requests == []


# -- InMemorySessions ---------------------------------------------------------------


def test_closing_drops_the_combined_callbacks() -> None:
    """A closed runner keeps no callback of a past run alive (an open one keeps them, combined
    with its own, for the next run given them)."""

    class Audit:
        def on_event(self, event: object, /) -> None:
            pass

    def kept_alive(*, close: bool) -> bool:
        runner = Runner(Agent("assistant", ScriptedModel(["hi"])))
        audit = Audit()
        alive = weakref.ref(audit)
        # Compiled here: a list would stay in ``compile_callbacks``' own identity cache.
        # (A CompiledCallbacks goes wherever a list goes; ``run``'s annotation says less.)
        runner.run("x", callbacks=CompiledCallbacks((audit,)))
        del audit
        if close:
            runner.close()
        gc.collect()
        kept = alive() is not None
        runner.close()
        return kept

    assert kept_alive(close=False)
    assert not kept_alive(close=True)


# -- the callback table (mutation-test hardening) ---------------------------------------


class Passes(BeforeAgent):
    """A callback that lets every agent call through."""

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Go on."""
        return Cont(ctx)


@pytest.mark.parametrize("check_sync", [True, False])
def test_a_fresh_list_of_the_same_callbacks_reuses_the_combined_table(check_sync: bool) -> None:
    """Run callbacks given again in a new list of the same objects build nothing new."""
    agent = Agent("a", ScriptedModel(default="ok"))
    table = CallbackTable(compile_callbacks([]), [agent])
    guard = Passes()
    first = table.for_run(compile_callbacks([guard]), check_sync=check_sync)
    assert table.for_run(compile_callbacks([guard]), check_sync=check_sync) is first
    assert table.for_run(compile_callbacks([Passes()]), check_sync=check_sync) is not first


def test_the_callback_table_starts_over_past_64_lists() -> None:
    """64 run-callbacks lists are kept; the 65th empties the table first."""
    agent = Agent("a", ScriptedModel(default="ok"))
    table = CallbackTable(compile_callbacks([]), [agent])
    lists = [compile_callbacks([Passes()]) for _ in range(65)]
    first = table.for_run(lists[0], check_sync=True)
    for each in lists[1:64]:
        table.for_run(each, check_sync=True)
    assert table.for_run(lists[0], check_sync=True) is first
    table.for_run(lists[64], check_sync=True)
    assert table.for_run(lists[0], check_sync=True) is not first
