"""Tests of ``runner._pause.codec``: plain-JSON forms of messages, calls, results, responses."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner import Message, ModelResponse, ToolCall, ToolResult, Usage
from runner._pause.codec import (
    decode_message,
    decode_response,
    decode_tool_call,
    decode_tool_result,
    decode_usage,
    encode_message,
    encode_response,
    encode_tool_call,
    encode_tool_result,
    encode_usage,
)
from runner._tools.arguments import UnparsedArguments
from tests.helpers.strategies import messages, responses, tool_calls, tool_results, usages

CODECS: list[tuple[st.SearchStrategy[Any], Callable[[Any], Any], Callable[[Any], Any]]] = [
    (messages, encode_message, decode_message),
    (tool_calls, encode_tool_call, decode_tool_call),
    (tool_results, encode_tool_result, decode_tool_result),
    (usages, encode_usage, decode_usage),
    (responses, encode_response, decode_response),
]


@pytest.mark.parametrize(
    ("values", "encode", "decode"), CODECS, ids=lambda c: getattr(c, "__name__", "")
)
@settings(max_examples=150, deadline=None, database=None)
@given(data=st.data())
def test_every_record_round_trips_through_json_text_unchanged(
    values: st.SearchStrategy[Any],
    encode: Callable[[Any], Any],
    decode: Callable[[Any], Any],
    data: st.DataObject,
) -> None:
    """Encoded, written as JSON text and read back, a record decodes to an equal record."""
    value = data.draw(values)
    assert decode(json.loads(json.dumps(encode(value)))) == value


def test_fields_at_their_defaults_are_left_out() -> None:
    """A plain message is its role and content; a bare response is its text."""
    assert encode_message(Message("user", "hi")) == {"role": "user", "content": "hi"}
    failed = Message("tool", "boom", tool_call_id="c1", is_error=True)
    assert encode_message(failed) == {
        "role": "tool",
        "content": "boom",
        "tool_call_id": "c1",
        "is_error": True,
    }
    assert decode_message(encode_message(failed)) == failed
    assert encode_response(ModelResponse("ok")) == {"text": "ok"}


def test_a_tool_message_keeps_its_call_id_and_name() -> None:
    """The fields that pair a tool result with its call are written when set."""
    message = Message("tool", "5", tool_call_id="c1", name="add")
    assert encode_message(message) == {
        "role": "tool",
        "content": "5",
        "tool_call_id": "c1",
        "name": "add",
    }


def test_unparsed_arguments_keep_their_text_and_problem() -> None:
    """Broken argument text is stored as raw and problem and comes back as UnparsedArguments."""
    call = ToolCall("c1", "add", UnparsedArguments("{oops", "arguments are not valid JSON"))
    encoded = encode_tool_call(call)
    assert encoded == {
        "id": "c1",
        "name": "add",
        "raw": "{oops",
        "problem": "arguments are not valid JSON",
    }
    decoded = decode_tool_call(encoded)
    assert isinstance(decoded.args, UnparsedArguments)
    assert (decoded.args.raw, decoded.args.problem) == ("{oops", "arguments are not valid JSON")


def test_usage_is_all_four_counts() -> None:
    """A usage is written with every count, and a missing one reads as 0."""
    assert encode_usage(Usage(1, 2, 3, 4)) == {
        "input_tokens": 1,
        "output_tokens": 2,
        "cached_tokens": 3,
        "reasoning_tokens": 4,
    }
    assert decode_usage({"input_tokens": 7}) == Usage(7)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "message must be an object, got list []"),
        ({"role": "user"}, "message must be an object with 'content', got dict"),
        (
            {"role": "robot", "content": ""},
            "message.role must be one of 'system', 'user', 'assistant', 'tool', got str 'robot'",
        ),
        ({"role": "user", "content": 3}, "message.content must be a string, got int 3"),
        ({"role": "user", "content": "", "name": 1}, "message.name must be a string, got int 1"),
        (
            {"role": "tool", "content": "", "tool_call_id": []},
            "message.tool_call_id must be a string, got list []",
        ),
        (
            {"role": "user", "content": "", "tool_calls": {}},
            "message.tool_calls must be an array, got dict {}",
        ),
        (
            {"role": "user", "content": "", "colour": "red"},
            "message.colour must be absent (the known fields are 'role', 'content', "
            "'tool_call_id', 'tool_calls', 'name', 'parts', 'is_error'), got str 'red'",
        ),
        (
            {"role": "tool", "content": "", "is_error": "yes"},
            "message.is_error must be a boolean, got str 'yes'",
        ),
        (
            {"role": "user", "content": "", "is_error": True},
            "message.is_error must be false on a message that is no tool result, got bool True",
        ),
        (
            {"role": "user", "content": "", "parts": {}},
            "message.parts must be an array, got dict {}",
        ),
        (
            {"role": "system", "content": "", "parts": [{"type": "image", "url": "u"}]},
            "message.parts[0].type must be absent, got str 'image'",
        ),
        (
            {"role": "user", "content": "", "parts": [{"type": "reasoning"}]},
            "message.parts[0].type must be 'image' or 'file', got str 'reasoning'",
        ),
        (
            {"role": "user", "content": "", "parts": [{"type": "image"}]},
            "message.parts[0]: ImagePart takes exactly one of url and data, got neither",
        ),
        (
            {"role": "user", "content": "", "parts": [{"type": "image", "data": "&&"}]},
            "message.parts[0].data must be base64 text, got str '&&'",
        ),
        (
            {"role": "user", "content": "", "parts": [{"type": "image", "data": "AA=="}]},
            "message.parts[0]: ImagePart.media_type must say what the data is",
        ),
        (
            {
                "role": "user",
                "content": "",
                "parts": [{"type": "image", "url": "u", "media_type": "application/pdf"}],
            },
            "message.parts[0]: ImagePart.media_type must be an image/* media type",
        ),
        (
            {"role": "user", "content": "", "parts": [{"type": "file", "url": "u", "size": 3}]},
            "message.parts[0].size must be absent",
        ),
        (
            {
                "role": "assistant",
                "content": "",
                "parts": [{"type": "reasoning", "provider": "openai", "payload": 7}],
            },
            "message.parts[0].payload must be a string, got int 7",
        ),
        (
            {
                "role": "assistant",
                "content": "",
                "parts": [{"type": "reasoning", "provider": "", "payload": "{}"}],
            },
            "message.parts[0]: ReasoningPart.provider must be a non-empty str",
        ),
        (
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c", "name": "f", "args": [1]}],
            },
            "message.tool_calls[0].args must be an object, got list [1]",
        ),
        (
            {"role": "assistant", "content": "", "tool_calls": [{"id": 1, "name": "f"}]},
            "message.tool_calls[0].id must be a string, got int 1",
        ),
    ],
)
def test_a_malformed_message_names_the_field_what_it_must_be_and_what_it_is(
    data: object, message: str
) -> None:
    """Decoding refuses a malformed message with a ValueError naming the field."""
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        decode_message(data)


@pytest.mark.parametrize(
    ("decode", "data", "message"),
    [
        (
            decode_tool_call,
            {"id": "c", "name": "f", "args": {}, "raw": "x", "problem": "p"},
            "tool_call must be either 'args' or 'raw' and 'problem'",
        ),
        (
            decode_tool_call,
            {"id": "c", "name": "f", "raw": "x"},
            "tool_call.problem must be a string, got NoneType None",
        ),
        (
            decode_tool_result,
            {"content": "x", "is_error": 1},
            "tool_result.is_error must be a boolean, got int 1",
        ),
        (decode_tool_result, "x", "tool_result must be an object, got str 'x'"),
        (
            decode_tool_result,
            {"content": "x", "structured": [1]},
            "tool_result.structured must be an object, got list [1]",
        ),
        (
            decode_usage,
            {"input_tokens": -1},
            "usage.input_tokens must be an integer >= 0, got int -1",
        ),
        (
            decode_usage,
            {"output_tokens": True},
            "usage.output_tokens must be an integer >= 0, got bool True",
        ),
        (
            decode_response,
            {"text": "", "usage": {"input_tokens": 1.5}},
            "response.usage.input_tokens must be an integer >= 0, got float 1.5",
        ),
        (
            decode_response,
            {"finish_reason": 0},
            "response.finish_reason must be a string, got int 0",
        ),
        (
            decode_response,
            {"model": ["gpt"]},
            "response.model must be a string, got list ['gpt']",
        ),
        (
            decode_response,
            {"tool_calls": [{"id": "c", "name": "f"}, {"id": "c", "name": "g"}]},
            "response.tool_calls must be calls with distinct ids, got list ['c', 'c']",
        ),
    ],
)
def test_malformed_records_name_the_field(
    decode: Callable[[object], object], data: object, message: str
) -> None:
    """Each decoder refuses malformed data with a ValueError naming the field."""
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        decode(data)


def test_where_prefixes_the_path_of_a_nested_error() -> None:
    """The caller's ``where`` starts the path, so an error says which stored item is bad."""
    with pytest.raises(ValueError, match=r"^messages\[7\]\.content must be a string"):
        decode_message({"role": "user", "content": None}, where="messages[7]")


