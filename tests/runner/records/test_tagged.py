"""Tagged JSON records (``runner._records.tagged``): hostile values and forged records."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from hooks import ModelRequest, ToolCall
from runner._pause.pending import PendingRequest
from runner._records.tagged import (
    EXTRA,
    LABEL,
    RecoveredError,
    StoredResponse,
    _fits,  # pyright: ignore[reportPrivateUsage]
    _record,  # pyright: ignore[reportPrivateUsage]
    allowed,
    decode,
    dump,
    load,
)


class _Headers:
    """Headers whose ``items()`` fails, as a half-closed response's may."""

    def items(self) -> Iterator[tuple[str, str]]:
        raise RuntimeError("closed")


@dataclasses.dataclass
class _Response:
    status_code: object
    headers: object
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


class HasResponse(Exception):
    """An SDK-like error carrying a response no record can hold as it is."""

    def __init__(self, message: str, response: _Response) -> None:
        super().__init__(message)
        self.response = response


class WantsKeywords(Exception):
    """An error whose ``__new__`` takes no positional arguments."""

    def __new__(cls, *, code: int = 0) -> WantsKeywords:
        return super().__new__(cls)

    def __init__(self, *, code: int = 0) -> None:
        super().__init__(f"code {code}")


class ReadOnly(Exception):
    """An error whose ``code`` is a property the record cannot set."""

    @property
    def code(self) -> int:
        return 1


@dataclasses.dataclass(frozen=True)
class Positive:
    """A record whose constructor refuses a value its field's type allows."""

    n: int

    def __post_init__(self) -> None:
        if self.n <= 0:
            msg = f"n must be positive, not {self.n}"
            raise ValueError(msg)


def _forged(record: dict[str, Any], **fields: object) -> str:
    """The JSON of error record ``record`` with some of its fields replaced."""
    return json.dumps({"$t": "error", "v": {**record["v"], **fields}})


def test_an_error_s_response_keeps_its_status_and_only_string_headers() -> None:
    """Headers that are not str pairs are left out; headers that cannot be read are none."""
    mixed = HasResponse("x", _Response(429, {"retry-after": "3", "n": 1, 2: "two"}))
    back = load(dump(mixed))
    assert type(back) is RecoveredError
    assert vars(back)["response"] == StoredResponse(429, {"retry-after": "3"})
    failing = HasResponse("y", _Response("429", _Headers()))
    again = load(dump(failing))
    assert again.response == StoredResponse(None, {})


