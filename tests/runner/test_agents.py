"""End-to-end tests of runs as a whole: sub-agents, callback scope, invocations, state,
sessions, results and concurrent tool calls."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from hooks import (
    AfterAgent,
    AfterTool,
    BeforeAgent,
    BeforeModel,
    BeforeResult,
    BeforeTool,
    Cont,
    ErrorResult,
    Failure,
    Fallback,
    InvalidResult,
    OnToolError,
    Outcome,
    Result,
    Success,
)
from runner import (
    Agent,
    AgentContext,
    Invocation,
    MaxStepsExceeded,
    Message,
    ModelAttemptEvent,
    ModelContext,
    ModelResponse,
    ModelResponseEvent,
    RetryPolicy,
    Rule,
    RunFinishedEvent,
    Runner,
    RunResult,
    ScriptedModel,
    Session,
    StateKey,
    StopEvent,
    StopRun,
    ToolArgumentsError,
    ToolAttemptEvent,
    ToolCall,
    ToolCallEvent,
    ToolContext,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    UserMessageEvent,
)
from tests.helpers.runs import (
    LeasesAndPauses,
    Mode,
    add,
    calling,
    drive,
    events_of,
    tool_messages,
)

REQUEST_SCHEMA = {
    "type": "object",
    "properties": {"request": {"type": "string"}},
    "required": ["request"],
}


def ask(agent: str, request: str, call_id: str = "c1") -> ModelResponse:
    """A response delegating ``request`` to sub-agent ``agent``."""
    return calling(ToolCall(call_id, agent, {"request": request}))


class Where(BeforeAgent, BeforeModel, BeforeTool):
    """Records ``(name, point, agent, branch)`` at the before points; changes nothing."""

    def __init__(self, name: str, log: list[tuple[str, str, str, str]]) -> None:
        self.name = name
        self.log = log

    def _note(self, point: str, invocation: Invocation) -> None:
        self.log.append((self.name, point, invocation.agent, invocation.branch))

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Record and go on."""
        self._note("before_agent", ctx.invocation)
        return Cont(ctx)

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Record and go on."""
        self._note("before_model", ctx.invocation)
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Record and go on."""
        self._note("before_tool", ctx.invocation)
        return Cont(ctx)


# -- sub-agents ---------------------------------------------------------------------


def test_sub_agents_are_offered_as_tools_taking_a_request(mode: Mode) -> None:
    """A sub-agent is one more tool spec, named after it, taking ``request: str``."""
    researcher = Agent("researcher", ScriptedModel(), description="Finds facts.")
    model = ScriptedModel(["ok"])
    agent = Agent("assistant", model, tools=[add], sub_agents=[researcher])
    with Runner(agent) as runner:
        drive(runner, mode, "hi")
    add_spec, sub_spec = model.requests[0].tools
    assert add_spec.name == "add"
    assert sub_spec == ToolSpec("researcher", "Finds facts.", REQUEST_SCHEMA)


def test_sub_agent_answer_is_the_tool_result(mode: Mode) -> None:
    """The parent's request is the sub-agent's user message; its answer is the tool result."""
    sub_model = ScriptedModel(["x is 42"])
    researcher = Agent("researcher", sub_model, instruction="You research.")
    model = ScriptedModel([ask("researcher", "find x"), "the answer is 42"])
    with Runner(Agent("assistant", model, sub_agents=[researcher])) as runner:
        result = drive(runner, mode, "what is x?")
    assert sub_model.requests[0].messages == (
        Message("system", "You research."),
        Message("user", "find x"),
    )
    [message] = tool_messages(model.requests[1])
    assert (message.content, message.name, message.tool_call_id) == ("x is 42", "researcher", "c1")
    assert result.output == "the answer is 42"
    assert [(type(e).__name__, e.branch) for e in result.events] == [
        ("UserMessageEvent", "assistant"),
        ("ModelAttemptEvent", "assistant"),
        ("ModelResponseEvent", "assistant"),
        ("ToolCallEvent", "assistant"),
        ("ToolAttemptEvent", "assistant"),
        ("UserMessageEvent", "assistant/researcher"),
        ("ModelAttemptEvent", "assistant/researcher"),
        ("ModelResponseEvent", "assistant/researcher"),
        ("ToolResultEvent", "assistant"),
        ("ModelAttemptEvent", "assistant"),
        ("ModelResponseEvent", "assistant"),
    ]
    assert events_of(result, UserMessageEvent)[1].agent == "researcher"


