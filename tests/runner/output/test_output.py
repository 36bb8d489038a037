"""Tests of an agent's typed answer: ``output_type``, ``on_output_error`` and ``after_output``."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from hooks import Failure, Fallback, Outcome, Pause, Result, Retry, Success
from runner import (
    Agent,
    AgentContext,
    Approve,
    BeforeResult,
    ErrorEvent,
    ErrorResult,
    FallbackEvent,
    Halt,
    ModelRequest,
    ModelResponse,
    OutputContext,
    OutputValidationError,
    RetryEvent,
    RetryPolicy,
    RunFinishedEvent,
    Runner,
    RunResult,
    ScriptedModel,
    StopRun,
    ToolCall,
    ToolContext,
)
from tests.helpers.runs import Mode


class Invoice(pydantic.BaseModel):
    """An invoice read from a document."""

    number: str
    total: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Pair(TypedDict):
    left: str
    right: int


def final(args: dict[str, Any], call_id: str = "f1") -> ModelResponse:
    """A model answer calling the final-result tool with ``args``."""
    return ModelResponse(tool_calls=(ToolCall(call_id, "final_result", args),))


def go(runner: Runner[Any, Any], mode: Mode, message: str, **kwargs: Any) -> RunResult[Any]:
    """One run, through ``run`` or ``arun``."""
    if mode == "sync":
        return runner.run(message, **kwargs)
    return asyncio.run(runner.arun(message, **kwargs))


class Native:
    """A model answering natively in the shape asked (``native_output``), from a script."""

    native_output = True

    def __init__(self, *answers: str) -> None:
        self.inner = ScriptedModel(list(answers))
        self.requests: list[ModelRequest] = []

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Keep the request, answer from the script."""
        self.requests.append(request)
        return self.inner.generate(request)


def test_a_valid_final_result_call_is_the_typed_output(mode: Mode) -> None:
    """The final-result tool's arguments, validated, are ``result.output``, an ``Invoice``."""
    model = ScriptedModel([final({"number": "A-1", "total": 12.5})])
    result = go(Runner(Agent("clerk", model, output_type=Invoice)), mode, "bill")
    assert result.output == Invoice(number="A-1", total=12.5)
    assert result.status == "completed"
    assert result.response is not None
    assert result.response.text == '{"number":"A-1","total":12.5}'


def test_the_final_result_tool_is_offered_beside_the_agent_s_tools() -> None:
    """A model without native output gets the schema as a ``final_result`` tool, last."""

    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    model = ScriptedModel([final({"number": "A-1", "total": 1.0})])
    Runner(Agent("clerk", model, tools=[lookup], output_type=Invoice)).run("bill")
    request = model.requests[0]
    assert [spec.name for spec in request.tools] == ["lookup", "final_result"]
    assert request.output is None
    schema = request.tools[1].parameters
    assert schema["required"] == ["number", "total"]
    assert schema["additionalProperties"] is False


def test_an_invalid_answer_is_retried_with_its_errors_as_feedback(mode: Mode) -> None:
    """The model is told what did not fit; the retry is an event, and the second answer counts."""
    model = ScriptedModel(
        [final({"number": 7, "total": "x"}), final({"number": "A-1", "total": 3}, "f2")]
    )
    result = go(Runner(Agent("clerk", model, output_type=Invoice)), mode, "bill")
    assert result.output == Invoice(number="A-1", total=3.0)
    errors = [event for event in result.events if isinstance(event, ErrorEvent)]
    retries = [event for event in result.events if isinstance(event, RetryEvent)]
    assert [(e.operation, e.attempt) for e in errors] == [("output", 1)]
    assert isinstance(errors[0].error, OutputValidationError)
    assert errors[0].error.errors == (
        "number: Input should be a valid string",
        "total: Input should be a valid number, unable to parse string as a number",
    )
    assert [(r.operation, r.attempt) for r in retries] == [("output", 2)]
    feedback = model.requests[1].messages[-1]
    assert feedback.role == "tool"
    assert feedback.tool_call_id == "f1"
    assert feedback.is_error
    assert "number: Input should be a valid string" in feedback.content


