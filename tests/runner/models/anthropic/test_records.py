"""What a durable run stores of an ``AnthropicModel`` call loads back: its answer with the
thinking payload byte for byte, and the SDK's errors with their type, status and body."""

from __future__ import annotations

import anthropic
import httpx2

from runner import is_transient, retry_after
from runner._durable.codec import dump, load
from runner._models.anthropic.wire import from_message

REQUEST = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_an_answer_with_thinking_loads_back_equal() -> None:
    """The ReasoningPart's payload (the block with its signature) survives unchanged."""
    thought = {"type": "thinking", "thinking": "t", "signature": "EqQBCkYIAxgC+/=="}
    response = from_message(
        {
            "type": "message",
            "model": "claude-test-20260101",
            "content": [thought, {"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 2},
        }
    )
    copy = load(dump(response))
    assert copy == response
    assert (
        copy.parts[0].payload == '{"type":"thinking","thinking":"t","signature":"EqQBCkYIAxgC+/=="}'
    )


def test_the_sdks_errors_load_back_with_their_type_and_stay_transient() -> None:
    """A 529 and a mid-stream error event come back as the SDK's classes, with the status,
    body and headers a retry reads."""
    headers = {"retry-after": "4"}
    response = httpx2.Response(529, headers=headers, json=OVERLOADED, request=REQUEST)
    overloaded = load(dump(anthropic.OverloadedError("529", response=response, body=OVERLOADED)))
    assert type(overloaded) is anthropic.OverloadedError
    assert (overloaded.status_code, overloaded.body) == (529, OVERLOADED)
    assert is_transient(overloaded)
    assert retry_after(overloaded) == 4.0
    stream = httpx2.Response(200, json=OVERLOADED, request=REQUEST)
    event = load(dump(anthropic.APIStatusError("event", response=stream, body=OVERLOADED)))
    assert (type(event), event.status_code) == (anthropic.APIStatusError, 200)
    assert is_transient(event)
