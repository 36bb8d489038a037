"""Tests of what the runner is built from: ScriptedModel and Rule, FunctionTool and tool
names, RetryPolicy, Agent, and the checks they share; bad input is refused at construction."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import re
import sys
import threading
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from hooks import HookError, InvalidCallbacks
from runner import (
    Agent,
    FunctionTool,
    MaxStepsExceeded,
    Message,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    Rule,
    Runner,
    RunnerError,
    ScriptedModel,
    ScriptExhausted,
    SessionConflict,
    ToolArgumentsError,
    ToolCall,
    ToolSpec,
    UnknownToolError,
    as_tool,
)
from runner._checks import (
    as_message,
    check_id,
    int_at_least,
    non_negative_float,
    positive_int,
    refuse_inside_loop,
)
from runner._tools.tools import check_tool_name
from tests.helpers.runs import AsyncScripted, Mode, add, drive

if TYPE_CHECKING:
    Undefined = int  # only the type checker can resolve it


def request(*messages: Message) -> ModelRequest:
    """A request of ``messages``."""
    return ModelRequest(messages)


def user(content: str) -> ModelRequest:
    """A request whose last message is the user's ``content``."""
    return request(Message("user", content))


# -- positive_int, int_at_least, non_negative_float ---------------------------------


@pytest.mark.parametrize("value", [1, 2, 10**100])
def test_positive_int_returns_positive_ints(value: int) -> None:
    """A positive int comes back unchanged."""
    assert positive_int("max_steps", value) == value


@pytest.mark.parametrize(
    ("value", "got"),
    [(True, "bool True"), (2.0, "float 2.0"), ("3", "str '3'"), (None, "NoneType None")],
)
def test_positive_int_refuses_other_types(value: object, got: str) -> None:
    """A bool, float, str or None is a ``TypeError`` naming the field, an int and what came."""
    with pytest.raises(TypeError) as info:
        positive_int("max_steps", value)
    assert str(info.value) == f"max_steps must be a positive int, got {got}"


@pytest.mark.parametrize("value", [0, -1])
def test_positive_int_refuses_values_below_one(value: int) -> None:
    """Zero and negative ints are a ``ValueError`` naming the field and the value."""
    with pytest.raises(ValueError, match=rf"^max_steps must be a positive int, got {value}$"):
        positive_int("max_steps", value)


def test_int_at_least_names_the_bound_or_what_is_expected() -> None:
    """Without ``expected`` the message gives the bound; with it, that text."""
    assert int_at_least("keep", 0, 0) == 0
    with pytest.raises(ValueError, match=r"^keep must be an int >= 0, got -1$"):
        int_at_least("keep", -1, 0)
    with pytest.raises(TypeError, match=r"^keep must be None or an int >= 0, got float 1.5$"):
        int_at_least("keep", 1.5, 0, expected="None or an int >= 0")


@pytest.mark.parametrize("value", [0, 0.0, 1, 2.5, sys.float_info.max])
def test_non_negative_float_returns_finite_numbers(value: float) -> None:
    """A finite number >= 0 comes back unchanged."""
    assert non_negative_float("delay", value) == value


@pytest.mark.parametrize(
    ("value", "error", "got"),
    [
        (math.nan, ValueError, "nan"),
        (math.inf, ValueError, "inf"),
        (-math.inf, ValueError, "-inf"),
        (-0.5, ValueError, "-0.5"),
        (True, TypeError, "bool True"),
        ("1", TypeError, "str '1'"),
        (None, TypeError, "NoneType None"),
    ],
)
def test_non_negative_float_refuses_the_rest(
    value: object, error: type[Exception], got: str
) -> None:
    """NaN, infinities, negatives and non-numbers are refused, naming field and value."""
    with pytest.raises(error) as info:
        non_negative_float("delay", value)
    assert str(info.value) == f"delay must be a finite number >= 0, got {got}"


# -- ScriptedModel and Rule ---------------------------------------------------------


def test_script_items_answer_in_order() -> None:
    """Responses are returned, strings become text answers, exceptions are raised."""
    response = ModelResponse("first", (ToolCall("x", "add", {"a": 1, "b": 2}),))
    error = ConnectionError("down")
    model = ScriptedModel([response, "second", error, "third"])
    assert model.generate(user("1")) is response
    assert model.generate(user("2")) == ModelResponse("second")
    with pytest.raises(ConnectionError) as info:
        model.generate(user("3"))
    assert info.value is error
    assert model.generate(user("4")) == ModelResponse("third")
    assert [r.messages[0].content for r in model.requests] == ["1", "2", "3", "4"]


def test_script_exhausted_names_the_call() -> None:
    """A model with nothing left raises ``ScriptExhausted`` with the call's number."""
    model = ScriptedModel(["only"])
    model.generate(user("a"))
    with pytest.raises(ScriptExhausted, match="call 2") as info:
        model.generate(user("b"))
    assert info.value.call == 2
    assert isinstance(info.value, RunnerError)
    assert isinstance(info.value, LookupError)
    assert isinstance(info.value, HookError)


def test_default_answers_once_script_and_rules_are_done() -> None:
    """``default`` answers whatever the script and the rules do not."""
    model = ScriptedModel(["scripted"], rules=[Rule("weather", reply="sunny")], default="hmm")
    assert model.generate(user("weather?")).text == "scripted"
    assert model.generate(user("weather?")).text == "sunny"
    assert model.generate(user("news?")).text == "hmm"


