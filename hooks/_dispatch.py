"""Dispatch: one hook point over a callbacks list, by the contract's rules.

Two forms of each chain. The sync default-policy loops (``_before``, ``_after``,
``_on_error``) are the hot path: flat, no per-callback allocation beyond what the
callbacks build, no signature inspection, no ``isawaitable``. Everything else (a
non-default ``DispatchPolicy``, async dispatch of a chain with async methods) runs
the same rules written once as step generators, driven by ``_drive`` or ``_adrive``.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from operator import length_hint
from typing import Any, Final, TypeAlias, TypeVar

from returns.result import Failure, Success

from hooks._compile import Chain, CompiledCallbacks, compile_callbacks
from hooks._errors import InvalidResult, describe
from hooks._points import AfterPoint, BeforePoint, ErrorPoint
from hooks._results import BeforeResult, Cont, ErrorResult, Fallback, Halt, Outcome, Retry

__all__ = [
    "Callbacks",
    "DispatchPolicy",
    "arun_after",
    "arun_before",
    "arun_on_error",
    "run_after",
    "run_before",
    "run_on_error",
]

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

Callbacks: TypeAlias = Sequence[object] | CompiledCallbacks
"""A list or tuple of callbacks (modules or objects), or its compiled form."""

# A step generator yields (index of the method to call, its arguments) and is sent
# the method's (awaited) result, or thrown what it raised; it returns the chain's result.
_Steps: TypeAlias = Generator[tuple[int, tuple[Any, ...]], Any, R]


@dataclass(frozen=True, slots=True)
class DispatchPolicy:
    """How a chain treats ``Halt`` and raising callbacks.

    ``continue_on_halt``: every callback runs and the **last** ``Halt`` wins.
    ``continue_on_error``: the chain goes on past a raising callback (with the context
    or outcome it had) and the **first** exception is raised when it ends, beating any
    ``Halt``.
    """

    continue_on_halt: bool = False
    continue_on_error: bool = False


DEFAULT_POLICY: Final = DispatchPolicy()

_new: Final = object.__new__

_BEFORE_TAGS: Final = ("Cont", "Halt")
_AFTER_TAGS: Final = ("Success", "Failure[Exception]")
_ERROR_TAGS: Final = ("Retry", "Fallback", "Failure[Exception]")


# -- sync ---------------------------------------------------------------------------


def run_before(
    callbacks: Callbacks,
    point: BeforePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
) -> BeforeResult[C, T]:
    """Thread ``ctx`` through each callback's before method; the first ``Halt`` wins.

    Returns ``Cont(ctx')`` with the last context when nobody halted (``Cont(ctx)``
    with the same object for an empty chain).
    """
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    methods = compiled._sync.get(point.name)
    if methods is None or policy is not DEFAULT_POLICY:
        chain = compiled.sync_chain(point.name, point.kind)
        return _drive(chain, _before_steps(chain, point.name, ctx, policy))
    if not methods:
        # Rule 2's Cont(ctx), built without the __init__ frame: N = 0 is all fixed cost.
        empty: Cont[C] = _new(Cont)
        empty._ctx = ctx
        return empty
    fns = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn in fns:
            result = fn(ctx)
            if type(result) is Cont:
                ctx = result._ctx
            elif type(result) is Halt:
                halt: Halt[T] = result
                return halt
            else:
                break
        else:
            # methods is not empty, so result is the last callback's Cont(ctx): the answer.
            last: Cont[C] = result  # type: ignore[possibly-undefined]
            return last
    except Exception as exc:
        _annotate(exc, compiled.chain(point.name, point.kind), _position(methods, fns), point.name)
        raise
    chain = compiled.chain(point.name, point.kind)
    raise _invalid(chain, _position(methods, fns), point.name, result, _BEFORE_TAGS)


def run_after(
    callbacks: Callbacks,
    point: AfterPoint[T, C],
    outcome: Outcome[T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
) -> Outcome[T]:
    """Thread ``outcome`` through every callback's after method; never short-circuits."""
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    methods = compiled._sync.get(point.name)
    if methods is None or policy is not DEFAULT_POLICY:
        chain = compiled.sync_chain(point.name, point.kind)
        return _drive(chain, _after_steps(chain, point.name, outcome, ctx, policy))
    if not methods:
        return outcome
    fns = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn in fns:
            result = fn(outcome, ctx)
            if type(result) is Success or (
                type(result) is Failure and isinstance(result.failure(), Exception)
            ):
                outcome = result
            else:
                break
        else:
            return outcome
    except Exception as exc:
        _annotate(exc, compiled.chain(point.name, point.kind), _position(methods, fns), point.name)
        raise
    chain = compiled.chain(point.name, point.kind)
    raise _invalid(chain, _position(methods, fns), point.name, result, _AFTER_TAGS)


