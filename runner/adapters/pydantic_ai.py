"""hookline callbacks guarding a pydantic-ai agent: ``HooklineCapability(callbacks)``.

::

    from pydantic_ai import Agent
    from runner.adapters.pydantic_ai import HooklineCapability

    agent = Agent(model, capabilities=[HooklineCapability([guards, audit])])

The capability runs hookline's chains inside pydantic-ai's own hooks, with the same
algebra as hookline's ``Runner``:

- tools (``wrap_tool_execute``): ``before_tool`` -- ``Cont(ctx')`` runs the call with the
  changed arguments, ``Halt(result)`` answers it without running the tool, ``Pause``
  raises pydantic-ai's ``ApprovalRequired`` (the run ends with ``DeferredToolRequests``;
  ``deferred_results(decisions)`` turns hookline's ``Approve`` / ``Edit`` / ``Reject`` into
  the ``DeferredToolResults`` that resume it, and ``before_tool`` runs again with
  ``ctx.decision`` set); then per attempt the ``wrap_tool`` chain (first outermost, any
  number of ``call_next``) around the tool; a failure goes to ``on_tool_error``, whose
  ``Retry(ctx')`` runs the call again (through ``before_tool`` first when the call
  changed) within ``max_attempts`` and whose ``Fallback(result)`` answers it; then
  ``after_tool``;
- model calls: ``before_model`` (``before_model_request``: ``Cont`` rewrites the messages
  the model receives, ``Halt(response)`` answers without calling it), ``on_model_error``
  (``on_model_request_error``: ``Retry`` makes another attempt, with a changed request
  when it carries one, ``Fallback(response)`` answers), ``after_model``
  (``after_model_request``), and ``wrap_model`` (``wrap_model_request``, whose
  ``call_next`` runs at most once: pydantic-ai calls its model-request handler once);
- tiers, matches and observers: the list is compiled once (``guard`` first, ``audit``
  last, ``matched`` callbacks asked only for their tools and agents) and every dispatch
  is told to ``on_event`` observers as a ``HookEvent`` naming the deciding callback;
- one run's callbacks share an ``Invocation`` state; an agent run started inside a tool
  of a guarded run (a sub-agent) shares its parent's state, under the branch
  ``"parent/child"``.

What pydantic-ai cannot express is refused when the capability is made, never dropped
while a run goes on: ``before_agent`` / ``after_agent`` hooks (pydantic-ai's run hooks
cannot answer for the agent from before the run), and plain ``def`` wraps (pydantic-ai
awaits its handlers, so a wrap must be ``async def``). A message part hookline has no
form for (a user's image, a model's thinking) reaches a ``before_model`` hook as the
text around it and is kept unchanged in what the model receives unless the hook
changes that message.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import functools
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, TypeVar, assert_never, cast

try:
    from pydantic_ai import RunContext
    from pydantic_ai import messages as pa
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import (
        ApprovalRequired,
        RetryModelRequest,
        SkipModelRequest,
    )
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import DeferredToolResults, ToolApproved, ToolDefinition, ToolDenied
    from pydantic_ai.usage import RequestUsage
except ImportError as exc:  # pragma: no cover - the main environment has pydantic-ai
    msg = "runner.adapters.pydantic_ai needs pydantic-ai: pip install 'hookline[pydantic-ai]'"
    raise ImportError(msg, name=exc.name) from exc

from returns.result import Failure, Success

from hooks import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    WRAP_MODEL,
    WRAP_TOOL,
    Approve,
    CompiledCallbacks,
    Cont,
    Decision,
    Edit,
    ErrorResult,
    Fallback,
    Halt,
    HookEvent,
    InvalidCallbacks,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    OutcomeTag,
    Pause,
    Reject,
    Retry,
    State,
    StopRun,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    ToolSpec,
    Trace,
    Usage,
    WrapPoint,
    arun_after,
    arun_before,
    arun_on_error,
    arun_wrap,
    compile_callbacks,
    run_wrap,
)
from hooks import Outcome as HookOutcome
from hooks._points import AnyPoint

__all__ = ["HooklineCapability", "deferred_results"]

T = TypeVar("T")
C = TypeVar("C")
R = TypeVar("R")

# The decision a resumed call carries, in the metadata pydantic-ai hands back to it.
_DECISION: Final = "hookline_decision"
# The invocation of the guarded run the current task belongs to (a sub-agent's parent).
_CURRENT: Final[contextvars.ContextVar[Invocation | None]] = contextvars.ContextVar(
    "hookline_pydantic_ai_invocation", default=None
)
_UNMAPPED: Final = (BEFORE_AGENT, AFTER_AGENT)
_TOOL_POINTS: Final = (BEFORE_TOOL, WRAP_TOOL, ON_TOOL_ERROR, AFTER_TOOL)
_POINTS: Final = (BEFORE_MODEL, WRAP_MODEL, ON_MODEL_ERROR, AFTER_MODEL, *_TOOL_POINTS)


def deferred_results(decisions: Mapping[str, Decision], /) -> DeferredToolResults:
    """pydantic-ai's ``DeferredToolResults`` answering paused calls with hookline decisions.

    ``decisions`` maps each paused call's id (``DeferredToolRequests.approvals[i].tool_call_id``)
    to ``Approve()``, ``Edit(args)`` or ``Reject(message)``. Each call is handed back to the
    capability, whose ``before_tool`` hooks run again with ``ctx.decision`` set: an approved
    call runs, an edited one runs with the new arguments, a rejected one answers the model
    with the rejection's message (unless a guard halts or pauses it again).
    """
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    metadata: dict[str, dict[str, Any]] = {}
    for call_id, decision in decisions.items():
        key: object = call_id  # callers without a type checker pass anything
        if not isinstance(key, str):
            msg = f"deferred_results: call ids are str, got {type(key).__name__} {key!r:.60}"
            raise TypeError(msg)
        given: object = decision  # callers without a type checker pass anything
        if not isinstance(given, Approve | Edit | Reject):
            msg = (
                f"deferred_results: {call_id!r} needs Approve(), Edit(args) or "
                f"Reject(message) (no tool asks a question under pydantic-ai), "
                f"got {type(given).__name__} {given!r:.60}"
            )
            raise TypeError(msg)
        if isinstance(given, Edit):
            approvals[call_id] = ToolApproved(override_args=dict(given.args))
            metadata[call_id] = {_DECISION: ("edit",)}
        elif isinstance(given, Reject):
            approvals[call_id] = ToolApproved()
            metadata[call_id] = {_DECISION: ("reject", given.message)}
        else:
            approvals[call_id] = ToolApproved()
            metadata[call_id] = {_DECISION: ("approve",)}
    return DeferredToolResults(approvals=approvals, metadata=metadata)


def _decision(ctx: RunContext[Any], args: Mapping[str, Any]) -> Decision | None:
    """The human's decision on a resumed call (``None`` on a first pass)."""
    if not ctx.tool_call_approved:
        return None
    meta: object = ctx.tool_call_metadata
    given: object = (
        cast("dict[str, object]", meta).get(_DECISION) if isinstance(meta, dict) else None
    )
    match given:
        case ("reject", str() as message):
            return Reject(message)
        case ("edit",):
            return Edit(dict(args))
        case _:  # approved by hookline's decision or by pydantic-ai's own True
            return Approve()


