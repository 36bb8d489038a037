"""The LangChain conversions on their own: decisions, message roles, tool specs and tool
answers, with the hostile inputs a graph or a hook may hand them."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.types import Command

from hooks import (
    Invocation,
    Message,
    ModelResponse,
    ReasoningPart,
    Reject,
    ToolCall,
    ToolContext,
    ToolSpec,
)
from runner.adapters.langchain._convert import (
    ai_message,
    decided,
    from_hookline,
    spec_of,
    to_hookline,
    tool_result,
)


def tool_ctx() -> ToolContext:
    return ToolContext(Invocation("run", "user", "agent"), ToolCall("c1", "add", {"a": 1}))


@pytest.mark.parametrize(
    "value",
    [
        {"decision": "reject", "message": 7},
        {"decision": "reject"},
        {"decision": "edit", "args": "not a mapping"},
        {"decision": "maybe"},
        "approve",
    ],
)
def test_a_malformed_resume_value_is_refused_naming_it(value: object) -> None:
    """A resume value that is no whole decision (a reject without a text message, an edit
    without a mapping, an unknown kind) raises, quoting what came."""
    with pytest.raises(TypeError, match=r"resumes with Command\(resume=resume_value"):
        decided(tool_ctx(), value)


def test_a_reject_with_a_message_is_decided() -> None:
    """A well formed reject reaches the context as ``Reject(message)``; the call stays."""
    ctx = tool_ctx()
    out = decided(ctx, {"decision": "reject", "message": "no"})
    assert out.decision == Reject("no")
    assert out.call == ctx.call


def test_an_unknown_message_class_is_refused_not_dropped() -> None:
    """A message of a class hooks cannot see (a ``ChatMessage`` of a custom role) raises
    naming its class."""
    with pytest.raises(TypeError, match="cannot see a ChatMessage; refusing"):
        to_hookline(ChatMessage(content="hi", role="critic"))


def test_a_second_system_message_stays_in_place() -> None:
    """Only a leading system message becomes the request's system message; a later one
    stays among the messages, where it was."""
    system, out = from_hookline(
        [
            Message("system", "first"),
            Message("user", "hi"),
            Message("system", "later"),
        ]
    )
    assert system == SystemMessage("first")
    assert [type(m) for m in out] == [HumanMessage, SystemMessage]
    assert out[1].content == "later"


def test_a_system_message_after_another_message_is_not_the_system_message() -> None:
    """A system message that comes after a user message is not lifted out of place."""
    system, out = from_hookline([Message("user", "hi"), Message("system", "late")])
    assert system is None
    assert [m.content for m in out] == ["hi", "late"]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"name": "search", "description": "finds"}, ToolSpec("search", "finds")),
        ({"name": "", "description": 3}, ToolSpec("tool", "3")),
        ({}, ToolSpec("tool", "")),
    ],
)
def test_a_dict_tool_is_read_as_its_schema(schema: dict[str, object], expected: ToolSpec) -> None:
    """A tool given as a dict: its name and description as text, ``"tool"`` where it has
    no name."""
    assert spec_of(schema) == expected


def test_an_object_tool_is_read_by_its_attributes() -> None:
    """A tool object: its ``name`` and ``description``; one without them is ``"tool"``."""

    class Named:
        name = "lookup"
        description = "looks up"

    assert spec_of(Named()) == ToolSpec("lookup", "looks up")
    assert spec_of(object()) == ToolSpec("tool", "")


def test_a_response_with_reasoning_parts_cannot_go_to_langchain() -> None:
    """A hook's response carrying reasoning is refused rather than sent without it."""
    response = ModelResponse(
        text="ok", parts=(ReasoningPart(provider="openai", payload="{}", summary="s"),)
    )
    with pytest.raises(TypeError, match="response with reasoning parts cannot go to LangChain"):
        ai_message(response)


def test_a_response_becomes_an_ai_message_with_its_calls() -> None:
    """Text and tool calls map one to one."""
    message = ai_message(ModelResponse(text="t", tool_calls=(ToolCall("c1", "f", {"a": 1}),)))
    assert message.content == "t"
    assert [(c["id"], c["name"], c["args"]) for c in message.tool_calls] == [("c1", "f", {"a": 1})]


def test_a_tool_answering_with_a_command_is_refused_naming_it() -> None:
    """A tool that answers with a ``Command`` (not a ``ToolMessage``) cannot pass through
    tool hooks; the error quotes the answer."""
    answer: Any = Command(goto="elsewhere")
    with pytest.raises(TypeError, match=r"take a ToolMessage per call; the tool answered Command"):
        tool_result(answer)


def test_an_error_tool_message_is_an_error_result() -> None:
    """A ``ToolMessage`` with status error is a result marked as an error."""
    result = tool_result(ToolMessage("boom", tool_call_id="c1", status="error"))
    assert (result.content, result.is_error) == ("boom", True)