def test_spent_budget_raises_the_last_errors_never_a_value(mode: Mode) -> None:
    """Answers that never fit end the run with ``OutputValidationError`` after the budget."""
    model = ScriptedModel([final({"number": 1, "total": 1}, f"f{n}") for n in range(5)])
    runner = Runner(Agent("clerk", model, output_type=Invoice), retry=RetryPolicy(max_attempts=3))
    with pytest.raises(OutputValidationError) as raised:
        go(runner, mode, "bill")
    assert raised.value.attempt == 3
    assert raised.value.errors == ("number: Input should be a valid string",)
    assert any("retry budget" in note for note in raised.value.__notes__)
    assert len(model.requests) == 3


def test_a_text_answer_is_read_as_json_and_told_to_use_the_tool_when_it_does_not_fit(
    mode: Mode,
) -> None:
    """Plain text is checked as JSON; a misfit asks for the final-result tool."""
    model = ScriptedModel(["it is A-1", '{"number": "A-1", "total": 2}'])
    result = go(Runner(Agent("clerk", model, output_type=Invoice)), mode, "bill")
    assert result.output == Invoice(number="A-1", total=2.0)
    told = model.requests[1].messages[-1]
    assert told.role == "user"
    assert "calling the final_result tool" in told.content


def test_other_calls_beside_the_final_result_are_answered_not_run(mode: Mode) -> None:
    """A response with the final result and other calls ends the turn; each call is answered."""
    ran: list[str] = []

    def note(text: str) -> str:
        """Note something."""
        ran.append(text)
        return text

    both = ModelResponse(
        tool_calls=(
            ToolCall("n1", "note", {"text": "x"}),
            ToolCall("f1", "final_result", {"number": "A", "total": 1}),
        )
    )
    model = ScriptedModel([both])
    runner = Runner(Agent("clerk", model, tools=[note], output_type=Invoice))
    result = go(runner, mode, "bill")
    assert result.output == Invoice(number="A", total=1.0)
    assert ran == []
    session = runner.sessions.load("user", result.session_id)
    answers = [m for m in session.messages if m.role == "tool"]
    assert [(m.tool_call_id, m.is_error) for m in answers] == [("n1", True), ("f1", False)]


def test_a_non_object_type_is_asked_for_wrapped_and_unwrapped(mode: Mode) -> None:
    """``list[int]`` is asked for as ``{"response": [...]}`` and comes back as the list."""
    model = ScriptedModel([final({"response": [1, 2, 3]})])
    result = go(Runner(Agent("counter", model, output_type=list[int])), mode, "count")
    assert result.output == [1, 2, 3]
    schema = model.requests[0].tools[-1].parameters
    assert schema["properties"]["response"] == {"items": {"type": "integer"}, "type": "array"}


def test_native_output_is_asked_for_in_the_request_and_read_from_the_text(mode: Mode) -> None:
    """A model with ``native_output`` gets ``request.output`` and no final-result tool."""
    model = Native('{"x": 1}', '{"x": 1, "y": 2}')
    result = go(Runner(Agent("geo", model, output_type=Point)), mode, "where")
    assert result.output == Point(1, 2)
    first = model.requests[0]
    assert first.tools == ()
    assert first.output is not None
    assert first.output.name == "Point"
    assert first.output.strict
    assert first.output.schema["additionalProperties"] is False
    told = model.requests[1].messages[-1]
    assert told.role == "user"
    assert "y: Field required" in told.content


def test_an_optional_field_makes_the_schema_non_strict() -> None:
    """A field with a default is optional, which strict mode cannot say: strict is off."""

    class Loose(pydantic.BaseModel):
        name: str
        note: str = ""

    agent = Agent("a", Native(), output_type=Loose)
    assert agent.output is not None
    assert not agent.output.spec.strict
    assert "additionalProperties" not in agent.output.spec.schema


class Recover:
    """``on_output_error``: a fixed decision; records what it saw."""

    def __init__(self, decide: str, value: object = None) -> None:
        self.decide = decide
        self.value = value
        self.seen: list[OutputContext] = []

    def on_output_error(
        self, failure: Failure[Exception], ctx: OutputContext, /
    ) -> ErrorResult[OutputContext, Any]:
        """Retry with own feedback, fall back, or fail with an error of its own."""
        self.seen.append(ctx)
        if self.decide == "retry":
            return Retry(dataclasses.replace(ctx, feedback="use a string number"))
        if self.decide == "fallback":
            return Fallback(self.value)
        return Failure(LookupError("no invoice"))