def run_on_error(
    callbacks: Callbacks,
    point: ErrorPoint[C, T],
    failure: Failure[Exception],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
) -> ErrorResult[C, T]:
    """Pass ``failure`` along the error methods; the first ``Retry`` or ``Fallback`` wins.

    Returns the last ``Failure`` when nobody recovered (the same object for an empty chain).
    """
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    methods = compiled._sync.get(point.name)
    if methods is None or policy is not DEFAULT_POLICY:
        chain = compiled.sync_chain(point.name, point.kind)
        return _drive(chain, _error_steps(chain, point.name, failure, ctx, policy))
    if not methods:
        return failure
    fns = iter(methods)  # its length hint gives the position of a failing method
    try:
        for fn in fns:
            result = fn(failure, ctx)
            if type(result) is Failure and isinstance(result.failure(), Exception):
                failure = result
            elif type(result) is Retry or type(result) is Fallback:
                recovery: Retry[C] | Fallback[T] = result
                return recovery
            else:
                break
        else:
            return failure
    except Exception as exc:
        _annotate(exc, compiled.chain(point.name, point.kind), _position(methods, fns), point.name)
        raise
    chain = compiled.chain(point.name, point.kind)
    raise _invalid(chain, _position(methods, fns), point.name, result, _ERROR_TAGS)


# -- async --------------------------------------------------------------------------


