"""Tests for wrap dispatch (``run_wrap`` / ``arun_wrap``), sync and async, modules and instances.

Most tests run four ways: sync or async dispatch (``mode``) over callbacks built as
modules or as instances (``kind``). A wrap's body is written once, as a coroutine
function awaiting ``call_next``; in sync mode it becomes a plain ``def`` whose
``call_next`` is the dispatcher's own, called synchronously, and whose coroutine is
driven to its end without an event loop.
"""

from __future__ import annotations

import asyncio
import re
import threading
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from hooks import (
    WRAP_MODEL,
    WRAP_TOOL,
    Cont,
    DispatchPolicy,
    Halt,
    InvalidCallbacks,
    InvalidResult,
    Invocation,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    StopRun,
    ToolCall,
    ToolContext,
    ToolResult,
    Trace,
    WrapPoint,
    arun_wrap,
    compile_callbacks,
    observing,
    run_wrap,
)
from tests.helpers.dispatch import KINDS

C = TypeVar("C")
T = TypeVar("T")

WRAP: WrapPoint[int, str] = WrapPoint("wrap_probe", context=int, value=str)
UNTYPED: WrapPoint[object, object] = WrapPoint("wrap_untyped_probe")

CallNext = Callable[[Any], Awaitable[Any]]
Body = Callable[[Any, CallNext], Coroutine[Any, Any, Any]]
Operation = Callable[[Any], Any]


class Boom(Exception):
    """The exception test wraps and operations raise."""


class Abort(BaseException):
    """A ``BaseException`` an operation raises on purpose (as the runner's private ones)."""


# -- building wraps ----------------------------------------------------------------------


