"""An MCP tool's answer (the SDK's ``CallToolResult``) as a ``ToolResult``.

Text content, joined by newlines, is what the model reads; an image becomes an
``ImagePart``; an embedded text resource counts as text, any other content (audio, a
resource link, a binary resource) is named in the text so the model knows it was
there; ``structuredContent`` is kept as ``ToolResult.structured``. An answer with
``isError: true`` is an ``MCPToolError`` carrying that result, which ``on_tool_error``
sees.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, cast

from hooks import ImagePart, ToolResult
from runner._errors import MCPToolError

__all__ = ["to_result"]


def to_result(server: str, tool: str, answer: Any) -> ToolResult:
    """``answer`` as a ``ToolResult``; an error answer raises ``MCPToolError``."""
    texts: list[str] = []
    parts: list[ImagePart] = []
    for block in answer.content:
        kind: object = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            image = _image(block.data, block.mime_type)
            if image is None:
                texts.append(f"[an image of type {block.mime_type!r} that could not be read]")
            else:
                parts.append(image)
        elif kind == "resource" and isinstance(getattr(block.resource, "text", None), str):
            texts.append(block.resource.text)
        else:
            texts.append(f"[{kind} content]")
    structured: object = answer.structured_content
    result = ToolResult(
        "\n".join(texts),
        is_error=answer.is_error is True,
        parts=tuple(parts),
        structured=cast("Mapping[str, Any]", structured)
        if isinstance(structured, Mapping)
        else None,
    )
    if result.is_error:
        raise MCPToolError(server, tool, result)
    return result


def _image(data: str, media_type: str) -> ImagePart | None:
    """The image ``data`` (base64) of ``media_type``, or ``None`` when it is no image."""
    try:
        raw = base64.b64decode(data, validate=True)
        return ImagePart(data=raw, media_type=media_type)
    except (binascii.Error, ValueError, TypeError):
        return None
