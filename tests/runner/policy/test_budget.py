"""``Budget``: a run's tokens, dollars, tool calls and model calls, reserved before each
call and settled after it, shared by sub-agents and carried across a pause."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from hooks import (
    AfterModel,
    AgentContext,
    Approve,
    AsyncWrapModel,
    BeforeAgent,
    BeforeModel,
    BeforeResult,
    Cont,
    ErrorResult,
    Fallback,
    Halt,
    HookEvent,
    OnModelError,
    Outcome,
    Reject,
    Result,
    Retry,
    WrapModel,
    observing,
)
from hooks._policies.estimate import Sizes, calls_size, estimate_tokens
from runner import (
    Agent,
    Budget,
    LoopGuard,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    RequireApproval,
    RetryPolicy,
    RunFinishedEvent,
    Runner,
    RunResult,
    RunState,
    ScriptedModel,
    StopEvent,
    ToolCall,
    ToolContext,
    ToolResultEvent,
    ToolSpec,
    Usage,
)
from tests.helpers.runs import Mode, calling, drive

KEY = "hookline.budget"
FIELDS = ("tokens", "tokens_held", "usd", "usd_held", "model_calls", "tool_calls", "refused")


def lookup(q: str) -> str:
    """Look something up."""
    return f"nothing on {q}"


def ask(n: int, usage: Usage | None = None) -> ModelResponse:
    """A response calling ``lookup`` once, with argument ``str(n)``."""
    return ModelResponse(tool_calls=(ToolCall(f"c{n}", "lookup", {"q": str(n)}),), usage=usage)


def run(
    mode: Mode,
    script: list[ModelResponse | str | BaseException],
    callbacks: list[object],
    *,
    retry: RetryPolicy | None = None,
) -> tuple[RunResult, ScriptedModel]:
    """One run of an agent with ``lookup`` answering from ``script``."""
    model = ScriptedModel(script)
    agent = Agent("a", model, tools=[lookup])
    with Runner(agent, retry=retry or RetryPolicy()) as runner:
        return drive(runner, mode, "go", callbacks=callbacks), model


def spent(result: RunResult) -> Mapping[str, int]:
    """The budget's entry in the run's state."""
    entry: Mapping[str, int] = result.state.data[KEY]
    return entry


def tool_results(result: RunResult) -> list[str]:
    """The content of each tool result of the run, in order."""
    return [event.result.content for event in result.events if isinstance(event, ToolResultEvent)]


USED = Usage(input_tokens=30, output_tokens=20)


def test_a_tool_call_beyond_the_limit_is_halted_with_a_result_the_model_reads(
    mode: Mode,
) -> None:
    """Two calls run; the third is answered with an error saying the budget is spent; the
    refusal is counted."""
    result, model = run(mode, [ask(1), ask(2), ask(3), "done"], [Budget(tool_calls=2)])
    assert result.status == "completed"
    got = tool_results(result)
    assert got[:2] == ["nothing on 1", "nothing on 2"]
    assert got[2].startswith("the run's budget of 2 tool call(s) is spent: lookup was not called")
    assert model.requests[3].messages[-1].is_error
    assert spent(result)["tool_calls"] == 2
    assert spent(result)["refused"] == 1


def test_a_model_call_beyond_the_limit_stops_the_run_and_says_why(mode: Mode) -> None:
    """The third model call is never made: the run is stopped, with a reason and an event."""
    result, model = run(mode, [ask(1), ask(2), ask(3), "done"], [Budget(model_calls=2)])
    assert result.status == "stopped"
    assert result.stop_reason == "Budget refused a model call: the run's 2 model call(s) are made"
    assert len(model.requests) == 2
    assert isinstance(result.events[-1], StopEvent)
    assert spent(result)["model_calls"] == 2
    assert spent(result)["refused"] == 1


def test_tokens_are_reserved_before_a_call_and_settled_on_its_usage(mode: Mode) -> None:
    """Each call holds its input's estimate and max_tokens; what it used is what is spent,
    and a call whose reservation does not fit in what is left is never made."""
    budget = Budget(tokens=300, max_tokens=100)
    result, model = run(mode, [ask(1, USED), ask(2, USED), ask(3, USED), "done"], [budget])
    # 50 tokens a call; every request's estimate is under 100, so a call holds < 200.
    estimates = [estimate_tokens(request) for request in model.requests]
    assert all(estimate < 100 for estimate in estimates)
    assert result.status == "stopped"
    made = len(model.requests)
    assert spent(result)["tokens"] == 50 * made
    assert spent(result)["tokens_held"] == 0
    left = 300 - 50 * made
    assert result.stop_reason is not None
    assert f"and {left} of 300 are left" in result.stop_reason
    assert budget.spent(result.state.data) == {
        "tokens": 50 * made,
        "usd": 0.0,
        "model_calls": made,
        "tool_calls": made,
        "refused": 1,
    }


def test_a_response_without_usage_costs_its_reservation(mode: Mode) -> None:
    """A model that says nothing of its usage is charged the most it may have used."""
    result, model = run(mode, ["hello"], [Budget(tokens=10_000, max_tokens=50)])
    assert result.status == "completed"
    assert spent(result)["tokens"] == estimate_tokens(model.requests[0]) + 50


PRICES = {"gpt-4o": (2.50, 10.00), "gpt-4o-mini": (0.15, 0.60), "*": (1.00, 1.00)}


@pytest.mark.parametrize(
    ("name", "usd"),
    [
        ("gpt-4o", 1_000_000 * 2.50 / 1e6 + 1_000 * 10.00 / 1e6),
        ("gpt-4o-2024-08-06", 1_000_000 * 2.50 / 1e6 + 1_000 * 10.00 / 1e6),
        ("gpt-4o-mini-2024-07-18", 1_000_000 * 0.15 / 1e6 + 1_000 * 0.60 / 1e6),
        ("o3", 1_000_000 * 1.00 / 1e6 + 1_000 * 1.00 / 1e6),
        (None, 1_000_000 * 1.00 / 1e6 + 1_000 * 1.00 / 1e6),
    ],
)
def test_a_response_is_priced_by_the_model_that_answered(name: str | None, usd: float) -> None:
    """Its own name, else the longest priced name its dated name starts with, else ``*``;
    cached input is priced as input."""
    answer = ModelResponse("ok", usage=Usage(1_000_000, 1_000, cached_tokens=500_000), model=name)
    budget = Budget(usd=100.0, prices=PRICES, max_tokens=1_000)
    result, _ = run("sync", [answer], [budget])
    assert result.status == "completed"
    assert budget.spent(result.state.data)["usd"] == pytest.approx(usd, abs=1e-12)


def test_a_model_without_a_price_stops_the_run_at_its_first_answer(mode: Mode) -> None:
    """No name, stem or ``*`` prices it: the run stops naming the model and the prices."""
    budget = Budget(usd=1.0, prices={"gpt-4o": (2.5, 10.0), "o3": (2.0, 8.0)})
    answer = ModelResponse("ok", usage=USED, model="claude-sonnet-4-5")
    result, _ = run(mode, [answer], [budget])
    assert result.status == "stopped"
    assert result.stop_reason == (
        "Budget has no price for model 'claude-sonnet-4-5' (prices has 'gpt-4o', 'o3'); "
        "add it, or a '*' price for any other model"
    )


def test_a_dollar_limit_refuses_a_call_its_reservation_would_overrun(mode: Mode) -> None:
    """A reservation is priced at the highest prices: 1000 output tokens at $10/M is $0.01."""
    budget = Budget(usd=0.015, prices={"a": (1.0, 10.0)}, max_tokens=1_000)
    used = Usage(input_tokens=100, output_tokens=1_000)
    result, model = run(mode, [ask(1, used), ask(2, used), "done"], [budget])
    assert len(model.requests) == 1  # $0.0101 spent: a second call may cost more than is left
    assert result.status == "stopped"
    assert result.stop_reason is not None
    assert "Budget refused a model call: it may cost $0.010" in result.stop_reason
    assert "$0.004900 of $0.015 is left" in result.stop_reason
    assert budget.spent(result.state.data)["usd"] == pytest.approx(0.0101)


class HaltModel(BeforeModel):
    """Answers every model call itself."""

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Halt with a canned answer."""
        return Halt(ModelResponse("canned"))


