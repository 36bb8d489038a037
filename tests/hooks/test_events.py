"""Tests for observers: ``HookEvent`` and ``observing``."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import pytest

from hooks import HookEvent, OnEvent, compile_callbacks, observing


def event(**changes: Any) -> HookEvent:
    """A sample event, with ``changes`` applied."""
    base = HookEvent(
        point="before_model", agent="assistant", branch="assistant", outcome="cont", duration=0.5
    )
    return dataclasses.replace(base, **changes)


def test_observing_calls_the_function_with_the_event() -> None:
    """``observing(fn).on_event(event)`` calls ``fn`` with that very event."""
    seen: list[HookEvent] = []
    observer = observing(seen.append)
    sample = event()
    observer.on_event(sample)
    assert len(seen) == 1
    assert seen[0] is sample


def test_observing_ignores_what_the_function_returns() -> None:
    """Whatever the wrapped function returns, ``on_event`` returns None."""
    on_event: Callable[[HookEvent], object] = observing(lambda event: "ignored").on_event
    assert on_event(event()) is None


def test_observing_lets_the_functions_errors_through() -> None:
    """An error raised by the wrapped function propagates out of ``on_event``."""

    def broken(event: HookEvent) -> None:
        raise KeyError("observer")

    with pytest.raises(KeyError, match="observer"):
        observing(broken).on_event(event())


@pytest.mark.parametrize("value", [None, 3, "print", [print]], ids=repr)
def test_observing_a_non_callable_raises_type_error(value: object) -> None:
    """``observing`` refuses anything that cannot be called, naming its type."""
    with pytest.raises(TypeError, match=type(value).__name__):
        observing(value)  # type: ignore[call-overload]


def test_observer_satisfies_the_on_event_protocol() -> None:
    """An observer can be used where an ``OnEvent`` is expected."""
    observer: OnEvent = observing(print)
    assert callable(observer.on_event)


def test_observer_is_a_valid_callback_whose_method_is_an_observer() -> None:
    """An observer compiles as a callback, and its ``on_event`` is in the on_event chain."""
    seen: list[HookEvent] = []
    compiled = compile_callbacks([observing(seen.append)])
    (method,) = compiled.chain("on_event", "event").fns
    sample = event()
    method(sample)
    assert seen == [sample]


def test_observer_repr_names_the_function() -> None:
    """An observer's repr shows the function it wraps."""

    def audit(event: HookEvent) -> None: ...

    assert "audit" in repr(observing(audit))
    assert repr(observing(audit)).startswith("observing(")


def test_hook_event_is_frozen() -> None:
    """Assigning a field of a HookEvent raises FrozenInstanceError."""
    sample = event()
    with pytest.raises(dataclasses.FrozenInstanceError):
        sample.outcome = "halt"  # type: ignore[misc]
    assert sample.outcome == "cont"


def test_hook_event_is_slotted() -> None:
    """A HookEvent cannot take attributes beyond its fields."""
    with pytest.raises((AttributeError, TypeError)):
        event().extra = 1  # type: ignore[attr-defined]


def test_hook_event_defaults() -> None:
    """Tool, call id and error default to None, and attempt to 1."""
    sample = event()
    assert (sample.tool, sample.call_id, sample.error, sample.attempt) == (None, None, None, 1)


def test_hook_event_equality_is_by_value() -> None:
    """Two events with equal fields are equal; a different field makes them differ."""
    assert event() == event()
    assert event() != event(outcome="halt")
    assert hash(event()) == hash(event())


def test_hook_event_carries_tool_call_and_error() -> None:
    """A tool event keeps its tool name, call id, error and attempt."""
    error = KeyError("missing")
    sample = event(
        point="on_tool_error", outcome="failure", tool="add", call_id="c1", error=error, attempt=2
    )
    assert (sample.tool, sample.call_id, sample.error, sample.attempt) == ("add", "c1", error, 2)


def test_observing_an_async_function_gives_an_awaited_observer() -> None:
    """``observing(async_fn)`` builds an observer whose ``on_event`` awaits the function."""
    import asyncio

    from hooks import AsyncObserver

    seen: list[HookEvent] = []

    async def record(event: HookEvent) -> None:
        await asyncio.sleep(0)
        seen.append(event)

    observer = observing(record)
    assert isinstance(observer, AsyncObserver)
    asyncio.run(observer.on_event(event()))
    assert seen == [event()]
    assert compile_callbacks([observer]).chain("on_event", "event").any_async


def test_hook_event_names_the_deciding_callback_and_the_run() -> None:
    """``callback`` defaults to None and ``run_id`` to ""; given, both are kept and compared."""
    sample = event()
    assert (sample.callback, sample.run_id) == (None, "")
    decided = event(callback="Guard instance", run_id="run-1")
    assert (decided.callback, decided.run_id) == ("Guard instance", "run-1")
    assert decided != event(callback="Guard instance", run_id="run-2")
    assert [field.name for field in dataclasses.fields(HookEvent)][-5:] == [
        "callback",
        "run_id",
        "context",
        "given",
        "result",
    ]


def test_hook_event_payloads_are_kept_but_not_compared() -> None:
    """``context``, ``given`` and ``result`` are what the chain saw and returned: kept for
    auditing observers, left out of equality and repr."""
    marker = object()
    kept = event(callback="g", context=marker, given=marker, result=marker)
    assert kept.context is marker
    assert kept.given is marker
    assert kept.result is marker
    assert kept == event(callback="g")
    assert "context" not in repr(kept)


def audit(event: HookEvent) -> None:
    """A sync observer function."""


async def audit_async(event: HookEvent) -> None:
    """An async observer function."""


@pytest.mark.parametrize("fn", [audit, audit_async], ids=["sync", "async"])
def test_observer_repr_is_observing_of_the_qualified_name(fn: Callable[[HookEvent], Any]) -> None:
    """A sync or async observer's repr is ``observing('<qualified name of the function>')``."""
    assert repr(observing(fn)) == f"observing({fn.__qualname__!r})"


@pytest.mark.parametrize("fn", [audit, audit_async], ids=["sync", "async"])
def test_observer_repr_of_a_nameless_callable_shows_the_callable(
    fn: Callable[[HookEvent], Any],
) -> None:
    """A callable without a qualified name (a ``functools.partial``) shows as its own repr."""
    nameless = functools.partial(fn)
    assert repr(observing(nameless)) == f"observing({nameless!r})"
