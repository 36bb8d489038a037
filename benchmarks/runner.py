"""Runner overhead: ``Runner.run`` / ``Runner.arun`` against a hand-written loop.

Run ``python -m benchmarks.runner`` (``--quick`` for a smoke run of a second or two).

Two scenarios, each one whole run of one agent with N = 0, 1, 10, 50 pass-through
callbacks (every built-in hook method, each returning ``Cont(ctx)``, the outcome or the
failure unchanged):

* ``agent->model``: the model answers at once with text (one model turn);
* ``model->tool->model``: the model calls one tool, then answers (two model turns and
  one tool call).

The model is a trivial class whose sync ``generate`` returns prebuilt responses; the
tool is a one-line function. For ``arun`` both are ``async def`` (the model through
``AsyncAdapter``): an async run sends a sync model or tool to a thread so it never
blocks the event loop, and that hop (tens of µs each) is the thread pool's cost, not
the runner's. The baseline, ``hand``, is what a careful developer would
write by hand for the same scenario: it builds the same hooks vocabulary (``Invocation``,
``Message``, ``ModelRequest``, the contexts, ``ToolResult``), calls the same callbacks'
methods in order (collected once per point, as the runner compiles them once), checks
each result's tag, runs the model and the tool, keeps the messages and returns the final
text. It has the error hooks and a bounded retry, but no event records, ids, sessions,
observers or argument checks. Before timing, the benchmark asserts that ``hand``,
``Runner.run`` and ``Runner.arun`` give the same output, call the callbacks in the
same order and send the model the same requests.

Targets, as ratios within one run, for both ``Runner.run`` and ``Runner.arun``:

* fixed cost: ns per run at N = 0 at most 10x the hand loop's;
* per added callback: the least-squares slope of ns per run over N at most 5x the hand
  loop's.

Two more figures, ``Runner.run`` against itself in ``agent->model`` with no run-wide
callbacks but the one named:

* a long session: ns per turn (one ``run`` on an existing session) when the session
  starts the sample with 10,000 messages, against one that starts it empty (each sample
  puts both back; its turns add two messages each). A turn appends to the history and
  never copies it, so the target is at most 1.2x;
* a fresh callbacks list: ``runner.run(prompt, callbacks=[g])`` written at the call, a
  new list each run (the README's idiom), against the same list passed every time.
  Target: at most 1.2x.

How it times: a sample is one loop of back-to-back runs (``time.perf_counter_ns``) sized
to about ``--sample-ms``; a figure is the best sample of ``--repeat`` divided by the
runs in it. ``arun`` samples are loops of awaits inside one coroutine, on one event
loop (``asyncio.Runner``) kept for the whole benchmark, so no figure includes making or
starting a loop. Samples of the three contenders at one N are taken round-robin, so a
burst of load from another process hits them all alike. The cyclic GC is off while
timing, as in ``timeit``, and the runner's in-memory session store (one session per
run) is emptied between samples.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol, TypeVar, final

from typing_extensions import override

from hooks import (
    AfterAgent,
    AfterModel,
    AfterTool,
    AgentContext,
    BeforeAgent,
    BeforeModel,
    BeforeTool,
    Cont,
    Failure,
    Fallback,
    Halt,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    OnModelError,
    OnToolError,
    Outcome,
    Result,
    Retry,
    State,
    Success,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolSpec,
)
from runner import Agent, FunctionTool, InMemorySessions, Model, Runner

__all__ = ["main"]

T = TypeVar("T")

SIZES: Final = (0, 1, 10, 50)

# Targets, as ratios to the hand-written loop (see the module docstring).
FIXED_MAX: Final = 10.0
PER_CALLBACK_MAX: Final = 5.0

PROMPT: Final = "What is the weather in Paris?"
ANSWER: Final = ModelResponse(text="It is sunny in Paris.")
CALL: Final = ModelResponse(tool_calls=(ToolCall("call_1", "weather", {"city": "Paris"}),))

MAX_ATTEMPTS: Final = 3  # the hand loop's retry budget, as RetryPolicy's default
MAX_STEPS: Final = 25  # the hand loop's model turns per run, as Runner's default

HAND: Final = "hand"
RUN: Final = "Runner.run"
RUN_ASYNC: Final = "Runner.arun"
LABELS: Final = (HAND, RUN, RUN_ASYNC)


# -- the scenario: a model, a tool, callbacks ------------------------------------------


class AnswerModel:
    """``agent->model``: answers every request at once with text."""

    __slots__ = ()

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        return ANSWER


class ToolModel:
    """``model->tool->model``: calls the tool, then answers once it sees the tool's result."""

    __slots__ = ()

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        return ANSWER if request.messages[-1].role == "tool" else CALL


def weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


async def async_weather(city: str) -> str:
    """``weather`` for async runs, which send a sync tool to a thread (see the module doc)."""
    return weather(city)


class AsyncAdapter:
    """A sync model's answers from an ``async def generate``, for async runs (see above)."""

    __slots__ = ("model",)

    def __init__(self, model: Model) -> None:
        self.model = model

    async def generate(self, request: ModelRequest, /) -> ModelResponse:
        return self.model.generate(request)


class Callback(
    BeforeAgent,
    AfterAgent,
    BeforeModel,
    AfterModel,
    OnModelError,
    BeforeTool,
    AfterTool,
    OnToolError,
    Protocol,
):
    """A callback with every built-in hook method, as both contenders call it."""


class PassThrough(
    BeforeAgent,
    AfterAgent,
    BeforeModel,
    AfterModel,
    OnModelError,
    BeforeTool,
    AfterTool,
    OnToolError,
):
    """Every built-in hook method, each passing what it got on unchanged."""

    __slots__ = ()

    @override
    def before_agent(self, ctx: AgentContext, /) -> Cont[AgentContext]:
        return Cont(ctx)

    @override
    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Outcome[ModelResponse]:
        return outcome

    @override
    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        return Cont(ctx)

    @override
    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Outcome[ModelResponse]:
        return outcome

    @override
    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> Failure[Exception]:
        return failure

    @override
    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        return Cont(ctx)

    @override
    def after_tool(self, outcome: Outcome[ToolResult], ctx: ToolContext, /) -> Outcome[ToolResult]:
        return outcome

    @override
    def on_tool_error(self, failure: Failure[Exception], ctx: ToolContext, /) -> Failure[Exception]:
        return failure


# -- the hand-written loop -------------------------------------------------------------

_BeforeAgentFn = Callable[[AgentContext], object]
_AfterAgentFn = Callable[[Outcome[ModelResponse], AgentContext], Result[ModelResponse, Exception]]
_BeforeModelFn = Callable[[ModelContext], object]
_AfterModelFn = Callable[[Outcome[ModelResponse], ModelContext], Result[ModelResponse, Exception]]
_ModelErrorFn = Callable[[Failure[Exception], ModelContext], object]
_BeforeToolFn = Callable[[ToolContext], object]
_AfterToolFn = Callable[[Outcome[ToolResult], ToolContext], Result[ToolResult, Exception]]
_ToolErrorFn = Callable[[Failure[Exception], ToolContext], object]


@final
class HandAgent:
    """What the hand loop runs: a model, tools by name, and each point's bound methods.

    The methods are collected once, here, as ``Runner`` compiles its callbacks once.
    """

    __slots__ = (
        "after_agent",
        "after_model",
        "after_tool",
        "before_agent",
        "before_model",
        "before_tool",
        "model",
        "name",
        "on_model_error",
        "on_tool_error",
        "specs",
        "tools",
    )

    def __init__(
        self,
        name: str,
        model: Model,
        tools: Mapping[str, Callable[..., object]],
        specs: tuple[ToolSpec, ...],
        callbacks: Sequence[Callback],
    ) -> None:
        self.name: Final = name
        self.model: Final = model
        self.tools: Final = tools
        self.specs: Final = specs
        self.before_agent: Final[tuple[_BeforeAgentFn, ...]] = tuple(
            each.before_agent for each in callbacks
        )
        self.after_agent: Final[tuple[_AfterAgentFn, ...]] = tuple(
            each.after_agent for each in callbacks
        )
        self.before_model: Final[tuple[_BeforeModelFn, ...]] = tuple(
            each.before_model for each in callbacks
        )
        self.after_model: Final[tuple[_AfterModelFn, ...]] = tuple(
            each.after_model for each in callbacks
        )
        self.on_model_error: Final[tuple[_ModelErrorFn, ...]] = tuple(
            each.on_model_error for each in callbacks
        )
        self.before_tool: Final[tuple[_BeforeToolFn, ...]] = tuple(
            each.before_tool for each in callbacks
        )
        self.after_tool: Final[tuple[_AfterToolFn, ...]] = tuple(
            each.after_tool for each in callbacks
        )
        self.on_tool_error: Final[tuple[_ToolErrorFn, ...]] = tuple(
            each.on_tool_error for each in callbacks
        )