async def arun_before(
    callbacks: Callbacks,
    point: BeforePoint[C, T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
) -> BeforeResult[C, T]:
    """``run_before`` for async code: awaits ``async def`` methods, calls plain ones."""
    compiled = compile_callbacks(callbacks)
    chain = compiled.chain(point.name, point.kind)
    if not chain.any_async:  # nothing to await: the sync loop, as it is
        return run_before(compiled, point, ctx, policy=policy)
    return await _adrive(chain, _before_steps(chain, point.name, ctx, policy))


async def arun_after(
    callbacks: Callbacks,
    point: AfterPoint[T, C],
    outcome: Outcome[T],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
) -> Outcome[T]:
    """``run_after`` for async code: awaits ``async def`` methods, calls plain ones."""
    compiled = compile_callbacks(callbacks)
    chain = compiled.chain(point.name, point.kind)
    if not chain.any_async:  # nothing to await: the sync loop, as it is
        return run_after(compiled, point, outcome, ctx, policy=policy)
    return await _adrive(chain, _after_steps(chain, point.name, outcome, ctx, policy))


async def arun_on_error(
    callbacks: Callbacks,
    point: ErrorPoint[C, T],
    failure: Failure[Exception],
    ctx: C,
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
) -> ErrorResult[C, T]:
    """``run_on_error`` for async code: awaits ``async def`` methods, calls plain ones."""
    compiled = compile_callbacks(callbacks)
    chain = compiled.chain(point.name, point.kind)
    if not chain.any_async:  # nothing to await: the sync loop, as it is
        return run_on_error(compiled, point, failure, ctx, policy=policy)
    return await _adrive(chain, _error_steps(chain, point.name, failure, ctx, policy))


# -- the rules, once, as step generators --------------------------------------------


def _before_steps(
    chain: Chain, name: str, ctx: Any, policy: DispatchPolicy
) -> _Steps[BeforeResult[Any, Any]]:
    halt: Halt[Any] | None = None
    first: Exception | None = None
    for index in range(len(chain.fns)):
        try:
            result = yield index, (ctx,)
        except Exception as exc:
            first = _caught(exc, chain, index, name, policy=policy, first=first)
            continue
        if type(result) is Cont:
            ctx = result.ctx
        elif type(result) is Halt:
            halt = result
            if not policy.continue_on_halt:
                break
        else:
            first = _refuse(_invalid(chain, index, name, result, _BEFORE_TAGS), policy, first)
    if first is not None:
        raise first
    return Cont(ctx) if halt is None else halt


def _after_steps(
    chain: Chain, name: str, outcome: Outcome[Any], ctx: Any, policy: DispatchPolicy
) -> _Steps[Outcome[Any]]:
    first: Exception | None = None
    for index in range(len(chain.fns)):
        try:
            result = yield index, (outcome, ctx)
        except Exception as exc:
            first = _caught(exc, chain, index, name, policy=policy, first=first)
            continue
        if not (type(result) is Success or _is_failure(result)):
            first = _refuse(_invalid(chain, index, name, result, _AFTER_TAGS), policy, first)
            continue
        outcome = result
    if first is not None:
        raise first
    return outcome


def _error_steps(
    chain: Chain, name: str, failure: ErrorResult[Any, Any], ctx: Any, policy: DispatchPolicy
) -> _Steps[ErrorResult[Any, Any]]:
    first: Exception | None = None
    for index in range(len(chain.fns)):
        try:
            result = yield index, (failure, ctx)
        except Exception as exc:
            first = _caught(exc, chain, index, name, policy=policy, first=first)
            continue
        if not (_is_failure(result) or type(result) is Retry or type(result) is Fallback):
            first = _refuse(_invalid(chain, index, name, result, _ERROR_TAGS), policy, first)
            continue
        failure = result  # the last Failure, or the recovery that ends the chain
        if type(result) is not Failure:
            break
    if first is not None:
        raise first
    return failure


def _drive(chain: Chain, steps: _Steps[R]) -> R:
    """Run a step generator, calling each method directly."""
    fns = chain.fns
    try:
        index, args = next(steps)
        while True:
            try:
                result = fns[index](*args)
            except Exception as exc:
                index, args = steps.throw(exc)
            else:
                index, args = steps.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    except RuntimeError as err:
        # PEP 479 turns a callback's StopIteration, re-raised by the step generator, into a
        # RuntimeError; a callback's own RuntimeError carries our note. Rule 6 keeps the type.
        # (_adrive cannot do this: a coroutine converts StopIteration the same way.)
        if isinstance(err.__cause__, StopIteration) and not hasattr(err, "__notes__"):
            raise err.__cause__ from None
        raise


async def _adrive(chain: Chain, steps: _Steps[R]) -> R:
    """Run a step generator, awaiting the methods known to be async."""
    fns, asyncs = chain.fns, chain.asyncs
    try:
        index, args = next(steps)
        while True:
            try:
                result = fns[index](*args)
                if asyncs[index]:
                    result = await result
            except Exception as exc:
                index, args = steps.throw(exc)
            else:
                index, args = steps.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


# -- helpers ------------------------------------------------------------------------


def _position(methods: tuple[object, ...], fns: Iterator[object]) -> int:
    """The index of the method ``fns`` last yielded; exact even when one method is listed twice."""
    return len(methods) - length_hint(fns) - 1


def _is_failure(result: object) -> bool:
    return type(result) is Failure and isinstance(result.failure(), Exception)


def _caught(
    exc: Exception,
    chain: Chain,
    index: int,
    name: str,
    *,
    policy: DispatchPolicy,
    first: Exception | None,
) -> Exception:
    """Annotate ``exc``; re-raise it unless the policy goes on. Returns the first error."""
    _annotate(exc, chain, index, name)
    if not policy.continue_on_error:
        raise exc
    return exc if first is None else first


def _refuse(invalid: InvalidResult, policy: DispatchPolicy, first: Exception | None) -> Exception:
    """Raise ``invalid`` now; under ``continue_on_error`` it waits, like a raised error."""
    if not policy.continue_on_error:
        raise invalid
    return invalid if first is None else first


def _annotate(exc: BaseException, chain: Chain, index: int, name: str) -> None:
    exc.add_note(f"raised in callback {describe(chain.owners[index])} at hook point {name!r}")


def _invalid(
    chain: Chain, index: int, name: str, result: object, expected: tuple[str, ...]
) -> InvalidResult:
    if inspect.iscoroutine(result):
        result.close()  # a plain def that returned a coroutine: never awaited, say so once
    return InvalidResult(chain.owners[index], name, result, expected)