def test_user_rules_format_groups_into_reply_and_args() -> None:
    """Reply and args are templates over ``{0}``, ``{1}``, named groups and ``{content}``."""
    model = ScriptedModel(
        rules=[
            Rule(
                r"add (\d+) and (?P<second>\d+)",
                reply="{0} -> {1}+{second} ({content})",
                tool="add",
                args={"a": "{1}", "b": "{second}"},
            )
        ]
    )
    response = model.generate(user("please ADD 2 and 3"))
    assert response.text == "ADD 2 and 3 -> 2+3 (please ADD 2 and 3)"
    assert response.tool_calls == (ToolCall("call_1", "add", {"a": 2, "b": 3}),)


@pytest.mark.parametrize(
    ("template", "value"),
    [
        ("2", 2),
        ("2.5", 2.5),
        ("true", True),
        ("null", None),
        ('["x", 1]', ["x", 1]),
        ('"quoted"', "quoted"),
        ("plain words", "plain words"),
    ],
)
def test_rule_args_that_read_as_json_are_parsed(template: str, value: object) -> None:
    """An argument that reads as JSON is parsed; anything else stays a string."""
    model = ScriptedModel(rules=[Rule(".*", tool="t", args={"v": template})])
    [call] = model.generate(user("go")).tool_calls
    assert call.args == {"v": value}


def test_tool_rules_answer_tool_results_only() -> None:
    """``on="tool"`` rules match the last tool result; user rules match the last user message."""
    model = ScriptedModel(
        rules=[
            Rule("sum", reply="user rule"),
            Rule(r"(\d+)", on="tool", reply="the sum is {1}"),
        ],
        default="nothing matched",
    )
    tool_result = request(Message("user", "sum?"), Message("tool", "5", tool_call_id="c1"))
    assert model.generate(tool_result).text == "the sum is 5"
    assert model.generate(user("sum?")).text == "user rule"
    assert model.generate(user("5")).text == "nothing matched"


def test_rules_ignore_requests_not_ending_in_user_or_tool_messages() -> None:
    """A conversation ending in an assistant or system message matches no rule."""
    model = ScriptedModel(rules=[Rule(".*", reply="matched")], default="default")
    assert model.generate(request(Message("assistant", "x"))).text == "default"
    assert model.generate(request(Message("system", "x"))).text == "default"
    assert model.generate(request()).text == "default"


def test_first_matching_rule_wins() -> None:
    """Rules are tried in order."""
    model = ScriptedModel(rules=[Rule("a", reply="first"), Rule("ab", reply="second")])
    assert model.generate(user("ab")).text == "first"


def test_rule_respond_returns_none_without_a_match() -> None:
    """``Rule.respond`` answers ``None`` when its pattern does not match."""
    rule = Rule("hello", reply="hi")
    assert rule.respond("goodbye", "c1") is None
    assert rule.respond("HELLO there", "c1") == ModelResponse("hi")


def test_call_ids_are_unique_per_model() -> None:
    """Each generated call gets a new id."""
    model = ScriptedModel(rules=[Rule(".*", tool="t")])
    ids = [model.generate(user("x")).tool_calls[0].id for _ in range(3)]
    assert ids == ["call_1", "call_2", "call_3"]


def test_rules_drive_a_whole_run(mode: Mode) -> None:
    """A rule-driven model calls a tool, then answers from the tool's result."""
    model = ScriptedModel(
        rules=[
            Rule(r"add (\d+) and (\d+)", tool="add", args={"a": "{1}", "b": "{2}"}),
            Rule(".*", on="tool", reply="The sum is {content}."),
        ]
    )
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, "add 2 and 3")
    assert result.output == "The sum is 5."


def test_scripted_model_is_thread_safe() -> None:
    """Concurrent callers each get a distinct scripted answer."""
    model = ScriptedModel([str(n) for n in range(200)])
    answers: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            text = model.generate(user("x")).text
            with lock:
                answers.append(text)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers, key=int) == [str(n) for n in range(200)]
    assert model.calls == 200


# -- ScriptedModel: bounded requests ------------------------------------------------


def test_scripted_model_keeps_the_last_100_requests_by_default() -> None:
    """By default the last 100 requests are kept, in order; ``calls`` counts them all."""
    model = ScriptedModel(default="ok")
    for n in range(150):
        model.generate(user(str(n)))
    assert model.calls == 150
    assert len(model.requests) == 100
    assert model.requests[0] == user("50")
    assert model.requests[-1] == user("149")
    assert [r.messages[0].content for r in model.requests] == [str(n) for n in range(50, 150)]


@pytest.mark.parametrize(("keep", "kept"), [(None, 250), (0, 0), (1, 1), (3, 3)])
def test_scripted_model_keep_requests_bounds_the_record(keep: int | None, kept: int) -> None:
    """``keep_requests`` keeps that many of the latest requests; ``None`` keeps them all."""
    model = ScriptedModel(default="ok", keep_requests=keep)
    for n in range(250):
        model.generate(user(str(n)))
    assert model.calls == 250
    assert [r.messages[0].content for r in model.requests] == [str(n) for n in range(250)][
        250 - kept :
    ]


def test_scripted_model_requests_is_a_snapshot() -> None:
    """``requests`` is a new list at each access: it equals lists, and changing it is harmless."""
    model = ScriptedModel(default="ok")
    assert model.requests == []
    model.generate(user("a"))
    seen = model.requests
    seen.clear()
    assert model.requests == [user("a")]


@pytest.mark.parametrize(
    ("keep", "error"), [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("9", TypeError)]
)
def test_scripted_model_refuses_bad_keep_requests(keep: object, error: type[Exception]) -> None:
    """``keep_requests`` is ``None`` or an int >= 0; anything else is refused, naming it."""
    with pytest.raises(error, match=r"^ScriptedModel.keep_requests must be None or an int >= 0"):
        ScriptedModel(keep_requests=keep)  # type: ignore[arg-type]