def drive(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends to its end, without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        result: T = stop.value
        return result
    coroutine.close()
    msg = "a sync-mode wrap body suspended"
    raise AssertionError(msg)


async def ready(value: T) -> T:
    """``value``, as an awaitable: what a sync ``call_next`` gives a wrap body to await."""
    return value


def as_wrap(mode: str, body: Body) -> Callable[..., Any]:
    """``body`` as a wrap function ``(ctx, call_next)``: async def, or a plain def."""
    if mode == "async":

        async def async_wrap(ctx: Any, call_next: CallNext) -> Any:
            return await body(ctx, call_next)

        return async_wrap

    def sync_wrap(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        return drive(body(ctx, lambda c: ready(call_next(c))))

    return sync_wrap


def make(kind: str, name: str, /, **hooks: Callable[..., Any]) -> object:
    """A module or an instance of a fresh class ``name`` with the given hook functions."""
    if kind == "module":
        module = types.ModuleType(name)
        for attribute, fn in hooks.items():
            setattr(module, attribute, fn)
        return module
    return type(name, (), {attribute: _method(fn) for attribute, fn in hooks.items()})()


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    if asyncio.iscoroutinefunction(fn):

        async def async_method(self: object, ctx: Any, call_next: Any, /) -> Any:
            return await fn(ctx, call_next)

        return async_method

    def method(self: object, ctx: Any, call_next: Any, /) -> Any:
        return fn(ctx, call_next)

    return method


def wrap(mode: str, kind: str, name: str, body: Body, point: str = "wrap_probe") -> object:
    """A callback named ``name`` whose wrap at ``point`` runs ``body``."""
    return make(kind, name, **{point: as_wrap(mode, body)})


def described(kind: str, name: str) -> str:
    """How messages name the callback ``name`` built as ``kind``."""
    return f"module {name!r}" if kind == "module" else f"{name} instance"


def logging_wrap(log: list[str], name: str) -> Body:
    """A body that logs before and after calling ``call_next`` once."""

    async def body(ctx: Any, call_next: CallNext) -> Any:
        log.append(f"{name} in")
        outcome = await call_next(ctx)
        log.append(f"{name} out")
        return outcome

    return body


async def identity(ctx: Any, call_next: CallNext) -> Any:
    """A wrap body that changes nothing."""
    return await call_next(ctx)


def returning(value: object) -> Body:
    """A body that answers ``value`` without calling ``call_next``."""

    async def body(ctx: Any, call_next: CallNext) -> Any:
        return value

    return body


def raising(exc: BaseException) -> Body:
    """A body that raises ``exc`` without calling ``call_next``."""

    async def body(ctx: Any, call_next: CallNext) -> Any:
        raise exc

    return body


def stale_trace() -> Trace:
    """A trace still naming the callback of an earlier dispatch."""
    trace = Trace()
    trace.callback = "stale"
    return trace


# -- dispatching ------------------------------------------------------------------------


def dispatch(
    mode: str,
    callbacks: Any,
    point: WrapPoint[C, T],
    ctx: C,
    operation: Callable[[C], Outcome[T]],
    **options: Any,
) -> Outcome[T]:
    """``run_wrap``, or ``arun_wrap`` with ``operation`` made async (it really suspends)."""
    if mode == "sync":
        return run_wrap(callbacks, point, ctx, operation, **options)

    async def async_operation(ctx: C) -> Outcome[T]:
        await asyncio.sleep(0)
        return operation(ctx)

    return asyncio.run(arun_wrap(callbacks, point, ctx, async_operation, **options))


class Op:
    """An operation on ``int`` contexts that records its calls: ``Success(str(ctx))``."""

    def __init__(self, *, fail: BaseException | None = None) -> None:
        self.calls: list[object] = []
        self.fail = fail

    def __call__(self, ctx: object) -> Outcome[str]:
        self.calls.append(ctx)
        if self.fail is not None:
            raise self.fail
        return Success(str(ctx))


# -- the onion ---------------------------------------------------------------------------


def test_first_callback_is_outermost(mode: str, kind: str) -> None:
    """Wraps enter in list order and leave in reverse, around the operation."""
    log: list[str] = []
    callbacks = [wrap(mode, kind, name, logging_wrap(log, name)) for name in ("A", "B", "C")]

    def operation(ctx: int) -> Outcome[str]:
        log.append("operation")
        return Success("done")

    assert dispatch(mode, callbacks, WRAP, 1, operation) == Success("done")
    assert log == ["A in", "B in", "C in", "operation", "C out", "B out", "A out"]


def test_empty_chain_is_the_operation(mode: str) -> None:
    """With no wraps the operation's outcome comes back as it is, the same object."""
    outcome: Outcome[str] = Success("same")
    assert dispatch(mode, [], WRAP, 1, lambda ctx: outcome) is outcome


def test_empty_chain_returns_the_operations_exception_as_failure(mode: str) -> None:
    """With no wraps an ``Exception`` the operation raises comes back as ``Failure``."""
    error = Boom("down")
    result = dispatch(mode, [], WRAP, 1, Op(fail=error))
    assert type(result) is Failure
    assert result.failure() is error


def test_callbacks_without_a_wrap_are_skipped(mode: str, kind: str) -> None:
    """A callback without the point's method takes no part; observers neither."""
    log: list[str] = []
    callbacks = [
        observing(lambda event: None),
        wrap(mode, kind, "A", logging_wrap(log, "A")),
        make(kind, "Other", wrap_untyped_probe=as_wrap(mode, raising(Boom()))),
    ]
    assert dispatch(mode, callbacks, WRAP, 1, Op()) == Success("1")
    assert log == ["A in", "A out"]


def test_a_changed_context_reaches_the_operation(mode: str, kind: str) -> None:
    """``call_next(ctx')`` runs the rest of the chain and the operation on ``ctx'``."""
    seen: list[int] = []

    async def add_one(ctx: int, call_next: CallNext) -> Any:
        seen.append(ctx)
        return await call_next(ctx + 1)

    operation = Op()
    callbacks = [wrap(mode, kind, "A", add_one), wrap(mode, kind, "B", add_one)]
    assert dispatch(mode, callbacks, WRAP, 1, operation) == Success("3")
    assert seen == [1, 2]
    assert operation.calls == [3]


# -- zero, one, several calls ---------------------------------------------------------------


def test_a_wrap_may_answer_without_calling_next(mode: str, kind: str) -> None:
    """A wrap that never calls ``call_next`` short-circuits: nothing inside it runs."""
    log: list[str] = []
    cached: Outcome[str] = Success("cached")
    operation = Op()
    callbacks = [
        wrap(mode, kind, "A", logging_wrap(log, "A")),
        wrap(mode, kind, "Cache", returning(cached)),
        wrap(mode, kind, "C", logging_wrap(log, "C")),
    ]
    assert dispatch(mode, callbacks, WRAP, 1, operation) is cached
    assert log == ["A in", "A out"]
    assert operation.calls == []


def test_a_wrap_may_call_next_several_times(mode: str, kind: str) -> None:
    """A wrap may retry: each ``call_next`` runs the inner wraps and the operation again."""
    log: list[str] = []
    attempts = iter([Boom("first"), Boom("second"), None])

    def flaky(ctx: int) -> Outcome[str]:
        error = next(attempts)
        if error is not None:
            raise error
        return Success("third time")

    async def retry(ctx: int, call_next: CallNext) -> Any:
        while True:
            outcome = await call_next(ctx)
            if type(outcome) is Success:
                return outcome

    callbacks = [
        wrap(mode, kind, "Retry", retry),
        wrap(mode, kind, "Inner", logging_wrap(log, "I")),
    ]
    assert dispatch(mode, callbacks, WRAP, 1, flaky) == Success("third time")
    assert log == ["I in", "I out"] * 3


def test_call_next_gives_back_the_operations_exception_as_failure(mode: str, kind: str) -> None:
    """The operation's ``Exception`` reaches a wrap as ``Failure(exc)``, never raised."""
    error = Boom("down")
    seen: list[object] = []

    async def inspect(ctx: int, call_next: CallNext) -> Any:
        outcome = await call_next(ctx)
        seen.append(outcome)
        return outcome

    result = dispatch(mode, [wrap(mode, kind, "A", inspect)], WRAP, 1, Op(fail=error))
    assert type(seen[0]) is Failure
    assert seen[0].failure() is error
    assert result is seen[0]


def test_a_wrap_may_replace_a_failure(mode: str, kind: str) -> None:
    """A wrap may turn the operation's ``Failure`` into a ``Success`` (and back)."""

    async def recover(ctx: int, call_next: CallNext) -> Any:
        outcome = await call_next(ctx)
        return Success("recovered") if type(outcome) is Failure else Failure(Boom("no"))

    callbacks = [wrap(mode, kind, "A", recover)]
    assert dispatch(mode, callbacks, WRAP, 1, Op(fail=Boom())) == Success("recovered")
    assert type(dispatch(mode, callbacks, WRAP, 1, Op())) is Failure


# -- exceptions ---------------------------------------------------------------------------


def test_a_wraps_exception_propagates_with_one_note(mode: str, kind: str) -> None:
    """A wrap's exception passes out through the wraps around it, as itself, noted once."""
    error = Boom("inner")
    seen: list[BaseException] = []

    async def outer(ctx: int, call_next: CallNext) -> Any:
        try:
            return await call_next(ctx)
        except Boom as exc:
            seen.append(exc)
            raise

    callbacks = [wrap(mode, kind, "Outer", outer), wrap(mode, kind, "Inner", raising(error))]
    with pytest.raises(Boom) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op())
    assert raised.value is error
    assert seen == [error]
    assert error.__notes__ == [
        f"raised in callback {described(kind, 'Inner')} at hook point 'wrap_probe'"
    ]


def test_a_failure_raised_again_is_noted_as_the_wraps(mode: str, kind: str) -> None:
    """The operation's exception, raised by a wrap from its ``Failure``, is noted once: that
    wrap's."""
    error = Boom("down")

    async def reraise(ctx: int, call_next: CallNext) -> Any:
        outcome = await call_next(ctx)
        raise outcome.failure()

    callbacks = [wrap(mode, kind, "Outer", identity), wrap(mode, kind, "Inner", reraise)]
    with pytest.raises(Boom) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op(fail=error))
    assert raised.value is error
    assert error.__notes__ == [
        f"raised in callback {described(kind, 'Inner')} at hook point 'wrap_probe'"
    ]


