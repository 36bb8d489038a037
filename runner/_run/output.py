"""An agent's typed answer: checked, recovered or retried with feedback, then guarded.

The answer that ends a turn of an agent with an ``output_type`` (its text, read as JSON,
or its call of the ``final_result`` tool) is validated by the output type's
``TypeAdapter``. A failure is an ``OutputValidationError`` offered to ``on_output_error``:

- passed on (nobody decided) or ``Retry(ctx)``: the model is asked again, told
  ``ctx.feedback`` (the validation errors unless a hook gave its own), while the retry
  budget (``RetryPolicy.max_attempts`` answers per turn) lasts; spent, the error goes on
  with a note saying so;
- ``Fallback(value)``: ``value``, checked against the type, is the answer;
- ``Failure(error)`` of a hook's own: the turn fails with ``error``.

Every failed answer is an ``ErrorEvent`` (operation ``"output"``) and every retry a
``RetryEvent``, so the feedback loop shows in the record. ``after_output`` then sees the
outcome, the output guard: a ``Success`` it hands on is checked against the type again,
a ``Failure`` fails the turn. No value reaches the result unchecked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final, assert_never

from hooks import (
    AFTER_OUTPUT,
    ON_OUTPUT_ERROR,
    Failure,
    Fallback,
    Message,
    ModelResponse,
    Outcome,
    OutputContext,
    Retry,
    Success,
    ToolCall,
)
from runner._errors import OutputValidationError
from runner._events import ErrorEvent, FallbackEvent, RetryEvent
from runner._run.plan import Plan
from runner._run.record import Record
from runner._run.settings import Settings
from runner._sessions.transcript import Conversation
from runner._tools.output import FINAL_RESULT, OutputInvalid, OutputType

__all__ = ["typed_answer"]

_TAKEN: Final = "Final answer received."
_NOT_RUN: Final = "Not run: the final answer came in the same response."


async def typed_answer(
    settings: Settings,
    plan: Plan,
    output: OutputType[Any],
    response: ModelResponse,
    *,
    history: Conversation,
    record: Record,
    attempt: int,
) -> tuple[Outcome[ModelResponse], Any] | None:
    """The turn's final outcome for ``response`` (answer ``attempt`` of the turn) and the
    typed value of a success, or ``None`` when the model is to answer again (the feedback
    is in ``history`` then).

    A success's response carries the value as JSON text and no tool calls: what the
    parent of a sub-agent reads, and ``after_agent`` sees.
    """
    ctx = OutputContext(plan.invocation, response, attempt, settings.retry.max_attempts)
    final = None if plan.agent.native_output else output.final_call(response)
    outcome: Outcome[Any]
    try:
        if final is not None:
            outcome = Success(output.from_data(final.args))
        else:
            outcome = Success(output.from_text(response.text))
    except OutputInvalid as invalid:
        tool_mode = not plan.agent.native_output
        ctx = replace(ctx, feedback=_feedback(invalid, final, tool_mode=tool_mode))
        recovered = await _recovered(plan, output, invalid, ctx, record)
        if isinstance(recovered, str):  # asked again, with this feedback
            _answer_calls(history, response, final, recovered, is_error=True)
            return None
        outcome = recovered
    after = await plan.after(AFTER_OUTPUT, outcome, ctx)
    if type(after) is Success and (type(outcome) is not Success or after is not outcome):
        after = _checked(plan, output, after.unwrap(), "after_output's Success", attempt)
    if type(after) is Failure and after is not outcome:
        error = after.failure()
        record.add(
            ErrorEvent(
                plan.name,
                plan.branch,
                plan.clock(),
                error=error,
                operation="output",
                attempt=attempt,
            )
        )
    if final is not None:
        _answer_calls(history, response, final, _TAKEN, is_error=type(after) is Failure)
    if type(after) is not Success:
        return after, None
    value = after.unwrap()
    answer = replace(response, text=output.dump(value), tool_calls=())
    return Success(answer), value


async def _recovered(
    plan: Plan,
    output: OutputType[Any],
    invalid: OutputInvalid,
    ctx: OutputContext,
    record: Record,
) -> Outcome[Any] | str:
    """What ``on_output_error`` made of an answer that did not fit: the outcome the turn
    goes on with, or the feedback to ask the model again with."""
    attempt, budget = ctx.attempt, ctx.max_attempts
    error = OutputValidationError(plan.name, repr(output), invalid.errors, invalid.raw, attempt)
    record.add(
        ErrorEvent(
            plan.name, plan.branch, plan.clock(), error=error, operation="output", attempt=attempt
        )
    )
    given = Failure(error)
    recovery = await plan.on_error(ON_OUTPUT_ERROR, given, ctx)
    if recovery is given:  # passed on: the default handler retries with the feedback
        recovery = Retry(ctx)
    match recovery:
        case Retry(retried):
            if attempt >= budget:
                error.add_note(
                    f"gave up after {attempt} answer(s): the retry budget "
                    f"(RetryPolicy.max_attempts={budget}) is spent"
                )
                return given
            record.add(
                RetryEvent(
                    plan.name,
                    plan.branch,
                    plan.clock(),
                    operation="output",
                    attempt=attempt + 1,
                    delay=0.0,
                )
            )
            return retried.feedback
        case Fallback(value):
            record.add(
                FallbackEvent(
                    plan.name, plan.branch, plan.clock(), operation="output", attempt=attempt
                )
            )
            return _checked(plan, output, value, "on_output_error's Fallback", attempt)
        case Failure() as failure:
            return failure
        case _:
            assert_never(recovery)


def _checked(
    plan: Plan, output: OutputType[Any], value: object, where: str, attempt: int
) -> Outcome[Any]:
    """``value`` as the type's, or the failure saying why not: a hook's value is checked too."""
    try:
        return Success(output.checked(value))
    except OutputInvalid as invalid:
        error = OutputValidationError(plan.name, repr(output), invalid.errors, invalid.raw, attempt)
        error.add_note(f"the value came from {where}, not from the model")
        return Failure(error)


def _feedback(invalid: OutputInvalid, final: ToolCall | None, *, tool_mode: bool) -> str:
    """What the model is told of an answer that did not fit."""
    listed = "\n".join(f"- {line}" for line in invalid.errors)
    if final is not None:
        return (
            f"The arguments of {FINAL_RESULT} do not fit its schema:\n{listed}\n"
            f"Call {FINAL_RESULT} again with arguments that fit."
        )
    if tool_mode:
        return (
            f"Give the final answer by calling the {FINAL_RESULT} tool. Read as the "
            f"answer, your text does not fit its schema:\n{listed}"
        )
    return f"Your answer does not fit the required schema:\n{listed}\nAnswer again so that it fits."


def _answer_calls(
    history: Conversation,
    response: ModelResponse,
    final: ToolCall | None,
    said: str,
    *,
    is_error: bool,
) -> None:
    """Answer every call of ``response`` (the final-result call with ``said``, the others
    not run), so the transcript stays one a provider takes; with no final call, ``said``
    (feedback) goes to the model as a user message."""
    calls = response.tool_calls
    if final is None:
        history.messages = history.messages.append(Message("user", said))
        return
    messages = [
        Message(
            "tool",
            said if call is final else _NOT_RUN,
            tool_call_id=call.id,
            name=call.name,
            is_error=is_error if call is final else True,
        )
        for call in calls
    ]
    history.messages = history.messages.extend(messages)
