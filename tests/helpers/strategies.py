"""Hypothesis strategies for the vocabulary a run persists: messages, calls, results, responses.

Not a conftest: test modules import what they use. Values are what a JSON round trip
keeps exactly (no NaN, no tuples: JSON has neither).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from runner import (
    FilePart,
    ImagePart,
    Message,
    ModelResponse,
    Part,
    ReasoningPart,
    ToolCall,
    ToolResult,
    Usage,
)
from runner._tools.arguments import UnparsedArguments

__all__ = [
    "json_values",
    "messages",
    "parts_for",
    "reasoning_parts",
    "responses",
    "tool_calls",
    "tool_results",
    "usages",
]

texts = st.text(max_size=20)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
arguments: st.SearchStrategy[Any] = st.dictionaries(texts, json_values, max_size=3) | st.builds(
    UnparsedArguments, texts, texts
)
tool_calls = st.builds(ToolCall, texts, texts, arguments)
names = st.text(min_size=1, max_size=12)
urls = names.map(lambda name: f"https://example.test/{name}")
image_parts = st.builds(ImagePart, url=urls, media_type=st.none() | st.just("image/png")) | (
    st.builds(ImagePart, data=st.binary(max_size=24), media_type=st.just("image/jpeg"))
)
file_parts = st.builds(
    FilePart, url=urls, media_type=st.none() | st.just("application/pdf"), name=st.none() | names
) | st.builds(
    FilePart,
    data=st.binary(max_size=24),
    media_type=st.just("application/pdf"),
    name=st.none() | names,
)
# A payload is the provider's item as JSON text, kept byte for byte (spaces and key order too).
payloads = st.dictionaries(texts, json_values, max_size=3).map(
    lambda item: json.dumps({"type": "reasoning", **item}, indent=1)
)
reasoning_parts = st.builds(
    ReasoningPart, st.sampled_from(["openai", "anthropic"]), payloads, texts
)
shown_parts = image_parts | file_parts


def parts_for(role: str) -> st.SearchStrategy[tuple[Part, ...]]:
    """Parts a message of ``role`` may carry (none for a system message)."""
    if role == "system":
        return st.just(())
    kind: st.SearchStrategy[Any] = reasoning_parts if role == "assistant" else shown_parts
    return st.lists(kind, max_size=2).map(tuple)


tool_results = st.builds(
    ToolResult,
    texts,
    st.booleans(),
    st.lists(shown_parts, max_size=2).map(tuple),
    st.none() | st.dictionaries(texts, json_values, max_size=3),
)
counts = st.integers(min_value=0, max_value=2**40)
usages = st.builds(Usage, counts, counts, counts, counts)
messages = st.sampled_from(["system", "user", "assistant", "tool"]).flatmap(
    lambda role: st.builds(
        Message,
        st.just(role),
        texts,
        tool_call_id=st.none() | texts,
        tool_calls=st.lists(tool_calls, max_size=3).map(tuple),
        name=st.none() | texts,
        parts=parts_for(role),
        is_error=st.booleans() if role == "tool" else st.just(False),
    )
)
responses = st.builds(
    ModelResponse,
    texts,
    st.lists(tool_calls, max_size=3, unique_by=lambda call: call.id).map(tuple),
    st.none() | usages,
    st.none() | texts,
    st.none() | texts,
    st.lists(reasoning_parts, max_size=2).map(tuple),
)
