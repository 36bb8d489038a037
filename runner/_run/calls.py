"""The tool calls of one model response: run one by one or concurrently, paused, resumed.

Each call is a guarded operation (``_guarded``) under the tool points: a tool, or a
sub-agent's whole turn (``Run.turn``), which is how sub-agents nest. A call that a
``before_tool`` hook paused, or inside which a sub-agent paused (either way a
``Paused`` signal reaches the call), is ``Held``; when some calls of a batch are held,
the others still run and the batch returns them all (``HeldBatch``) to the agent
turn. In a resumed turn, a call that ran before the pause keeps its result, and a
paused one passes its guards again with the human's decision.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Final, Protocol, assert_never

from hooks import (
    Decision,
    Edit,
    Failure,
    Message,
    ModelResponse,
    Outcome,
    Respond,
    Success,
    ToolCall,
    ToolContext,
    ToolResult,
)
from runner._agent import Agent
from runner._errors import MCPInputRequired, ToolArgumentsError, UnknownToolError
from runner._events import PauseEvent, ToolCallEvent, ToolResultEvent
from runner._mcp.hub import Answer
from runner._pause.pending import (
    ALLOWED,
    ANSWERS,
    Frame,
    Held,
    HeldBatch,
    Paused,
    PendingRequest,
    Question,
    request_id,
)
from runner._run.attempts import mcp_attempt, tool_attempt
from runner._run.engine import IN_PROCESS
from runner._run.guarded import TOOL, guarded
from runner._run.plan import Plan
from runner._run.record import Record
from runner._run.settings import Settings
from runner._run.streamed import Streamed
from runner._sessions.transcript import Conversation, Transcript
from runner._tools.arguments import UnparsedArguments

__all__ = ["Run", "batch"]

# A resumed call that answers its tool's question: a Reject declines the question (the
# call goes on, the server decides), so no stand-in result replaces the call.
_ANSWERED: Final = replace(TOOL, refused=None)


class Run(Protocol):
    """What the tool calls of a response need of their run (``runner._run.run.Run``)."""

    @property
    def id(self) -> str:
        """The run's id."""
        ...

    @property
    def settings(self) -> Settings:
        """What every part of the run shares."""
        ...

    @property
    def decisions(self) -> Mapping[str, Decision]:
        """A resumed run's decisions by request id."""
        ...

    def plan(self, agent: Agent, branch: str) -> Plan:
        """The plan of ``agent`` at ``branch`` (a sub-agent's, for a call of it)."""
        ...

    def turn(
        self,
        plan: Plan,
        message: Message,
        history: Conversation,
        record: Record,
        frame: Frame | None = None,
        *,
        call_id: str | None = None,
    ) -> Awaitable[ModelResponse]:
        """An agent's whole turn: how a sub-agent call runs (the call's id in ``call_id``)."""
        ...


async def batch(
    run: Run,
    plan: Plan,
    calls: Sequence[ToolCall],
    history: Conversation,
    record: Record,
    *,
    step: int,
    frame: Frame | None,
) -> HeldBatch | None:
    """The tool calls of one model response, their results added to the history.

    When some paused, the others still ran: the ``HeldBatch`` returned holds what each
    call came to, and the history is left as it was.
    """
    done = await tool_calls(run, plan, calls, record, step=step, frame=frame)
    messages: list[Message] = []
    for call, result in zip(calls, done, strict=True):
        if not isinstance(result, ToolResult):  # held: the batch pauses, with every call
            return HeldBatch(step, calls, done)
        messages.append(
            Message(
                "tool",
                result.content,
                tool_call_id=call.id,
                name=call.name,
                parts=result.parts,
                is_error=result.is_error,
            )
        )
    history.messages = history.messages.extend(messages)
    return None


