"""Tests of function tools' schemas and argument checks, with pydantic and without it.

With pydantic (``hookline[schema]``) every annotation a user writes gets a JSON schema
from ``pydantic.TypeAdapter`` and the model's arguments are validated against it in
strict JSON mode; without it, plain annotations (str, int, float, bool, Any, none) keep
working and any other is an ``ImportError`` naming the extra. Docstring descriptions
are read in Google and Sphinx style.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import functools
import inspect
import subprocess
import sys
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, Optional

import pydantic
import pytest
from typing_extensions import TypedDict

from runner import (
    Agent,
    FunctionTool,
    Runner,
    ScriptedModel,
    ToolArgumentsError,
    ToolCall,
)
from runner._tools.docstrings import argument_descriptions, summary
from tests.helpers import runs
from tests.helpers.runs import Mode, calling, drive, tool_messages

if TYPE_CHECKING:
    Undefined = int  # only the type checker can resolve it

EMPTY = inspect.Parameter.empty
INSTALL = "pip install 'hookline[schema]'"


class Color(enum.Enum):
    """A colour."""

    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    """A point on the grid."""

    x: int
    y: int = 0


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class User(pydantic.BaseModel):
    """Someone to write to."""

    name: str
    title: str = ""  # a field named "title" stays in the schema


class Older(typing.TypedDict):
    """Made with ``typing``'s TypedDict, which pydantic refuses before Python 3.12."""

    a: int


class Opaque:
    """No JSON schema describes this."""


def tool_of(annotation: object, default: object = EMPTY) -> FunctionTool:
    """A tool taking one argument ``x`` annotated ``annotation``, defaulting to ``default``."""

    def probe(x: Any) -> Any:
        return x

    probe.__annotations__ = {"x": annotation, "return": Any}
    if default is not EMPTY:
        probe.__defaults__ = (default,)
    return FunctionTool(probe)


def x_schema(annotation: object, default: object = EMPTY) -> dict[str, Any]:
    """The schema of ``x`` in ``tool_of(annotation, default)``."""
    properties: dict[str, dict[str, Any]] = tool_of(annotation, default).parameters["properties"]
    return properties["x"]