class Stop(BeforeModel):
    """Raises at every model call."""

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Raise."""
        raise RuntimeError("no")


def test_a_model_call_a_later_callback_halts_costs_nothing(mode: Mode) -> None:
    """Budget reserved it; the halt gives it all back: no token, no model call."""
    budget = Budget(tokens=10_000, model_calls=1)
    result, model = run(mode, ["unused"], [budget, HaltModel()])
    assert result.output == "canned"
    assert model.requests == []
    assert spent(result) == {
        "tokens": 0,
        "tokens_held": 0,
        "usd": 0,
        "usd_held": 0,
        "model_calls": 0,
        "tool_calls": 0,
        "refused": 0,
    }


def held_after(point: str, seen: list[Mapping[str, int]]) -> object:
    """An observer, put after Budget, that keeps the budget's entry after each ``point``."""

    def look(event: HookEvent) -> None:
        context = event.context
        if event.point == point and isinstance(context, ModelContext):
            seen.append(context.invocation.state.get(KEY))

    return observing(look)


def test_a_model_call_a_later_callback_raises_at_costs_nothing(mode: Mode) -> None:
    """The error propagates; what Budget reserved is given back as the dispatch ends."""
    seen: list[Mapping[str, int]] = []
    callbacks = [Budget(tokens=10_000, model_calls=1), Stop(), held_after("before_model", seen)]
    agent = Agent("a", ScriptedModel(["unused"]))
    with Runner(agent, callbacks=callbacks) as runner, pytest.raises(RuntimeError, match="no"):
        drive(runner, mode, "go")
    [entry] = seen
    assert (entry["tokens_held"], entry["model_calls"]) == (0, 0)


