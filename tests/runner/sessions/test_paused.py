"""The pending requests a store keeps beside a paused state: read back as written, or refused."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runner import PendingRequest
from runner._pause.pending import Question
from runner._pause.runstate import encode_request
from runner._sessions.paused import pending_of
from tests.helpers.strategies import json_values, texts, tool_calls

calls = st.builds(
    PendingRequest,
    id=texts,
    call=tool_calls,
    reason=texts,
    agent=texts,
    branch=texts,
    allowed=st.lists(st.sampled_from(["approve", "edit", "reject", "respond"])).map(tuple),
)
questions = st.builds(
    PendingRequest,
    id=texts,
    call=tool_calls,
    reason=texts,
    agent=texts,
    branch=texts,
    allowed=st.just(("respond", "reject")),
    kind=st.just("input"),
    schema=st.none() | st.dictionaries(texts, json_values, max_size=2),
    question=st.none() | st.builds(Question, texts, st.none() | texts),
)


@given(st.lists(calls | questions, max_size=4))
def test_requests_read_back_as_written(requests: list[PendingRequest]) -> None:
    """Any paused call's or question's request, as a store writes it, reads back equal (the
    quick path for plain calls and the full reader agree)."""
    text = json.dumps([encode_request(request) for request in requests])
    assert pending_of(text, "r1", "a store") == tuple(requests)


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ({"id": "p"}, r"pending\[0\] must be an object with 'call'"),
        (
            {
                "id": "p",
                "call": {"id": "c", "name": "t", "args": []},
                "reason": "r",
                "agent": "a",
                "branch": "a",
                "allowed": ["approve"],
            },
            r"pending\[0\].call.args must be an object, got list",
        ),
        (
            {
                "id": "p",
                "call": {"id": "c", "name": "t", "args": {}},
                "reason": "r",
                "agent": "a",
                "branch": "a",
                "allowed": ["explode"],
            },
            r"pending\[0\].allowed\[0\] must be 'approve', 'edit', 'reject' or 'respond'",
        ),
        (
            {
                "id": "p",
                "call": {"id": "c", "name": "t", "args": {}},
                "reason": "r",
                "agent": "a",
                "branch": "a",
                "allowed": [["approve"]],
            },
            r"pending\[0\].allowed\[0\] must be",
        ),
        (
            {
                "id": 7,
                "call": {"id": "c", "name": "t", "args": {}},
                "reason": "r",
                "agent": "a",
                "branch": "a",
                "allowed": [],
            },
            r"pending\[0\].id must be a string, got int 7",
        ),
    ],
)
def test_a_request_not_as_written_is_refused_naming_the_run_and_the_field(
    item: object, says: str
) -> None:
    """What the quick path does not take, the full reader refuses, naming the field."""
    with pytest.raises(ValueError, match=rf"^paused run 'r1' in a store is damaged: {says}"):
        pending_of(json.dumps([item]), "r1", "a store")
