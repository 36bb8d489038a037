"""Telemetry setup: the tracer_provider argument, runs without one, and without the extra."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from hooks import ErrorResult, Failure, Retry
from runner import (
    Agent,
    ModelContext,
    ModelResponse,
    RetryPolicy,
    Runner,
    ScriptedModel,
    ToolCall,
    Usage,
)
from tests import runner_helpers, telemetry_helpers
from tests.runner_helpers import Mode, drive
from tests.telemetry_helpers import Traced

mode = runner_helpers.mode
traced = telemetry_helpers.traced

ROOT = Path(__file__).resolve().parents[1]


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


def test_importing_and_running_hookline_imports_no_opentelemetry() -> None:
    """``import runner`` and an untraced run load no OpenTelemetry module, nor the
    runner's telemetry module."""
    done = python(
        """
        import sys
        import runner
        from runner import Agent, Runner, ScriptedModel
        Runner(Agent("a", ScriptedModel(default="ok"))).run("hi")
        traced = ("opentelemetry", "runner._telemetry")
        print(sorted(m for m in sys.modules if m.startswith(traced)))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


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