def test_a_tool_call_a_later_guard_halts_is_not_counted(mode: Mode) -> None:
    """LoopGuard halts the repeated call after Budget counted it: the count is given back."""
    script: list[ModelResponse | str | BaseException] = [ask(1), ask(1), ask(2), "done"]
    result, _ = run(mode, script, [Budget(tool_calls=2), LoopGuard(2)])
    got = tool_results(result)
    assert got[0] == "nothing on 1"
    assert got[1].startswith("lookup was called 2 times")
    assert got[2] == "nothing on 2"
    assert spent(result)["tool_calls"] == 2


def test_a_paused_call_is_counted_once_when_the_resumed_run_runs_it(mode: Mode) -> None:
    """A call paused after Budget counted it is given back; the RunState's JSON carries the
    count, and the resumed run counts the approved call once."""
    budget = Budget(tool_calls=2)
    model = ScriptedModel([ask(1), ask(2), ask(3), "done"])
    agent = Agent("a", model, tools=[lookup])
    gate = RequireApproval(["lookup"], destructive=False)

    class Once:
        """Pauses the second lookup only."""

        def before_tool(self, ctx: Any, /) -> Any:
            if ctx.call.args == {"q": "2"}:
                return gate.before_tool(ctx)
            return Cont(ctx)

    with Runner(agent) as runner:
        paused = drive(runner, mode, "go", callbacks=[budget, Once()])
        assert paused.status == "paused"
        assert paused.state.data[KEY]["tool_calls"] == 1
        state = RunState.from_json(paused.state.to_json())
        decisions = {request.id: Approve() for request in paused.pending}
        if mode == "sync":
            done = runner.resume(state, decisions, callbacks=[budget, Once()])
        else:
            done = asyncio.run(runner.aresume(state, decisions, callbacks=[budget, Once()]))
    assert done.status == "completed"
    got = tool_results(done)
    assert got[-2] == "nothing on 2"
    assert got[-1].startswith("the run's budget of 2 tool call(s) is spent")
    assert spent(done)["tool_calls"] == 2
    assert spent(done)["refused"] == 1


