"""Sync dispatch: one hook point over a callbacks list, by the rules in ``hooks``' docstring.

Two forms of each chain. The sync default-policy loops of ``run_before``,
``run_after`` and ``run_on_error`` are the hot path: flat, allocating nothing beyond
what the callbacks build, inspecting no signature, never calling ``isawaitable``.
Each loop inlines only the tag that hands on (``Cont``; ``Success`` / ``Failure``;
``Failure``) with its payload check, and stops at anything else: ``_settle`` then
returns a legal ending result or raises, by the table in ``_rules``. Everything else
-- a policy that departs from the default, a ``Trace``, async methods to await --
runs the general path in ``_steps``. The async twins are in ``_adispatch``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import length_hint
from typing import Any, Final, TypeAlias, TypeVar, overload

from returns.result import Failure, Success

from hooks._compile import CompiledCallbacks, compile_callbacks
from hooks._points import AfterPoint, AnyPoint, BeforePoint, ErrorPoint, PausablePoint
from hooks._policy import DEFAULT_POLICY, DispatchPolicy, Trace
from hooks._results import BeforeResult, Cont, ErrorResult, Outcome, PausableResult
from hooks._rules import invalid, legal
from hooks._steps import chain_failure, note, run_steps

__all__ = ["Callbacks", "run_after", "run_before", "run_on_error"]

C = TypeVar("C")
T = TypeVar("T")

Callbacks: TypeAlias = Sequence[object] | CompiledCallbacks
"""A list or tuple of callbacks (modules or objects), or its compiled form."""

_new: Final = object.__new__


# -- sync: the fast loops -----------------------------------------------------------


@overload
def run_before(
    callbacks: Callbacks,
    point: PausablePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = ...,
    trace: Trace | None = ...,
) -> PausableResult[C, T]: ...
@overload
def run_before(
    callbacks: Callbacks,
    point: BeforePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = ...,
    trace: Trace | None = ...,
) -> BeforeResult[C, T]: ...
def run_before(
    callbacks: Callbacks,
    point: BeforePoint[C, T] | PausablePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> PausableResult[C, T]:
    """Thread ``ctx`` through each callback's before method; the first ``Halt`` wins.

    Returns ``Cont(ctx')`` with the last context when nobody halted (``Cont(ctx)``
    with the same object for an empty chain). At a ``PausablePoint`` a ``Pause`` ends
    the chain as a ``Halt`` does.
    """
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    methods = compiled._sync.get(point.name)
    if methods is None or trace is not None or policy is not DEFAULT_POLICY:
        methods = _fast_methods(compiled, point, policy, trace)
        if methods is None:
            return _general(compiled, point, ctx, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]
    if not methods:
        # The empty chain's Cont(ctx), built without the __init__ frame (N = 0 is all
        # fixed cost): the one place hookline writes a result's slot, before anyone sees it.
        empty: Cont[C] = _new(Cont)  # pyright: ignore[reportUnknownVariableType]
        empty._ctx = ctx
        return empty
    context = point.context
    fns = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn in fns:
            result = fn(ctx)
            if type(result) is not Cont:
                break
            # (pyright types a narrowed Any as Cont[Unknown]; the payload is checked here)
            if result._ctx is not ctx:  # pyright: ignore[reportUnknownMemberType]
                if context is not None and not isinstance(result._ctx, context):  # pyright: ignore[reportUnknownMemberType]
                    break
                ctx = result._ctx  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType, reportAssignmentType]
        else:
            # methods is not empty, so result is the last callback's Cont(ctx): the answer.
            last: Cont[C] = result  # type: ignore[possibly-undefined]
            return last
    except Exception as exc:
        _noted(exc, compiled, point, methods, fns, given=None)
        raise
    return _settle(compiled, point, methods, fns, result, ctx=ctx, given=None)  # type: ignore[no-any-return]


def run_after(
    callbacks: Callbacks,
    point: AfterPoint[C, T],
    outcome: Outcome[T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> Outcome[T]:
    """Thread ``outcome`` through every callback's after method; never short-circuits."""
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    methods = compiled._sync.get(point.name)
    if methods is None or trace is not None or policy is not DEFAULT_POLICY:
        methods = _fast_methods(compiled, point, policy, trace)
        if methods is None:
            return _general(compiled, point, outcome, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]
    value = point.value
    fns = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn in fns:
            result = fn(outcome, ctx)
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
        _noted(exc, compiled, point, methods, fns, given=outcome)
        raise
    return _settle(compiled, point, methods, fns, result, ctx=ctx, given=outcome)  # type: ignore[no-any-return]


