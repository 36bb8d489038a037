"""The middleware: hookline's chains inside a LangChain agent's model and tool calls,
and, for callbacks that define them, its agent hooks.
"""

from __future__ import annotations

import contextvars
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, Final, assert_never, cast, final

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware import ModelRequest as LCModelRequest
from langchain.agents.middleware import ModelResponse as LCModelResponse
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt
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
    BeforeResult,
    CompiledCallbacks,
    Cont,
    Halt,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    Pause,
    Reject,
    State,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    ToolSpec,
    compile_callbacks,
)
from runner.adapters.langchain._convert import (
    ai_message,
    decided,
    from_hookline,
    last_message,
    spec_of,
    to_hookline,
    to_response,
    tool_message,
    tool_result,
    with_system,
)
from runner.adapters.langchain._operation import (
    Events,
    adispatch,
    adispatch_before_model,
    adispatch_before_tool,
    arun_attempts,
    dispatch,
    dispatch_after,
    dispatch_before_agent,
    dispatch_before_model,
    dispatch_before_tool,
    recording,
    run_attempts,
)

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
        self._paused: OrderedDict[tuple[str, str], dict[str, object]] = OrderedDict()
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
        user = last_message(state, HumanMessage)
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

    def _ask(self, paused: tuple[str, str], question: dict[str, object]) -> None:
        """Keep the question of a paused call for its resume; a call paused and never
        resumed is forgotten once ``_RUNS_KEPT`` newer ones are kept."""
        self._paused[paused] = question
        if len(self._paused) > _RUNS_KEPT:
            self._paused.popitem(last=False)

    def _info(self, tool: Any, name: str) -> ToolInfo:
        info = self._infos.get(name)
        if info is None:
            description = getattr(tool, "description", "") or ""
            info = self._infos[name] = ToolInfo(name, description=str(description))
        return info

    # -- tool calls -----------------------------------------------------------------

    def _tool_start(
        self, request: ToolCallRequest
    ) -> tuple[Invocation, CompiledCallbacks, ToolCall, ToolContext, Events | None]:
        raw = request.tool_call
        name = raw["name"]
        run = self._invocation(request.state, getattr(request, "runtime", None))
        compiled = self._compiled.for_tool(self._info(request.tool, name))
        call = ToolCall(raw.get("id") or "", name, dict(raw.get("args", {})))
        ctx = ToolContext(run, call, 1, self._max_attempts)
        return (
            run,
            compiled,
            call,
            ctx,
            Events(compiled, run) if self._observed or recording() else None,
        )

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
            return tool_message(before, call)
        outcome = run_attempts(
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
            return tool_message(before, call)
        outcome = await arun_attempts(
            compiled,
            (WRAP_TOOL, ON_TOOL_ERROR, AFTER_TOOL),
            before,
            operation,
            events=events,
            again=again,
        )
        return _tool_end(outcome, answered, before.call)

    def _before_tool(
        self, compiled: CompiledCallbacks, ctx: ToolContext, events: Events | None
    ) -> ToolContext | ToolResult:
        """``before_tool`` until it lets the call through or answers it; a ``Pause`` is an
        ``interrupt()`` whose resume value is the human's decision (``resume_value``)."""
        paused = (ctx.invocation.id, ctx.call.id)
        if paused in self._paused:  # resumed: the answer is waiting, ask it first
            ctx = decided(ctx, interrupt(self._paused[paused]))
        while True:
            result = dispatch(
                events, "before_tool", ctx, partial(dispatch_before_tool, compiled, ctx)
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
                    self._ask(paused, question)
                    ctx = decided(ctx, interrupt(question))

    async def _abefore_tool(
        self, compiled: CompiledCallbacks, ctx: ToolContext, events: Events | None
    ) -> ToolContext | ToolResult:
        """``before_tool`` for async runs."""
        paused = (ctx.invocation.id, ctx.call.id)
        if paused in self._paused:  # resumed: the answer is waiting, ask it first
            ctx = decided(ctx, interrupt(self._paused[paused]))
        while True:
            result = await adispatch(
                events, "before_tool", ctx, partial(adispatch_before_tool, compiled, ctx)
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
                    self._ask(paused, question)
                    ctx = decided(ctx, interrupt(question))

    # -- model calls ----------------------------------------------------------------

    def _model_start(
        self, request: LCModelRequest[Any]
    ) -> tuple[ModelRequest, ModelContext, Events | None]:
        run = self._invocation(request.state, request.runtime)
        asked = ModelRequest(
            tuple(map(self._message, with_system(request))), tuple(map(self._spec, request.tools))
        )
        ctx = ModelContext(run, asked, 1, self._max_attempts)
        return asked, ctx, Events(self._compiled, run) if self._observed or recording() else None

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
                dispatch(
                    events,
                    "before_model",
                    changed,
                    partial(dispatch_before_model, compiled, changed),
                )
            )

        first = before(ctx)
        if isinstance(first, ModelResponse):
            return ai_message(first)
        points = (WRAP_MODEL, ON_MODEL_ERROR, AFTER_MODEL)
        outcome = run_attempts(compiled, points, first, operation, events=events, again=before)
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
            go = partial(adispatch_before_model, compiled, changed)
            return _passed(await adispatch(events, "before_model", changed, go))

        first = await before(ctx)
        if isinstance(first, ModelResponse):
            return ai_message(first)
        points = (WRAP_MODEL, ON_MODEL_ERROR, AFTER_MODEL)
        outcome = await arun_attempts(
            compiled, points, first, operation, events=events, again=before
        )
        return _model_end(outcome, answered)

    def _message(self, message: BaseMessage) -> Message:
        """``message`` as hooks see it, converted once per message object."""
        key = id(message)
        kept = self._messages.get(key)
        if kept is not None and kept[0] is message:
            return kept[1]
        converted = to_hookline(message)
        if len(self._messages) >= _MESSAGES_KEPT:
            self._messages.clear()
        self._messages[key] = (message, converted)
        return converted

    def _spec(self, tool: object) -> ToolSpec:
        """``tool`` as a hook's request lists it, converted once per tool object."""
        kept = self._specs.get(id(tool))
        if kept is not None and kept[0] is tool:
            return kept[1]
        spec = spec_of(tool)
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
        user = last_message(state, HumanMessage)
        if user is None:
            return None
        ctx = AgentContext(run, to_hookline(user))
        events = Events(self._compiled, run) if self._observed or recording() else None
        result = dispatch(
            events, "before_agent", ctx, partial(dispatch_before_agent, self._compiled, ctx)
        )
        match result:
            case Cont(changed):
                if changed.message == ctx.message:
                    return None
                return {"messages": [HumanMessage(changed.message.content, id=user.id)]}
            case Halt(response):
                return {"messages": [ai_message(response)], "jump_to": "end"}
            case _:
                assert_never(result)

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """``after_agent`` on the run's answer (its last AI message): a changed outcome
        replaces it; a ``Failure`` is raised."""
        if not self._agents and not self._observed:
            return None
        answer = last_message(state, AIMessage)
        user = last_message(state, HumanMessage)
        if answer is None or user is None:
            return None
        run = self._invocation(state, runtime)
        ctx = AgentContext(run, to_hookline(user))
        response = to_response(answer)
        events = Events(self._compiled, run) if self._observed or recording() else None
        outcome: Outcome[ModelResponse] = dispatch(
            events,
            "after_agent",
            ctx,
            partial(dispatch_after, self._compiled, AFTER_AGENT, Success(response), ctx),
        )
        match outcome:
            case Success(changed):
                if changed == response:
                    return None
                replaced = ai_message(changed)
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
    result = tool_result(answer)
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
            return tool_message(result, call) if own is None else own
        case Failure(error):
            text = f"{type(error).__name__}: {error}"
            return tool_message(ToolResult(text, is_error=True), call)
    raise AssertionError(outcome)  # pragma: no cover


def _model_request(
    request: LCModelRequest[Any], asked: ModelRequest, changed: ModelRequest
) -> LCModelRequest[Any]:
    """``request`` carrying the hooks' ``changed`` messages (itself when unchanged)."""
    if changed is asked:
        return request
    system, messages = from_hookline(changed.messages)
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
    response = to_response(answers[0])
    answered[id(response)] = answers[0]
    return response


def _model_end(outcome: Outcome[ModelResponse], answered: dict[int, AIMessage]) -> AIMessage:
    """The AI message the agent keeps (the model's own when unchanged); a failure raised."""
    match outcome:
        case Success(response):
            own = answered.get(id(response))
            return ai_message(response) if own is None else own
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
