"""Property tests: dispatch over any list of callbacks obeys the dispatch rules.

Each generated callback does one small ``Step`` at every law point (or has no method
at all, for ``"skip"``). The reference semantics below work on the steps alone, so a
dispatch result is compared with an answer computed without ``hooks``' dispatch.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from hooks import (
    AfterPoint,
    BeforePoint,
    BeforeResult,
    Cont,
    ErrorPoint,
    ErrorResult,
    Fallback,
    Halt,
    Outcome,
    Retry,
    Trace,
    arun_after,
    arun_before,
    arun_on_error,
    run_after,
    run_before,
    run_on_error,
)

BEFORE: BeforePoint[int, str] = BeforePoint("before_law")
AFTER: AfterPoint[int, int] = AfterPoint("after_law")
ON_ERROR: ErrorPoint[int, str] = ErrorPoint("on_law_error")

ERRORS: tuple[Exception, ...] = (ValueError("a"), KeyError("b"), RuntimeError("c"))
"""The errors ``Failure`` steps carry; shared objects, so equal failures compare equal."""

BEFORE_OPS = ["add", "mul", "halt", "halt_even", "skip"]
AFTER_OPS = ["map", "fail", "recover", "replace", "keep", "skip"]
ERROR_OPS = ["keep", "replace", "retry", "fallback", "retry_if", "skip"]

LAWS = settings(max_examples=60, deadline=None, database=None)


class LawError(Exception):
    """Raised by a ``"raise"`` step."""


@dataclass(frozen=True)
class Step:
    """What one callback does: an operation and a small integer argument."""

    op: str
    arg: int


@dataclass(frozen=True)
class Raised:
    """A dispatch that raised ``LawError(*args)``."""

    args: tuple[object, ...]


def before_step(step: Step, ctx: int) -> BeforeResult[int, str]:
    """The before result of ``step`` on ``ctx``."""
    if step.op == "add":
        return Cont(ctx + step.arg)
    if step.op == "mul":
        return Cont(ctx * step.arg)
    if step.op == "halt":
        return Halt("" if step.arg == 0 else str(step.arg))  # "" checks that falsy halts
    if step.op == "halt_even":
        return Halt(f"even {ctx}") if ctx % 2 == 0 else Cont(ctx)
    assert step.op == "raise", step
    raise LawError(step.arg)


def after_step(step: Step, outcome: Outcome[int], ctx: int) -> Outcome[int]:
    """The outcome ``step`` makes of ``outcome``."""
    error = ERRORS[step.arg % len(ERRORS)]
    if step.op == "raise":
        raise LawError(step.arg)
    if isinstance(outcome, Success):
        if step.op == "map":
            return Success(outcome.unwrap() * step.arg + ctx)
        if step.op == "fail":
            return Failure(error)
        return outcome
    if step.op == "recover":
        return Success(step.arg)
    if step.op == "replace":
        return Failure(error)
    return outcome


def error_step(step: Step, failure: Failure[Exception], ctx: int) -> ErrorResult[int, str]:
    """The error result of ``step`` on ``failure``."""
    error = ERRORS[step.arg % len(ERRORS)]
    if step.op == "keep":
        return failure
    if step.op == "replace":
        return Failure(error)
    if step.op == "retry":
        return Retry(ctx + step.arg, delay=None if step.arg < 0 else float(step.arg))
    if step.op == "fallback":
        return Fallback(str(step.arg))
    if step.op == "retry_if":
        return Retry(ctx) if failure.failure() is error else failure
    assert step.op == "raise", step
    raise LawError(step.arg)


class Hook:
    """A callback doing its step at every law point, logging its index when called."""

    def __init__(self, index: int, step: Step, log: list[int]) -> None:
        self.index = index
        self.step = step
        self.log = log

    def before_law(self, ctx: int, /) -> BeforeResult[int, str]:
        self.log.append(self.index)
        return before_step(self.step, ctx)

    def after_law(self, outcome: Outcome[int], ctx: int, /) -> Outcome[int]:
        self.log.append(self.index)
        return after_step(self.step, outcome, ctx)

    def on_law_error(self, failure: Failure[Exception], ctx: int, /) -> ErrorResult[int, str]:
        self.log.append(self.index)
        return error_step(self.step, failure, ctx)


class AsyncHook:
    """``Hook`` with ``async def`` methods that suspend once before answering."""

    def __init__(self, index: int, step: Step, log: list[int]) -> None:
        self.index = index
        self.step = step
        self.log = log

    async def before_law(self, ctx: int, /) -> BeforeResult[int, str]:
        self.log.append(self.index)
        await asyncio.sleep(0)
        return before_step(self.step, ctx)

    async def after_law(self, outcome: Outcome[int], ctx: int, /) -> Outcome[int]:
        self.log.append(self.index)
        await asyncio.sleep(0)
        return after_step(self.step, outcome, ctx)

    async def on_law_error(self, failure: Failure[Exception], ctx: int, /) -> ErrorResult[int, str]:
        self.log.append(self.index)
        await asyncio.sleep(0)
        return error_step(self.step, failure, ctx)


class Bare:
    """A callback without any law method: an observer."""

    def on_event(self, event: object, /) -> None:
        """Ignore the event."""


def build(steps: list[Step], log: list[int], asyncs: list[bool] | None = None) -> list[object]:
    """One callback per step; ``asyncs[i]`` makes the i-th one async."""
    callbacks: list[object] = []
    for index, step in enumerate(steps):
        if step.op == "skip":
            callbacks.append(Bare())
        elif asyncs is not None and asyncs[index]:
            callbacks.append(AsyncHook(index, step, log))
        else:
            callbacks.append(Hook(index, step, log))
    return callbacks


def observe(call: Callable[[], object]) -> object:
    """What ``call`` returned, or ``Raised`` when it raised ``LawError`` (checking its note)."""
    try:
        return call()
    except LawError as exc:
        raised = exc
    assert len(raised.__notes__) == 1
    assert "at hook point" in raised.__notes__[0]
    return Raised(raised.args)


def steps_of(ops: list[str]) -> st.SearchStrategy[list[Step]]:
    """Lists of up to eight steps drawn from ``ops``."""
    return st.lists(st.builds(Step, st.sampled_from(ops), st.integers(-3, 3)), max_size=8)


def ran(steps: list[Step], upto: int | None = None) -> list[int]:
    """Indices of the steps with a method, up to and including ``upto``."""
    end = len(steps) if upto is None else upto + 1
    return [index for index, step in enumerate(steps[:end]) if step.op != "skip"]


outcomes: st.SearchStrategy[Outcome[int]] = st.one_of(
    st.integers(-10, 10).map(Success), st.sampled_from(ERRORS).map(Failure)
)
failures: st.SearchStrategy[Failure[Exception]] = st.sampled_from(ERRORS).map(Failure)
contexts = st.integers(-5, 5)


# -- reference semantics ------------------------------------------------------------


def reference_before(steps: list[Step], ctx: int) -> tuple[object, list[int]]:
    """The first Halt, or Cont of the fully threaded context; and which steps ran."""
    for index, step in enumerate(steps):
        if step.op == "skip":
            continue
        try:
            result = before_step(step, ctx)
        except LawError as exc:
            return Raised(exc.args), ran(steps, index)
        if isinstance(result, Halt):
            return result, ran(steps, index)
        ctx = result.ctx
    return Cont(ctx), ran(steps)


def reference_on_error(
    steps: list[Step], failure: Failure[Exception], ctx: int
) -> tuple[object, list[int]]:
    """The first Retry or Fallback, or the last Failure; and which steps ran."""
    for index, step in enumerate(steps):
        if step.op == "skip":
            continue
        result = error_step(step, failure, ctx)
        if not isinstance(result, Failure):
            return result, ran(steps, index)
        failure = result
    return failure, ran(steps)


# -- (a) - (c): the sync dispatchers equal the reference ----------------------------


@LAWS
@given(steps=steps_of(AFTER_OPS), outcome=outcomes, ctx=contexts)
def test_run_after_is_the_left_fold(steps: list[Step], outcome: Outcome[int], ctx: int) -> None:
    """``run_after`` equals the left fold of the callbacks' after methods over the outcome."""
    log: list[int] = []
    with_method = [step for step in steps if step.op != "skip"]
    expected = functools.reduce(lambda acc, step: after_step(step, acc, ctx), with_method, outcome)
    assert run_after(build(steps, log), AFTER, outcome, ctx) == expected
    assert log == ran(steps)


