"""Tests of ``runner._tools.output``: an output type's schema, strictness, tool and checks."""

from __future__ import annotations

import dataclasses
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