def test_stop_run_from_a_wrap_propagates(mode: str, kind: str) -> None:
    """``StopRun`` raised by a wrap reaches the caller through the wraps around it."""
    callbacks = [
        wrap(mode, kind, "Outer", identity),
        wrap(mode, kind, "Stop", raising(StopRun("no"))),
    ]
    with pytest.raises(StopRun, match="no"):
        dispatch(mode, callbacks, WRAP, 1, Op())


@pytest.mark.parametrize("where", ["operation", "wrap"])
def test_base_exceptions_propagate_untouched(mode: str, kind: str, where: str) -> None:
    """A ``BaseException`` from the operation or a wrap passes every wrap, without a note."""
    abort = Abort()
    log: list[str] = []
    inner = raising(abort) if where == "wrap" else logging_wrap(log, "Inner")
    callbacks = [
        wrap(mode, kind, "Outer", logging_wrap(log, "Outer")),
        wrap(mode, kind, "I", inner),
    ]
    with pytest.raises(Abort) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op(fail=abort))
    assert raised.value is abort
    assert not hasattr(abort, "__notes__")
    assert "Outer out" not in log


# -- illegal results -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "NoneType (None); expected Success[str] or Failure[Exception]"),
        ("bare", "str ('bare'); expected Success[str] or Failure[Exception]"),
        (Halt("x"), "Halt (Halt('x')); expected Success[str] or Failure[Exception]"),
        (Cont(1), "Cont (Cont(1)); expected Success[str] or Failure[Exception]"),
        (Success(3), "Success(int) 3; expected Success[str]"),
        (Failure("oops"), "Failure(str) 'oops'; expected Failure[Exception]"),
    ],
    ids=repr,
)
def test_an_illegal_result_is_refused(mode: str, kind: str, value: object, problem: str) -> None:
    """Anything but ``Success`` of the point's value or ``Failure`` of an ``Exception`` raises
    ``InvalidResult`` naming the wrap, the point and what was expected."""
    callbacks = [wrap(mode, kind, "Outer", identity), wrap(mode, kind, "Bad", returning(value))]
    with pytest.raises(InvalidResult) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op())
    error = raised.value
    assert str(error) == f"{described(kind, 'Bad')}.wrap_probe returned {problem}"
    assert error.callback is callbacks[1]
    assert error.point == "wrap_probe"
    assert error.expected == ("Success[str]", "Failure[Exception]")
    assert not hasattr(error, "__notes__")


