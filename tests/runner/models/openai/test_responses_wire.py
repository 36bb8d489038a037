"""The Responses wire format, both ways, without a server: ``to_input`` and ``from_response``."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hooks import ImagePart, Message, ReasoningPart, ToolCall, Usage
from runner._models.openai.responses_wire import finish_reason, from_response, to_input
from tests.helpers.responses_server import function_call, message, reasoning, response_body
from tests.helpers.strategies import json_values, messages


def test_a_tool_result_with_text_and_an_image_is_a_list_of_parts() -> None:
    """The text first, then the image, under the call's ``call_id``."""
    tool = Message(
        "tool", "a chart", tool_call_id="c1", parts=(ImagePart(url="https://example.test/c.png"),)
    )
    assert to_input([tool]).items == [
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [
                {"type": "input_text", "text": "a chart"},
                {
                    "type": "input_image",
                    "image_url": "https://example.test/c.png",
                    "detail": "auto",
                },
            ],
        }
    ]


@pytest.mark.parametrize("payload", ["not json", "[1, 2]", '"text"'])
def test_an_openai_reasoning_part_that_holds_no_item_is_refused(payload: str) -> None:
    """A payload that is no JSON object cannot be sent back: a ``ValueError`` saying so."""
    turn = Message("assistant", "", parts=(ReasoningPart("openai", payload),))
    with pytest.raises(ValueError, match="holds no reasoning item"):
        to_input([turn])


def test_an_assistant_turn_of_calls_alone_sends_no_empty_message() -> None:
    """No text: only the calls, their arguments as JSON text (non-ASCII kept)."""
    turn = Message("assistant", "", tool_calls=(ToolCall("c1", "say", {"text": "héllo"}),))
    assert to_input([turn]).items == [
        {"type": "function_call", "call_id": "c1", "name": "say", "arguments": '{"text": "héllo"}'}
    ]
    assert to_input([turn]).instructions is None


def test_a_call_without_call_id_takes_its_item_id_else_its_position() -> None:
    """``call_id`` first, then the item's ``id``, then ``call_<n>``."""
    bare: dict[str, Any] = {"type": "function_call", "name": "f", "arguments": ""}
    answer = from_response(
        response_body(function_call("c1", "f", "{}"), {**bare, "id": "fc_9"}, bare)
    )
    assert [call.id for call in answer.tool_calls] == ["c1", "fc_9", "call_2"]
    assert [dict(call.args) for call in answer.tool_calls] == [{}, {}, {}]


def test_reasoning_without_a_summary_shows_its_reasoning_text() -> None:
    """An open-weight model's reasoning item (text, no summary): the text is the summary."""
    item = {"type": "reasoning", "id": "rs_1", "summary": [],
            "content": [{"type": "reasoning_text", "text": "step one"}]}  # fmt: skip
    (part,) = from_response(response_body(item)).parts
    assert (part.summary, json.loads(part.payload)) == ("step one", item)


def test_texts_of_several_messages_join_and_other_items_are_skipped() -> None:
    """Every ``output_text`` in order; a hosted tool's item adds nothing."""
    answer = from_response(
        response_body(
            message("Hello, "),
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            message("world.", item_id="msg_2"),
            reasoning("rs_1", "E"),
        )
    )
    assert answer.text == "Hello, world."
    assert answer.parts == (ReasoningPart("openai", json.dumps(reasoning("rs_1", "E")), ""),)
    assert answer.usage is None


@pytest.mark.parametrize(
    ("status", "details", "calls", "finish"),
    [
        ("completed", None, True, "tool_calls"),
        ("completed", None, False, "stop"),
        ("incomplete", {"reason": "max_output_tokens"}, False, "length"),
        ("incomplete", {"reason": "content_filter"}, True, "content_filter"),
        ("incomplete", {"reason": "max_messages"}, False, "max_messages"),
        ("incomplete", None, False, "incomplete"),
        ("cancelled", None, False, "cancelled"),
        (None, None, False, None),
    ],
)
def test_the_finish_reason_mapping(
    status: str | None, details: dict[str, str] | None, calls: bool, finish: str | None
) -> None:
    """``status`` and ``incomplete_details.reason`` in Chat Completions' words where they fit."""
    assert finish_reason({"status": status, "incomplete_details": details}, tool_calls=calls) == (
        finish
    )


def test_usage_without_details_counts_zero() -> None:
    """Absent details are 0 cached and 0 reasoning tokens."""
    body = response_body(used={"input_tokens": 7, "output_tokens": 3})
    assert from_response(body).usage == Usage(7, 3, 0, 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(messages, max_size=6))
def test_every_conversation_is_written_whole_and_as_json(history: list[Message]) -> None:
    """Any conversation: the body is JSON; each OpenAI reasoning payload goes out as the
    object it holds, in order, and each other provider's part is counted, not sent; each
    assistant call is a ``function_call`` with its id; no system message is lost."""
    written = to_input(history)
    json.dumps(written.items)  # nothing that JSON cannot carry
    sent = [item for item in written.items if item.get("type") == "reasoning"]
    kept = [
        json.loads(part.payload)
        for message in history
        if message.role == "assistant"
        for part in message.parts
        if isinstance(part, ReasoningPart) and part.provider == "openai"
    ]
    assert sent == kept
    others = Counter(
        part.provider
        for message in history
        if message.role == "assistant"
        for part in message.parts
        if isinstance(part, ReasoningPart) and part.provider != "openai"
    )
    assert written.left_out == dict(others)
    calls = [item["call_id"] for item in written.items if item.get("type") == "function_call"]
    assert calls == [
        call.id for message in history if message.role == "assistant" for call in message.tool_calls
    ]
    systems = [message.content for message in history if message.role == "system"]
    later = [
        item["content"]
        for item in written.items
        if item.get("type") == "message" and item["role"] == "system"
    ]
    opening = systems[: len(systems) - len(later)]
    assert later == systems[len(opening) :]
    assert written.instructions == ("\n\n".join(opening) if opening else None)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=8).filter(lambda key: key not in {"summary", "content"}),
        json_values,
        max_size=4,
    )
)
def test_a_reasoning_item_goes_back_as_it_came(fields: dict[str, Any]) -> None:
    """Any reasoning item: its part's payload is its JSON text, and the next request
    sends that same object back."""
    item = {**fields, "type": "reasoning"}
    (part,) = from_response(response_body(item)).parts
    assert part.payload == json.dumps(item, ensure_ascii=False)
    turn = Message("assistant", "", parts=(part,))
    assert to_input([turn]).items[0] == item
