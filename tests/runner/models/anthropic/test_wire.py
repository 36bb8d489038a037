"""hookline's messages to the Messages API's and back, with no network and no SDK."""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any

import pytest

from hooks import (
    FilePart,
    ImagePart,
    Message,
    ModelResponse,
    ReasoningPart,
    ToolCall,
    ToolSpec,
    Usage,
)
from runner._models.anthropic.wire import from_message, to_tools, to_wire, usage_of
from runner._tools.arguments import UnparsedArguments

PNG = b"\x89PNG\r\n\x1a\nfake"
PDF = b"%PDF-1.7 fake"
THOUGHT = {"type": "thinking", "thinking": "2 + 3 is 5", "signature": "EqQBCkYIAxgCIkD+/="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}


def part(block: dict[str, Any]) -> ReasoningPart:
    """The reasoning part the model makes of ``block``."""
    return ReasoningPart("anthropic", json.dumps(block, separators=(",", ":")), "")


def test_leading_system_messages_are_the_system_text() -> None:
    """The instruction leaves the messages for the top-level ``system``; two join."""
    wire = to_wire(
        (Message("system", "Be brief."), Message("system", "Be kind."), Message("user", "hi"))
    )
    assert wire.system == "Be brief.\n\nBe kind."
    assert wire.messages == [{"role": "user", "content": "hi"}]
    assert to_wire((Message("user", "hi"),)).system is None


def test_a_system_message_mid_conversation_is_refused() -> None:
    """The API takes system text only at the top: later, it is refused, never moved."""
    history = (
        Message("user", "hi"),
        Message("assistant", "hello"),
        Message("system", "Now French."),
    )
    with pytest.raises(ValueError, match="system message after the conversation started"):
        to_wire(history)


def test_tool_calls_and_consecutive_results_go_as_blocks_of_one_user_message() -> None:
    """tool_use blocks follow the text; the results of one turn share one user message; a
    failed result says ``is_error``."""
    calls = (ToolCall("toolu_1", "add", {"a": 2, "b": 3}), ToolCall("toolu_2", "now", {}))
    wire = to_wire(
        (
            Message("user", "Sum, and the time?"),
            Message("assistant", "Let me see.", tool_calls=calls),
            Message("tool", "5", tool_call_id="toolu_1", name="add"),
            Message("tool", "RuntimeError: no clock", tool_call_id="toolu_2", is_error=True),
            Message("assistant", "5; no clock."),
            Message("user", "Thanks"),
        )
    )
    assert wire.messages == [
        {"role": "user", "content": "Sum, and the time?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me see."},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
                {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "is_error": True,
                    "content": "RuntimeError: no clock",
                },
            ],
        },
        {"role": "assistant", "content": "5; no clock."},
        {"role": "user", "content": "Thanks"},
    ]


def test_reasoning_goes_back_first_unchanged_and_in_order() -> None:
    """Anthropic's own thinking blocks lead the assistant turn, exactly as received."""
    turn = Message(
        "assistant",
        "Adding.",
        tool_calls=(ToolCall("toolu_1", "add", {"a": 2, "b": 3}),),
        parts=(part(THOUGHT), part(REDACTED)),
    )
    wire = to_wire((Message("user", "2+3?"), turn))
    assert wire.messages[1]["content"] == [
        THOUGHT,
        REDACTED,
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
    ]
    assert wire.left_out == Counter()


def test_another_providers_reasoning_is_left_out_and_counted() -> None:
    """OpenAI's reasoning items cannot go to Anthropic: left out, and counted for the log."""
    openai_item = ReasoningPart("openai", '{"type":"reasoning","id":"rs_1"}', "thought")
    turns = (
        Message("user", "hi"),
        Message("assistant", "hello", parts=(openai_item, part(THOUGHT), openai_item)),
    )
    wire = to_wire(turns)
    assert wire.messages[1]["content"] == [THOUGHT, {"type": "text", "text": "hello"}]
    assert wire.left_out == Counter({"openai": 2})


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ("not json", "no JSON object"),
        ("[1]", "no JSON object"),
        ('{"type":"text"}', "no thinking block"),
    ],
)
def test_a_forged_anthropic_payload_is_refused(payload: str, problem: str) -> None:
    """A payload that is no thinking block would be rejected by the API: said here."""
    turn = Message("assistant", "x", parts=(ReasoningPart("anthropic", payload, ""),))
    with pytest.raises(ValueError, match=problem):
        to_wire((Message("user", "hi"), turn))


def test_user_images_and_files_become_image_and_document_blocks() -> None:
    """Bytes go base64, URLs as URL sources, a data: URL as base64, text files as text."""
    encoded = base64.b64encode(PNG).decode()
    message = Message(
        "user",
        "What is in these?",
        parts=(
            ImagePart(data=PNG, media_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            ImagePart(url=f"data:image/png;base64,{encoded}"),
            FilePart(data=PDF, media_type="application/pdf", name="report.pdf"),
            FilePart(url="https://example.com/paper.pdf"),
            FilePart(data="héllo".encode(), media_type="text/plain"),
        ),
    )
    (sent,) = to_wire((message,)).messages
    assert sent == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in these?"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": encoded},
            },
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": encoded},
            },
            {
                "type": "document",
                "source": {
                    "type": "base64",
                    "media_type": "application/pdf",
                    "data": base64.b64encode(PDF).decode(),
                },
                "title": "report.pdf",
            },
            {"type": "document", "source": {"type": "url", "url": "https://example.com/paper.pdf"}},
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "héllo"},
            },
        ],
    }