@pytest.fixture
def no_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tools made inside the test find no pydantic, as where ``hookline[schema]`` is missing."""
    monkeypatch.setitem(sys.modules, "pydantic", None)


# -- schemas, one annotation kind at a time -------------------------------------------

COLOR_DEFS = {"Color": {"description": "A colour.", "enum": ["red", "blue"], "type": "string"}}


@pytest.mark.parametrize(
    ("annotation", "default", "schema"),
    [
        (str, EMPTY, {"type": "string"}),
        (int, 3, {"type": "integer", "default": 3}),
        (float, 0.5, {"type": "number", "default": 0.5}),
        (bool, False, {"type": "boolean", "default": False}),
        (Any, EMPTY, {}),
        (list[str], EMPTY, {"type": "array", "items": {"type": "string"}}),
        (list[str], [], {"type": "array", "items": {"type": "string"}, "default": []}),
        (dict[str, int], EMPTY, {"type": "object", "additionalProperties": {"type": "integer"}}),
        (
            tuple[int, str],
            EMPTY,
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (tuple[int, ...], EMPTY, {"type": "array", "items": {"type": "integer"}}),
        (Literal["fast", "slow"], EMPTY, {"type": "string", "enum": ["fast", "slow"]}),
        (Literal[1, "a"], EMPTY, {"enum": [1, "a"]}),
        (Optional[int], EMPTY, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
        (int | None, None, {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}),
        (datetime.date, EMPTY, {"type": "string", "format": "date"}),
        (
            Annotated[int, pydantic.Field(ge=1, le=5, description="How many.")],
            3,
            {
                "type": "integer",
                "minimum": 1,
                "maximum": 5,
                "description": "How many.",
                "default": 3,
            },
        ),
        (
            Annotated[str, "Where to look."],
            EMPTY,
            {"type": "string", "description": "Where to look."},
        ),
    ],
    ids=lambda value: None if isinstance(value, dict) else repr(value)[:30],
)
def test_each_annotation_kind_has_its_json_schema(
    annotation: object, default: object, schema: dict[str, Any]
) -> None:
    """Plain types, containers, Literal, Optional, dates, Annotated metadata and defaults."""
    tool = tool_of(annotation, default)
    assert tool.parameters == {
        "type": "object",
        "properties": {"x": schema},
        "required": ["x"] if default is EMPTY else [],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("annotation", "default", "schema", "defs"),
    [
        (Color, EMPTY, {"$ref": "#/$defs/Color"}, COLOR_DEFS),
        (Color, Color.BLUE, {"$ref": "#/$defs/Color", "default": "blue"}, COLOR_DEFS),
        (Level, EMPTY, {"$ref": "#/$defs/Level"}, {"Level": {"enum": [1, 2], "type": "integer"}}),
        (list[Color], EMPTY, {"type": "array", "items": {"$ref": "#/$defs/Color"}}, COLOR_DEFS),
        (
            Point,
            Point(1),
            {"$ref": "#/$defs/Point", "default": {"x": 1, "y": 0}},
            {
                "Point": {
                    "description": "A point on the grid.",
                    "type": "object",
                    "properties": {
                        "x": {"type": "integer"},
                        "y": {"type": "integer", "default": 0},
                    },
                    "required": ["x"],
                    "additionalProperties": False,
                }
            },
        ),
        (
            Movie,
            EMPTY,
            {"$ref": "#/$defs/Movie"},
            {
                "Movie": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                    "required": ["title"],
                    "additionalProperties": False,
                }
            },
        ),
        (
            User | None,
            None,
            {"anyOf": [{"$ref": "#/$defs/User"}, {"type": "null"}], "default": None},
            {
                "User": {
                    "description": "Someone to write to.",
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "title": {"type": "string", "default": ""},
                    },
                    "required": ["name"],
                }
            },
        ),
    ],
    ids=["enum", "enum-default", "int-enum", "list-of-enum", "dataclass", "typeddict", "model"],
)
def test_enums_dataclasses_typeddicts_and_models_are_defined_once_in_defs(
    annotation: object, default: object, schema: dict[str, Any], defs: dict[str, Any]
) -> None:
    """Named types go to ``$defs`` (their docstring as description, no titles), used by ``$ref``.

    A dataclass or TypedDict of the user's refuses keys it does not declare, as the tool
    does; a pydantic model keeps its own ``extra`` setting.
    """
    parameters = tool_of(annotation, default).parameters
    assert parameters["properties"] == {"x": schema}
    assert parameters["$defs"] == defs
    assert list(parameters) == ["type", "properties", "required", "additionalProperties", "$defs"]


def test_titles_pydantic_makes_of_names_are_left_out() -> None:
    """No ``title`` anywhere but the model's field that is named ``title``."""
    parameters = tool_of(User).parameters
    assert "title" not in parameters
    assert "title" not in parameters["$defs"]["User"]
    assert parameters["$defs"]["User"]["properties"]["title"] == {"type": "string", "default": ""}


def test_a_default_without_a_json_form_is_left_out_of_the_schema() -> None:
    """A sentinel default is the function's business: the schema just says it is optional."""
    sentinel = object()
    assert x_schema(Any, sentinel) == {}
    assert x_schema(float, float("nan")) == {"type": "number"}
    assert tool_of(Any, sentinel).parameters["required"] == []


# -- descriptions ---------------------------------------------------------------------


def described(
    query: str,
    limit: int = 10,
    *,
    exact: Annotated[bool, "Match the whole word."] = False,
    since: Annotated[datetime.date | None, pydantic.Field(description="From this day.")] = None,
) -> str:
    """Search the notes.

    Args:
        query: What to look for,
            in any words.
        limit (int): At most this many hits.
        exact: Overridden by the annotation.
        since: Overridden by the annotation's Field.

    Returns:
        The hits.
    """
    return f"{query} {limit} {exact} {since}"