def test_a_bare_response_is_refused_at_wrap_model(mode: str, kind: str) -> None:
    """At ``WRAP_MODEL`` a bare ``ModelResponse`` is no outcome; ``Success`` of a ``str``
    carries the wrong value."""
    ctx = ModelContext(Invocation("run", "user", "agent"), ModelRequest(()))
    response = ModelResponse("hi")
    for value, expected in [
        (response, "ModelResponse ("),
        (Success("hi"), "Success(str) 'hi'; expected Success[ModelResponse]"),
    ]:
        bad = wrap(mode, kind, "Bad", returning(value), point="wrap_model")
        with pytest.raises(InvalidResult, match=re.escape(expected)):
            dispatch(mode, [bad], WRAP_MODEL, ctx, lambda ctx: Success(response))


@pytest.mark.parametrize("trace", [None, Trace()], ids=["fast", "traced"])
def test_the_operations_outcome_is_passed_on_unchecked(
    mode: str, kind: str, trace: Trace | None
) -> None:
    """What the operation returns is the caller's: wraps passing it on unchanged are not
    checked against the point's value."""
    outcome: Outcome[Any] = Success(3)  # not the point's str
    callbacks = [wrap(mode, kind, name, identity) for name in ("A", "B")]
    assert dispatch(mode, callbacks, WRAP, 1, lambda ctx: outcome, trace=trace) is outcome


@pytest.mark.parametrize("trace", [None, Trace()], ids=["fast", "traced"])
@pytest.mark.parametrize("wraps", [0, 2], ids=["no wraps", "two wraps"])
@pytest.mark.parametrize("raw", ["3", None, 3], ids=repr)
def test_an_operation_that_returns_no_outcome_fails_with_invalid_result(
    mode: str, kind: str, trace: Trace | None, wraps: int, raw: object
) -> None:
    """An operation's raw return value (not ``Success`` / ``Failure``) never reaches a wrap or
    the caller: it comes back as ``Failure(InvalidResult)`` naming the operation, which ran
    once."""
    seen: list[object] = []

    async def watching(ctx: int, call_next: CallNext) -> Any:
        outcome = await call_next(ctx)
        seen.append(outcome)
        return outcome

    calls: list[int] = []

    def bare_operation(ctx: int) -> Any:
        calls.append(ctx)
        return raw

    callbacks = [wrap(mode, kind, f"W{i}", watching) for i in range(wraps)]
    result = dispatch(mode, callbacks, WRAP, 1, bare_operation, trace=trace)
    assert type(result) is Failure
    error = result.failure()
    assert type(error) is InvalidResult
    assert error.value == raw
    assert error.point == "wrap_probe"
    assert error.expected == ("Success", "Failure")
    assert str(error).startswith("function ")
    assert f".wrap_probe returned {type(raw).__name__} ({raw!r}); expected Success or Failure" in (
        str(error)
    )
    assert calls == [1]
    assert seen == [result] * wraps
    if trace is not None:
        assert trace.callback is None


@pytest.mark.parametrize("trace", [None, Trace()], ids=["fast", "traced"])
@pytest.mark.parametrize("replaced", [Success("new"), Failure(Boom("new"))], ids=repr)
def test_an_illegal_result_around_a_replaced_outcome_names_its_wrap(
    mode: str, kind: str, trace: Trace | None, replaced: Outcome[str]
) -> None:
    """An outer wrap's illegal result is refused, naming it, after an inner wrap replaced the
    outcome (with a success or a failure)."""

    async def bad(ctx: int, call_next: CallNext) -> Any:
        await call_next(ctx)
        return None

    callbacks = [
        wrap(mode, kind, "Bad", bad),
        wrap(mode, kind, "Mid", identity),
        wrap(mode, kind, "Replace", returning(replaced)),
    ]
    with pytest.raises(InvalidResult) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace)
    assert raised.value.callback is callbacks[0]