async def tool_calls(
    run: Run,
    plan: Plan,
    calls: Sequence[ToolCall],
    record: Record,
    *,
    step: int,
    frame: Frame | None,
) -> list[ToolResult | Held]:
    """Run the calls of one response: one by one, or concurrently in an async run.

    An ordered engine (a durable run's) takes them one by one in async runs too.
    Concurrent calls record into their own records, kept in the model's order. When
    callbacks of several concurrent calls raise, the first error is raised, the
    other calls are cancelled, and what they raised is noted on the first error.
    """
    settings = run.settings
    if not settings.is_async or settings.engine.ordered or len(calls) == 1:
        done: list[ToolResult | Held] = []
        for call in calls:  # a loop: a comprehension would be a coroutine of its own
            done.append(await tool_call(run, plan, call, record, step=step, frame=frame))
        return done
    records = [record.child() for _ in calls]
    tasks = [
        asyncio.ensure_future(tool_call(run, plan, call, own, step=step, frame=frame))
        for call, own in zip(calls, records, strict=True)
    ]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException as first:
        for task in tasks:
            task.cancel()
        others = await asyncio.gather(*tasks, return_exceptions=True)
        for call, other in zip(calls, others, strict=True):
            if isinstance(other, Exception) and other is not first:
                first.add_note(
                    f"tool call {call.id!r} ({call.name}) running alongside also raised "
                    f"{type(other).__name__}: {other}"
                )
        raise
    finally:
        for own in records:
            record.take(own)


async def tool_call(
    run: Run, plan: Plan, call: ToolCall, record: Record, *, step: int, frame: Frame | None
) -> ToolResult | Held:
    """One tool call with its hooks; an unrecovered error becomes an error result.

    A call a ``before_tool`` hook paused, or whose sub-agent paused, is ``Held``. In a
    resumed turn a call that ran before the pause keeps its result, and a paused one
    passes its guards again with the human's decision in ``ctx.decision``: the call its
    request shows (``Edit``'s arguments in place of its own).
    """
    decision: Decision | None = None
    child: Frame | None = None
    answer: Answer | None = None
    if frame is not None:
        ran = frame.results.get(call.id)
        if ran is not None:
            return ran
        request = frame.requests.get(call.id)
        decision = None
        if request is not None:  # the call as the human was shown it (same id and tool)
            decision = run.decisions[request.id]
            call = request.call
            answer = _answer(request, decision)
        child = frame.children.get(call.id)
        if type(decision) is Edit:
            call = replace(call, args=decision.args)
    record.add(ToolCallEvent(plan.name, plan.branch, plan.clock(), call=call))
    settings = run.settings
    operation = guarded(
        settings,
        plan,
        TOOL if answer is None else _ANSWERED,
        ToolContext(plan.invocation, call, 1, settings.retry.max_attempts, decision),
        execute=partial(_tool, run, plan, record=record, frame=child, answer=answer),
        record=record,
    )
    tracer = settings.tracer  # traced: inside the call's execute_tool span
    try:
        outcome, ctx = await (
            operation
            if tracer is None
            else tracer.tool(plan.agent, call, plan.invocation.tools.get(call.name), operation)
        )
    except Paused as paused:
        if paused.call is None:  # a sub-agent this call ran paused: its turn's frame
            return Held(None, paused.frame)
        question = paused.question
        request = PendingRequest(
            request_id(run.id, plan.branch, step, call.id),
            paused.call,
            paused.reason,
            plan.agent.name,
            plan.branch,
            ALLOWED if question is None else ANSWERS,
            "call" if question is None else "input",
            paused.schema,
            question,
        )
        record.add(PauseEvent(plan.name, plan.branch, plan.clock(), request=request))
        return Held(request, None)
    match outcome:
        case Success(result):
            pass
        case Failure(error):
            result = ToolResult(f"{type(error).__name__}: {error}", is_error=True)
        case _:
            assert_never(outcome)
    record.add(ToolResultEvent(plan.name, plan.branch, plan.clock(), call=ctx.call, result=result))
    return result


