"""Tests of ``runner._tools.output``: an output type's schema, strictness, tool and checks."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from typing import Any, Literal

import pydantic
import pytest

from hooks import ModelResponse, ToolCall
from runner._tools.output import OutputInvalid, OutputType, closed, strict_ready


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Tagged(pydantic.BaseModel):
    points: list[Point]
    kind: Literal["a", "b"]


def test_a_nested_type_is_strict_ready_with_every_object_closed() -> None:
    """Objects in ``$defs`` and at the top are closed; the spec says strict."""
    output = OutputType[Tagged](Tagged, agent="a")
    assert output.spec.strict
    assert output.schema["additionalProperties"] is False
    assert output.schema["$defs"]["Point"]["additionalProperties"] is False
    assert output.tool.name == "final_result"
    assert output.tool.parameters == output.schema


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": []},
        {"type": "object", "properties": {}, "required": []},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b": {}}, "required": []}},
            "required": ["a"],
        },
    ],
    ids=["optional", "empty", "open", "one-of", "nested-optional"],
)
def test_a_schema_strict_mode_cannot_say_is_not_strict(schema: dict[str, Any]) -> None:
    """An optional property, an object without properties, an open one, ``oneOf``: ``None``."""
    assert strict_ready(schema) is None


def test_closed_closes_objects_that_say_nothing_and_keeps_optional_properties() -> None:
    """``closed`` adds ``additionalProperties: false`` where absent, nested ones too."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
        "required": [],
        "$defs": {"D": {"type": "object", "additionalProperties": {"type": "integer"}}},
    }
    done = closed(schema)
    assert done["additionalProperties"] is False
    assert done["properties"]["a"]["additionalProperties"] is False
    assert done["$defs"]["D"]["additionalProperties"] == {"type": "integer"}
    assert done["required"] == []
    assert "additionalProperties" not in schema  # the input is not changed


def test_a_non_object_type_is_wrapped_and_named_for_the_api() -> None:
    """``list[int]`` is asked for as ``{"response": [...]}``, named with API-safe characters."""
    output = OutputType[list[int]](list[int], agent="a")
    assert output.wrapped
    assert output.spec.name == "list_int"
    assert output.schema == {
        "type": "object",
        "properties": {"response": {"items": {"type": "integer"}, "type": "array"}},
        "required": ["response"],
        "additionalProperties": False,
    }
    assert output.from_data({"response": [1, 2]}) == [1, 2]
    with pytest.raises(OutputInvalid, match='one key, "response"'):
        output.from_data([1, 2])
    with pytest.raises(OutputInvalid, match=r"response\[1\]: Input should be a valid integer"):
        output.from_data({"response": [1, "x"]})


def test_text_that_is_no_json_says_so() -> None:
    """The misfit names the JSON error and asks for JSON only; ``raw`` is the text."""
    output = OutputType[Point](Point, agent="a")
    with pytest.raises(OutputInvalid, match="the answer is not JSON") as raised:
        output.from_text("x = 1")
    assert raised.value.raw == "x = 1"


def test_errors_are_listed_a_line_each_at_most_ten() -> None:
    """Many misfits: ten lines and how many more."""

    class Wide(pydantic.BaseModel):
        values: list[int]

    output = OutputType[Wide](Wide, agent="a")
    with pytest.raises(OutputInvalid) as raised:
        output.from_data({"values": ["x"] * 12})
    assert len(raised.value.errors) == 11
    assert raised.value.errors[-1] == "and 2 more errors"


def test_checked_takes_a_value_of_the_type_and_refuses_another() -> None:
    """A hook's value is checked strictly: a dict is no dataclass, a ``"1"`` no int."""
    output = OutputType[Point](Point, agent="a")
    assert output.checked(Point(1, 2)) == Point(1, 2)
    with pytest.raises(
        OutputInvalid, match=r"\(the answer\): Input should be an instance of Point"
    ):
        output.checked({"x": 1, "y": 2})
    numbers = OutputType[list[int]](list[int], agent="a")
    with pytest.raises(OutputInvalid, match=r"^\[0\]: Input should be a valid integer"):
        numbers.checked(["1"])