def run_on_error(
    callbacks: Callbacks,
    point: ErrorPoint[C, T],
    failure: Failure[Exception],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> ErrorResult[C, T]:
    """Pass ``failure`` along the error methods; the first ``Retry`` or ``Fallback`` wins.

    Returns the last ``Failure`` when nobody recovered (the same object for an empty chain).
    """
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    methods = compiled._sync.get(point.name)
    if methods is None or trace is not None or policy is not DEFAULT_POLICY:
        methods = _fast_methods(compiled, point, policy, trace)
        if methods is None:
            return _general(compiled, point, failure, ctx, policy=policy, trace=trace)  # type: ignore[no-any-return]
    fns = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn in fns:
            result = fn(failure, ctx)
            if result is failure:
                continue
            if type(result) is not Failure or not isinstance(result.failure(), Exception):
                break
            failure = result  # pyright: ignore[reportUnknownVariableType]  # checked above
        else:
            return failure
    except Exception as exc:
        _noted(exc, compiled, point, methods, fns, given=failure)
        raise
    return _settle(compiled, point, methods, fns, result, ctx=ctx, given=failure)  # type: ignore[no-any-return]


# -- the shared prologue and epilogue of the fast loops ------------------------------


def _fast_methods(
    compiled: CompiledCallbacks, point: AnyPoint, policy: DispatchPolicy, trace: Trace | None
) -> tuple[Any, ...] | None:
    """The methods the fast loop may run, or ``None`` when the general path must.

    Builds the point's chain on its first dispatch and refuses async methods. A policy
    equal to the default (both flags off) is the default, whatever object it is.
    """
    if trace is not None:
        trace.callback = None  # even when the chain cannot be built
    chain = compiled.chain(point.name, point.kind)
    if chain.any_async:
        compiled.sync_chain(point.name, point.kind)  # refuses it
    if trace is not None or policy.continue_on_halt or policy.continue_on_error:
        return None
    return chain.fns


def _general(
    compiled: CompiledCallbacks,
    point: AnyPoint,
    current: Any,
    ctx: Any,
    *,
    policy: DispatchPolicy,
    trace: Trace | None,
) -> Any:
    chain = compiled.sync_chain(point.name, point.kind)
    return run_steps(chain, point, current, ctx, policy=policy, trace=trace)


def _settle(
    compiled: CompiledCallbacks,
    point: AnyPoint,
    methods: tuple[Any, ...],
    fns: Iterator[Any],
    result: Any,
    *,
    ctx: object,
    given: object,
) -> Any:
    """The result that stopped a fast loop, if it is a legal end; else ``InvalidResult``.

    ``given`` is the outcome or failure the callback received (``None`` for before).
    """
    tag = legal(point, result, ctx)
    if tag is not None and tag.ends:
        return result
    owner = compiled.chain(point.name, point.kind).owners[_position(methods, fns)]
    error = invalid(owner, point, result, ctx)
    chain_failure(error, given)
    raise error


def _noted(
    exc: Exception,
    compiled: CompiledCallbacks,
    point: AnyPoint,
    methods: tuple[Any, ...],
    fns: Iterator[Any],
    *,
    given: object,
) -> None:
    owner = compiled.chain(point.name, point.kind).owners[_position(methods, fns)]
    note(exc, owner, point.name)
    chain_failure(exc, given)


def _position(methods: tuple[object, ...], fns: Iterator[object]) -> int:
    """The index of the method ``fns`` last yielded; exact even when one method is listed twice."""
    return len(methods) - length_hint(fns) - 1