class HooklineCapability(AbstractCapability[Any]):
    """A pydantic-ai capability running hookline ``callbacks`` at every model and tool call.

    ``callbacks`` is a callbacks list as ``Runner`` takes it (callbacks, ``guard(...)``,
    ``matched(...)``, ``audit(...)``), validated and compiled here once.
    ``max_attempts`` is each call's retry budget (``ctx.max_attempts``), as
    ``RetryPolicy.max_attempts`` is for the runner. Raises ``InvalidCallbacks`` for a list
    hookline refuses, or one with hooks pydantic-ai cannot run (``before_agent`` /
    ``after_agent``, a plain ``def`` wrap).
    """

    def __init__(self, callbacks: Sequence[object], /, *, max_attempts: int = 3) -> None:
        given: object = max_attempts
        if type(given) is not int or max_attempts < 1:
            msg = f"max_attempts must be an int >= 1, got {given!r:.60}"
            raise (ValueError if type(given) is int else TypeError)(msg)
        compiled = compile_callbacks(callbacks)
        _refuse_unmapped(compiled)
        self._callbacks: Final = compiled
        self._max_attempts: Final = max_attempts
        self._run: _Run | None = None
        # per agent name: the list as that agent dispatches it, decided once (the copies
        # for_run makes share it)
        self._setups: Final[dict[str, _Setup]] = {}

    async def for_run(self, ctx: RunContext[Any]) -> HooklineCapability:
        """A copy for one run, holding its invocation (shared with the parent run's when
        this run is a sub-agent's)."""
        fresh = copy.copy(self)
        fresh._run = _Run(self._setup(ctx), self._max_attempts, ctx, _CURRENT.get())
        return fresh

    async def wrap_run(self, ctx: RunContext[Any], *, handler: Any) -> Any:
        """Run the agent with this run's invocation as the one its tools' sub-agents join."""
        run = self._run
        token = _CURRENT.set(None if run is None else run.invocation)
        try:
            return await handler()
        finally:
            _CURRENT.reset(token)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """``before_model``: a changed request is what the model receives; ``Halt`` answers."""
        return await self._runner(ctx).before_model(request_context)

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Give a retried attempt the request its ``Retry`` carried."""
        return self._runner(ctx).prepare_model(request_context)

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> pa.ModelResponse:
        """``on_model_error``: ``Retry`` attempts again, ``Fallback`` answers, else raise."""
        return await self._runner(ctx).model_error(request_context, error)

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: pa.ModelResponse,
    ) -> pa.ModelResponse:
        """``after_model``: a replaced answer is what the agent goes on with."""
        return await self._runner(ctx).after_model(request_context, response)

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: Any
    ) -> pa.ModelResponse:
        """``wrap_model`` around pydantic-ai's whole model request (its ``call_next`` once)."""
        return await self._runner(ctx).wrap_model(request_context, handler)

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: pa.ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        """The tool points around one tool call (see the module's docstring)."""
        return await self._runner(ctx).tool(ctx, call, tool_def, args, handler)

    def _runner(self, ctx: RunContext[Any]) -> _Run:
        run = self._run
        if run is None:  # a hook called outside a run pydantic-ai started: one of its own
            run = self._run = _Run(self._setup(ctx), self._max_attempts, ctx, _CURRENT.get())
        return run

    def _setup(self, ctx: RunContext[Any]) -> _Setup:
        name = _agent_name(ctx)
        setup = self._setups.get(name)
        if setup is None:
            setup = self._setups[name] = _Setup(self._callbacks.for_agent(name))
        return setup

    def __repr__(self) -> str:
        return f"HooklineCapability({self._callbacks!r}, max_attempts={self._max_attempts})"