def test_a_hook_s_retry_sends_its_own_feedback(mode: Mode) -> None:
    """``Retry(replace(ctx, feedback=...))`` is what the model reads."""
    model = ScriptedModel([final({"number": 1, "total": 1}), final({"number": "1", "total": 1})])
    hook = Recover("retry")
    result = go(Runner(Agent("clerk", model, output_type=Invoice, callbacks=[hook])), mode, "b")
    assert result.output == Invoice(number="1", total=1.0)
    assert model.requests[1].messages[-1].content == "use a string number"
    assert hook.seen[0].attempt == 1
    assert hook.seen[0].max_attempts == 3
    assert "number: Input should be a valid string" in hook.seen[0].feedback


def test_a_fallback_is_the_output_checked_against_the_type(mode: Mode) -> None:
    """``Fallback(value)`` answers without asking again; the fallback is recorded."""
    model = ScriptedModel([final({"number": 1, "total": 1})])
    fallback = Invoice(number="none", total=0)
    hook = Recover("fallback", fallback)
    result = go(Runner(Agent("clerk", model, output_type=Invoice, callbacks=[hook])), mode, "b")
    assert result.output == fallback
    assert len(model.requests) == 1
    assert [e.operation for e in result.events if isinstance(e, FallbackEvent)] == ["output"]


def test_a_fallback_of_another_type_fails_the_run(mode: Mode) -> None:
    """A hook's value is checked too (strictly: ``"1"`` is no number); the error says whose."""
    model = ScriptedModel([final({"number": 1, "total": 1})])
    hook = Recover("fallback", {"number": "x", "total": "1"})
    runner = Runner(Agent("clerk", model, output_type=Invoice, callbacks=[hook]))
    with pytest.raises(OutputValidationError, match="total: Input should be a valid number") as e:
        go(runner, mode, "b")
    notes = e.value.__notes__
    assert notes == ["the value came from on_output_error's Fallback, not from the model"]


def test_a_hook_s_own_failure_ends_the_run_without_retrying(mode: Mode) -> None:
    """A ``Failure`` of the hook's own error is raised; the model is not asked again."""
    model = ScriptedModel([final({"number": 1, "total": 1}), final({"number": "1", "total": 1})])
    runner = Runner(Agent("clerk", model, output_type=Invoice, callbacks=[Recover("fail")]))
    with pytest.raises(LookupError, match="no invoice"):
        go(runner, mode, "b")
    assert len(model.requests) == 1


class Guard:
    """``after_output``: refuses or replaces the value."""

    def __init__(self, replace_with: object = None) -> None:
        self.replace_with = replace_with
        self.seen: list[Outcome[Any]] = []

    def after_output(self, outcome: Outcome[Any], ctx: OutputContext, /) -> Result[Any, Exception]:
        """Refuse an invoice over 100; replace the value when told to."""
        self.seen.append(outcome)
        if self.replace_with is not None:
            return Success(self.replace_with)
        value = outcome.unwrap()
        if value.total > 100:
            return Failure(PermissionError(f"invoice {value.number} is over the limit"))
        return outcome


def test_after_output_halts_a_value_it_refuses(mode: Mode) -> None:
    """The output guard's ``Failure`` fails the run; the value never reaches a result."""
    model = ScriptedModel([final({"number": "A", "total": 500})])
    runner = Runner(Agent("clerk", model, output_type=Invoice, callbacks=[Guard()]))
    with pytest.raises(PermissionError, match="over the limit"):
        go(runner, mode, "b")


def test_after_output_sees_the_validated_value_and_passes_it(mode: Mode) -> None:
    """A value the guard passes is the output."""
    guard = Guard()
    model = ScriptedModel([final({"number": "A", "total": 5})])
    result = go(Runner(Agent("clerk", model, output_type=Invoice, callbacks=[guard])), mode, "b")
    assert result.output == Invoice(number="A", total=5.0)
    assert guard.seen == [Success(Invoice(number="A", total=5.0))]


def test_after_output_s_replacement_is_checked(mode: Mode) -> None:
    """A replacement of the right type is the output; of another type it fails the run."""
    model = ScriptedModel([final({"number": "A", "total": 5})])
    good = Invoice(number="B", total=1)
    result = go(Runner(Agent("c", model, output_type=Invoice, callbacks=[Guard(good)])), mode, "b")
    assert result.output == good
    model = ScriptedModel([final({"number": "A", "total": 5})])
    runner = Runner(Agent("c", model, output_type=Invoice, callbacks=[Guard("a text")]))
    with pytest.raises(OutputValidationError, match="after_output"):
        go(runner, mode, "b")