def test_argument_descriptions_come_from_the_docstring_and_annotated() -> None:
    """``Args:`` lines describe each argument; ``Annotated`` metadata wins over them."""
    tool = FunctionTool(described)
    assert tool.description == "Search the notes."
    assert tool.parameters["properties"] == {
        "query": {"type": "string", "description": "What to look for, in any words."},
        "limit": {"type": "integer", "description": "At most this many hits.", "default": 10},
        "exact": {"type": "boolean", "description": "Match the whole word.", "default": False},
        "since": {
            "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}],
            "description": "From this day.",
            "default": None,
        },
    }


def sphinx(city: str, days: int = 1) -> str:
    """Forecast the weather.
    :param city: The city,
        by its English name.
    :param int days: How many days ahead.
    :returns: The forecast.
    """
    return f"{city} {days}"


def test_sphinx_params_describe_arguments_too() -> None:
    """``:param x:`` and ``:param type x:`` lines, continued on indented lines."""
    tool = FunctionTool(sphinx)
    assert tool.description == "Forecast the weather."
    assert tool.parameters["properties"] == {
        "city": {"type": "string", "description": "The city, by its English name."},
        "days": {"type": "integer", "description": "How many days ahead.", "default": 1},
    }


@pytest.mark.parametrize(
    ("doc", "descriptions"),
    [
        ("Summary only.", {}),
        (
            "S.\n\nArgs:\n    a: One.\n    b: Two\n        lines.\n\nReturns:\n    c: no arg.",
            {"a": "One.", "b": "Two lines."},
        ),
        (
            "S.\n\nArguments:\n    *args: Rest.\n    **kw: Keywords.",
            {"args": "Rest.", "kw": "Keywords."},
        ),
        (
            "S.\n\nParameters:\n    a (list[int]): Some.\n    Not an entry.\n        lost",
            {"a": "Some."},
        ),
        (
            "S.\n\nArgs:\n    a: One.\n\n    b: After a blank line.",
            {"a": "One.", "b": "After a blank line."},
        ),
        ("S.\n\nArgs:\n    a:\n        Below.", {"a": "Below."}),
        ("S.\n\nArgs:\n    a:", {}),
        ("S.\n\nRaises:\n    a: Not an argument.", {}),
        ("S.\n:param a: One.\n:type a: int\n:param b: Two.\n\nMore.", {"a": "One.", "b": "Two."}),
        ("S.\n:arg a: One\n  more.\n:raises ValueError: when.", {"a": "One more."}),
        (":keyword str a: One.", {"a": "One."}),
        ("S.\n:param a: Sphinx.\n\nArgs:\n    a: Google wins.", {"a": "Google wins."}),
    ],
    ids=[
        "none",
        "google",
        "stars",
        "typed",
        "blank-line",
        "next-line",
        "empty",
        "raises",
        "sphinx",
        "sphinx-continued",
        "sphinx-typed",
        "both",
    ],
)
def test_argument_descriptions_read_google_and_sphinx(
    doc: str, descriptions: dict[str, str]
) -> None:
    """The two styles, continuation lines, other sections and fields left alone."""
    assert argument_descriptions(doc) == descriptions


@pytest.mark.parametrize(
    ("doc", "text"),
    [
        (None, ""),
        ("", ""),
        ("One line.", "One line."),
        ("First\n    continues.\n\n    Body.", "First continues."),
        ("Summary.\n:param a: A.", "Summary."),
        ("Summary.\nArgs:\n    a: A.", "Summary."),
        (":param a: A.", ""),
    ],
)
def test_summary_is_the_first_paragraph_without_argument_lines(doc: str | None, text: str) -> None:
    """A summary stops at a blank line, an ``Args:`` header or a ``:param`` field."""
    assert summary(doc) == text


# -- validation -----------------------------------------------------------------------


