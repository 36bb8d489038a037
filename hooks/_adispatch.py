"""Async dispatch: the ``arun_*`` twins of ``run_*``, for async code.

Each compiles the list and looks up the point's chain. A chain without an ``async
def`` method runs the sync dispatch as it is -- fast loops, policy and trace included
-- since there is nothing to await. A chain with one runs, under the default policy
and without a trace, a loop like the sync fast loops: it calls each method, awaits
the result of those compiled as async (``Chain.steps`` pairs each method with that
flag), and inlines the tag that hands on; ``_settle`` and ``_noted`` of ``_dispatch``
take whatever stopped it. Anything else runs the general path, ``arun_steps``.
"""

from __future__ import annotations

from typing import TypeVar, overload

from returns.result import Failure, Success

from hooks._compile import CompiledCallbacks, compile_callbacks
from hooks._dispatch import Callbacks, _noted, _settle, run_after, run_before, run_on_error
from hooks._points import AfterPoint, BeforePoint, ErrorPoint, PausablePoint
from hooks._policy import DEFAULT_POLICY, DispatchPolicy, Trace
from hooks._results import BeforeResult, Cont, ErrorResult, Outcome, PausableResult
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
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    chain = compiled._chains.get(point.name) or compiled.chain(point.name, point.kind)
    if not chain.any_async:
        return run_before(compiled, point, ctx, policy=policy, trace=trace)
    if trace is not None or (policy is not DEFAULT_POLICY and _departs(policy)):
        return await arun_steps(chain, point, ctx, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]
    context = point.context
    methods = chain.steps
    steps = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn, is_async in steps:
            result = fn(ctx)
            if is_async:
                result = await result
            if type(result) is not Cont:
                break
            if result._ctx is not ctx:  # pyright: ignore[reportUnknownMemberType]
                if context is not None and not isinstance(result._ctx, context):  # pyright: ignore[reportUnknownMemberType]
                    break
                ctx = result._ctx  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType, reportAssignmentType]
        else:
            # the chain has an async method, so result is the last callback's Cont(ctx)
            last: Cont[C] = result  # type: ignore[possibly-undefined]
            return last
    except Exception as exc:
        _noted(exc, compiled, point, methods, steps, given=None)
        raise
    return _settle(compiled, point, methods, steps, result, ctx=ctx, given=None)  # type: ignore[no-any-return]


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
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    chain = compiled._chains.get(point.name) or compiled.chain(point.name, point.kind)
    if not chain.any_async:
        return run_after(compiled, point, outcome, ctx, policy=policy, trace=trace)
    if trace is not None or (policy is not DEFAULT_POLICY and _departs(policy)):
        return await arun_steps(chain, point, outcome, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]
    value = point.value
    methods = chain.steps
    steps = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn, is_async in steps:
            result = fn(outcome, ctx)
            if is_async:
                result = await result
            if result is outcome:
                continue
            if type(result) is Success:
                if value is not None and not isinstance(result.unwrap(), value):
                    break
            elif type(result) is not Failure or not isinstance(result.failure(), Exception):
                break
            outcome = result  # pyright: ignore[reportUnknownVariableType]  # checked above
        else:
            return outcome
    except Exception as exc:
        _noted(exc, compiled, point, methods, steps, given=outcome)
        raise
    return _settle(compiled, point, methods, steps, result, ctx=ctx, given=outcome)  # type: ignore[no-any-return]


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
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    chain = compiled._chains.get(point.name) or compiled.chain(point.name, point.kind)
    if not chain.any_async:
        return run_on_error(compiled, point, failure, ctx, policy=policy, trace=trace)
    if trace is not None or (policy is not DEFAULT_POLICY and _departs(policy)):
        return await arun_steps(chain, point, failure, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]
    methods = chain.steps
    steps = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn, is_async in steps:
            result = fn(failure, ctx)
            if is_async:
                result = await result
            if result is failure:
                continue
            if type(result) is not Failure or not isinstance(result.failure(), Exception):
                break
            failure = result  # pyright: ignore[reportUnknownVariableType]  # checked above
        else:
            return failure
    except Exception as exc:
        _noted(exc, compiled, point, methods, steps, given=failure)
        raise
    return _settle(compiled, point, methods, steps, result, ctx=ctx, given=failure)  # type: ignore[no-any-return]


def _departs(policy: DispatchPolicy) -> bool:
    """Whether ``policy`` departs from the default: a subclass's may not."""
    return policy.continue_on_halt or policy.continue_on_error