def _refuse_unmapped(compiled: CompiledCallbacks) -> None:
    """Refuse hooks pydantic-ai cannot run: the agent points, and plain ``def`` wraps."""
    for point in _UNMAPPED:
        chain = compiled.chain(point.name, point.kind)
        if chain.owners:
            owner = chain.owners[0]
            msg = (
                f"{owner!r:.80}.{point.name}: the pydantic-ai adapter cannot run agent hooks "
                "(pydantic-ai's run hooks cannot answer for the agent before it runs); "
                "guard the model call (before_model) or the agent's caller instead"
            )
            raise InvalidCallbacks(msg, callback=owner, attribute=point.name)
    for wrap in (WRAP_MODEL, WRAP_TOOL):
        chain = compiled.chain(wrap.name, wrap.kind)
        if chain.any_async and not chain.all_async:
            owner = chain.owners[chain.asyncs.index(False)]
            msg = (
                f"{owner!r:.80}.{wrap.name} is a plain def beside async def wraps; under "
                "pydantic-ai one point's wraps are all async def (awaited in the run's loop) "
                "or all plain def (run in a worker thread)"
            )
            raise InvalidCallbacks(msg, callback=owner, attribute=wrap.name)


async def _wrapped(
    callbacks: CompiledCallbacks,
    point: WrapPoint[C, R],
    ctx: C,
    operation: Callable[[C], Coroutine[Any, Any, HookOutcome[R]]],
    trace: Trace | None,
) -> HookOutcome[R]:
    """``point``'s wraps around ``operation``: awaited when they are ``async def``; plain
    ones run in a worker thread, each ``call_next`` running ``operation`` in this loop."""
    if callbacks.chain(point.name, point.kind).all_async:
        return await arun_wrap(callbacks, point, ctx, operation, trace=trace)
    loop = asyncio.get_running_loop()

    def call(inner: C) -> HookOutcome[R]:
        return asyncio.run_coroutine_threadsafe(operation(inner), loop).result()

    return await asyncio.to_thread(run_wrap, callbacks, point, ctx, call, trace=trace)