class FailOnce(OnModelError):
    """Retries a failed model call once; then falls back with an answer of no usage."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry the first failure, fall back on the second."""
        if ctx.attempt == 1:
            return Retry(ctx)
        return Fallback(ModelResponse("fallback"))


def test_a_failed_attempt_costs_nothing_and_a_retry_keeps_the_reservation(mode: Mode) -> None:
    """An error bills nothing; the retried attempt's answer is what is spent, once."""
    budget = Budget(tokens=10_000, model_calls=1)
    result, _ = run(
        mode,
        [RuntimeError("busy"), ModelResponse("ok", usage=USED)],
        [budget, FailOnce()],
        retry=RetryPolicy(max_attempts=2, base_delay=0.0, jitter=0.0),
    )
    assert result.output == "ok"
    assert spent(result)["tokens"] == 50
    assert spent(result)["tokens_held"] == 0
    assert spent(result)["model_calls"] == 1


def test_a_fallback_without_usage_costs_nothing(mode: Mode) -> None:
    """Two failures, then an error hook's own answer: no token was billed."""
    budget = Budget(tokens=10_000)
    result, _ = run(
        mode,
        [RuntimeError("busy"), RuntimeError("busy")],
        [budget, FailOnce()],
        retry=RetryPolicy(max_attempts=2, base_delay=0.0, jitter=0.0),
    )
    assert result.output == "fallback"
    assert spent(result)["tokens"] == 0
    assert spent(result)["tokens_held"] == 0


def test_a_model_error_nobody_recovers_costs_nothing(mode: Mode) -> None:
    """The run fails; the reservation is given back, nothing spent; the call was made."""
    seen: list[Mapping[str, int]] = []
    callbacks = [Budget(tokens=10_000), held_after("after_model", seen)]
    agent = Agent("a", ScriptedModel([RuntimeError("down")]))
    once = RetryPolicy(max_attempts=1)
    with (
        Runner(agent, callbacks=callbacks, retry=once) as runner,
        pytest.raises(RuntimeError, match="down"),
    ):
        drive(runner, mode, "go")
    [entry] = seen
    assert (entry["tokens"], entry["tokens_held"], entry["model_calls"]) == (0, 0, 1)


class Replace(AfterModel):
    """Replaces every answer with one that reports other usage."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Swap the answer."""
        return Success(ModelResponse("replaced", usage=Usage(1, 1)))


def test_an_answer_replaced_before_budget_sees_it_is_settled_as_it_was_billed(
    mode: Mode,
) -> None:
    """Budget after a callback that replaced the response still spends what was billed."""
    result, _ = run(mode, [ModelResponse("ok", usage=USED)], [Replace(), Budget(tokens=10_000)])
    assert result.output == "replaced"
    assert spent(result)["tokens"] == 50


def test_sub_agents_share_the_run_s_budget(mode: Mode) -> None:
    """The sub-agent's tool call and model calls count against the same limits."""
    sub_model = ScriptedModel([ask(2, USED), ModelResponse("found", usage=USED)])
    researcher = Agent("researcher", sub_model, tools=[lookup])
    root = ScriptedModel(
        [
            ask(1, USED),
            calling(ToolCall("r", "researcher", {"request": "dig"})),
            ask(3, USED),
            ModelResponse("done", usage=USED),
        ]
    )
    agent = Agent("a", root, tools=[lookup], sub_agents=[researcher])
    budget = Budget(tool_calls=3, tokens=100_000)
    with Runner(agent) as runner:
        result = drive(runner, mode, "go", callbacks=[budget])
    got = tool_results(result)
    assert got[:3] == ["nothing on 1", "nothing on 2", "found"]  # researcher counts as one
    assert got[3].startswith("the run's budget of 3 tool call(s) is spent")
    assert spent(result)["tool_calls"] == 3
    assert spent(result)["model_calls"] == 6