def test_script_exhausted_counts_calls_not_kept_requests() -> None:
    """The call number in ``ScriptExhausted`` counts every call, kept or not."""
    model = ScriptedModel(["one", "two"], keep_requests=0)
    model.generate(user("a"))
    model.generate(user("b"))
    with pytest.raises(ScriptExhausted, match="call 3"):
        model.generate(user("c"))
    assert (model.calls, model.requests) == (3, [])


# -- FunctionTool and as_tool -------------------------------------------------------


def search(
    query: str,
    limit: int,
    *,
    ratio: float = 0.5,
    exact: bool = False,
    tags: list[str] = [],  # noqa: B006 -- never mutated; shows a defaulted array
    filters: dict[str, str] | None = None,
    anything: Any = None,
) -> list[str]:
    """Search the index for ``query``.

    Returns at most ``limit`` hits.
    """
    return [query] * limit


def test_function_tool_reads_name_description_and_schema() -> None:
    """Name from the function, description from the docstring's first paragraph, JSON schema."""
    tool = FunctionTool(search)
    assert tool.name == "search"
    assert tool.description == "Search the index for ``query``."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "ratio": {"type": "number", "default": 0.5},
            "exact": {"type": "boolean", "default": False},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "filters": {
                "anyOf": [
                    {"type": "object", "additionalProperties": {"type": "string"}},
                    {"type": "null"},
                ],
                "default": None,
            },
            "anything": {"default": None},
        },
        "required": ["query", "limit"],
        "additionalProperties": False,
    }
    assert tool.spec() == ToolSpec("search", tool.description, tool.parameters)
    assert not tool.is_async


def test_function_tool_schema_leaves_out_star_parameters() -> None:
    """``*args`` is not in the schema; ``**kwargs: str`` takes extra string arguments."""

    def fmt(template: str, *args: str, **kwargs: str) -> str:
        """Format ``template``."""
        return template.format(*args, **kwargs)

    tool = FunctionTool(fmt)
    assert tool.parameters == {
        "type": "object",
        "properties": {"template": {"type": "string"}},
        "required": ["template"],
        "additionalProperties": {"type": "string"},
    }
    assert tool.run({"template": "{who}!", "who": "Ada"}) == "Ada!"


def test_function_tool_name_and_description_can_be_given() -> None:
    """``name`` and ``description`` override what the function says."""
    tool = FunctionTool(add, name="plus", description="Sum two numbers.")
    assert (tool.name, tool.description) == ("plus", "Sum two numbers.")
    agent = Agent("assistant", ScriptedModel(), tools=[tool])
    assert [spec.name for spec in agent.specs] == ["plus"]


def test_function_tool_joins_a_wrapped_first_paragraph() -> None:
    """A docstring summary spread over lines becomes one line; no docstring is ``""``."""

    def wrapped() -> None:
        """First line
        continues here.

        Body.
        """

    def bare() -> None:
        pass

    assert FunctionTool(wrapped).description == "First line continues here."
    assert FunctionTool(bare).description == ""


def test_function_tool_checks_and_calls_with_keywords() -> None:
    """``run`` checks the args then calls the function with them as keywords."""
    tool = FunctionTool(search)
    assert tool.run({"query": "q", "limit": 2, "ratio": 1}) == ["q", "q"]
    tool.check({"query": "q", "limit": 1, "exact": True, "tags": ["a"], "filters": None})


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"query": "q"}, "missing a required argument: 'limit'"),
        ({"query": "q", "limit": 1, "page": 2}, "got an unexpected keyword argument 'page'"),
        ({"query": 1, "limit": 1}, "'query' must be string, got int"),
        ({"query": "q", "limit": 1.5}, "'limit' must be integer, got float"),
        ({"query": "q", "limit": True}, "'limit' must be integer, got bool"),
        ({"query": "q", "limit": 1, "ratio": False}, "'ratio' must be number, got bool"),
        ({"query": "q", "limit": 1, "exact": 1}, "'exact' must be boolean, got int"),
        ({"query": "q", "limit": 1, "tags": "a"}, "'tags' must be a valid array, got str 'a'"),
        ({"query": "q", "limit": 1, "tags": ["a", 1]}, "'tags[1]' must be string, got int"),
        ({"query": "q", "limit": 1, "filters": {"a": 1}}, "'filters.a' must be string, got int"),
        (["q", 1], "arguments must be a JSON object"),
    ],
)
def test_function_tool_rejects_args_that_do_not_fit(args: Any, problem: str) -> None:
    """Missing, extra or wrongly typed args raise ``ToolArgumentsError`` before any call."""
    tool = FunctionTool(search)
    with pytest.raises(ToolArgumentsError) as info:
        tool.run(args)
    assert info.value.problem == problem
    assert info.value.name == "search"
    assert info.value.args_given == args
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, RunnerError)


def test_function_tool_without_resolvable_hints_checks_names_only() -> None:
    """Annotations that cannot be resolved leave the arguments untyped."""

    def odd(x: Undefined) -> str:
        """Odd."""
        return str(x)

    tool = FunctionTool(odd)
    assert tool.parameters == {
        "type": "object",
        "properties": {"x": {}},
        "required": ["x"],
        "additionalProperties": False,
    }
    assert tool.run({"x": "anything"}) == "anything"


def test_async_function_tools_are_async() -> None:
    """An ``async def`` becomes an async tool whose ``run`` gives a coroutine."""

    async def fetch(url: str) -> str:
        """Fetch."""
        await asyncio.sleep(0)
        return f"<{url}>"

    tool = FunctionTool(fetch)
    assert tool.is_async
    assert asyncio.run(tool.run({"url": "x"})) == "<x>"


