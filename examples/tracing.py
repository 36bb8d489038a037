"""Tracing: a run as OpenTelemetry spans, printed as a tree with durations.

``python -m examples.tracing`` needs the extra and an SDK: ``pip install
'hookline[otel]' opentelemetry-sdk`` (``make test`` installs both). One argument,
``Runner(agent, tracer_provider=provider)``, and every run is traced after the GenAI
semantic conventions: an ``invoke_agent`` span per agent turn, a ``chat`` span per
model attempt, an ``execute_tool`` span per tool call (a sub-agent's turn under the
call that asked for it), and every hook decision as an event on the span it guards.

Here the first model attempt times out and an error hook retries it; the model then
calls three tools at once (``arun`` runs them concurrently): the weather, a
researcher sub-agent, and ``delete_notes``, which a guard refuses. ``TreePrinter`` is a
console exporter: when a trace's root span ends it prints the trace as a tree.

The same spans go to any OTLP collector (Jaeger, Grafana Tempo, Honeycomb, Langfuse,
Phoenix, Logfire...) with ``pip install opentelemetry-exporter-otlp-proto-http`` and
another processor::

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    # the collector's address: OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Final

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from typing_extensions import override

from hooks import BeforeResult, BeforeTool, Cont, ErrorResult, Failure, Halt, OnModelError, Retry
from runner import (
    Agent,
    ModelContext,
    ModelResponse,
    RetryPolicy,
    Runner,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResult,
    Usage,
)

QUESTION: Final = "What's the weather in Paris, what is hookline, and clear my notes?"


def weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: 18°C, light rain"


def delete_notes() -> str:
    """Delete every note."""
    return "all notes deleted"


class RetryTimeouts(OnModelError):
    """Retries a model call that timed out."""

    @override
    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        if isinstance(failure.failure(), TimeoutError):
            return Retry(ctx)
        return failure


class Guard(BeforeTool):
    """Refuses tools that delete."""

    @override
    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        if ctx.call.name.startswith("delete"):
            return Halt(ToolResult("deleting needs a human", is_error=True))
        return Cont(ctx)


def assistant() -> Agent:
    """The assistant: a model that times out once, three tools, a researcher sub-agent."""
    calls = (
        ToolCall("call_1", "weather", {"city": "Paris"}),
        ToolCall("call_2", "researcher", {"request": "What is hookline?"}),
        ToolCall("call_3", "delete_notes", {}),
    )
    model = ScriptedModel(
        [
            TimeoutError("the model took too long"),
            ModelResponse(tool_calls=calls, usage=Usage(220, 40), finish_reason="tool_calls"),
            ModelResponse(
                "Paris: 18°C and light rain. hookline is a typed hook system for agents. "
                "Your notes stay: deleting them needs you.",
                usage=Usage(310, 35, cached_tokens=200),
                finish_reason="stop",
            ),
        ]
    )
    researcher = Agent(
        "researcher",
        ScriptedModel(
            [ModelResponse("A typed hook system for agent pipelines.", usage=Usage(40, 9))]
        ),
        description="Looks things up.",
    )
    return Agent("assistant", model, tools=[weather, delete_notes], sub_agents=[researcher])


class TreePrinter(SpanExporter):
    """A console exporter: each trace, once its root span ends, as a tree with durations."""

    def __init__(self, write: Callable[[str], object] = print) -> None:
        self.write = write
        self._waiting: list[ReadableSpan] = []

    @override
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            self._waiting.append(span)
            if span.parent is None:  # a root: its trace is complete
                trace = [each for each in self._waiting if _trace_id(each) == _trace_id(span)]
                self._waiting = [each for each in self._waiting if each not in trace]
                for line in tree(trace):
                    self.write(line)
        return SpanExportResult.SUCCESS

    @override
    def shutdown(self) -> None:
        self._waiting.clear()


def tree(spans: Sequence[ReadableSpan]) -> list[str]:
    """One trace's spans as lines: each span under its parent, by start time."""
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda each: each.start_time or 0):
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent, []).append(span)
    lines: list[str] = []

    def draw(span: ReadableSpan, lead: str, branch: str) -> None:
        label = f"{lead}{branch}{span.name}"
        lines.append(f"{label:<44} {_duration(span):>9}  {_notes(span)}".rstrip())
        kids = children.get(span.context.span_id if span.context is not None else None, [])
        below = lead + ("   " if branch in ("", "└─ ") else "│  ")
        for index, kid in enumerate(kids):
            draw(kid, below if branch else "", "└─ " if index == len(kids) - 1 else "├─ ")

    for root in children.get(None, []):
        draw(root, "", "")
    return lines


def _trace_id(span: ReadableSpan) -> int:
    return span.context.trace_id if span.context is not None else 0


def _duration(span: ReadableSpan) -> str:
    if span.start_time is None or span.end_time is None:
        return "?"
    return f"{(span.end_time - span.start_time) / 1e6:.2f} ms"


def _notes(span: ReadableSpan) -> str:
    """What a reader wants beside a span: tokens, its status, what the hooks decided."""
    attributes = dict(span.attributes or {})
    notes: list[str] = []
    tokens = attributes.get("gen_ai.usage.input_tokens")
    if tokens is not None:
        notes.append(f"{tokens}→{attributes.get('gen_ai.usage.output_tokens')} tokens")
    if span.status.status_code.name == "ERROR":
        notes.append(f"ERROR {attributes.get('error.type')}")
    for event in span.events:
        seen = dict(event.attributes or {})
        if event.name == "exception":
            notes.append(f"raised {seen.get('exception.type')}")
        elif event.name == "hookline.hook":
            by = seen.get("hookline.hook.callback")
            notes.append(
                f"{seen.get('hookline.hook.point')} {seen.get('hookline.hook.decision')}"
                + (f" by {by}" if by else "")
            )
    return "; ".join(notes)


def run_demo(write: Callable[[str], object] = print) -> str:
    """Ask the assistant once, traced, the tree written through ``write``; the answer."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(TreePrinter(write)))
    runner = Runner(
        assistant(),
        callbacks=[RetryTimeouts(), Guard()],
        retry=RetryPolicy(base_delay=0.01),
        tracer_provider=provider,
    )
    with runner:
        result = asyncio.run(runner.arun(QUESTION))
    provider.shutdown()
    return result.output


def main() -> None:
    """Print the run's span tree, then the answer."""
    print("hookline tracing -- one run as OpenTelemetry spans (GenAI semantic conventions)\n")
    print(f"user: {QUESTION}\n")
    answer = run_demo()
    print(f"\nanswer: {answer}")


if __name__ == "__main__":
    main()
