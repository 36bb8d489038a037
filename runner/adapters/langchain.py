"""hookline callbacks guarding a LangChain 1.x agent: ``hookline_middleware(callbacks)``.

The middleware runs hookline's chains inside LangChain's ``wrap_model_call`` and
``wrap_tool_call``, in the order a ``Runner`` runs them: ``before_X`` (a ``Cont(ctx')``
rewrites the request or the call, a ``Halt`` answers without calling the handler), then
each attempt through the wraps (first outermost) to the handler, ``on_X_error`` on a
failed attempt (``Retry`` calls the handler again within ``max_attempts``, first through
``before_X`` when it changed the call; ``Fallback`` stands in), then ``after_X``. A
``Pause`` from ``before_tool`` is a LangGraph ``interrupt()`` (the agent needs a
checkpointer); resuming with ``Command(resume=Approve() | Edit(args) | Reject(msg))`` runs
``before_tool`` again with that decision in ``ctx.decision``. Tiers and matches apply as in
a run; observers (an ``audit`` tier too) are told every dispatch with the deciding
callback named. ``ainvoke`` runs the async twins (``awrap_model_call`` /
``awrap_tool_call``), awaiting ``async def`` hooks.

One invocation ``State`` per agent run (the thread and its latest user message), shared by
the sub-agents a tool of the run invokes: a ``Budget`` counts across them. Messages are
converted both ways: text, tool calls and tool results; content LangChain holds in other
blocks (images, files, reasoning) is refused with ``TypeError`` when it reaches a hook,
never dropped.

Install with ``pip install 'hookline[langchain]'``.
"""

from __future__ import annotations