def test_a_list_of_str_refuses_a_list_with_an_int() -> None:
    """The motivating case: ``["a", 1]`` no longer passes for ``list[str]``."""
    tool = tool_of(list[str])
    with pytest.raises(ToolArgumentsError) as caught:
        tool.run({"x": ["a", 1]})
    assert caught.value.problem == "'x[1]' must be string, got int"
    assert tool.run({"x": ["a", "b"]}) == ["a", "b"]


class Received:
    """A tool that keeps what it was called with."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def __call__(
        self,
        *,
        color: Color,
        point: Point,
        user: User,
        movie: Movie,
        pair: tuple[int, str],
        day: datetime.date,
        level: Level = Level.LOW,
        ratio: float = 1.0,
    ) -> str:
        """Keep the arguments."""
        self.calls.append(dict(locals()))
        return "ok"


def test_the_function_gets_the_validated_values() -> None:
    """Enum members, dataclass and model instances, tuples and dates reach the function."""
    received = Received()
    tool = FunctionTool(received, name="receive")
    args = {
        "color": "red",
        "point": {"x": 1},
        "user": {"name": "Ada"},
        "movie": {"title": "Up"},
        "pair": [1, "a"],
        "day": "2024-05-01",
        "level": 2,
    }
    assert tool.run(args) == "ok"
    [call] = received.calls
    del call["self"]
    assert call == {
        "color": Color.RED,
        "point": Point(1, 0),
        "user": User(name="Ada"),
        "movie": {"title": "Up"},
        "pair": (1, "a"),
        "day": datetime.date(2024, 5, 1),
        "level": Level.HIGH,
        "ratio": 1.0,
    }
    assert type(call["level"]) is Level


def test_only_the_given_arguments_are_passed_so_defaults_stay_the_functions() -> None:
    """An argument the model leaves out gets the function's own default object."""
    shared: list[str] = []

    def collect(item: str, into: list[str] = shared) -> list[str]:
        into.append(item)
        return into

    tool = FunctionTool(collect)
    assert tool.run({"item": "a"}) is shared
    assert tool.run({"item": "b", "into": []}) == ["b"]
    assert shared == ["a"]


@pytest.mark.parametrize(
    ("annotation", "value", "problem"),
    [
        (int, "1", "'x' must be integer, got str"),
        (int, 1.5, "'x' must be integer, got float"),
        (int, 1.0, "'x' must be integer, got float"),
        (int, True, "'x' must be integer, got bool"),
        (float, "1.5", "'x' must be number, got str"),
        (float, False, "'x' must be number, got bool"),
        (str, 1, "'x' must be string, got int"),
        (bool, "true", "'x' must be boolean, got str"),
        (bool, 0, "'x' must be boolean, got int"),
        (list[int], ["1"], "'x[0]' must be integer, got str"),
        (int | None, "1", "'x' must be integer, got str"),
        (dict[str, int], {"a": 1, "b": "2"}, "'x.b' must be integer, got str"),
        (list[str], "a", "'x' must be a valid array, got str 'a'"),
        (Color, "green", "'x' must be 'red' or 'blue', got str 'green'"),
        (Literal["fast", "slow"], "medium", "'x' must be 'fast' or 'slow', got str 'medium'"),
        (Point, {"y": 1}, "missing a required field: 'x.x'"),
        (Point, {"x": 1, "z": 2}, "got an unexpected field 'x.z'"),
        (Movie, {"title": "Up", "stars": 5}, "got an unexpected field 'x.stars'"),
        (Point, [1, 2], "'x' must be an object, got list [1, 2]"),
        (
            tuple[int, str],
            [1, "a", 2],
            "'x': Tuple should have at most 2 items after validation, not 3, got list [1, 'a', 2]",
        ),
        (
            Annotated[int, pydantic.Field(ge=1)],
            0,
            "'x' must be greater than or equal to 1, got int 0",
        ),
    ],
)
def test_arguments_are_checked_strictly_as_json(
    annotation: object, value: object, problem: str
) -> None:
    """No coercion between JSON types; the problem says where, what was expected and what came."""
    tool = tool_of(annotation)
    with pytest.raises(ToolArgumentsError) as caught:
        tool.check({"x": value})
    assert caught.value.problem == problem
    assert caught.value.name == "probe"
    assert caught.value.args_given == {"x": value}