def hand_run(agent: HandAgent, text: str) -> str:
    """One run by hand: before_agent, model/tool turns, after_agent; the final text."""
    invocation = Invocation(
        id="run", agent=agent.name, branch=agent.name, session_id="session", state=State()
    )
    ctx = AgentContext(invocation, Message("user", text))
    for before in agent.before_agent:
        result = before(ctx)
        if type(result) is Cont:
            ctx = result.ctx
        elif type(result) is Halt:
            response: ModelResponse = result.value
            return response.text
        else:
            raise _invalid("before_agent", result)
    outcome: Outcome[ModelResponse]
    try:
        outcome = Success(_hand_turns(agent, invocation, ctx.message))
    except Exception as exc:
        outcome = Failure(exc)
    outcome = _hand_after("after_agent", agent.after_agent, outcome, ctx)
    if type(outcome) is Failure:
        raise outcome.failure()
    return outcome.unwrap().text


def _hand_turns(agent: HandAgent, invocation: Invocation, message: Message) -> ModelResponse:
    messages = [message]
    for _ in range(MAX_STEPS):
        request = ModelRequest(tuple(messages), agent.specs)
        response = _hand_model(agent, ModelContext(invocation, request))
        messages.append(Message("assistant", response.text, tool_calls=response.tool_calls))
        if not response.tool_calls:
            return response
        for call in response.tool_calls:
            result = _hand_tool(agent, ToolContext(invocation, call))
            messages.append(Message("tool", result.content, tool_call_id=call.id, name=call.name))
    msg = f"no answer after {MAX_STEPS} model turns"
    raise RuntimeError(msg)


def _hand_model(agent: HandAgent, ctx: ModelContext) -> ModelResponse:
    for before in agent.before_model:
        result = before(ctx)
        if type(result) is Cont:
            ctx = result.ctx
        elif type(result) is Halt:
            halted: ModelResponse = result.value
            return halted
        else:
            raise _invalid("before_model", result)
    outcome: Outcome[ModelResponse]
    while True:
        try:
            outcome = Success(agent.model.generate(ctx.request))
            break
        except Exception as exc:
            error = exc
        recovery = _recover("on_model_error", agent.on_model_error, Failure(error), ctx)
        if type(recovery) is Retry and ctx.attempt < MAX_ATTEMPTS:
            ctx = replace(recovery.ctx, attempt=ctx.attempt + 1)
            continue
        outcome = _settled(recovery, error)
        break
    outcome = _hand_after("after_model", agent.after_model, outcome, ctx)
    if type(outcome) is Failure:
        raise outcome.failure()
    return outcome.unwrap()


def _hand_tool(agent: HandAgent, ctx: ToolContext) -> ToolResult:
    for before in agent.before_tool:
        result = before(ctx)
        if type(result) is Cont:
            ctx = result.ctx
        elif type(result) is Halt:
            halted: ToolResult = result.value
            return halted
        else:
            raise _invalid("before_tool", result)
    outcome: Outcome[ToolResult]
    while True:
        try:
            value = agent.tools[ctx.call.name](**ctx.call.args)
            outcome = Success(value if type(value) is ToolResult else ToolResult(_content(value)))
            break
        except Exception as exc:
            error = exc
        recovery = _recover("on_tool_error", agent.on_tool_error, Failure(error), ctx)
        if type(recovery) is Retry and ctx.attempt < MAX_ATTEMPTS:
            ctx = replace(recovery.ctx, attempt=ctx.attempt + 1)
            continue
        outcome = _settled(recovery, error)
        break
    outcome = _hand_after("after_tool", agent.after_tool, outcome, ctx)
    if type(outcome) is Failure:
        error = outcome.failure()
        return ToolResult(f"{type(error).__name__}: {error}", is_error=True)
    return outcome.unwrap()


