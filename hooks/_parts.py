"""The parts of a message beyond its text: images, files and the model's reasoning.

A message's text stays its ``content`` (a ``str``); ``parts`` holds what else it
carries, in order after the text:

- ``ImagePart`` and ``FilePart`` -- in a user message (what the user shows the model)
  or a tool message (what a tool gave back): a URL, or the bytes with their media type.
- ``ReasoningPart`` -- in an assistant message or a ``ModelResponse``: the provider's
  reasoning as it sent it (an OpenAI reasoning item with its ``encrypted_content``, an
  Anthropic ``thinking`` or ``redacted_thinking`` block with its ``signature``), kept
  as the exact JSON text it came in, ``payload``, and sent back unchanged as the API
  requires. ``summary`` is the visible text for hooks to read; changing it changes
  nothing that is sent, and the provider checks the payload's signature itself.

Like the other records, parts are frozen and checked when built: a wrong field is a
``TypeError`` or ``ValueError`` naming it. Their ``repr`` shows a byte count, not the
bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn, TypeAlias

from hooks._slots import slot_init

__all__ = ["FilePart", "ImagePart", "Part", "ReasoningPart"]


@slot_init
@dataclass(frozen=True, slots=True, repr=False)
class ImagePart:
    """An image: at ``url`` (``https://...`` or a ``data:`` URL), or ``data`` bytes of
    ``media_type`` (``"image/png"``, ``"image/jpeg"``, ``"image/gif"``, ``"image/webp"``)."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None

    def __post_init__(self) -> None:
        _check_source(self, self.url, self.data, self.media_type, "image/")

    def __repr__(self) -> str:
        return f"ImagePart({_source(self.url, self.data, self.media_type)})"


@slot_init
@dataclass(frozen=True, slots=True, repr=False)
class FilePart:
    """A file (a PDF, say): at ``url``, or ``data`` bytes of ``media_type``
    (``"application/pdf"``); ``name`` is its file name, when it has one."""

    url: str | None = None
    data: bytes | None = None
    media_type: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        _check_source(self, self.url, self.data, self.media_type, "")
        name: object = self.name
        if name is not None and (not isinstance(name, str) or not name):
            _refuse(self, "name", "a non-empty str or None", name)

    def __repr__(self) -> str:
        named = "" if self.name is None else f", name={self.name!r}"
        return f"FilePart({_source(self.url, self.data, self.media_type)}{named})"


@slot_init
@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """The model's reasoning as ``provider`` (``"openai"``, ``"anthropic"``) sent it.

    ``payload`` is the provider's item as JSON text, sent back to that provider as it
    came; ``summary`` is its visible text (a summary, or the thinking; empty when the
    provider hid it). Another provider's model leaves the part out of what it sends.
    """

    provider: str
    payload: str
    summary: str = ""

    def __post_init__(self) -> None:
        provider: object = self.provider
        payload: object = self.payload
        summary: object = self.summary
        if not isinstance(provider, str) or not provider:
            _refuse(self, "provider", "a non-empty str naming the provider", provider)
        if not isinstance(payload, str) or not payload:
            _refuse(self, "payload", "the provider's item as non-empty JSON text", payload)
        if not isinstance(summary, str):
            _refuse(self, "summary", "a str", summary)


Part: TypeAlias = ImagePart | FilePart | ReasoningPart
"""What a message carries beside its text."""


def _check_source(part: object, url: object, data: object, media_type: object, family: str) -> None:
    """Exactly one of ``url`` and ``data``; ``data`` with a ``media_type`` of ``family``."""
    if (url is None) == (data is None):
        given = "both" if url is not None else "neither"
        msg = f"{type(part).__name__} takes exactly one of url and data, got {given}"
        raise ValueError(msg)
    if url is not None and (not isinstance(url, str) or not url):
        _refuse(part, "url", "a non-empty str", url)
    if data is not None and not isinstance(data, bytes):
        _refuse(part, "data", "bytes", data)
    if media_type is None:
        if data is not None:
            msg = f"{type(part).__name__}.media_type must say what the data is (e.g. 'image/png')"
            raise ValueError(msg)
        return
    if not isinstance(media_type, str) or "/" not in media_type:
        _refuse(part, "media_type", "a media type such as 'image/png'", media_type)
    if family and not media_type.startswith(family):
        _refuse(part, "media_type", f"an {family}* media type", media_type)


def _source(url: str | None, data: bytes | None, media_type: str | None) -> str:
    shown = f"url={url!r:.80}" if data is None else f"data=<{len(data)} bytes>"
    return shown if media_type is None else f"{shown}, media_type={media_type!r}"


def _refuse(part: object, name: str, expected: str, got: object) -> NoReturn:
    msg = f"{type(part).__name__}.{name} must be {expected}, got {type(got).__name__} {got!r:.60}"
    raise TypeError(msg)