def test_an_error_whose_str_fails_is_stored_with_a_message_saying_so() -> None:
    """Args JSON cannot hold fall back to the message; a failing ``str()`` is named."""

    class NoStr(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    record = json.loads(dump(NoStr(threading.Lock())))
    text = f"<{NoStr.__qualname__} with a str() that fails>"
    assert record["v"]["message"] == text
    assert record["v"]["args"] == {"$t": "tuple", "v": [text]}


def test_a_value_nested_too_deep_is_a_type_error_saying_so() -> None:
    """Deeper than 200: refused when stored, not a ``RecursionError``."""
    deep: list[Any] = []
    for _ in range(205):
        deep = [deep]
    with pytest.raises(TypeError, match="nested deeper than 200; keep what a durable run"):
        dump(deep)


def test_a_record_of_another_label_names_it_and_offers_no_pickle() -> None:
    """Outside a durable run the message names the label and says nothing of pickle."""
    token = LABEL.set("paused record")
    try:
        with pytest.raises(
            TypeError, match=r"^paused record: cannot hold value = float nan: not a finite number$"
        ):
            dump(float("nan"))
    finally:
        LABEL.reset(token)


def test_messages_in_a_sequence_of_another_kind_come_back_as_a_tuple() -> None:
    """A request's messages in a tuple subclass are stored as a plain tuple."""

    class Messages(tuple[Any, ...]):
        pass

    request = ModelRequest(messages=Messages(()))
    record = json.loads(dump(request))
    assert record["v"]["messages"]["kind"] == "tuple"
    back = load(dump(request))
    assert type(back.messages) is tuple


@pytest.mark.parametrize("data", [object(), {1, 2}, (1,), b"x"], ids=repr)
def test_decode_refuses_what_json_cannot_give(data: object) -> None:
    """Only JSON values decode: anything else is a ``ValueError`` naming where."""
    with pytest.raises(ValueError, match=r"^durable record: here must be a JSON value, got "):
        decode(data, "here")


def test_a_value_too_deep_to_show_is_named_by_its_type() -> None:
    """A refused value whose repr recurses too deep is shown by its type alone."""
    deep: tuple[Any, ...] = ()
    for _ in range(100_000):
        deep = (deep,)
    with pytest.raises(
        ValueError, match=r"must be a JSON value, got tuple nested too deep to show$"
    ):
        decode(deep, "here")


def test_a_field_of_a_tuple_type_given_a_list_is_refused() -> None:
    """A forged ``allowed`` that is a JSON list, not a tagged tuple, names the field's type."""
    request = PendingRequest("i", ToolCall("c", "t", {}), "r", "a", "b")
    record = json.loads(dump(request))
    record["v"]["allowed"] = ["approve"]
    with pytest.raises(ValueError, match=r"record<PendingRequest>\.allowed must be a tuple\["):
        load(json.dumps(record))


def test_a_record_its_class_refuses_is_a_value_error_with_the_reason() -> None:
    """Fields of the right types that the constructor refuses: its message is kept."""
    decode_positive = _record(Positive)
    assert decode_positive({"n": 3}, "p", 0) == Positive(3)
    with pytest.raises(
        ValueError,
        match=r"p must be the fields of a Positive, got .* \(n must be positive, not 0\)",
    ):
        decode_positive({"n": 0}, "p", 0)


def test_fits_takes_anything_for_any_and_checks_a_fixed_tuple_item_by_item() -> None:
    """``Any`` fits all; ``tuple[int, str]`` needs two items of those types."""
    assert _fits(object(), Any)
    assert _fits((1, "a"), tuple[int, str])
    assert not _fits((1, 2), tuple[int, str])
    assert not _fits((1,), tuple[int, str])
    assert not _fits([1, "a"], tuple[int, str])


def test_an_allowed_error_whose_new_wants_keywords_comes_back_without_args_to_it() -> None:
    """``__new__`` refusing the args is called bare; the args are set after."""
    record = json.loads(dump(WantsKeywords(code=2)))
    token = EXTRA.set(allowed([WantsKeywords]))
    try:
        back = load(_forged(record, args={"$t": "tuple", "v": ["a", "b"]}))
    finally:
        EXTRA.reset(token)
    assert type(back) is WantsKeywords
    assert back.args == ("a", "b")
    assert str(back) == "('a', 'b')"


def test_an_attribute_the_error_cannot_set_is_left_out() -> None:
    """A record naming a read-only property of the class sets the rest."""
    record = json.loads(dump(ReadOnly("x")))
    token = EXTRA.set(allowed([ReadOnly]))
    try:
        back = load(_forged(record, attributes={"code": 9, "note": "kept"}))
    finally:
        EXTRA.reset(token)
    assert type(back) is ReadOnly
    assert back.code == 1
    assert vars(back) == {"note": "kept"}


@pytest.mark.parametrize(
    ("response", "match"),
    [
        ({"status_code": 1}, r"attributes\.response must be a response with exactly"),
        (
            {"status_code": "429", "headers": {}},
            r"attributes\.response\.status_code must be an integer or null, got str '429'",
        ),
    ],
    ids=["fields", "status"],
)
def test_a_forged_response_is_refused_saying_what_it_must_be(
    response: dict[str, object], match: str
) -> None:
    """A stored response has exactly its two fields and an integer status or none."""
    record = json.loads(dump(ValueError("x")))
    forged = _forged(record, attributes={"response": {"$t": "response", "v": response}})
    with pytest.raises(ValueError, match=match):
        load(forged)


def test_a_class_path_that_stops_short_is_a_recovered_error() -> None:
    """``runner:Nope.Inner`` names no class: the error comes back as a ``RecoveredError``."""
    record = json.loads(dump(ValueError("x")))
    back = load(_forged(record, type="runner:Nope.Inner"))
    assert type(back) is RecoveredError
    assert back.type_name == "runner:Nope.Inner"
    assert str(back) == "x"
