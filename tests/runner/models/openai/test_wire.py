"""The Chat Completions mapping: hookline's messages and tools out, completions back in."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion

from runner import (
    FilePart,
    ImagePart,
    Message,
    ModelResponse,
    ReasoningPart,
    ToolCall,
    ToolSpec,
    Usage,
)
from runner._models.openai.wire import from_completion, to_messages, to_tools, usage_of
from runner._tools.arguments import UnparsedArguments


def chat(message: dict[str, Any], **extra: Any) -> ChatCompletion:
    """A completion with one choice holding ``message``, as the SDK would build it."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        **extra,
    }
    return ChatCompletion.model_validate(body)


def test_each_role_maps_to_its_wire_message() -> None:
    """System, user, assistant and tool messages keep their order and their fields."""
    messages = (
        Message("system", "rules", name="ops"),
        Message("user", "hi", name="ana"),
        Message("assistant", "hello", name="bot"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "add", {"a": 1, "b": "é"}),)),
        Message("assistant", "checking", tool_calls=(ToolCall("c2", "now"),)),
        Message("tool", "3", tool_call_id="c1", name="add"),
        Message("assistant", ""),
        Message("system", "plain"),
        Message("user", "plain"),
    )
    assert to_messages(messages) == [
        {"role": "system", "content": "rules", "name": "ops"},
        {"role": "user", "content": "hi", "name": "ana"},
        {"role": "assistant", "content": "hello", "name": "bot"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": "é"}'},
                }
            ],
        },
        {
            "role": "assistant",
            "content": "checking",
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "now", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "3", "tool_call_id": "c1"},
        {"role": "assistant", "content": ""},
        {"role": "system", "content": "plain"},
        {"role": "user", "content": "plain"},
    ]


def test_unparsed_arguments_go_back_as_an_empty_object() -> None:
    """A call whose text was no JSON object is sent back with ``{}``, never the bad text."""
    call = ToolCall("c1", "add", UnparsedArguments('{"a": ', "arguments are not valid JSON"))
    (message,) = to_messages([Message("assistant", "", tool_calls=(call,))])
    assert message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
        ],
    }


def test_tools_map_to_function_tools_and_a_missing_schema_takes_nothing() -> None:
    """A spec's schema goes out as is; an empty one as an object with no properties."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert to_tools([ToolSpec("add", "Add.", schema), ToolSpec("now")]) == [
        {
            "type": "function",
            "function": {"name": "add", "description": "Add.", "parameters": schema},
        },
        {
            "type": "function",
            "function": {
                "name": "now",
                "description": "",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]
    assert to_tools([]) == []


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"role": "assistant", "content": "hi"}, "hi"),
        ({"role": "assistant", "content": None}, ""),
        (
            {"role": "assistant", "content": None, "refusal": "I can't help with that."},
            "I can't help with that.",
        ),
        ({"role": "assistant", "content": "", "refusal": "no"}, ""),
    ],
)
def test_text_is_the_content_else_the_refusal_else_empty(
    message: dict[str, Any], text: str
) -> None:
    """A refusal is the answer's text only when there is no content at all."""
    assert from_completion(chat(message)) == ModelResponse(text, finish_reason="stop", model="m")


def test_tool_calls_without_ids_get_their_position() -> None:
    """Some local servers send no call id: ``call_<n>`` stands in, so results can pair."""
    calls = [
        {"id": "", "type": "function", "function": {"name": "a", "arguments": '{"x": 1}'}},
        {"id": "call_kept", "type": "function", "function": {"name": "b", "arguments": "{}"}},
    ]
    response = from_completion(chat({"role": "assistant", "content": None, "tool_calls": calls}))
    assert response.tool_calls == (ToolCall("call_0", "a", {"x": 1}), ToolCall("call_kept", "b"))


def test_a_custom_tool_call_reads_its_input_as_arguments() -> None:
    """hookline offers no custom tools, but a custom call a server sends still maps."""
    call = {"id": "c", "type": "custom", "custom": {"name": "raw", "input": "free text"}}
    response = from_completion(chat({"role": "assistant", "content": None, "tool_calls": [call]}))
    (mapped,) = response.tool_calls
    assert mapped.name == "raw"
    assert isinstance(mapped.args, UnparsedArguments)
    assert mapped.args.raw == "free text"


def test_a_completion_without_choices_is_a_value_error() -> None:
    """No choice means no answer: an error naming the completion, for ``on_model_error``."""
    empty = ChatCompletion.model_validate(
        {"id": "chatcmpl-9", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )
    with pytest.raises(ValueError, match="'chatcmpl-9' holds no choices"):
        from_completion(empty)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, None),
        ({"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}, Usage(5, 2)),
        (
            {
                "prompt_tokens": 5,
                "completion_tokens": 2,
                "total_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": None},
                "completion_tokens_details": {"reasoning_tokens": None},
            },
            Usage(5, 2),
        ),
        (
            {
                "prompt_tokens": 50,
                "completion_tokens": 20,
                "total_tokens": 70,
                "prompt_tokens_details": {"cached_tokens": 30},
                "completion_tokens_details": {"reasoning_tokens": 12},
            },
            Usage(50, 20, 30, 12),
        ),
    ],
)
def test_usage_maps_each_count_and_absent_details_are_zero(
    usage: dict[str, Any] | None, expected: Usage | None
) -> None:
    """prompt -> input, completion -> output, cached and reasoning details (else 0)."""
    given = None if usage is None else CompletionUsage.model_validate(usage)
    assert usage_of(given) == expected
    assert (
        from_completion(chat({"role": "assistant", "content": "x"}, usage=usage)).usage == expected
    )


def test_a_users_images_and_files_become_content_parts() -> None:
    """Text first, then each image as ``image_url`` (bytes as a ``data:`` URL) and each
    file's bytes as ``file_data`` with its name; a message without parts stays a string."""
    message = Message(
        "user",
        "compare",
        name="ann",
        parts=(
            ImagePart(url="https://example.test/a.png"),
            ImagePart(data=b"\x01\x02", media_type="image/png"),
            FilePart(data=b"%PDF", media_type="application/pdf", name="r.pdf"),
        ),
    )
    assert to_messages([message]) == [
        {
            "role": "user",
            "name": "ann",
            "content": [
                {"type": "text", "text": "compare"},
                {"type": "image_url", "image_url": {"url": "https://example.test/a.png"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AQI="}},
                {
                    "type": "file",
                    "file": {
                        "file_data": "data:application/pdf;base64,JVBERg==",
                        "filename": "r.pdf",
                    },
                },
            ],
        }
    ]
    assert to_messages([Message("user", "hi")]) == [{"role": "user", "content": "hi"}]


def test_what_chat_completions_cannot_carry_is_refused_not_dropped() -> None:
    """A file by URL and a tool result's image are a ``ValueError`` naming the API to
    use; another provider's reasoning is left out (the API takes none back)."""
    by_url = Message("user", "read", parts=(FilePart(url="https://example.test/r.pdf"),))
    with pytest.raises(ValueError, match=r"cannot carry a file by URL \(give its bytes\)"):
        to_messages([by_url])
    picture = Message(
        "tool", "", tool_call_id="c1", parts=(ImagePart(url="https://example.test/a.png"),)
    )
    with pytest.raises(ValueError, match="a tool message holds ImagePart; use a model whose API"):
        to_messages([picture])
    thought = ReasoningPart("anthropic", '{"type": "thinking"}', "hmm")
    assert to_messages([Message("assistant", "ok", parts=(thought,))]) == [
        {"role": "assistant", "content": "ok"}
    ]