def test_args_decode_to_a_plain_dict_whatever_mapping_was_encoded() -> None:
    """Any mapping of arguments is written as a JSON object and read back as a dict."""
    call = ToolCall("c", "f", MappingProxyType({"a": 1}))
    decoded = decode_tool_call(json.loads(json.dumps(encode_tool_call(call))))
    args: object = decoded.args
    assert type(args) is dict
    assert args == {"a": 1}


def test_a_tool_result_defaults_to_no_error() -> None:
    """A result without is_error is a successful one."""
    assert decode_tool_result({"content": "x"}) == ToolResult("x")


def test_a_tool_results_structured_content_round_trips() -> None:
    """``structured`` (an MCP tool's structuredContent) is kept, and left out when None."""
    result = ToolResult("5", structured={"result": 5, "items": [1, {"a": None}]})
    encoded = encode_tool_result(result)
    assert encoded["structured"] == {"result": 5, "items": [1, {"a": None}]}
    assert decode_tool_result(encoded) == result
    assert "structured" not in encode_tool_result(ToolResult("5"))
    assert decode_tool_result(encoded) != ToolResult("5")


# -- the paths errors name (mutation-test hardening) -------------------------------------


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([], r"response must be an object, got list \[\]"),
        ({"text": 1}, "response.text must be a string, got int 1"),
        ({"tool_calls": {}}, r"response\.tool_calls must be an array, got dict \{\}"),
        ({"tool_calls": [{"id": 1, "name": "t"}]}, r"response.tool_calls\[0\].id must be a string"),
    ],
)
def test_a_bad_response_names_the_field(data: object, words: str) -> None:
    """Each malformed field of a response is named by its path under ``response``."""
    with pytest.raises(ValueError, match=f"^{words}"):
        decode_response(data)


def test_a_response_without_text_has_empty_text() -> None:
    """A response encoded without ``text`` decodes to the empty text."""
    assert decode_response({}).text == ""


def test_a_tool_call_with_only_a_problem_needs_its_raw_text() -> None:
    """``problem`` alone marks unparsed arguments: the missing ``raw`` is named."""
    with pytest.raises(ValueError, match=r"^tool_call\.raw must be a string, got NoneType None$"):
        decode_tool_call({"id": "c1", "name": "t", "problem": "bad JSON"})


def test_a_tool_call_with_a_bad_raw_text_names_it() -> None:
    """Unparsed arguments whose ``raw`` is no string are refused naming ``raw``."""
    with pytest.raises(ValueError, match=r"^tool_call\.raw must be a string, got int 1$"):
        decode_tool_call({"id": "c1", "name": "t", "raw": 1, "problem": "p"})


def test_a_tool_call_with_args_and_raw_says_all_three() -> None:
    """``args`` beside ``raw`` and ``problem`` is refused, saying what it must be."""
    expected = "tool_call must be either 'args' or 'raw' and 'problem', got str 'all three'"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        decode_tool_call({"id": "c1", "name": "t", "args": {}, "raw": "x", "problem": "p"})
