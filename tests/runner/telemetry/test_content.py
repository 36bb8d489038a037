"""Telemetry: message content -- off by default, opt-in, in the GenAI conventions' JSON."""

from __future__ import annotations

import datetime
import json

import pytest

from runner import Agent, Message, ModelResponse, ScriptedModel, ToolCall, Usage
from runner._telemetry.genai import (
    CAPTURE_ENV,
    input_messages,
    model_of,
    output_messages,
    system_instructions,
    tool_arguments,
    tool_result,
    usage_attributes,
)
from runner._tools.arguments import UnparsedArguments
from tests.helpers.runs import Mode, add, calling
from tests.helpers.spans import Traced, attributes, loaded

CONTENT = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}
ADD = ToolCall("c1", "add", {"a": 2, "b": 3})


def calculator() -> Agent:
    """An agent with an instruction and the ``add`` tool that calls it once, then answers."""
    model = ScriptedModel([calling(ADD), ModelResponse("It is 5.", finish_reason="stop")])
    return Agent("calculator", model, tools=[add], instruction="Add numbers.")


def content_keys(traced: Traced) -> set[str]:
    """The content attributes found on any span."""
    return {key for span in traced.spans() for key in attributes(span) if key in CONTENT}


@pytest.fixture(autouse=True)
def no_capture_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the content switch set in its environment."""
    monkeypatch.delenv(CAPTURE_ENV, raising=False)


def test_content_is_left_out_by_default(traced: Traced, mode: Mode) -> None:
    """No prompt, answer, instruction, argument or result on any span."""
    traced.run(calculator(), mode, message="what is 2 + 3?")
    assert len(traced.spans()) == 4
    assert content_keys(traced) == set()
    everything = json.dumps([dict(span.attributes or {}) for span in traced.spans()])
    assert "2 + 3" not in everything
    assert "Add numbers." not in everything  # the instruction, standing in for a description


def test_a_description_given_is_no_content(traced: Traced, mode: Mode) -> None:
    """An agent's own description is metadata: on its span whatever the content switch."""
    agent = Agent("helper", ScriptedModel(default="ok"), description="Answers questions.")
    traced.run(agent, mode)
    described = attributes(traced.one("invoke_agent helper"))["gen_ai.agent.description"]
    assert described == "Answers questions."


def test_capture_content_puts_it_on_every_span(traced: Traced, mode: Mode) -> None:
    """capture_content=True: the agent's input, instruction and answer, each model call's
    messages and answer, the tool call's arguments and result."""
    traced.run(calculator(), mode, message="what is 2 + 3?", capture_content=True)
    agent = traced.one("invoke_agent calculator")
    assert loaded(agent, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "what is 2 + 3?"}]}
    ]
    assert loaded(agent, "gen_ai.system_instructions") == [
        {"type": "text", "content": "Add numbers."}
    ]
    assert loaded(agent, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "It is 5."}],
            "finish_reason": "stop",
        }
    ]
    first, second = traced.named("chat scripted")
    assert [m["role"] for m in loaded(first, "gen_ai.input.messages")] == ["system", "user"]
    assert loaded(first, "gen_ai.output.messages")[0]["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}
    ]
    assert loaded(second, "gen_ai.input.messages")[-1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "c1", "response": "5"}],
    }
    tool = traced.one("execute_tool add")
    assert loaded(tool, "gen_ai.tool.call.arguments") == {"a": 2, "b": 3}
    assert loaded(tool, "gen_ai.tool.call.result") == 5


@pytest.mark.parametrize("value", ["true", "TRUE", "span_only", "SPAN_AND_EVENT"])
def test_the_standard_environment_variable_opts_in(
    traced: Traced, mode: Mode, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT asks for content when the runner
    is made without capture_content."""
    monkeypatch.setenv(CAPTURE_ENV, value)
    traced.run(calculator(), mode)
    assert content_keys(traced) == CONTENT


@pytest.mark.parametrize("value", ["false", "no_content", "", "event_only"])
def test_other_values_of_the_variable_leave_content_out(
    traced: Traced, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """Off, unset or events only (hookline records content on spans only): no content."""
    monkeypatch.setenv(CAPTURE_ENV, value)
    traced.run(calculator(), "sync")
    assert content_keys(traced) == set()


def test_capture_content_false_overrules_the_variable(
    traced: Traced, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An explicit capture_content=False wins over the environment."""
    monkeypatch.setenv(CAPTURE_ENV, "true")
    traced.run(calculator(), "sync", capture_content=False)
    assert content_keys(traced) == set()


def test_input_messages_follow_the_conventions_schema() -> None:
    """Text parts, tool calls with their arguments, tool results answering their call."""
    messages = (
        Message("system", "Be brief."),
        Message("assistant", "Let me add.", tool_calls=(ADD,)),
        Message("tool", "5", tool_call_id="c1", name="add"),
    )
    assert json.loads(input_messages(messages)) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Let me add."},
                {"type": "tool_call", "id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}},
            ],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "5"}]},
    ]


