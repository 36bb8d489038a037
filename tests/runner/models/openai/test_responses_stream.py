"""``ResponsesStreamReader`` alone, over the events ``as_stream`` cuts a response into."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from runner import TextDelta, ToolCallDelta
from runner._models.openai.responses_stream import ResponsesStreamReader
from runner._models.openai.responses_wire import from_response
from tests.helpers.responses_server import (
    as_stream,
    function_call,
    message,
    reasoning,
    response,
    usage,
)
from tests.helpers.strategies import json_values

texts = st.text(min_size=1, max_size=40)
arguments = st.dictionaries(st.text(max_size=6), json_values, max_size=3).map(
    lambda value: json.dumps(value, ensure_ascii=False)
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(texts, max_size=2),
    st.lists(arguments, max_size=3),
    st.booleans(),
    st.integers(min_value=1, max_value=7),
)
def test_a_streamed_response_is_the_response(
    said: list[str], calls: list[str], reasons: bool, size: int
) -> None:
    """Cut anywhere (``size``), the stream's deltas join to the text and to each call's
    arguments, and its answer is the one ``from_response`` reads off the whole response."""
    items = [reasoning("rs_1", "E", "think")] if reasons else []
    items += [message(text, item_id=f"msg_{n}") for n, text in enumerate(said)]
    items += [function_call(f"call_{n}", "f", text) for n, text in enumerate(calls)]
    reply = response(*items, used=usage(5, 7))
    events = as_stream(reply, size=size).events
    assert events is not None
    reader = ResponsesStreamReader()
    deltas: list[TextDelta | ToolCallDelta] = []
    for event in events:
        assert isinstance(event, dict)
        deltas += reader.read(event)
    assert reader.finished
    answer = reader.response()
    assert answer == from_response(reply.body)
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "".join(said)
    for position, text in enumerate(calls):
        pieces = [d for d in deltas if isinstance(d, ToolCallDelta) and d.index == position]
        assert pieces[0].id == f"call_{position}"
        assert "".join(piece.arguments for piece in pieces) == text
