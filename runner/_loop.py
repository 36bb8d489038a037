"""The agent loop, written once as coroutines and driven two ways.

``Runner.run_async`` awaits ``Run.run`` on the running event loop. ``Runner.run``
drives the very same coroutine with one ``send(None)`` (``complete``): in sync mode
nothing the loop awaits ever suspends (sync model, sync tools, sync dispatch,
``time.sleep`` between retries), so the coroutine finishes in that one step with no
event loop at all. Whether the run is async, and whether each model, tool and
callback chain is, was decided before the run started.

Order of hook points (the contract's): ``before_agent`` -> loop { ``before_model`` ->
model (-> ``on_model_error`` -> retry / fallback) -> ``after_model`` -> for each tool
call { ``before_tool`` -> tool (-> ``on_tool_error``) -> ``after_tool`` } } ->
``after_agent``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from time import perf_counter
from typing import Any, Final, TypeVar, assert_never, final

from hooks import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    AfterPoint,
    AgentContext,
    BeforePoint,
    BeforeResult,
    CompiledCallbacks,
    Cont,
    ErrorPoint,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    HookEvent,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    OutcomeTag,
    Retry,
    State,
    StopRun,
    Success,
    ToolCall,
    ToolContext,
    ToolResult,
    arun_after,
    arun_before,
    arun_on_error,
    run_after,
    run_before,
    run_on_error,
)
from runner._agent import Agent
from runner._errors import MaxStepsExceeded, ToolArgumentsError, UnknownToolError
from runner._events import (
    ErrorEvent,
    Event,
    ModelResponseEvent,
    RunResult,
    StopEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from runner._retry import RetryPolicy
from runner._sessions import SessionStore

__all__ = ["POINTS", "Run", "complete"]

logger: Final = logging.getLogger("runner")

POINTS: Final = (
    BEFORE_AGENT,
    AFTER_AGENT,
    BEFORE_MODEL,
    AFTER_MODEL,
    ON_MODEL_ERROR,
    BEFORE_TOOL,
    AFTER_TOOL,
    ON_TOOL_ERROR,
)
"""The hook points a run dispatches."""

C = TypeVar("C")
T = TypeVar("T")
OpCtx = TypeVar("OpCtx", ModelContext, ToolContext)


_TAGS: Final[dict[type, OutcomeTag]] = {
    Cont: "cont",
    Halt: "halt",
    Success: "success",
    Failure: "failure",
    Retry: "retry",
    Fallback: "fallback",
}


def complete(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends to its end, without an event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    msg = "a sync run awaited something that suspends; use Runner.run_async for async code"
    raise RuntimeError(msg)


@final
class Plan:
    """One agent at one branch of a run: its callbacks, compiled, and its invocation."""

    __slots__ = ("agent", "awaiting", "branch", "compiled", "invocation", "is_async", "observers")

    def __init__(
        self, agent: Agent, invocation: Invocation, compiled: CompiledCallbacks, *, is_async: bool
    ) -> None:
        self.agent: Final = agent
        self.branch: Final = invocation.branch
        self.invocation: Final = invocation
        self.compiled: Final = compiled
        self.is_async: Final = is_async
        # The points with an async method: the only ones an async run dispatches with
        # arun_*; every other dispatch takes the sync loop, with no coroutine to await.
        self.awaiting: Final = frozenset(
            point.name
            for point in POINTS
            if is_async and compiled.chain(point.name, point.kind).any_async
        )
        chain = compiled.chain("on_event", "event")
        self.observers: Final = tuple(zip(chain.fns, chain.asyncs, chain.owners, strict=True))

    async def before(
        self, point: BeforePoint[C, T], ctx: C, call: ToolCall | None = None
    ) -> BeforeResult[C, T]:
        """Dispatch a before point, sync or async as the run is, and tell observers."""
        result: BeforeResult[C, T] = await self._dispatch(run_before, arun_before, point, call, ctx)
        return result

    async def after(
        self, point: AfterPoint[T, C], outcome: Outcome[T], ctx: C, call: ToolCall | None = None
    ) -> Outcome[T]:
        """Dispatch an after point, sync or async as the run is, and tell observers."""
        result: Outcome[T] = await self._dispatch(run_after, arun_after, point, call, outcome, ctx)
        return result

    async def on_error(
        self, point: ErrorPoint[C, T], failure: Failure[Exception], ctx: C, call: ToolCall | None
    ) -> ErrorResult[C, T]:
        """Dispatch an error point, sync or async as the run is, and tell observers."""
        result: ErrorResult[C, T] = await self._dispatch(
            run_on_error, arun_on_error, point, call, failure, ctx
        )
        return result

    async def _dispatch(
        self,
        sync: Callable[..., Any],
        async_: Callable[..., Awaitable[Any]],
        point: BeforePoint[Any, Any] | AfterPoint[Any, Any] | ErrorPoint[Any, Any],
        call: ToolCall | None,
        *args: Any,
    ) -> Any:
        awaits = point.name in self.awaiting
        if not self.observers:
            return (
                await async_(self.compiled, point, *args)
                if awaits
                else sync(self.compiled, point, *args)
            )
        start = perf_counter()
        try:
            result = (
                await async_(self.compiled, point, *args)
                if awaits
                else sync(self.compiled, point, *args)
            )
        except Exception as exc:
            await self._observe(point.name, start, "raised", error=exc, call=call, ctx=args[-1])
            raise
        if type(result) is Failure:
            error = result.failure()
        else:  # a recovery still tells observers what it recovered from
            error = args[0].failure() if point.kind == "error" else None
        await self._observe(
            point.name, start, _TAGS[type(result)], error=error, call=call, ctx=args[-1]
        )
        return result

    async def _observe(
        self,
        point: str,
        start: float,
        outcome: OutcomeTag,
        *,
        error: BaseException | None,
        call: ToolCall | None,
        ctx: object,
    ) -> None:
        event = HookEvent(
            time=time.time() - (perf_counter() - start),
            point=point,
            agent=self.agent.name,
            branch=self.branch,
            outcome=outcome,
            duration=perf_counter() - start,
            tool=None if call is None else call.name,
            call_id=None if call is None else call.id,
            error=error,
            attempt=getattr(ctx, "attempt", 1),
        )
        for fn, is_async, owner in self.observers:
            try:
                if is_async:
                    await fn(event)
                else:
                    fn(event)
            except Exception:
                logger.exception("observer %r failed on %s; the run goes on", owner, point)


@final
class Run:
    """The state of one run: its invocation, event record, step count and drivers."""

    __slots__ = (
        "_plans",
        "compile",
        "escalated",
        "events",
        "executor",
        "id",
        "is_async",
        "max_steps",
        "retry",
        "rng",
        "session_id",
        "sessions",
        "state",
        "steps",
        "user_id",
    )

    def __init__(
        self,
        *,
        run_id: str,
        user_id: str,
        session_id: str,
        compile: Callable[[Agent], CompiledCallbacks],
        retry: RetryPolicy,
        max_steps: int,
        sessions: SessionStore,
        is_async: bool,
        executor: Callable[[], Executor],
        rng: random.Random,
    ) -> None:
        self.id: Final = run_id
        self.user_id: Final = user_id
        self.session_id: Final = session_id
        self.compile: Final = compile
        self.retry: Final = retry
        self.max_steps: Final = max_steps
        self.sessions: Final = sessions
        self.is_async: Final = is_async
        self.executor: Final = executor
        self.rng: Final = rng
        self.state: Final = State()
        self.events: list[Event] = []
        self.steps = 0
        self.escalated: list[Exception] = []
        self._plans: dict[str, Plan] = {}

    def plan(self, agent: Agent, branch: str) -> Plan:
        """The plan of ``agent`` at ``branch``, made once per run."""
        plan = self._plans.get(branch)
        if plan is None:
            invocation = Invocation(
                id=self.id,
                agent=agent.name,
                branch=branch,
                user_id=self.user_id,
                session_id=self.session_id,
                state=self.state,
            )
            plan = Plan(agent, invocation, self.compile(agent), is_async=self.is_async)
            self._plans[branch] = plan
        return plan

    async def run(self, root: Agent, message: Message) -> RunResult:
        """The whole run: the root agent's turn, the session saved, the result."""
        history = list(self.sessions.load(self.user_id, self.session_id))
        try:
            response = await self.agent_turn(
                self.plan(root, root.name), message, history, self.events
            )
        except StopRun as stop:
            self.events.append(StopEvent(root.name, root.name, time.time(), reason=stop.reason))
            self.sessions.save(self.user_id, self.session_id, _answered(history))
            return self._result("", "stopped", stop.reason, None)
        self.sessions.save(self.user_id, self.session_id, history)
        return self._result(response.text, "completed", None, response)

    async def agent_turn(
        self, plan: Plan, message: Message, history: list[Message], events: list[Event]
    ) -> ModelResponse:
        """``before_agent``, the model/tool loop, ``after_agent``; raises an unrecovered error."""
        events.append(UserMessageEvent(plan.agent.name, plan.branch, time.time(), message=message))
        match await plan.before(BEFORE_AGENT, AgentContext(plan.invocation, message)):
            case Halt(response):
                response = _checked_response(response, "a halted agent")
                history += (message, _assistant(response))
                events.append(
                    ModelResponseEvent(plan.agent.name, plan.branch, time.time(), response=response)
                )
                return response
            case Cont(ctx):
                pass
            case unreachable:
                assert_never(unreachable)
        # Only the loop's outcome reaches after_agent: an exception a callback raised
        # propagates as it is, never offered to a hook that could swallow it.
        outcome = await self.loop(plan, ctx.message, history, events)
        match await plan.after(AFTER_AGENT, outcome, ctx):
            case Success(response):
                return _checked_response(response, "an agent")
            case Failure(error):
                events.append(
                    ErrorEvent(
                        plan.agent.name, plan.branch, time.time(), error=error, operation="agent"
                    )
                )
                raise error

    async def loop(
        self, plan: Plan, message: Message, history: list[Message], events: list[Event]
    ) -> Outcome[ModelResponse]:
        """Model turns until one answers without tool calls, or a model call fails."""
        agent = plan.agent
        system = (Message("system", agent.instruction),) if agent.instruction else ()
        history.append(message)
        while True:
            self.steps += 1
            if self.steps > self.max_steps:
                raise MaxStepsExceeded(agent.name, self.max_steps)
            request = ModelRequest((*system, *history), agent.specs)
            match await self.model_call(plan, request, events):
                case Success(response):
                    pass
                case Failure() as failure:
                    return failure
                case unreachable:
                    assert_never(unreachable)
            history.append(_assistant(response))
            if not response.tool_calls:
                return Success(response)
            results = await self.tool_calls(plan, response.tool_calls, events)
            history.extend(
                Message("tool", result.content, tool_call_id=call.id, name=call.name)
                for call, result in zip(response.tool_calls, results, strict=True)
            )

    async def model_call(
        self, plan: Plan, request: ModelRequest, events: list[Event]
    ) -> Outcome[ModelResponse]:
        """One model call with its hooks; its response, or the error nobody recovered."""
        match await plan.before(BEFORE_MODEL, ModelContext(plan.invocation, request)):
            case Halt(response):
                pass
            case Cont(ctx):
                outcome, ctx = await self.attempts(plan, ON_MODEL_ERROR, ctx, self._generate(plan))
                match await plan.after(AFTER_MODEL, outcome, ctx):
                    case Success(response):
                        pass
                    case Failure(error) as failure:
                        events.append(
                            ErrorEvent(
                                plan.agent.name,
                                plan.branch,
                                time.time(),
                                error=error,
                                operation="model",
                            )
                        )
                        return failure
        response = _checked_response(response)
        events.append(
            ModelResponseEvent(plan.agent.name, plan.branch, time.time(), response=response)
        )
        return Success(response)

    async def tool_calls(
        self, plan: Plan, calls: Sequence[ToolCall], events: list[Event]
    ) -> list[ToolResult]:
        """Run the calls of one response: one by one, or concurrently in an async run.

        Events of concurrent calls are recorded per call and kept in the model's order.
        """
        if not self.is_async or len(calls) == 1:
            # One call, or a sync run: in order. An async run still sends a sync tool to
            # a thread, so it never blocks the event loop.
            threaded = self.is_async
            return [await self.tool_call(plan, call, events, threaded=threaded) for call in calls]
        sinks: list[list[Event]] = [[] for _ in calls]
        tasks = [
            asyncio.ensure_future(self.tool_call(plan, call, sink, threaded=True))
            for call, sink in zip(calls, sinks, strict=True)
        ]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            for sink in sinks:
                events.extend(sink)

    async def tool_call(
        self, plan: Plan, call: ToolCall, events: list[Event], *, threaded: bool
    ) -> ToolResult:
        """One tool call with its hooks; an unrecovered error becomes an error result."""
        events.append(ToolCallEvent(plan.agent.name, plan.branch, time.time(), call=call))
        match await plan.before(BEFORE_TOOL, ToolContext(plan.invocation, call), call):
            case Halt(result):
                pass
            case Cont(ctx):
                invoke = functools.partial(self._invoke, plan, events, threaded=threaded)
                outcome, ctx = await self.attempts(plan, ON_TOOL_ERROR, ctx, invoke, call)
                match await plan.after(AFTER_TOOL, outcome, ctx, call):
                    case Success(result):
                        pass
                    case Failure(error):
                        events.append(
                            ErrorEvent(
                                plan.agent.name,
                                plan.branch,
                                time.time(),
                                error=error,
                                operation="tool",
                            )
                        )
                        result = ToolResult(f"{type(error).__name__}: {error}", is_error=True)
        result = _to_tool_result(result)
        events.append(
            ToolResultEvent(plan.agent.name, plan.branch, time.time(), call=call, result=result)
        )
        return result

    async def attempts(
        self,
        plan: Plan,
        point: ErrorPoint[OpCtx, T],
        ctx: OpCtx,
        operation: Callable[[OpCtx], Awaitable[T]],
        call: ToolCall | None = None,
    ) -> tuple[Outcome[T], OpCtx]:
        """Run ``operation`` under the error hooks and the retry budget.

        Returns the outcome and the context of the last attempt.
        """
        while True:
            try:
                return Success(await operation(ctx)), ctx
            except StopRun:
                raise
            except Exception as exc:
                if any(exc is escalated for escalated in self.escalated):
                    raise
                error = exc
            match await plan.on_error(point, Failure(error), ctx, call):
                case Retry(retry_ctx) as retry:
                    if ctx.attempt >= self.retry.max_attempts:
                        error.add_note(
                            f"gave up after {ctx.attempt} attempt(s): the retry budget "
                            f"(RetryPolicy.max_attempts={self.retry.max_attempts}) is spent"
                        )
                        return Failure(error), ctx
                    wait = retry.delay
                    await self._sleep(
                        self.retry.delay(ctx.attempt, self.rng)
                        if wait is None
                        else min(wait, self.retry.max_delay)
                    )
                    ctx = replace(retry_ctx, attempt=ctx.attempt + 1)
                case Fallback(value):
                    return Success(value), ctx
                case Failure() as failure:
                    return failure, ctx

    def _generate(self, plan: Plan) -> Callable[[ModelContext], Awaitable[ModelResponse]]:
        model = plan.agent.model

        async def generate(ctx: ModelContext) -> ModelResponse:
            if plan.agent.model_is_async:
                response: ModelResponse = await model.generate(ctx.request)  # type: ignore[misc]
                return response
            return model.generate(ctx.request)  # type: ignore[return-value]

        return generate

    async def _invoke(
        self, plan: Plan, events: list[Event], ctx: ToolContext, *, threaded: bool
    ) -> ToolResult:
        agent, call = plan.agent, ctx.call
        tool = agent.tools.get(call.name)
        if tool is None:
            raise UnknownToolError(call.name, tuple(agent.tools))
        if isinstance(tool, Agent):
            request = call.args.get("request")
            if not isinstance(request, str) or set(call.args) != {"request"}:
                raise ToolArgumentsError(
                    call.name, call.args, "a sub-agent takes one str 'request'"
                )
            sub = self.plan(tool, f"{plan.branch}/{tool.name}")
            try:
                response = await self.agent_turn(sub, Message("user", request), [], events)
            except Exception as exc:
                # The sub-agent's own hooks had their chance: its unrecovered model error,
                # or a callback's exception, fails the whole run, not just this tool call.
                self.escalated.append(exc)
                raise
            return ToolResult(response.text)
        if agent.tool_is_async[call.name]:
            value = await tool.run(call.args)
        elif threaded:
            loop = asyncio.get_running_loop()
            value = await loop.run_in_executor(self.executor(), tool.run, call.args)
        else:
            value = tool.run(call.args)
        return _to_tool_result(value)

    async def _sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        if self.is_async:
            await asyncio.sleep(seconds)
        else:
            time.sleep(seconds)

    def _result(
        self, output: str, status: Any, reason: str | None, response: ModelResponse | None
    ) -> RunResult:
        return RunResult(output, tuple(self.events), status, reason, self.session_id, response)


def _answered(history: list[Message]) -> list[Message]:
    """``history`` without a last tool-calling turn whose calls did not all get results.

    A run stopped between a tool call and its result would otherwise save a
    conversation that model APIs refuse on the next turn.
    """
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.role == "assistant" and message.tool_calls:
            answered = {m.tool_call_id for m in history[index + 1 :] if m.role == "tool"}
            if answered.issuperset(call.id for call in message.tool_calls):
                return history
            return history[:index]
    return history


def _assistant(response: ModelResponse) -> Message:
    return Message("assistant", response.text, tool_calls=response.tool_calls)


def _checked_response(response: object, what: str = "a model call") -> ModelResponse:
    if isinstance(response, ModelResponse):
        return response
    msg = f"{what} must end in a ModelResponse, got {type(response).__name__} {response!r:.60}"
    raise TypeError(msg)


def _to_tool_result(value: object) -> ToolResult:
    """A tool's return value as the model will see it: text, or JSON for data."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    if value is None:
        return ToolResult("")
    try:
        return ToolResult(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return ToolResult(repr(value))
