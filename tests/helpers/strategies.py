"""Hypothesis strategies for the vocabulary a run persists: messages, calls, results, responses.

Not a conftest: test modules import what they use. Values are what a JSON round trip
keeps exactly (no NaN, no tuples: JSON has neither).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from runner import Message, ModelResponse, ToolCall, ToolResult, Usage
from runner._tools.arguments import UnparsedArguments

__all__ = ["json_values", "messages", "responses", "tool_calls", "tool_results", "usages"]

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
tool_results = st.builds(ToolResult, texts, st.booleans())
counts = st.integers(min_value=0, max_value=2**40)
usages = st.builds(Usage, counts, counts, counts, counts)
messages = st.builds(
    Message,
    st.sampled_from(["system", "user", "assistant", "tool"]),
    texts,
    tool_call_id=st.none() | texts,
    tool_calls=st.lists(tool_calls, max_size=3).map(tuple),
    name=st.none() | texts,
)
responses = st.builds(
    ModelResponse,
    texts,
    st.lists(tool_calls, max_size=3, unique_by=lambda call: call.id).map(tuple),
    st.none() | usages,
    st.none() | texts,
    st.none() | texts,
)
