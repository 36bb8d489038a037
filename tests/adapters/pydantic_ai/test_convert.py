"""The pydantic-ai conversions on their own: retry prompts of older histories, messages a
hook changed or added around the model's responses, and responses with parts hooks do
not see."""

from __future__ import annotations

import pytest
from pydantic_ai import messages as pa

from hooks import Message, ModelResponse, ToolCall
from runner.adapters import pydantic_ai as adapter


def _retry_part(tool_name: str | None) -> pa.RetryPromptPart:  # pyright: ignore[reportDeprecated]
    with pytest.warns(Warning, match="`RetryPromptPart` is deprecated"):
        return pa.RetryPromptPart("bad input", tool_name=tool_name, tool_call_id="c1")  # pyright: ignore[reportDeprecated]


def test_a_retry_prompt_for_no_tool_is_a_user_message() -> None:
    """An older history's retry prompt that answers no tool call is the user's feedback."""
    message = adapter._from_request_part(_retry_part(None))
    assert message.role == "user"
    assert message.content.startswith("Validation feedback:\nbad input")


def test_a_retry_prompt_for_a_tool_is_an_error_tool_message() -> None:
    """An older history's retry prompt for a tool call is that call's error result."""
    message = adapter._from_request_part(_retry_part("t"))
    assert (message.role, message.tool_call_id, message.name, message.is_error) == (
        "tool",
        "c1",
        "t",
        True,
    )
    assert message.content.startswith("bad input")


def test_messages_a_hook_changed_around_responses_are_rebuilt_in_order() -> None:
    """An assistant message first, one a hook added (no original), and a history ending
    on a response: each response stands where it was, the original kept where unchanged."""
    kept = pa.ModelResponse(parts=[pa.TextPart("kept answer")])
    kept_message = Message("assistant", "kept answer")
    out = adapter._from_messages(
        [
            kept_message,
            Message("user", "next"),
            Message("assistant", "added", tool_calls=(ToolCall("c9", "t", {"a": 1}),)),
        ],
        [(kept_message, kept)],
    )
    assert len(out) == 3
    assert out[0] is kept
    assert isinstance(out[1], pa.ModelRequest)
    assert [type(p) for p in out[1].parts] == [pa.UserPromptPart]
    added = out[2]
    assert isinstance(added, pa.ModelResponse)
    assert [type(p) for p in added.parts] == [pa.TextPart, pa.ToolCallPart]
    call = added.parts[1]
    assert isinstance(call, pa.ToolCallPart)
    assert (call.tool_name, call.args, call.tool_call_id) == ("t", {"a": 1}, "c9")


def test_a_response_without_text_has_no_text_part() -> None:
    """A response of tool calls only becomes a pydantic-ai response without a text part."""
    out = adapter._to_response(ModelResponse(tool_calls=(ToolCall("c1", "t", {}),)))
    assert [type(p) for p in out.parts] == [pa.ToolCallPart]
    assert adapter._to_response(ModelResponse()).parts == []


def test_parts_hooks_do_not_see_are_left_out_of_the_response_they_read() -> None:
    """A response's thinking part is neither its text nor a tool call."""
    response = pa.ModelResponse(
        parts=[pa.ThinkingPart("hmm"), pa.TextPart("answer"), pa.ToolCallPart("t", {"a": 1}, "c1")]
    )
    read = adapter._from_response(response)
    assert read.text == "answer"
    assert read.tool_calls == (ToolCall("c1", "t", {"a": 1}),)


def test_a_request_part_with_no_hookline_form_is_an_empty_user_message() -> None:
    """A part hookline has no form for reads as an empty user message (kept as it was
    unless a hook changes it)."""
    assert adapter._from_request_part(object()) == Message("user", "")