def test_call_next_refuses_a_context_of_the_wrong_type(mode: str, kind: str) -> None:
    """``call_next`` given a context that is not the point's raises ``InvalidResult`` into the
    wrap that gave it; nothing inside runs."""
    caught: list[BaseException] = []

    async def wrong(ctx: int, call_next: CallNext) -> Any:
        try:
            return await call_next("not an int")
        except InvalidResult as exc:
            caught.append(exc)
            raise

    log: list[str] = []
    operation = Op()
    callbacks = [wrap(mode, kind, "Wrong", wrong), wrap(mode, kind, "In", logging_wrap(log, "In"))]
    with pytest.raises(InvalidResult) as raised:
        dispatch(mode, callbacks, WRAP, 1, operation)
    assert caught == [raised.value]
    assert str(raised.value) == (
        f"{described(kind, 'Wrong')}.wrap_probe passed call_next str 'not an int'; expected int"
    )
    assert raised.value.callback is callbacks[0]
    assert raised.value.value == "not an int"
    assert raised.value.expected == ("int",)
    assert log == []
    assert operation.calls == []


def test_an_untyped_point_checks_tags_only(mode: str, kind: str) -> None:
    """A point without payload types takes any context and any ``Success`` value."""
    operation = Op()

    async def anything(ctx: object, call_next: CallNext) -> Any:
        await call_next("any context")
        return Success(object)

    result = dispatch(
        mode, [wrap(mode, kind, "A", anything, "wrap_untyped_probe")], UNTYPED, 1, operation
    )
    assert result == Success(object)
    assert operation.calls == ["any context"]


# -- validation and sync / async ---------------------------------------------------------------


def test_a_misspelled_wrap_is_refused(mode: str, kind: str) -> None:
    """``wrap_modle`` is refused before anything runs, with a did-you-mean hint."""
    operation = Op()
    callbacks = [make(kind, "Typo", wrap_modle=as_wrap(mode, identity))]
    with pytest.raises(InvalidCallbacks, match="did you mean 'wrap_model'"):
        dispatch(mode, callbacks, WRAP, 1, operation)
    assert operation.calls == []


def test_a_wrap_that_cannot_take_call_next_is_refused(kind: str) -> None:
    """A wrap method must accept two positional arguments: ``(ctx, call_next)``."""

    def one(ctx: int) -> Any:
        return Success("x")

    callback = (
        make("module", "Narrow", wrap_probe=one)
        if kind == "module"
        else type("Narrow", (), {"wrap_probe": lambda self, ctx: Success("x")})()
    )
    with pytest.raises(InvalidCallbacks, match=r"cannot be called as wrap_probe\(ctx, call_next\)"):
        run_wrap([callback], WRAP, 1, Op())


def test_sync_dispatch_refuses_an_async_wrap(kind: str) -> None:
    """``run_wrap`` refuses an ``async def`` wrap before anything runs."""
    log: list[str] = []
    operation = Op()
    callbacks = [
        wrap("sync", kind, "Sync", logging_wrap(log, "Sync")),
        wrap("async", kind, "Async", identity),
    ]
    trace = stale_trace()
    with pytest.raises(InvalidCallbacks, match="is async; sync dispatch cannot await it") as raised:
        run_wrap(callbacks, WRAP, 1, operation, trace=trace)
    assert trace.callback is None
    assert raised.value.callback is callbacks[1]
    assert log == []
    assert operation.calls == []


def test_async_dispatch_refuses_a_plain_wrap(kind: str) -> None:
    """``arun_wrap`` refuses a plain ``def`` wrap before anything runs: it could not await
    ``call_next``."""
    log: list[str] = []
    calls: list[int] = []

    async def operation(ctx: int) -> Outcome[str]:
        calls.append(ctx)
        return Success("x")

    callbacks = [
        wrap("async", kind, "Async", logging_wrap(log, "Async")),
        wrap("sync", kind, "Plain", identity),
    ]
    trace = stale_trace()
    with pytest.raises(InvalidCallbacks) as raised:
        asyncio.run(arun_wrap(callbacks, WRAP, 1, operation, trace=trace))
    assert trace.callback is None
    assert raised.value.attribute == "wrap_probe"
    assert str(raised.value) == (
        f"{described(kind, 'Plain')}.wrap_probe is a plain def; wrap hooks in async dispatch "
        "must be async def (call_next is awaited): see AsyncWrapModel / AsyncWrapTool"
    )
    assert raised.value.callback is callbacks[1]
    assert log == []
    assert calls == []


def test_compiled_callbacks_dispatch_alike(mode: str, kind: str) -> None:
    """A compiled list dispatches as the list does, again and again."""
    log: list[str] = []
    compiled = compile_callbacks([wrap(mode, kind, name, logging_wrap(log, name)) for name in "AB"])
    for _ in range(2):
        assert dispatch(mode, compiled, WRAP, 1, Op()) == Success("1")
    assert log == ["A in", "B in", "B out", "A out"] * 2


def test_wrap_tool_dispatches_tool_contexts(mode: str, kind: str) -> None:
    """``WRAP_TOOL`` takes a ``ToolContext`` and an operation giving a ``ToolResult``."""
    ctx = ToolContext(Invocation("run", "user", "agent"), ToolCall("1", "add", {"a": 1}))
    result = ToolResult("2")
    callbacks = [wrap(mode, kind, "A", identity, point="wrap_tool")]
    assert dispatch(mode, callbacks, WRAP_TOOL, ctx, lambda ctx: Success(result)) == Success(result)


