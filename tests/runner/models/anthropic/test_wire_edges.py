"""The Anthropic wire mapping's less travelled paths: a user message of parts alone, a
file as a data: URL, the answer's required shape, and answer blocks it does not read or
cannot."""

from __future__ import annotations

import base64

import pytest

from hooks import FilePart, ImagePart, Message, OutputSpec
from runner._models.anthropic.wire import from_message, output_format, to_wire


def test_a_user_message_of_parts_alone_has_no_text_block() -> None:
    """A user message with no text but an image is the image block alone."""
    wire = to_wire((Message("user", "", parts=(ImagePart(url="https://x.test/a.png"),)),))
    assert wire.messages == [
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}
            ],
        }
    ]


def test_a_file_as_a_data_url_is_sent_as_its_bytes() -> None:
    """A PDF given as a ``data:`` URL goes as base64 of its bytes, its media type read from
    the URL; a text file as its text."""
    pdf = base64.b64encode(b"%PDF-1.7").decode()
    text = base64.b64encode("héllo".encode()).decode()
    wire = to_wire(
        (
            Message(
                "user",
                "read these",
                parts=(
                    FilePart(url=f"data:application/pdf;base64,{pdf}"),
                    FilePart(url=f"data:text/plain;base64,{text}", name="note.txt"),
                ),
            ),
        )
    )
    blocks = wire.messages[0]["content"]
    assert blocks[1] == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": pdf},
    }
    assert blocks[2] == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "héllo"},
        "title": "note.txt",
    }


@pytest.mark.parametrize(
    "url", ["data:application/pdf,plain", "data:;base64,AAAA", "data:application/pdf;base64,@@@"]
)
def test_a_file_data_url_of_the_wrong_form_is_refused(url: str) -> None:
    """A file's ``data:`` URL that is not ``data:<type>;base64,<data>`` raises naming it."""
    with pytest.raises(ValueError, match="cannot carry a data: URL") as raised:
        to_wire((Message("user", "x", parts=(FilePart(url=url),)),))
    assert "in a user message" in str(raised.value)


def test_the_answers_shape_is_a_closed_json_schema_format() -> None:
    """The output spec's schema, every object closed; the name is not sent."""
    spec = OutputSpec(
        "answer",
        {"type": "object", "properties": {"inner": {"type": "object", "properties": {}}}},
    )
    assert output_format(spec) == {
        "type": "json_schema",
        "schema": {
            "type": "object",
            "properties": {
                "inner": {"type": "object", "properties": {}, "additionalProperties": False}
            },
            "additionalProperties": False,
        },
    }


def test_answer_blocks_it_does_not_read_are_left_out() -> None:
    """A server tool's blocks are neither text, calls nor reasoning."""
    response = from_message(
        {
            "content": [
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                {"type": "text", "text": "found"},
                {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
            ]
        }
    )
    assert (response.text, response.tool_calls, response.parts) == ("found", (), ())


@pytest.mark.parametrize("block", ["text", 3, None, ["x"]])
def test_an_answer_block_that_is_no_object_is_refused(block: object) -> None:
    """Each content block must be a JSON object; anything else raises naming its type."""
    with pytest.raises(TypeError, match=f"expected a JSON object, got {type(block).__name__}"):
        from_message({"content": [block]})