def _agent_name(ctx: RunContext[Any]) -> str:
    agent = ctx.agent
    return (agent.name if agent is not None else None) or "agent"


class _Setup:
    """One agent's callbacks as its runs dispatch them: the list, its observers, the
    points some callback defines."""

    __slots__ = ("callbacks", "defined", "observers")

    def __init__(self, callbacks: CompiledCallbacks) -> None:
        self.callbacks: Final = callbacks
        chain = callbacks.chain("on_event", "event")
        self.observers: Final = tuple(zip(chain.fns, chain.asyncs, chain.owners, strict=True))
        self.defined: Final = frozenset(point.name for point in _POINTS if callbacks.defines(point))


@dataclass(slots=True)
class _ModelCall:
    """One model request's hookline side: its context and what a Retry asked for."""

    ctx: ModelContext
    originals: list[tuple[Message, object]]  # each hook message and the part it came from
    retried: ModelRequestContext | None = None


class _Run:
    """One pydantic-ai run as hookline's callbacks see it: its invocation and dispatches."""

    __slots__ = (
        "callbacks",
        "converted",
        "defined",
        "invocation",
        "max_attempts",
        "model_call",
        "observers",
        "tools",
    )

    def __init__(
        self,
        setup: _Setup,
        max_attempts: int,
        ctx: RunContext[Any],
        parent: Invocation | None,
    ) -> None:
        name = _agent_name(ctx)
        self.tools: dict[str, ToolInfo] = {}
        self.invocation: Final = Invocation(
            id=ctx.run_id or uuid.uuid4().hex,
            agent=name,
            branch=name if parent is None else f"{parent.branch}/{name}",
            user_id="user" if parent is None else parent.user_id,
            session_id=(ctx.conversation_id or "") if parent is None else parent.session_id,
            state=State() if parent is None else parent.state,
            tools=self.tools,
        )
        self.callbacks: Final = setup.callbacks
        self.defined: Final = setup.defined
        self.observers: Final = setup.observers
        self.max_attempts: Final = max_attempts
        self.model_call: _ModelCall | None = None
        # each message of the run's history as hookline's, by identity (the history only
        # grows, so a request converts its new messages only)
        self.converted: dict[int, tuple[object, list[tuple[Message, object]]]] = {}

    # -- dispatch, told to observers

    async def _told(
        self,
        point_name: str,
        ctx: ModelContext | ToolContext,
        given: object,
        dispatch: Callable[[Trace | None], Awaitable[T]],
    ) -> T:
        """Run ``dispatch``, then tell the observers how it ended (and who decided)."""
        if not self.observers:
            return await dispatch(None)
        trace = Trace()
        at, began = time.time(), time.perf_counter()
        result: object = None
        outcome: OutcomeTag = "raised"
        error: BaseException | None = None
        try:
            result = done = await dispatch(trace)
        except Exception as exc:
            error = exc
            raise
        else:
            outcome, error = _tag(result)
            return done
        finally:
            call = ctx.call if isinstance(ctx, ToolContext) else None
            event = HookEvent(
                point=point_name,
                agent=self.invocation.agent,
                branch=self.invocation.branch,
                outcome=outcome,
                duration=time.perf_counter() - began,
                tool=None if call is None else call.name,
                call_id=None if call is None else call.id,
                error=error,
                attempt=ctx.attempt,
                time=at,
                callback=trace.description,
                run_id=self.invocation.id,
                context=ctx,
                given=given,
                result=result,
            )
            await self._tell(event)

    async def _tell(self, event: HookEvent) -> None:
        """Tell each observer ``event``; one that raises is skipped (an audit's ``StopRun``
        too), any other's ``StopRun`` stops the run."""
        for fn, is_async, owner in self.observers:
            try:
                told = fn(event)
                if is_async:
                    await told
            except StopRun:
                if self.callbacks.tier(owner) == "audit":
                    continue  # an audit only observes: not even StopRun changes the run
                raise
            except Exception:  # an observer never changes the run
                continue

    # -- model calls

    def _asks(self, callbacks: CompiledCallbacks, *points: AnyPoint) -> bool:
        """Whether a dispatch of ``points`` has anyone to ask or tell: a callback that
        defines one, or an observer (told of every dispatch). Without, it is skipped."""
        if self.observers:
            return True
        if callbacks is self.callbacks:
            defined = self.defined
            return any(point.name in defined for point in points)
        return any(callbacks.defines(point) for point in points)  # a tool's view

    def _messages(self, messages: Sequence[pa.ModelMessage]) -> list[tuple[Message, object]]:
        """``messages`` as hookline's, each with its source; converted once per run."""
        converted = self.converted
        out: list[tuple[Message, object]] = []
        for message in messages:
            known = converted.get(id(message))
            if known is None or known[0] is not message:
                known = converted[id(message)] = (message, _to_messages((message,)))
            out.extend(known[1])
        return out

    async def before_model(self, request_context: ModelRequestContext) -> ModelRequestContext:
        if not self._asks(self.callbacks, BEFORE_MODEL):
            self.model_call = None
            return request_context
        originals = self._messages(request_context.messages)
        request = ModelRequest(
            messages=tuple(message for message, _ in originals),
            tools=_specs(request_context),
        )
        ctx = ModelContext(self.invocation, request, max_attempts=self.max_attempts)
        self.model_call = _ModelCall(ctx, originals)
        callbacks = self.callbacks
        result = await self._told(
            BEFORE_MODEL.name,
            ctx,
            ctx,
            lambda trace: arun_before(callbacks, BEFORE_MODEL, ctx, trace=trace),
        )
        match result:
            case Cont(changed):
                self.model_call.ctx = changed
                if changed.request.messages == request.messages:
                    return request_context
                messages = _from_messages(changed.request.messages, originals)
                return replace(request_context, messages=messages)
            case Halt(response):
                raise SkipModelRequest(_to_response(response))
            case _:
                assert_never(result)

    def prepare_model(self, request_context: ModelRequestContext) -> ModelRequestContext:
        call = self.model_call
        if call is None or call.retried is None:
            return request_context
        retried, call.retried = call.retried, None
        return replace(request_context, messages=retried.messages)

    def _model_ctx(self, request_context: ModelRequestContext) -> ModelContext:
        call = self.model_call
        if call is None:  # a request no before_model saw (none of ours ran before it)
            originals = self._messages(request_context.messages)
            request = ModelRequest(tuple(m for m, _ in originals), _specs(request_context))
            call = self.model_call = _ModelCall(
                ModelContext(self.invocation, request, max_attempts=self.max_attempts),
                originals,
            )
        attempt = request_context.attempt
        if call.ctx.attempt != attempt:
            call.ctx = replace(call.ctx, attempt=attempt)
        return call.ctx

    async def model_error(
        self, request_context: ModelRequestContext, error: Exception
    ) -> pa.ModelResponse:
        if not self._asks(self.callbacks, ON_MODEL_ERROR):
            raise error
        ctx = self._model_ctx(request_context)
        callbacks = self.callbacks
        failed: Failure[Exception] = Failure(error)
        result = await self._told(
            ON_MODEL_ERROR.name,
            ctx,
            failed,
            lambda trace: arun_on_error(callbacks, ON_MODEL_ERROR, failed, ctx, trace=trace),
        )
        match result:
            case Retry(changed) if ctx.attempt < ctx.max_attempts:
                call = self.model_call
                assert call is not None  # _model_ctx made it
                call.ctx = replace(changed, attempt=ctx.attempt + 1)
                if changed.request.messages != ctx.request.messages:
                    messages = _from_messages(changed.request.messages, call.originals)
                    call.retried = replace(request_context, messages=messages)
                raise RetryModelRequest from error
            case Retry():
                raise error
            case Fallback(response):
                return _to_response(response)
            case Failure():
                raise result.failure()
            case _:
                assert_never(result)

    async def after_model(
        self, request_context: ModelRequestContext, response: pa.ModelResponse
    ) -> pa.ModelResponse:
        if not self._asks(self.callbacks, AFTER_MODEL):
            self.model_call = None
            return response
        ctx = self._model_ctx(request_context)
        callbacks = self.callbacks
        answered: HookOutcome[ModelResponse] = Success(_from_response(response))
        result = await self._told(
            AFTER_MODEL.name,
            ctx,
            answered,
            lambda trace: arun_after(callbacks, AFTER_MODEL, answered, ctx, trace=trace),
        )
        self.model_call = None
        if result is answered:
            return response
        match result:
            case Success(replaced):
                return _to_response(replaced)
            case Failure(error):
                raise error
            case _:
                assert_never(result)

    async def wrap_model(
        self,
        request_context: ModelRequestContext,
        handler: Callable[[ModelRequestContext], Awaitable[pa.ModelResponse]],
    ) -> pa.ModelResponse:
        callbacks = self.callbacks
        if not callbacks.defines(WRAP_MODEL):
            return await handler(request_context)
        originals = self._messages(request_context.messages)
        request = ModelRequest(tuple(m for m, _ in originals), _specs(request_context))
        ctx = ModelContext(self.invocation, request, max_attempts=self.max_attempts)
        answers: list[pa.ModelResponse] = []

        async def operation(inner: ModelContext) -> HookOutcome[ModelResponse]:
            if answers:
                msg = (
                    "a wrap_model under pydantic-ai calls call_next once: pydantic-ai runs its "
                    "model-request handler once per request"
                )
                raise RuntimeError(msg)
            sent = request_context
            if inner.request.messages != request.messages:
                sent = replace(sent, messages=_from_messages(inner.request.messages, originals))
            answer = await handler(sent)
            answers.append(answer)
            return Success(_from_response(answer))

        result = await self._told(
            WRAP_MODEL.name,
            ctx,
            ctx,
            lambda trace: _wrapped(callbacks, WRAP_MODEL, ctx, operation, trace),
        )
        match result:
            case Success(response):
                if answers and response == _from_response(answers[-1]):
                    return answers[-1]
                return _to_response(response)
            case Failure(error):
                raise error
            case _:
                assert_never(result)

    # -- tool calls

    def _info(self, tool_def: ToolDefinition) -> ToolInfo:
        info = self.tools.get(tool_def.name)
        if info is None:
            info = self.tools[tool_def.name] = ToolInfo(
                tool_def.name, description=tool_def.description or ""
            )
        return info

    async def tool(
        self,
        pa_ctx: RunContext[Any],
        part: pa.ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        info = self._info(tool_def)
        callbacks = self.callbacks
        if callbacks.by_tool:
            callbacks = callbacks.for_tool(info)
        if not pa_ctx.tool_call_approved and not self._asks(callbacks, *_TOOL_POINTS):
            return await handler(args)  # no callback of this call, no observer: the tool alone
        return await self._guarded(callbacks, pa_ctx, part, args, handler)

    async def _guarded(
        self,
        callbacks: CompiledCallbacks,
        pa_ctx: RunContext[Any],
        part: pa.ToolCallPart,
        args: dict[str, Any],
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        """One tool call through its chains: before, attempts (wraps, tool, error), after."""
        ctx = ToolContext(
            self.invocation,
            ToolCall(part.tool_call_id, part.tool_name, args),
            max_attempts=self.max_attempts,
            decision=_decision(pa_ctx, args),
        )
        ctx, halted = await self._before_tool(callbacks, ctx)
        if halted is not None:
            return await self._after_tool(callbacks, ctx, Success(halted), raw=None)
        if type(ctx.decision) is not Reject and not self._asks(callbacks, *_TOOL_POINTS[1:]):
            return await handler(dict(ctx.call.args))  # nothing wraps, recovers or reads it
        return await self._attempts(callbacks, ctx, handler)

    async def _attempts(
        self,
        callbacks: CompiledCallbacks,
        ctx: ToolContext,
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        """The call's attempts (wraps and tool, error hooks, retries), then ``after_tool``."""
        while True:
            outcome, raw = await self._attempt(callbacks, ctx, handler)
            if isinstance(outcome, Success):
                return await self._after_tool(callbacks, ctx, outcome, raw=raw)
            failed: Failure[Exception] = outcome
            current = ctx
            result = await self._told(
                ON_TOOL_ERROR.name,
                current,
                failed,
                functools.partial(_on_tool_error, callbacks, failed, current),
            )
            match result:
                case Retry(changed) if ctx.attempt < ctx.max_attempts:
                    next_ctx = replace(changed, attempt=ctx.attempt + 1)
                    if changed.call != ctx.call:  # what will run changed: the guards see it
                        next_ctx, halted = await self._before_tool(callbacks, next_ctx)
                        if halted is not None:
                            return await self._after_tool(
                                callbacks, next_ctx, Success(halted), raw=None
                            )
                    ctx = next_ctx
                case Fallback(value):
                    return await self._after_tool(callbacks, ctx, Success(value), raw=None)
                case Retry():
                    return await self._after_tool(callbacks, ctx, failed, raw=None)
                case _:
                    return await self._after_tool(callbacks, ctx, result, raw=None)

    async def _before_tool(
        self, callbacks: CompiledCallbacks, ctx: ToolContext
    ) -> tuple[ToolContext, ToolResult | None]:
        """``before_tool``: the context to run with, or the result that answers the call."""
        result = await self._told(
            BEFORE_TOOL.name,
            ctx,
            ctx,
            lambda trace: arun_before(callbacks, BEFORE_TOOL, ctx, trace=trace),
        )
        match result:
            case Cont(changed):
                if changed.call.name != ctx.call.name:
                    msg = (
                        f"before_tool renamed the call {ctx.call.name!r} to "
                        f"{changed.call.name!r}: pydantic-ai runs the tool the model called"
                    )
                    raise InvalidCallbacks(msg, callback=None, attribute=BEFORE_TOOL.name)
                return changed, None
            case Halt(value):
                return ctx, value
            case Pause(reason):
                raise ApprovalRequired({"reason": reason})
            case _:
                assert_never(result)

    async def _attempt(
        self,
        callbacks: CompiledCallbacks,
        ctx: ToolContext,
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> tuple[HookOutcome[ToolResult], object]:
        """One attempt: the wraps around the tool; its raw value when it ran last."""
        if ctx.decision is not None and type(ctx.decision) is Reject:
            return Success(ToolResult(ctx.decision.message, is_error=True)), None
        raws: list[tuple[ToolResult, object]] = []

        async def operation(inner: ToolContext) -> HookOutcome[ToolResult]:
            value = await handler(dict(inner.call.args))
            result = _to_result(value)
            raws.append((result, value))
            return Success(result)

        if not callbacks.defines(WRAP_TOOL):
            try:
                outcome = await operation(ctx)
            except _CONTROL:
                raise
            except Exception as exc:  # the tool's failure goes to on_tool_error
                return Failure(exc), None
        else:
            outcome = await self._told(
                WRAP_TOOL.name,
                ctx,
                ctx,
                lambda trace: _wrapped(callbacks, WRAP_TOOL, ctx, operation, trace),
            )
            if isinstance(outcome, Failure) and isinstance(outcome.failure(), _CONTROL):
                raise outcome.failure()
        if isinstance(outcome, Success) and raws and outcome.unwrap() is raws[-1][0]:
            return outcome, raws[-1][1]
        return outcome, None

    async def _after_tool(
        self,
        callbacks: CompiledCallbacks,
        ctx: ToolContext,
        outcome: HookOutcome[ToolResult],
        *,
        raw: object,
    ) -> Any:
        result = await self._told(
            AFTER_TOOL.name,
            ctx,
            outcome,
            lambda trace: arun_after(callbacks, AFTER_TOOL, outcome, ctx, trace=trace),
        )
        match result:
            case Success(value):
                if result is outcome and raw is not None and type(raw) is not ToolResult:
                    return raw  # the tool's own value, untouched
                return value.content
            case Failure(error):
                raise error
            case _:
                assert_never(result)


def _control_flow() -> tuple[type[BaseException], ...]:
    """pydantic-ai's control-flow exceptions: they pass through hookline's error hooks."""
    from pydantic_ai import exceptions

    names = (
        "ApprovalRequired",
        "CallDeferred",
        "ModelRetry",
        "SkipToolExecution",
        "ToolRetryError",
        "ToolFailedError",
    )
    found: list[type[BaseException]] = []
    for name in names:
        kind: object = getattr(exceptions, name, None)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            found.append(kind)
    return tuple(found)


_CONTROL: Final = _control_flow()


async def _on_tool_error(
    callbacks: CompiledCallbacks,
    failed: Failure[Exception],
    ctx: ToolContext,
    trace: Trace | None,
) -> ErrorResult[ToolContext, ToolResult]:
    return await arun_on_error(callbacks, ON_TOOL_ERROR, failed, ctx, trace=trace)


_TAGS: Final[dict[type, OutcomeTag]] = {
    Cont: "cont",
    Halt: "halt",
    Pause: "pause",
    Retry: "retry",
    Fallback: "fallback",
    Success: "success",
}


def _tag(result: object) -> tuple[OutcomeTag, BaseException | None]:
    """A dispatch result's tag for a ``HookEvent``, and the error it carries."""
    if isinstance(result, Failure):
        error: object = cast("Failure[object]", result).failure()
        return "failure", error if isinstance(error, BaseException) else None
    return _TAGS.get(type(result), "raised"), None


# -- conversions between pydantic-ai's messages and hookline's


def _to_messages(messages: Sequence[pa.ModelMessage]) -> list[tuple[Message, object]]:
    """One hookline message per pydantic-ai request part or response, each with its source."""
    converted: list[tuple[Message, object]] = []
    for message in messages:
        if isinstance(message, pa.ModelResponse):
            response = _from_response(message)
            converted.append(
                (Message("assistant", response.text, tool_calls=response.tool_calls), message)
            )
            continue
        for part in message.parts:
            converted.append((_from_request_part(part), part))
    return converted


def _from_request_part(part: object) -> Message:
    """A request part as hookline's message (one it has no form for: an empty user one,
    which stays as it was unless a hook changes it)."""
    message = Message("user", "")
    if isinstance(part, pa.SystemPromptPart):
        message = Message("system", part.content)
    elif isinstance(part, pa.UserPromptPart):
        content = part.content
        text = (
            content
            if isinstance(content, str)
            else "".join(item for item in content if isinstance(item, str))
        )
        message = Message("user", text)
    elif isinstance(part, pa.ToolReturnPart):
        message = Message(
            "tool", part.model_response_str(), tool_call_id=part.tool_call_id, name=part.tool_name
        )
    elif isinstance(part, pa.RetryPromptPart):  # pyright: ignore[reportDeprecated]  # older histories hold it
        retry = part.model_response()
        message = (
            Message("user", retry)
            if part.tool_name is None
            else Message(
                "tool", retry, tool_call_id=part.tool_call_id, name=part.tool_name, is_error=True
            )
        )
    return message


def _from_messages(
    messages: Sequence[Message], originals: Sequence[tuple[Message, object]]
) -> list[pa.ModelMessage]:
    """pydantic-ai messages for hookline ``messages``: the original part or response for
    each message a hook left unchanged, a new one for each it changed or added."""
    unused = list(originals)
    out: list[pa.ModelMessage] = []
    parts: list[Any] = []
    for message in messages:
        source: object = None
        for index, (before, origin) in enumerate(unused):
            if before == message:
                source = origin
                del unused[index]
                break
        if message.role == "assistant":
            if parts:
                out.append(pa.ModelRequest(parts=parts))
                parts = []
            if isinstance(source, pa.ModelResponse):
                out.append(source)
            else:
                out.append(
                    _to_response(ModelResponse(text=message.content, tool_calls=message.tool_calls))
                )
            continue
        parts.append(source if source is not None else _to_request_part(message))
    if parts:
        out.append(pa.ModelRequest(parts=parts))
    return out


def _to_request_part(message: Message) -> Any:
    if message.role == "system":
        return pa.SystemPromptPart(message.content)
    if message.role == "tool":
        return pa.ToolReturnPart(
            message.name or "",
            message.content,
            tool_call_id=message.tool_call_id or "",
            outcome="failed" if message.is_error else "success",
        )
    return pa.UserPromptPart(message.content)


def _from_response(response: pa.ModelResponse) -> ModelResponse:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in response.parts:
        if isinstance(part, pa.TextPart):
            texts.append(part.content)
        elif isinstance(part, pa.ToolCallPart):
            calls.append(ToolCall(part.tool_call_id, part.tool_name, part.args_as_dict()))
    usage = response.usage
    return ModelResponse(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
        model=response.model_name,
    )


def _to_response(response: ModelResponse) -> pa.ModelResponse:
    parts: list[pa.ModelResponsePart] = []
    if response.text:
        parts.append(pa.TextPart(response.text))
    parts.extend(
        pa.ToolCallPart(call.name, dict(call.args), tool_call_id=call.id)
        for call in response.tool_calls
    )
    usage = response.usage
    return pa.ModelResponse(
        parts=parts,
        usage=RequestUsage()
        if usage is None
        else RequestUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
        model_name=response.model,
    )


def _specs(request_context: ModelRequestContext) -> tuple[ToolSpec, ...]:
    tools = request_context.model_request_parameters.function_tools
    return tuple(
        ToolSpec(tool.name, tool.description or "", tool.parameters_json_schema) for tool in tools
    )


def _to_result(value: object) -> ToolResult:
    """A tool's value as hookline's ``ToolResult`` (text: a ``str`` as is, else its repr
    as pydantic-ai shows it to the model)."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    return ToolResult(pa.ToolReturnPart("", value).model_response_str())
