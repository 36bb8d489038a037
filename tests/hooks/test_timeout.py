"""Tests for per-hook deadlines: ``with_timeout``, ``HookTimeout`` and ``TimeoutRecord``.

Real asyncio timing, kept tiny: a slow hook awaits an ``Event`` that is never set
against a deadline of ``FAST`` seconds; a prompt one returns at once.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import types
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from returns.result import Failure, Success

from hooks import (
    AFTER_MODEL,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    WRAP_MODEL,
    WRAP_TOOL,
    AgentContext,
    Cont,
    Fallback,
    Halt,
    HookError,
    HookEvent,
    HookTimeout,
    InvalidCallbacks,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    TimedCallback,
    TimeoutRecord,
    ToolCall,
    ToolContext,
    ToolResult,
    Trace,
    _timed,
    arun_after,
    arun_before,
    arun_on_error,
    arun_wrap,
    compile_callbacks,
    run_before,
    with_timeout,
)

FAST = 0.01  # the deadline of every timed-out hook here
INVOCATION = Invocation("run", "user", "agent")
MODEL_CTX = ModelContext(INVOCATION, ModelRequest((Message("user", "hi"),)))
TOOL_CTX = ToolContext(INVOCATION, ToolCall("call-1", "add", {"a": 1}))
AGENT_CTX = AgentContext(INVOCATION, Message("user", "hi"))
RESPONSE = ModelResponse("hello")


async def forever() -> None:
    """Wait for an event nobody sets: a hook that overruns any deadline."""
    await asyncio.Event().wait()


class Slow:
    """A callback whose every hook overruns its deadline."""

    async def before_model(self, ctx: ModelContext, /) -> object:
        await forever()
        return Cont(ctx)

    async def before_tool(self, ctx: ToolContext, /) -> object:
        await forever()
        return Cont(ctx)

    async def before_agent(self, ctx: AgentContext, /) -> object:
        await forever()
        return Cont(ctx)

    async def after_model(self, outcome: object, ctx: ModelContext, /) -> object:
        await forever()
        return outcome

    async def on_model_error(self, failure: object, ctx: ModelContext, /) -> object:
        await forever()
        return failure

    async def after_tool(self, outcome: object, ctx: ToolContext, /) -> object:
        await forever()
        return outcome

    async def on_tool_error(self, failure: object, ctx: ToolContext, /) -> object:
        await forever()
        return failure


class Prompt:
    """A callback whose hooks answer at once, each with a result of its own, recording what
    they were given."""

    def __init__(self) -> None:
        self.given: list[tuple[object, ...]] = []

    async def before_model(self, ctx: ModelContext, /) -> object:
        self.given.append((ctx,))
        return Halt(RESPONSE)

    async def after_model(self, outcome: object, ctx: ModelContext, /) -> object:
        self.given.append((outcome, ctx))
        return Success(ModelResponse("after"))

    async def on_model_error(self, failure: object, ctx: ModelContext, /) -> object:
        self.given.append((failure, ctx))
        return Fallback(RESPONSE)

    async def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Awaitable[object]], /
    ) -> object:
        self.given.append((ctx,))
        await call_next(ctx)
        return Success(ModelResponse("wrapped"))


def run(coroutine: Awaitable[Any]) -> Any:
    """Run ``coroutine`` in a fresh event loop."""

    async def main() -> Any:
        return await coroutine

    return asyncio.run(main())


async def operation(ctx: ModelContext) -> Outcome[ModelResponse]:
    """A model call that answers at once."""
    return Success(RESPONSE)


@pytest.fixture(autouse=True)
def fresh_classes() -> None:
    """Each test builds the wrapper classes it uses, so what it checks is what is built now
    (mutation testing reruns tests in a process that has built them already)."""
    _timed._classes.clear()


# -- building the wrapper ----------------------------------------------------------------


def test_the_wrapper_has_exactly_the_hook_methods_of_the_callback() -> None:
    """The wrapper exposes the callback's hook methods, as async methods of the same arity,
    and nothing else that looks like a hook."""

    class Guard:
        limit = 3
        before_limit = 3  # hook-shaped, but data: not a hook

        async def before_tool(self, ctx: ToolContext, /) -> object:
            return Cont(ctx)

        async def wrap_model(self, ctx: object, call_next: object, /) -> object:
            return None

        def helper(self) -> None:
            """Not a hook: not exposed."""

    timed = with_timeout(Guard(), 1.0, fail="closed")
    assert isinstance(timed, TimedCallback)
    hooks = {name for name in dir(timed) if name.startswith(("before_", "after_", "on_", "wrap_"))}
    assert hooks == {"before_tool", "wrap_model"}
    assert not hasattr(timed, "helper")
    assert asyncio.iscoroutinefunction(timed.before_tool)  # type: ignore[attr-defined]
    compiled = compile_callbacks([timed])
    assert len(compiled.methods(BEFORE_TOOL)) == 1
    assert len(compiled.methods(WRAP_MODEL)) == 1
    assert compiled.methods(AFTER_TOOL) == ()


def test_wrappers_of_one_shape_share_one_documented_slotted_class() -> None:
    """Two callbacks with the same hook methods get wrappers of one class: ``TimedCallback``
    by name, in ``hooks._timed``, documented, without a ``__dict__``."""
    first = with_timeout(Slow(), 1.0, fail="open")
    second = with_timeout(Slow(), 2.0, fail="closed")
    cls = type(first)
    assert type(second) is cls
    assert cls is not TimedCallback
    assert (cls.__name__, cls.__module__) == ("TimedCallback", "hooks._timed")
    assert cls.__doc__ == TimedCallback.__doc__
    assert not hasattr(first, "__dict__")


def test_the_wrapper_keeps_its_settings() -> None:
    """``callback``, ``seconds`` and ``fail`` are what was given; ``timeouts`` starts empty."""
    guard = Slow()
    timed = with_timeout(guard, 2, fail="open")
    assert timed.callback is guard
    assert timed.seconds == 2.0
    assert type(timed.seconds) is float
    assert timed.fail == "open"
    assert timed.timeouts == []
    assert repr(timed) == f"with_timeout({guard!r}, 2.0, fail='open')"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_on_event_is_passed_through(is_async: bool) -> None:
    """The callback's ``on_event`` is the wrapper's too, as it is (sync or async), unbounded."""
    events: list[HookEvent] = []
    event = HookEvent("before_model", "agent", "agent", "cont", 0.0)

    async def async_on_event(self: object, event: HookEvent, /) -> None:
        await asyncio.sleep(FAST * 2)  # longer than the deadline: an observer is not bounded
        events.append(event)

    def on_event(self: object, event: HookEvent, /) -> None:
        events.append(event)

    async def before_model(self: object, ctx: ModelContext, /) -> object:
        return Cont(ctx)

    cls = type(
        "Observed",
        (),
        {"on_event": async_on_event if is_async else on_event, "before_model": before_model},
    )
    timed: Any = with_timeout(cls(), FAST, fail="closed")
    assert asyncio.iscoroutinefunction(timed.on_event) is is_async
    if is_async:
        run(timed.on_event(event))
    else:
        timed.on_event(event)
    assert events == [event]
    assert compile_callbacks([timed]).chain("on_event", "event").fns


def test_a_module_can_be_bounded() -> None:
    """A module callback is bounded like an object."""

    async def before_model(ctx: ModelContext, /) -> object:
        await forever()
        return Cont(ctx)

    module = types.ModuleType("guards")
    module.before_model = before_model  # type: ignore[attr-defined]
    timed = with_timeout(module, FAST, fail="open")
    assert run(arun_before([timed], BEFORE_MODEL, MODEL_CTX)) == Cont(MODEL_CTX)
    assert [record.callback for record in timed.timeouts] == [module]


def test_a_plain_hook_method_is_refused() -> None:
    """A plain ``def`` hook cannot be pre-empted: ``with_timeout`` refuses it, naming it."""

    class Mixed:
        async def before_model(self, ctx: ModelContext, /) -> object:
            return Cont(ctx)

        def after_model(self, outcome: object, ctx: ModelContext, /) -> object:
            return outcome

    with pytest.raises(InvalidCallbacks) as raised:
        with_timeout(Mixed(), 1.0, fail="closed")
    assert str(raised.value).startswith("with_timeout: ")
    assert str(raised.value).endswith(
        "Mixed instance.after_model is a plain def, which cannot be pre-empted; make it async def"
    )
    assert raised.value.attribute == "after_model"


def test_an_undeclared_hook_shaped_method_is_refused() -> None:
    """A hook-shaped method of no declared point would be dropped: it is refused instead."""

    class Later:
        async def before_model(self, ctx: ModelContext, /) -> object:
            return Cont(ctx)

        async def before_fetch_not_declared(self, ctx: object, /) -> object:
            return Cont(ctx)

    later = Later()
    with pytest.raises(InvalidCallbacks) as raised:
        with_timeout(later, 1.0, fail="closed")
    assert str(raised.value).endswith(
        "Later instance.before_fetch_not_declared is no declared hook point yet; "
        "declare its point first"
    )
    assert raised.value.callback is later
    assert raised.value.attribute == "before_fetch_not_declared"


def test_a_callback_with_nothing_to_bound_is_refused() -> None:
    """An observer alone has no hook to bound."""
    observer = types.ModuleType("observer")
    observer.on_event = lambda event: None  # type: ignore[attr-defined]
    with pytest.raises(InvalidCallbacks) as raised:
        with_timeout(observer, 1.0, fail="open")
    assert str(raised.value) == "with_timeout: module 'observer' has no hook method to bound"
    assert raised.value.callback is observer
    assert raised.value.attribute is None


def test_the_callback_is_validated_first() -> None:
    """A misspelled hook or a class instead of an instance is refused as in a callbacks list."""

    class Typo:
        async def before_modle(self, ctx: ModelContext, /) -> object:
            return Cont(ctx)

    with pytest.raises(InvalidCallbacks, match="did you mean 'before_model'"):
        with_timeout(Typo(), 1.0, fail="open")
    with pytest.raises(InvalidCallbacks, match="pass an instance"):
        with_timeout(Slow, 1.0, fail="open")


@pytest.mark.parametrize("seconds", [0, -1, -0.5, math.inf, math.nan])
def test_seconds_must_be_above_zero_and_finite(seconds: float) -> None:
    """``seconds`` is a finite number of seconds above zero."""
    with pytest.raises(ValueError, match="seconds must be a finite number > 0"):
        with_timeout(Slow(), seconds, fail="closed")


@pytest.mark.parametrize("seconds", ["1", True, None])
def test_seconds_must_be_a_number(seconds: Any) -> None:
    """``seconds`` is an int or a float (a bool is neither here)."""
    with pytest.raises(TypeError) as raised:
        with_timeout(Slow(), seconds, fail="closed")
    name = type(seconds).__name__
    assert str(raised.value) == f"with_timeout: seconds must be an int or float, got {name}"


def test_fail_is_required_and_checked() -> None:
    """``fail`` has no default, and only ``"closed"`` or ``"open"`` are accepted."""
    with pytest.raises(TypeError):
        with_timeout(Slow(), 1.0)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="fail must be 'closed' or 'open', got 'maybe'"):
        with_timeout(Slow(), 1.0, fail="maybe")  # type: ignore[arg-type]


def test_sync_dispatch_refuses_the_wrapper() -> None:
    """The wrapper's hooks are async: a sync dispatch refuses it before anything runs."""
    with pytest.raises(InvalidCallbacks, match="is async; sync dispatch cannot await it"):
        run_before([with_timeout(Slow(), 1.0, fail="open")], BEFORE_MODEL, MODEL_CTX)


