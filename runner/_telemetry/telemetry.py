"""``Telemetry``: a run's OpenTelemetry spans, after the GenAI semantic conventions.

Imported only by a ``Runner`` given ``tracer_provider=``: this module is the one that
imports OpenTelemetry (the ``opentelemetry-api`` package, extra ``hookline[otel]``).
It follows the OpenTelemetry GenAI semantic conventions v0.1.0
(``open-telemetry/semantic-conventions-genai``, status Development; the GenAI part of
semantic-conventions v1.41.0 carried on there):

- ``invoke_agent {agent}`` (INTERNAL): one agent's turn, ``before_agent`` to
  ``after_agent``; a sub-agent's is a child of the ``execute_tool`` span that called it.
  Its usage is the turn's, sub-agents' included: on the root span, the run's.
- ``chat {model}`` (CLIENT): one model attempt, inside the wraps (a retried call is one
  span per attempt: each is a request of its own, and hooks decided between them).
- ``execute_tool {tool}`` (INTERNAL): one tool call with its hooks and every attempt.

Attributes that sampling needs (operation, provider, agent, request model) are given at
span start. Parents travel in the OpenTelemetry context, so concurrent tool calls (each
an asyncio task with its own copy of the context) nest under the right span, and spans
a model client or a tool makes itself nest under hookline's.

Hook decisions: every dispatch in which a callback decided something (a halt, a retry,
a fallback, a raise, or a replaced context, outcome or error) is a ``hookline.hook``
event naming the point, the decision, the result's tag, the deciding callback, the
attempt, and the error involved if any; it goes on the span the dispatch guards: agent
points on ``invoke_agent``, tool points on ``execute_tool``, ``on_model_error`` on the
failed attempt's ``chat`` span, ``on_delta`` on the streaming one, the other model
points (which run outside any one attempt) on ``invoke_agent``.

Errors: a span whose operation failed gets ``error.type`` (the exception's class name),
status ERROR and the exception recorded. A ``Halt``, a recovered error and a fallback
are no errors: the status stays UNSET, and what happened is an event. A failed model
attempt's span stays open (its end time kept) until ``on_model_error`` decided: a
retry or a fallback leaves it UNSET with the exception recorded, an unrecovered error
(or a retry the budget refuses) sets ERROR. A ``StopRun`` is a clean end: an event
(``hookline.stop``); so is a pause (``hookline.paused`` on the paused call's span and
the turns it paused: they end there, and ``resume`` traces the rest as a new run). A
cancelled run (a stream its consumer stopped reading) leaves its open spans ERROR, with
``error.type`` ``CancelledError``: their operations did not complete.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, TypeVar, final

try:  # first: without the extra, this is the error a user sees
    from opentelemetry import context as contexts
    from opentelemetry import trace
    from opentelemetry.trace import Span, SpanKind
except ImportError as exc:  # the extra is missing: say which one
    msg = "Runner(tracer_provider=...) needs OpenTelemetry: pip install 'hookline[otel]'"
    raise ImportError(msg, name="opentelemetry") from exc

from hooks import (
    Failure,
    Invocation,
    Message,
    ModelContext,
    ModelResponse,
    Outcome,
    OutcomeTag,
    StopRun,
    Success,
    ToolCall,
    ToolContext,
    ToolInfo,
    ToolResult,
    Trace,
    __version__,
)
from runner._checks import got
from runner._events import ShadowEvent
from runner._pause.pending import Paused
from runner._telemetry.genai import (
    AGENT_DESCRIPTION,
    AGENT_NAME,
    ATTEMPT,
    BRANCH,
    CONVERSATION,
    INPUT_MESSAGES,
    OPERATION,
    OUTPUT_MESSAGES,
    PROVIDER,
    REQUEST_MODEL,
    REQUEST_STREAM,
    RUN_ID,
    SYSTEM_INSTRUCTIONS,
    TOOL_ARGUMENTS,
    TOOL_CALL_ID,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_RESULT,
    TOOL_TYPE,
    capture_from_env,
    input_messages,
    mcp_attributes,
    model_of,
    output_messages,
    system_instructions,
    tool_arguments,
    tool_result,
    usage_attributes,
)
from runner._telemetry.guard import RUN_LOG, Log, start
from runner._telemetry.spans import (
    Turn,
    answered,
    current_turn,
    decided,
    errored,
    raised,
    shadowed,
    with_turn,
)

if TYPE_CHECKING:
    from runner._agent import Agent

__all__ = ["Telemetry"]

T = TypeVar("T")


@final
class _Named:
    """What the spans of one agent say at their start, worked out once per runner."""

    __slots__ = ("agent", "agent_span", "chat", "chat_span")

    def __init__(self, agent: Agent) -> None:
        provider, model = model_of(agent.model)
        self.agent_span: Final = f"invoke_agent {agent.name}"
        self.agent: Final = {
            OPERATION: "invoke_agent",
            PROVIDER: provider,
            AGENT_NAME: agent.name,
            REQUEST_MODEL: model,
        }
        if agent.description != agent.instruction:  # an instruction is content: opt-in
            self.agent[AGENT_DESCRIPTION] = agent.description
        self.chat_span: Final = f"chat {model}"
        self.chat: Final = {OPERATION: "chat", PROVIDER: provider, REQUEST_MODEL: model}


@final
class Telemetry:
    """The spans of runs of ``agents``, from ``provider``; content only if ``capture``.

    ``capture_content=None`` reads ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``.
    """

    __slots__ = ("_named", "_tracer", "capture")

    def __init__(
        self, provider: object, *, capture_content: bool | None, agents: Iterable[Agent]
    ) -> None:
        if not isinstance(provider, trace.TracerProvider):
            msg = (
                f"tracer_provider must be an opentelemetry.trace.TracerProvider, got "
                f"{got(provider)}; pass e.g. opentelemetry.trace.get_tracer_provider()"
            )
            raise TypeError(msg)
        self._tracer: Final = provider.get_tracer("hookline", __version__)
        self.capture: Final = capture_from_env() if capture_content is None else capture_content
        self._named: Final = {id(agent): _Named(agent) for agent in agents}

    async def agent(
        self,
        agent: Agent,
        invocation: Invocation,
        message: Message,
        turn: Callable[[bool], Awaitable[ModelResponse]],
        /,
    ) -> ModelResponse:
        """Await ``turn(recording)``, the agent's turn on ``message``, inside its
        ``invoke_agent`` span; ``recording`` says whether that span records."""
        named = self._named[id(agent)]
        log = RUN_LOG.get()
        own = RUN_LOG.set(Log(invocation.id)) if log is None else None  # the root turn's
        span = start(
            self._tracer,
            named.agent_span,
            kind=SpanKind.INTERNAL,
            attributes={
                **named.agent,
                CONVERSATION: invocation.session_id,
                RUN_ID: invocation.id,
                BRANCH: invocation.branch,
            },
        )
        recording = span.is_recording()
        if recording and self.capture:
            span.set_attribute(INPUT_MESSAGES, input_messages((message,)))
            if agent.instruction:
                span.set_attribute(SYSTEM_INSTRUCTIONS, system_instructions(agent.instruction))
        parent = current_turn()
        # Even a turn nobody records keeps a tally and its pending attempts: a sampler
        # may record its chat spans (which must settle) or its parent (owed its tokens).
        state = Turn()
        token = contexts.attach(with_turn(span, state))
        try:
            response = await turn(recording)
        except BaseException as error:
            state.settle(failed=not isinstance(error, StopRun | Paused))
            raised(span, error)
            raise
        else:
            state.settle(failed=False)  # a wrap answered after a failed attempt
            if recording and self.capture:
                span.set_attribute(OUTPUT_MESSAGES, output_messages(response))
            return response
        finally:
            contexts.detach(token)
            if state.usage is not None:
                if recording:
                    span.set_attributes(usage_attributes(state.usage))
                if parent is not None:
                    parent.count(state.usage)
            span.end()
            if own is not None:
                RUN_LOG.reset(own)

    async def attempt(
        self,
        agent: Agent,
        ctx: ModelContext | ToolContext,
        execution: Awaitable[Outcome[T]],
        *,
        streamed: bool,
    ) -> Outcome[T]:
        """Await ``execution``, one model attempt at ``ctx``, inside its ``chat`` span.

        (A tool's attempts are not called here: they share the tool call's span.)
        """
        turn = current_turn()
        if turn is not None:
            turn.settle(failed=False)  # a wrap tried again after a failed attempt
        named = self._named[id(agent)]
        attributes: dict[str, str | bool | int] = {
            **named.chat,
            CONVERSATION: ctx.invocation.session_id,
            ATTEMPT: ctx.attempt,
        }
        if streamed:
            attributes[REQUEST_STREAM] = True
        span = start(self._tracer, named.chat_span, kind=SpanKind.CLIENT, attributes=attributes)
        if self.capture and isinstance(ctx, ModelContext) and span.is_recording():
            span.set_attribute(INPUT_MESSAGES, input_messages(ctx.request.messages))
        token = contexts.attach(trace.set_span_in_context(span))
        try:
            outcome = await execution
        except BaseException as error:
            raised(span, error)
            span.end()
            raise
        finally:
            contexts.detach(token)
        self._attempted(span, outcome, turn)
        return outcome

    def _attempted(self, span: Span, outcome: Outcome[Any], turn: Turn | None) -> None:
        """End a model attempt's span with what it answered, or leave a failed one pending."""
        if type(outcome) is Failure:
            failure: Exception = outcome.failure()
            span.record_exception(failure)
            if turn is not None and span.is_recording():
                turn.pend(span, failure)  # on_model_error settles it
            else:
                errored(span, failure)
                span.end()
            return
        response: object = outcome.unwrap()
        if isinstance(response, ModelResponse):
            if response.usage is not None and turn is not None:
                turn.count(response.usage)
            if span.is_recording():
                span.set_attributes(answered(response))
                if self.capture:
                    span.set_attribute(OUTPUT_MESSAGES, output_messages(response))
        span.end()

    async def tool(
        self,
        agent: Agent,
        call: ToolCall,
        info: ToolInfo | None,
        operation: Awaitable[tuple[Outcome[ToolResult], ToolContext]],
    ) -> tuple[Outcome[ToolResult], ToolContext]:
        """Await ``operation``, ``call`` under its hooks, inside its ``execute_tool`` span;
        an MCP server's tool is an ``extension`` with the MCP conventions' attributes."""
        span = start(
            self._tracer,
            f"execute_tool {call.name}",
            kind=SpanKind.INTERNAL,
            attributes=_tool_attributes(agent, call, info),
        )
        recording = span.is_recording()
        if recording:
            description = "" if info is None else info.description
            if description:
                span.set_attribute(TOOL_DESCRIPTION, description)
            if self.capture:
                span.set_attribute(TOOL_ARGUMENTS, tool_arguments(call))
        token = contexts.attach(trace.set_span_in_context(span))
        try:
            outcome, ctx = await operation
        except BaseException as error:
            raised(span, error)
            raise
        else:
            if recording:
                span.set_attribute(ATTEMPT, ctx.attempt)
            if type(outcome) is Success:
                if recording and self.capture:
                    span.set_attribute(TOOL_RESULT, tool_result(outcome.unwrap().content))
            else:
                span.record_exception(outcome.failure())
                errored(span, outcome.failure())
            return outcome, ctx
        finally:
            contexts.detach(token)
            span.end()

    def hook(
        self,
        point: str,
        tag: OutcomeTag,
        traced: Trace,
        *,
        ctx: object,
        error: BaseException | None,
        result: object,
    ) -> None:
        """A dispatch ended: a decision is an event on the span it guards (``decided``)."""
        decided(point, tag, traced, ctx=ctx, error=error, result=result)

    def shadow(self, event: ShadowEvent) -> None:
        """A shadow would have decided otherwise: a ``hookline.shadow`` event on the span
        of the operation it was asked about."""
        shadowed(event)


def _tool_attributes(agent: Agent, call: ToolCall, info: ToolInfo | None) -> dict[str, str | int]:
    """An ``execute_tool`` span's first attributes; an MCP server's tool is an
    ``extension`` with the MCP conventions' attributes."""
    attributes: dict[str, str | int] = {
        OPERATION: "execute_tool",
        TOOL_NAME: call.name,
        TOOL_CALL_ID: call.id,
        TOOL_TYPE: "function",  # run by the application; a sub-agent's too
    }
    server = None if info is None else info.server
    if server is not None:
        for source in agent.sources:
            if source.name == server:
                attributes[TOOL_TYPE] = "extension"  # run by a server the agent reaches
                attributes.update(mcp_attributes(source))
    return attributes