def test_final_call_is_the_first_call_of_the_final_result_tool() -> None:
    """Other calls are not it; the first of two is."""
    output = OutputType[Point](Point, agent="a")
    first, second = ToolCall("f1", "final_result", {}), ToolCall("f2", "final_result", {})
    response = ModelResponse(tool_calls=(ToolCall("t", "other", {}), first, second))
    assert output.final_call(response) is first
    assert output.final_call(ModelResponse(text="hi")) is None
    assert repr(output) == "Point"


def test_without_pydantic_an_output_type_is_an_import_error_naming_the_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No pydantic: an ``ImportError`` naming the agent, the type and pydantic."""
    monkeypatch.setitem(sys.modules, "pydantic", None)
    with pytest.raises(ImportError, match=r"agent 'a': output_type=.*Point needs pydantic") as err:
        OutputType[Point](Point, agent="a")
    assert err.value.name == "pydantic"


@pytest.mark.parametrize(
    ("annotation", "cause"),
    [
        (Callable[[], int], "Cannot generate a JsonSchema"),
        (3, "Unable to generate pydantic-core schema for 3"),
    ],
    ids=["callable", "not-a-type"],
)
def test_a_type_without_a_json_schema_is_a_type_error_with_pydantic_s_first_line(
    annotation: object, cause: str
) -> None:
    """The message names the agent and the type and gives one line of pydantic's reason."""
    with pytest.raises(TypeError, match=rf"agent 'b': output_type=.* has no JSON schema: {cause}"):
        OutputType[Any](annotation, agent="b")


def test_an_answer_as_json_text_is_its_value_and_dumps_back() -> None:
    """``from_text`` of valid JSON is the value; ``dump`` is its JSON, unwrapped."""
    output = OutputType[Point](Point, agent="a")
    assert output.from_text('{"x": 1, "y": 2}') == Point(1, 2)
    assert json.loads(output.dump(Point(3, 4))) == {"x": 3, "y": 4}
    numbers = OutputType[list[int]](list[int], agent="a")
    assert numbers.from_text('{"response": [5]}') == [5]
    assert numbers.dump([5]) == "[5]"
    assert repr(numbers) == "list[int]"


def test_a_wrapped_type_keeps_its_definitions_at_the_top() -> None:
    """``list[Point]`` is wrapped; ``$defs`` move to the top where ``$ref`` finds them."""
    output = OutputType[list[Point]](list[Point], agent="a")
    assert output.wrapped
    assert output.spec.strict
    assert set(output.schema) == {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "$defs",
    }
    assert "$defs" not in output.schema["properties"]["response"]
    assert output.schema["$defs"]["Point"]["additionalProperties"] is False
    assert output.from_data({"response": [{"x": 1, "y": 2}]}) == [Point(1, 2)]


def test_tuples_and_unions_are_strict_ready_through_their_lists() -> None:
    """``prefixItems`` and ``anyOf`` lists are made strict item by item."""
    pair = OutputType[tuple[Point, str]](tuple[Point, str], agent="a")
    assert pair.spec.strict
    assert pair.from_data({"response": [{"x": 1, "y": 2}, "s"]}) == (Point(1, 2), "s")
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "array", "items": True},
        ]
    }
    assert strict_ready(schema) == {
        "anyOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            {"type": "array", "items": True},
        ]
    }
    open_item = {"anyOf": [{"type": "string"}, {"type": "object", "properties": {}}]}
    assert strict_ready(open_item) is None


def test_closed_goes_through_lists_and_leaves_leaves_alone() -> None:
    """Objects under ``anyOf``/``oneOf``/``items`` close; ``items: true`` stays as it is."""
    schema = {
        "oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "null"}],
        "allOf": [{"type": "object"}],
        "items": True,
        "prefixItems": [{"type": "object", "additionalProperties": True}],
    }
    done = closed(schema)
    assert done == {
        "oneOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": False,
            },
            {"type": "null"},
        ],
        "allOf": [{"type": "object", "additionalProperties": False}],
        "items": True,
        "prefixItems": [{"type": "object", "additionalProperties": True}],
    }
