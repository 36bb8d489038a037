"""``StreamReader`` fed events directly: the events and fields it may meet that the
loopback server's streams do not send, and the hostile ones it refuses."""

from __future__ import annotations

from typing import Any

import pytest

from runner import TextDelta, ToolCall, ToolCallDelta, Usage
from runner._models.anthropic.stream import StreamReader


def _read(*events: dict[str, Any]) -> tuple[StreamReader, list[TextDelta | ToolCallDelta]]:
    reader = StreamReader()
    deltas: list[TextDelta | ToolCallDelta] = []
    for event in events:
        deltas.extend(reader.read(event))
    return reader, deltas


def _start(index: object, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def test_a_message_without_usage_or_stop_reason_has_neither() -> None:
    """A ``message_start`` without usage and a ``message_delta`` without a stop reason
    leave both unset; the text still reads."""
    reader, deltas = _read(
        {"type": "message_start", "message": {"model": "claude-x"}},
        _start(0, {"type": "text", "text": ""}),
        _delta(0, {"type": "text_delta", "text": "hi"}),
        {"type": "message_delta", "delta": {}},
        {"type": "message_stop"},
    )
    response = reader.response()
    assert deltas == [TextDelta("hi")]
    assert (response.text, response.finish_reason, response.model) == ("hi", None, "claude-x")
    assert response.usage is None
    assert reader.started
    assert reader.ended


def test_a_later_stop_reason_and_usage_are_kept() -> None:
    """A stop reason after one with none is kept, and usage counts come through."""
    reader, _ = _read(
        {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
        {"type": "message_delta", "delta": {"stop_reason": None}},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 2},
        },
    )
    response = reader.response()
    assert response.finish_reason is not None
    assert response.usage == Usage(input_tokens=3, output_tokens=2)


def test_deltas_and_blocks_it_does_not_know_add_nothing() -> None:
    """A citations delta adds no text; a block of a kind it does not know (a server tool's
    use) is left out of the answer."""
    reader, deltas = _read(
        _start(0, {"type": "text", "text": "a"}),
        _delta(0, {"type": "citations_delta", "citation": {"cited_text": "x"}}),
        _start(1, {"type": "server_tool_use", "id": "s1", "name": "web_search"}),
        _delta(0, {"type": "text_delta", "text": "b"}),
    )
    response = reader.response()
    assert deltas == [TextDelta("a"), TextDelta("b")]
    assert (response.text, response.tool_calls, response.parts) == ("ab", (), ())


@pytest.mark.parametrize("pieces", [[], ["  "]])
def test_a_call_without_streamed_input_takes_its_starts_input(pieces: list[str]) -> None:
    """A tool call whose input pieces are none or blank has the input it started with;
    one without an id is named by its position."""
    events = [_start(0, {"type": "tool_use", "name": "add", "input": {"a": 1}})]
    events += [_delta(0, {"type": "input_json_delta", "partial_json": p}) for p in pieces]
    reader, deltas = _read(*events)
    assert deltas[0] == ToolCallDelta(0, None, "add", "")
    assert reader.response().tool_calls == (ToolCall("toolu_0", "add", {"a": 1}),)


@pytest.mark.parametrize("index", [-1, None, "0", 1.0, True])
def test_a_block_index_that_is_no_int_at_least_zero_is_refused(index: object) -> None:
    """A block's index must be an int >= 0 (not a bool, a float or text)."""
    with pytest.raises(TypeError, match="a content block's index must be an int >= 0"):
        _read(_start(index, {"type": "text", "text": ""}))


@pytest.mark.parametrize("value", [5, ["x"], {"t": 1}])
def test_a_text_field_that_is_no_string_is_refused_quoting_it(value: object) -> None:
    """A delta's text of another type raises, naming the type it was."""
    with pytest.raises(TypeError, match=f"expected a string, got {type(value).__name__} "):
        _read(
            _start(0, {"type": "text", "text": ""}),
            _delta(0, {"type": "text_delta", "text": value}),
        )


def test_a_missing_text_reads_as_empty() -> None:
    """A text delta without its ``text`` adds nothing."""
    reader, deltas = _read(_start(0, {"type": "text"}), _delta(0, {"type": "text_delta"}))
    assert deltas == []
    assert reader.response().text == ""