# -- in time ------------------------------------------------------------------------------


@pytest.mark.parametrize("fail", ["closed", "open"])
def test_a_prompt_hook_answers_as_itself(fail: Any) -> None:
    """A hook within its deadline is given what the wrapper was and gives its own result,
    whatever ``fail`` says."""
    prompt = Prompt()
    timed = with_timeout(prompt, 1.0, fail=fail)
    outcome: Outcome[ModelResponse] = Success(RESPONSE)
    failure: Failure[Exception] = Failure(ValueError("x"))

    async def main() -> list[object]:
        return [
            await arun_before([timed], BEFORE_MODEL, MODEL_CTX),
            await arun_after([timed], AFTER_MODEL, outcome, MODEL_CTX),
            await arun_on_error([timed], ON_MODEL_ERROR, failure, MODEL_CTX),
            await arun_wrap([timed], WRAP_MODEL, MODEL_CTX, operation),
        ]

    assert run(main()) == [
        Halt(RESPONSE),
        Success(ModelResponse("after")),
        Fallback(RESPONSE),
        Success(ModelResponse("wrapped")),
    ]
    expected = [(MODEL_CTX,), (outcome, MODEL_CTX), (failure, MODEL_CTX), (MODEL_CTX,)]
    assert [list(map(id, args)) for args in prompt.given] == [
        list(map(id, args)) for args in expected
    ]  # the very objects
    assert timed.timeouts == []