@pytest.mark.parametrize(
    ("annotation", "value", "result"),
    [
        (float, 2, 2),
        (float | None, 2, 2),
        (float, 2.5, 2.5),
        (list[float], [2], [2.0]),
        (Color, Color.BLUE, Color.BLUE),
        (tuple[int, int], (1, 2), (1, 2)),
        (datetime.date, datetime.date(2024, 5, 1), datetime.date(2024, 5, 1)),
        (Point, Point(3), Point(3)),
        (str, "text", "text"),
    ],
)
def test_values_pass_as_the_json_they_stand_for(
    annotation: object, value: object, result: object
) -> None:
    """Python values in args (from a hook) count as their JSON; a top-level int stays an int.

    PEP 484 reads ``float`` as "int or float", so an int for a ``float`` parameter reaches
    the function as the int the model sent, as it does without pydantic.
    """
    got = tool_of(annotation).run({"x": value})
    assert got == result
    assert type(got) is type(result)


class Text(str):
    """A str of its own kind."""

    __slots__ = ()


@pytest.mark.parametrize(
    ("annotation", "value", "result"),
    [
        (int, 7, 7),
        (int, 2**63 - 1, 2**63 - 1),
        (int, 2**70, 2**70),
        (int, -(2**70), -(2**70)),
        (str, "plain", "plain"),
        (str, "a\x00b", "a\x00b"),
        (str, "déjà vu", "déjà vu"),
        (str, Text("kind"), "kind"),
        (bool, False, False),
    ],
)
def test_plain_values_reach_the_function_as_json_gives_them(
    annotation: object, value: object, result: object
) -> None:
    """Ints of any size, any text JSON can carry, bools: the function gets them as the JSON
    they stand for (a str of its own kind as a plain str)."""
    got = tool_of(annotation).run({"x": value})
    assert got == result
    assert type(got) is type(result)


def test_text_json_cannot_carry_is_refused() -> None:
    """A lone surrogate is no JSON text: the call is refused, naming why."""
    with pytest.raises(ToolArgumentsError, match="arguments must be JSON values"):
        tool_of(str).run({"x": "\ud800"})


def test_missing_and_unexpected_arguments_read_as_without_pydantic() -> None:
    """Top-level problems keep the words Python's own signature check uses."""
    tool = FunctionTool(runs.add)
    cases = {
        "missing a required argument: 'b'": {"a": 1},
        "got an unexpected keyword argument 'c'": {"a": 1, "b": 2, "c": 3},
    }
    for problem, args in cases.items():
        with pytest.raises(ToolArgumentsError) as caught:
            tool.run(args)
        assert caught.value.problem == problem


def test_many_problems_are_cut_to_three() -> None:
    """Three problems are told, then how many more there were."""
    tool = tool_of(list[int])
    with pytest.raises(ToolArgumentsError) as caught:
        tool.run({"x": ["a", "b", "c", "d", "e"]})
    assert caught.value.problem == (
        "'x[0]' must be integer, got str; 'x[1]' must be integer, got str; "
        "'x[2]' must be integer, got str; and 2 more"
    )


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["q", 1], "arguments must be a JSON object"),
        ({"x": Opaque()}, "arguments must be JSON values: Unable to serialize unknown type"),
    ],
    ids=["not-an-object", "not-json"],
)
def test_arguments_that_are_no_json_object_are_refused(args: Any, problem: str) -> None:
    """A list, or values with no JSON form, never reach the function."""
    with pytest.raises(ToolArgumentsError) as caught:
        tool_of(Any).run(args)
    assert caught.value.problem.startswith(problem)