class AsyncGuard:
    """``async def after_output`` and ``on_output_error``: awaited by an async run."""

    async def on_output_error(
        self, failure: Failure[Exception], ctx: OutputContext, /
    ) -> ErrorResult[OutputContext, Any]:
        """Fall back to an empty invoice."""
        await asyncio.sleep(0)
        return Fallback(Invoice(number="", total=0))

    async def after_output(
        self, outcome: Outcome[Any], ctx: OutputContext, /
    ) -> Result[Any, Exception]:
        """Pass the outcome on."""
        await asyncio.sleep(0)
        return outcome


def test_async_output_hooks_are_awaited() -> None:
    """An async run awaits async output hooks; a sync run refuses them up front."""
    model = ScriptedModel([final({"number": 1, "total": 1})])
    runner = Runner(Agent("clerk", model, output_type=Invoice, callbacks=[AsyncGuard()]))
    result = asyncio.run(runner.arun("b"))
    assert result.output == Invoice(number="", total=0)
    with pytest.raises(Exception, match="async"):
        runner.run("b")


def test_a_sub_agent_s_typed_answer_reaches_its_parent_as_json(mode: Mode) -> None:
    """The parent's tool result is the sub-agent's validated value as JSON."""
    reader = Agent("reader", ScriptedModel([final({"x": 1, "y": 2})]), output_type=Point)
    parent_model = ScriptedModel(
        [ModelResponse(tool_calls=(ToolCall("s1", "reader", {"request": "read"}),)), "done"]
    )
    result = go(Runner(Agent("boss", parent_model, sub_agents=[reader])), mode, "go")
    assert result.output == "done"
    assert parent_model.requests[1].messages[-1].content == '{"x":1,"y":2}'


def test_an_answer_a_hook_gave_in_the_turn_s_place_is_checked(mode: Mode) -> None:
    """``before_agent``'s ``Halt`` answers with text, which must fit the type too."""

    class Cached:
        def __init__(self, text: str) -> None:
            self.text = text

        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            return Halt(ModelResponse(text=self.text))

    model = ScriptedModel([])
    agent = Agent("geo", model, output_type=Point, callbacks=[Cached('{"x": 3, "y": 4}')])
    assert go(Runner(agent), mode, "where").output == Point(3, 4)
    agent = Agent("geo", model, output_type=Point, callbacks=[Cached("nowhere")])
    with pytest.raises(OutputValidationError, match="came from a hook"):
        go(Runner(agent), mode, "where")


def test_a_stopped_typed_run_has_no_output(mode: Mode) -> None:
    """A run stopped before an answer has ``output`` ``None``: no value was checked."""

    class Stop:
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            raise StopRun("closed")

    agent = Agent("geo", ScriptedModel([]), output_type=Point, callbacks=[Stop()])
    result = go(Runner(agent), mode, "where")
    assert (result.status, result.output) == ("stopped", None)


def test_a_resumed_run_checks_its_answer_the_same_way(mode: Mode) -> None:
    """After a pause, the output type (never saved) validates the answer as a run does."""

    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    class Ask:
        def before_tool(self, ctx: ToolContext, /) -> Any:
            from hooks import Cont

            return Cont(ctx) if ctx.decision is not None else Pause("sure?")

    model = ScriptedModel(
        [
            ModelResponse(tool_calls=(ToolCall("d1", "delete", {"path": "a"}),)),
            final({"x": "bad", "y": 1}),
            final({"x": 5, "y": 1}, "f2"),
        ]
    )
    runner = Runner(Agent("ops", model, tools=[delete], output_type=Point, callbacks=[Ask()]))
    paused = go(runner, mode, "clean")
    assert (paused.status, paused.output) == ("paused", None)
    decisions = {paused.pending[0].id: Approve()}
    if mode == "sync":
        result = runner.resume(paused.state, decisions)
    else:
        result = asyncio.run(runner.aresume(paused.state, decisions))
    assert result.output == Point(5, 1)
    assert [e.operation for e in result.events if isinstance(e, RetryEvent)] == ["output"]


