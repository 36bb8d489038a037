"""End-to-end tests of the agent loop: hook order, Halt, Cont, errors, retry, max_steps, StopRun."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import pytest

from hooks import (
    AfterAgent,
    AfterModel,
    AfterTool,
    BeforeAgent,
    BeforeModel,
    BeforeResult,
    BeforeTool,
    Cont,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    InvalidResult,
    OnModelError,
    OnToolError,
    Outcome,
    Result,
    Retry,
    Success,
)
from runner import (
    Agent,
    AgentContext,
    ErrorEvent,
    FallbackEvent,
    MaxStepsExceeded,
    Message,
    ModelAttemptEvent,
    ModelContext,
    ModelRequest,
    ModelResponse,
    ModelResponseEvent,
    RetryPolicy,
    Runner,
    RunnerError,
    ScriptedModel,
    StopEvent,
    StopRun,
    ToolArgumentsError,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultEvent,
    UnknownToolError,
    UserMessageEvent,
)
from tests.helpers.runs import (
    AsyncScripted,
    LoggingModel,
    Mode,
    Trace,
    add,
    calling,
    drive,
    events_of,
    sleeper,
    tool_messages,
)

NO_WAIT = RetryPolicy(base_delay=0)


class ModelDown(Exception):
    """A model outage, for tests."""


def broken() -> str:
    """A tool that always fails."""
    raise ValueError("broken tool")


class Recover(OnModelError, OnToolError):
    """Retries a failed model call once and answers a failed tool with ``"fixed"``."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry the first attempt only."""
        return Retry(ctx) if ctx.attempt == 1 else failure

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Fall back to a fixed result."""
        return Fallback(ToolResult("fixed"))


def every_point_script() -> list[Any]:
    """A script that reaches all eight hook points when run with ``Recover``."""
    return [ModelDown("outage"), calling(ToolCall("c1", "broken", {})), "done"]


# -- order --------------------------------------------------------------------------


def test_order_without_tools(mode: Mode) -> None:
    """A plain answer dispatches agent and model points around the one model call."""
    log: list[str] = []
    agent = Agent("assistant", LoggingModel(ScriptedModel(["hi"]), log))
    with Runner(agent) as runner:
        result = drive(runner, mode, "hello", callbacks=[Trace(log)])
    assert log == ["before_agent", "before_model", "model", "after_model", "after_agent"]
    assert result.output == "hi"


def test_order_with_tool_calls(mode: Mode) -> None:
    """Each model turn is followed by its tool calls, each between before_tool and after_tool."""
    log: list[str] = []

    def plus(a: int, b: int) -> int:
        """Add."""
        log.append("tool:plus")
        return a + b

    script = ScriptedModel(
        [
            calling(ToolCall("c1", "plus", {"a": 1, "b": 2})),
            calling(ToolCall("c2", "plus", {"a": 3, "b": 4})),
            "done",
        ]
    )
    agent = Agent("assistant", LoggingModel(script, log), tools=[plus])
    with Runner(agent) as runner:
        result = drive(runner, mode, "add things", callbacks=[Trace(log)])
    turn = ["before_model", "model", "after_model"]
    tool = ["before_tool:plus", "tool:plus", "after_tool:plus"]
    assert log == ["before_agent", *turn, *tool, *turn, *tool, *turn, "after_agent"]
    assert result.output == "done"


def test_order_of_several_calls_in_a_sync_run() -> None:
    """In ``run`` the calls of one response run one after another, in the model's order."""
    log: list[str] = []

    def first() -> str:
        """One."""
        log.append("tool:first")
        return "1"

    def second() -> str:
        """Two."""
        log.append("tool:second")
        return "2"

    script = ScriptedModel([calling(ToolCall("a", "first"), ToolCall("b", "second")), "ok"])
    with Runner(Agent("assistant", script, tools=[first, second])) as runner:
        runner.run("go", callbacks=[Trace(log)])
    assert log[3:9] == [
        "before_tool:first",
        "tool:first",
        "after_tool:first",
        "before_tool:second",
        "tool:second",
        "after_tool:second",
    ]


def test_order_with_errors_and_retries(mode: Mode) -> None:
    """Error hooks run between a failed operation and its retry, before the after hook."""
    log: list[str] = []
    failures = iter([True, False])

    def flaky() -> str:
        """Fail once."""
        log.append("tool:flaky")
        if next(failures):
            raise OSError("flaky")
        return "ok"

    class RetryOnce(OnModelError, OnToolError):
        def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> ErrorResult[ModelContext, ModelResponse]:
            return Retry(ctx)

        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            return Retry(ctx)

    script = ScriptedModel([ModelDown("once"), calling(ToolCall("c1", "flaky")), "done"])
    agent = Agent("assistant", LoggingModel(script, log), tools=[flaky])
    with Runner(agent, retry=NO_WAIT) as runner:
        result = drive(runner, mode, "go", callbacks=[Trace(log), RetryOnce()])
    assert log == [
        "before_agent",
        "before_model",
        "model",
        "on_model_error",
        "model",
        "after_model",
        "before_tool:flaky",
        "tool:flaky",
        "on_tool_error:flaky",
        "tool:flaky",
        "after_tool:flaky",
        "before_model",
        "model",
        "after_model",
        "after_agent",
    ]
    assert result.output == "done"


# -- Halt ---------------------------------------------------------------------------