def test_any_mapping_of_arguments_is_read() -> None:
    """A read-only mapping of arguments is checked like a dict."""
    tool = tool_of(list[int])
    assert tool.run(types_mapping({"x": [1]})) == [1]


def types_mapping(values: dict[str, object]) -> Mapping[str, object]:
    """``values`` as a read-only mapping, which is no dict."""
    import types

    return types.MappingProxyType(values)


def keywords(first: str, **rest: int) -> str:
    """Join ``rest`` after ``first``."""
    return first + "".join(f" {key}={value}" for key, value in sorted(rest.items()))


def test_typed_kwargs_take_extra_arguments_of_their_type() -> None:
    """``**rest: int`` opens the object to extra integer arguments, checked as such."""
    tool = FunctionTool(keywords)
    assert tool.parameters["additionalProperties"] == {"type": "integer"}
    assert tool.run({"first": "f", "b": 2, "a": 1}) == "f a=1 b=2"
    with pytest.raises(ToolArgumentsError, match="'b' must be integer, got str"):
        tool.run({"first": "f", "b": "2"})


def test_untyped_kwargs_take_anything() -> None:
    """``**kwargs`` without an annotation accepts any extra argument."""

    def loose(**kwargs) -> str:  # type: ignore[no-untyped-def]  # untyped on purpose
        return repr(sorted(kwargs))

    tool = FunctionTool(loose)
    assert tool.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": True,
    }
    assert tool.run({"a": [1], "b": None}) == "['a', 'b']"


def test_async_tools_check_before_the_coroutine_starts() -> None:
    """An async tool's ``run`` refuses bad args at once and awaits with validated values."""

    async def paint(color: Color) -> str:
        await asyncio.sleep(0)
        return color.name

    tool = FunctionTool(paint)
    assert tool.is_async
    with pytest.raises(ToolArgumentsError):
        tool.run({"color": "green"})
    assert asyncio.run(tool.run({"color": "blue"})) == "BLUE"


def test_a_run_calls_tools_with_validated_values_and_tells_the_model_bad_ones(
    mode: Mode,
) -> None:
    """In a run, a bad call becomes an error result the model reads; a good one runs."""
    painted: list[Color] = []

    def paint(color: Color, coats: int = 1) -> str:
        """Paint the wall."""
        painted.append(color)
        return f"{coats} coat(s) of {color.value}"

    model = ScriptedModel(
        [
            calling(ToolCall("c1", "paint", {"color": "green"})),
            calling(ToolCall("c2", "paint", {"color": "blue", "coats": 2})),
            "done",
        ]
    )
    with Runner(Agent("assistant", model, tools=[paint])) as runner:
        result = drive(runner, mode, "paint it")
    assert result.output == "done"
    assert painted == [Color.BLUE]
    first, second = (tool_messages(model.requests[n])[-1].content for n in (1, 2))
    assert first.startswith("ToolArgumentsError: bad arguments for tool 'paint': ")
    assert "'color' must be 'red' or 'blue', got str 'green'" in first
    assert second == "2 coat(s) of blue"
    spec = model.requests[0].tools[0]
    assert spec.parameters["$defs"]["Color"]["enum"] == ["red", "blue"]


# -- what pydantic cannot describe ------------------------------------------------------


def test_an_annotation_without_json_schema_is_refused_naming_the_parameter() -> None:
    """A class pydantic knows nothing of is a ``TypeError`` when the tool is made."""

    def use(label: str, thing: Opaque) -> str:
        return label

    with pytest.raises(TypeError) as caught:
        FunctionTool(use)
    message = str(caught.value)
    assert message.startswith(
        "tool 'use': parameter 'thing' (Opaque) has no JSON schema: a function tool's "
        "parameters take what a model can write in JSON (str, int, "
    )
    assert message.endswith("give the agent an object with name and run(args)")
    assert "pydantic" not in message.replace("a pydantic model", "")  # no config advice