def test_an_async_wrap_may_run_call_next_twice_at_once() -> None:
    """Each ``call_next`` is its own: two may run concurrently (a hedged request)."""

    async def hedge(ctx: int, call_next: CallNext) -> Any:
        first, second = await asyncio.gather(call_next(ctx), call_next(ctx + 10))
        return Success(f"{first.unwrap()}+{second.unwrap()}")

    async def operation(ctx: int) -> Outcome[str]:
        await asyncio.sleep(0.001 if ctx == 1 else 0)
        return Success(str(ctx))

    callbacks = [wrap("async", "instance", "Hedge", hedge), wrap("async", "module", "I", identity)]
    assert asyncio.run(arun_wrap(callbacks, WRAP, 1, operation)) == Success("1+11")


def test_a_sync_wrap_may_call_next_from_another_thread() -> None:
    """A sync ``call_next`` may run on another thread (a wrap enforcing its own deadline)."""

    def threaded(ctx: int, call_next: Callable[[int], Outcome[str]]) -> Outcome[str]:
        results: list[Outcome[str]] = []
        worker = threading.Thread(target=lambda: results.append(call_next(ctx)))
        worker.start()
        worker.join()
        return results[0]

    operation = Op()
    callbacks = [
        make("instance", "Threaded", wrap_probe=threaded),
        wrap("sync", "module", "I", identity),
    ]
    assert run_wrap(callbacks, WRAP, 1, operation) == Success("1")
    assert operation.calls == [1]


# -- trace ----------------------------------------------------------------------------------


def test_trace_is_none_when_every_wrap_passes_the_outcome_on(mode: str, kind: str) -> None:
    """No wrap changed the outcome: the trace names nobody (and is reset first)."""
    trace = stale_trace()
    callbacks = [wrap(mode, kind, name, identity) for name in "AB"]
    assert dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace) == Success("1")
    assert trace.callback is None


def test_trace_names_the_outermost_wrap_that_decided(mode: str, kind: str) -> None:
    """The trace names the outermost wrap whose outcome was not its last ``call_next``'s."""
    trace = Trace()

    async def replace(ctx: int, call_next: CallNext) -> Any:
        await call_next(ctx)
        return Success("replaced")

    callbacks = [
        wrap(mode, kind, "Outer", identity),
        wrap(mode, kind, "Replace", replace),
        wrap(mode, kind, "Cache", returning(Success("cached"))),
    ]
    assert dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace) == Success("replaced")
    assert trace.callback is callbacks[1]
    assert dispatch(mode, [callbacks[0], callbacks[2]], WRAP, 1, Op(), trace=trace) == Success(
        "cached"
    )
    assert trace.callback is callbacks[2]


def test_trace_names_a_wrap_that_returns_an_earlier_outcome(mode: str, kind: str) -> None:
    """A wrap returning an outcome different from its last ``call_next``'s decided."""

    async def first_of_two(ctx: int, call_next: CallNext) -> Any:
        first = await call_next(ctx)
        await call_next(ctx + 1)
        return first

    trace = Trace()
    callbacks = [wrap(mode, kind, "Outer", identity), wrap(mode, kind, "First", first_of_two)]
    assert dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace) == Success("1")
    assert trace.callback is callbacks[1]


def test_trace_names_no_wrap_for_an_equal_new_outcome(mode: str, kind: str) -> None:
    """A wrap that answers with a new outcome equal to its ``call_next``'s replaced nothing,
    nor does one whose two ``call_next`` gave equal outcomes and that returns the first."""

    async def copy(ctx: int, call_next: CallNext) -> Any:
        outcome = await call_next(ctx)
        return Success(outcome.unwrap())

    async def first_of_two(ctx: int, call_next: CallNext) -> Any:
        first = await call_next(ctx)
        await call_next(ctx)
        return first

    trace = stale_trace()
    callbacks = [wrap(mode, kind, "Copy", copy), wrap(mode, kind, "First", first_of_two)]
    assert dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace) == Success("1")
    assert trace.callback is None


def test_trace_names_the_wrap_that_raised(mode: str, kind: str) -> None:
    """An exception passing out through other wraps is traced to the one that raised it."""
    trace = Trace()
    callbacks = [wrap(mode, kind, "Outer", identity), wrap(mode, kind, "Raise", raising(Boom()))]
    with pytest.raises(Boom) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace)
    assert trace.callback is callbacks[1]
    assert len(raised.value.__notes__) == 1