@LAWS
@given(steps=steps_of(BEFORE_OPS), ctx=contexts)
def test_run_before_is_the_first_halt_or_the_threaded_context(steps: list[Step], ctx: int) -> None:
    """``run_before`` returns the first Halt, or Cont of the context threaded through all."""
    log: list[int] = []
    expected, expected_log = reference_before(steps, ctx)
    assert run_before(build(steps, log), BEFORE, ctx) == expected
    assert log == expected_log


@LAWS
@given(steps=steps_of(ERROR_OPS), failure=failures, ctx=contexts)
def test_run_on_error_is_the_first_recovery_or_the_last_failure(
    steps: list[Step], failure: Failure[Exception], ctx: int
) -> None:
    """``run_on_error`` returns the first Retry or Fallback, or else the last Failure."""
    log: list[int] = []
    expected, expected_log = reference_on_error(steps, failure, ctx)
    assert run_on_error(build(steps, log), ON_ERROR, failure, ctx) == expected
    assert log == expected_log


# -- (d): the async forms equal the sync forms --------------------------------------


def with_async_flags(ops: list[str]) -> st.SearchStrategy[tuple[list[Step], list[bool]]]:
    """Steps from ``ops`` (and ``"raise"``), each with a flag making its callback async."""
    return steps_of([*ops, "raise"]).flatmap(
        lambda steps: st.tuples(
            st.just(steps), st.lists(st.booleans(), min_size=len(steps), max_size=len(steps))
        )
    )