class Shorten(OnModelError):
    """Retries a failed call once with a request cut to its last message."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry with a changed request, which passes the before hooks again."""
        if ctx.attempt > 1:
            return failure
        request = ModelRequest((*ctx.request.messages, Message("user", "x" * 400)))
        return Retry(replace(ctx, request=request))


def test_a_changed_retry_reserves_again_in_place_of_its_first_reservation(mode: Mode) -> None:
    """The retried request passes Budget again: its reservation replaces the first, and it
    is still one model call."""
    seen: list[Mapping[str, int]] = []
    budget = Budget(tokens=10_000, model_calls=1, max_tokens=100)
    result, model = run(
        mode,
        [RuntimeError("busy"), ModelResponse("ok", usage=USED)],
        [budget, Shorten(), held_after("before_model", seen)],
        retry=RetryPolicy(max_attempts=2, base_delay=0.0, jitter=0.0),
    )
    assert result.output == "ok"
    first, second = seen
    assert first["tokens_held"] == estimate_tokens(model.requests[0]) + 100
    assert second["tokens_held"] == estimate_tokens(model.requests[1]) + 100
    assert second["model_calls"] == 1
    assert (spent(result)["tokens"], spent(result)["tokens_held"]) == (50, 0)


def test_a_call_a_human_rejected_is_not_counted(mode: Mode) -> None:
    """A rejected call does not run: it takes nothing of ``tool_calls``."""
    budget = Budget(tool_calls=1)
    gate = RequireApproval(["lookup"], destructive=False)
    model = ScriptedModel([ask(1), ask(2), "done"])
    with Runner(Agent("a", model, tools=[lookup])) as runner:
        paused = drive(runner, mode, "go", callbacks=[budget, gate])
        [request] = paused.pending
        decisions = {request.id: Reject("no")}
        if mode == "sync":
            done = runner.resume(paused.state, decisions, callbacks=[budget, gate])
        else:
            done = asyncio.run(runner.aresume(paused.state, decisions, callbacks=[budget, gate]))
        assert done.status == "paused"  # the second call asks too: the first took nothing
    assert spent(done)["tool_calls"] == 0


def test_a_streamed_run_spends_and_refuses_as_a_run_does() -> None:
    """``Runner.stream``: the same reservations, the same stop."""
    model = ScriptedModel([ask(1, USED), ask(2, USED), "done"])
    budget = Budget(model_calls=2, tokens=10_000)

    async def events() -> list[object]:
        with Runner(Agent("a", model, tools=[lookup])) as runner:
            return [event async for event in runner.stream("go", callbacks=[budget])]

    finished = asyncio.run(events())[-1]
    assert isinstance(finished, RunFinishedEvent)
    result = finished.result
    assert result.status == "stopped"
    assert budget.spent(result.state.data)["tokens"] == 100


class Raising(WrapModel):
    """A wrap that lets the model answer, then raises."""

    def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Outcome[ModelResponse]],
        /,
    ) -> Outcome[ModelResponse]:
        """Call the model; raise anyway."""
        call_next(ctx)
        raise RuntimeError("wrap broke")


class AsyncRaising(AsyncWrapModel):
    """``Raising`` for async runs."""

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        """Call the model; raise anyway."""
        await call_next(ctx)
        raise RuntimeError("wrap broke")


def test_a_wrap_that_raises_costs_the_reservation(mode: Mode) -> None:
    """Whether the model answered inside is unknown: the call costs what it held."""
    seen: list[Mapping[str, int]] = []
    budget = Budget(tokens=10_000, max_tokens=100)
    model = ScriptedModel([ModelResponse("ok", usage=USED)])
    wrap = Raising() if mode == "sync" else AsyncRaising()
    callbacks = [budget, wrap, held_after("wrap_model", seen)]
    with (
        Runner(Agent("a", model), callbacks=callbacks) as runner,
        pytest.raises(RuntimeError, match="wrap broke"),
    ):
        drive(runner, mode, "go")
    [entry] = seen
    assert entry["tokens"] == estimate_tokens(model.requests[0]) + 100
    assert entry["tokens_held"] == 0


