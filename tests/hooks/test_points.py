"""Tests for hook points: declaration, the name registry, equality and the built-ins."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import pytest

from hooks import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_OUTPUT,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_OUTPUT_ERROR,
    ON_TOOL_ERROR,
    AfterPoint,
    BeforePoint,
    ErrorPoint,
    PausablePoint,
    WrapPoint,
)
from hooks._points import first_declared, known_points

POINT_TYPES: list[type[Any]] = [BeforePoint, AfterPoint, ErrorPoint, WrapPoint]
KINDS: dict[type[Any], str] = {
    PausablePoint: "before",
    BeforePoint: "before",
    AfterPoint: "after",
    ErrorPoint: "error",
    WrapPoint: "wrap",
}


def fresh_name(prefix: str = "points") -> str:
    """A point name no other test has declared."""
    return f"{prefix}_{uuid.uuid4().hex}"


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_declaring_a_point_registers_its_name_and_kind(point_type: type[Any]) -> None:
    """Constructing a point adds its name, with its kind, to ``known_points()``."""
    name = fresh_name()
    assert name not in known_points()
    point = point_type(name)
    assert point.name == name
    assert known_points()[name] == KINDS[point_type]


def test_known_points_is_a_snapshot() -> None:
    """Changing the dict ``known_points()`` returned does not change the registry."""
    snapshot = known_points()
    name = fresh_name()
    snapshot[name] = "before"
    del snapshot["before_model"]
    assert name not in known_points()
    assert known_points()["before_model"] == "before"


def test_on_event_is_reserved_as_the_observer_name() -> None:
    """``on_event`` is known from the start, as the observer method, and no point may take it."""
    assert known_points()["on_event"] == "event"
    with pytest.raises(ValueError, match="on_event"):
        BeforePoint("on_event")


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_redeclaring_with_the_same_kind_is_allowed_and_equal(point_type: type[Any]) -> None:
    """Declaring a name twice with the same kind gives two equal points."""
    name = fresh_name()
    first, second = point_type(name), point_type(name)
    assert first == second
    assert hash(first) == hash(second)
    assert known_points()[name] == KINDS[point_type]


@pytest.mark.parametrize(
    ("first_type", "second_type"), list(itertools.permutations(POINT_TYPES, 2))
)
def test_redeclaring_with_another_kind_raises_naming_it(
    first_type: type[Any], second_type: type[Any]
) -> None:
    """Declaring a name already declared with another kind raises ValueError naming both."""
    name = fresh_name()
    first_type(name)
    with pytest.raises(ValueError, match=repr(name)) as excinfo:
        second_type(name)
    message = str(excinfo.value)
    assert KINDS[first_type] in message
    assert second_type.__name__ in message
    assert known_points()[name] == KINDS[first_type]


@pytest.mark.parametrize(
    ("point_type", "name"),
    [
        (AfterPoint, "before_model"),
        (ErrorPoint, "after_tool"),
        (BeforePoint, "on_model_error"),
        (AfterPoint, "before_agent"),
    ],
)
def test_builtin_names_cannot_change_kind(point_type: type[Any], name: str) -> None:
    """A built-in point's name cannot be redeclared as another kind of point."""
    with pytest.raises(ValueError, match=repr(name)):
        point_type(name)


@pytest.mark.parametrize(
    "name",
    ["", "1st", "has space", "with-dash", "dotted.name", "_private", "__dunder__", "tab\t"],
)
@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_bad_names_are_rejected(point_type: type[Any], name: str) -> None:
    """A point name must be a public identifier; anything else raises ValueError naming it."""
    with pytest.raises(ValueError, match="public identifier") as excinfo:
        point_type(name)
    assert repr(name) in str(excinfo.value)
    assert name not in known_points()


@pytest.mark.parametrize("name", [None, 3, b"before_bytes", ["before_list"]])
def test_non_string_names_are_rejected(name: object) -> None:
    """A point name that is not a string raises ValueError rather than registering it."""
    before = known_points()
    with pytest.raises(ValueError, match="public identifier"):
        BeforePoint(name)  # type: ignore[arg-type]
    assert known_points() == before


def test_points_with_different_names_differ() -> None:
    """Points of one kind with different names are not equal."""
    assert BeforePoint(fresh_name()) != BeforePoint(fresh_name())


def test_points_of_different_kinds_differ() -> None:
    """A before point and an after point are not equal, whatever their names."""
    assert BEFORE_MODEL != AFTER_MODEL
    assert BeforePoint(fresh_name()) != AfterPoint(fresh_name())


def test_a_point_is_not_equal_to_its_name() -> None:
    """A point does not compare equal to the bare string of its name."""
    assert BEFORE_MODEL != "before_model"
    assert BeforePoint("before_model") == BEFORE_MODEL


def test_points_work_as_dict_keys() -> None:
    """Equal points hash alike, so a redeclared point finds the built-in's entry."""
    table = {BEFORE_MODEL: "model", AFTER_TOOL: "tool"}
    assert table[BeforePoint("before_model")] == "model"
    assert table[AfterPoint("after_tool")] == "tool"
    assert len({BEFORE_MODEL, BeforePoint("before_model"), AFTER_MODEL}) == 2


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_repr(point_type: type[Any]) -> None:
    """A point's repr is its constructor call."""
    name = fresh_name()
    assert repr(point_type(name)) == f"{point_type.__name__}({name!r})"


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_points_are_slotted(point_type: type[Any]) -> None:
    """A point carries nothing but its name."""
    with pytest.raises(AttributeError):
        point_type(fresh_name()).extra = 1