class Clock:
    """A tool object without description or parameters."""

    name = "clock"

    def run(self, args: Mapping[str, Any], /) -> str:
        """Tell the time."""
        return "noon"

    def tick(self, times: int) -> int:
        """Tick ``times`` times."""
        return times


def test_as_tool_accepts_functions_methods_and_tool_objects() -> None:
    """Functions and methods become ``FunctionTool``; tool objects and FunctionTools pass as-is."""
    clock = Clock()
    made = as_tool(add)
    assert isinstance(made, FunctionTool)
    assert made.name == "add"
    method = as_tool(clock.tick)
    assert isinstance(method, FunctionTool)
    assert method.name == "tick"
    assert method.run({"times": 3}) == 3
    assert as_tool(clock) is clock
    ready = FunctionTool(add)
    assert as_tool(ready) is ready


@pytest.mark.parametrize(
    "thing",
    [42, "add", object(), type("Named", (), {"name": 3, "run": lambda self, args: None})()],
    ids=["int", "str", "object", "non-str-name"],
)
def test_as_tool_refuses_what_is_no_tool(thing: object) -> None:
    """Anything but a function or an object with a str ``name`` and ``run`` is a ``TypeError``."""
    with pytest.raises(TypeError, match="a tool is a function or an object"):
        as_tool(thing)


def test_tool_objects_without_a_spec_get_an_empty_one() -> None:
    """A tool object's missing description and parameters are empty in its spec."""
    agent = Agent("assistant", ScriptedModel(), tools=[Clock()])
    assert agent.specs == (ToolSpec("clock", "", {}),)


def test_function_tool_refuses_required_positional_only_parameters() -> None:
    """A function whose required parameters are positional-only cannot take the model's kwargs."""

    def positional(a: int, /) -> int:
        return a

    with pytest.raises(TypeError, match="positional-only"):
        FunctionTool(positional)


# -- tool names ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "get_weather", "get-weather", "A1", "-", "a" * 64])
def test_check_tool_name_accepts_the_providers_names(name: str) -> None:
    """Names of 1 to 64 ASCII letters, digits, ``_`` and ``-`` pass unchanged."""
    assert check_tool_name(name, "tool name") == name


@pytest.mark.parametrize("name", ["", "my tool!", "a.b", "a/b", "naïve", "x\n", "a" * 65])
def test_check_tool_name_refuses_what_providers_refuse(name: str) -> None:
    """Anything else is a ``ValueError`` quoting the name and the rule."""
    with pytest.raises(ValueError, match=r"\^\[A-Za-z0-9_-\]\{1,64\}\$") as info:
        check_tool_name(name, "tool name")
    assert str(info.value).startswith(f"tool name {name!r} is not a valid tool name")


def test_check_tool_name_refuses_non_str() -> None:
    """A name that is no str is a ``TypeError`` saying what came."""
    with pytest.raises(TypeError, match=r"^tool name must be a str, got int 3$"):
        check_tool_name(3, "tool name")


def test_a_lambda_tool_needs_a_name() -> None:
    """``'<lambda>'`` is no tool name: the error says how to give one."""
    with pytest.raises(ValueError, match=r"'<lambda>'.*FunctionTool\(fn, name=\.\.\.\)"):
        FunctionTool(lambda x: x)
    with pytest.raises(ValueError, match="'<lambda>'"):
        as_tool(lambda x: x)
    with pytest.raises(ValueError, match="'<lambda>'"):
        Agent("assistant", ScriptedModel(), tools=[lambda x: x])
    assert FunctionTool(lambda x: x, name="identity").name == "identity"


@pytest.mark.parametrize("name", ["", "my tool!", "a" * 65])
def test_function_tool_names_follow_the_rule(name: str) -> None:
    """A ``FunctionTool`` given a bad name is refused; an empty name is not replaced."""
    with pytest.raises(ValueError, match="is not a valid tool name"):
        FunctionTool(add, name=name)


def test_function_tool_of_a_nameless_callable_needs_a_name() -> None:
    """A callable without ``__name__`` is a ``TypeError`` asking for ``name=``."""

    class Adder:
        def __call__(self, a: int, b: int) -> int:
            return a + b

    with pytest.raises(TypeError, match=r"has no __name__; give one: FunctionTool\(fn, name="):
        FunctionTool(Adder())
    assert FunctionTool(Adder(), name="adder").run({"a": 1, "b": 2}) == 3


class Named:
    """A tool object named on construction."""

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, args: Mapping[str, Any], /) -> str:
        """Answer."""
        return self.name


@pytest.mark.parametrize("name", ["", "my tool!", "a" * 65])
def test_tool_object_names_follow_the_rule(name: str) -> None:
    """A tool object's ``name`` passes the same rule, in ``as_tool`` and in ``Agent``."""
    with pytest.raises(ValueError, match=r"tool object's name .* is not a valid tool name"):
        as_tool(Named(name))
    with pytest.raises(ValueError, match="is not a valid tool name"):
        Agent("assistant", ScriptedModel(), tools=[Named(name)])
    assert as_tool(Named("ok_name")).name == "ok_name"


@pytest.mark.parametrize("name", ["a" * 65, "café"])
def test_agent_names_are_tool_names_too(name: str) -> None:
    """An identifier that providers refuse as a tool name (too long, not ASCII) is refused."""
    assert name.isidentifier()
    with pytest.raises(ValueError, match=r"agent name .* is not a valid tool name"):
        Agent(name, ScriptedModel())
    assert Agent("a" * 64, ScriptedModel()).name == "a" * 64


# -- RetryPolicy --------------------------------------------------------------------


