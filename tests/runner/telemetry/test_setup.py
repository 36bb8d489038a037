"""Telemetry setup: the tracer_provider argument, runs without one, and without the extra."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
)
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes
from typing_extensions import override

from hooks import (
    AfterModel,
    ErrorResult,
    Failure,
    Outcome,
    Result,
    Retry,
    Success,
    __version__,
)
from runner import (
    Agent,
    ModelContext,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    Runner,
    ScriptedModel,
    ToolCall,
    Usage,
)
from tests.helpers import ROOT
from tests.helpers.runs import Mode, drive
from tests.helpers.spans import Traced


def echo() -> Agent:
    """An agent that answers "hi"."""
    return Agent("echo", ScriptedModel(default="hi"))


def python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter that imports this checkout's hookline."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_runner_without_a_provider_makes_no_span(traced: Traced, mode: Mode) -> None:
    """Inside an application's span, an untraced runner adds none of its own."""
    with (
        traced.provider.get_tracer("app").start_as_current_span("request"),
        Runner(echo()) as runner,
    ):
        assert drive(runner, mode, "hello").output == "hi"
    assert traced.names() == ["request"]


def test_the_global_provider_is_accepted(mode: Mode) -> None:
    """trace.get_tracer_provider() (a proxy until the application sets one) is a provider."""
    with Runner(echo(), tracer_provider=trace.get_tracer_provider()) as runner:
        assert drive(runner, mode, "hello").output == "hi"


def test_a_provider_of_the_wrong_type_is_refused() -> None:
    """Anything but a TracerProvider is a TypeError saying what to pass."""
    with pytest.raises(TypeError, match=r"tracer_provider must be an opentelemetry\.trace\."):
        Runner(echo(), tracer_provider="jaeger")  # type: ignore[arg-type]


def test_capture_content_needs_a_provider_and_a_bool(traced: Traced) -> None:
    """Content capture without tracing is a mistake; a non-bool switch too."""
    with pytest.raises(ValueError, match="capture_content is for traced runs"):
        Runner(echo(), capture_content=True)
    with pytest.raises(
        TypeError, match="capture_content must be a bool, got str; True, False or None"
    ):
        Runner(echo(), tracer_provider=traced.provider, capture_content="yes")  # type: ignore[arg-type]


