"""Decisions from a request body (``runner.web._decide``): an input request's answer."""

from __future__ import annotations

from typing import Any

import pytest

from hooks import Approve, Edit, Reject, Respond, ToolCall
from runner import PendingRequest
from runner.web._decide import BadDecision, parse_decisions

QUESTION = PendingRequest(
    "req_q",
    ToolCall("c1", "book"),
    "Which date?",
    "a",
    "a",
    ("respond", "reject"),
    "input",
    {
        "type": "object",
        "properties": {"date": {"type": "string"}, "seats": {"type": "integer", "minimum": 1}},
        "required": ["date"],
    },
)
CALL = PendingRequest("req_c", ToolCall("c2", "act", {"n": 1}), "ok?", "a", "a")


def parse(decisions: dict[str, Any]) -> dict[str, Any]:
    return parse_decisions(
        {"decisions": decisions}, (QUESTION, CALL), {"req_c": {"type": "object"}}
    )


def test_an_answer_that_fits_the_question_s_schema_is_a_respond() -> None:
    """An input request's answer becomes ``Respond(value)``; the others their decisions."""
    decided = parse(
        {
            "req_q": {"kind": "respond", "value": {"date": "2026-12-01", "seats": 2}},
            "req_c": {"kind": "edit", "args": {"n": 2}},
        }
    )
    assert decided == {
        "req_q": Respond({"date": "2026-12-01", "seats": 2}),
        "req_c": Edit({"n": 2}),
    }
    declined = parse({"req_q": {"kind": "reject"}, "req_c": {"kind": "approve"}})
    assert declined == {"req_q": Reject("rejected"), "req_c": Approve()}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"seats": 2}, "'date' is a required property"),
        ({"date": "x", "seats": 0}, "seats: 0 is less than the minimum of 1"),
        ("2026-12-01", "an answer's value is a JSON object"),
    ],
)
def test_an_answer_that_breaks_the_schema_is_refused(value: object, problem: str) -> None:
    """An answer is checked against the question's schema, naming the field."""
    with pytest.raises(BadDecision, match=problem):
        parse({"req_q": {"kind": "respond", "value": value}, "req_c": {"kind": "approve"}})


def test_an_input_request_cannot_be_approved() -> None:
    """Only the decisions a request allows are taken."""
    with pytest.raises(BadDecision, match="'approve' is not one of"):
        parse({"req_q": {"kind": "approve"}, "req_c": {"kind": "approve"}})


def test_a_schema_that_is_no_schema_is_named() -> None:
    """A tool whose argument schema is broken makes the edit a named refusal, not a crash."""
    with pytest.raises(BadDecision, match="its schema is no JSON schema"):
        parse_decisions(
            {"decisions": {"req_c": {"kind": "edit", "args": {}}}},
            (CALL,),
            {"req_c": {"type": 5}},
        )