@LAWS
@given(drawn=with_async_flags(BEFORE_OPS), ctx=contexts)
def test_arun_before_equals_run_before(drawn: tuple[list[Step], list[bool]], ctx: int) -> None:
    """``arun_before`` on mixed async and plain callbacks equals ``run_before`` on plain ones."""
    steps, asyncs = drawn
    sync_log: list[int] = []
    async_log: list[int] = []
    sync = observe(lambda: run_before(build(steps, sync_log), BEFORE, ctx))
    callbacks = build(steps, async_log, asyncs)
    got = observe(lambda: asyncio.run(arun_before(callbacks, BEFORE, ctx)))
    assert got == sync
    assert async_log == sync_log
    assert (sync, sync_log) == reference_before(steps, ctx)


@LAWS
@given(drawn=with_async_flags(AFTER_OPS), outcome=outcomes, ctx=contexts)
def test_arun_after_equals_run_after(
    drawn: tuple[list[Step], list[bool]], outcome: Outcome[int], ctx: int
) -> None:
    """``arun_after`` on mixed async and plain callbacks equals ``run_after`` on plain ones."""
    steps, asyncs = drawn
    sync_log: list[int] = []
    async_log: list[int] = []
    sync = observe(lambda: run_after(build(steps, sync_log), AFTER, outcome, ctx))
    callbacks = build(steps, async_log, asyncs)
    got = observe(lambda: asyncio.run(arun_after(callbacks, AFTER, outcome, ctx)))
    assert got == sync
    assert async_log == sync_log


@LAWS
@given(drawn=with_async_flags(ERROR_OPS), failure=failures, ctx=contexts)
def test_arun_on_error_equals_run_on_error(
    drawn: tuple[list[Step], list[bool]], failure: Failure[Exception], ctx: int
) -> None:
    """``arun_on_error`` over mixed callbacks equals ``run_on_error`` over plain ones."""
    steps, asyncs = drawn
    sync_log: list[int] = []
    async_log: list[int] = []
    sync = observe(lambda: run_on_error(build(steps, sync_log), ON_ERROR, failure, ctx))
    callbacks = build(steps, async_log, asyncs)
    got = observe(lambda: asyncio.run(arun_on_error(callbacks, ON_ERROR, failure, ctx)))
    assert got == sync
    assert async_log == sync_log


# -- (e): the general path (taken with a trace) equals the fast path ---------------