def test_an_answer_without_a_finish_reason_gets_the_one_it_implies() -> None:
    """Output messages need a finish reason: tool calls imply "tool_call", text "stop"."""
    assert json.loads(output_messages(calling(ADD)))[0]["finish_reason"] == "tool_call"
    assert json.loads(output_messages(ModelResponse("x")))[0]["finish_reason"] == "stop"
    reason = json.loads(output_messages(ModelResponse("x", finish_reason="length")))[0]
    assert reason["finish_reason"] == "length"


def test_unparsed_arguments_are_recorded_as_the_model_sent_them() -> None:
    """Arguments that were no JSON object show as the text the model wrote."""
    call = ToolCall("c1", "add", UnparsedArguments("{a: 2", "arguments are not valid JSON"))
    assert json.loads(tool_arguments(call)) == "{a: 2"
    (message,) = json.loads(input_messages((Message("assistant", "", tool_calls=(call,)),)))
    assert message["parts"] == [
        {"type": "tool_call", "id": "c1", "name": "add", "arguments": "{a: 2"}
    ]


def test_a_tool_result_is_json_when_it_is_json_else_a_string() -> None:
    """A JSON result stays as it is; plain text becomes a JSON string."""
    assert tool_result('{"t": 18}') == '{"t": 18}'
    assert json.loads(tool_result("sunny, 18°C")) == "sunny, 18°C"
    assert json.loads(system_instructions("Be brief.")) == [
        {"type": "text", "content": "Be brief."}
    ]


def test_usage_attributes_leave_out_parts_nobody_reported() -> None:
    """Input and output always; cached and reasoning tokens only when there are some."""
    assert usage_attributes(Usage(10, 2)) == {
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 2,
    }


class Plain:
    """A model that says nothing about itself."""

    def generate(self, request: object, /) -> ModelResponse:
        """Answer."""
        return ModelResponse("hi")


class Named:
    """A model that names itself and its provider."""

    provider = "acme"
    model = "acme-large"


def test_a_model_is_named_by_its_attributes_else_by_its_class() -> None:
    """provider and model attributes when given, else the class's package and name."""
    assert model_of(Named()) == ("acme", "acme-large")
    assert model_of(Plain()) == ("tests", "Plain")
    assert model_of(ScriptedModel()) == ("hookline", "scripted")


class Unnamed:
    """A model whose provider and model attributes name nothing."""

    def __init__(self, provider: object, model: object) -> None:
        self.provider = provider
        self.model = model


@pytest.mark.parametrize(
    ("provider", "name"), [("", ""), (None, None), (3, ["large"]), ("acme", 0)]
)
def test_a_model_naming_nothing_is_named_by_its_class(provider: object, name: object) -> None:
    """An empty or non-string provider or model attribute falls back to the class's package
    and name, each on its own."""
    expected_provider = provider if provider == "acme" else "tests"
    assert model_of(Unnamed(provider, name)) == (expected_provider, "Unnamed")


def test_content_keeps_text_readable_as_written() -> None:
    """Non-ASCII text is written as itself, not as JSON escapes, so a trace viewer shows it."""
    assert tool_result("sunny, 18°C") == '"sunny, 18°C"'
    assert system_instructions("Réponds en français.") == (
        '[{"type": "text", "content": "Réponds en français."}]'
    )
    call = ToolCall("c1", "weather", {"city": "Zürich"})
    assert tool_arguments(call) == '{"city": "Zürich"}'
    assert "Zürich" in input_messages((Message("user", "Zürich?"),))


def test_arguments_that_are_no_json_are_written_as_text() -> None:
    """A value JSON cannot hold (a hook put it there) is written as its ``str``, not refused."""
    when = datetime.date(2026, 1, 2)
    call = ToolCall("c1", "book", {"on": when, "seats": 2})
    assert json.loads(tool_arguments(call)) == {"on": "2026-01-02", "seats": 2}
    (message,) = json.loads(input_messages((Message("assistant", "", tool_calls=(call,)),)))
    assert message["parts"][0]["arguments"] == {"on": "2026-01-02", "seats": 2}


def test_capture_content_with_non_ascii_and_non_json_arguments(traced: Traced, mode: Mode) -> None:
    """In a run too: the tool span's arguments keep their text and stringify what JSON
    cannot hold."""

    def book(on: object, city: str) -> str:
        """Book a trip."""
        return f"booked {city}"

    call = ToolCall("c1", "book", {"on": datetime.date(2026, 1, 2), "city": "Zürich"})
    agent = Agent("agent", ScriptedModel([calling(call), "done"]), tools=[book])
    traced.run(agent, mode, capture_content=True)
    arguments = attributes(traced.one("execute_tool book"))["gen_ai.tool.call.arguments"]
    assert arguments == '{"on": "2026-01-02", "city": "Zürich"}'