def test_trace_names_a_wrap_that_raised_a_new_exception(mode: str, kind: str) -> None:
    """A wrap that catches an inner wrap's exception and raises another is the one traced."""

    async def translate(ctx: int, call_next: CallNext) -> Any:
        try:
            return await call_next(ctx)
        except Boom as exc:
            raise KeyError("translated") from exc

    trace = Trace()
    callbacks = [wrap(mode, kind, "Translate", translate), wrap(mode, kind, "R", raising(Boom()))]
    with pytest.raises(KeyError) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace)
    assert trace.callback is callbacks[0]
    assert raised.value.__notes__ == [
        f"raised in callback {described(kind, 'Translate')} at hook point 'wrap_probe'"
    ]


def test_trace_names_a_wrap_whose_exception_was_caught(mode: str, kind: str) -> None:
    """When an outer wrap recovers from an inner wrap's exception, the recovery decided."""

    async def recover(ctx: int, call_next: CallNext) -> Any:
        try:
            return await call_next(ctx)
        except Boom:
            return Success("recovered")

    trace = Trace()
    callbacks = [wrap(mode, kind, "Recover", recover), wrap(mode, kind, "R", raising(Boom()))]
    assert dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace) == Success("recovered")
    assert trace.callback is callbacks[0]


@pytest.mark.parametrize("fault", ["result", "context"])
def test_trace_names_the_wrap_at_fault_for_invalid_result(mode: str, kind: str, fault: str) -> None:
    """An illegal result or ``call_next`` context is traced to the wrap that gave it."""

    async def wrong_context(ctx: int, call_next: CallNext) -> Any:
        return await call_next("text")

    body = returning("bare") if fault == "result" else wrong_context
    trace = Trace()
    callbacks = [wrap(mode, kind, "Outer", identity), wrap(mode, kind, "Bad", body)]
    with pytest.raises(InvalidResult) as raised:
        dispatch(mode, callbacks, WRAP, 1, Op(), trace=trace)
    assert trace.callback is callbacks[1]
    assert raised.value.callback is callbacks[1]
    assert raised.value.value == ("bare" if fault == "result" else "text")
    problem = (
        "returned str ('bare'); expected Success[str] or Failure[Exception]"
        if fault == "result"
        else "passed call_next str 'text'; expected int"
    )
    assert str(raised.value) == f"{described(kind, 'Bad')}.wrap_probe {problem}"


def test_a_traced_dispatch_gives_what_an_untraced_one_does(mode: str, kind: str) -> None:
    """A trace changes nothing in the outcome, the calls or the order."""
    runs: list[list[str]] = []
    error = Boom()
    for trace in (None, Trace()):
        log: list[str] = []
        callbacks = [wrap(mode, kind, name, logging_wrap(log, name)) for name in "AB"]
        outcome = dispatch(mode, callbacks, WRAP, 1, Op(fail=error), trace=trace)
        assert type(outcome) is Failure
        assert outcome.failure() is error
        runs.append(log)
    assert runs[0] == runs[1] == ["A in", "B in", "B out", "A out"]


# -- policy -------------------------------------------------------------------------------


def test_continue_on_halt_changes_nothing(mode: str, kind: str) -> None:
    """Nothing halts at a wrap point: ``continue_on_halt`` is accepted and ignored."""
    cached: Outcome[str] = Success("cached")
    operation = Op()
    callbacks = [wrap(mode, kind, "Cache", returning(cached)), wrap(mode, kind, "B", identity)]
    policy = DispatchPolicy(continue_on_halt=True)
    assert dispatch(mode, callbacks, WRAP, 1, operation, policy=policy) is cached
    assert operation.calls == []


def test_continue_on_error_steps_over_a_wrap_that_raised_before_calling_next(
    mode: str, kind: str
) -> None:
    """Under ``continue_on_error`` the rest of the chain runs as if the raising wrap were not
    there; the first error is raised at the end."""
    log: list[str] = []
    operation = Op()
    first, second = Boom("first"), Boom("second")
    callbacks = [
        wrap(mode, kind, "A", logging_wrap(log, "A")),
        wrap(mode, kind, "R1", raising(first)),
        wrap(mode, kind, "R2", raising(second)),
        wrap(mode, kind, "D", logging_wrap(log, "D")),
    ]
    trace = Trace()
    policy = DispatchPolicy(continue_on_error=True)
    with pytest.raises(Boom) as raised:
        dispatch(mode, callbacks, WRAP, 1, operation, policy=policy, trace=trace)
    assert raised.value is first
    assert trace.callback is callbacks[1]
    assert log == ["A in", "D in", "D out", "A out"]
    assert operation.calls == [1]
    assert len(second.__notes__) == 1