import contextvars
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Final, TypeVar, assert_never, cast, final

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
    AgentContext,
    Approve,
    BeforeResult,
    CompiledCallbacks,
    Cont,
    Decision,
    Edit,
    ErrorResult,
    Fallback,
    Halt,
    HookEvent,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    PausableResult,
    Pause,
    Reject,
    Retry,
    State,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    ToolSpec,
    Trace,
    arun_after,
    arun_before,
    arun_on_error,
    arun_wrap,
    compile_callbacks,
    run_after,
    run_before,
    run_on_error,
    run_wrap,
)

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
    from langchain.agents.middleware import ModelRequest as LCModelRequest
    from langchain.agents.middleware import ModelResponse as LCModelResponse
    from langchain_core.messages import (
        AIMessage,
        AnyMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.runtime import Runtime
    from langgraph.types import Command, interrupt
except ImportError as error:  # pragma: no cover - the main environment has no LangChain
    msg = (
        "runner.adapters.langchain needs LangChain 1.x: pip install 'hookline[langchain]' "
        f"({error})"
    )
    raise ImportError(msg, name=error.name) from error

__all__ = ["HooklineMiddleware", "hookline_middleware", "resume_value"]

_log = logging.getLogger("hookline.adapters.langchain")
R = TypeVar("R")
M = TypeVar("M", bound=BaseMessage)

# The run a tool of which is running now: a sub-agent invoked by that tool shares its state.
_PARENT: contextvars.ContextVar[Invocation | None] = contextvars.ContextVar(
    "hookline_langchain_parent", default=None
)
_MESSAGES_KEPT: Final = 4096  # converted messages kept; past it, the cache starts over
_RUNS_KEPT: Final = 1024  # runs whose state is kept (a paused one until it resumes)


def hookline_middleware(
    callbacks: Sequence[object], /, *, name: str = "agent", max_attempts: int = 3
) -> HooklineMiddleware:
    """A LangChain ``AgentMiddleware`` running ``callbacks`` at each model and tool call
    of the agent it is given to (``create_agent(..., middleware=[...])``).

    ``name`` is the agent's name as hooks see it (``ctx.invocation.agent``, matches by
    agent); ``max_attempts`` is each call's retry budget (``ctx.max_attempts``). The list
    is validated here (``InvalidCallbacks``). An agent run with ``ainvoke`` awaits
    ``async def`` hooks (a wrap must then be ``async def``, as ``arun_wrap`` requires); one
    run with ``invoke`` refuses them with ``InvalidCallbacks`` before the call runs.
    """
    compiled = compile_callbacks(callbacks)
    if compiled.defines(BEFORE_AGENT) or compiled.defines(AFTER_AGENT):
        return _AgentMiddleware(compiled, name=name, max_attempts=max_attempts)
    return HooklineMiddleware(compiled, name=name, max_attempts=max_attempts)


class HooklineMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """hookline's chains around a LangChain agent's model and tool calls.

    LangChain adds a graph node for each ``before_agent`` / ``after_agent`` a middleware
    class defines, run at every invocation whatever it does: this class defines neither,
    and ``hookline_middleware`` gives a subclass that does only to callbacks defining
    ``before_agent`` or ``after_agent``.
    """

    def __init__(
        self, callbacks: Sequence[object] | CompiledCallbacks, /, *, name: str, max_attempts: int
    ) -> None:
        super().__init__()
        if type(max_attempts) is not int or max_attempts < 1:
            msg = f"max_attempts must be an int >= 1, got {max_attempts!r:.60}"
            raise ValueError(msg)
        given: object = name  # callers without a type checker pass anything
        if not isinstance(given, str) or not given:
            msg = f"name must be a non-empty str, got {name!r:.60}"
            raise TypeError(msg)
        compiled = compile_callbacks(callbacks).for_agent(name)
        self._compiled: Final = compiled
        self._agent: Final = name
        self._max_attempts: Final = max_attempts
        self._runs: OrderedDict[tuple[object, ...], Invocation] = OrderedDict()
        self._infos: dict[str, ToolInfo] = {}
        # id -> (object, its conversion): the object is held, so the id stays its own
        self._messages: dict[int, tuple[BaseMessage, Message]] = {}
        self._specs: dict[int, tuple[object, ToolSpec]] = {}
        # (run id, call id) -> the question of a call paused here, asked again on resume
        self._paused: dict[tuple[str, str], dict[str, object]] = {}
        self._models: Final = any(
            compiled.defines(p) for p in (BEFORE_MODEL, AFTER_MODEL, ON_MODEL_ERROR, WRAP_MODEL)
        )
        self._tools: Final = any(
            compiled.defines(p) for p in (BEFORE_TOOL, AFTER_TOOL, ON_TOOL_ERROR, WRAP_TOOL)
        )
        self._agents: Final = compiled.defines(BEFORE_AGENT) or compiled.defines(AFTER_AGENT)
        self._observed: Final = bool(compiled.chain("on_event", "event").fns)

    @property
    def name(self) -> str:
        """The middleware's name in the agent's graph."""
        return f"hookline_{self._agent}"

    # -- the run --------------------------------------------------------------------

    def _invocation(self, state: Any, runtime: Any) -> Invocation:
        parent = _PARENT.get()
        info = getattr(runtime, "execution_info", None)
        thread = getattr(info, "thread_id", None)
        user = _last(state, HumanMessage)
        key = (
            None if parent is None else parent.id,
            thread,
            None if user is None else (user.id or id(user)),
        )
        run = self._runs.get(key)
        if run is None:
            if parent is not None:
                run = Invocation(
                    parent.id,
                    self._agent,
                    f"{parent.branch}/{self._agent}",
                    parent.user_id,
                    parent.session_id,
                    parent.state,
                )
            else:
                run = Invocation(uuid.uuid4().hex, self._agent, self._agent, state=State())
            self._runs[key] = run
            if len(self._runs) > _RUNS_KEPT:
                self._runs.popitem(last=False)
        return run

    def _info(self, tool: Any, name: str) -> ToolInfo:
        info = self._infos.get(name)
        if info is None:
            description = getattr(tool, "description", "") or ""
            info = self._infos[name] = ToolInfo(name, description=str(description))
        return info

    # -- tool calls -----------------------------------------------------------------

    def _tool_start(
        self, request: ToolCallRequest
    ) -> tuple[Invocation, CompiledCallbacks, ToolCall, ToolContext, _Events | None]:
        raw = request.tool_call
        name = raw["name"]
        run = self._invocation(request.state, getattr(request, "runtime", None))
        compiled = self._compiled.for_tool(self._info(request.tool, name))
        call = ToolCall(raw.get("id") or "", name, dict(raw.get("args", {})))
        ctx = ToolContext(run, call, 1, self._max_attempts)
        return run, compiled, call, ctx, _Events(compiled, run) if self._observed else None

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool call through hookline's tool points."""
        if not self._tools and not self._observed:
            run = self._invocation(request.state, getattr(request, "runtime", None))
            return _under(run, request, handler)
        run, compiled, call, ctx, events = self._tool_start(request)
        answered: dict[int, ToolMessage] = {}  # id(result) -> the tool's own message

        def operation(attempt: ToolContext) -> Outcome[ToolResult]:
            refused = _refused(attempt)
            if refused is not None:
                return Success(refused)
            answer = _under(run, _tool_request(request, call, attempt.call), handler)
            return Success(_kept(answer, attempt.call is call, answered))

        before = self._before_tool(compiled, ctx, events)
        if not isinstance(before, ToolContext):
            return _tool_message(before, call)
        outcome = _attempts(
            compiled,
            (WRAP_TOOL, ON_TOOL_ERROR, AFTER_TOOL),
            before,
            operation,
            events=events,
            again=lambda changed: self._before_tool(compiled, changed, events),
        )
        return _tool_end(outcome, answered, before.call)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """``wrap_tool_call`` for an agent run with ``ainvoke``: async hooks are awaited
        (a wrap must be ``async def``, as ``arun_wrap`` requires)."""
        if not self._tools and not self._observed:
            run = self._invocation(request.state, getattr(request, "runtime", None))
            return await _aunder(run, request, handler)
        run, compiled, call, ctx, events = self._tool_start(request)
        answered: dict[int, ToolMessage] = {}

        async def operation(attempt: ToolContext) -> Outcome[ToolResult]:
            refused = _refused(attempt)
            if refused is not None:
                return Success(refused)
            answer = await _aunder(run, _tool_request(request, call, attempt.call), handler)
            return Success(_kept(answer, attempt.call is call, answered))

        async def again(changed: ToolContext) -> ToolContext | ToolResult:
            return await self._abefore_tool(compiled, changed, events)

        before = await again(ctx)
        if not isinstance(before, ToolContext):
            return _tool_message(before, call)
        outcome = await _aattempts(
            compiled,
            (WRAP_TOOL, ON_TOOL_ERROR, AFTER_TOOL),
            before,
            operation,
            events=events,
            again=again,
        )
        return _tool_end(outcome, answered, before.call)

    def _before_tool(
        self, compiled: CompiledCallbacks, ctx: ToolContext, events: _Events | None
    ) -> ToolContext | ToolResult:
        """``before_tool`` until it lets the call through or answers it; a ``Pause`` is an
        ``interrupt()`` whose resume value is the human's decision (``resume_value``)."""
        paused = (ctx.invocation.id, ctx.call.id)
        if paused in self._paused:  # resumed: the answer is waiting, ask it first
            ctx = _decided(ctx, interrupt(self._paused[paused]))
        while True:
            result = _dispatch(events, "before_tool", ctx, partial(_before_tool, compiled, ctx))
            match result:
                case Cont(changed):
                    self._paused.pop(paused, None)
                    return changed
                case Halt(value):
                    self._paused.pop(paused, None)
                    return value
                case Pause(reason):
                    question: dict[str, object] = {
                        "hookline": "pause",
                        "reason": reason,
                        "tool": ctx.call.name,
                        "args": dict(ctx.call.args),
                        "id": ctx.call.id,
                    }
                    self._paused[paused] = question
                    ctx = _decided(ctx, interrupt(question))

    async def _abefore_tool(
        self, compiled: CompiledCallbacks, ctx: ToolContext, events: _Events | None
    ) -> ToolContext | ToolResult:
        """``_before_tool`` for async runs."""
        paused = (ctx.invocation.id, ctx.call.id)
        if paused in self._paused:  # resumed: the answer is waiting, ask it first
            ctx = _decided(ctx, interrupt(self._paused[paused]))
        while True:
            result = await _adispatch(
                events, "before_tool", ctx, partial(_abefore_tool, compiled, ctx)
            )
            match result:
                case Cont(changed):
                    self._paused.pop(paused, None)
                    return changed
                case Halt(value):
                    self._paused.pop(paused, None)
                    return value
                case Pause(reason):
                    question: dict[str, object] = {
                        "hookline": "pause",
                        "reason": reason,
                        "tool": ctx.call.name,
                        "args": dict(ctx.call.args),
                        "id": ctx.call.id,
                    }
                    self._paused[paused] = question
                    ctx = _decided(ctx, interrupt(question))

    # -- model calls ----------------------------------------------------------------

    def _model_start(
        self, request: LCModelRequest[Any]
    ) -> tuple[ModelRequest, ModelContext, _Events | None]:
        run = self._invocation(request.state, request.runtime)
        asked = ModelRequest(
            tuple(map(self._message, _with_system(request))), tuple(map(self._spec, request.tools))
        )
        ctx = ModelContext(run, asked, 1, self._max_attempts)
        return asked, ctx, _Events(self._compiled, run) if self._observed else None

    def wrap_model_call(
        self,
        request: LCModelRequest[Any],
        handler: Callable[[LCModelRequest[Any]], LCModelResponse[Any]],
    ) -> LCModelResponse[Any] | AIMessage:
        """Run the model call through hookline's model points."""
        if not self._models and not self._observed:
            return handler(request)
        compiled = self._compiled
        asked, ctx, events = self._model_start(request)
        answered: dict[int, AIMessage] = {}  # id(response) -> the model's own message

        def operation(attempt: ModelContext) -> Outcome[ModelResponse]:
            answer = handler(_model_request(request, asked, attempt.request))
            return Success(_answer(answer, answered))

        def before(changed: ModelContext) -> ModelContext | ModelResponse:
            return _passed(
                _dispatch(
                    events, "before_model", changed, partial(_before_model, compiled, changed)
                )
            )

        first = before(ctx)
        if isinstance(first, ModelResponse):
            return _ai_message(first)
        points = (WRAP_MODEL, ON_MODEL_ERROR, AFTER_MODEL)
        outcome = _attempts(compiled, points, first, operation, events=events, again=before)
        return _model_end(outcome, answered)

    async def awrap_model_call(
        self,
        request: LCModelRequest[Any],
        handler: Callable[[LCModelRequest[Any]], Awaitable[LCModelResponse[Any]]],
    ) -> LCModelResponse[Any] | AIMessage:
        """``wrap_model_call`` for an agent run with ``ainvoke``."""
        if not self._models and not self._observed:
            return await handler(request)
        compiled = self._compiled
        asked, ctx, events = self._model_start(request)
        answered: dict[int, AIMessage] = {}

        async def operation(attempt: ModelContext) -> Outcome[ModelResponse]:
            answer = await handler(_model_request(request, asked, attempt.request))
            return Success(_answer(answer, answered))

        async def before(changed: ModelContext) -> ModelContext | ModelResponse:
            go = partial(_abefore_model, compiled, changed)
            return _passed(await _adispatch(events, "before_model", changed, go))

        first = await before(ctx)
        if isinstance(first, ModelResponse):
            return _ai_message(first)
        points = (WRAP_MODEL, ON_MODEL_ERROR, AFTER_MODEL)
        outcome = await _aattempts(compiled, points, first, operation, events=events, again=before)
        return _model_end(outcome, answered)

    def _message(self, message: BaseMessage) -> Message:
        """``message`` as hooks see it, converted once per message object."""
        key = id(message)
        kept = self._messages.get(key)
        if kept is not None and kept[0] is message:
            return kept[1]
        converted = _to_hookline(message)
        if len(self._messages) >= _MESSAGES_KEPT:
            self._messages.clear()
        self._messages[key] = (message, converted)
        return converted

    def _spec(self, tool: object) -> ToolSpec:
        """``tool`` as a hook's request lists it, converted once per tool object."""
        kept = self._specs.get(id(tool))
        if kept is not None and kept[0] is tool:
            return kept[1]
        spec = _spec(tool)
        self._specs[id(tool)] = (tool, spec)
        return spec


@final
class _AgentMiddleware(HooklineMiddleware):
    """``HooklineMiddleware`` with hookline's agent points as LangChain's agent hooks."""

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """``before_agent`` on the run's user message: a ``Halt`` answers it and ends the
        run before the model is called; a ``Cont`` with a changed message replaces it."""
        if not self._agents and not self._observed:
            return None
        run = self._invocation(state, runtime)
        user = _last(state, HumanMessage)
        if user is None:
            return None
        ctx = AgentContext(run, _to_hookline(user))
        events = _Events(self._compiled, run) if self._observed else None
        result = _dispatch(events, "before_agent", ctx, partial(_before_agent, self._compiled, ctx))
        match result:
            case Cont(changed):
                if changed.message == ctx.message:
                    return None
                return {"messages": [HumanMessage(changed.message.content, id=user.id)]}
            case Halt(response):
                return {"messages": [_ai_message(response)], "jump_to": "end"}
            case _:
                assert_never(result)

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """``after_agent`` on the run's answer (its last AI message): a changed outcome
        replaces it; a ``Failure`` is raised."""
        if not self._agents and not self._observed:
            return None
        answer = _last(state, AIMessage)
        user = _last(state, HumanMessage)
        if answer is None or user is None:
            return None
        run = self._invocation(state, runtime)
        ctx = AgentContext(run, _to_hookline(user))
        response = _to_response(answer)
        events = _Events(self._compiled, run) if self._observed else None
        outcome: Outcome[ModelResponse] = _dispatch(
            events,
            "after_agent",
            ctx,
            partial(_after, self._compiled, AFTER_AGENT, Success(response), ctx),
        )
        match outcome:
            case Success(changed):
                if changed == response:
                    return None
                replaced = _ai_message(changed)
                return {"messages": [replaced.model_copy(update={"id": answer.id})]}
            case Failure(error):
                raise error
        assert_never(outcome)  # pragma: no cover


# -- the pieces both forms share ------------------------------------------------------


def _refused(ctx: ToolContext) -> ToolResult | None:
    """What stands in for a call a human rejected (the guards let the rejection through)."""
    decision = ctx.decision
    return ToolResult(decision.message, is_error=True) if type(decision) is Reject else None


def _tool_request(request: ToolCallRequest, asked: ToolCall, call: ToolCall) -> ToolCallRequest:
    """``request`` carrying ``call`` (itself when no hook changed the call)."""
    if call is asked:
        return request
    changed = {"name": call.name, "args": dict(call.args), "id": call.id, "type": "tool_call"}
    return request.override(tool_call=cast("Any", changed))


def _kept(
    answer: ToolMessage | Command[Any], unchanged: bool, answered: dict[int, ToolMessage]
) -> ToolResult:
    """The tool's answer as hooks see it, its own message remembered when the call was the
    model's own."""
    result = _tool_result(answer)
    if unchanged and isinstance(answer, ToolMessage):
        answered[id(result)] = answer
    return result


def _tool_end(
    outcome: Outcome[ToolResult], answered: dict[int, ToolMessage], call: ToolCall
) -> ToolMessage:
    """The message the agent keeps: the tool's own when no hook changed its result."""
    match outcome:
        case Success(result):
            own = answered.get(id(result))
            return _tool_message(result, call) if own is None else own
        case Failure(error):
            text = f"{type(error).__name__}: {error}"
            return _tool_message(ToolResult(text, is_error=True), call)
    raise AssertionError(outcome)  # pragma: no cover


def _model_request(
    request: LCModelRequest[Any], asked: ModelRequest, changed: ModelRequest
) -> LCModelRequest[Any]:
    """``request`` carrying the hooks' ``changed`` messages (itself when unchanged)."""
    if changed is asked:
        return request
    system, messages = _from_hookline(changed.messages)
    return request.override(messages=messages, system_message=system)


def _answer(answer: LCModelResponse[Any], answered: dict[int, AIMessage]) -> ModelResponse:
    """The model's one AI message as hooks see it, the message itself remembered."""
    answers = [m for m in answer.result if isinstance(m, AIMessage)]
    if len(answers) != 1 or len(answer.result) != 1:
        msg = (
            "hookline's model hooks take one AIMessage per model call; the handler "
            f"answered {[type(m).__name__ for m in answer.result]}"
        )
        raise TypeError(msg)
    response = _to_response(answers[0])
    answered[id(response)] = answers[0]
    return response


def _model_end(outcome: Outcome[ModelResponse], answered: dict[int, AIMessage]) -> AIMessage:
    """The AI message the agent keeps (the model's own when unchanged); a failure raised."""
    match outcome:
        case Success(response):
            own = answered.get(id(response))
            return _ai_message(response) if own is None else own
        case Failure(error):
            raise error
    raise AssertionError(outcome)  # pragma: no cover


def _passed(result: BeforeResult[ModelContext, ModelResponse]) -> ModelContext | ModelResponse:
    match result:
        case Cont(ctx):
            return ctx
        case Halt(value):
            return value
        case _:
            assert_never(result)


async def _aunder(
    run: Invocation,
    request: ToolCallRequest,
    handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
) -> ToolMessage | Command[Any]:
    """``_under`` for async handlers."""
    token = _PARENT.set(run)
    try:
        return await handler(request)
    finally:
        _PARENT.reset(token)


# -- one guarded operation ----------------------------------------------------------


def _under(
    run: Invocation,
    request: ToolCallRequest,
    handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
) -> ToolMessage | Command[Any]:
    """The handler, with ``run`` as the parent of any agent the tool invokes."""
    token = _PARENT.set(run)
    try:
        return handler(request)
    finally:
        _PARENT.reset(token)


@final
class _Events:
    """Tells a list's observers of each dispatch, naming the deciding callback."""

    __slots__ = ("asyncs", "observers", "run")

    def __init__(self, compiled: CompiledCallbacks, run: Invocation) -> None:
        chain = compiled.chain("on_event", "event")
        self.observers: Final = chain.fns
        self.asyncs: Final = chain.asyncs
        self.run: Final = run

    def tell(self, event: HookEvent) -> None:
        for observer, is_async in zip(self.observers, self.asyncs, strict=True):
            try:
                told = observer(event)
                if is_async:  # an async observer in a sync place: run to its end here
                    _finish(told)
            except Exception:
                _log.exception("observer %r raised on %s; the run goes on", observer, event)

    async def atell(self, event: HookEvent) -> None:
        for observer, is_async in zip(self.observers, self.asyncs, strict=True):
            try:
                told = observer(event)
                if is_async:
                    await told
            except Exception:
                _log.exception("observer %r raised on %s; the run goes on", observer, event)


def _finish(awaitable: Any) -> None:
    """Drive an async observer's coroutine to its end without an event loop (it must not
    wait on one: an observer only records)."""
    try:
        awaitable.send(None)
    except StopIteration:
        return
    awaitable.close()
    msg = "an async observer awaited something in a sync run; use ainvoke"
    raise RuntimeError(msg)


def _dispatch(
    events: _Events | None,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    go: Callable[[Trace | None], R],
) -> R:
    """Run one dispatch; with observers, trace it and tell them."""
    if events is None:
        return go(None)
    trace = Trace()
    started, clock = time.time(), time.perf_counter()
    try:
        result = go(trace)
    except Exception as error:
        events.tell(
            _told(events.run, point, ctx, (started, clock), trace=trace, result=None, raised=error)
        )
        raise
    events.tell(
        _told(events.run, point, ctx, (started, clock), trace=trace, result=result, raised=None)
    )
    return result


async def _adispatch(
    events: _Events | None,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    go: Callable[[Trace | None], Awaitable[R]],
) -> R:
    """``_dispatch`` for async dispatches and observers."""
    if events is None:
        return await go(None)
    trace = Trace()
    started, clock = time.time(), time.perf_counter()
    try:
        result = await go(trace)
    except Exception as error:
        await events.atell(
            _told(events.run, point, ctx, (started, clock), trace=trace, result=None, raised=error)
        )
        raise
    await events.atell(
        _told(events.run, point, ctx, (started, clock), trace=trace, result=result, raised=None)
    )
    return result


def _told(
    run: Invocation,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    when: tuple[float, float],
    *,
    trace: Trace,
    result: object,
    raised: BaseException | None,
) -> HookEvent:
    """The event of one dispatch: its result's tag, or ``"raised"``."""
    tag = "raised" if raised is not None else type(result).__name__.lower()
    if tag not in {"cont", "halt", "pause", "success", "failure", "retry", "fallback", "raised"}:
        tag = "success"
    error = raised if raised is not None else _failure_of(result)
    started, clock = when
    return _event(
        run,
        point,
        ctx,
        tag,
        clock=clock,
        started=started,
        trace=trace,
        error=error,
        result=result,
    )


def _failure_of(result: object) -> BaseException | None:
    """The error a ``Failure`` carries; ``None`` for any other result."""
    if isinstance(result, Failure):
        error: BaseException = cast("Failure[Exception]", result).failure()
        return error
    return None


def _event(
    run: Invocation,
    point: str,
    ctx: ToolContext | ModelContext | AgentContext,
    tag: Any,
    *,
    clock: float,
    started: float,
    trace: Trace,
    error: BaseException | None,
    result: object,
) -> HookEvent:
    call = ctx.call if isinstance(ctx, ToolContext) else None
    decider = trace.callback
    return HookEvent(
        point,
        run.agent,
        run.branch,
        tag,
        time.perf_counter() - clock,
        tool=None if call is None else call.name,
        call_id=None if call is None else call.id,
        error=error,
        attempt=1 if isinstance(ctx, AgentContext) else ctx.attempt,
        time=started,
        callback=None if decider is None else _describe(decider),
        run_id=run.id,
        context=ctx,
        given=ctx,
        result=result,
    )


def _describe(callback: object) -> str:
    from hooks._errors import describe  # the names observers see in a Runner's events

    return describe(callback)


C = TypeVar("C", ToolContext, ModelContext)
T = TypeVar("T", ToolResult, ModelResponse)


def _attempts(
    compiled: CompiledCallbacks,
    points: tuple[Any, Any, Any],
    ctx: C,
    operation: Callable[[C], Outcome[T]],
    *,
    events: _Events | None,
    again: Callable[[C], C | T],
) -> Outcome[T]:
    """Attempts through the wraps until one succeeds or the error hooks give up, then the
    after hooks; a ``Retry`` that changed the call passes ``again`` (the before hooks)."""
    wrap, on_error, after = points
    while True:
        outcome: Outcome[T] = _dispatch(
            events, wrap.name, ctx, partial(_wrap, compiled, wrap, ctx, operation)
        )
        if isinstance(outcome, Failure):
            recovered: ErrorResult[C, T] = _dispatch(
                events, on_error.name, ctx, partial(_on_error, compiled, on_error, outcome, ctx)
            )
            match recovered:
                case Retry(changed) if ctx.attempt < ctx.max_attempts:
                    changed = replace(changed, attempt=ctx.attempt + 1)
                    if _subject(changed) != _subject(ctx):
                        passed = again(changed)
                        if not isinstance(passed, ToolContext | ModelContext):
                            outcome = Success(passed)
                            break
                        changed = passed
                    ctx = changed
                    continue
                case Fallback(value):
                    outcome = Success(value)
                case Failure():
                    outcome = recovered
                case _:  # a Retry past the budget: the failure stands
                    pass
        break
    ended: Outcome[T] = _dispatch(
        events, after.name, ctx, partial(_after, compiled, after, outcome, ctx)
    )
    return ended


async def _aattempts(
    compiled: CompiledCallbacks,
    points: tuple[Any, Any, Any],
    ctx: C,
    operation: Callable[[C], Awaitable[Outcome[T]]],
    *,
    events: _Events | None,
    again: Callable[[C], Awaitable[C | T]],
) -> Outcome[T]:
    """``_attempts`` for async runs: the same order, every dispatch awaited."""
    wrap, on_error, after = points
    while True:
        outcome: Outcome[T] = await _adispatch(
            events, wrap.name, ctx, partial(_awrap, compiled, wrap, ctx, operation)
        )
        if isinstance(outcome, Failure):
            go = partial(_aon_error, compiled, on_error, outcome, ctx)
            recovered: ErrorResult[C, T] = await _adispatch(events, on_error.name, ctx, go)
            match recovered:
                case Retry(changed) if ctx.attempt < ctx.max_attempts:
                    changed = replace(changed, attempt=ctx.attempt + 1)
                    if _subject(changed) != _subject(ctx):
                        passed = await again(changed)
                        if not isinstance(passed, ToolContext | ModelContext):
                            outcome = Success(passed)
                            break
                        changed = passed
                    ctx = changed
                    continue
                case Fallback(value):
                    outcome = Success(value)
                case Failure():
                    outcome = recovered
                case _:  # a Retry past the budget: the failure stands
                    pass
        break
    go_after = partial(_aafter, compiled, after, outcome, ctx)
    ended: Outcome[T] = await _adispatch(events, after.name, ctx, go_after)
    return ended


# Each dispatch as a function of the trace (``None``: no observer asked for one).


def _before_tool(
    compiled: CompiledCallbacks, ctx: ToolContext, trace: Trace | None
) -> PausableResult[ToolContext, ToolResult]:
    return run_before(compiled, BEFORE_TOOL, ctx, trace=trace)


def _before_agent(
    compiled: CompiledCallbacks, ctx: AgentContext, trace: Trace | None
) -> BeforeResult[AgentContext, ModelResponse]:
    return run_before(compiled, BEFORE_AGENT, ctx, trace=trace)


def _last(state: object, kind: type[M]) -> M | None:
    """The last message of ``kind`` in an agent state's messages."""
    messages: Sequence[object] = (
        cast("Mapping[str, Sequence[object]]", state).get("messages", ())
        if isinstance(state, Mapping)
        else ()
    )
    return next((m for m in reversed(messages) if isinstance(m, kind)), None)


def _before_model(
    compiled: CompiledCallbacks, ctx: ModelContext, trace: Trace | None
) -> BeforeResult[ModelContext, ModelResponse]:
    return run_before(compiled, BEFORE_MODEL, ctx, trace=trace)


def _wrap(
    compiled: CompiledCallbacks,
    point: Any,
    ctx: Any,
    operation: Callable[[Any], Outcome[Any]],
    trace: Trace | None,
) -> Any:
    return run_wrap(compiled, point, ctx, operation, trace=trace)


def _on_error(
    compiled: CompiledCallbacks, point: Any, failure: Any, ctx: Any, trace: Trace | None
) -> Any:
    return run_on_error(compiled, point, failure, ctx, trace=trace)


def _after(
    compiled: CompiledCallbacks, point: Any, outcome: Any, ctx: Any, trace: Trace | None
) -> Any:
    return run_after(compiled, point, outcome, ctx, trace=trace)


async def _abefore_tool(
    compiled: CompiledCallbacks, ctx: ToolContext, trace: Trace | None
) -> PausableResult[ToolContext, ToolResult]:
    return await arun_before(compiled, BEFORE_TOOL, ctx, trace=trace)


async def _abefore_model(
    compiled: CompiledCallbacks, ctx: ModelContext, trace: Trace | None
) -> BeforeResult[ModelContext, ModelResponse]:
    return await arun_before(compiled, BEFORE_MODEL, ctx, trace=trace)


async def _awrap(
    compiled: CompiledCallbacks,
    point: Any,
    ctx: Any,
    operation: Callable[[Any], Awaitable[Outcome[Any]]],
    trace: Trace | None,
) -> Any:
    return await arun_wrap(compiled, point, ctx, operation, trace=trace)


async def _aon_error(
    compiled: CompiledCallbacks, point: Any, failure: Any, ctx: Any, trace: Trace | None
) -> Any:
    return await arun_on_error(compiled, point, failure, ctx, trace=trace)


async def _aafter(
    compiled: CompiledCallbacks, point: Any, outcome: Any, ctx: Any, trace: Trace | None
) -> Any:
    return await arun_after(compiled, point, outcome, ctx, trace=trace)


def _subject(ctx: ToolContext | ModelContext) -> object:
    return ctx.call if isinstance(ctx, ToolContext) else ctx.request


# -- conversions ----------------------------------------------------------------------


def resume_value(decision: Decision, /) -> dict[str, object]:
    """What ``Command(resume=...)`` carries for a human's ``decision`` on a paused call: a
    plain dict, which LangGraph's checkpointers can store (``Approve()`` is
    ``{"decision": "approve"}``, ``Edit(args)`` adds ``"args"``, ``Reject(message)``
    ``"message"``)."""
    match decision:
        case Approve():
            return {"decision": "approve"}
        case Edit(args):
            return {"decision": "edit", "args": dict(args)}
        case Reject(message):
            return {"decision": "reject", "message": message}
        case _:
            pass
    msg = f"resume_value takes Approve(), Edit(args) or Reject(message), got {decision!r:.80}"
    raise TypeError(msg)


def _decision(value: object) -> Decision:
    if isinstance(value, Mapping):
        answer = cast("Mapping[str, object]", value)
        kind, args, message = answer.get("decision"), answer.get("args"), answer.get("message")
        if kind == "approve":
            return Approve()
        if kind == "edit" and isinstance(args, Mapping):
            return Edit(dict(cast("Mapping[str, object]", args)))
        if kind == "reject" and isinstance(message, str):
            return Reject(message)
    msg = (
        "a paused hookline call resumes with Command(resume=resume_value(Approve() | "
        f"Edit(args) | Reject(message))), got {value!r:.80}"
    )
    raise TypeError(msg)


def _decided(ctx: ToolContext, value: object) -> ToolContext:
    """``ctx`` with the human's decision: an ``Edit``'s arguments in place of the call's."""
    decision = _decision(value)
    call = replace(ctx.call, args=dict(decision.args)) if type(decision) is Edit else ctx.call
    return replace(ctx, call=call, decision=decision)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    texts: list[str] = []
    blocks: list[object] = list(content)  # as LangChain holds them, whatever its types say
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":  # pyright: ignore[reportUnknownMemberType]
            texts.append(str(block.get("text", "")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            msg = (
                f"hookline's hooks cannot see a {type(message).__name__}'s {kind!r} content "
                "block (text, tool calls and tool results map); refusing rather than dropping it"
            )
            raise TypeError(msg)
    return "".join(texts)


def _with_system(request: LCModelRequest[Any]) -> list[AnyMessage | SystemMessage]:
    system = request.system_message
    return [system, *request.messages] if system is not None else list(request.messages)


def _to_hookline(message: BaseMessage) -> Message:
    if isinstance(message, SystemMessage):
        return Message("system", _text(message))
    if isinstance(message, HumanMessage):
        return Message("user", _text(message))
    if isinstance(message, AIMessage):
        calls = tuple(
            ToolCall(c.get("id") or "", c["name"], dict(c["args"])) for c in message.tool_calls
        )
        return Message("assistant", _text(message), tool_calls=calls)
    if isinstance(message, ToolMessage):
        return Message(
            "tool",
            _text(message),
            tool_call_id=message.tool_call_id,
            name=message.name,
            is_error=message.status == "error",
        )
    msg = (
        f"hookline's hooks cannot see a {type(message).__name__}; refusing rather than dropping it"
    )
    raise TypeError(msg)


def _from_hookline(messages: Sequence[Message]) -> tuple[SystemMessage | None, list[AnyMessage]]:
    system: SystemMessage | None = None
    out: list[AnyMessage] = []
    for m in messages:
        if m.parts:
            msg = "a hook's message with parts (images, files, reasoning) cannot go to LangChain"
            raise TypeError(msg)
        if m.role == "system" and system is None and not out:
            system = SystemMessage(m.content)
        elif m.role == "system":
            out.append(SystemMessage(m.content))
        elif m.role == "user":
            out.append(HumanMessage(m.content))
        elif m.role == "assistant":
            out.append(_ai_message(ModelResponse(text=m.content, tool_calls=m.tool_calls)))
        else:
            out.append(
                ToolMessage(
                    m.content,
                    tool_call_id=m.tool_call_id or "",
                    name=m.name,
                    status="error" if m.is_error else "success",
                )
            )
    return system, out


def _spec(tool: object) -> ToolSpec:
    if isinstance(tool, Mapping):
        schema = cast("Mapping[str, object]", tool)
        name = str(schema.get("name", ""))
        return ToolSpec(name or "tool", str(schema.get("description", "")))
    return ToolSpec(str(getattr(tool, "name", "tool")), str(getattr(tool, "description", "")))


def _to_response(message: AIMessage) -> ModelResponse:
    calls = tuple(
        ToolCall(c.get("id") or "", c["name"], dict(c["args"])) for c in message.tool_calls
    )
    return ModelResponse(text=_text(message), tool_calls=calls)


def _ai_message(response: ModelResponse) -> AIMessage:
    if response.parts:
        msg = "a hook's response with reasoning parts cannot go to LangChain"
        raise TypeError(msg)
    return AIMessage(
        response.text,
        tool_calls=[
            {"name": c.name, "args": dict(c.args), "id": c.id, "type": "tool_call"}
            for c in response.tool_calls
        ],
    )


def _tool_result(answer: ToolMessage | Command[Any]) -> ToolResult:
    if not isinstance(answer, ToolMessage):
        msg = f"hookline's tool hooks take a ToolMessage per call; the tool answered {answer!r:.80}"
        raise TypeError(msg)
    return ToolResult(_text(answer), is_error=answer.status == "error")


def _tool_message(result: ToolResult, call: ToolCall) -> ToolMessage:
    if result.parts:
        msg = "a hook's tool result with parts (images, files) cannot go to LangChain"
        raise TypeError(msg)
    return ToolMessage(
        result.content,
        tool_call_id=call.id,
        name=call.name,
        status="error" if result.is_error else "success",
    )