def decided(steps: list[Step], ctx: int, which: str, given: object = None) -> int | None:
    """The index of the callback a ``Trace`` must name, by the reference semantics.

    before: the halting one, else the last whose ``Cont`` carried a different context;
    after and error: the recovering one, else the last that handed on a different
    outcome or failure (different: neither the same object nor equal); the raising one
    whenever one raised.
    """
    decider: int | None = None
    current = ctx if which == "before" else given
    for index, step in enumerate(steps):
        if step.op == "skip":
            continue
        try:
            if which == "before":
                result: object = before_step(step, ctx)
            elif which == "after":
                result = after_step(step, current, ctx)  # type: ignore[arg-type]
            else:
                result = error_step(step, current, ctx)  # type: ignore[arg-type]
        except LawError:
            return index
        if isinstance(result, Halt | Retry | Fallback):
            return index
        handed = result.ctx if isinstance(result, Cont) else result
        if handed is not current and handed != current:
            decider = index
        current = handed
        if which == "before":
            ctx = current  # type: ignore[assignment]
    return decider


def named(callbacks: list[object], index: int | None) -> object:
    """The callback at ``index``, or ``None``."""
    return None if index is None else callbacks[index]


@LAWS
@given(steps=steps_of([*BEFORE_OPS, "raise"]), ctx=contexts)
def test_traced_before_equals_the_fast_path(steps: list[Step], ctx: int) -> None:
    """``run_before`` with a trace equals the fast path and names the deciding callback."""
    fast_log: list[int] = []
    slow_log: list[int] = []
    fast = observe(lambda: run_before(build(steps, fast_log), BEFORE, ctx))
    callbacks = build(steps, slow_log)
    trace = Trace()
    slow = observe(lambda: run_before(callbacks, BEFORE, ctx, trace=trace))
    assert slow == fast
    assert slow_log == fast_log
    assert trace.callback is named(callbacks, decided(steps, ctx, "before"))


@LAWS
@given(steps=steps_of([*AFTER_OPS, "raise"]), outcome=outcomes, ctx=contexts)
def test_traced_after_equals_the_fast_path(
    steps: list[Step], outcome: Outcome[int], ctx: int
) -> None:
    """``run_after`` with a trace equals the fast path and names the deciding callback."""
    fast_log: list[int] = []
    slow_log: list[int] = []
    fast = observe(lambda: run_after(build(steps, fast_log), AFTER, outcome, ctx))
    callbacks = build(steps, slow_log)
    trace = Trace()
    slow = observe(lambda: run_after(callbacks, AFTER, outcome, ctx, trace=trace))
    assert slow == fast
    assert slow_log == fast_log
    assert trace.callback is named(callbacks, decided(steps, ctx, "after", outcome))


@LAWS
@given(steps=steps_of([*ERROR_OPS, "raise"]), failure=failures, ctx=contexts)
def test_traced_on_error_equals_the_fast_path(
    steps: list[Step], failure: Failure[Exception], ctx: int
) -> None:
    """``run_on_error`` with a trace equals the fast path and names the deciding callback."""
    fast_log: list[int] = []
    slow_log: list[int] = []
    fast = observe(lambda: run_on_error(build(steps, fast_log), ON_ERROR, failure, ctx))
    callbacks = build(steps, slow_log)
    trace = Trace()
    slow = observe(lambda: run_on_error(callbacks, ON_ERROR, failure, ctx, trace=trace))
    assert slow == fast
    assert slow_log == fast_log
    assert trace.callback is named(callbacks, decided(steps, ctx, "error", failure))


@LAWS
@given(drawn=with_async_flags(BEFORE_OPS), ctx=contexts)
def test_traced_arun_before_names_the_same_callback(
    drawn: tuple[list[Step], list[bool]], ctx: int
) -> None:
    """``arun_before`` with a trace, over mixed callbacks, names what ``run_before`` names."""
    steps, asyncs = drawn
    callbacks = build(steps, [], asyncs)
    trace = Trace()
    observe(lambda: asyncio.run(arun_before(callbacks, BEFORE, ctx, trace=trace)))
    assert trace.callback is named(callbacks, decided(steps, ctx, "before"))