def test_retry_policy_defaults() -> None:
    """The defaults are the contract's: 3 attempts, 0.5 s base, 30 s cap, 10 % jitter."""
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay, policy.jitter) == (
        3,
        0.5,
        30.0,
        0.1,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_attempts = 5  # type: ignore[misc]


def test_retry_delay_doubles_up_to_the_cap() -> None:
    """Without jitter, wait ``n`` is ``base_delay * 2 ** (n - 1)``, capped at ``max_delay``."""
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, jitter=0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_retry_delay_jitter_uses_the_given_rng() -> None:
    """With jitter the wait is scaled by a factor drawn from ``rng`` in ``[1 - j, 1 + j]``."""
    policy = RetryPolicy(base_delay=1.0, jitter=0.2)
    draws = random.Random(3)
    expected = [base * (1 + draws.uniform(-0.2, 0.2)) for base in (1.0, 2.0, 4.0)]
    rng = random.Random(3)
    assert [policy.delay(n, rng) for n in (1, 2, 3)] == expected
    waits = [policy.delay(2, random.Random(seed)) for seed in range(200)]
    assert all(1.6 <= wait <= 2.4 for wait in waits)
    assert len(set(waits)) > 100


def test_retry_delay_without_rng_stays_in_bounds() -> None:
    """Without an ``rng`` the module's random source is used, within the jitter bounds."""
    policy = RetryPolicy(base_delay=1.0, jitter=0.5)
    assert all(0.5 <= policy.delay(1) <= 1.5 for _ in range(50))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"base_delay": -1},
        {"max_delay": -0.1},
        {"jitter": -0.1},
        {"jitter": 1.5},
    ],
)
def test_retry_policy_validates(kwargs: dict[str, Any]) -> None:
    """Nonsense budgets, delays and jitter are a ``ValueError`` naming the field."""
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        RetryPolicy(**kwargs)


