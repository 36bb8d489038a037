"""How a traced run's spans end, and what they hand each other on the way.

Imported by ``_telemetry`` only (so only when a run is traced). An agent turn's
``Turn`` travels in the OpenTelemetry context, next to its span: the chat spans under
it add the tokens they report, and a failed model attempt leaves its span pending
there until ``on_model_error`` decides (``decided``) whether the failure was
recovered -- a retry or a fallback: no error -- or went on: ERROR. A span an exception
leaves is ended by ``raised``: a ``StopRun`` or a pause is an event, anything else an
error (``error.type``, status ERROR, the exception recorded).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final, final

from opentelemetry import context as contexts
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from hooks import ON_MODEL_ERROR, ModelContext, ModelResponse, OutcomeTag, StopRun, Trace, Usage
from runner._events import ShadowEvent
from runner._pause.pending import Paused
from runner._telemetry.genai import (
    ATTEMPT,
    ERROR_TYPE,
    FINISH_REASONS,
    RESPONSE_MODEL,
    usage_attributes,
)

__all__ = [
    "Turn",
    "answered",
    "current_turn",
    "decided",
    "errored",
    "raised",
    "shadowed",
    "with_turn",
]

_TURN: Final = contexts.create_key("hookline.turn")
_HOOK: Final = "hookline.hook"
_DECIDED: Final[Mapping[str, str]] = {
    "halt": "halt",
    "retry": "retry",
    "fallback": "fallback",
    "raised": "raise",
    "pause": "pause",  # before_tool paused the call for a human: on the tool call's span
}


@final
class _Failed:
    """A failed model attempt's span, open until the error hooks decide what it was."""

    __slots__ = ("ended", "error", "span")

    def __init__(self, span: Span, error: Exception) -> None:
        self.span = span
        self.error = error
        self.ended = time.time_ns()

    def settle(self, *, failed: bool) -> None:
        """End the span when it ended: ERROR if the error went on unrecovered."""
        if failed:
            errored(self.span, self.error)
        self.span.end(end_time=self.ended)


@final
class Turn:
    """One agent turn as its spans see it: the tokens counted, a failed attempt pending."""

    __slots__ = ("failed", "usage")

    def __init__(self) -> None:
        self.usage: Usage | None = None
        self.failed: _Failed | None = None

    def count(self, usage: Usage) -> None:
        """Add one model call's tokens (or a sub-agent's turn's) to the turn's."""
        self.usage = usage if self.usage is None else self.usage + usage

    def pend(self, span: Span, error: Exception) -> None:
        """Keep a failed attempt's span open for the error hooks to settle."""
        self.failed = _Failed(span, error)

    def settle(self, *, failed: bool) -> None:
        """Settle the failed attempt pending, if any."""
        pending, self.failed = self.failed, None
        if pending is not None:
            pending.settle(failed=failed)


def with_turn(span: Span, turn: Turn) -> contexts.Context:
    """The current context with ``span`` as the span under way and ``turn`` as its turn."""
    return trace.set_span_in_context(span, contexts.set_value(_TURN, turn))


def current_turn() -> Turn | None:
    """The agent turn under way in this context, if any."""
    turn: object = contexts.get_value(_TURN)
    return turn if isinstance(turn, Turn) else None


def decided(
    point: str,
    tag: OutcomeTag,
    traced: Trace,
    *,
    ctx: object,
    error: BaseException | None,
    result: object,
) -> None:
    """A dispatch ended: an event on the span it guards if a callback decided something.

    Decided: a halt, a pause, a retry, a fallback, a raise, or a callback that replaced
    the context, the outcome or the error. ``on_model_error`` also settles the failed
    attempt's span; a fallback's tokens count towards the agent's.
    """
    turn = current_turn()
    pending = turn.failed if turn is not None and point == ON_MODEL_ERROR.name else None
    span = pending.span if pending is not None else trace.get_current_span()
    decision = _DECIDED.get(tag)
    if decision is None and traced.callback is not None:
        decision = "replace"
    if decision is not None:
        span.add_event(_HOOK, _event(point, decision, tag, traced, ctx=ctx, error=error))
    if tag == "fallback" and turn is not None:
        usage: object = getattr(getattr(result, "value", None), "usage", None)
        if isinstance(usage, Usage):
            turn.count(usage)  # a backup model's answer was paid for too
    if pending is not None and turn is not None:
        turn.settle(failed=tag in ("failure", "raised") or _refused(tag, ctx))


def shadowed(event: ShadowEvent) -> None:
    """A ``hookline.shadow`` event on the current span: the point, the shadow, both
    decisions, and what the shadow returned or raised."""
    attributes: dict[str, str] = {
        "hookline.shadow.point": event.point,
        "hookline.shadow.callback": event.callback,
        "hookline.shadow.live": event.live,
        "hookline.shadow.would": event.would,
    }
    if event.detail:
        attributes["hookline.shadow.detail"] = event.detail
    trace.get_current_span().add_event("hookline.shadow", attributes)


def _event(
    point: str,
    decision: str,
    tag: OutcomeTag,
    traced: Trace,
    *,
    ctx: object,
    error: BaseException | None,
) -> dict[str, str | int]:
    attributes: dict[str, str | int] = {
        "hookline.hook.point": point,
        "hookline.hook.decision": decision,
        "hookline.hook.tag": tag,
    }
    callback = traced.description
    if callback is not None:
        attributes["hookline.hook.callback"] = callback
    attempt: object = getattr(ctx, "attempt", None)
    if isinstance(attempt, int):
        attributes[ATTEMPT] = attempt
    if error is not None:
        attributes["exception.type"] = type(error).__qualname__
        attributes["exception.message"] = str(error)
    return attributes


def _refused(tag: OutcomeTag, ctx: object) -> bool:
    """Whether a retry asked for is refused: the attempt budget is spent."""
    return tag == "retry" and isinstance(ctx, ModelContext) and ctx.attempt >= ctx.max_attempts


def answered(response: ModelResponse) -> dict[str, Any]:
    """What a model's answer says about itself: model, finish reason, tokens."""
    attributes: dict[str, Any] = {}
    if response.model is not None:
        attributes[RESPONSE_MODEL] = response.model
    if response.finish_reason is not None:
        attributes[FINISH_REASONS] = (response.finish_reason,)
    if response.usage is not None:
        attributes.update(usage_attributes(response.usage))
    return attributes


def raised(span: Span, error: BaseException) -> None:
    """An exception left the span's operation: a ``StopRun`` and a pause are events (the
    run ends cleanly, or waits for a human), the rest errors."""
    if isinstance(error, StopRun):
        span.add_event("hookline.stop", {"hookline.stop.reason": error.reason})
        return
    if isinstance(error, Paused):
        span.add_event("hookline.paused")
        return
    span.record_exception(error)
    errored(span, error)


def errored(span: Span, error: BaseException) -> None:
    """The span's operation failed with ``error`` (recorded by the caller): say so."""
    span.set_attribute(ERROR_TYPE, type(error).__qualname__)
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