@pytest.mark.parametrize(
    "value", ["spent", {"tokens": 1}, {**dict.fromkeys(FIELDS, 0), "refused": True}]
)
def test_an_entry_that_is_no_budget_s_is_refused_not_reset(mode: Mode, value: object) -> None:
    """Another callback's value under the budget's key stops nothing silently: an error."""

    class Squat(BeforeAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            ctx.invocation.state.set(KEY, value)
            return Cont(ctx)

    callbacks = [Squat(), Budget(tokens=10_000)]
    with (
        Runner(Agent("a", ScriptedModel(["hi"])), callbacks=callbacks) as runner,
        pytest.raises(TypeError, match="which is no Budget's entry: does another callback use"),
    ):
        drive(runner, mode, "go")


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({}, ValueError, "Budget needs a limit"),
        ({"tokens": -1}, ValueError, "tokens must be None or an int >= 0, got -1"),
        ({"tool_calls": 1.5}, ValueError, "tool_calls must be None or an int >= 0"),
        ({"model_calls": True}, ValueError, "model_calls must be None or an int >= 0"),
        ({"tokens": 10, "max_tokens": 0}, ValueError, "max_tokens must be an int >= 1"),
        ({"usd": -0.5, "prices": PRICES}, ValueError, "usd must be a finite number >= 0"),
        ({"usd": float("nan"), "prices": PRICES}, ValueError, "usd must be a finite number"),
        ({"usd": 1.0}, ValueError, "usd= needs prices="),
        ({"tokens": 1, "prices": PRICES}, ValueError, "prices= price the usd= limit"),
        ({"usd": 1.0, "prices": {}}, TypeError, "prices must be a non-empty mapping"),
        ({"usd": 1.0, "prices": {"a": 2.5}}, TypeError, r"price of 'a' must be \(USD"),
        ({"usd": 1.0, "prices": {"a": (1.0, -2.0)}}, ValueError, "price of 'a' must be"),
        ({"usd": 1.0, "prices": {"": (1.0, 2.0)}}, TypeError, "keyed by model name"),
        ({"tokens": 1, "key": ""}, TypeError, "key must be a non-empty str"),
    ],
)
def test_bad_settings_are_refused_when_the_budget_is_made(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    """Negative or non-int limits, no limit at all, a dollar limit without prices, bad prices."""
    with pytest.raises(error, match=words):
        Budget(**kwargs)


def test_a_budget_shows_its_limits() -> None:
    """Its repr names the limits set."""
    assert repr(Budget(tokens=5, tool_calls=2)) == "Budget(tokens=5, tool_calls=2)"
    assert repr(Budget(usd=1.5, prices=PRICES)) == "Budget(usd=1.5)"


def test_the_estimate_counts_text_calls_and_tools_four_characters_a_token() -> None:
    """Messages' text, tool calls' names and JSON arguments, and tools' specs."""
    request = ModelRequest(
        (
            Message("user", "x" * 8),
            Message("assistant", "", tool_calls=(ToolCall("c", "ab", {"k": 1}),)),
        ),
        (ToolSpec("t", "d", {}),),
    )
    assert estimate_tokens(request) == -(-(8 + 2 + len('{"k":1}') + 1 + 1 + 2) // 4)


def test_the_estimate_remembers_sizes_by_identity_and_stays_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Measured with a memory, a request estimates as without; a record is measured once;
    an equal record that is another object is measured anew; a full memory starts over."""
    calls = (ToolCall("c", "ab", {"k": "v" * 40}),)
    request = ModelRequest(
        (Message("user", "hi"), Message("assistant", "", tool_calls=calls)), (ToolSpec("t"),)
    )
    sizes = Sizes()
    measured: list[object] = []

    def counting(message: Message) -> int:
        measured.append(message)
        return calls_size(message)

    assert estimate_tokens(request, sizes) == estimate_tokens(request)
    assert sizes.of(request.messages[1], counting) == calls_size(request.messages[1])
    assert measured == []  # remembered from the estimate
    twin = Message("assistant", "", tool_calls=calls)
    assert sizes.of(twin, counting) == calls_size(twin)
    assert measured == [twin]
    monkeypatch.setattr("hooks._policies.estimate._REMEMBERED", 1)
    other = Message("assistant", "", tool_calls=calls)
    sizes.of(other, counting)  # the memory is full: it starts over, with this one
    sizes.of(request.messages[1], counting)
    assert measured == [twin, other, request.messages[1]]


# -- the law: never over the limit, whatever runs concurrently ------------------------


class Planned:
    """An async model answering from a plan: tool-call batches by turn, then an answer.

    Each answer reports usage within the call's reservation (its input at most the
    request's estimate, its output at most ``max_tokens``); ``billed`` keeps each. The
    calls numbered in ``fails`` raise instead, billing nothing.
    """

    def __init__(
        self,
        batches: list[list[str]],
        usages: list[tuple[int, int]],
        billed: list[Usage],
        max_tokens: int,
        fails: frozenset[int] = frozenset(),
    ) -> None:
        self.batches = batches
        self.usages = usages
        self.billed = billed
        self.max_tokens = max_tokens
        self.fails = fails
        self.calls = 0

    async def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Yield to the loop, then answer the next turn of the plan (or fail)."""
        await asyncio.sleep(0)
        turn = sum(message.role == "assistant" for message in request.messages)
        number = self.calls
        self.calls += 1
        if number in self.fails:
            raise ConnectionError("busy")
        given_in, given_out = self.usages[number % len(self.usages)]
        usage = Usage(min(given_in, estimate_tokens(request)), min(given_out, self.max_tokens))
        self.billed.append(usage)
        await asyncio.sleep(0)
        if turn < len(self.batches):
            calls = tuple(
                ToolCall(
                    f"t{turn}-{n}",
                    name,
                    {"request": f"r{n}"} if name == "helper" else {"q": f"{turn}-{n}"},
                )
                for n, name in enumerate(self.batches[turn])
            )
            return ModelResponse(tool_calls=calls, usage=usage)
        return ModelResponse("done", usage=usage)


class RetryAll(OnModelError):
    """Retries every failed model call while the retry budget lasts."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry."""
        return Retry(ctx, delay=0.0)


batches = st.lists(
    st.lists(st.sampled_from(["lookup", "helper"]), min_size=1, max_size=4), max_size=3
)
usages = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), min_size=1, max_size=5)
# ``tokens`` and ``usd`` in quarters of a call's output bound: a few calls' worth.
limits = st.fixed_dictionaries(
    {
        "tokens": st.none() | st.integers(0, 40),
        "usd": st.none() | st.integers(0, 40),
        "tool_calls": st.none() | st.integers(0, 8),
        "model_calls": st.none() | st.integers(0, 10),
    }
).filter(lambda given: any(value is not None for value in given.values()))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plans=st.tuples(batches, batches, usages),
    limit=limits,
    sizes=st.tuples(st.integers(1, 400), st.integers(0, 20), st.integers(1, 20)),
    fails=st.frozensets(st.integers(0, 6), max_size=3),
)
def test_a_budget_is_never_exceeded_by_concurrent_tools_and_sub_agents(
    plans: tuple[list[list[str]], list[list[str]], list[tuple[int, int]]],
    limit: dict[str, Any],
    sizes: tuple[int, int, int],
    fails: frozenset[int],
) -> None:
    """In an async run whose tool calls (sub-agents among them) run gathered and whose
    model calls fail now and then, what the models billed, the model calls made and the
    tools that ran stay within the limits -- and so does what is spent and held, at every
    step; a completed run holds nothing and spent what was billed."""
    root, sub, usage = plans
    max_tokens, price_in, price_out = sizes
    quarters = max_tokens / 4
    limit = dict(limit)
    if limit["tokens"] is not None:
        limit["tokens"] = round(limit["tokens"] * quarters)
    if limit["usd"] is not None:
        limit["usd"] = limit["usd"] * quarters * price_out / 1e6
    billed: list[Usage] = []
    ran: list[str] = []
    entries: list[Mapping[str, int]] = []

    async def find(q: str) -> str:
        """Find something."""
        await asyncio.sleep(0)
        ran.append(q)
        return f"found {q}"

    def watch(event: HookEvent) -> None:
        context = event.context
        if isinstance(context, ModelContext | ToolContext):
            entries.append(context.invocation.state.get(KEY) or {})

    sub_plan = [["find"] * len(batch) for batch in sub]
    helper_model = Planned(sub_plan, usage, billed, max_tokens, fails)
    helper = Agent("helper", helper_model, tools=[find], description="Helps.")
    root_plan = [[("find" if name == "lookup" else name) for name in batch] for batch in root]
    root_model = Planned(root_plan, usage, billed, max_tokens, fails)
    agent = Agent("root", root_model, tools=[find], sub_agents=[helper])
    prices = {"*": (float(price_in), float(price_out))} if limit["usd"] is not None else None
    budget = Budget(**limit, prices=prices, max_tokens=max_tokens)
    retry = RetryPolicy(max_attempts=2, base_delay=0.0, jitter=0.0)
    callbacks = [budget, RetryAll(), observing(watch)]
    result: RunResult | None = None
    # A call that fails twice fails the run: what it billed is checked all the same.
    with Runner(agent, max_steps=100, retry=retry) as runner, contextlib.suppress(ConnectionError):
        result = asyncio.run(runner.arun("go", callbacks=callbacks))
    tokens = sum(usage.total_tokens for usage in billed)
    cost = sum(u.input_tokens * price_in + u.output_tokens * price_out for u in billed)
    helpers = (
        0
        if result is None
        else sum(
            1
            for event in result.events
            if isinstance(event, ToolResultEvent)
            and event.call.name == "helper"
            and not event.result.is_error
        )
    )
    for entry in entries:
        if limit["tokens"] is not None:
            assert entry.get("tokens", 0) + entry.get("tokens_held", 0) <= limit["tokens"]
        if limit["usd"] is not None:
            assert entry.get("usd", 0) + entry.get("usd_held", 0) <= round(limit["usd"] * 1e12)
        if limit["tool_calls"] is not None:
            assert entry.get("tool_calls", 0) <= limit["tool_calls"]
        if limit["model_calls"] is not None:
            assert entry.get("model_calls", 0) <= limit["model_calls"]
    if limit["tokens"] is not None:
        assert tokens <= limit["tokens"]
    if limit["usd"] is not None:  # prices per million tokens; the budget counts pico-dollars
        assert cost * 10**6 <= round(limit["usd"] * 1e12)
    if limit["tool_calls"] is not None:
        assert len(ran) + helpers <= limit["tool_calls"]
    if limit["model_calls"] is not None:
        assert len(billed) <= limit["model_calls"]
    if result is not None and result.status == "completed":
        entry = spent(result)
        assert (entry["tokens"], entry["tokens_held"], entry["usd_held"]) == (tokens, 0, 0)
        assert entry["usd"] == (0 if limit["usd"] is None else cost * 10**6)


def test_the_state_entry_is_json_as_a_run_state_carries_it(mode: Mode) -> None:
    """Plain ints under the budget's key: a RunState's JSON round trip keeps them."""
    result, _ = run(mode, [ask(1, USED), "done"], [Budget(tokens=10_000, tool_calls=5)])
    data = json.loads(result.state.to_json())
    again = RunState.from_json(result.state.to_json())
    assert again.data[KEY] == dict(spent(result))
    assert isinstance(data, dict)