@pytest.mark.parametrize("field", ["base_delay", "max_delay", "jitter"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_retry_policy_refuses_non_finite_numbers(field: str, value: float) -> None:
    """NaN and infinities would switch the delays off or make them endless: ``ValueError``."""
    with pytest.raises(ValueError, match=f"^RetryPolicy.{field} must be a finite number >= 0"):
        RetryPolicy(**dict[str, Any]({field: value}))


@pytest.mark.parametrize("field", ["base_delay", "max_delay", "jitter"])
@pytest.mark.parametrize("value", [True, "0.5", None])
def test_retry_policy_refuses_delays_that_are_no_numbers(field: str, value: object) -> None:
    """A bool, str or None delay is a ``TypeError`` naming the field."""
    with pytest.raises(TypeError, match=f"^RetryPolicy.{field} must be a finite number"):
        RetryPolicy(**dict[str, Any]({field: value}))


@pytest.mark.parametrize(
    ("value", "got"), [(2.0, "float 2.0"), (True, "bool True"), ("3", "str '3'")]
)
def test_retry_policy_max_attempts_must_be_an_int(value: object, got: str) -> None:
    """``max_attempts`` of another type than int is a ``TypeError`` saying what came."""
    with pytest.raises(TypeError) as info:
        RetryPolicy(max_attempts=value)  # type: ignore[arg-type]
    assert str(info.value) == f"RetryPolicy.max_attempts must be a positive int, got {got}"


def test_retry_policy_jitter_is_a_fraction() -> None:
    """A jitter above 1 could make a wait negative: ``ValueError`` naming the field."""
    with pytest.raises(ValueError, match=r"^RetryPolicy.jitter must be within \[0, 1\], got 1.5"):
        RetryPolicy(jitter=1.5)


@pytest.mark.parametrize("attempt", [1025, 10**6, 10**100])
def test_retry_delay_never_overflows(attempt: int) -> None:
    """Late attempts wait ``max_delay`` instead of overflowing ``2 ** (attempt - 1)``."""
    assert RetryPolicy(jitter=0).delay(attempt) == 30.0
    assert RetryPolicy(base_delay=0, jitter=0).delay(attempt) == 0.0
    assert 27.0 <= RetryPolicy(jitter=0.1).delay(attempt) <= 33.0


@pytest.mark.parametrize("attempt", [2100, 10**6, 10**100])
def test_retry_delay_reaches_the_largest_cap_from_the_smallest_base(attempt: int) -> None:
    """From 5e-324 the doubling reaches ``sys.float_info.max`` without overflowing on the way."""
    extreme = RetryPolicy(base_delay=5e-324, max_delay=sys.float_info.max, jitter=0)
    assert extreme.delay(attempt) == sys.float_info.max
    assert extreme.delay(1025) == 2.0**-50


@pytest.mark.parametrize(
    ("base", "cap"),
    [(0.5, 30.0), (1.0, 1.0), (3.0, 1.0), (0.1, 0.0), (5e-324, 1e-300), (1.0, sys.float_info.max)],
)
def test_retry_delay_is_the_capped_doubling_at_every_attempt(base: float, cap: float) -> None:
    """Every wait equals ``min(max_delay, base_delay * 2 ** (n - 1))`` wherever that is defined."""
    policy = RetryPolicy(base_delay=base, max_delay=cap, jitter=0)
    for attempt in range(1, 1025):
        assert policy.delay(attempt) == min(cap, base * 2.0 ** (attempt - 1)), attempt


@pytest.mark.parametrize(("attempt", "error"), [(0, ValueError), (1.0, TypeError)])
def test_retry_delay_refuses_attempts_that_are_not_positive_ints(
    attempt: object, error: type[Exception]
) -> None:
    """Attempts count from 1: anything else is refused, naming ``attempt``."""
    with pytest.raises(error, match=r"^attempt must be a positive int"):
        RetryPolicy().delay(attempt)  # type: ignore[arg-type]


# -- Agent --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "two words", "1st", "a-b", "a/b"])
def test_agent_names_must_be_identifiers(name: str) -> None:
    """An agent's name names a tool and a branch, so it must be an identifier."""
    with pytest.raises(ValueError, match="identifier"):
        Agent(name, ScriptedModel())


def test_agent_refuses_duplicate_tool_names() -> None:
    """Two tools, or a tool and a sub-agent, with the same name are a ``ValueError``."""
    with pytest.raises(ValueError, match="'add'"):
        Agent("assistant", ScriptedModel(), tools=[add, FunctionTool(add)])
    researcher = Agent("researcher", ScriptedModel())
    with pytest.raises(ValueError, match="'researcher'"):
        Agent(
            "assistant",
            ScriptedModel(),
            tools=[FunctionTool(add, name="researcher")],
            sub_agents=[researcher],
        )


def test_agent_refuses_what_is_no_model_or_sub_agent() -> None:
    """A model needs ``generate``; sub-agents must be ``Agent`` instances."""
    with pytest.raises(TypeError, match="generate"):
        Agent("assistant", object())  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="sub_agents"):
        Agent("assistant", ScriptedModel(), sub_agents=["researcher"])  # type: ignore[list-item]


def test_agent_knows_what_is_async() -> None:
    """Whether the model and each tool are async is decided when the agent is made."""

    async def fetch(url: str) -> str:
        """Fetch."""
        return url

    agent = Agent("assistant", AsyncScripted(ScriptedModel()), tools=[add, fetch])
    assert agent.model_is_async
    assert agent.tool_is_async == {"add": False, "fetch": True}
    assert not Agent("plain", ScriptedModel()).model_is_async


def test_agent_description_walk_and_specs() -> None:
    """Descriptions default sensibly; ``walk`` is depth first; specs list tools then sub-agents."""
    leaf = Agent("leaf", ScriptedModel())
    middle = Agent("middle", ScriptedModel(), sub_agents=[leaf], instruction="Do the middle.")
    other = Agent("other", ScriptedModel(), description="The other one.")
    root = Agent("root", ScriptedModel(), tools=[add], sub_agents=[middle, other])
    assert [agent.name for agent in root.walk()] == ["root", "middle", "leaf", "other"]
    assert leaf.description == "Ask the leaf agent."
    assert middle.description == "Do the middle."
    assert [(spec.name, spec.description) for spec in root.specs] == [
        ("add", "Add two integers."),
        ("middle", "Do the middle."),
        ("other", "The other one."),
    ]
    assert list(root.tools) == ["add", "middle", "other"]


# -- Agent: bad input at construction -----------------------------------------------


@pytest.mark.parametrize(("name", "got"), [(123, "int 123"), (None, "NoneType None")])
def test_agent_name_must_be_a_str(name: object, got: str) -> None:
    """``Agent(123, ...)`` is a ``TypeError`` saying what came, not an ``AttributeError``."""
    with pytest.raises(TypeError, match=f"^an agent name must be a str .*, got {got}$"):
        Agent(name, ScriptedModel())  # type: ignore[call-overload]


class Guard:
    """An object with a hook method: a callback, not a list of them."""

    def before_model(self, ctx: object, /) -> object:
        """Never called."""
        return ctx


def _guards_module() -> types.ModuleType:
    module = types.ModuleType("guards")
    module.before_model = Guard().before_model  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(
    ("callbacks", "got"),
    [(Guard(), "Guard"), (_guards_module(), "module"), ("audit", "str"), (None, "NoneType")],
    ids=["object", "module", "str", "none"],
)
def test_agent_callbacks_must_be_a_list(callbacks: object, got: str) -> None:
    """A single callback where a list goes is ``InvalidCallbacks`` saying to wrap it."""
    with pytest.raises(InvalidCallbacks) as info:
        Agent("assistant", ScriptedModel(), callbacks=callbacks)  # type: ignore[call-overload]
    assert str(info.value) == (
        "agent 'assistant': callbacks must be a list or tuple of modules or objects, "
        f"got {got}; wrap a single callback as [callback]"
    )
    assert info.value.callback is callbacks


@pytest.mark.parametrize("tools", [add, "add", FunctionTool(add), Named("clock")])
def test_agent_tools_must_be_a_list(tools: object) -> None:
    """A single tool where a list goes is a ``TypeError`` saying to wrap it."""
    with pytest.raises(TypeError, match=r"tools must be a list .* wrap a single tool as \[tool\]$"):
        Agent("assistant", ScriptedModel(), tools=tools)  # type: ignore[call-overload]


def test_agent_sub_agents_must_be_a_list() -> None:
    """A single sub-agent where a list goes is a ``TypeError`` saying to wrap it."""
    researcher = Agent("researcher", ScriptedModel())
    with pytest.raises(TypeError, match=r"sub_agents must be a list .*got Agent.*\[agent\]$"):
        Agent("assistant", ScriptedModel(), sub_agents=researcher)  # type: ignore[call-overload]


def test_agent_takes_lists_and_tuples() -> None:
    """Lists and tuples are fine for tools, callbacks and sub-agents alike."""
    leaf = Agent("leaf", ScriptedModel())
    for kind in (list, tuple):
        agent = Agent(
            "root",
            ScriptedModel(),
            tools=kind([add]),
            callbacks=kind([Guard()]),
            sub_agents=kind([leaf]),
        )
        assert list(agent.tools) == ["add", "leaf"]


def test_agent_model_must_be_an_instance() -> None:
    """A model class given instead of an instance is a ``TypeError`` saying so."""
    with pytest.raises(TypeError, match=r"pass an instance: ScriptedModel\(\)"):
        Agent("assistant", ScriptedModel)  # type: ignore[call-overload]


@pytest.mark.parametrize("field", ["instruction", "description"])
def test_agent_texts_must_be_str(field: str) -> None:
    """``instruction`` and ``description`` of another type are a ``TypeError`` naming them."""
    with pytest.raises(TypeError, match=f"^agent 'assistant': {field} must be a str, got int 1$"):
        Agent("assistant", ScriptedModel(), **dict[str, Any]({field: 1}))


# -- Agent: immutable, walked once per agent ----------------------------------------


@pytest.mark.parametrize("attribute", Agent.__slots__)
def test_agent_attributes_cannot_be_reassigned_or_deleted(attribute: str) -> None:
    """Every attribute is fixed at construction, so no agent graph can be rewired into a cycle."""
    agent = Agent("assistant", ScriptedModel(), tools=[add])
    before = getattr(agent, attribute)
    with pytest.raises(AttributeError, match=f"Agent is immutable: cannot set {attribute!r}"):
        setattr(agent, attribute, before)
    with pytest.raises(AttributeError, match=f"Agent is immutable: cannot delete {attribute!r}"):
        delattr(agent, attribute)
    assert getattr(agent, attribute) is before


def test_agent_cannot_be_made_its_own_sub_agent() -> None:
    """The cycle the old mutable ``sub_agents`` allowed is refused, and no attribute is added."""
    agent = Agent("assistant", ScriptedModel())
    with pytest.raises(AttributeError):
        agent.sub_agents = (agent,)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        agent.extra = 1  # type: ignore[attr-defined]
    assert agent.sub_agents == ()


def test_agent_tables_are_read_only() -> None:
    """``tools`` and ``tool_is_async`` cannot be changed through the agent either."""
    agent = Agent("assistant", ScriptedModel(), tools=[add])
    with pytest.raises(TypeError):
        agent.tools["sneaky"] = agent  # type: ignore[index]
    with pytest.raises(TypeError):
        agent.tool_is_async["add"] = True  # type: ignore[index]
    assert agent.tool_is_async == {"add": False}


def _diamond_chain(depth: int) -> Agent:
    """``root`` over ``depth`` levels of two agents each, every one calling both of the next."""
    below: list[Agent] = []
    for level in range(depth, 0, -1):
        below = [Agent(f"{side}{level}", ScriptedModel(), sub_agents=below) for side in "ab"]
    return Agent("root", ScriptedModel(), sub_agents=below)


def test_walk_visits_shared_sub_agents_once() -> None:
    """A diamond chain of depth 16 (131,071 paths) walks its 33 agents once each, depth first."""
    names = [agent.name for agent in _diamond_chain(16).walk()]
    assert len(names) == 33
    expected = ["root", *(f"a{n}" for n in range(1, 17)), *(f"b{n}" for n in range(16, 0, -1))]
    assert names == expected


def test_walk_keeps_the_first_occurrence_depth_first() -> None:
    """An agent reachable twice is listed where the depth-first walk first meets it."""
    shared = Agent("shared", ScriptedModel())
    left = Agent("left", ScriptedModel(), sub_agents=[shared])
    right = Agent("right", ScriptedModel(), sub_agents=[shared])
    root = Agent("root", ScriptedModel(), sub_agents=[left, right, shared])
    assert [agent.name for agent in root.walk()] == ["root", "left", "shared", "right"]


def test_walk_does_not_recurse() -> None:
    """A chain of agents deeper than the recursion limit walks without ``RecursionError``."""
    depth = sys.getrecursionlimit() + 100
    agent = Agent("leaf", ScriptedModel())
    for level in range(depth):
        agent = Agent(f"level{level}", ScriptedModel(), sub_agents=[agent])
    assert sum(1 for _ in agent.walk()) == depth + 1


# -- what each refusal and error says -----------------------------------------------

RULE = "(^[A-Za-z0-9_-]{1,64}$)"


def duplicate_sub_agent() -> Agent:
    """An agent with a tool and a sub-agent both named ``researcher``."""
    researcher = Agent("researcher", ScriptedModel())
    tool = FunctionTool(add, name="researcher")
    return Agent("assistant", ScriptedModel(), tools=[tool], sub_agents=[researcher])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: Agent("assistant", "gpt"),  # type: ignore[call-overload]
            "agent 'assistant': a model needs a generate(request) method, got str 'gpt'",
        ),
        (
            lambda: Agent("assistant", ScriptedModel(), tools="add"),
            "agent 'assistant': tools must be a list or tuple of functions or tool objects, "
            "got str 'add'; wrap a single tool as [tool]",
        ),
        (
            lambda: Agent("assistant", ScriptedModel(), sub_agents="helper"),  # type: ignore[arg-type]
            "agent 'assistant': sub_agents must be a list or tuple of Agent instances, "
            "got str 'helper'; wrap a single agent as [agent]",
        ),
        (
            lambda: Agent("assistant", ScriptedModel(), sub_agents=["helper"]),  # type: ignore[list-item]
            "agent 'assistant': sub_agents must be Agent instances, got str 'helper'",
        ),
        (
            lambda: Agent("assistant", ScriptedModel(), tools=[add, FunctionTool(add)]),
            "agent 'assistant' has two tools (or sub-agents) named 'add'",
        ),
        (
            duplicate_sub_agent,
            "agent 'assistant' has two tools (or sub-agents) named 'researcher'",
        ),
    ],
    ids=["model", "tools", "sub-agents", "sub-agent", "tools-twice", "sub-agent-twice"],
)
def test_agent_refusals_name_the_agent_the_field_and_what_came(
    make: Callable[[], object], message: str
) -> None:
    """Each refusal of ``Agent(...)`` says whose field is wrong, what it takes and what came."""
    with pytest.raises((TypeError, ValueError)) as caught:
        make()
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: UnknownToolError("nope", ("add", "mul")),
            "the model called unknown tool 'nope'; the agent offers: add, mul",
        ),
        (
            lambda: UnknownToolError("nope", ()),
            "the model called unknown tool 'nope'; the agent offers: none",
        ),
        (
            lambda: ToolArgumentsError("add", {"a": 1}, "missing 'b'"),
            "bad arguments for tool 'add': missing 'b'; got {'a': 1}",
        ),
        (
            lambda: MaxStepsExceeded("assistant", 3),
            "agent 'assistant' did not finish within max_steps=3 model turns; "
            "raise Runner(max_steps=...) or check for a tool-call loop",
        ),
        (
            lambda: ScriptExhausted(2),
            "ScriptedModel has no answer for call 2: its script is used up and no rule "
            "matched (give it more items, rules or a default)",
        ),
        (
            lambda: SessionConflict("u", "s", expected=1, found=2),
            "session 's' of user 'u' was saved by another run (version 2) since this run "
            "loaded it (version 1); this run's turn was not saved",
        ),
    ],
    ids=["unknown-tool", "no-tools", "arguments", "max-steps", "script", "conflict"],
)
def test_runner_errors_say_what_happened_and_what_to_do(
    make: Callable[[], Exception], message: str
) -> None:
    """Each runner error's message names the thing, what was expected and what was got."""
    assert str(make()) == message


