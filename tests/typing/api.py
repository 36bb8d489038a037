"""Typical use of the public ``hooks`` API, checked by the project's mypy run.

Not a test module and never run: mypy (strict) must accept every line as written, and
``assert_type`` pins what the API gives back. Mistakes mypy must reject live in
``cases/``, checked by ``test_typing.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, assert_never, assert_type

from returns.result import Failure, Result, Success
from typing_extensions import override

import hooks
from hooks import (
    AFTER_MODEL,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    WRAP_MODEL,
    WRAP_TOOL,
    AfterPoint,
    AgentContext,
    BeforePoint,
    BeforeResult,
    Cont,
    DispatchPolicy,
    ErrorPoint,
    ErrorResult,
    Fallback,
    Halt,
    HookEvent,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    Pause,
    Retry,
    StateKey,
    StopRun,
    ToolContext,
    ToolResult,
    WrapPoint,
)

CALLS: Final = StateKey[int]("calls")
BLOCKED_TOOLS: Final = frozenset({"rm"})


# -- callbacks: classes subclass exactly the protocols they implement ---------------


class Budget(hooks.BeforeModel, hooks.OnModelError):
    """Caps model calls per invocation; retries twice, then answers politely."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    @override
    def before_model(self, ctx: ModelContext) -> BeforeResult[ModelContext, ModelResponse]:
        state = ctx.invocation.state
        calls = state.update(CALLS, lambda n: n + 1, default=0)
        assert_type(calls, int)
        assert_type(state.get(CALLS), int | None)
        if calls > self.limit:
            return Halt(ModelResponse(text=f"call budget of {state.get(CALLS)} spent"))
        system = Message(role="system", content="be brief")
        request = dataclasses.replace(ctx.request, messages=(system, *ctx.request.messages))
        return Cont(dataclasses.replace(ctx, request=request))

    @override
    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext
    ) -> ErrorResult[ModelContext, ModelResponse]:
        error = failure.failure()
        if isinstance(error, TimeoutError) and ctx.attempt < ctx.max_attempts:
            return Retry(ctx, delay=0.5 * ctx.attempt)
        if isinstance(error, ConnectionError):
            return Fallback(ModelResponse(text="the model is unreachable"))
        return Failure(RuntimeError(f"model failed on attempt {ctx.attempt}"))


class Redact(hooks.AfterModel):
    """Rewrites the model's answer; passes failures on unchanged."""

    @override
    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext
    ) -> Result[ModelResponse, Exception]:
        match outcome:
            case Success(response):
                return Success(dataclasses.replace(response, text=response.text.strip()))
            case Failure():
                return outcome
            case _:
                assert_never(outcome)


class ToolGuard(hooks.BeforeTool, hooks.AfterTool, hooks.OnToolError):
    """Blocks dangerous tools, marks empty results, turns errors into messages."""

    @override
    def before_tool(self, ctx: ToolContext) -> BeforeResult[ToolContext, ToolResult]:
        if ctx.call.name in BLOCKED_TOOLS:
            return Halt(ToolResult(f"{ctx.call.name} is not allowed", is_error=True))
        return Cont(ctx)

    @override
    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext
    ) -> Result[ToolResult, Exception]:
        if isinstance(outcome, Success) and not outcome.unwrap().content:
            return Success(ToolResult("(empty)"))
        return outcome

    @override
    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext
    ) -> ErrorResult[ToolContext, ToolResult]:
        if ctx.attempt < ctx.max_attempts:  # retry, then fall back
            return Retry(ctx)
        return Fallback(ToolResult(str(failure.failure()), is_error=True))


class Gate(hooks.BeforeAgent, hooks.AfterAgent, hooks.OnEvent):
    """Stops runs for anonymous users and records every dispatch it is told about."""

    def __init__(self) -> None:
        self.events: list[HookEvent] = []

    @override
    def before_agent(self, ctx: AgentContext) -> BeforeResult[AgentContext, ModelResponse]:
        if ctx.invocation.user_id == "anonymous":
            raise StopRun("sign in first")
        return Cont(ctx)

    @override
    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext
    ) -> Result[ModelResponse, Exception]:
        return outcome

    @override
    def on_event(self, event: HookEvent) -> None:
        self.events.append(event)


RAISED: Final[list[HookEvent]] = []


def log_event(event: HookEvent) -> None:
    """An observer written as a plain function."""
    if event.outcome == "raised":
        RAISED.append(event)


CALLBACKS: Final[list[object]] = [
    Budget(3),
    Redact(),
    ToolGuard(),
    Gate(),
    hooks.observing(log_event),
]
COMPILED: Final = hooks.compile_callbacks(CALLBACKS)


# -- dispatch -----------------------------------------------------------------------


