"""What the pages read: paused runs, requests and a run's records as JSON, content held back.

A run's content -- messages, a call's arguments, a tool's result, a model's text, an
error's message -- is served only when ``content`` is true (the app's ``capture``, which
follows telemetry's rule: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, off
when unset). Without it a record keeps its shape (kind, agent, branch, times, the tool's
name, the call's id, the hook's point, callback and tag, token counts, an error's type)
and says ``"hidden": true``. A request's ``reason`` is the pausing hook's words to the
human who decides, shown always.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias, cast

from hooks import HookEvent, Message, ToolCall, Usage
from runner import (
    AttemptDiscardedEvent,
    ErrorEvent,
    Event,
    FallbackEvent,
    ModelAttemptEvent,
    ModelResponseEvent,
    PausedRun,
    PauseEvent,
    PendingRequest,
    RetryEvent,
    RunFinishedEvent,
    RunResult,
    RunStartedEvent,
    ShadowEvent,
    StopEvent,
    ToolAttemptEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)

__all__ = ["JSON", "finished_json", "paused_json", "record_json", "request_json"]

JSON: TypeAlias = dict[str, Any]


def paused_json(
    run: PausedRun,
    content: bool,
    hooks: Mapping[str, Sequence[str]],
    pausers: Mapping[str, str],
    schemas: Mapping[str, Mapping[str, Any]],
) -> JSON:
    """One paused run: ids, agent, when, and each request (``request_json``).

    By request id: ``hooks`` the ``before_tool`` chain its call passed (what may have
    paused it), ``pausers`` the callback that paused it, where known, ``schemas`` its
    tool's argument schema (an edit's form).
    """
    return {
        "run_id": run.run_id,
        "user_id": run.user_id,
        "session_id": run.session_id,
        "agent": run.agent,
        "time": run.time,
        "pending": [
            request_json(request, content, hooks.get(request.id, ()), pausers.get(request.id))
            | {"args_schema": schemas.get(request.id)}
            for request in run.pending
        ],
    }


def request_json(
    request: PendingRequest, content: bool, chain: Sequence[str], paused_by: str | None
) -> JSON:
    """A pending request: reason, kind, allowed decisions, the call, its schema, who paused."""
    return {
        "id": request.id,
        "kind": request.kind,
        "reason": request.reason,
        "agent": request.agent,
        "branch": request.branch,
        "allowed": list(request.allowed),
        "tool": request.call.name,
        "call_id": request.call.id,
        "args": dict(request.call.args) if content else None,
        "schema": None if request.schema is None else dict(request.schema),
        "paused_by": paused_by,
        "chain": list(chain),
        "hidden": not content,
    }


def _call(call: ToolCall, content: bool) -> JSON:
    return {"id": call.id, "name": call.name, "args": dict(call.args) if content else None}


def _message(message: Message, content: bool) -> JSON:
    return {
        "role": message.role,
        "content": message.content if content else None,
        "tool_calls": [_call(call, content) for call in message.tool_calls],
        "name": message.name,
    }


def _usage(usage: Usage | None) -> JSON | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }


def _error(error: BaseException | None, content: bool) -> JSON | None:
    if error is None:
        return None
    return {"type": type(error).__name__, "message": str(error) if content else None}


def _base(record: Event, content: bool) -> JSON:
    return {
        "agent": record.agent,
        "branch": record.branch,
        "time": record.time,
        "hidden": not content,
    }


def _finished(record: object) -> RunFinishedEvent[Any]:
    """``record``, known a ``RunFinishedEvent``, with its output type erased."""
    return cast("RunFinishedEvent[Any]", record)


def finished_json(result: RunResult[Any], time: float, content: bool) -> JSON:
    """How a run ended: status, output (with content on), stop reason, tokens."""
    return {
        "kind": "finished",
        "agent": "",
        "branch": "",
        "time": time,
        "status": result.status,
        "output": result.output if content else None,
        "stop_reason": result.stop_reason,
        "usage": _usage(result.usage),
        "hidden": not content,
    }


def record_json(record: object, content: bool) -> JSON | None:  # noqa: PLR0911, PLR0912
    """One record of a run as the trace page draws it (a flat dict; ``kind`` says which).

    ``None`` for what the trace does not draw (streamed text pieces, anything unknown).
    One ``match`` over every record kind: splitting it would scatter the one table of
    what each kind shows.
    """
    if isinstance(record, RunStartedEvent):
        return {
            "kind": "started",
            "agent": record.agent,
            "branch": record.agent,
            "time": record.time,
            "run_id": record.run_id,
            "hidden": not content,
        }
    if isinstance(record, RunFinishedEvent):
        finished = _finished(record)  # pyright: ignore[reportUnknownArgumentType]
        return finished_json(finished.result, finished.time, content)
    if isinstance(record, HookEvent):
        return {
            "kind": "hook",
            "agent": record.agent,
            "branch": record.branch,
            "time": record.time,
            "point": record.point,
            "outcome": record.outcome,
            "callback": record.callback,
            "tool": record.tool,
            "call_id": record.call_id,
            "attempt": record.attempt,
            "duration": record.duration,
            "error": _error(record.error, content),
            "hidden": not content,
        }
    match record:
        case UserMessageEvent(message=message):
            return _base(record, content) | {"kind": "user", "message": _message(message, content)}
        case ModelAttemptEvent(request=request, attempt=attempt):
            messages = [_message(m, content) for m in request.messages]
            return _base(record, content) | {
                "kind": "model_attempt",
                "attempt": attempt,
                "messages": messages,
            }
        case ModelResponseEvent(response=response):
            return _base(record, content) | {
                "kind": "model_response",
                "text": response.text if content else None,
                "tool_calls": [_call(call, content) for call in response.tool_calls],
                "usage": _usage(response.usage),
                "finish_reason": response.finish_reason,
            }
        case ToolCallEvent(call=call):
            return _base(record, content) | {
                "kind": "tool_call",
                "call": _call(call, content),
                "call_id": call.id,
            }
        case ToolAttemptEvent(call=call, attempt=attempt):
            return _base(record, content) | {
                "kind": "tool_attempt",
                "call_id": call.id,
                "tool": call.name,
                "attempt": attempt,
                "args": dict(call.args) if content else None,  # as it ran: an edit's
            }
        case ToolResultEvent(call=call, result=answer):
            return _base(record, content) | {
                "kind": "tool_result",
                "call_id": call.id,
                "tool": call.name,
                "content": answer.content if content else None,
                "is_error": answer.is_error,
            }
        case ErrorEvent(error=error, operation=operation, attempt=attempt):
            return _base(record, content) | {
                "kind": "error",
                "operation": operation,
                "attempt": attempt,
                "error": _error(error, content),
            }
        case RetryEvent(operation=operation, attempt=attempt, delay=delay, changed=changed):
            return _base(record, content) | {
                "kind": "retry",
                "operation": operation,
                "attempt": attempt,
                "delay": delay,
                "changed": changed,
            }
        case FallbackEvent(operation=operation, attempt=attempt):
            return _base(record, content) | {
                "kind": "fallback",
                "operation": operation,
                "attempt": attempt,
            }
        case AttemptDiscardedEvent(attempt=attempt, reason=reason, call_id=call_id):
            return _base(record, content) | {
                "kind": "discarded",
                "attempt": attempt,
                "reason": reason,
                "call_id": call_id,
            }
        case StopEvent(reason=reason):
            return _base(record, content) | {"kind": "stop", "reason": reason}
        case PauseEvent(request=request):
            return _base(record, content) | {
                "kind": "pause",
                "call_id": request.call.id,
                "tool": request.call.name,
                "request": request_json(request, content, (), None),
            }
        case ShadowEvent():
            return _base(record, content) | {
                "kind": "shadow",
                "point": record.point,
                "callback": record.callback,
                "live": record.live,
                "would": record.would,
                "tool": record.tool,
                "call_id": record.call_id,
                "detail": record.detail if content else None,
            }
        case _:
            return None