def test_a_hooks_own_timeout_error_is_not_a_deadline() -> None:
    """A ``TimeoutError`` the hook raises itself, in time, propagates as the hook's error."""

    class Raises:
        async def before_model(self, ctx: ModelContext, /) -> object:
            raise TimeoutError("upstream")

    timed = with_timeout(Raises(), 1.0, fail="open")
    with pytest.raises(TimeoutError, match="upstream") as raised:
        run(arun_before([timed], BEFORE_MODEL, MODEL_CTX))
    assert type(raised.value) is TimeoutError
    assert timed.timeouts == []


def test_cancelling_the_caller_is_not_a_timeout() -> None:
    """Cancellation from outside passes through the wrapper as ``CancelledError``."""
    timed = with_timeout(Slow(), 10.0, fail="open")

    async def main() -> None:
        task = asyncio.ensure_future(arun_before([timed], BEFORE_MODEL, MODEL_CTX))
        await asyncio.sleep(FAST)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    assert timed.timeouts == []


# -- fail closed ---------------------------------------------------------------------------


def test_closed_before_a_tool_halts_with_an_error_result() -> None:
    """At a point whose value is ``ToolResult`` the tool is refused with an error result."""
    timed = with_timeout(Slow(), FAST, fail="closed")
    result = run(arun_before([timed], BEFORE_TOOL, TOOL_CTX))
    assert result == Halt(
        ToolResult("before_tool of Slow instance timed out after 0.01s", is_error=True)
    )


