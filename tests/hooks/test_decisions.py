"""A human's decisions on a paused call: ``Approve``, ``Edit``, ``Reject`` and ``Respond``."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from hooks import Approve, Edit, Reject, Respond


def test_approve_is_a_value() -> None:
    """Every ``Approve()`` equals every other and hashes alike."""
    assert Approve() == Approve()
    assert hash(Approve()) == hash(Approve())
    other: object = Reject()
    assert Approve() != other


def test_edit_keeps_a_read_only_copy_of_its_args() -> None:
    """The args are copied when the decision is made and cannot be changed through it."""
    given = {"path": "a.txt"}
    edit = Edit(given)
    given["path"] = "b.txt"
    assert dict(edit.args) == {"path": "a.txt"}
    assert isinstance(edit.args, MappingProxyType)
    with pytest.raises(TypeError):
        edit.args["path"] = "c.txt"  # type: ignore[index]
    with pytest.raises(AttributeError):
        edit.args = {}  # type: ignore[misc]
    assert dict(Edit().args) == {}


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["path"], "['path']"),
        ({1: "x"}, "{1: 'x'}"),
        ({"ok": 1, 2: "no"}, "{'ok': 1, 2: 'no'}"),
        (None, "None"),
    ],
)
def test_edit_args_must_be_a_mapping_of_str_keys(args: object, shown: str) -> None:
    """A list, a non-str key or ``None`` is refused, with what was given."""
    with pytest.raises(TypeError) as caught:
        Edit(args)  # type: ignore[arg-type]
    assert str(caught.value) == f"Edit args must be a mapping of str keys, got {shown}"


def test_edits_compare_and_hash_by_their_args() -> None:
    """Equal args: equal and one hash, whatever the key order; other args or kinds: not equal."""
    first, second = Edit({"a": 1, "b": [2]}), Edit({"b": [2], "a": 1})
    assert first == second
    assert hash(Edit({"a": 1, "b": 2})) == hash(Edit({"b": 2, "a": 1}))
    assert hash(Edit({"a": 1})) != hash(Edit({"a": 2}))
    assert hash(Edit({})) != hash(None)
    assert first != Edit({"a": 1})
    assert Edit({}) != Approve()
    assert Edit({"a": 1}) != {"a": 1}


def test_reject_carries_a_str_message() -> None:
    """The model sees the message; a default says the call was rejected; a non-str is refused."""
    assert Reject("keep it").message == "keep it"
    assert Reject().message == "the call was rejected"
    with pytest.raises(TypeError) as caught:
        Reject(7)  # type: ignore[arg-type]
    assert str(caught.value) == "Reject message must be a str, got int 7"
    assert Reject("x") == Reject("x")
    assert Reject("x") != Reject("y")
    assert hash(Reject("x")) == hash(Reject("x"))
    with pytest.raises(AttributeError):
        Reject("x").message = "y"  # type: ignore[misc]


def test_respond_keeps_a_read_only_copy_of_its_value() -> None:
    """The answer is copied when the decision is made and cannot be changed through it."""
    given = {"sure": True}
    respond = Respond(given)
    given["sure"] = False
    assert dict(respond.value) == {"sure": True}
    with pytest.raises(TypeError):
        respond.value["sure"] = False  # type: ignore[index]
    assert dict(Respond().value) == {}


@pytest.mark.parametrize(
    ("value", "shown"), [(["x"], "['x']"), ({1: "x"}, "{1: 'x'}"), (True, "True")]
)
def test_respond_value_must_be_a_json_object(value: object, shown: str) -> None:
    """An answer is a mapping of str keys: anything else is refused, with what was given."""
    with pytest.raises(TypeError) as caught:
        Respond(value)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"Respond value must be a mapping of str keys (a JSON object), got {shown}"
    )


def test_responds_compare_and_hash_by_their_value() -> None:
    """Equal values: equal and one hash, whatever the key order; an Edit of the same
    mapping is another decision."""
    assert Respond({"a": 1, "b": 2}) == Respond({"b": 2, "a": 1})
    assert hash(Respond({"a": 1, "b": 2})) == hash(Respond({"b": 2, "a": 1}))
    assert Respond({"a": 1}) != Respond({"a": 2})
    other: object = Edit({"a": 1})
    assert Respond({"a": 1}) != other
    assert hash(Respond({"a": 1})) != hash(Edit({"a": 1}))
