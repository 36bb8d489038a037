"""Shared helpers of the telemetry tests: an SDK tracer provider keeping spans in memory.

The ``traced`` fixture (``tests/runner/telemetry/conftest.py``) gives a fresh ``Traced``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes
from typing_extensions import override

from runner import Agent, ModelResponse, Runner, RunResult
from tests.helpers.runs import Mode, drive

HOOK = "hookline.hook"


class StartSeen(Sampler):
    """Samples every span, keeping the attributes each had when it started, by span name."""

    def __init__(self) -> None:
        self.seen: dict[str, list[dict[str, Any]]] = {}

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
        """Keep ``attributes``; record and sample the span."""
        self.seen.setdefault(name, []).append(dict(attributes or {}))
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    @override
    def get_description(self) -> str:
        """What the sampler is, for the SDK's logs."""
        return "StartSeen"


class Traced:
    """A tracer provider whose finished spans stay in memory, and ways to read them."""

    def __init__(self) -> None:
        self.sampler = StartSeen()
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(sampler=self.sampler)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def spans(self) -> list[ReadableSpan]:
        """Every finished span, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def names(self) -> list[str]:
        """The finished spans' names, in the order they ended."""
        return [span.name for span in self.spans()]

    def named(self, name: str) -> list[ReadableSpan]:
        """The finished spans called ``name``, in the order they started."""
        found = [span for span in self.spans() if span.name == name]
        return sorted(found, key=lambda span: span.start_time or 0)

    def one(self, name: str) -> ReadableSpan:
        """The one finished span called ``name``."""
        (span,) = self.named(name)
        return span

    def parent(self, span: ReadableSpan) -> ReadableSpan | None:
        """The finished span that is ``span``'s parent (``None`` for a root)."""
        if span.parent is None:
            return None
        (parent,) = [each for each in self.spans() if each.context.span_id == span.parent.span_id]
        return parent

    def children(self, span: ReadableSpan) -> list[ReadableSpan]:
        """The finished spans whose parent is ``span``, in the order they started."""
        found = [
            each
            for each in self.spans()
            if each.parent is not None and each.parent.span_id == span.context.span_id
        ]
        return sorted(found, key=lambda each: each.start_time or 0)

    def runner(self, agent: Agent, **options: Any) -> Runner:
        """A runner of ``agent`` traced into this provider."""
        return Runner(agent, tracer_provider=self.provider, **options)

    def run(self, agent: Agent, mode: Mode, message: str = "hi", **options: Any) -> RunResult:
        """One traced run of ``agent`` on ``message`` (``run`` or ``arun``)."""
        callbacks: Sequence[object] = options.pop("callbacks", ())
        with self.runner(agent, **options) as runner:
            return drive(runner, mode, message, callbacks=callbacks)


def attributes(span: ReadableSpan) -> Mapping[str, Any]:
    """The span's attributes (empty if none)."""
    return dict(span.attributes or {})


def hook_events(span: ReadableSpan) -> list[dict[str, Any]]:
    """The attributes of the span's hook-decision events, in order."""
    return [dict(event.attributes or {}) for event in span.events if event.name == HOOK]


def event_names(span: ReadableSpan) -> list[str]:
    """The names of the span's events, in order."""
    return [event.name for event in span.events]


def loaded(span: ReadableSpan, key: str) -> Any:
    """A JSON-valued attribute of ``span``, parsed."""
    value = attributes(span)[key]
    assert isinstance(value, str)
    return json.loads(value)


def answer(text: str = "", **fields: Any) -> ModelResponse:
    """A model response with ``text`` and any other fields."""
    return ModelResponse(text, **fields)
