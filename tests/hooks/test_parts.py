"""Tests of message parts as records: what each takes, where each may be, how it shows."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from hooks import (
    FilePart,
    ImagePart,
    Message,
    ModelResponse,
    ReasoningPart,
    ToolInfo,
    ToolResult,
)

IMAGE = ImagePart(url="https://example.test/cat.png")
FILE = FilePart(data=b"%PDF-1.7", media_type="application/pdf", name="a.pdf")
THOUGHT = ReasoningPart("anthropic", '{"type": "thinking", "signature": "s"}', "hmm")


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({}, ValueError, "ImagePart takes exactly one of url and data, got neither"),
        (
            {"url": "u", "data": b"x", "media_type": "image/png"},
            ValueError,
            "exactly one of url and data, got both",
        ),
        ({"url": ""}, TypeError, "ImagePart.url must be a non-empty str"),
        ({"url": 3}, TypeError, "ImagePart.url must be a non-empty str, got int 3"),
        ({"data": "abc", "media_type": "image/png"}, TypeError, "ImagePart.data must be bytes"),
        ({"data": b"x"}, ValueError, "ImagePart.media_type must say what the data is"),
        (
            {"data": b"x", "media_type": "png"},
            TypeError,
            "ImagePart.media_type must be a media type such as 'image/png', got str 'png'",
        ),
        (
            {"data": b"x", "media_type": "application/pdf"},
            TypeError,
            "ImagePart.media_type must be an image/\\* media type",
        ),
    ],
)
def test_an_image_takes_a_url_or_bytes_with_their_type(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    """Exactly one source; bytes say what they are; an image is an image/* type."""
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        ImagePart(**kwargs)


def test_a_file_takes_any_media_type_and_a_name() -> None:
    """A file may be any media type; its name, when given, is a non-empty str."""
    assert FILE.media_type == "application/pdf"
    assert FilePart(url="https://example.test/x").media_type is None
    with pytest.raises(TypeError, match=r"FilePart\.name must be a non-empty str or None"):
        FilePart(url="https://example.test/x", name="")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("", "{}"), "ReasoningPart.provider must be a non-empty str"),
        (("openai", ""), "ReasoningPart.payload must be the provider's item as non-empty JSON"),
        (("openai", {"type": "reasoning"}), "payload must be the provider's item"),
        (("openai", "{}", None), "ReasoningPart.summary must be a str, got NoneType"),
    ],
)
def test_reasoning_keeps_its_provider_and_payload_text(args: tuple[Any, ...], words: str) -> None:
    """A reasoning part names its provider and holds its item as JSON text."""
    with pytest.raises(TypeError, match=words):
        ReasoningPart(*args)


def test_parts_show_a_byte_count_not_the_bytes() -> None:
    """A part's repr stays short however big its data."""
    big = ImagePart(data=b"\x00" * 1_000_000, media_type="image/png")
    assert repr(big) == "ImagePart(data=<1000000 bytes>, media_type='image/png')"
    assert repr(FILE) == "FilePart(data=<8 bytes>, media_type='application/pdf', name='a.pdf')"
    assert repr(IMAGE) == "ImagePart(url='https://example.test/cat.png')"


def test_parts_are_frozen_hashable_and_equal_by_value() -> None:
    """Records like the rest: equal by value, hashable, changed only by ``replace``."""
    assert ImagePart(url="https://example.test/cat.png") == IMAGE
    assert len({IMAGE, FILE, THOUGHT, ImagePart(url="https://example.test/cat.png")}) == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        IMAGE.url = "x"  # type: ignore[misc]
    assert dataclasses.replace(THOUGHT, summary="changed").payload == THOUGHT.payload


@pytest.mark.parametrize(
    ("role", "parts", "words"),
    [
        ("system", (IMAGE,), "a system message carries no parts \\(text only\\), got ImagePart"),
        ("user", (THOUGHT,), "a user message carries ImagePart or FilePart, got ReasoningPart"),
        ("tool", (THOUGHT,), "a tool message carries ImagePart or FilePart, got ReasoningPart"),
        ("assistant", (IMAGE,), "an assistant message carries ReasoningPart, got ImagePart"),
        ("user", ("image.png",), "a user message carries ImagePart or FilePart, got str"),
    ],
)
def test_each_role_carries_its_own_kinds_of_part(
    role: Any, parts: tuple[Any, ...], words: str
) -> None:
    """Users and tools show images and files; assistants carry reasoning; system is text."""
    with pytest.raises(TypeError, match=f"Message.parts: {words}"):
        Message(role, "x", parts=parts)


def test_parts_must_be_a_tuple() -> None:
    """A list would not hash: the error says to write a tuple."""
    with pytest.raises(TypeError, match=r"Message.parts must be a tuple of parts \(write tuple"):
        Message("user", "x", parts=[IMAGE])  # type: ignore[arg-type]


def test_responses_carry_reasoning_and_tool_results_images() -> None:
    """A response holds reasoning only; a tool result images and files only."""
    assert ModelResponse("hi", parts=(THOUGHT,)).parts == (THOUGHT,)
    assert ToolResult("", parts=(IMAGE, FILE)).parts == (IMAGE, FILE)
    with pytest.raises(TypeError, match=r"ModelResponse\.parts: a model response carries"):
        ModelResponse("hi", parts=(IMAGE,))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolResult\.parts: a tool result carries"):
        ToolResult("", parts=(THOUGHT,))  # type: ignore[arg-type]


def test_plain_text_messages_are_unchanged() -> None:
    """``content: str`` stays the text; a message without parts has none."""
    message = Message("user", "hello")
    assert message.parts == ()
    assert message == Message("user", "hello", parts=())


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"name": 3}, r"ToolInfo\.name must be a str, got int 3"),
        ({"name": "t", "server": 3}, r"ToolInfo\.server must be a str or None"),
        ({"name": "t", "description": None}, r"ToolInfo\.description must be a str"),
        ({"name": "t", "output_schema": "object"}, r"ToolInfo\.output_schema must be a JSON"),
    ],
)
def test_a_tool_info_checks_its_fields(kwargs: dict[str, Any], words: str) -> None:
    """Each field of a ``ToolInfo`` is checked when it is built, naming the field."""
    with pytest.raises(TypeError, match=words):
        ToolInfo(**kwargs)
