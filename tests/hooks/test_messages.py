"""Tests for the vocabulary records and contexts: fields checked when a record is built."""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import pytest

from hooks import (
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    OutputSpec,
    ToolCall,
    ToolContext,
    ToolResult,
    Usage,
)

CALL = ToolCall("c1", "add", {"a": 1})

# The records as callers without a type checker see them: anything may be passed.
UntypedResponse: Any = ModelResponse
UntypedCall: Any = ToolCall
UntypedResult: Any = ToolResult
UntypedMessage: Any = Message
UntypedUsage: Any = Usage
UntypedSpec: Any = OutputSpec


class Text(str):
    """A str subclass: still a str."""


@pytest.mark.parametrize(
    ("build", "field", "expected", "got"),
    [
        (lambda: UntypedResponse(text=3), "ModelResponse.text", "a str", "int 3"),
        (lambda: UntypedResponse(text=None), "ModelResponse.text", "a str", "NoneType None"),
        (lambda: UntypedResponse(tool_calls=[CALL]), "ModelResponse.tool_calls", "a tuple", "list"),
        (
            lambda: UntypedResponse(tool_calls=None),
            "ModelResponse.tool_calls",
            "a tuple",
            "NoneType",
        ),
        (
            lambda: UntypedResponse(tool_calls=("c1",)),
            "ModelResponse.tool_calls",
            "ToolCall",
            "str",
        ),
        (lambda: UntypedCall(1, "add"), "ToolCall.id", "a str", "int 1"),
        (lambda: UntypedCall("c1", None), "ToolCall.name", "a str", "NoneType"),
        (lambda: UntypedCall("c1", "add", [("a", 1)]), "ToolCall.args", "a mapping", "list"),
        (lambda: UntypedCall("c1", "add", "a=1"), "ToolCall.args", "a mapping", "str 'a=1'"),
        (lambda: UntypedResult(42), "ToolResult.content", "a str", "int 42"),
        (lambda: UntypedResult("ok", is_error="no"), "ToolResult.is_error", "a bool", "str 'no'"),
        (lambda: UntypedResult("ok", is_error=1), "ToolResult.is_error", "a bool", "int 1"),
        (
            lambda: UntypedResult("ok", structured=[1]),
            "ToolResult.structured",
            "a mapping (a JSON object) or None",
            "list [1]",
        ),
        (lambda: UntypedMessage("robot", "hi"), "Message.role", "one of 'system'", "str 'robot'"),
        (lambda: UntypedMessage("user", b"hi"), "Message.content", "a str", "bytes"),
        (
            lambda: UntypedMessage("tool", "ok", tool_call_id=7),
            "Message.tool_call_id",
            "a str",
            "int",
        ),
        (lambda: UntypedMessage("user", "hi", name=1.5), "Message.name", "a str or None", "float"),
        (
            lambda: UntypedMessage("assistant", "", tool_calls=[CALL]),
            "Message.tool_calls",
            "tuple",
            "list",
        ),
        (lambda: UntypedSpec("", {}), "OutputSpec.name", "a non-empty str", "str ''"),
        (lambda: UntypedSpec(None, {}), "OutputSpec.name", "a non-empty str", "NoneType"),
        (lambda: UntypedSpec("x", "{}"), "OutputSpec.schema", "a JSON schema", "str '{}'"),
        (lambda: UntypedSpec("x", {}, strict=1), "OutputSpec.strict", "a bool", "int 1"),
        (lambda: UntypedSpec("x", {}, description=None), "OutputSpec.description", "a str", "None"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_field_of_the_wrong_type_is_refused(
    build: Any, field: str, expected: str, got: str
) -> None:
    """Building a record with a wrong field raises TypeError naming the field, what it must be
    and what it got."""
    with pytest.raises(TypeError) as excinfo:
        build()
    message = str(excinfo.value)
    assert message.startswith(f"{field} must be ")
    assert expected in message
    assert f"got {got}" in message


def test_duplicate_tool_call_ids_in_one_response_are_refused() -> None:
    """A response holding two calls with one id raises ValueError naming the id."""
    calls = (ToolCall("c1", "add"), ToolCall("c2", "sub"), ToolCall("c1", "mul"))
    with pytest.raises(ValueError, match="two calls with id 'c1'"):
        ModelResponse("", calls)


def test_records_of_the_right_types_build() -> None:
    """Well-typed records build, with str subclasses, any mapping and falsy values."""
    args = types.MappingProxyType({"a": 1})
    call = ToolCall(Text("c1"), "add", args)
    assert call.args is args
    response = ModelResponse(Text("hi"), (call, ToolCall("c2", "add")))
    assert response.tool_calls[0] is call
    assert ModelResponse() == ModelResponse("", ())
    assert ToolResult("", is_error=True).is_error
    message = Message("assistant", "", tool_calls=(call,), name=None, tool_call_id=None)
    assert message.tool_calls == (call,)
    assert hash(ModelResponse("hi")) == hash(ModelResponse(Text("hi")))


@pytest.mark.parametrize("role", ["system", "user", "assistant", "tool"])
def test_every_role_is_accepted(role: Any) -> None:
    """The four roles build messages."""
    assert Message(role, "x").role == role


def test_replace_checks_the_new_fields_too() -> None:
    """``dataclasses.replace`` builds a new record, so a wrong field is refused there too."""
    not_text: Any = None
    with pytest.raises(TypeError, match=r"ToolResult\.content must be a str"):
        dataclasses.replace(ToolResult("ok"), content=not_text)


def test_contexts_carry_the_retry_budget() -> None:
    """Model and tool contexts take ``attempt`` then ``max_attempts``, both 1 by default."""
    invocation = Invocation("inv", "agent", "agent")
    model = ModelContext(invocation, ModelRequest(()))
    tool = ToolContext(invocation, CALL, 2, 3)
    assert (model.attempt, model.max_attempts) == (1, 1)
    assert (tool.attempt, tool.max_attempts) == (2, 3)
    assert [f.name for f in dataclasses.fields(ModelContext)] == [
        "invocation",
        "request",
        "attempt",
        "max_attempts",
        "call_state",
    ]
    assert [f.name for f in dataclasses.fields(ToolContext)] == [
        "invocation",
        "call",
        "attempt",
        "max_attempts",
        "decision",
        "call_state",
    ]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: UntypedCall(1, "add"), "ToolCall.id must be a str, got int 1"),
        (lambda: UntypedCall("c1", 5), "ToolCall.name must be a str, got int 5"),
        (
            lambda: UntypedCall("c1", "add", "a=1"),
            "ToolCall.args must be a mapping of argument names to values, got str 'a=1'",
        ),
        (
            lambda: UntypedMessage("robot", "hi"),
            "Message.role must be one of 'system', 'user', 'assistant', 'tool', got str 'robot'",
        ),
        (lambda: UntypedMessage("user", 1), "Message.content must be a str, got int 1"),
        (
            lambda: UntypedMessage("tool", "ok", tool_call_id=7),
            "Message.tool_call_id must be a str or None, got int 7",
        ),
        (
            lambda: UntypedMessage("user", "hi", name=1.5),
            "Message.name must be a str or None, got float 1.5",
        ),
        (
            lambda: UntypedMessage("tool", "ok", is_error=1),
            "Message.is_error must be a bool, got int 1",
        ),
        (
            lambda: UntypedMessage("assistant", "", tool_calls=[]),
            "Message.tool_calls must be a tuple of ToolCall (write tuple(calls)), got list []",
        ),
        (
            lambda: UntypedMessage("assistant", "", tool_calls=("c1",)),
            "Message.tool_calls must be a tuple of ToolCall, holding, got str 'c1'",
        ),
        (lambda: UntypedResponse(text=3), "ModelResponse.text must be a str, got int 3"),
        (
            lambda: UntypedResponse(tool_calls=[]),
            "ModelResponse.tool_calls must be a tuple of ToolCall (write tuple(calls)), "
            "got list []",
        ),
        (
            lambda: UntypedResponse(usage=3),
            "ModelResponse.usage must be a Usage or None, got int 3",
        ),
        (
            lambda: UntypedResponse(finish_reason=1),
            "ModelResponse.finish_reason must be a str or None, got int 1",
        ),
        (
            lambda: UntypedResponse(model=4),
            "ModelResponse.model must be a str or None, got int 4",
        ),
        (
            lambda: UntypedUsage(output_tokens=-1),
            "Usage.output_tokens must be an int >= 0, got int -1",
        ),
        (lambda: UntypedResult(42), "ToolResult.content must be a str, got int 42"),
        (
            lambda: UntypedResult("ok", is_error=1),
            "ToolResult.is_error must be a bool, got int 1",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_refused_field_is_named_with_what_it_must_be_and_got(build: Any, message: str) -> None:
    """The TypeError reads ``<Record>.<field> must be <what>, got <type> <value>``, in full."""
    with pytest.raises(TypeError) as excinfo:
        build()
    assert str(excinfo.value) == message


def test_only_a_tool_message_marks_its_result_an_error() -> None:
    """``is_error`` is a tool result's flag: another role setting it is a ValueError."""
    assert Message("tool", "boom", tool_call_id="c1", is_error=True).is_error
    assert not Message("tool", "ok", tool_call_id="c1").is_error
    with pytest.raises(ValueError, match="a user message cannot set it"):
        Message("user", "hi", is_error=True)


def test_the_duplicate_id_error_names_the_record_and_the_rule() -> None:
    """The ValueError for a repeated call id names the response's field and the rule."""
    with pytest.raises(ValueError, match="two calls") as excinfo:
        ModelResponse("", (ToolCall("c1", "add"), ToolCall("c1", "mul")))
    assert str(excinfo.value) == (
        "ModelResponse.tool_calls holds two calls with id 'c1'; "
        "each tool call of one response needs its own id"
    )


def test_a_message_may_repeat_a_call_id() -> None:
    """Only a response's calls need distinct ids: a message of the history may repeat one."""
    calls = (ToolCall("c1", "add"), ToolCall("c1", "mul"))
    assert Message("assistant", "", tool_calls=calls).tool_calls == calls


def test_subclasses_of_tool_call_are_tool_calls() -> None:
    """A ``ToolCall`` subclass's instances are accepted wherever a tool call is."""

    class TracedCall(ToolCall):
        """A tool call subclass."""

    call = TracedCall("c1", "add")
    assert ModelResponse("", (call,)).tool_calls == (call,)
    assert Message("assistant", "", tool_calls=(call,)).tool_calls == (call,)


def test_a_tool_results_structured_content_is_compared_but_not_hashed() -> None:
    """``structured`` (a dict) tells results apart, and leaves them hashable."""
    result = ToolResult("5", structured={"result": 5})
    assert result != ToolResult("5")
    assert result == ToolResult("5", structured={"result": 5})
    assert hash(result) == hash(ToolResult("5"))