def test_a_tool_results_images_go_inside_its_tool_result() -> None:
    """A screenshot a tool returns rides in the tool_result's content, after its text."""
    result = Message(
        "tool",
        "the page",
        tool_call_id="toolu_1",
        parts=(ImagePart(data=PNG, media_type="image/png"),),
    )
    call = Message("assistant", "", tool_calls=(ToolCall("toolu_1", "shot", {}),))
    wire = to_wire((Message("user", "look"), call, result))
    assert wire.messages[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [
                    {"type": "text", "text": "the page"},
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": base64.b64encode(PNG).decode(),
                        },
                    },
                ],
            }
        ],
    }


@pytest.mark.parametrize(
    ("media", "problem"),
    [
        (ImagePart(data=b"x", media_type="image/tiff"), "image of type 'image/tiff'"),
        (FilePart(data=b"x", media_type="application/zip"), "file of type 'application/zip'"),
        (FilePart(data=b"\xff\xfe", media_type="text/plain"), "not UTF-8"),
        (ImagePart(url="data:image/png,rawbytes"), "data: URL that is not"),
        (ImagePart(url="data:image/png;base64,@@@"), "not base64"),
    ],
)
def test_what_the_api_cannot_carry_is_refused_naming_the_message(
    media: ImagePart | FilePart, problem: str
) -> None:
    """Never dropped: a ValueError naming the message and what to do."""
    with pytest.raises(ValueError, match=problem) as raised:
        to_wire((Message("user", "see", parts=(media,)),))
    assert "in a user message" in str(raised.value)


def test_tools_are_name_description_and_input_schema() -> None:
    """A tool with no schema takes an empty object."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert to_tools((ToolSpec("add", "Add.", schema), ToolSpec("now"))) == [
        {"name": "add", "description": "Add.", "input_schema": schema},
        {"name": "now", "description": "", "input_schema": {"type": "object", "properties": {}}},
    ]


def test_a_message_maps_to_a_response_with_its_reasoning_parts() -> None:
    """Text joined, tool calls, thinking blocks as parts (payload exact), model, usage."""
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5-20260901",
        "content": [
            THOUGHT,
            REDACTED,
            {"type": "text", "text": "Let me "},
            {"type": "text", "text": "add."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 7, "output_tokens": 30},
    }
    assert from_message(body) == ModelResponse(
        "Let me add.",
        (ToolCall("toolu_1", "add", {"a": 2, "b": 3}),),
        Usage(7, 30),
        "tool_calls",
        "claude-sonnet-5-5-20260901",
        (
            ReasoningPart("anthropic", json.dumps(THOUGHT, separators=(",", ":")), "2 + 3 is 5"),
            ReasoningPart("anthropic", json.dumps(REDACTED, separators=(",", ":")), ""),
        ),
    )


def test_tool_input_that_is_no_object_fails_the_call_not_the_answer() -> None:
    """The runner tells the model about it (ToolArgumentsError), as for broken JSON."""
    body = {
        "type": "message",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": [1]}],
    }
    (call,) = from_message(body).tool_calls
    assert isinstance(call.args, UnparsedArguments)


@pytest.mark.parametrize(
    ("reason", "mapped"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause_turn"),
        (None, None),
    ],
)
def test_stop_reasons_are_mapped(reason: str | None, mapped: str | None) -> None:
    """Anthropic's stop reasons in hookline's words; pause_turn passes as it came."""
    body: dict[str, Any] = {"type": "message", "content": [], "stop_reason": reason}
    assert from_message(body).finish_reason == mapped


def test_usage_counts_the_whole_input_and_the_cached_part() -> None:
    """input_tokens excludes the cache: the total adds cache writes and reads; cached is
    the reads; thinking tokens are reasoning when the API gives them."""
    usage = {
        "input_tokens": 20,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
        "output_tokens": 50,
        "output_tokens_details": {"thinking_tokens": 30},
    }
    assert usage_of(usage) == Usage(1120, 50, 1000, 30)
    assert usage_of(
        {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": None}
    ) == Usage(3, 4)
    assert usage_of(None) is None


@pytest.mark.parametrize(
    "body",
    [
        {"type": "message", "content": "text"},
        {"type": "message", "content": [{"type": "text", "text": 5}]},
        {"type": "message", "content": [], "usage": {"input_tokens": -1}},
        {"type": "message", "content": [], "stop_reason": 3},
    ],
)
def test_a_field_of_the_wrong_shape_is_a_type_error(body: dict[str, Any]) -> None:
    """The model turns it into a ProviderError quoting the body."""
    with pytest.raises(TypeError):
        from_message(body)