def test_sub_agent_callbacks_see_its_branch(mode: Mode) -> None:
    """Inside a sub-agent, the invocation names it and its branch is ``parent/child``."""
    log: list[tuple[str, str, str, str]] = []
    writer = Agent("writer", ScriptedModel(["drafted"]))
    researcher = Agent(
        "researcher", ScriptedModel([ask("writer", "draft"), "found"]), sub_agents=[writer]
    )
    model = ScriptedModel([ask("researcher", "look"), "done"])
    with Runner(Agent("assistant", model, sub_agents=[researcher])) as runner:
        drive(runner, mode, "go", callbacks=[Where("run", log)])
    assert [(point, agent, branch) for _, point, agent, branch in log] == [
        ("before_agent", "assistant", "assistant"),
        ("before_model", "assistant", "assistant"),
        ("before_tool", "assistant", "assistant"),
        ("before_agent", "researcher", "assistant/researcher"),
        ("before_model", "researcher", "assistant/researcher"),
        ("before_tool", "researcher", "assistant/researcher"),
        ("before_agent", "writer", "assistant/researcher/writer"),
        ("before_model", "writer", "assistant/researcher/writer"),
        ("before_model", "researcher", "assistant/researcher"),
        ("before_model", "assistant", "assistant"),
    ]