def _hand_after(
    point: str,
    fns: Sequence[Callable[[Outcome[T], Any], object]],
    outcome: Outcome[T],
    ctx: object,
) -> Outcome[T]:
    """Thread ``outcome`` through the after methods, checking each result's tag."""
    for after in fns:
        checked = after(outcome, ctx)
        if type(checked) is Success or (
            type(checked) is Failure and isinstance(checked.failure(), Exception)
        ):
            outcome = checked
        else:
            raise _invalid(point, checked)
    return outcome


def _content(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _settled(
    recovery: Retry[Any] | Fallback[T] | Failure[Exception], error: Exception
) -> Outcome[T]:
    """The outcome after the error hooks: a fallback's value, or the error (budget spent)."""
    if type(recovery) is Fallback:
        return Success(recovery.value)
    if type(recovery) is Failure:
        return recovery
    return Failure(error)


def _recover(
    point: str,
    fns: Sequence[Callable[[Failure[Exception], Any], object]],
    failure: Failure[Exception],
    ctx: Any,
) -> Retry[Any] | Fallback[Any] | Failure[Exception]:
    for fn in fns:
        result = fn(failure, ctx)
        if type(result) is Retry or type(result) is Fallback:
            return result
        if type(result) is not Failure:
            raise _invalid(point, result)
        failure = result
    return failure


def _invalid(point: str, result: object) -> TypeError:
    return TypeError(f"a {point} callback returned {result!r:.60}")


# -- the same run, three ways -----------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One scenario: its model and how many hook methods each callback runs per run."""

    name: str
    model: Callable[[], AnswerModel | ToolModel]
    calls_per_callback: int
    points: str


SCENARIOS: Final = (
    Scenario(
        "agent->model",
        AnswerModel,
        4,
        "before_agent, before_model, after_model, after_agent",
    ),
    Scenario(
        "model->tool->model",
        ToolModel,
        8,
        "before_agent, 2 x (before_model, after_model), before_tool, after_tool, after_agent",
    ),
)


@dataclass(frozen=True)
class Setup:
    """The contenders of one scenario at one N, built once, outside the timing."""

    hand: HandAgent
    runner: Runner
    arunner: Runner
    sessions: InMemorySessions


def setup(scenario: Scenario, callbacks: Sequence[Callback]) -> Setup:
    """A ``Runner`` over an ``Agent`` and a ``HandAgent`` with the same model, tool, callbacks."""
    model = scenario.model()
    agent = Agent("assistant", model, tools=[weather])
    sessions = InMemorySessions()
    runner = Runner(agent, callbacks=callbacks, sessions=sessions)
    arunner = Runner(_async_agent(model), callbacks=callbacks, sessions=sessions)
    hand = HandAgent(agent.name, model, {"weather": weather}, agent.specs, callbacks)
    return Setup(hand, runner, arunner, sessions)


def _async_agent(model: Model) -> Agent:
    tool = FunctionTool(
        async_weather, name="weather", description=FunctionTool(weather).description
    )
    return Agent("assistant", AsyncAdapter(model), tools=[tool])


class Recording(PassThrough):
    """``PassThrough`` that writes down each hook method it runs, for the checks."""

    __slots__ = ("log", "tag")

    def __init__(self, tag: int, log: list[tuple[int, str]]) -> None:
        self.tag = tag
        self.log = log

    @override
    def before_agent(self, ctx: AgentContext, /) -> Cont[AgentContext]:
        self.log.append((self.tag, "before_agent"))
        return super().before_agent(ctx)

    @override
    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Outcome[ModelResponse]:
        self.log.append((self.tag, "after_agent"))
        return super().after_agent(outcome, ctx)

    @override
    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        self.log.append((self.tag, "before_model"))
        return super().before_model(ctx)

    @override
    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Outcome[ModelResponse]:
        self.log.append((self.tag, "after_model"))
        return super().after_model(outcome, ctx)

    @override
    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        self.log.append((self.tag, "before_tool"))
        return super().before_tool(ctx)

    @override
    def after_tool(self, outcome: Outcome[ToolResult], ctx: ToolContext, /) -> Outcome[ToolResult]:
        self.log.append((self.tag, "after_tool"))
        return super().after_tool(outcome, ctx)


class RecordingModel:
    """A model that writes down each request before answering as ``model`` does."""

    __slots__ = ("model", "requests")

    def __init__(self, model: AnswerModel | ToolModel) -> None:
        self.model = model
        self.requests: list[ModelRequest] = []

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        self.requests.append(request)
        return self.model.generate(request)


def check(scenario: Scenario, n: int, loop: asyncio.Runner) -> None:
    """Assert the three contenders do the same run: output, hook calls, model requests."""
    seen: dict[str, tuple[str, list[tuple[int, str]], list[ModelRequest]]] = {}
    for label in LABELS:
        log: list[tuple[int, str]] = []
        model = RecordingModel(scenario.model())
        callbacks = [Recording(index, log) for index in range(n)]
        agent = Agent("assistant", model, tools=[weather])
        if label == RUN_ASYNC:
            agent = _async_agent(model)
        with Runner(agent, callbacks=callbacks) as runner:
            if label == HAND:
                hand = HandAgent(agent.name, model, {"weather": weather}, agent.specs, callbacks)
                output = hand_run(hand, PROMPT)
            elif label == RUN:
                output = runner.run(PROMPT).output
            else:
                output = loop.run(runner.arun(PROMPT)).output
        seen[label] = (output, log, model.requests)
    output, log, requests = expected = seen[HAND]
    turns = 1 if scenario.model is AnswerModel else 2
    where = f"{scenario.name}, N={n}"
    if output != ANSWER.text or len(log) != n * scenario.calls_per_callback:
        msg = f"{where}: {HAND} answered {output!r} after hook calls {log}"
        raise AssertionError(msg)
    if len(requests) != turns:
        msg = f"{where}: {HAND} sent the model {len(requests)} requests, not {turns}"
        raise AssertionError(msg)
    for label in (RUN, RUN_ASYNC):
        if seen[label] != expected:
            msg = f"{where}: {label} differs from {HAND}: {seen[label]!r:.300}"
            raise AssertionError(msg)


# -- timing ---------------------------------------------------------------------------

Sample = Callable[[int], int]
"""Runs the contender ``n`` times back to back; returns the ns that took."""


def samplers(setup_: Setup, loop: asyncio.Runner) -> dict[str, Sample]:
    """One sampler per contender, every name it uses a local."""
    hand, runner, arunner = setup_.hand, setup_.runner, setup_.arunner

    def sample_hand(n: int) -> int:
        run, agent, prompt = hand_run, hand, PROMPT
        timer = time.perf_counter_ns
        runs = itertools.repeat(None, n)
        start = timer()
        for _ in runs:
            run(agent, prompt)
        return timer() - start

    def sample_run(n: int) -> int:
        run, prompt = runner.run, PROMPT
        timer = time.perf_counter_ns
        runs = itertools.repeat(None, n)
        start = timer()
        for _ in runs:
            run(prompt)
        return timer() - start

    async def timed_async(n: int) -> int:
        run, prompt = arunner.arun, PROMPT
        timer = time.perf_counter_ns
        runs = itertools.repeat(None, n)
        start = timer()
        for _ in runs:
            await run(prompt)
        return timer() - start

    def sample_async(n: int) -> int:
        return loop.run(timed_async(n))

    return {HAND: sample_hand, RUN: sample_run, RUN_ASYNC: sample_async}


def _calibrate(sample: Sample, sample_ns: int) -> int:
    """How many runs make one sample of about ``sample_ns``; the first calls warm up."""
    n = 1
    while True:
        elapsed = sample(n)
        if elapsed >= sample_ns // 5 or n >= 1 << 20:
            return max(1, round(n * sample_ns / max(elapsed, 1)))
        n *= 2


def measure(
    setup_: Setup, loop: asyncio.Runner, *, repeat: int, sample_ns: int
) -> dict[str, float]:
    """ns per run of each contender: the best of ``repeat`` round-robin samples."""
    return best_of(
        samplers(setup_, loop), setup_.sessions.clear, repeat=repeat, sample_ns=sample_ns
    )


def best_of(
    samples: Mapping[str, Sample], reset: Callable[[], None], *, repeat: int, sample_ns: int
) -> dict[str, float]:
    """ns per run of each sampler: the best of ``repeat`` round-robin samples.

    ``reset`` runs before every sample (and once at the end), outside the timing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        counts = {label: _calibrate(sample, sample_ns) for label, sample in samples.items()}
        best = {label: float("inf") for label in samples}
        for _ in range(repeat):
            for label, sample in samples.items():
                reset()
                gc.collect()
                best[label] = min(best[label], sample(counts[label]) / counts[label])
    finally:
        reset()
        if was_enabled:
            gc.enable()
    return best


def slope(figures: Mapping[int, float]) -> float:
    """The least-squares slope of ns per run over N: the cost of one more callback."""
    sizes = list(figures)
    mean_n = statistics.fmean(sizes)
    mean_t = statistics.fmean(figures.values())
    num = sum((n - mean_n) * (figures[n] - mean_t) for n in sizes)
    den = sum((n - mean_n) ** 2 for n in sizes)
    return num / den


# -- report ---------------------------------------------------------------------------


def _ns(value: float) -> str:
    return f"{value:,.0f}"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report(scenario: Scenario, results: Mapping[int, Mapping[str, float]]) -> list[bool]:
    """Print one scenario's table and its targets; the verdicts, in order."""
    print(f"{scenario.name}: ns per run, best of the samples (lower is better)")
    print(f"  each callback runs {scenario.calls_per_callback} hook methods: {scenario.points}")
    width = 18
    head = "".join(f"{label:>{width}}" for label in LABELS)
    print(f"{'':>14}{head}{'run/hand':>11}{'async/hand':>12}")
    for n, row in results.items():
        cells = "".join(f"{_ns(row[label]):>{width}}" for label in LABELS)
        ratios = f"{row[RUN] / row[HAND]:>10.2f}x{row[RUN_ASYNC] / row[HAND]:>11.2f}x"
        print(f"{f'N={n}':>14}{cells}{ratios}")
    slopes = {label: slope({n: row[label] for n, row in results.items()}) for label in LABELS}
    cells = "".join(f"{_ns(slopes[label]):>{width}}" for label in LABELS)
    print(
        f"{'ns/callback':>14}{cells}"
        f"{slopes[RUN] / slopes[HAND]:>10.2f}x{slopes[RUN_ASYNC] / slopes[HAND]:>11.2f}x"
    )
    per_call = "".join(
        f"{_ns(slopes[label] / scenario.calls_per_callback):>{width}}" for label in LABELS
    )
    print(f"{'ns/hook call':>14}{per_call}")
    verdicts: list[bool] = []
    for label in (RUN, RUN_ASYNC):
        fixed = results[0][label] / results[0][HAND]
        per_callback = slopes[label] / slopes[HAND]
        ok_fixed, ok_slope = fixed <= FIXED_MAX, per_callback <= PER_CALLBACK_MAX
        verdicts += [ok_fixed, ok_slope]
        print(
            f"  {label:<18} fixed cost (N=0) {fixed:6.2f}x hand, target <= {FIXED_MAX:g}x: "
            f"{_verdict(ok_fixed)};  per added callback {per_callback:5.2f}x hand, "
            f"target <= {PER_CALLBACK_MAX:g}x: {_verdict(ok_slope)}"
        )
    print()
    return verdicts


# -- a long session; a fresh callbacks list ---------------------------------------------

HISTORY: Final = 10_000  # messages of history in the long session
HISTORY_MAX: Final = 1.2  # a turn at HISTORY messages, as a ratio to a turn at 0
FRESH_MAX: Final = 1.2  # callbacks=[g] with a fresh list, as a ratio to a reused list

USER: Final = "user"
SHORT: Final = "short"
LONG: Final = "long"
REUSED: Final = "reused list"
FRESH: Final = "fresh list"


def history(length: int) -> list[Message]:
    """A conversation of ``length`` messages: questions and answers, in turn."""
    return [
        Message("user", f"question {n}") if n % 2 == 0 else Message("assistant", f"answer {n}")
        for n in range(length)
    ]


def check_history(past: Sequence[Message]) -> None:
    """Assert a turn on a session with ``past`` sends the model all of it and saves the turn."""
    model = RecordingModel(AnswerModel())
    sessions = InMemorySessions()
    sessions.save(USER, LONG, past, version=0)
    with Runner(Agent("assistant", model), sessions=sessions) as runner:
        output = runner.run(PROMPT, user_id=USER, session_id=LONG).output
    sent = model.requests[0].messages
    saved = sessions.load(USER, LONG).messages
    if output != ANSWER.text or len(sent) != len(past) + 1 or sent[-1] != Message("user", PROMPT):
        msg = f"a turn on a session of {len(past)} messages sent {len(sent)} messages"
        raise AssertionError(msg)
    if len(saved) != len(past) + 2 or saved[: len(past)] != past:
        msg = f"a turn on a session of {len(past)} messages saved {len(saved)} messages"
        raise AssertionError(msg)


def measure_history(*, repeat: int, sample_ns: int) -> dict[str, float]:
    """ns per turn: one ``run`` on a session holding 0, or ``HISTORY``, messages.

    Before each sample both sessions are put back to their starting history, so a
    sample's turns grow the conversation from there (by two messages a turn).
    """
    past = history(HISTORY)
    check_history(past)
    check_history(())
    sessions = InMemorySessions()
    runner = Runner(Agent("assistant", AnswerModel()), sessions=sessions)

    def reset() -> None:
        for session_id in (SHORT, LONG):
            sessions.delete(USER, session_id)
        sessions.save(USER, LONG, past, version=0)

    def sampler(session_id: str) -> Sample:
        def sample(n: int) -> int:
            run, prompt = runner.run, PROMPT
            timer = time.perf_counter_ns
            runs = itertools.repeat(None, n)
            start = timer()
            for _ in runs:
                run(prompt, user_id=USER, session_id=session_id)
            return timer() - start

        return sample

    reset()
    with runner:
        return best_of(
            {SHORT: sampler(SHORT), LONG: sampler(LONG)},
            reset,
            repeat=repeat,
            sample_ns=sample_ns,
        )


def check_fresh() -> None:
    """Assert ``callbacks=[g]`` runs ``g`` alike with a fresh list and with a reused one."""
    log: list[tuple[int, str]] = []
    callback = Recording(0, log)
    reused = [callback]
    with Runner(Agent("assistant", AnswerModel())) as runner:
        outputs = [
            runner.run(PROMPT, callbacks=[callback]).output,
            runner.run(PROMPT, callbacks=reused).output,
        ]
    points = ["before_agent", "before_model", "after_model", "after_agent"]
    if outputs != [ANSWER.text] * 2 or log != [(0, point) for point in points * 2]:
        msg = f"callbacks=[g] with a fresh and a reused list: {outputs}, hook calls {log}"
        raise AssertionError(msg)


def measure_fresh(*, repeat: int, sample_ns: int) -> dict[str, float]:
    """ns per ``run(prompt, callbacks=[g])``: a new list each run against one list reused."""
    check_fresh()
    sessions = InMemorySessions()
    runner = Runner(Agent("assistant", AnswerModel()), sessions=sessions)
    guard = PassThrough()
    same = [guard]

    def sample_reused(n: int) -> int:
        run, prompt, callbacks = runner.run, PROMPT, same
        timer = time.perf_counter_ns
        runs = itertools.repeat(None, n)
        start = timer()
        for _ in runs:
            run(prompt, callbacks=callbacks)
        return timer() - start

    def sample_fresh(n: int) -> int:
        run, prompt, g = runner.run, PROMPT, guard
        timer = time.perf_counter_ns
        runs = itertools.repeat(None, n)
        start = timer()
        for _ in runs:
            run(prompt, callbacks=[g])  # the README's idiom: a list written at the call
        return timer() - start

    with runner:
        return best_of(
            {REUSED: sample_reused, FRESH: sample_fresh},
            sessions.clear,
            repeat=repeat,
            sample_ns=sample_ns,
        )


def report_growth(turns: Mapping[str, float], lists: Mapping[str, float]) -> list[bool]:
    """Print the long-session and fresh-list figures and their targets; the verdicts."""
    width = 18
    print("long session: ns per turn (one Runner.run on an existing session), agent->model, N=0")
    print(f"{'':>14}{'0 messages':>{width}}{f'{HISTORY:,} messages':>{width}}{'long/short':>12}")
    growth = turns[LONG] / turns[SHORT]
    print(f"{RUN:>14}{_ns(turns[SHORT]):>{width}}{_ns(turns[LONG]):>{width}}{growth:>11.2f}x")
    ok_growth = growth <= HISTORY_MAX
    print(
        f"  a turn at {HISTORY:,} messages {growth:5.2f}x a turn at 0, "
        f"target <= {HISTORY_MAX:g}x: {_verdict(ok_growth)}"
    )
    print()
    print("callbacks list: ns per Runner.run(prompt, callbacks=[g]), agent->model")
    print(f"{'':>14}{REUSED:>{width}}{FRESH:>{width}}{'fresh/reused':>14}")
    fresh = lists[FRESH] / lists[REUSED]
    print(f"{RUN:>14}{_ns(lists[REUSED]):>{width}}{_ns(lists[FRESH]):>{width}}{fresh:>13.2f}x")
    ok_fresh = fresh <= FRESH_MAX
    print(
        f"  a fresh list each run {fresh:5.2f}x the same list reused, "
        f"target <= {FRESH_MAX:g}x: {_verdict(ok_fresh)}"
    )
    print()
    return [ok_growth, ok_fresh]


# -- main -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Check, measure and print; returns 0 (a missed target is reported, not an error)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.runner", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few short samples: a smoke run")
    parser.add_argument(
        "--repeat", type=int, default=None, help="samples per contender (best is kept)"
    )
    parser.add_argument("--sample-ms", type=float, default=None, help="target length of one sample")
    args = parser.parse_args(argv)
    repeat: int = args.repeat or (2 if args.quick else 9)
    sample_ms: float = args.sample_ms or (2.0 if args.quick else 60.0)
    if repeat < 1 or sample_ms <= 0:
        parser.error("--repeat and --sample-ms must be positive")
    sample_ns = round(sample_ms * 1e6)

    print(
        f"hookline runner benchmark: Python {platform.python_version()} "
        f"({platform.python_implementation()}), {'quick' if args.quick else 'full'} mode, "
        f"best of {repeat} samples of ~{sample_ms:g} ms"
    )
    print(
        f"  {HAND:<18} the same run written by hand: same vocabulary, callbacks and checks,\n"
        f"  {'':<18} no event records, ids, sessions, observers or tool-argument checks\n"
        f"  {RUN:<18} runner.run(prompt), a fresh session each run\n"
        f"  {RUN_ASYNC:<18} await runner.arun(prompt), on one event loop\n"
    )
    started = time.perf_counter()
    verdicts: list[bool] = []
    with asyncio.Runner() as loop:
        for scenario in SCENARIOS:
            results: dict[int, dict[str, float]] = {}
            for n in SIZES:
                check(scenario, n, loop)
                contenders = setup(scenario, [PassThrough() for _ in range(n)])
                with contenders.runner, contenders.arunner:
                    results[n] = measure(contenders, loop, repeat=repeat, sample_ns=sample_ns)
            verdicts += report(scenario, results)
    turns = measure_history(repeat=repeat, sample_ns=sample_ns)
    lists = measure_fresh(repeat=repeat, sample_ns=sample_ns)
    verdicts += report_growth(turns, lists)
    missed = verdicts.count(False)
    print(
        f"targets: {len(verdicts) - missed} of {len(verdicts)} met"
        + (f", {missed} MISSED" if missed else "")
    )
    print(f"measured in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