def test_subscripted_points_construct() -> None:
    """``BeforePoint[C, T](name)`` builds the same point as the bare class."""
    name = fresh_name()
    assert BeforePoint[int, str](name) == BeforePoint(name)


@pytest.mark.parametrize(
    ("point", "point_type", "name"),
    [
        (BEFORE_AGENT, BeforePoint, "before_agent"),
        (AFTER_AGENT, AfterPoint, "after_agent"),
        (BEFORE_MODEL, BeforePoint, "before_model"),
        (AFTER_MODEL, AfterPoint, "after_model"),
        (ON_MODEL_ERROR, ErrorPoint, "on_model_error"),
        (BEFORE_TOOL, PausablePoint, "before_tool"),
        (AFTER_TOOL, AfterPoint, "after_tool"),
        (ON_TOOL_ERROR, ErrorPoint, "on_tool_error"),
        (ON_OUTPUT_ERROR, ErrorPoint, "on_output_error"),
        (AFTER_OUTPUT, AfterPoint, "after_output"),
    ],
)
def test_builtin_points(point: object, point_type: type[Any], name: str) -> None:
    """Each built-in point (but the wraps) has its contract name and kind, and is registered."""
    assert type(point) is point_type
    assert getattr(point, "name", None) == name
    assert known_points()[name] == KINDS[point_type]


def test_there_are_exactly_ten_builtin_points() -> None:
    """The built-ins (but the wraps) are the ten points of the contract, distinct names."""
    builtins = {
        BEFORE_AGENT,
        AFTER_AGENT,
        BEFORE_MODEL,
        AFTER_MODEL,
        ON_MODEL_ERROR,
        BEFORE_TOOL,
        AFTER_TOOL,
        ON_TOOL_ERROR,
        ON_OUTPUT_ERROR,
        AFTER_OUTPUT,
    }
    assert len(builtins) == 10


def test_points_are_immutable() -> None:
    """A point's name cannot be reassigned, so a built-in point can never be renamed."""
    with pytest.raises(AttributeError, match="immutable"):
        BEFORE_MODEL.name = "before_anything"  # type: ignore[misc]
    assert BEFORE_MODEL.name == "before_model"


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_points_carry_their_payload_types(point_type: type[Any]) -> None:
    """``context`` and ``value`` are the classes given, ``None`` when not given."""
    bare = point_type(fresh_name())
    assert (bare.context, bare.value) == (None, None)
    typed = point_type(fresh_name(), context=int, value=list)
    assert (typed.context, typed.value) == (int, list)


@pytest.mark.parametrize("label", ["context", "value"])
@pytest.mark.parametrize("given", [3, "int", int | str, [int]], ids=repr)
def test_payload_types_must_be_classes(label: str, given: object) -> None:
    """A payload type that is not a class raises TypeError naming the point and the argument."""
    name = fresh_name()
    with pytest.raises(TypeError, match=f"{label} must be a class") as excinfo:
        BeforePoint(name, **{label: given})  # type: ignore[arg-type]
    assert repr(name) in str(excinfo.value)
    assert name not in known_points()


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_repr_shows_the_payload_types(point_type: type[Any]) -> None:
    """The repr of a typed point is its constructor call, payload types included."""
    name = fresh_name()
    assert repr(point_type(name, value=dict)) == f"{point_type.__name__}({name!r}, value=dict)"
    assert repr(point_type(name, context=int, value=dict)) == (
        f"{point_type.__name__}({name!r}, context=int, value=dict)"
    )


def test_payload_types_leave_identity_alone() -> None:
    """A point is its kind and name: typed and untyped declarations are equal and hash alike."""
    name = fresh_name()
    typed: BeforePoint[int, str] = BeforePoint(name, context=int)
    bare: BeforePoint[int, str] = BeforePoint(name)
    assert typed == bare
    assert hash(typed) == hash(bare)


def test_payload_types_are_immutable() -> None:
    """A point's payload types cannot be reassigned."""
    with pytest.raises(AttributeError, match="immutable"):
        BEFORE_TOOL.value = str  # type: ignore[misc]
    assert BEFORE_TOOL.value is not str


def test_points_of_different_names_hash_differently() -> None:
    """Distinct points spread over a set's buckets: their hashes differ by name."""
    points: list[BeforePoint[int, str]] = [BeforePoint(fresh_name()) for _ in range(8)]
    assert len({hash(point) for point in points}) == len(points)
    assert hash(BeforePoint(points[0].name)) == hash(points[0])


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_a_payload_type_error_names_the_point_as_built(point_type: type[Any]) -> None:
    """The TypeError for a payload type that is no class starts with the point's constructor
    call and says what was given."""
    name = fresh_name()
    with pytest.raises(TypeError) as excinfo:
        point_type(name, value="dict")
    assert str(excinfo.value).startswith(f"{point_type.__name__}({name!r}): value must be a class ")
    assert str(excinfo.value).endswith("or None, got 'dict'")


@pytest.mark.parametrize("point_type", POINT_TYPES)
def test_the_first_declaration_of_a_name_is_kept(point_type: type[Any]) -> None:
    """``first_declared(name)`` is the first point declared with ``name``, payload types and
    all: neither a redeclaration nor a refused one of another kind replaces it."""
    name = fresh_name()
    assert first_declared(name) is None
    first = point_type(name, context=int, value=str)
    point_type(name)
    other = next(other for other in POINT_TYPES if other is not point_type)
    with pytest.raises(ValueError, match="already declared"):
        other(name)
    assert first_declared(name) is first