def call_model(ctx: ModelContext, generate: Callable[[ModelRequest], ModelResponse]) -> str:
    """The guarded-operation pattern: before, operation, error recovery, after."""
    trace = hooks.Trace()
    before = hooks.run_before(COMPILED, BEFORE_MODEL, ctx, trace=trace)
    assert_type(before, BeforeResult[ModelContext, ModelResponse])
    decided: str | None = trace.description
    match before:
        case Halt(response):
            return f"{response.text} (by {decided})"
        case Cont(ctx):
            pass
        case _:
            assert_never(before)
    outcome: Outcome[ModelResponse]
    try:
        outcome = Success(generate(ctx.request))
    except Exception as exc:  # the error hooks decide what an error means
        recovered = hooks.run_on_error(COMPILED, ON_MODEL_ERROR, Failure(exc), ctx)
        assert_type(recovered, ErrorResult[ModelContext, ModelResponse])
        match recovered:
            case Retry(ctx):
                return call_model(ctx, generate)
            case Fallback(response):
                outcome = Success(response)
            case Failure():
                outcome = recovered
            case _:
                assert_never(recovered)
    result = hooks.run_after(COMPILED, AFTER_MODEL, outcome, ctx)
    assert_type(result, Outcome[ModelResponse])
    return result.unwrap().text


async def call_tool(ctx: ToolContext) -> ToolResult:
    """Async dispatch with a non-default policy."""
    policy = DispatchPolicy(continue_on_halt=True)
    before = await hooks.arun_before(CALLBACKS, BEFORE_TOOL, ctx, policy=policy)
    match before:
        case Halt(result):
            return result
        case Pause(reason):  # before_tool may pause: the match must say what then
            return ToolResult(f"waiting for a human: {reason}", is_error=True)
        case Cont(ctx):
            pass
        case _:
            assert_never(before)
    outcome = await hooks.arun_after(CALLBACKS, AFTER_TOOL, Success(ToolResult("4")), ctx)
    assert_type(outcome, Outcome[ToolResult])
    recovered = await hooks.arun_on_error(
        CALLBACKS, ON_TOOL_ERROR, Failure(ValueError("bad args")), ctx
    )
    assert_type(recovered, ErrorResult[ToolContext, ToolResult])
    return outcome.value_or(ToolResult("no result", is_error=True))


def start_agent(ctx: AgentContext) -> AgentContext | ModelResponse:
    """``BEFORE_AGENT`` answers with a ``ModelResponse`` or goes on with the context."""
    try:
        result = hooks.run_before(CALLBACKS, BEFORE_AGENT, ctx)
    except StopRun as stop:
        return ModelResponse(text=stop.reason)
    except hooks.InvalidResult as exc:
        assert_type(exc.expected, tuple[str, ...])
        raise
    match result:
        case Cont(new_ctx):
            return new_ctx
        case Halt(response):
            return response
        case _:
            assert_never(result)


# -- user-declared points -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Doc:
    """A retrieved document."""

    text: str


@dataclass(frozen=True, slots=True)
class SearchContext:
    """A search about to run."""

    query: str


BEFORE_SEARCH: Final = BeforePoint[SearchContext, list[Doc]]("before_search", context=SearchContext)
AFTER_SEARCH: Final = AfterPoint[SearchContext, list[Doc]]("after_search")
ON_SEARCH_ERROR: Final = ErrorPoint[SearchContext, list[Doc]]("on_search_error")


class SearchCache:
    """Answers repeated queries without searching."""

    def __init__(self) -> None:
        self.cache: dict[str, list[Doc]] = {}

    def before_search(self, ctx: SearchContext) -> BeforeResult[SearchContext, list[Doc]]:
        if ctx.query in self.cache:
            return Halt(self.cache[ctx.query])
        return Cont(ctx)

    async def after_search(
        self, outcome: Outcome[list[Doc]], ctx: SearchContext
    ) -> Result[list[Doc], Exception]:
        if isinstance(outcome, Success):
            self.cache[ctx.query] = outcome.unwrap()
        return outcome

    def on_search_error(
        self, failure: Failure[Exception], ctx: SearchContext
    ) -> ErrorResult[SearchContext, list[Doc]]:
        return Fallback(self.cache.get(ctx.query, []))


async def search(ctx: SearchContext) -> list[Doc]:
    """Custom points dispatch with the same functions and keep their types."""
    callbacks = [SearchCache()]
    match hooks.run_before(callbacks, BEFORE_SEARCH, ctx):
        case Halt(docs):
            assert_type(docs, list[Doc])
            return docs
        case Cont(ctx):
            pass
    outcome = await hooks.arun_after(callbacks, AFTER_SEARCH, Success([Doc(ctx.query)]), ctx)
    assert_type(outcome, Outcome[list[Doc]])
    match hooks.run_on_error(callbacks, ON_SEARCH_ERROR, Failure(OSError("offline")), ctx):
        case Fallback(docs):
            return docs
        case Retry() | Failure():
            return []