def test_typing_typeddict_on_python_3_11_is_refused_with_pydantic_s_advice() -> None:
    """pydantic needs ``typing_extensions.TypedDict`` before 3.12: the error says so."""
    if sys.version_info >= (3, 12):
        assert x_schema(Older)["$ref"] == "#/$defs/Older"
        return
    with pytest.raises(TypeError, match=r"parameter 'x' \(Older\) .*typing_extensions.TypedDict"):
        tool_of(Older)


def test_unresolvable_annotations_leave_arguments_untyped() -> None:
    """A name only a type checker sees makes that argument untyped, and only that one."""

    def odd(x: Undefined, n: int) -> str:
        return f"{x}{n}"

    tool = FunctionTool(odd)
    assert tool.parameters["properties"] == {"x": {}, "n": {"type": "integer"}}
    assert tool.run({"x": [1], "n": 2}) == "[1]2"


def scale(x: float, factor: int, unit: Unit) -> str:
    """Scale ``x``."""
    return f"{x * factor} {unit.name}"


class Unit(enum.Enum):
    M = "m"


def test_partials_and_methods_resolve_their_function_s_annotations() -> None:
    """A partial's annotations resolve where its function was written; a bound method's too."""
    double = FunctionTool(functools.partial(scale, factor=2), name="double")
    assert double.parameters["properties"]["unit"] == {"$ref": "#/$defs/Unit"}
    assert double.run({"x": 1.5, "unit": "m"}) == "3.0 M"
    method = FunctionTool(Received().__call__, name="receive")
    assert method.parameters["properties"]["color"] == {"$ref": "#/$defs/Color"}


# -- without pydantic -----------------------------------------------------------------


def plain(
    text: str,
    count: int,
    *,
    ratio: float = 0.5,
    loud: bool = False,
    note: Annotated[str, "A note."] = "",
    anything: Any = None,
) -> str:
    """Repeat ``text``.

    Args:
        text: What to repeat.
        count: How often.
    """
    return f"{text * count} {ratio} {loud} {note} {anything}"


def test_plain_tools_get_the_same_schema_without_pydantic(no_pydantic: None) -> None:
    """str, int, float, bool, Any and no annotation: the schema pydantic would write."""
    assert FunctionTool(plain).parameters == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "What to repeat."},
            "count": {"type": "integer", "description": "How often."},
            "ratio": {"type": "number", "default": 0.5},
            "loud": {"type": "boolean", "default": False},
            "note": {"type": "string", "description": "A note.", "default": ""},
            "anything": {"default": None},
        },
        "required": ["text", "count"],
        "additionalProperties": False,
    }