@pytest.mark.subprocess
def test_importing_and_running_hookline_imports_no_opentelemetry() -> None:
    """``import runner`` and an untraced run load no OpenTelemetry module, nor the
    runner's telemetry module."""
    done = python(
        """
        import sys
        import runner
        from runner import Agent, Runner, ScriptedModel
        Runner(Agent("a", ScriptedModel(default="ok"))).run("hi")
        traced = ("opentelemetry", "runner._telemetry.telemetry")
        print(sorted(m for m in sys.modules if m.startswith(traced)))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.subprocess
def test_without_the_extra_hookline_runs_and_tracing_says_what_to_install() -> None:
    """With OpenTelemetry not installed, runs work; a tracer_provider is an ImportError
    naming the extra."""
    done = python(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if the package were not installed
        from runner import Agent, Runner, ScriptedModel
        agent = Agent("a", ScriptedModel(default="ok"))
        print(Runner(agent).run("hi").output)
        try:
            Runner(agent, tracer_provider=object())
        except ImportError as error:
            print(error.name, error)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "ok",
        "opentelemetry Runner(tracer_provider=...) needs OpenTelemetry: "
        "pip install 'hookline[otel]'",
    ]


def test_a_trace_the_sampler_drops_records_nothing_and_the_run_goes_on(mode: Mode) -> None:
    """A provider whose sampler drops every trace: no span is exported, the run (with a
    retried model error and a sub-agent) answers as untraced."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    helper = Agent("helper", ScriptedModel([ModelResponse("42", usage=Usage(3, 1))]))
    ask = ToolCall("c1", "helper", {"request": "the answer?"})
    model = ScriptedModel([TimeoutError("slow"), ModelResponse(tool_calls=(ask,)), "It is 42."])
    boss = Agent("boss", model, sub_agents=[helper], callbacks=[RetryAll()])
    policy = RetryPolicy(base_delay=0.0, jitter=0.0)
    with Runner(boss, tracer_provider=provider, retry=policy) as runner:
        result = drive(runner, mode, "what is the answer?")
    assert (result.output, result.usage) == ("It is 42.", Usage(3, 1))
    assert exporter.get_finished_spans() == ()
    provider.shutdown()


class RetryAll:
    """Retries every model error."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry."""
        return Retry(ctx)


def test_the_spans_name_hookline_as_their_instrumentation_scope(traced: Traced, mode: Mode) -> None:
    """The tracer is hookline's, at its version: a backend can tell hookline's spans apart."""
    with Runner(echo(), tracer_provider=traced.provider) as runner:
        drive(runner, mode, "hello")
    scopes = {span.instrumentation_scope for span in traced.spans()}
    assert [(scope.name, scope.version) for scope in scopes if scope is not None] == [
        ("hookline", __version__)
    ]
    assert len(traced.spans()) == 2


def test_a_refused_provider_is_named_in_the_message() -> None:
    """The TypeError says what was given and what to pass instead."""
    with pytest.raises(TypeError) as refused:
        Runner(echo(), tracer_provider="jaeger")  # type: ignore[arg-type]
    assert str(refused.value) == (
        "tracer_provider must be an opentelemetry.trace.TracerProvider, got str 'jaeger'; "
        "pass e.g. opentelemetry.trace.get_tracer_provider()"
    )


def test_a_call_to_an_unknown_tool_has_no_description(traced: Traced, mode: Mode) -> None:
    """The model asked for a tool the agent lacks: its span names the tool, describes nothing,
    and is ERROR with the refusal."""
    call = ToolCall("c1", "launch", {})
    agent = Agent("echo", ScriptedModel([ModelResponse(tool_calls=(call,)), "ok"]))
    with Runner(agent, tracer_provider=traced.provider) as runner:
        drive(runner, mode, "hello")
    tool = traced.one("execute_tool launch")
    assert "gen_ai.tool.description" not in dict(tool.attributes or {})
    assert dict(tool.attributes or {})["gen_ai.tool.name"] == "launch"


class DropAgents(Sampler):
    """Drops every ``invoke_agent`` span (all, or one agent's) and samples every other."""

    def __init__(self, prefix: str = "invoke_agent") -> None:
        self.prefix = prefix

    @override
    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        """Drop the agent spans, keep the rest."""
        if name.startswith(self.prefix):
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    @override
    def get_description(self) -> str:
        """What the sampler is, for the SDK's logs."""
        return f"DropAgents({self.prefix})"


def provided(sampler: Sampler) -> tuple[TracerProvider, InMemorySpanExporter]:
    """A provider sampling with ``sampler`` and the exporter its finished spans go to."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_a_root_span_the_sampler_drops_takes_its_whole_trace(mode: Mode) -> None:
    """Under a parent-based sampler (the SDK's default kind) that drops the run's root span,
    no span under it records: not the model's, the tool's, nor one a tool makes itself."""
    provider, exporter = provided(ParentBased(root=DropAgents()))
    tracer = provider.get_tracer("tool")

    def lookup(key: str) -> str:
        """Look ``key`` up."""
        with tracer.start_as_current_span("lookup work"):
            return key.upper()

    call = ToolCall("c1", "lookup", {"key": "k"})
    agent = Agent("finder", ScriptedModel([ModelResponse(tool_calls=(call,)), "K"]), tools=[lookup])
    with Runner(agent, tracer_provider=provider) as runner:
        assert drive(runner, mode, "find k").output == "K"
    assert exporter.get_finished_spans() == ()
    provider.shutdown()


def test_attempts_recorded_under_a_dropped_agent_span_still_settle(mode: Mode) -> None:
    """A sampler keeps the chat spans of an agent whose own span it drops: a retried
    attempt's span is still no error, the unrecovered last one is."""
    provider, exporter = provided(DropAgents())
    errors = [TimeoutError("slow"), TimeoutError("slow again"), TimeoutError("down")]
    policy = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)
    agent = Agent("boss", ScriptedModel(errors), callbacks=[RetryAll()])
    with (
        Runner(agent, tracer_provider=provider, retry=policy) as runner,
        pytest.raises(TimeoutError),
    ):
        drive(runner, mode, "hello")
    chats = sorted(exporter.get_finished_spans(), key=lambda span: span.start_time or 0)
    assert [span.name for span in chats] == ["chat scripted"] * 3
    assert [span.status.status_code.name for span in chats] == ["UNSET", "UNSET", "ERROR"]
    assert dict(chats[2].attributes or {})["error.type"] == "TimeoutError"
    provider.shutdown()


def test_a_sub_agent_whose_span_is_dropped_still_counts_its_tokens(mode: Mode) -> None:
    """The sampler drops the sub-agent's span only: the parent's span still sums the
    sub-agent's tokens with its own."""
    provider, exporter = provided(DropAgents("invoke_agent helper"))
    helper = Agent("helper", ScriptedModel([ModelResponse("42", usage=Usage(7, 1))]))
    ask = ToolCall("c1", "helper", {"request": "the answer?"})
    model = ScriptedModel(
        [ModelResponse(tool_calls=(ask,)), ModelResponse("42", usage=Usage(20, 4))]
    )
    boss = Agent("boss", model, sub_agents=[helper])
    with Runner(boss, tracer_provider=provider) as runner:
        assert drive(runner, mode, "hello").usage == Usage(27, 5)
    (root,) = [span for span in exporter.get_finished_spans() if span.name == "invoke_agent boss"]
    usage = dict(root.attributes or {})
    assert (usage["gen_ai.usage.input_tokens"], usage["gen_ai.usage.output_tokens"]) == (27, 5)
    assert not [
        span for span in exporter.get_finished_spans() if span.name == "invoke_agent helper"
    ]
    provider.shutdown()


class FirstOfEach(Sampler):
    """Records the first span of each name starting with ``prefix``, drops later ones."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seen: set[str] = set()

    @override
    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        """Drop a second span of a name under the prefix; keep everything else."""
        if name.startswith(self.prefix) and name in self.seen:
            return SamplingResult(Decision.DROP)
        self.seen.add(name)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    @override
    def get_description(self) -> str:
        """What the sampler is, for the SDK's logs."""
        return f"FirstOfEach({self.prefix})"


class Slow:
    """An async model that answers ``hi`` after yielding to the event loop."""

    async def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Wait a little, then answer."""
        await asyncio.sleep(0.01)
        return ModelResponse("hi")


class Rewrite(AfterModel):
    """Rewrites the helper's answers: a decision, so an event on the span it guards."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Say it louder."""
        if ctx.invocation.agent == "helper" and isinstance(outcome, Success):
            return Success(ModelResponse(outcome.unwrap().text.upper()))
        return outcome


def test_a_turn_s_span_gets_its_decisions_whatever_a_concurrent_call_s_span_does() -> None:
    """Two concurrent calls of one sub-agent, the first's span recorded and the second's
    dropped: the first turn's hook decisions are still events on its span (whether a
    turn is traced is the turn's own, not its agent branch's)."""
    provider, exporter = provided(FirstOfEach("invoke_agent helper"))
    calls = ModelResponse(
        tool_calls=(
            ToolCall("c1", "helper", {"request": "one"}),
            ToolCall("c2", "helper", {"request": "two"}),
        )
    )
    helper = Agent("helper", Slow())
    root = Agent("root", ScriptedModel([calls, "done"]), sub_agents=[helper])
    with Runner(root, tracer_provider=provider, callbacks=[Rewrite()]) as runner:
        assert asyncio.run(runner.arun("go")).output == "done"
    (span,) = [each for each in exporter.get_finished_spans() if each.name == "invoke_agent helper"]
    points = [dict(event.attributes or {}).get("hookline.hook.point") for event in span.events]
    assert points == ["after_model"]
    provider.shutdown()