@pytest.mark.parametrize(("point", "ctx"), [(BEFORE_MODEL, MODEL_CTX), (BEFORE_AGENT, AGENT_CTX)])
def test_closed_before_a_model_or_agent_raises(point: Any, ctx: object) -> None:
    """At other before points ``HookTimeout`` is raised, noted as the callback's."""
    guard = Slow()
    timed = with_timeout(guard, FAST, fail="closed")
    with pytest.raises(HookTimeout) as raised:
        run(arun_before([timed], point, ctx))
    error = raised.value
    assert isinstance(error, HookError)
    assert isinstance(error, TimeoutError)
    assert (error.callback, error.point, error.seconds) == (guard, point.name, FAST)
    assert str(error) == f"{point.name} of Slow instance timed out after 0.01s"
    assert error.__notes__ == [
        "raised in callback Slow instance under with_timeout(0.01s, fail='closed') "
        f"at hook point {point.name!r}"
    ]


@pytest.mark.parametrize(
    ("point", "ctx", "value"),
    [(AFTER_MODEL, MODEL_CTX, RESPONSE), (AFTER_TOOL, TOOL_CTX, ToolResult("2"))],
)
def test_closed_after_gives_a_failure(point: Any, ctx: object, value: object) -> None:
    """An after hook that overran turns the outcome into ``Failure(HookTimeout)``; a failed
    outcome's error is its context."""
    guard = Slow()
    timed = with_timeout(guard, FAST, fail="closed")
    result = run(arun_after([timed], point, Success(value), ctx))
    assert type(result) is Failure
    assert isinstance(result.failure(), HookTimeout)
    assert (result.failure().callback, result.failure().point) == (guard, point.name)
    assert result.failure().__context__ is None
    error = ValueError("model down")
    result = run(arun_after([timed], point, Failure(error), ctx))
    assert result.failure().__context__ is error


@pytest.mark.parametrize(("point", "ctx"), [(ON_MODEL_ERROR, MODEL_CTX), (ON_TOOL_ERROR, TOOL_CTX)])
def test_closed_error_gives_a_failure_chained_to_the_error(point: Any, ctx: object) -> None:
    """An error hook that overran passes on ``Failure(HookTimeout)`` chained to the error."""
    timed = with_timeout(Slow(), FAST, fail="closed")
    error = ValueError("down")
    result = run(arun_on_error([timed], point, Failure(error), ctx))
    assert type(result) is Failure
    timeout = result.failure()
    assert isinstance(timeout, HookTimeout)
    assert timeout.point == point.name
    assert timeout.callback is timed.callback
    assert timeout.__context__ is error


# -- fail open ----------------------------------------------------------------------------