@pytest.mark.parametrize(
    "args",
    [{}, {"request": 1}, {"request": "x", "extra": True}],
    ids=["missing", "not-str", "extra"],
)
def test_bad_sub_agent_args_reach_on_tool_error(mode: Mode, args: dict[str, object]) -> None:
    """A sub-agent called without exactly one str ``request`` is a ``ToolArgumentsError``."""
    errors: list[Exception] = []

    class Capture(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            errors.append(failure.failure())
            return failure

    sub_model = ScriptedModel(["unused"])
    model = ScriptedModel([calling(ToolCall("c1", "researcher", args)), "done"])
    agent = Agent("assistant", model, sub_agents=[Agent("researcher", sub_model)])
    with Runner(agent) as runner:
        result = drive(runner, mode, "go", callbacks=[Capture()])
    assert [type(error) for error in errors] == [ToolArgumentsError]
    assert sub_model.requests == []
    assert events_of(result, ToolResultEvent)[0].result.is_error


def test_sub_agent_model_error_fails_the_whole_run(mode: Mode) -> None:
    """A sub-agent's unrecovered model error fails the run; parent tool hooks can't hide it."""

    class Outage(Exception):
        pass

    seen: list[Exception] = []

    class Swallow(OnToolError, AfterTool):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            seen.append(failure.failure())
            return Fallback(ToolResult("hidden"))

        def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Result[ToolResult, Exception]:
            return outcome

    researcher = Agent("researcher", ScriptedModel([Outage("down")]))
    model = ScriptedModel([ask("researcher", "look"), "unreached"])
    with (
        Runner(Agent("assistant", model, sub_agents=[researcher])) as runner,
        pytest.raises(Outage, match="down"),
    ):
        drive(runner, mode, "go", callbacks=[Swallow()])
    assert seen == []
    assert len(model.requests) == 1


def test_callback_error_inside_a_sub_agent_is_never_swallowed(mode: Mode) -> None:
    """A callback raising inside a sub-agent propagates from run() with its type and note."""

    class Broken(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            raise KeyError("broken")

    class Recover(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            return Fallback(ToolResult("hidden"))

    researcher = Agent("researcher", ScriptedModel(["unreached"]), callbacks=[Broken()])
    model = ScriptedModel([ask("researcher", "look"), "unreached"])
    with (
        Runner(Agent("assistant", model, sub_agents=[researcher])) as runner,
        pytest.raises(KeyError) as raised,
    ):
        drive(runner, mode, "go", callbacks=[Recover()])
    assert any("before_model" in note for note in raised.value.__notes__)


def test_callback_error_is_not_offered_to_after_agent(mode: Mode) -> None:
    """An exception a callback raises skips ``after_agent``, which could otherwise swallow it."""
    offered: list[object] = []

    class Broken(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            raise ValueError("guard bug")

    class Rescue(AfterAgent):
        def after_agent(
            self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
        ) -> Result[ModelResponse, Exception]:
            offered.append(outcome)
            return Success(ModelResponse(text="all fine"))

    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "unreached"])
    with (
        Runner(Agent("assistant", model, tools=[add])) as runner,
        pytest.raises(ValueError, match="guard bug"),
    ):
        drive(runner, mode, "go", callbacks=[Broken(), Rescue()])
    assert offered == []


def test_stop_between_call_and_result_saves_an_answerable_session(mode: Mode) -> None:
    """A run stopped before a tool's result saves the session without the unanswered call."""

    class Stop(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            raise StopRun("enough")

    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "second answer"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        first = drive(runner, mode, "first", session_id="s", callbacks=[Stop()])
        second = drive(runner, mode, "second", session_id="s", callbacks=[])
    assert first.status == "stopped"
    assert second.output == "second answer"
    sent = model.requests[-1].messages
    assert [(m.role, m.content) for m in sent] == [("user", "first"), ("user", "second")]


def test_stop_run_inside_a_sub_agent_stops_the_whole_run(mode: Mode) -> None:
    """A ``StopRun`` raised by a callback of a sub-agent ends the run, stopped."""

    class Guard(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            if ctx.invocation.agent == "researcher":
                raise StopRun("no research today")
            return Cont(ctx)

    model = ScriptedModel([ask("researcher", "look"), "unreached"])
    researcher = Agent("researcher", ScriptedModel(["unreached"]))
    with Runner(Agent("assistant", model, sub_agents=[researcher])) as runner:
        result = drive(runner, mode, "go", callbacks=[Guard()])
    assert (result.status, result.stop_reason) == ("stopped", "no research today")
    assert isinstance(result.events[-1], StopEvent)
    assert len(model.requests) == 1


def test_program_errors_inside_a_sub_agent_end_the_run(mode: Mode) -> None:
    """An ``InvalidResult`` in a sub-agent is raised from ``run``, not made a tool result."""

    class Bad(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            return None  # type: ignore[return-value]

    errors: list[Exception] = []

    class Capture(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            errors.append(failure.failure())
            return failure

    bad = Bad()
    researcher = Agent("researcher", ScriptedModel(["unused"]), callbacks=[bad])
    model = ScriptedModel([ask("researcher", "look"), "unreached"])
    with (
        Runner(Agent("assistant", model, sub_agents=[researcher])) as runner,
        pytest.raises(InvalidResult) as info,
    ):
        drive(runner, mode, "go", callbacks=[Capture()])
    assert (info.value.callback, info.value.point) == (bad, "before_model")
    assert errors == []


def test_max_steps_counts_the_turns_of_sub_agents_too(mode: Mode) -> None:
    """Model turns of sub-agents count against the run's ``max_steps``."""
    researcher = Agent("researcher", ScriptedModel(["one", "two"]))
    model = ScriptedModel([ask("researcher", "a", "c1"), ask("researcher", "b", "c2"), "unreached"])
    agent = Agent("assistant", model, sub_agents=[researcher])
    with Runner(agent, max_steps=3) as runner, pytest.raises(MaxStepsExceeded) as info:
        drive(runner, mode, "go")
    assert info.value.agent == "researcher"
    assert len(model.requests) == 2


# -- callback scope -----------------------------------------------------------------


def test_runner_and_run_callbacks_apply_to_every_agent_before_its_own(mode: Mode) -> None:
    """Runner-level, then run-level, then the agent's own callbacks; own ones stay with it."""
    log: list[tuple[str, str, str, str]] = []
    researcher = Agent(
        "researcher", ScriptedModel(["found"]), callbacks=[Where("researcher's", log)]
    )
    model = ScriptedModel([ask("researcher", "look"), "done"])
    agent = Agent(
        "assistant", model, sub_agents=[researcher], callbacks=[Where("assistant's", log)]
    )
    with Runner(agent, callbacks=[Where("runner", log)]) as runner:
        drive(runner, mode, "go", callbacks=[Where("run", log)])
    assert [(name, point, agent) for name, point, agent, _ in log] == [
        ("runner", "before_agent", "assistant"),
        ("run", "before_agent", "assistant"),
        ("assistant's", "before_agent", "assistant"),
        ("runner", "before_model", "assistant"),
        ("run", "before_model", "assistant"),
        ("assistant's", "before_model", "assistant"),
        ("runner", "before_tool", "assistant"),
        ("run", "before_tool", "assistant"),
        ("assistant's", "before_tool", "assistant"),
        ("runner", "before_agent", "researcher"),
        ("run", "before_agent", "researcher"),
        ("researcher's", "before_agent", "researcher"),
        ("runner", "before_model", "researcher"),
        ("run", "before_model", "researcher"),
        ("researcher's", "before_model", "researcher"),
        ("runner", "before_model", "assistant"),
        ("run", "before_model", "assistant"),
        ("assistant's", "before_model", "assistant"),
    ]


def test_run_callbacks_apply_to_that_run_only(mode: Mode) -> None:
    """Callbacks given to ``run`` are gone in the next run; the runner's stay."""
    log: list[tuple[str, str, str, str]] = []
    agent = Agent("assistant", ScriptedModel(default="ok"))
    with Runner(agent, callbacks=[Where("runner", log)]) as runner:
        drive(runner, mode, "one", callbacks=[Where("run", log)])
        log.clear()
        drive(runner, mode, "two")
    assert [name for name, *_ in log] == ["runner", "runner"]


# -- invocation and state -----------------------------------------------------------


class Invocations(BeforeAgent, BeforeModel, BeforeTool, AfterTool):
    """Records the invocation of every context it sees."""

    def __init__(self) -> None:
        self.seen: list[Invocation] = []
        self.call_ids: list[str] = []

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Record and go on."""
        self.seen.append(ctx.invocation)
        return Cont(ctx)

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Record and go on."""
        self.seen.append(ctx.invocation)
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Record the invocation and the call id, and go on."""
        self.seen.append(ctx.invocation)
        self.call_ids.append(ctx.call.id)
        return Cont(ctx)

    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """Record and pass on."""
        self.seen.append(ctx.invocation)
        return outcome


def test_invocation_records_the_run(mode: Mode) -> None:
    """Every context of one run carries the run's id, user, session, agent and branch."""
    seen = Invocations()
    researcher = Agent("researcher", ScriptedModel(default="found"))
    model = ScriptedModel([ask("researcher", "look"), "done", ask("researcher", "again"), "done"])
    with Runner(Agent("assistant", model, sub_agents=[researcher])) as runner:
        first = drive(runner, mode, "go", user_id="u1", session_id="s1", callbacks=[seen])
        first_ids = {invocation.id for invocation in seen.seen}
        seen.seen.clear()
        drive(runner, mode, "again", user_id="u1", session_id="s1", callbacks=[seen])
    assert len(first_ids) == 1
    assert {invocation.id for invocation in seen.seen}.isdisjoint(first_ids)
    assert first.session_id == "s1"
    assert {(i.user_id, i.session_id) for i in seen.seen} == {("u1", "s1")}
    assert {(i.agent, i.branch) for i in seen.seen} == {
        ("assistant", "assistant"),
        ("researcher", "assistant/researcher"),
    }


def test_tool_contexts_carry_the_models_call_ids(mode: Mode) -> None:
    """``ToolContext.call.id`` is the id the model gave the call, also on its tool message."""
    seen = Invocations()
    model = ScriptedModel(
        [
            calling(
                ToolCall("id-a", "add", {"a": 1, "b": 2}), ToolCall("id-b", "add", {"a": 3, "b": 4})
            ),
            "done",
        ]
    )
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        drive(runner, mode, "go", callbacks=[seen])
    assert sorted(seen.call_ids) == ["id-a", "id-b"]
    assert [m.tool_call_id for m in tool_messages(model.requests[1])] == ["id-a", "id-b"]


USER: StateKey[str] = StateKey("user")
TOOL_CALLS: StateKey[int] = StateKey("tool_calls")


def test_state_is_shared_by_the_callbacks_of_one_run_and_fresh_per_run(mode: Mode) -> None:
    """before_tool and a sub-agent's callbacks read what before_agent stored; runs start empty."""
    seen: list[tuple[str, object, object]] = []

    class Remember(BeforeAgent, BeforeModel, BeforeTool):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            state = ctx.invocation.state
            user = state.get(USER)
            seen.append(("before_agent", user, ctx.invocation.agent))
            if ctx.invocation.agent == "assistant":
                state.set(USER, ctx.message.content)
            return Cont(ctx)

        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            seen.append(("before_model", ctx.invocation.state.get("user"), ctx.invocation.agent))
            return Cont(ctx)

        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            state = ctx.invocation.state
            calls = state.get(TOOL_CALLS, 0) + 1
            state.set(TOOL_CALLS, calls)
            user = state.get(USER)
            seen.append(("before_tool", user, calls))
            return Cont(ctx)

    researcher = Agent("researcher", ScriptedModel(default="found"))
    model = ScriptedModel(
        [ask("researcher", "look"), "one", calling(ToolCall("c2", "add", {"a": 1, "b": 1})), "two"]
    )
    agent = Agent("assistant", model, tools=[add], sub_agents=[researcher])
    with Runner(agent, callbacks=[Remember()]) as runner:
        drive(runner, mode, "ada")
        first = list(seen)
        seen.clear()
        drive(runner, mode, "bob")
    assert first == [
        ("before_agent", None, "assistant"),
        ("before_model", "ada", "assistant"),
        ("before_tool", "ada", 1),
        ("before_agent", "ada", "researcher"),
        ("before_model", "ada", "researcher"),
        ("before_model", "ada", "assistant"),
    ]
    assert seen[0] == ("before_agent", None, "assistant")
    assert ("before_tool", "bob", 1) in seen


# -- sessions and results -----------------------------------------------------------


def test_same_session_continues_the_conversation(mode: Mode) -> None:
    """A second run with the same user and session sends the first run's messages first."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 2, "b": 2})), "four", "yes"])
    with Runner(Agent("assistant", model, tools=[add], instruction="Be terse.")) as runner:
        drive(runner, mode, "2+2?", user_id="u", session_id="s")
        drive(runner, mode, "sure?", user_id="u", session_id="s")
    assert model.requests[2].messages == (
        Message("system", "Be terse."),
        Message("user", "2+2?"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "add", {"a": 2, "b": 2}),)),
        Message("tool", "4", tool_call_id="c1", name="add"),
        Message("assistant", "four"),
        Message("user", "sure?"),
    )


def test_session_none_starts_fresh_and_reports_its_id(mode: Mode) -> None:
    """``session_id=None`` starts a new session whose id, from the result, continues it."""
    model = ScriptedModel(default="ok")
    with Runner(Agent("assistant", model)) as runner:
        first = drive(runner, mode, "one")
        second = drive(runner, mode, "two")
        drive(runner, mode, "three", session_id=first.session_id)
    assert first.session_id
    assert second.session_id
    assert first.session_id != second.session_id
    assert model.requests[1].messages == (Message("user", "two"),)
    assert [m.content for m in model.requests[2].messages] == ["one", "ok", "three"]


def test_sessions_are_kept_per_user(mode: Mode) -> None:
    """The same session id under another user is another conversation."""
    model = ScriptedModel(default="ok")
    with Runner(Agent("assistant", model)) as runner:
        drive(runner, mode, "from ann", user_id="ann", session_id="s")
        drive(runner, mode, "from bob", user_id="bob", session_id="s")
    assert model.requests[1].messages == (Message("user", "from bob"),)


def test_runs_use_the_given_session_store(mode: Mode) -> None:
    """A custom ``SessionStore`` is loaded before and saved after each run, and never cleared."""

    class Store(LeasesAndPauses):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, str, str, int]] = []
            self.data: dict[tuple[str, str], list[Message]] = {
                ("u", "s"): [Message("user", "earlier"), Message("assistant", "noted")]
            }

        def load(self, user_id: str, session_id: str, /) -> Session:
            self.calls.append(("load", user_id, session_id, 0))
            return Session(list(self.data.get((user_id, session_id), [])), 1)

        def save(
            self,
            user_id: str,
            session_id: str,
            messages: Sequence[Message],
            /,
            *,
            version: int,
            state: Mapping[str, Any] | None = None,
        ) -> int:
            self.calls.append(("save", user_id, session_id, len(messages)))
            self.data[user_id, session_id] = list(messages)
            return version + 1

        def delete(self, user_id: str, session_id: str, /) -> None:
            self.data.pop((user_id, session_id), None)

    store = Store()
    model = ScriptedModel(["ok"])
    with Runner(Agent("assistant", model), sessions=store) as runner:
        drive(runner, mode, "now", user_id="u", session_id="s")
    assert store.calls == [("load", "u", "s", 0), ("save", "u", "s", 4)]
    assert [m.content for m in model.requests[0].messages] == ["earlier", "noted", "now"]
    assert len(store.data["u", "s"]) == 4


def test_run_result_fields(mode: Mode) -> None:
    """A completed run reports its output, status, events, session and final response."""
    before = time.time()
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2}), text="adding"), "3"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, Message("user", "1+2"), session_id="s")
    after = time.time()
    assert isinstance(result, RunResult)
    assert (result.output, result.status, result.stop_reason) == ("3", "completed", None)
    assert result.session_id == "s"
    assert result.response == ModelResponse("3")
    assert [type(event) for event in result.events] == [
        UserMessageEvent,
        ModelAttemptEvent,
        ModelResponseEvent,
        ToolCallEvent,
        ToolAttemptEvent,
        ToolResultEvent,
        ModelAttemptEvent,
        ModelResponseEvent,
    ]
    assert result.run_id
    assert dict(result.state) == {}
    assert all(event.agent == event.branch == "assistant" for event in result.events)
    times = [event.time for event in result.events]
    assert before <= times[0] <= times[-1] <= after
    assert times == sorted(times)
    assert events_of(result, UserMessageEvent)[0].message == Message("user", "1+2")
    assert events_of(result, ToolCallEvent)[0].call == ToolCall("c1", "add", {"a": 1, "b": 2})
    assert events_of(result, ModelResponseEvent)[0].response.text == "adding"


# -- concurrency --------------------------------------------------------------------


def two_calls(first: str, second: str) -> ModelResponse:
    """A response calling tools ``first`` and ``second`` (ids ``a`` and ``b``)."""
    return calling(ToolCall("a", first), ToolCall("b", second))


def test_every_call_of_a_two_call_response_starts_before_either_ends_in_run_async() -> None:
    """Two calls of one response overlap at once: the second starts before the first ends."""
    log: list[str] = []

    async def first() -> str:
        """Start, yield once, end."""
        log.append("first starts")
        await asyncio.sleep(0)
        log.append("first ends")
        return "1"

    async def second() -> str:
        """Start, yield once, end."""
        log.append("second starts")
        await asyncio.sleep(0)
        log.append("second ends")
        return "2"

    model = ScriptedModel([two_calls("first", "second"), "done"])
    with Runner(Agent("assistant", model, tools=[first, second])) as runner:
        asyncio.run(runner.arun("go"))
    assert log.index("second starts") < log.index("first ends")


def test_async_tool_calls_of_one_response_run_concurrently() -> None:
    """In ``arun`` two async tools of one response meet at a barrier: they overlap."""
    barrier = asyncio.Barrier(2)

    async def left() -> str:
        """Wait for ``right``."""
        await asyncio.wait_for(barrier.wait(), timeout=5)
        return "left met right"

    async def right() -> str:
        """Wait for ``left``."""
        await asyncio.wait_for(barrier.wait(), timeout=5)
        return "right met left"

    model = ScriptedModel([two_calls("left", "right"), "done"])
    with Runner(Agent("assistant", model, tools=[left, right])) as runner:
        result = asyncio.run(runner.arun("go"))
    assert [event.result for event in events_of(result, ToolResultEvent)] == [
        ToolResult("left met right"),
        ToolResult("right met left"),
    ]


def test_sync_tools_of_one_response_run_concurrently_in_run_async() -> None:
    """In ``arun`` sync tools of one response run in threads, at the same time."""
    barrier = threading.Barrier(2, timeout=5)

    def left() -> str:
        """Wait for ``right``."""
        barrier.wait()
        return "left"

    def right() -> str:
        """Wait for ``left``."""
        barrier.wait()
        return "right"

    model = ScriptedModel([two_calls("left", "right"), "done"])
    with Runner(Agent("assistant", model, tools=[left, right])) as runner:
        result = asyncio.run(runner.arun("go"))
    assert [event.result for event in events_of(result, ToolResultEvent)] == [
        ToolResult("left"),
        ToolResult("right"),
    ]


def test_concurrent_results_and_events_keep_the_models_order() -> None:
    """When the second call finishes first, results and events still follow the model's order."""
    fast_done = asyncio.Event()
    finished: list[str] = []

    async def slow() -> str:
        """Finish after ``fast``."""
        await asyncio.wait_for(fast_done.wait(), timeout=5)
        finished.append("slow")
        return "slow result"

    async def fast() -> str:
        """Finish at once."""
        finished.append("fast")
        fast_done.set()
        return "fast result"

    model = ScriptedModel([two_calls("slow", "fast"), "done"])
    with Runner(Agent("assistant", model, tools=[slow, fast])) as runner:
        result = asyncio.run(runner.arun("go"))
    assert finished == ["fast", "slow"]
    assert [(m.tool_call_id, m.content) for m in tool_messages(model.requests[1])] == [
        ("a", "slow result"),
        ("b", "fast result"),
    ]
    assert [
        (type(event).__name__, event.call.id)
        for event in result.events
        if isinstance(event, ToolCallEvent | ToolResultEvent)
    ] == [
        ("ToolCallEvent", "a"),
        ("ToolResultEvent", "a"),
        ("ToolCallEvent", "b"),
        ("ToolResultEvent", "b"),
    ]


def test_a_stream_shows_the_events_of_concurrent_calls_as_the_record_keeps_them() -> None:
    """Events of concurrent calls are streamed as they happen; the record keeps each call's."""

    async def one() -> str:
        """One, after yielding to the loop."""
        await asyncio.sleep(0)
        return "1"

    async def main(runner: Runner) -> list[object]:
        return [event async for event in runner.stream("go")]

    model = ScriptedModel([two_calls("one", "one"), "done"])
    with Runner(Agent("assistant", model, tools=[one])) as runner:
        events = asyncio.run(main(runner))
    finish = events[-1]
    assert isinstance(finish, RunFinishedEvent)
    tool_events = (ToolCallEvent, ToolAttemptEvent, ToolResultEvent)
    shown = [e for e in events if isinstance(e, tool_events)]
    kept = [e for e in finish.result.events if isinstance(e, tool_events)]
    assert len(shown) == len(kept) == 6  # a call, an attempt and a result per call
    assert {id(e) for e in shown} == {id(e) for e in kept}


def test_concurrent_calls_each_get_their_own_context() -> None:
    """Concurrent calls each run their own hooks with their own call and attempt."""
    seen: list[tuple[str, int]] = []

    class Record(BeforeTool, AfterTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            seen.append((f"before {ctx.call.id}", ctx.attempt))
            return Cont(ctx)

        def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Result[ToolResult, Exception]:
            seen.append((f"after {ctx.call.id}", ctx.attempt))
            return outcome

    async def one() -> str:
        """One."""
        await asyncio.sleep(0)
        return "1"

    model = ScriptedModel([calling(ToolCall("a", "one"), ToolCall("b", "one")), "done"])
    with Runner(Agent("assistant", model, tools=[one])) as runner:
        asyncio.run(runner.arun("go", callbacks=[Record()]))
    assert sorted(seen) == [("after a", 1), ("after b", 1), ("before a", 1), ("before b", 1)]
    assert seen.index(("before b", 1)) < seen.index(("after a", 1))  # overlapping


def test_stop_run_during_concurrent_calls_ends_the_run() -> None:
    """A ``StopRun`` in one concurrent call ends the run without waiting for the others."""

    class Guard(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            if ctx.call.name == "forbidden":
                raise StopRun("forbidden tool")
            return Cont(ctx)

    cancelled: list[str] = []

    async def forever() -> str:
        """Wait far longer than the test, unless cancelled."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append("forever")
            raise
        return "late"

    def forbidden() -> str:
        """Never runs."""
        return "ran"

    model = ScriptedModel([two_calls("forever", "forbidden"), "unreached"])
    with Runner(Agent("assistant", model, tools=[forever, forbidden])) as runner:
        result = asyncio.run(runner.arun("go", callbacks=[Guard()]))
    assert cancelled == ["forever"]  # the run did not wait for it: it was cancelled
    assert (result.status, result.stop_reason) == ("stopped", "forbidden tool")
    assert events_of(result, ToolResultEvent) == []
    assert isinstance(result.events[-1], StopEvent)
    assert len(model.requests) == 1


def test_sync_run_runs_tool_calls_one_after_another() -> None:
    """In ``run`` the calls of one response run sequentially, in the model's order."""
    order: list[str] = []

    def left() -> str:
        """Record start and end."""
        order.append("left start")
        order.append("left end")
        return "left"

    def right() -> str:
        """Record start and end."""
        order.append("right start")
        order.append("right end")
        return "right"

    model = ScriptedModel([two_calls("left", "right"), "done"])
    with Runner(Agent("assistant", model, tools=[left, right])) as runner:
        result = runner.run("go")
    assert order == ["left start", "left end", "right start", "right end"]
    assert [m.content for m in tool_messages(model.requests[1])] == ["left", "right"]
    assert [event.call.id for event in events_of(result, ToolResultEvent)] == ["a", "b"]


def test_concurrent_sub_agents_record_their_events_under_their_call() -> None:
    """Two sub-agent calls of one response keep their events grouped in the model's order."""
    first = Agent("first", ScriptedModel(["one"]))
    second = Agent("second", ScriptedModel(["two"]))
    model = ScriptedModel(
        [
            calling(ask("first", "x", "a").tool_calls[0], ask("second", "y", "b").tool_calls[0]),
            "done",
        ]
    )
    with Runner(Agent("assistant", model, sub_agents=[first, second])) as runner:
        result = asyncio.run(runner.arun("go"))
    assert [event.branch for event in result.events] == [
        *["assistant"] * 3,  # the user's message, the model's attempt and its response
        *["assistant"] * 2,  # the first call, its attempt
        *["assistant/first"] * 3,
        "assistant",  # the first call's result
        *["assistant"] * 2,
        *["assistant/second"] * 3,
        "assistant",
        *["assistant"] * 2,  # the last model attempt and answer
    ]
    assert [m.content for m in tool_messages(model.requests[1])] == ["one", "two"]


def test_two_runs_on_one_session_at_once_are_refused() -> None:
    """A second run on a session that has a run under way fails fast instead of losing a turn."""
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow() -> str:
        """Hold the first run until the second one was tried."""
        started.set()
        await asyncio.wait_for(release.wait(), timeout=5)
        return "slow done"

    model = ScriptedModel(
        rules=[Rule("one", tool="slow"), Rule(".*", on="tool", reply="ok")], default="ok"
    )

    async def both(runner: Runner) -> tuple[str, str]:
        first = asyncio.ensure_future(runner.arun("one", session_id="s"))
        await asyncio.wait_for(started.wait(), timeout=5)
        refused = (
            r"^session 's' of user 'user' already has a run under way on this runner; "
            r"a session takes one run at a time$"
        )
        with pytest.raises(RuntimeError, match=refused):
            await runner.arun("two", session_id="s")
        other = await runner.arun("three", session_id="other")
        release.set()
        return (await first).output, other.output

    with Runner(Agent("assistant", model, tools=[slow])) as runner:
        assert asyncio.run(both(runner)) == ("ok", "ok")
        assert asyncio.run(runner.arun("four", session_id="s")).output == "ok"


def test_a_single_sync_tool_call_does_not_block_the_event_loop() -> None:
    """In ``arun`` even one sync tool call runs in a thread, so the loop stays free."""
    loop_threads: list[bool] = []

    def where() -> str:
        """Record whether the tool runs on the event loop's thread."""
        loop_threads.append(threading.current_thread() is threading.main_thread())
        return "here"

    model = ScriptedModel(
        rules=[Rule("go", tool="where"), Rule(".*", on="tool", reply="{content}")]
    )
    with Runner(Agent("assistant", model, tools=[where])) as runner:
        assert asyncio.run(runner.arun("go")).output == "here"
        assert runner.run("go").output == "here"
    assert loop_threads == [False, True]


def test_a_session_store_keeps_its_own_list() -> None:
    """The runner never appends to the list a store's ``load`` returned."""

    class Store(LeasesAndPauses):
        def __init__(self) -> None:
            super().__init__()
            self.kept: list[Message] = []

        def load(self, user_id: str, session_id: str, /) -> Session:
            return Session(self.kept, 0)

        def save(
            self,
            user_id: str,
            session_id: str,
            messages: Sequence[Message],
            /,
            *,
            version: int,
            state: Mapping[str, Any] | None = None,
        ) -> int:
            self.kept = list(messages)
            return version + 1

        def delete(self, user_id: str, session_id: str, /) -> None:
            self.kept = []

    store = Store()
    model = ScriptedModel([RuntimeError("model down")])
    with Runner(Agent("assistant", model), sessions=store) as runner, pytest.raises(RuntimeError):
        runner.run("hello", session_id="s")
    assert store.kept == []


class AsyncPassThrough:
    """An async tool wrap that calls on and keeps each outcome it got back."""

    def __init__(self) -> None:
        self.outcomes: list[object] = []

    async def wrap_tool(self, ctx: ToolContext, call_next: Any, /) -> Any:
        """Call on."""
        outcome = await call_next(ctx)
        self.outcomes.append(outcome)
        return outcome


def test_a_sub_agents_failure_passes_async_wraps_as_itself() -> None:
    """In ``arun`` a sub-agent's unrecovered model error fails the run past async wraps."""
    error = ConnectionError("sub model down")
    sub = Agent("helper", ScriptedModel([error]))
    model = ScriptedModel([calling(ToolCall("c1", "helper", {"request": "x"})), "unreached"])
    wrap = AsyncPassThrough()
    agent = Agent("assistant", model, sub_agents=[sub])
    with (
        Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner,
        pytest.raises(ConnectionError) as caught,
    ):
        asyncio.run(runner.arun("go", callbacks=[wrap]))
    assert caught.value is error
    assert wrap.outcomes == []