async def _tool(
    run: Run,
    plan: Plan,
    ctx: ToolContext,
    streamed: Streamed | None,
    *,
    record: Record,
    frame: Frame | None,
    answer: Answer | None = None,
) -> Outcome[ToolResult]:
    """One attempt at ``ctx.call``: a tool, or a sub-agent's whole turn (``frame``: the
    sub-agent's paused turn, when a resumed run goes on inside it), or an MCP server's
    tool (``answer``: the human's answer to the question it asked before the pause). A
    tool's attempt streams nothing (``streamed`` is ``None``); a sub-agent's model
    streams its own."""
    agent, call = plan.agent, ctx.call
    tool = agent.tools.get(call.name)
    if tool is None:
        return await _listed(run, plan, ctx, answer)
    if isinstance(call.args, UnparsedArguments):  # the model's text was no JSON object
        return Failure(ToolArgumentsError(call.name, call.args.raw, call.args.problem))
    if not isinstance(tool, Agent):
        settings = run.settings
        engine, is_async = settings.engine, agent.tool_is_async[call.name]
        if engine is IN_PROCESS:  # it would run the attempt here and now: no seam to cross
            return await tool_attempt(settings, ctx, tool, is_async)
        return await engine.tool(
            plan.branch, call, partial(tool_attempt, settings, ctx, tool, is_async)
        )
    request = _request_of(call.args)
    if request is None:
        problem = "a sub-agent takes one str argument 'request'"
        return Failure(ToolArgumentsError(call.name, call.args, problem))
    sub = run.plan(tool, f"{plan.branch}/{tool.name}")
    # The sub-agent's own hooks had their chance: its unrecovered model error, or a
    # callback's exception, is raised here and fails the whole run, never offered to
    # the parent's tool error hooks as a tool failure.
    message = Message("user", request) if frame is None else frame.message
    response = await run.turn(
        sub, message, Conversation(Transcript()), record, frame, call_id=call.id
    )
    return Success(ToolResult(response.text))


async def _listed(
    run: Run, plan: Plan, ctx: ToolContext, answer: Answer | None
) -> Outcome[ToolResult]:
    """One attempt at a call of a tool an MCP server of the agent lists, through the
    run's engine; a name no server lists either is an ``UnknownToolError``. A question
    the server asked pauses the call (``Paused`` with the question, never offered to
    the error hooks)."""
    call, toolbox = ctx.call, plan.toolbox
    listed = None if toolbox is None else toolbox.find(call.name)
    if listed is None:
        offered = tuple(plan.agent.tools if toolbox is None else toolbox)
        return Failure(UnknownToolError(call.name, offered))
    if isinstance(call.args, UnparsedArguments):
        return Failure(ToolArgumentsError(call.name, call.args.raw, call.args.problem))
    settings = run.settings
    if settings.engine is IN_PROCESS:
        outcome = await mcp_attempt(settings, ctx, listed, answer)
    else:
        attempt = partial(mcp_attempt, settings, ctx, listed, answer)
        outcome = await settings.engine.tool(plan.branch, call, attempt)
    if type(outcome) is Failure:
        asked = outcome.failure()
        if isinstance(asked, MCPInputRequired):
            question = Question(asked.key, asked.state)
            raise Paused(asked.message, call=call, schema=asked.schema, question=question)
    return outcome


def _answer(request: PendingRequest, decision: Decision) -> Answer | None:
    """What a resumed call sends its server for a question it asked: ``Respond``'s value,
    or ``None`` (declined) for ``Reject``; ``None`` for a request that is no question."""
    question = request.question
    if request.kind != "input" or question is None:
        return None
    value = decision.value if type(decision) is Respond else None
    return Answer(question.key, question.state, value)


def _request_of(args: Mapping[str, Any]) -> str | None:
    """A sub-agent call's ``request``, or ``None`` when the arguments are not exactly that."""
    request: object = args.get("request")
    return request if isinstance(request, str) and len(args) == 1 else None