def test_open_skips_each_kind_of_hook_and_records_it(caplog: pytest.LogCaptureFixture) -> None:
    """Fail open: before gives ``Cont(ctx)``, after the outcome, error the failure, each the
    very object given; each overrun is logged and recorded."""
    guard = Slow()
    timed = with_timeout(guard, FAST, fail="open")
    outcome: Outcome[ModelResponse] = Success(RESPONSE)
    failure: Failure[Exception] = Failure(ValueError("down"))

    async def main() -> list[object]:
        return [
            await arun_before([timed], BEFORE_MODEL, MODEL_CTX),
            await arun_after([timed], AFTER_MODEL, outcome, MODEL_CTX),
            await arun_on_error([timed], ON_MODEL_ERROR, failure, MODEL_CTX),
        ]

    started = time.time()
    with caplog.at_level(logging.WARNING, logger="hooks"):
        cont, after, error = run(main())
    assert type(cont) is Cont
    assert cont.ctx is MODEL_CTX
    assert after is outcome
    assert error is failure
    points = ["before_model", "after_model", "on_model_error"]
    assert [record.point for record in timed.timeouts] == points
    for record in timed.timeouts:
        assert type(record) is TimeoutRecord
        assert (record.callback, record.seconds, record.fail) == (guard, FAST, "open")
        assert started <= record.time <= time.time()
    assert [r.getMessage() for r in caplog.records] == [
        f"{point} of Slow instance timed out after 0.01s; fail='open': the hook is skipped"
        for point in points
    ]
    assert {r.name for r in caplog.records} == {"hooks"}


def test_closed_overruns_are_recorded_and_logged_too(caplog: pytest.LogCaptureFixture) -> None:
    """A refused operation is recorded and logged as well, with ``fail="closed"``."""
    timed = with_timeout(Slow(), FAST, fail="closed")
    with caplog.at_level(logging.WARNING, logger="hooks"):
        run(arun_before([timed], BEFORE_TOOL, TOOL_CTX))
    assert [(r.point, r.fail) for r in timed.timeouts] == [("before_tool", "closed")]
    assert [r.getMessage() for r in caplog.records] == [
        "before_tool of Slow instance timed out after 0.01s; fail='closed': "
        "the operation is refused"
    ]


def test_the_trace_names_the_wrapper() -> None:
    """Messages and traces name the wrapped callback and its deadline."""
    timed = with_timeout(Slow(), FAST, fail="closed")
    trace = Trace()
    run(arun_before([timed], BEFORE_TOOL, TOOL_CTX, trace=trace))
    assert trace.callback is timed
    assert trace.description == "Slow instance under with_timeout(0.01s, fail='closed')"


# -- wraps: the deadline stops while call_next runs ----------------------------------------


class Around:
    """A wrap whose own work may be slow before or after ``call_next``."""

    def __init__(self, *, before: bool = False, after: bool = False, calls: int = 1) -> None:
        self.before = before
        self.after = after
        self.calls = calls

    async def wrap_model(
        self,
        ctx: ModelContext,
        call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
        /,
    ) -> Outcome[ModelResponse]:
        if self.before:
            await forever()
        outcome: Outcome[ModelResponse] = Failure(ValueError("never called"))
        for _ in range(self.calls):
            outcome = await call_next(ctx)
            await asyncio.sleep(0)  # some work of its own, well within the deadline
        if self.after:
            await forever()
        return outcome


class SlowOperation:
    """A model call taking ``seconds`` (the n-th call the n-th of them, if several), counting
    its calls."""

    def __init__(self, *seconds: float) -> None:
        self.seconds = seconds
        self.calls = 0

    async def __call__(self, ctx: ModelContext) -> Outcome[ModelResponse]:
        self.calls += 1
        call = self.calls
        await asyncio.sleep(self.seconds[min(call, len(self.seconds)) - 1])
        return Success(ModelResponse(f"call {call}"))


def test_a_wraps_deadline_does_not_count_the_operation() -> None:
    """An operation slower than the wrap's deadline is not cut short: only the wrap's own
    work is bounded (here, twice, since the wrap calls ``call_next`` twice)."""
    op = SlowOperation(FAST * 3)
    timed = with_timeout(Around(calls=2), FAST, fail="closed")
    assert run(arun_wrap([timed], WRAP_MODEL, MODEL_CTX, op)) == Success(ModelResponse("call 2"))
    assert op.calls == 2
    assert timed.timeouts == []


