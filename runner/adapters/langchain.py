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
callback named.

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
from collections.abc import Callable, Mapping, Sequence
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
_SYNC_POINTS: Final = tuple(
    (p.name, p.kind)
    for p in (BEFORE_MODEL, AFTER_MODEL, ON_MODEL_ERROR, WRAP_MODEL, BEFORE_TOOL, AFTER_TOOL)
)
_AGENT_POINTS: Final = (
    (BEFORE_AGENT.name, BEFORE_AGENT.kind),
    (AFTER_AGENT.name, AFTER_AGENT.kind),
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
    is validated here (``InvalidCallbacks``); an async hook method is refused, since a
    LangChain agent invoked synchronously cannot await it.
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
        for point_name, kind in _SYNC_POINTS:
            compiled.sync_chain(point_name, kind)  # an async method: refused now
        for point in (ON_TOOL_ERROR, WRAP_TOOL):
            compiled.sync_chain(point.name, point.kind)
        for point_name, kind in _AGENT_POINTS:
            compiled.sync_chain(point_name, kind)
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
        self._observed: Final = bool(compiled.sync_chain("on_event", "event").fns)

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

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool call through hookline's tool points."""
        run = self._invocation(request.state, getattr(request, "runtime", None))
        if not self._tools and not self._observed:
            return _under(run, request, handler)
        raw = request.tool_call
        name = raw["name"]
        info = self._info(request.tool, name)
        compiled = self._compiled.for_tool(info)
        call = ToolCall(raw.get("id") or "", name, dict(raw.get("args", {})))
        ctx = ToolContext(run, call, 1, self._max_attempts)
        events = _Events(compiled, run) if self._observed else None

        answered: dict[int, ToolMessage] = {}  # id(result) -> the tool's own message

        def operation(attempt: ToolContext) -> Outcome[ToolResult]:
            if type(attempt.decision) is Reject:
                return Success(ToolResult(attempt.decision.message, is_error=True))
            c = attempt.call
            changed = request
            if c is not call:
                changed = request.override(
                    tool_call={
                        "name": c.name,
                        "args": dict(c.args),
                        "id": c.id,
                        "type": "tool_call",
                    }
                )
            answer = _under(run, changed, handler)
            result = _tool_result(answer)
            if isinstance(answer, ToolMessage) and c is call:
                answered[id(result)] = answer
            return Success(result)

        before = self._before_tool(compiled, ctx, events)
        if not isinstance(before, ToolContext):
            return _tool_message(before, call)
        ctx = before
        outcome = _attempts(
            compiled,
            (WRAP_TOOL, ON_TOOL_ERROR, AFTER_TOOL),
            ctx,
            operation,
            events=events,
            again=lambda changed: self._before_tool(compiled, changed, events),
        )
        match outcome:
            case Success(result):
                own = answered.get(id(result))  # unchanged by the hooks: the tool's own
                return _tool_message(result, ctx.call) if own is None else own
            case Failure(error):
                text = f"{type(error).__name__}: {error}"
                return _tool_message(ToolResult(text, is_error=True), ctx.call)
        raise AssertionError(outcome)  # pragma: no cover

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

    # -- model calls ----------------------------------------------------------------

    def wrap_model_call(
        self,
        request: LCModelRequest[Any],
        handler: Callable[[LCModelRequest[Any]], LCModelResponse[Any]],
    ) -> LCModelResponse[Any] | AIMessage:
        """Run the model call through hookline's model points."""
        if not self._models and not self._observed:
            return handler(request)
        run = self._invocation(request.state, request.runtime)
        compiled = self._compiled
        hl_request = ModelRequest(
            tuple(map(self._message, _with_system(request))), tuple(map(self._spec, request.tools))
        )
        answered: dict[int, AIMessage] = {}  # id(response) -> the model's own message
        ctx = ModelContext(run, hl_request, 1, self._max_attempts)
        events = _Events(compiled, run) if self._observed else None

        def operation(attempt: ModelContext) -> Outcome[ModelResponse]:
            changed = request
            if attempt.request is not hl_request:
                system, messages = _from_hookline(attempt.request.messages)
                changed = request.override(messages=messages, system_message=system)
            answer = handler(changed)
            answers = [m for m in answer.result if isinstance(m, AIMessage)]
            if len(answers) != 1 or len(answer.result) != 1:
                msg = (
                    "hookline's model hooks take one AIMessage per model call; the handler "
                    f"answered {[type(m).__name__ for m in answer.result]}"
                )
                raise TypeError(msg)
            response = _to_response(answers[0])
            answered[id(response)] = answers[0]
            return Success(response)

        def before(changed: ModelContext) -> ModelContext | ModelResponse:
            result = _dispatch(
                events, "before_model", changed, partial(_before_model, compiled, changed)
            )
            match result:
                case Cont(next_ctx):
                    return next_ctx
                case Halt(value):
                    return value
                case _:
                    assert_never(result)

        first = before(ctx)
        if isinstance(first, ModelResponse):
            return _ai_message(first)
        outcome = _attempts(
            compiled,
            (WRAP_MODEL, ON_MODEL_ERROR, AFTER_MODEL),
            first,
            operation,
            events=events,
            again=before,
        )
        match outcome:
            case Success(response):
                own = answered.get(id(response))  # unchanged by the hooks: the model's own
                return _ai_message(response) if own is None else own
            case Failure(error):
                raise error
        raise AssertionError(outcome)  # pragma: no cover

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

    __slots__ = ("observers", "run")

    def __init__(self, compiled: CompiledCallbacks, run: Invocation) -> None:
        self.observers: Final = compiled.sync_chain("on_event", "event").fns
        self.run: Final = run

    def tell(self, event: HookEvent) -> None:
        for observer in self.observers:
            try:
                observer(event)
            except Exception:
                _log.exception("observer %r raised on %s; the run goes on", observer, event)


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
            _event(
                events.run,
                point,
                ctx,
                "raised",
                clock=clock,
                started=started,
                trace=trace,
                error=error,
                result=None,
            )
        )
        raise
    seen: object = result
    tag = type(seen).__name__.lower()
    if tag not in {"cont", "halt", "pause", "success", "failure", "retry", "fallback"}:
        tag = "success"
    failed = _failure_of(seen)
    events.tell(
        _event(
            events.run,
            point,
            ctx,
            tag,
            clock=clock,
            started=started,
            trace=trace,
            error=failed,
            result=seen,
        )
    )
    return result


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
