"""What the pages are sent of each record kind, with content served and held back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hooks import HookEvent, Message, ModelRequest, ModelResponse, ToolCall, ToolResult, Usage
from runner import (
    AttemptDiscardedEvent,
    ErrorEvent,
    FallbackEvent,
    ModelAttemptEvent,
    ModelResponseEvent,
    PauseEvent,
    PendingRequest,
    RetryEvent,
    RunFinishedEvent,
    RunResult,
    RunStartedEvent,
    ShadowEvent,
    StopEvent,
    TextDelta,
    ToolAttemptEvent,
    ToolCallDelta,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from runner.web._views import record_json

SECRET = "s3cr3t"
CALL = ToolCall("c1", "act", {"path": SECRET})
WHERE = ("a", "a/b", 10.0)

RECORDS: list[tuple[object, str]] = [
    (UserMessageEvent(*WHERE, message=Message("user", SECRET)), "user"),
    (
        ModelAttemptEvent(*WHERE, request=ModelRequest((Message("user", SECRET),)), attempt=2),
        "model_attempt",
    ),
    (
        ModelResponseEvent(
            *WHERE, response=ModelResponse(SECRET, (CALL,), usage=Usage(input_tokens=3))
        ),
        "model_response",
    ),
    (ToolCallEvent(*WHERE, call=CALL), "tool_call"),
    (ToolAttemptEvent(*WHERE, call=CALL, attempt=2), "tool_attempt"),
    (ToolResultEvent(*WHERE, call=CALL, result=ToolResult(SECRET, is_error=True)), "tool_result"),
    (ErrorEvent(*WHERE, error=ValueError(SECRET), operation="tool", attempt=1), "error"),
    (RetryEvent(*WHERE, operation="model", attempt=2, delay=0.5, changed=True), "retry"),
    (FallbackEvent(*WHERE, operation="model", attempt=2), "fallback"),
    (AttemptDiscardedEvent(*WHERE, attempt=1, reason="failed", call_id="c9"), "discarded"),
    (StopEvent(*WHERE, reason="budget"), "stop"),
    (
        PauseEvent(*WHERE, request=PendingRequest("req_1", CALL, "ok?", "a", "a/b")),
        "pause",
    ),
    (
        ShadowEvent(
            *WHERE, point="before_tool", callback="Cand", live="cont", would="halt", detail=SECRET
        ),
        "shadow",
    ),
    (
        HookEvent(
            "before_tool",
            "a",
            "a/b",
            "pause",
            0.001,
            tool="act",
            call_id="c1",
            error=RuntimeError(SECRET),
            callback="Guard instance",
            time=10.0,
        ),
        "hook",
    ),
    (RunStartedEvent(run_id="r", session_id="s", agent="a", time=9.0), "started"),
    (
        RunFinishedEvent(result=RunResult(SECRET, (), "completed", usage=Usage(2, 3)), time=11.0),
        "finished",
    ),
]


@pytest.mark.parametrize(("record", "kind"), RECORDS, ids=[kind for _, kind in RECORDS])
def test_each_record_keeps_its_shape_and_hides_its_content(record: object, kind: str) -> None:
    """With content off a record says its kind, where and when, and nothing of the run's
    content; with content on the content is there."""
    hidden, shown = record_json(record, False), record_json(record, True)
    assert hidden is not None
    assert shown is not None
    assert hidden["kind"] == shown["kind"] == kind
    assert hidden["hidden"] is True
    assert shown["hidden"] is False
    assert SECRET not in json.dumps(hidden)
    if kind not in ("retry", "fallback", "discarded", "stop", "started"):
        assert SECRET in json.dumps(shown), kind


def test_hook_decisions_say_point_callback_and_tag() -> None:
    """A hook record names its point, the callback that decided, its tag and its call."""
    shaped: Any = record_json(RECORDS[13][0], False)
    assert (shaped["point"], shaped["callback"], shaped["outcome"]) == (
        "before_tool",
        "Guard instance",
        "pause",
    )
    assert (shaped["call_id"], shaped["tool"], shaped["error"]) == (
        "c1",
        "act",
        {"type": "RuntimeError", "message": None},
    )


@pytest.mark.parametrize("piece", [TextDelta("x"), ToolCallDelta(0), object()])
def test_what_the_trace_does_not_draw_is_left_out(piece: object) -> None:
    """Streamed pieces and anything unknown give no record."""
    assert record_json(piece, True) is None
