"""Async dispatch: the ``arun_*`` twins of ``run_*``, for async code.

Each compiles the list and looks up the point's chain. A chain without an ``async
def`` method runs the sync dispatch as it is -- fast loops, policy and trace included
-- since there is nothing to await; otherwise the general path awaits the async
methods and calls the plain ones.
"""

from __future__ import annotations

from typing import TypeVar, overload

from returns.result import Failure

from hooks._compile import compile_callbacks
from hooks._dispatch import Callbacks, run_after, run_before, run_on_error
from hooks._points import AfterPoint, BeforePoint, ErrorPoint, PausablePoint
from hooks._policy import DEFAULT_POLICY, DispatchPolicy, Trace
from hooks._results import BeforeResult, ErrorResult, Outcome, PausableResult
from hooks._steps import arun_steps

__all__ = ["arun_after", "arun_before", "arun_on_error"]

C = TypeVar("C")
T = TypeVar("T")


@overload
async def arun_before(
    callbacks: Callbacks,
    point: PausablePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = ...,
    trace: Trace | None = ...,
) -> PausableResult[C, T]: ...
@overload
async def arun_before(
    callbacks: Callbacks,
    point: BeforePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = ...,
    trace: Trace | None = ...,
) -> BeforeResult[C, T]: ...
async def arun_before(
    callbacks: Callbacks,
    point: BeforePoint[C, T] | PausablePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> PausableResult[C, T]:
    """``run_before`` for async code: awaits ``async def`` methods, calls plain ones."""
    compiled = compile_callbacks(callbacks)
    chain = compiled.chain(point.name, point.kind)
    if not chain.any_async:
        return run_before(compiled, point, ctx, policy=policy, trace=trace)
    return await arun_steps(chain, point, ctx, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]


async def arun_after(
    callbacks: Callbacks,
    point: AfterPoint[C, T],
    outcome: Outcome[T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> Outcome[T]:
    """``run_after`` for async code: awaits ``async def`` methods, calls plain ones."""
    compiled = compile_callbacks(callbacks)
    chain = compiled.chain(point.name, point.kind)
    if not chain.any_async:
        return run_after(compiled, point, outcome, ctx, policy=policy, trace=trace)
    return await arun_steps(chain, point, outcome, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]


async def arun_on_error(
    callbacks: Callbacks,
    point: ErrorPoint[C, T],
    failure: Failure[Exception],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> ErrorResult[C, T]:
    """``run_on_error`` for async code: awaits ``async def`` methods, calls plain ones."""
    compiled = compile_callbacks(callbacks)
    chain = compiled.chain(point.name, point.kind)
    if not chain.any_async:
        return run_on_error(compiled, point, failure, ctx, policy=policy, trace=trace)
    return await arun_steps(chain, point, failure, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]