def snapshot(ctx: ModelContext) -> str:
    """The state as a read-only mapping, and the installed version."""
    state = ctx.invocation.state.snapshot()
    assert_type(hooks.__version__, str)
    return f"hookline {hooks.__version__}: {dict(state)}"


# -- wraps ---------------------------------------------------------------------------

ModelNext = Callable[[ModelContext], Outcome[ModelResponse]]
AsyncToolNext = Callable[[ToolContext], Awaitable[Outcome[ToolResult]]]


class AnswerCache(hooks.WrapModel):
    """Answers a request seen before without calling the model; asks again once on an empty
    answer."""

    def __init__(self) -> None:
        self.answers: dict[ModelRequest, ModelResponse] = {}

    @override
    def wrap_model(self, ctx: ModelContext, call_next: ModelNext) -> Outcome[ModelResponse]:
        if ctx.request in self.answers:
            return Success(self.answers[ctx.request])
        outcome = call_next(ctx)
        match outcome:
            case Success(response) if not response.text:
                outcome = call_next(ctx)
            case Success() | Failure():
                pass
            case _:
                assert_never(outcome)
        if isinstance(outcome, Success):
            self.answers[ctx.request] = outcome.unwrap()
        return outcome


class ToolTimer(hooks.AsyncWrapTool):
    """Counts tool calls; turns a tool's error into an error result the model reads."""

    def __init__(self) -> None:
        self.calls = 0

    @override
    async def wrap_tool(self, ctx: ToolContext, call_next: AsyncToolNext) -> Outcome[ToolResult]:
        self.calls += 1
        outcome = await call_next(ctx)
        if isinstance(outcome, Failure):
            return Success(ToolResult(str(outcome.failure()), is_error=True))
        return outcome


def cached_call(ctx: ModelContext, generate: Callable[[ModelRequest], ModelResponse]) -> str:
    """``run_wrap`` around one model call; ``Trace`` names a wrap that answered itself."""

    def operation(ctx: ModelContext) -> Outcome[ModelResponse]:
        return Success(generate(ctx.request))

    trace = hooks.Trace()
    outcome = hooks.run_wrap([AnswerCache()], WRAP_MODEL, ctx, operation, trace=trace)
    assert_type(outcome, Outcome[ModelResponse])
    return outcome.map(lambda response: response.text).value_or(f"failed ({trace.description})")


async def guarded_tool(ctx: ToolContext) -> ToolResult:
    """``arun_wrap`` with async wraps, one bounded by ``with_timeout``."""

    async def operation(ctx: ToolContext) -> Outcome[ToolResult]:
        return Success(ToolResult("4"))

    timer = hooks.with_timeout(ToolTimer(), 0.5, fail="open")
    assert_type(timer, hooks.TimedCallback)
    outcome = await hooks.arun_wrap([timer, ToolTimer()], WRAP_TOOL, ctx, operation)
    assert_type(outcome, Outcome[ToolResult])
    late: list[hooks.TimeoutRecord] = timer.timeouts
    return outcome.value_or(ToolResult(f"{len(late)} late", is_error=True))


class RemoteGuard(hooks.AsyncBeforeModel):
    """Asks a remote policy service before each model call."""

    @override
    async def before_model(self, ctx: ModelContext) -> BeforeResult[ModelContext, ModelResponse]:
        return Cont(ctx)


async def strict_model(ctx: ModelContext) -> ModelContext | str:
    """A guard that must answer in time, or the model does not run."""
    guard = hooks.with_timeout(RemoteGuard(), 0.1, fail="closed")
    try:
        result = await hooks.arun_before([guard], BEFORE_MODEL, ctx)
    except hooks.HookTimeout as timeout:
        assert_type(timeout.seconds, float)
        return f"{timeout.point} was too slow"
    match result:
        case Cont(ctx):
            return ctx
        case Halt(response):
            return response.text
        case _:
            assert_never(result)


WRAP_SEARCH: Final = WrapPoint[SearchContext, list[Doc]]("wrap_search", context=SearchContext)


class Rerank:
    """A wrap at a user-declared point: reorders what the search found."""

    def wrap_search(
        self, ctx: SearchContext, call_next: Callable[[SearchContext], Outcome[list[Doc]]]
    ) -> Outcome[list[Doc]]:
        outcome = call_next(ctx)
        match outcome:
            case Success(docs):
                return Success(sorted(docs, key=lambda doc: doc.text))
            case Failure():
                return outcome
            case _:
                assert_never(outcome)


def reranked(ctx: SearchContext) -> list[Doc]:
    """User-declared wrap points dispatch with ``run_wrap`` and keep their types."""
    outcome = hooks.run_wrap([Rerank()], WRAP_SEARCH, ctx, lambda ctx: Success([Doc(ctx.query)]))
    assert_type(outcome, Outcome[list[Doc]])
    return outcome.value_or([])