def test_a_tool_object_with_a_bad_name_is_refused_without_a_hint() -> None:
    """The message quotes the name and the rule, and ends there."""
    with pytest.raises(ValueError, match="is not a valid tool name") as caught:
        as_tool(Named("my tool!"))
    assert str(caught.value) == (
        "tool object's name 'my tool!' is not a valid tool name: model providers accept "
        f"1 to 64 ASCII letters, digits, '_' or '-' {RULE}"
    )


def test_function_tool_name_refusals_say_whose_name_it_is() -> None:
    """A function's own name ends with how to give another; a given name is named as such."""
    with pytest.raises(ValueError, match="is not a valid tool name") as from_function:
        FunctionTool(lambda x: x)
    assert str(from_function.value).startswith("function '<lambda>' is not a valid tool name: ")
    assert str(from_function.value).endswith(f"{RULE}; give it one: FunctionTool(fn, name=...)")
    with pytest.raises(ValueError, match="is not a valid tool name") as given:
        FunctionTool(add, name="my tool!")
    assert str(given.value).startswith("FunctionTool name 'my tool!' is not a valid tool name: ")
    assert str(given.value).endswith(RULE)


def test_as_tool_says_what_a_tool_is_and_what_came() -> None:
    """The refusal describes a tool and names the type and value given."""
    with pytest.raises(TypeError) as caught:
        as_tool(42)
    assert str(caught.value) == (
        "a tool is a function or an object with a str `name` and a `run(args)` method, got int 42"
    )


