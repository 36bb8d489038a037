"""``Guarded``: a span whose every call into the tracing SDK is kept from the run.

Telemetry observes; it never changes a run. A span processor or a sampler that raises
(in ``on_start``, ``on_end``, ``should_sample``, an exporter called inline) would
otherwise fail the run after its tools ran. Each span a run makes is started through
``start`` and wrapped: what the SDK raises is logged, once per run, and dropped, and
the run finishes exactly as an untraced one would. A span that could not start is
OpenTelemetry's invalid span, which records nothing and raises nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Final, final

from opentelemetry import trace
from opentelemetry.trace import (
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    Tracer,
)
from opentelemetry.util import types
from typing_extensions import override

__all__ = ["RUN_LOG", "Guarded", "Log", "start"]

logger: Final = logging.getLogger("runner")


@final
class Log:
    """Where a run's tracing failures are told: the first is logged, the rest counted."""

    __slots__ = ("failures", "run_id")

    def __init__(self, run_id: str) -> None:
        self.run_id: Final = run_id
        self.failures = 0

    def failed(self, error: Exception, what: str) -> None:
        """The SDK raised ``error`` in ``what``: logged the first time in this run."""
        self.failures += 1
        if self.failures == 1:
            logger.warning(
                "tracing failed in %s during run %s; the run goes on untraced where it failed "
                "(later tracing failures of this run are not logged)",
                what,
                self.run_id,
                exc_info=error,
            )


RUN_LOG: ContextVar[Log | None] = ContextVar("hookline_tracing_log", default=None)
"""The tracing log of the run under way in this context (set by its root agent turn)."""


def _log() -> Log:
    log = RUN_LOG.get()
    return Log("(unknown)") if log is None else log


def start(tracer: Tracer, name: str, *, kind: SpanKind, attributes: Mapping[str, Any]) -> Guarded:
    """``tracer.start_span(...)``, guarded: a span that cannot start is the invalid span."""
    log = _log()
    try:
        span = tracer.start_span(name, kind=kind, attributes=attributes)
    except Exception as error:
        log.failed(error, f"starting span {name!r}")
        span = trace.INVALID_SPAN
    return Guarded(span, log)


@final
class Guarded(Span):
    """``span`` with every call guarded: what the SDK raises is logged and dropped."""

    __slots__ = ("_log", "_span")

    def __init__(self, span: Span, log: Log) -> None:
        self._span: Final = span
        self._log: Final = log

    @override
    def end(self, end_time: int | None = None) -> None:
        """End the span."""
        try:
            self._span.end(end_time)
        except Exception as error:
            self._log.failed(error, "ending a span")

    @override
    def get_span_context(self) -> SpanContext:
        """The span's context (what children are parented by)."""
        try:
            return self._span.get_span_context()
        except Exception as error:
            self._log.failed(error, "reading a span's context")
            return trace.INVALID_SPAN_CONTEXT

    @override
    def set_attributes(self, attributes: Mapping[str, types.AttributeValue]) -> None:
        """Set attributes."""
        try:
            self._span.set_attributes(attributes)
        except Exception as error:
            self._log.failed(error, "setting attributes")

    @override
    def set_attribute(self, key: str, value: types.AttributeValue) -> None:
        """Set one attribute."""
        try:
            self._span.set_attribute(key, value)
        except Exception as error:
            self._log.failed(error, "setting an attribute")

    @override
    def add_event(
        self,
        name: str,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
    ) -> None:
        """Add an event."""
        try:
            self._span.add_event(name, attributes, timestamp)
        except Exception as error:
            self._log.failed(error, "adding an event")

    @override
    def add_link(self, context: SpanContext, attributes: types.Attributes = None) -> None:
        """Add a link."""
        try:
            self._span.add_link(context, attributes)
        except Exception as error:
            self._log.failed(error, "adding a link")

    @override
    def update_name(self, name: str) -> None:
        """Rename the span."""
        try:
            self._span.update_name(name)
        except Exception as error:
            self._log.failed(error, "renaming a span")

    @override
    def is_recording(self) -> bool:
        """Whether the span records."""
        try:
            return self._span.is_recording()
        except Exception as error:
            self._log.failed(error, "asking whether a span records")
            return False

    @override
    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        """Set the status."""
        try:
            self._span.set_status(status, description)
        except Exception as error:
            self._log.failed(error, "setting a status")

    @override
    def record_exception(
        self,
        exception: BaseException,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """Record an exception."""
        try:
            self._span.record_exception(exception, attributes, timestamp, escaped)
        except Exception as error:
            self._log.failed(error, "recording an exception")
