"""Tool arguments as JSON text: parsed once; what is no JSON object fails the call, typed.

``runner._tools.arguments``: ``parse_arguments`` and ``UnparsedArguments``, and what the
runner does with a call that carries one (any model may send it; the OpenAI adapter
does for malformed arguments).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from hooks import Failure, Retry
from runner import (
    Agent,
    ErrorEvent,
    FunctionTool,
    ModelRequest,
    Runner,
    RunResult,
    ScriptedModel,
    ToolArgumentsError,
    ToolCall,
    ToolContext,
)
from runner._tools.arguments import UnparsedArguments, parse_arguments
from tests.helpers.runs import Mode, add, calling, drive, events_of, tool_messages

BAD = UnparsedArguments('{"a": 2, "b": ', "arguments are not valid JSON: Expecting value")


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ('{"a": 1, "b": [2, "x"]}', {"a": 1, "b": [2, "x"]}),
        ("{}", {}),
        ("", {}),
        ("  \n", {}),
    ],
)
def test_a_json_object_or_nothing_parses(text: str, args: dict[str, Any]) -> None:
    """An object is a dict of its members; empty or blank text is no arguments."""
    assert parse_arguments(text) == args
    assert type(parse_arguments(text)) is dict


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": 1', "arguments are not valid JSON: Expecting ',' delimiter"),
        ("a=1", "arguments are not valid JSON: Expecting value"),
        ("[1, 2]", "arguments must be a JSON object, got an array"),
        ('"a"', "arguments must be a JSON object, got a string"),
        ("3", "arguments must be a JSON object, got a number"),
        ("2.5", "arguments must be a JSON object, got a number"),
        ("true", "arguments must be a JSON object, got a boolean"),
        ("null", "arguments must be a JSON object, got null"),
    ],
)
def test_anything_else_is_unparsed_with_its_problem(text: str, problem: str) -> None:
    """Text that is no JSON object is kept, with what is wrong with it."""
    args = parse_arguments(text)
    assert isinstance(args, UnparsedArguments)
    assert args.raw == text
    assert args.problem.startswith(problem)


def test_unparsed_arguments_are_an_empty_mapping_equal_only_to_their_like() -> None:
    """Empty as a mapping, equal and hashed by text and problem, never equal to ``{}``."""
    assert (len(BAD), list(BAD), dict(BAD), BAD.get("a")) == (0, [], {}, None)
    with pytest.raises(KeyError):
        BAD["a"]
    same = UnparsedArguments(BAD.raw, BAD.problem)
    assert same == BAD
    assert hash(same) == hash(BAD)
    assert BAD != {}
    assert UnparsedArguments(BAD.raw, "other") != BAD
    assert repr(BAD) == f"UnparsedArguments({BAD.raw!r}, {BAD.problem!r})"
    assert ToolCall("c", "add", BAD) != ToolCall("c", "add", {})


class Recorder:
    """``on_tool_error``: keeps each error, recovers nothing (or repairs the call)."""

    def __init__(self, repair: dict[str, Any] | None = None) -> None:
        self.errors: list[Exception] = []
        self.repair = repair

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> Failure[Exception] | Retry[ToolContext]:
        """Record; with ``repair``, retry the call with those arguments."""
        self.errors.append(failure.failure())
        if self.repair is not None and isinstance(ctx.call.args, UnparsedArguments):
            return Retry(replace(ctx, call=replace(ctx.call, args=self.repair)))
        return failure


def bad_call_run(mode: Mode, recorder: Recorder, **agent: Any) -> tuple[RunResult, ScriptedModel]:
    """One run whose model calls ``add`` with ``BAD`` arguments, then answers ``done``."""
    model = ScriptedModel([calling(ToolCall("c1", "add", BAD)), "done"])
    runner = Runner(Agent("calc", model, **agent))
    return drive(runner, mode, "add 2 and", callbacks=[recorder]), model


def test_unparsed_arguments_reach_on_tool_error_and_the_model_is_told(mode: Mode) -> None:
    """The tool never runs: ``on_tool_error`` gets ``ToolArgumentsError``, the model its text."""
    ran: list[dict[str, int]] = []

    def counted_add(a: int, b: int) -> int:
        """Add, and note the call."""
        ran.append({"a": a, "b": b})
        return a + b

    recorder = Recorder()
    result, model = bad_call_run(mode, recorder, tools=[FunctionTool(counted_add, name="add")])
    assert result.output == "done"
    assert ran == []
    (error,) = recorder.errors
    assert isinstance(error, ToolArgumentsError)
    assert (error.name, error.args_given, error.problem) == ("add", BAD.raw, BAD.problem)
    (told,) = tool_messages(model.requests[1])
    assert told.content == f"ToolArgumentsError: {error}"
    assert told.content.startswith(
        "ToolArgumentsError: bad arguments for tool 'add': arguments are not valid JSON"
    )
    assert [type(event.error) for event in events_of(result, ErrorEvent)] == [ToolArgumentsError]


def test_a_repaired_call_runs(mode: Mode) -> None:
    """An error hook that replaces the arguments retries with them: the marker goes with them."""
    recorder = Recorder({"a": 2, "b": 3})
    _, model = bad_call_run(mode, recorder, tools=[add])
    assert len(recorder.errors) == 1
    (told,) = tool_messages(model.requests[1])
    assert told.content == "5"


def test_a_sub_agent_call_is_checked_and_repaired_alike(mode: Mode) -> None:
    """A sub-agent's call with unparsed arguments fails the same way, and a repair runs it."""
    recorder = Recorder({"request": "hi"})
    helper = Agent("add", ScriptedModel(["from the sub-agent"]))
    _, model = bad_call_run(mode, recorder, sub_agents=[helper])
    (error,) = recorder.errors
    assert isinstance(error, ToolArgumentsError)
    assert error.problem == BAD.problem
    (told,) = tool_messages(model.requests[1])
    assert told.content == "from the sub-agent"


def test_an_unknown_tool_is_reported_before_its_arguments(mode: Mode) -> None:
    """A call to a tool nobody offers says so, whatever its arguments were."""
    model = ScriptedModel([calling(ToolCall("c1", "nope", BAD)), "ok"])
    drive(Runner(Agent("a", model, tools=[add])), mode, "hi")
    (told,) = tool_messages(model.requests[1])
    assert told.content.startswith("UnknownToolError")


def test_tool_results_keep_the_call_as_the_model_sent_it(mode: Mode) -> None:
    """The transcript keeps the call with its unparsed arguments, for hooks and sessions."""
    recorder = Recorder()
    _, model = bad_call_run(mode, recorder, tools=[add])
    request: ModelRequest = model.requests[1]
    assistant = request.messages[-2]
    assert assistant.tool_calls == (ToolCall("c1", "add", BAD),)
    assert tool_messages(request)[0].tool_call_id == "c1"