def test_function_tool_checks_every_typed_argument_whatever_comes_first() -> None:
    """An untyped argument listed first does not end the checks of the typed ones after it."""

    def note(text, count: int) -> str:  # type: ignore[no-untyped-def]  # text is untyped on purpose
        """Repeat ``text``."""
        return str(text) * count

    tool = FunctionTool(note)
    with pytest.raises(ToolArgumentsError, match="'count' must be integer, got str"):
        tool.run({"text": "x", "count": "3"})


def test_function_tool_schema_keeps_keyword_only_parameters_after_star_args() -> None:
    """Parameters after ``*args`` are keywords the model can give: they are in the schema."""

    def tagged(*tags: str, limit: int) -> str:
        """Join ``tags``."""
        return ",".join(tags[:limit])

    assert FunctionTool(tagged).parameters == {
        "type": "object",
        "properties": {"limit": {"type": "integer"}},
        "required": ["limit"],
        "additionalProperties": False,
    }


def test_function_tool_description_is_the_first_of_several_paragraphs() -> None:
    """Only the first paragraph describes the tool, however many follow."""

    def documented() -> None:
        """Summary.

        Details.

        More details.
        """

    assert FunctionTool(documented).description == "Summary."


def test_retry_policy_jitter_of_one_is_allowed() -> None:
    """A jitter of exactly 1 (waits between 0 and twice the backoff) is a fraction too."""
    assert RetryPolicy(jitter=1.0).jitter == 1.0


# -- the shared checks (mutation-test hardening) ------------------------------------------


def test_an_id_that_is_no_str_is_a_type_error_and_an_empty_one_a_value_error() -> None:
    """``check_id`` tells a wrong type from a wrong value."""
    with pytest.raises(TypeError, match=r"^run_id must be a non-empty str, got int 3$"):
        check_id("run_id", 3)
    with pytest.raises(ValueError, match=r"^run_id must be a non-empty str, got str ''$"):
        check_id("run_id", "")


def test_a_message_that_is_no_str_or_message_is_named_by_its_type() -> None:
    """``as_message`` refuses anything else, naming what it got."""
    with pytest.raises(TypeError, match=r"^a run takes a str or a Message, got int$"):
        as_message(3)  # type: ignore[arg-type]


def test_a_sync_call_inside_a_loop_names_the_runner_by_default() -> None:
    """Inside a running loop the refusal names ``Runner`` unless told another owner."""

    async def inside() -> None:
        refuse_inside_loop("run", "arun")

    expected = "Runner.run() was called inside a running event loop; use await runner.arun()"
    with pytest.raises(RuntimeError, match=f"^{re.escape(expected)}$"):
        asyncio.run(inside())