def test_halt_before_agent_skips_the_agent_and_after_agent(mode: Mode) -> None:
    """A ``Halt`` from before_agent is the answer: no model call, no other hook point."""

    class Canned(BeforeAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            return Halt(ModelResponse("canned"))

    log: list[str] = []
    model = ScriptedModel(["unused"])
    with Runner(Agent("assistant", model)) as runner:
        result = drive(runner, mode, "hi", callbacks=[Trace(log), Canned()])
    assert log == ["before_agent"]
    assert model.requests == []
    assert (result.output, result.status) == ("canned", "completed")
    assert [type(event) for event in result.events] == [UserMessageEvent, ModelResponseEvent]


def test_halt_before_model_skips_the_model_and_after_model(mode: Mode) -> None:
    """A ``Halt`` from before_model stands in for the model's answer; after_model is skipped."""

    class Cached(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            return Halt(ModelResponse("cached"))

    log: list[str] = []
    agent = Agent("assistant", LoggingModel(ScriptedModel(["live"]), log))
    with Runner(agent) as runner:
        result = drive(runner, mode, "hi", callbacks=[Trace(log), Cached()])
    assert log == ["before_agent", "before_model", "after_agent"]
    assert result.output == "cached"
    assert events_of(result, ModelResponseEvent)[0].response == ModelResponse("cached")


def test_halt_before_tool_skips_the_tool_and_after_tool(mode: Mode) -> None:
    """A ``Halt`` from before_tool is the tool's result; the tool and after_tool are skipped."""

    class FromCache(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            return Halt(ToolResult("from cache"))

    log: list[str] = []

    def lookup(key: str) -> str:
        """Look up ``key``."""
        log.append("tool:lookup")
        return "live"

    model = ScriptedModel([calling(ToolCall("c1", "lookup", {"key": "k"})), "done"])
    with Runner(Agent("assistant", model, tools=[lookup])) as runner:
        result = drive(runner, mode, "hi", callbacks=[Trace(log), FromCache()])
    assert "tool:lookup" not in log
    assert "after_tool:lookup" not in log
    assert "before_tool:lookup" in log
    assert [m.content for m in tool_messages(model.requests[1])] == ["from cache"]
    assert events_of(result, ToolResultEvent)[0].result == ToolResult("from cache")


# -- Cont ---------------------------------------------------------------------------


def test_cont_before_agent_changes_the_message(mode: Mode) -> None:
    """The message in before_agent's ``Cont`` is the one the agent answers."""

    class Shout(BeforeAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            message = Message("user", ctx.message.content.upper())
            return Cont(dataclasses.replace(ctx, message=message))

    model = ScriptedModel(["ok"])
    with Runner(Agent("assistant", model)) as runner:
        drive(runner, mode, "hello", callbacks=[Shout()])
    assert model.requests[0].messages == (Message("user", "HELLO"),)


def test_cont_before_model_changes_what_the_model_receives(mode: Mode) -> None:
    """The request in before_model's ``Cont`` is exactly what the model is sent."""
    system = Message("system", "be brief")

    class Brief(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            request = dataclasses.replace(ctx.request, messages=(system, *ctx.request.messages))
            return Cont(dataclasses.replace(ctx, request=request))

    model = ScriptedModel(["ok"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        drive(runner, mode, "hello", callbacks=[Brief()])
    assert model.requests[0].messages == (system, Message("user", "hello"))
    assert [spec.name for spec in model.requests[0].tools] == ["add"]


def test_cont_before_tool_changes_what_the_tool_receives(mode: Mode) -> None:
    """The call in before_tool's ``Cont`` carries the args the tool is really called with."""
    received: list[dict[str, int]] = []

    def plus(a: int, b: int) -> int:
        """Add."""
        received.append({"a": a, "b": b})
        return a + b

    class Double(BeforeTool):
        def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
            args = {key: value * 2 for key, value in ctx.call.args.items()}
            return Cont(dataclasses.replace(ctx, call=dataclasses.replace(ctx.call, args=args)))

    model = ScriptedModel([calling(ToolCall("c1", "plus", {"a": 1, "b": 2})), "done"])
    with Runner(Agent("assistant", model, tools=[plus])) as runner:
        drive(runner, mode, "go", callbacks=[Double()])
    assert received == [{"a": 2, "b": 4}]
    assert [m.content for m in tool_messages(model.requests[1])] == ["6"]


# -- tool errors --------------------------------------------------------------------


class CaptureToolErrors(OnToolError, AfterTool):
    """Records what on_tool_error and after_tool receive; recovers nothing."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []
        self.outcomes: list[Outcome[ToolResult]] = []

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Record the error and pass it on."""
        self.errors.append(failure.failure())
        return failure

    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """Record the outcome and pass it on."""
        self.outcomes.append(outcome)
        return outcome


def test_unknown_tool_reaches_on_tool_error_and_becomes_an_error_result(mode: Mode) -> None:
    """A call to a tool nobody offers is an ``UnknownToolError`` the model then sees as a result."""
    capture = CaptureToolErrors()
    model = ScriptedModel([calling(ToolCall("c1", "nope", {})), "sorry"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, "go", callbacks=[capture])
    [error] = capture.errors
    assert isinstance(error, UnknownToolError)
    assert (error.name, error.available) == ("nope", ("add",))
    assert capture.outcomes == [Failure(error)]
    [message] = tool_messages(model.requests[1])
    assert (message.role, message.tool_call_id, message.name) == ("tool", "c1", "nope")
    assert message.content.startswith("UnknownToolError: ")
    [event] = events_of(result, ToolResultEvent)
    assert event.result.is_error
    assert event.result.content == message.content
    assert [e.error for e in events_of(result, ErrorEvent)] == [error]
    assert events_of(result, ErrorEvent)[0].operation == "tool"
    assert (result.status, result.output) == ("completed", "sorry")


def test_tool_exception_becomes_an_error_result_and_the_loop_goes_on(mode: Mode) -> None:
    """An unrecovered tool exception reaches the model as ``"Type: message"`` with ``is_error``."""
    capture = CaptureToolErrors()
    model = ScriptedModel([calling(ToolCall("c1", "broken")), "handled"])
    with Runner(Agent("assistant", model, tools=[broken])) as runner:
        result = drive(runner, mode, "go", callbacks=[capture])
    assert [type(error) for error in capture.errors] == [ValueError]
    assert [m.content for m in tool_messages(model.requests[1])] == ["ValueError: broken tool"]
    assert events_of(result, ToolResultEvent)[0].result == ToolResult(
        "ValueError: broken tool", is_error=True
    )
    assert len(model.requests) == 2
    assert result.output == "handled"


def test_on_tool_error_fallback_is_the_result(mode: Mode) -> None:
    """A ``Fallback`` from on_tool_error is the result after_tool and the model see."""
    capture = CaptureToolErrors()
    model = ScriptedModel([calling(ToolCall("c1", "broken")), "done"])
    with Runner(Agent("assistant", model, tools=[broken])) as runner:
        result = drive(runner, mode, "go", callbacks=[Recover(), capture])
    assert capture.errors == []
    assert capture.outcomes == [Success(ToolResult("fixed"))]
    assert [m.content for m in tool_messages(model.requests[1])] == ["fixed"]
    assert not events_of(result, ToolResultEvent)[0].result.is_error
    [failed] = events_of(result, ErrorEvent)  # the failed attempt stays on record
    assert (failed.operation, failed.attempt) == ("tool", 1)
    [fallback] = events_of(result, FallbackEvent)
    assert (fallback.operation, fallback.attempt) == ("tool", 1)


def test_after_tool_can_turn_a_failure_into_a_result(mode: Mode) -> None:
    """An after_tool ``Success`` replaces the failed call's outcome."""

    class Patch(AfterTool):
        def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Result[ToolResult, Exception]:
            return Success(ToolResult("patched")) if isinstance(outcome, Failure) else outcome

    model = ScriptedModel([calling(ToolCall("c1", "broken")), "done"])
    with Runner(Agent("assistant", model, tools=[broken])) as runner:
        drive(runner, mode, "go", callbacks=[Patch()])
    assert [m.content for m in tool_messages(model.requests[1])] == ["patched"]


# -- model errors -------------------------------------------------------------------


class CaptureOutcomes(AfterModel, AfterAgent):
    """Records what after_model and after_agent receive; changes nothing."""

    def __init__(self) -> None:
        self.model: list[Outcome[ModelResponse]] = []
        self.agent: list[Outcome[ModelResponse]] = []

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Record and pass on."""
        self.model.append(outcome)
        return outcome

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Result[ModelResponse, Exception]:
        """Record and pass on."""
        self.agent.append(outcome)
        return outcome


def test_unrecovered_model_error_is_raised_after_the_after_hooks_saw_it(mode: Mode) -> None:
    """``run`` raises the model's own exception once after_model and after_agent saw it."""
    error = ModelDown("outage")
    capture = CaptureOutcomes()
    with (
        Runner(Agent("assistant", ScriptedModel([error]))) as runner,
        pytest.raises(ModelDown) as info,
    ):
        drive(runner, mode, "hi", callbacks=[capture])
    assert info.value is error
    assert capture.model == [Failure(error)]
    assert capture.agent == [Failure(error)]


def test_after_model_can_recover_a_model_error(mode: Mode) -> None:
    """An after_model ``Success`` for a failed call is the answer the agent goes on with."""

    class Apologise(AfterModel):
        def after_model(
            self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
        ) -> Result[ModelResponse, Exception]:
            match outcome:
                case Success(_):
                    return outcome
                case Failure(error):
                    return Success(ModelResponse(f"sorry: {error}"))

    capture = CaptureOutcomes()
    model = ScriptedModel([ModelDown("outage")])
    with Runner(Agent("assistant", model)) as runner:
        result = drive(runner, mode, "hi", callbacks=[Apologise(), capture])
    assert result.output == "sorry: outage"
    assert capture.agent == [Success(ModelResponse("sorry: outage"))]


def test_after_agent_can_recover_a_model_error(mode: Mode) -> None:
    """An after_agent ``Success`` turns a failed agent into a completed run."""

    class Rescue(AfterAgent):
        def after_agent(
            self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
        ) -> Result[ModelResponse, Exception]:
            return Success(ModelResponse("rescued")) if isinstance(outcome, Failure) else outcome

    with Runner(Agent("assistant", ScriptedModel([ModelDown("outage")]))) as runner:
        result = drive(runner, mode, "hi", callbacks=[Rescue()])
    assert (result.output, result.status) == ("rescued", "completed")
    assert result.response == ModelResponse("rescued")


def test_on_model_error_fallback_is_the_answer(mode: Mode) -> None:
    """A ``Fallback`` from on_model_error is the response after_model sees."""

    class Default(OnModelError):
        def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> ErrorResult[ModelContext, ModelResponse]:
            return Fallback(ModelResponse("fallback"))

    capture = CaptureOutcomes()
    with Runner(Agent("assistant", ScriptedModel([ModelDown("outage")]))) as runner:
        result = drive(runner, mode, "hi", callbacks=[Default(), capture])
    assert result.output == "fallback"
    assert capture.model == [Success(ModelResponse("fallback"))]


def test_on_model_error_can_replace_the_error(mode: Mode) -> None:
    """A new error in on_model_error's ``Failure`` is the one ``run`` raises."""
    replacement = LookupError("translated")

    class Translate(OnModelError):
        def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> ErrorResult[ModelContext, ModelResponse]:
            return Failure(replacement)

    with (
        Runner(Agent("assistant", ScriptedModel([ModelDown("outage")]))) as runner,
        pytest.raises(LookupError) as info,
    ):
        drive(runner, mode, "hi", callbacks=[Translate()])
    assert info.value is replacement


# -- tools: arguments, objects, results -----------------------------------------------


def test_function_tools_get_the_models_args_as_keywords(mode: Mode) -> None:
    """A function tool is called with the model's args as keyword arguments."""
    received: list[tuple[str, str]] = []

    def greet(name: str, punctuation: str = "!") -> str:
        """Greet someone."""
        received.append((name, punctuation))
        return f"Hello, {name}{punctuation}"

    model = ScriptedModel(
        [
            calling(
                ToolCall("c1", "greet", {"name": "Ada"}),
                ToolCall("c2", "greet", {"punctuation": "?", "name": "Bob"}),
            ),
            "done",
        ]
    )
    with Runner(Agent("assistant", model, tools=[greet])) as runner:
        drive(runner, mode, "go")
    assert sorted(received) == [("Ada", "!"), ("Bob", "?")]
    assert [m.content for m in tool_messages(model.requests[1])] == ["Hello, Ada!", "Hello, Bob?"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"a": 1}, "missing a required argument: 'b'"),
        ({"a": 1, "b": 2, "c": 3}, "got an unexpected keyword argument 'c'"),
        ({"a": "1", "b": 2}, "'a' must be integer, got str"),
        ({"a": True, "b": 2}, "'a' must be integer, got bool"),
    ],
    ids=["missing", "extra", "wrong-type", "bool-for-int"],
)
def test_bad_tool_args_reach_on_tool_error(
    mode: Mode, args: dict[str, object], problem: str
) -> None:
    """Args that don't fit the signature raise ``ToolArgumentsError`` into on_tool_error."""
    called: list[object] = []

    def plus(a: int, b: int) -> int:
        """Add."""
        called.append((a, b))
        return a + b

    capture = CaptureToolErrors()
    model = ScriptedModel([calling(ToolCall("c1", "plus", args)), "done"])
    with Runner(Agent("assistant", model, tools=[plus])) as runner:
        result = drive(runner, mode, "go", callbacks=[capture])
    assert called == []
    [error] = capture.errors
    assert isinstance(error, ToolArgumentsError)
    assert (error.name, error.args_given, error.problem) == ("plus", args, problem)
    assert events_of(result, ToolResultEvent)[0].result.is_error
    assert tool_messages(model.requests[1])[0].content.startswith("ToolArgumentsError: ")


class Lookup:
    """A tool object: ``name``, ``description``, ``parameters`` and ``run(args)``."""

    name = "lookup"
    description = "Look a key up."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"key": {"type": "string"}},
    }

    def __init__(self) -> None:
        self.received: list[Mapping[str, Any]] = []

    def run(self, args: Mapping[str, Any], /) -> object:
        """Return a record for ``args["key"]``."""
        self.received.append(args)
        return {"key": args["key"], "found": True}


def test_tool_objects_run_with_the_args_mapping(mode: Mode) -> None:
    """A tool object is offered with its own spec and called with the args mapping."""
    tool = Lookup()
    model = ScriptedModel([calling(ToolCall("c1", "lookup", {"key": "k"})), "done"])
    with Runner(Agent("assistant", model, tools=[tool])) as runner:
        drive(runner, mode, "go")
    assert tool.received == [{"key": "k"}]
    [spec] = model.requests[0].tools
    assert (spec.name, spec.description, spec.parameters) == (
        "lookup",
        "Look a key up.",
        Lookup.parameters,
    )
    assert tool_messages(model.requests[1])[0].content == '{"key": "k", "found": true}'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", ToolResult("text")),
        (None, ToolResult("")),
        ([1, "é"], ToolResult('[1, "é"]')),
        (ToolResult("marked", is_error=True), ToolResult("marked", is_error=True)),
        (Decimal("1.5"), ToolResult('"1.5"')),
    ],
    ids=["str", "none", "json", "tool-result", "str-default"],
)
def test_tool_return_values_become_tool_results(
    mode: Mode, value: object, expected: ToolResult
) -> None:
    """Strings pass as they are, ``None`` is empty, data is JSON, a ``ToolResult`` is kept."""

    def produce() -> object:
        """Return the value under test."""
        return value

    model = ScriptedModel([calling(ToolCall("c1", "produce")), "done"])
    with Runner(Agent("assistant", model, tools=[produce])) as runner:
        result = drive(runner, mode, "go")
    assert events_of(result, ToolResultEvent)[0].result == expected
    assert tool_messages(model.requests[1])[0].content == expected.content


def test_async_models_and_tools_run_in_run_async() -> None:
    """``arun`` awaits an async model, an async function tool and an async tool object."""

    async def slow_add(a: int, b: int) -> int:
        """Add, after yielding to the loop."""
        await asyncio.sleep(0)
        return a + b

    class AsyncEcho:
        name = "echo"

        async def run(self, args: Mapping[str, Any], /) -> str:
            await asyncio.sleep(0)
            return str(args["text"])

    inner = ScriptedModel(
        [
            calling(ToolCall("c1", "slow_add", {"a": 2, "b": 3})),
            calling(ToolCall("c2", "echo", {"text": "hi"})),
            "done",
        ]
    )
    agent = Agent("assistant", AsyncScripted(inner), tools=[slow_add, AsyncEcho()])
    with Runner(agent) as runner:
        result = asyncio.run(runner.arun("go"))
    assert result.output == "done"
    assert [event.result.content for event in events_of(result, ToolResultEvent)] == ["5", "hi"]


# -- retry --------------------------------------------------------------------------


class RetryAlways(OnModelError, OnToolError):
    """Asks for a retry of every failure and records the attempt it saw."""

    def __init__(self, delay: float | None = None) -> None:
        self.delay = delay
        self.model_attempts: list[int] = []
        self.tool_attempts: list[tuple[str, int]] = []

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Record the attempt; retry."""
        self.model_attempts.append(ctx.attempt)
        return Retry(ctx, delay=self.delay)

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Record the call and attempt; retry."""
        self.tool_attempts.append((ctx.call.id, ctx.attempt))
        return Retry(ctx, delay=self.delay)


def test_model_retry_counts_attempts_from_one(mode: Mode) -> None:
    """``ctx.attempt`` is 1 on the first call and grows by one per retry, before_model once."""
    retry = RetryAlways()
    log: list[str] = []
    model = ScriptedModel([ModelDown("1"), ModelDown("2"), "ok"])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=[Trace(log), retry])
    assert retry.model_attempts == [1, 2]
    assert result.output == "ok"
    assert log.count("before_model") == 1
    assert log.count("after_model") == 1