def test_str_or_none_output_type_keeps_the_text() -> None:
    """``output_type=str`` is the plain agent: no schema, the text as output."""
    model = ScriptedModel(["hello"])
    result = Runner(Agent("a", model, output_type=str)).run("hi")
    assert result.output == "hello"
    assert model.requests[0].tools == ()


def test_a_tool_named_final_result_is_refused_beside_an_output_type() -> None:
    """The final-result tool's name is taken: a tool of that name is a clear error."""

    def final_result(text: str) -> str:
        """Clash."""
        return text

    with pytest.raises(ValueError, match="rename its tool"):
        Agent("a", ScriptedModel(), tools=[final_result], output_type=Invoice)


def test_a_type_without_a_schema_is_refused_when_the_agent_is_made() -> None:
    """pydantic's refusal names the agent and the type."""

    class Opaque:
        pass

    with pytest.raises(TypeError, match=r"agent 'a': output_type=.*Opaque has no JSON schema"):
        Agent("a", ScriptedModel(), output_type=Opaque)


def test_without_pydantic_an_output_type_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where ``hookline[schema]`` is missing, the error says how to install it."""
    monkeypatch.setitem(sys.modules, "pydantic", None)
    with pytest.raises(ImportError, match=r"pip install 'hookline\[schema\]'"):
        Agent("a", ScriptedModel(), output_type=Invoice)


# -- laws ---------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(bad=st.integers(0, 6), budget=st.integers(1, 5))
def test_never_more_answers_than_the_budget_and_never_an_unchecked_value(
    bad: int, budget: int
) -> None:
    """``bad`` misfits then a fit: the output is the fit when it came within the budget,
    else the run raises; the model is asked ``min(bad + 1, budget)`` times."""
    script = [final({"x": "no", "y": 0}, f"b{n}") for n in range(bad)]
    model = ScriptedModel([*script, final({"x": 1, "y": 2}, "ok")])
    runner = Runner(Agent("geo", model, output_type=Point), retry=RetryPolicy(max_attempts=budget))
    if bad < budget:
        assert runner.run("where").output == Point(1, 2)
    else:
        with pytest.raises(OutputValidationError):
            runner.run("where")
    assert len(model.requests) == min(bad + 1, budget)


_TYPES: list[tuple[Any, st.SearchStrategy[Any]]] = [
    (Point, st.builds(Point, x=st.integers(), y=st.integers())),
    (list[int], st.lists(st.integers())),
    (dict[str, bool], st.dictionaries(st.text(), st.booleans())),
    (int | str, st.one_of(st.integers(), st.text())),
    (Pair, st.fixed_dictionaries({"left": st.text(), "right": st.integers()})),
    (
        Invoice,
        st.builds(
            Invoice,
            number=st.text(),
            total=st.floats(allow_nan=False, allow_infinity=False),
        ),
    ),
]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), index=st.integers(0, len(_TYPES) - 1))
def test_any_value_round_trips_through_schema_json_and_validation(
    data: st.DataObject, index: int
) -> None:
    """A value of the type, written as the model would (JSON in the schema's shape, wrapped
    when not an object), validates back to itself, as a tool call and as text."""
    annotation, values = _TYPES[index]
    value = data.draw(values)
    agent = Agent("a", ScriptedModel(), output_type=annotation)
    output = agent.output
    assert output is not None
    as_json = pydantic.TypeAdapter(annotation).dump_python(value, mode="json")
    args = {"response": as_json} if output.wrapped else as_json
    assert output.from_data(args) == value
    assert output.from_text(json.dumps(args)) == value


def test_a_streamed_run_ends_with_the_typed_output() -> None:
    """``Runner.stream`` checks the answer as ``arun`` does: its last event holds the value."""
    model = ScriptedModel([final({"x": "no", "y": 0}), '{"x": 4, "y": 5}'])
    runner = Runner(Agent("geo", model, output_type=Point))

    async def last() -> RunFinishedEvent:
        events = [event async for event in runner.stream("where")]
        assert isinstance(events[-1], RunFinishedEvent)
        return events[-1]

    finished = asyncio.run(last())
    assert finished.result.output == Point(4, 5)
    retries = [e for e in finished.result.events if isinstance(e, RetryEvent)]
    assert [e.operation for e in retries] == ["output"]
