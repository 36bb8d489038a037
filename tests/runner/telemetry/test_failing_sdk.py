"""Telemetry never changes a run: a span processor or sampler that raises is logged, once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Literal, cast

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes
from typing_extensions import override

from runner import (
    Agent,
    InMemorySessions,
    ModelResponse,
    Runner,
    RunResult,
    ScriptedModel,
    ToolCall,
)
from runner._telemetry.guard import Guarded, Log
from tests.helpers.runs import calling

Where = Literal["on_start", "on_end", "sampler"]
Form = Literal["sync", "async", "stream"]


class Broken(SpanProcessor):
    """A span processor that raises where it is told to."""

    def __init__(self, where: Where) -> None:
        self.where = where

    @override
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Raise when starting spans, if told to."""
        if self.where == "on_start":
            raise RuntimeError("processor broke on start")

    @override
    def on_end(self, span: ReadableSpan) -> None:
        """Raise when ending spans, if told to."""
        if self.where == "on_end":
            raise RuntimeError("processor broke on end")


class BrokenSampler(Sampler):
    """A sampler that raises on every span."""

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
        """Raise."""
        raise RuntimeError("sampler broke")

    @override
    def get_description(self) -> str:
        """What it is."""
        return "BrokenSampler"


def provider(where: Where) -> TracerProvider:
    """A tracer provider broken at ``where``."""
    if where == "sampler":
        return TracerProvider(sampler=BrokenSampler())
    made = TracerProvider()
    made.add_span_processor(Broken(where))
    return made


def run(runner: Runner, form: Form, message: str) -> RunResult:
    """One run in ``form``: run, arun, or the stream's final result."""
    if form == "sync":
        return runner.run(message, user_id="u", session_id="s")
    if form == "async":
        return asyncio.run(runner.arun(message, user_id="u", session_id="s"))

    async def streamed() -> RunResult:
        async for event in runner.stream(message, user_id="u", session_id="s"):
            result = getattr(event, "result", None)
            if isinstance(result, RunResult):
                return result
        raise AssertionError("the stream ended without its result")

    return asyncio.run(streamed())


@pytest.mark.parametrize("where", ["on_start", "on_end", "sampler"])
@pytest.mark.parametrize("form", ["sync", "async", "stream"])
def test_a_raising_tracing_sdk_leaves_the_run_as_an_untraced_one(
    where: Where, form: Form, caplog: pytest.LogCaptureFixture
) -> None:
    """The tool runs once, the answer and the saved session are an untraced run's, and
    the failure is logged once for the run."""
    ran: list[str] = []

    def charge(amount: int) -> str:
        """Charge the card."""
        ran.append(f"charged {amount}")
        return "ok"

    def agent() -> Agent:
        script: list[ModelResponse | str] = [
            calling(ToolCall("c1", "charge", {"amount": 5})),
            "charged",
        ]
        return Agent("shop", ScriptedModel(script), tools=[charge])

    plain_store, traced_store = InMemorySessions(), InMemorySessions()
    with Runner(agent(), sessions=plain_store) as plain:
        expected = run(plain, form, "charge 5")
    ran.clear()
    traced_provider = provider(where)
    with (
        caplog.at_level(logging.WARNING, logger="runner"),
        Runner(agent(), sessions=traced_store, tracer_provider=traced_provider) as traced,
    ):
        result = run(traced, form, "charge 5")
    traced_provider.shutdown()
    assert ran == ["charged 5"]
    assert (result.status, result.output) == (expected.status, expected.output)
    assert traced_store.load("u", "s").messages == plain_store.load("u", "s").messages
    logged = [record for record in caplog.records if "tracing failed" in record.getMessage()]
    assert len(logged) == 1
    assert result.run_id in logged[0].getMessage()


class Raising:
    """A span whose every method raises, as a broken SDK's would."""

    def __getattr__(self, name: str) -> Any:
        def broken(*args: object) -> None:
            raise RuntimeError(f"the SDK broke in {name}")

        return broken


SPAN_CALLS: list[tuple[str, tuple[Any, ...], object]] = [
    ("end", (), None),
    ("get_span_context", (), trace.INVALID_SPAN_CONTEXT),
    ("set_attributes", ({"a": 1},), None),
    ("set_attribute", ("a", 1), None),
    ("add_event", ("e",), None),
    ("add_link", (trace.INVALID_SPAN_CONTEXT,), None),
    ("update_name", ("n",), None),
    ("is_recording", (), False),
    ("set_status", (trace.StatusCode.ERROR,), None),
    ("record_exception", (ValueError("x"),), None),
]


@pytest.mark.parametrize(("method", "args", "answer"), SPAN_CALLS, ids=[c[0] for c in SPAN_CALLS])
def test_every_span_call_into_a_broken_sdk_is_logged_once_and_answered_safely(
    method: str, args: tuple[Any, ...], answer: object, caplog: pytest.LogCaptureFixture
) -> None:
    """Each call a run makes on a span is guarded: the SDK's error is logged (the first
    of the run), counted, and the call answers what an invalid span would."""
    log = Log("run-1")
    span = Guarded(cast("trace.Span", Raising()), log)
    with caplog.at_level(logging.WARNING, logger="runner"):
        assert getattr(span, method)(*args) == answer
        getattr(span, method)(*args)
    assert log.failures == 2
    [record] = caplog.records
    assert "tracing failed in" in record.getMessage()
    assert "during run run-1" in record.getMessage()