def test_retry_context_is_what_the_model_receives(mode: Mode) -> None:
    """The context in ``Retry(ctx')`` is what the model is called with next."""
    rephrased = ModelRequest((Message("user", "rephrased"),))

    class Rephrase(OnModelError, AfterModel):
        def __init__(self) -> None:
            self.final: list[int] = []

        def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> ErrorResult[ModelContext, ModelResponse]:
            return Retry(dataclasses.replace(ctx, request=rephrased))

        def after_model(
            self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
        ) -> Result[ModelResponse, Exception]:
            self.final.append(ctx.attempt)
            assert ctx.request == rephrased
            return outcome

    hook = Rephrase()
    model = ScriptedModel([ModelDown("confused"), "ok"])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        drive(runner, mode, "original", callbacks=[hook])
    assert model.requests[0].messages == (Message("user", "original"),)
    assert model.requests[1] == rephrased
    assert hook.final == [2]


def test_retry_context_is_what_the_tool_receives(mode: Mode) -> None:
    """The call in a tool ``Retry(ctx')`` carries the args of the next attempt."""
    received: list[int] = []

    def invert(x: int) -> float:
        """One over ``x``."""
        received.append(x)
        return 1 / x

    class NonZero(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            call = dataclasses.replace(ctx.call, args={"x": 4})
            return Retry(dataclasses.replace(ctx, call=call))

    model = ScriptedModel([calling(ToolCall("c1", "invert", {"x": 0})), "done"])
    with Runner(Agent("assistant", model, tools=[invert]), retry=NO_WAIT) as runner:
        drive(runner, mode, "go", callbacks=[NonZero()])
    assert received == [0, 4]
    assert tool_messages(model.requests[1])[0].content == "0.25"


def test_attempts_are_counted_per_operation(mode: Mode) -> None:
    """Each tool call and each model call has its own budget: one failure each never adds up."""
    failed: set[str] = set()

    def once(tag: str) -> str:
        """Fail the first time for each ``tag``."""
        if tag not in failed:
            failed.add(tag)
            raise OSError(tag)
        return tag

    retry = RetryAlways()
    model = ScriptedModel(
        [
            ModelDown("first turn"),
            calling(ToolCall("a", "once", {"tag": "a"}), ToolCall("b", "once", {"tag": "b"})),
            ModelDown("second turn"),
            "done",
        ]
    )
    policy = RetryPolicy(max_attempts=2, base_delay=0)
    with Runner(Agent("assistant", model, tools=[once]), retry=policy) as runner:
        result = drive(runner, mode, "go", callbacks=[retry])
    assert retry.model_attempts == [1, 1]
    assert sorted(retry.tool_attempts) == [("a", 1), ("b", 1)]
    assert [event.result for event in events_of(result, ToolResultEvent)] == [
        ToolResult("a"),
        ToolResult("b"),
    ]
    assert result.output == "done"


def test_model_budget_spent_raises_the_last_error_with_a_note(mode: Mode) -> None:
    """When ``max_attempts`` calls failed, the last error fails the run, noting the attempts."""
    errors = [ModelDown("1"), ModelDown("2"), ModelDown("3"), ModelDown("unreached")]
    model = ScriptedModel(errors)
    capture = CaptureOutcomes()
    retry = RetryAlways()
    policy = RetryPolicy(max_attempts=3, base_delay=0)
    with (
        Runner(Agent("assistant", model), retry=policy) as runner,
        pytest.raises(ModelDown) as info,
    ):
        drive(runner, mode, "hi", callbacks=[retry, capture])
    assert info.value is errors[2]
    assert len(model.requests) == 3
    assert retry.model_attempts == [1, 2, 3]
    assert capture.model == [Failure(errors[2])]
    assert any("gave up after 3 attempt(s)" in note for note in info.value.__notes__)


def test_tool_budget_spent_becomes_an_error_result(mode: Mode) -> None:
    """When a tool's budget is spent its last error, noted, becomes an error result."""
    runs: list[int] = []

    def failing() -> str:
        """Always fail."""
        runs.append(1)
        raise OSError(f"failure {len(runs)}")

    model = ScriptedModel([calling(ToolCall("c1", "failing")), "done"])
    policy = RetryPolicy(max_attempts=2, base_delay=0)
    with Runner(Agent("assistant", model, tools=[failing]), retry=policy) as runner:
        result = drive(runner, mode, "go", callbacks=[RetryAlways()])
    assert len(runs) == 2
    assert events_of(result, ToolResultEvent)[0].result == ToolResult(
        "OSError: failure 2", is_error=True
    )
    first, last = events_of(result, ErrorEvent)
    assert (first.attempt, last.attempt) == (1, 2)
    assert "gave up after 2 attempt(s)" in " ".join(last.error.__notes__)
    assert result.output == "done"


def test_max_attempts_one_never_retries(mode: Mode) -> None:
    """With ``max_attempts=1`` a ``Retry`` gives up at once."""
    model = ScriptedModel([ModelDown("only"), "unreached"])
    retry = RetryAlways()
    policy = RetryPolicy(max_attempts=1, base_delay=0)
    with (
        Runner(Agent("assistant", model), retry=policy) as runner,
        pytest.raises(ModelDown, match="only") as info,
    ):
        drive(runner, mode, "hi", callbacks=[retry])
    assert len(model.requests) == 1
    assert any("gave up after 1 attempt(s)" in note for note in info.value.__notes__)


def test_retries_back_off_exponentially(mode: Mode, waits: list[tuple[str, float]]) -> None:
    """Waits double from ``base_delay`` between attempts, up to ``max_delay``."""
    policy = RetryPolicy(max_attempts=5, base_delay=1.0, max_delay=5.0, jitter=0)
    model = ScriptedModel([ModelDown("a"), ModelDown("b"), ModelDown("c"), ModelDown("d"), "ok"])
    with Runner(Agent("assistant", model), retry=policy) as runner:
        result = drive(runner, mode, "hi", callbacks=[RetryAlways()])
    assert result.output == "ok"
    kind = sleeper(mode)
    assert waits == [(kind, 1.0), (kind, 2.0), (kind, 4.0), (kind, 5.0)]


def test_retry_delay_overrides_one_wait(mode: Mode, waits: list[tuple[str, float]]) -> None:
    """``Retry(ctx, delay=...)`` replaces the policy's wait for that retry only."""

    class FirstQuick(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            return Retry(ctx, delay=0.25) if ctx.attempt == 1 else Retry(ctx)

    policy = RetryPolicy(max_attempts=3, base_delay=1.0, jitter=0)
    model = ScriptedModel([calling(ToolCall("c1", "broken")), "done"])
    with Runner(Agent("assistant", model, tools=[broken]), retry=policy) as runner:
        drive(runner, mode, "go", callbacks=[FirstQuick()])
    kind = sleeper(mode)
    assert waits == [(kind, 0.25), (kind, 2.0)]


def test_retry_delay_is_capped_by_max_delay(mode: Mode, waits: list[tuple[str, float]]) -> None:
    """A ``Retry(delay=...)`` longer than ``RetryPolicy.max_delay`` waits ``max_delay``."""

    class Patient(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            return Retry(ctx, delay=3600.0)

    policy = RetryPolicy(max_attempts=2, base_delay=1.0, max_delay=5.0, jitter=0)
    model = ScriptedModel([calling(ToolCall("c1", "broken")), "done"])
    with Runner(Agent("assistant", model, tools=[broken]), retry=policy) as runner:
        drive(runner, mode, "go", callbacks=[Patient()])
    assert waits == [(sleeper(mode), 5.0)]


def test_jittered_waits_follow_the_runners_rng(mode: Mode, waits: list[tuple[str, float]]) -> None:
    """With jitter, the waits are ``RetryPolicy.delay`` drawn from the runner's ``rng``."""
    policy = RetryPolicy(max_attempts=3, base_delay=1.0, jitter=0.5)
    expected_rng = random.Random(42)
    expected = [policy.delay(1, expected_rng), policy.delay(2, expected_rng)]
    model = ScriptedModel([ModelDown("a"), ModelDown("b"), "ok"])
    agent = Agent("assistant", model)
    with Runner(agent, retry=policy, rng=random.Random(42)) as runner:
        drive(runner, mode, "hi", callbacks=[RetryAlways()])
    assert [seconds for _, seconds in waits] == expected
    assert expected[0] != 1.0  # the jitter moved the wait


def test_zero_waits_do_not_sleep(mode: Mode, waits: list[tuple[str, float]]) -> None:
    """A zero delay retries at once, without calling any sleep."""
    model = ScriptedModel([ModelDown("a"), "ok"])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        drive(runner, mode, "hi", callbacks=[RetryAlways()])
    assert waits == []


# -- max_steps ----------------------------------------------------------------------


class Looping:
    """A model that calls ``add`` forever."""

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Ask for another addition."""
        self.calls += 1
        return calling(ToolCall(f"c{self.calls}", "add", {"a": 1, "b": 1}))


def test_max_steps_exceeded(mode: Mode) -> None:
    """A run that wants more than ``max_steps`` model turns raises ``MaxStepsExceeded``."""
    model = Looping()
    with (
        Runner(Agent("assistant", model, tools=[add]), max_steps=3) as runner,
        pytest.raises(MaxStepsExceeded) as info,
    ):
        drive(runner, mode, "loop")
    assert model.calls == 3
    assert (info.value.agent, info.value.max_steps) == ("assistant", 3)
    assert isinstance(info.value, RunnerError)
    assert isinstance(info.value, RuntimeError)


def test_max_steps_allows_exactly_that_many_turns(mode: Mode) -> None:
    """A run of exactly ``max_steps`` model turns completes."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 1})), "two"])
    with Runner(Agent("assistant", model, tools=[add]), max_steps=2) as runner:
        assert drive(runner, mode, "go").output == "two"


# -- StopRun ------------------------------------------------------------------------

POINTS = [
    "before_agent",
    "before_model",
    "on_model_error",
    "after_model",
    "before_tool",
    "on_tool_error",
    "after_tool",
    "after_agent",
]
# How many model calls happen before a StopRun at each point (see every_point_script).
MODEL_CALLS_BEFORE = dict(zip(POINTS, [0, 0, 1, 2, 2, 2, 2, 3], strict=True))


def hooked(point: str, body: Callable[..., object]) -> object:
    """A callback object whose only method is ``point``, running ``body(*args)``."""

    def method(self: object, *args: object) -> object:
        return body(*args)

    return type("Hooked", (), {point: method})()


@pytest.mark.parametrize("point", POINTS)
def test_stop_run_from_any_callback_ends_the_run_cleanly(mode: Mode, point: str) -> None:
    """``StopRun`` from any hook point gives status "stopped", its reason and a ``StopEvent``."""

    def stop(*args: object) -> object:
        raise StopRun(f"stopped at {point}")

    model = ScriptedModel(every_point_script())
    agent = Agent("assistant", model, tools=[broken])
    with Runner(agent, retry=NO_WAIT) as runner:
        result = drive(runner, mode, "go", callbacks=[hooked(point, stop), Recover()])
    assert (result.status, result.stop_reason, result.output) == (
        "stopped",
        f"stopped at {point}",
        "",
    )
    assert result.response is None
    last = result.events[-1]
    assert isinstance(last, StopEvent)
    assert (last.reason, last.agent, last.branch) == (
        f"stopped at {point}",
        "assistant",
        "assistant",
    )
    assert len(model.requests) == MODEL_CALLS_BEFORE[point]


# -- bad callbacks ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "value"),
    [
        ("before_agent", None),
        ("before_model", None),
        ("on_model_error", None),
        ("after_model", ModelResponse("not wrapped")),
        ("before_tool", ToolResult("not wrapped")),
        ("on_tool_error", "oops"),
        ("after_tool", None),
        ("after_agent", True),
    ],
)
def test_bad_callback_returns_raise_invalid_result(mode: Mode, point: str, value: object) -> None:
    """A callback returning an illegal value makes ``run`` raise ``InvalidResult`` naming it."""
    bad = hooked(point, lambda *args: value)
    agent = Agent("assistant", ScriptedModel(every_point_script()), tools=[broken])
    with Runner(agent, retry=NO_WAIT) as runner, pytest.raises(InvalidResult) as info:
        drive(runner, mode, "go", callbacks=[bad, Recover()])
    assert info.value.callback is bad
    assert info.value.point == point
    assert info.value.value == value
    assert point in str(info.value)


def test_none_from_before_model_never_calls_the_model(mode: Mode) -> None:
    """An ``InvalidResult`` at before_model stops the run before the model is called."""
    model = ScriptedModel(["unused"])
    bad = hooked("before_model", lambda ctx: None)
    with Runner(Agent("assistant", model)) as runner, pytest.raises(InvalidResult):
        drive(runner, mode, "go", callbacks=[bad])
    assert model.requests == []


@pytest.mark.parametrize("point", POINTS)
def test_callback_exceptions_keep_their_type_with_a_note(mode: Mode, point: str) -> None:
    """A callback's exception leaves ``run`` as itself, noted with the callback and the point."""
    error = ValueError(f"bug in {point}")

    def boom(*args: object) -> object:
        raise error

    agent = Agent("assistant", ScriptedModel(every_point_script()), tools=[broken])
    with Runner(agent, retry=NO_WAIT) as runner, pytest.raises(ValueError, match="bug in") as info:
        drive(runner, mode, "go", callbacks=[hooked(point, boom), Recover()])
    assert info.value is error
    [note] = info.value.__notes__
    assert "Hooked" in note
    assert repr(point) in note


@pytest.mark.parametrize(
    ("point", "value"),
    [
        ("before_agent", Halt("text")),
        ("after_agent", Success("text")),
        ("before_model", Halt("text")),
        ("after_model", Success("text")),
        ("on_model_error", Fallback("text")),
    ],
)
def test_answers_that_are_no_model_response_raise_invalid_result(
    mode: Mode, point: str, value: object
) -> None:
    """A halt, fallback or success standing in for an answer must hold a ``ModelResponse``:
    ``InvalidResult`` (a ``TypeError``) names the callback, the point and both payloads."""
    hook = hooked(point, lambda *args: value)
    agent = Agent("assistant", ScriptedModel([ModelDown("outage"), "ok"]))
    with (
        Runner(agent, retry=NO_WAIT) as runner,
        pytest.raises(InvalidResult, match=r"\(str\) 'text'; expected .*\[ModelResponse\]") as info,
    ):
        drive(runner, mode, "go", callbacks=[hook])
    assert info.value.point == point
    assert info.value.callback is hook


# -- records of halts, the after_agent context, what models and tools raise ---------


def test_a_before_agent_halt_is_recorded_and_saved_as_the_answer(mode: Mode) -> None:
    """The halted answer is the response event and the next turn's model sees it answered."""

    class Canned(BeforeAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            return Halt(ModelResponse("canned"))

    model = ScriptedModel(["live"])
    with Runner(Agent("assistant", model)) as runner:
        first = drive(runner, mode, "one", session_id="s", callbacks=[Canned()])
        drive(runner, mode, "two", session_id="s")
    [event] = events_of(first, ModelResponseEvent)
    assert (event.response, event.agent, event.branch) == (
        ModelResponse("canned"),
        "assistant",
        "assistant",
    )
    assert [(m.role, m.content) for m in model.requests[0].messages] == [
        ("user", "one"),
        ("assistant", "canned"),
        ("user", "two"),
    ]


def test_after_agent_gets_the_context_before_agent_passed_on(mode: Mode) -> None:
    """after_agent sees the agent's invocation and the message the agent really answered."""
    seen: list[AgentContext] = []

    class Rephrase(BeforeAgent, AfterAgent):
        def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
            return Cont(dataclasses.replace(ctx, message=Message("user", "rephrased")))

        def after_agent(
            self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
        ) -> Result[ModelResponse, Exception]:
            seen.append(ctx)
            return outcome

    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        result = drive(runner, mode, "original", callbacks=[Rephrase()])
    [ctx] = seen
    assert ctx.message == Message("user", "rephrased")
    assert (ctx.invocation.agent, ctx.invocation.id) == ("assistant", result.run_id)


class Chatty:
    """A sync model that answers with a bare str, not a ``ModelResponse``."""

    def generate(self, request: ModelRequest, /) -> object:
        """Answer ``hello``."""
        return "hello"


class AsyncChatty:
    """An async model that answers with a bare str, not a ``ModelResponse``."""

    async def generate(self, request: ModelRequest, /) -> object:
        """Answer ``hello``."""
        await asyncio.sleep(0)
        return "hello"


class SeeModelErrors(OnModelError):
    """Keeps each model error it is offered and passes it on."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Keep the error; do not recover."""
        self.errors.append(failure.failure())
        return failure


@pytest.mark.parametrize(
    ("mode", "model"),
    [("sync", Chatty()), ("async", Chatty()), ("async", AsyncChatty())],
    ids=["sync-run", "async-run", "async-model"],
)
def test_a_model_answer_that_is_no_model_response_fails_the_call(mode: Mode, model: object) -> None:
    """The error hooks get a ``TypeError`` naming the model and what it returned; run raises it."""
    handler = SeeModelErrors()
    agent = Agent("assistant", model)  # type: ignore[call-overload]
    with (
        Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner,
        pytest.raises(TypeError) as caught,
    ):
        drive(runner, mode, "hi", callbacks=[handler])
    assert handler.errors == [caught.value]
    name = type(model).__qualname__
    assert str(caught.value) == (
        f"model {name}.generate must return a ModelResponse, got str 'hello'"
    )


def test_an_async_model_is_sent_the_request_the_hooks_passed() -> None:
    """An async model receives the request before_model passed on, as it was recorded."""
    note = Message("system", "be brief")

    class AddNote(BeforeModel):
        def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
            messages = (*ctx.request.messages, note)
            return Cont(dataclasses.replace(ctx, request=ModelRequest(messages, ctx.request.tools)))

    inner = ScriptedModel(["ok"])
    with Runner(Agent("assistant", AsyncScripted(inner))) as runner:
        result = asyncio.run(runner.arun("hi", callbacks=[AddNote()]))
    assert inner.requests[0].messages == (Message("user", "hi"), note)
    [attempt] = events_of(result, ModelAttemptEvent)
    assert attempt.request == inner.requests[0]


class SeeToolErrors(OnToolError):
    """Keeps each tool error it is offered and passes it on."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Keep the error; do not recover."""
        self.errors.append(failure.failure())
        return failure


def test_what_async_models_and_tools_raise_reaches_the_error_hooks() -> None:
    """The very exception an async tool or model raised is offered to the error hooks."""
    tool_error = ValueError("async tool broke")
    outage = ModelDown("async outage")

    async def failing() -> str:
        """Fail after yielding to the loop."""
        await asyncio.sleep(0)
        raise tool_error

    inner = ScriptedModel([calling(ToolCall("c1", "failing")), outage])
    seen_model, seen_tool = SeeModelErrors(), SeeToolErrors()
    agent = Agent("assistant", AsyncScripted(inner), tools=[failing])
    with (
        Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner,
        pytest.raises(ModelDown) as caught,
    ):
        asyncio.run(runner.arun("go", callbacks=[seen_model, seen_tool]))
    assert seen_tool.errors == [tool_error]
    assert seen_model.errors == [outage]
    assert caught.value is outage
    assert tool_messages(inner.requests[1])[0].content == "ValueError: async tool broke"


def stopping_tool() -> str:
    """A tool that ends the run."""
    raise StopRun("the tool said stop")


class StoppingModel:
    """A sync model that ends the run."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Stop."""
        raise StopRun("the model said stop")


@pytest.mark.parametrize("who", ["tool", "model"])
def test_stop_run_raised_by_a_sync_tool_or_model_stops_the_run(mode: Mode, who: str) -> None:
    """``StopRun`` from a sync tool or model is no tool or model error: it ends the run."""
    handler = SeeToolErrors()
    if who == "tool":
        model: Any = ScriptedModel([calling(ToolCall("c1", "stopping_tool")), "unreached"])
    else:
        model = StoppingModel()
    with Runner(Agent("assistant", model, tools=[stopping_tool])) as runner:
        result = drive(runner, mode, "go", callbacks=[handler])
    assert (result.status, result.stop_reason) == ("stopped", f"the {who} said stop")
    assert handler.errors == []
    assert events_of(result, ToolResultEvent) == []


def circular() -> list[object]:
    """A list that contains itself."""
    items: list[object] = []
    items.append(items)
    return items


@pytest.mark.parametrize(
    "value",
    [{(1, 2): "pair"}, circular()],
    ids=["tuple-keys", "circular"],
)
def test_data_json_cannot_encode_becomes_its_repr(mode: Mode, value: object) -> None:
    """A tool's return value that is no JSON reaches the model as its ``repr``."""

    def produce() -> object:
        """Return the value under test."""
        return value

    model = ScriptedModel([calling(ToolCall("c1", "produce")), "done"])
    with Runner(Agent("assistant", model, tools=[produce])) as runner:
        result = drive(runner, mode, "go")
    assert events_of(result, ToolResultEvent)[0].result == ToolResult(repr(value))


class TwoWays:
    """A model with a sync ``generate`` and an ``async def agenerate``, keeping its requests."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, ModelRequest]] = []

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``sync``."""
        self.requests.append(("generate", request))
        return ModelResponse("sync")

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``async`` after yielding to the loop."""
        await asyncio.sleep(0)
        self.requests.append(("agenerate", request))
        return ModelResponse("async")


def test_a_models_agenerate_is_awaited_in_run_async(mode: Mode) -> None:
    """``run`` calls ``generate``, ``arun`` awaits ``agenerate``; each gets the request."""
    model = TwoWays()
    with Runner(Agent("assistant", model)) as runner:
        result = drive(runner, mode, "hi")
    [(method, request)] = model.requests
    assert (method, result.output) == (
        ("generate", "sync") if mode == "sync" else ("agenerate", "async")
    )
    [attempt] = events_of(result, ModelAttemptEvent)
    assert request == attempt.request
    assert request.messages == (Message("user", "hi"),)


class RefuseAnswers(AfterAgent):
    """Turns the agent's answer into ``error`` in ``after_agent``; passes failures on."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Result[ModelResponse, Exception]:
        """Fail a successful run; leave a failed one as it is."""
        return Failure(self.error) if isinstance(outcome, Success) else outcome


def streamed_errors(runner: Runner, error: type[Exception], hook: RefuseAnswers) -> list[object]:
    """``(operation, error)`` of each ``ErrorEvent`` a stream shows before raising ``error``."""
    seen: list[object] = []

    async def main() -> None:
        async for event in runner.stream("hi", callbacks=[hook]):
            seen.append(event)

    with pytest.raises(error):
        asyncio.run(main())
    return [(e.operation, e.error) for e in seen if isinstance(e, ErrorEvent)]


def test_an_after_agent_failure_is_on_record_before_it_is_raised() -> None:
    """A new error from after_agent is an "agent" ``ErrorEvent``; a failure passed on adds none."""
    refusal = LookupError("after_agent refused")
    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        assert streamed_errors(runner, LookupError, RefuseAnswers(refusal)) == [("agent", refusal)]
    outage = ModelDown("outage")
    agent = Agent("assistant", ScriptedModel([outage]))
    with Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner:
        assert streamed_errors(runner, ModelDown, RefuseAnswers(refusal)) == [("model", outage)]