def test_plain_schemas_match_pydantic_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same function has the same schema with pydantic and without it."""
    with_pydantic = FunctionTool(plain).parameters
    monkeypatch.setitem(sys.modules, "pydantic", None)
    assert FunctionTool(plain).parameters == with_pydantic
    assert FunctionTool(keywords).parameters["additionalProperties"] == {"type": "integer"}


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"a": 1}, "missing a required argument: 'b'"),
        ({"a": 1, "b": 2, "c": 3}, "got an unexpected keyword argument 'c'"),
        ({"a": "1", "b": 2}, "'a' must be integer, got str"),
        ({"a": True, "b": 2}, "'a' must be integer, got bool"),
        ({"a": 1.0, "b": 2}, "'a' must be integer, got float"),
        (["a", "b"], "arguments must be a JSON object"),
    ],
)
def test_plain_checks_say_what_pydantic_s_say(
    monkeypatch: pytest.MonkeyPatch, args: Any, problem: str
) -> None:
    """The problems a plain tool can have read alike with pydantic and without it."""
    checked = FunctionTool(runs.add)
    monkeypatch.setitem(sys.modules, "pydantic", None)
    plain_tool = FunctionTool(runs.add)
    for tool in (checked, plain_tool):
        with pytest.raises(ToolArgumentsError) as caught:
            tool.run(args)
        assert caught.value.problem == problem


def test_plain_tools_run_without_pydantic(no_pydantic: None) -> None:
    """Checks by the signature and the plain types; the args reach the function as given."""
    tool = FunctionTool(plain)
    assert tool.run({"text": "a", "count": 2, "ratio": 1}) == "aa 1 False  None"
    assert tool.run({"text": "a", "count": 1, "anything": [1]}) == "a 0.5 False  [1]"
    with pytest.raises(ToolArgumentsError, match="'loud' must be boolean, got int"):
        tool.run({"text": "a", "count": 1, "loud": 1})
    extras = FunctionTool(keywords)
    assert extras.run({"first": "f", "a": 1}) == "f a=1"
    with pytest.raises(ToolArgumentsError, match="'a' must be integer, got str"):
        extras.run({"first": "f", "a": "1"})


@pytest.mark.parametrize(
    ("annotation", "shown"),
    [
        (list[str], "list[str]"),
        (Color, "Color"),
        (int | None, "int | None"),
        (Literal["a"], "typing.Literal['a']"),
        (Annotated[int, pydantic.Field(ge=1)], "Annotated[int, ...]"),
    ],
)
def test_rich_annotations_without_pydantic_name_the_extra(
    no_pydantic: None, annotation: object, shown: str
) -> None:
    """An annotation the plain checks cannot honour is an ``ImportError`` when the tool is made."""
    with pytest.raises(ImportError) as caught:
        tool_of(annotation)
    assert str(caught.value) == (
        f"tool 'probe': parameter 'x' is annotated {shown}, which needs pydantic to "
        f"describe and check: {INSTALL}"
    )
    assert caught.value.name == "pydantic"


def test_rich_kwargs_without_pydantic_name_the_extra(no_pydantic: None) -> None:
    """``**kwargs`` annotated with more than a plain type needs pydantic too."""

    def tagged(**tags: list[str]) -> str:
        return str(tags)

    with pytest.raises(ImportError, match=r"parameter '\*\*tags' is annotated list\[str\]"):
        FunctionTool(tagged)


def run_python(code: str) -> str:
    """The output of ``code`` run by a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


@pytest.mark.subprocess
def test_importing_runner_does_not_import_pydantic() -> None:
    """pydantic is imported when a tool is made, never by ``import runner`` (nor by its
    output types' module, nor by an agent without an ``output_type``)."""
    code = (
        "import sys, runner, hooks, runner._tools.pydantic, runner._tools.schema\n"
        "import runner._tools.output, runner._tools.context\n"
        "runner.Agent('plain', runner.ScriptedModel())\n"
        "print('pydantic' in sys.modules)\n"
        "runner.FunctionTool(lambda a: a, name='echo')\n"
        "print('pydantic' in sys.modules)"
    )
    assert run_python(code).split() == ["False", "True"]


@pytest.mark.subprocess
def test_a_plain_tool_works_where_pydantic_is_missing() -> None:
    """In a fresh interpreter that cannot import pydantic, a plain tool runs a whole run."""
    code = (
        "import sys\n"
        "sys.modules['pydantic'] = None\n"
        "from runner import Agent, Runner, ScriptedModel, ModelResponse, ToolCall\n"
        "def add(a: int, b: int) -> int:\n"
        "    return a + b\n"
        "call = ModelResponse(tool_calls=(ToolCall('c1', 'add', {'a': 2, 'b': 3}),))\n"
        "model = ScriptedModel([call, 'done'])\n"
        "with Runner(Agent('assistant', model, tools=[add])) as runner:\n"
        "    runner.run('go')\n"
        "print(model.requests[1].messages[-1].content)"
    )
    assert run_python(code) == "5"


def test_function_tool_keeps_its_public_surface() -> None:
    """name, description, parameters, run, check, spec and is_async, as before; and the
    annotations it declares; deps_type and run_in for a tool that takes a RunContext."""
    public = [name for name in dir(FunctionTool(described)) if not name.startswith("_")]
    assert public == [
        "annotations",
        "check",
        "deps_type",
        "description",
        "fn",
        "is_async",
        "name",
        "parameters",
        "run",
        "run_in",
        "spec",
    ]