@pytest.mark.parametrize("fail", ["closed", "open"])
def test_a_wrap_slow_after_call_next(fail: Any) -> None:
    """Overrunning after ``call_next``: closed gives ``Failure(HookTimeout)``, open gives what
    ``call_next`` gave back, without calling it again."""
    op = SlowOperation(0)
    timed = with_timeout(Around(after=True), FAST, fail=fail)
    result = run(arun_wrap([timed], WRAP_MODEL, MODEL_CTX, op))
    if fail == "open":
        assert result == Success(ModelResponse("call 1"))
    else:
        assert isinstance(result.failure(), HookTimeout)
    assert op.calls == 1
    assert [r.point for r in timed.timeouts] == ["wrap_model"]


@pytest.mark.parametrize("fail", ["closed", "open"])
def test_a_wrap_slow_before_call_next(fail: Any) -> None:
    """Overrunning before ``call_next``: closed never runs the operation; open runs it now,
    once."""
    op = SlowOperation(0)
    timed = with_timeout(Around(before=True), FAST, fail=fail)
    result = run(arun_wrap([timed], WRAP_MODEL, MODEL_CTX, op))
    if fail == "open":
        assert result == Success(ModelResponse("call 1"))
        assert op.calls == 1
    else:
        assert isinstance(result.failure(), HookTimeout)
        assert op.calls == 0


def test_a_wraps_deadline_stops_while_any_call_next_runs() -> None:
    """Two ``call_next`` at once, each slower than the deadline, the second still running
    long after the first is done: the deadline stays stopped until both are, then runs
    again for the wrap's own work."""

    class Both:
        def __init__(self, *, slow_after: bool) -> None:
            self.slow_after = slow_after

        async def wrap_model(
            self,
            ctx: ModelContext,
            call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
            /,
        ) -> Outcome[ModelResponse]:
            first = asyncio.ensure_future(call_next(ctx))
            await asyncio.sleep(FAST)  # the first is running: the deadline is stopped
            second = await call_next(ctx)
            await first
            if self.slow_after:
                await forever()
            return second

    for slow_after, overruns in [(False, []), (True, ["wrap_model"])]:
        op = SlowOperation(FAST * 3, FAST * 8)
        timed = with_timeout(Both(slow_after=slow_after), FAST * 2, fail="open")
        result = run(arun_wrap([timed], WRAP_MODEL, MODEL_CTX, op))
        assert result == Success(ModelResponse("call 2"))
        assert op.calls == 2
        assert [r.point for r in timed.timeouts] == overruns


def test_a_timed_wraps_call_next_works_after_the_wrap_returned() -> None:
    """A ``call_next`` kept by a wrap and called after it returned runs, deadline or not."""
    kept: list[Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]]] = []

    class Keeps:
        async def wrap_model(
            self,
            ctx: ModelContext,
            call_next: Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]],
            /,
        ) -> Outcome[ModelResponse]:
            kept.append(call_next)
            return await call_next(ctx)

    async def main() -> Outcome[ModelResponse]:
        op = SlowOperation(0)
        timed = with_timeout(Keeps(), 1.0, fail="closed")
        await arun_wrap([timed], WRAP_MODEL, MODEL_CTX, op)
        return await kept[0](MODEL_CTX)

    assert run(main()) == Success(ModelResponse("call 2"))


def test_a_timed_wrap_nests_with_other_wraps() -> None:
    """A bounded wrap around others (and inside another) keeps the onion and its deadline
    stops for the whole inside."""
    op = SlowOperation(FAST * 3)
    outer = with_timeout(Around(), FAST, fail="closed")
    inner = with_timeout(Around(), FAST, fail="closed")
    result = run(arun_wrap([outer, Around(), inner], WRAP_MODEL, MODEL_CTX, op))
    assert result == Success(ModelResponse("call 1"))
    assert outer.timeouts == inner.timeouts == []


def test_wrap_tool_closed_gives_a_failure() -> None:
    """At ``WRAP_TOOL`` an overrun also gives ``Failure(HookTimeout)``: the error hooks decide."""

    class Slowly:
        async def wrap_tool(
            self,
            ctx: ToolContext,
            call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
            /,
        ) -> Outcome[ToolResult]:
            await forever()
            return await call_next(ctx)

    async def tool(ctx: ToolContext) -> Outcome[ToolResult]:
        return Success(ToolResult("2"))

    slowly = Slowly()
    timed = with_timeout(slowly, FAST, fail="closed")
    result = run(arun_wrap([timed], WRAP_TOOL, TOOL_CTX, tool))
    assert isinstance(result.failure(), HookTimeout)
    assert (result.failure().callback, result.failure().point) == (slowly, "wrap_tool")
    assert result.failure().__context__ is None