def test_continue_on_error_keeps_what_call_next_gave_a_raising_wrap(mode: str, kind: str) -> None:
    """A wrap that raised after calling ``call_next`` is stepped over with that outcome: the
    operation does not run again."""
    operation = Op()
    seen: list[object] = []

    async def raise_after(ctx: int, call_next: CallNext) -> Any:
        await call_next(ctx)
        raise Boom("after")

    async def outer(ctx: int, call_next: CallNext) -> Any:
        seen.append(await call_next(ctx))
        return Success("outer")

    callbacks = [wrap(mode, kind, "Outer", outer), wrap(mode, kind, "After", raise_after)]
    policy = DispatchPolicy(continue_on_error=True)
    with pytest.raises(Boom, match="after"):
        dispatch(mode, callbacks, WRAP, 1, operation, policy=policy)
    assert seen == [Success("1")]
    assert operation.calls == [1]


def test_continue_on_error_steps_over_an_illegal_result(mode: str, kind: str) -> None:
    """An illegal result counts as a raised ``InvalidResult``: stepped over, raised at the end."""
    operation = Op()
    callbacks = [wrap(mode, kind, "Outer", identity), wrap(mode, kind, "Bad", returning("bare"))]
    policy = DispatchPolicy(continue_on_error=True)
    with pytest.raises(InvalidResult) as raised:
        dispatch(mode, callbacks, WRAP, 1, operation, policy=policy)
    assert (raised.value.callback, raised.value.value) == (callbacks[1], "bare")
    assert operation.calls == [1]


def test_continue_on_error_steps_over_two_raising_wraps_running_once(mode: str, kind: str) -> None:
    """An outer wrap raising after ``call_next`` and an inner one raising before it: both are
    stepped over and the operation runs once; the first error raised is the inner one's."""
    operation = Op()
    first = Boom("inner, first")

    async def raise_after(ctx: int, call_next: CallNext) -> Any:
        await call_next(ctx)
        raise Boom("outer, second")

    callbacks = [wrap(mode, kind, "After", raise_after), wrap(mode, kind, "I", raising(first))]
    policy = DispatchPolicy(continue_on_error=True)
    with pytest.raises(Boom) as raised:
        dispatch(mode, callbacks, WRAP, 1, operation, policy=policy)
    assert raised.value is first
    assert operation.calls == [1]


def test_continue_on_error_without_errors_returns_the_outcome(mode: str, kind: str) -> None:
    """With nothing raised, ``continue_on_error`` gives the outcome as the default does."""
    outcome: Outcome[str] = Success("x")
    callbacks = [wrap(mode, kind, name, identity) for name in "AB"]
    policy = DispatchPolicy(continue_on_error=True)
    assert dispatch(mode, callbacks, WRAP, 1, lambda ctx: outcome, policy=policy) is outcome


# -- identity chains ------------------------------------------------------------------------


def _identity_chain(mode: str, kinds: list[str]) -> list[object]:
    return [wrap(mode, kind, f"W{index}", identity) for index, kind in enumerate(kinds)]


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(KINDS), max_size=12),
    fails=st.booleans(),
    traced=st.booleans(),
    ctx=st.integers(),
)
def test_an_identity_chain_is_no_chain_sync(
    kinds: list[str], fails: bool, traced: bool, ctx: int
) -> None:
    """Identity wraps, any number, modules or instances, are indistinguishable from none."""
    error = Boom("down")
    outcomes: list[Outcome[str]] = []
    calls: list[list[object]] = []
    for callbacks in ([], _identity_chain("sync", kinds)):
        operation = Op(fail=error if fails else None)
        trace = Trace() if traced else None
        outcomes.append(run_wrap(callbacks, WRAP, ctx, operation, trace=trace))
        calls.append(operation.calls)
        assert trace is None or trace.callback is None
    bare, wrapped = outcomes
    assert calls[0] == calls[1] == [ctx]
    if fails:
        assert type(wrapped) is Failure
        assert wrapped.failure() is bare.failure() is error
    else:
        assert wrapped == bare == Success(str(ctx))


@settings(max_examples=30, deadline=None)
@given(kinds=st.lists(st.sampled_from(KINDS), max_size=12), fails=st.booleans())
def test_an_identity_chain_is_no_chain_async(kinds: list[str], fails: bool) -> None:
    """The same for ``arun_wrap``: the very outcome the operation gave comes back."""
    outcome: Outcome[str] = Failure(Boom()) if fails else Success("x")
    calls: list[int] = []

    async def operation(ctx: int) -> Outcome[str]:
        calls.append(ctx)
        return outcome

    async def both() -> tuple[Outcome[str], Outcome[str]]:
        bare = await arun_wrap([], WRAP, 7, operation)
        wrapped = await arun_wrap(_identity_chain("async", kinds), WRAP, 7, operation)
        return bare, wrapped

    bare, wrapped = asyncio.run(both())
    assert bare is wrapped is outcome
    assert calls == [7, 7]
