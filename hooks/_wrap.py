"""Wrap dispatch: ``run_wrap`` / ``arun_wrap`` nest a point's wraps around an operation.

The first callback in the list is the outermost wrap. Each is called as
``wrap(ctx, call_next)``; ``call_next(ctx')`` runs the next wrap in -- after the last
one, the operation -- and gives back its ``Outcome``. So a wrap may answer without
calling ``call_next`` (a cache), call it once (timing), or several times (its own
retry or validation loop). The rules:

- an ``Exception`` the operation raises comes back from ``call_next`` as
  ``Failure(exc)``: it is never raised through a wrap;
- an exception a wrap raises propagates through the wraps outside it, as itself, with
  one note naming that wrap and the point (``StopRun`` reaches the runner that way);
- a ``BaseException`` (cancellation, ``KeyboardInterrupt``, one an operation raises on
  purpose) propagates untouched, from the operation as from a wrap;
- a wrap returns ``Success`` (of the point's value) or ``Failure`` (of an
  ``Exception``); anything else raises ``InvalidResult``, and so does a context of the
  wrong type given to ``call_next`` (raised from ``call_next``, into the wrap);
- what the operation returns must be a ``Success`` or a ``Failure``: its payload is
  passed on as it is (it is the caller's code, typed), but any other value -- a bare
  result, ``None`` -- comes back as ``Failure(InvalidResult)`` naming the operation,
  as an exception it raised would (so the operation still runs once, and no raw value
  reaches a wrap or the caller).

How it runs: one function per level, ``_level(state, index, ctx)``, over one list of
the dispatch's state. A wrap's ``call_next`` is ``partial(_level, state, index + 1)``,
made as the wrap is called: nothing is built for the levels a wrap never enters, and
each ``call_next`` is its own object, so a wrap may keep it, call it from another
thread or run it twice at once (``asyncio.gather``). A ``Trace``, or a policy with
``continue_on_error``, runs the general path of ``_wrap_steps``; ``continue_on_halt``
means nothing here (nothing halts at a wrap point) and is ignored, as after and error
points ignore it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final, TypeVar

from returns.result import Failure, Success

from hooks._compile import CompiledCallbacks, compile_callbacks
from hooks._dispatch import Callbacks
from hooks._errors import InvalidCallbacks, describe
from hooks._points import WrapPoint
from hooks._policy import DEFAULT_POLICY, DispatchPolicy, Trace
from hooks._results import Outcome
from hooks._rules import invalid
from hooks._wrap_steps import OUTCOMES as _OUTCOMES
from hooks._wrap_steps import arun_nest, bad_context, not_an_outcome, noted, run_nest

__all__ = ["arun_wrap", "run_wrap"]

C = TypeVar("C")
T = TypeVar("T")


def run_wrap(
    callbacks: Callbacks,
    point: WrapPoint[C, T],
    ctx: C,
    operation: Callable[[C], Outcome[T]],
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> Outcome[T]:
    """Run ``operation(ctx)`` inside the point's wraps, the first callback outermost.

    Returns the outermost wrap's outcome; with no wraps, the operation's (an
    ``Exception`` it raises returned as ``Failure``). ``async def`` wraps are refused
    with ``InvalidCallbacks`` before anything runs: use ``arun_wrap``.
    """
    compiled = callbacks if type(callbacks) is CompiledCallbacks else compile_callbacks(callbacks)
    chain = compiled._chains.get(point.name)
    if chain is None or chain.any_async or trace is not None or policy is not DEFAULT_POLICY:
        if trace is not None:
            trace.callback = None  # even when the chain cannot be built
        chain = compiled.sync_chain(point.name, point.kind)
        if chain.fns and (trace is not None or policy.continue_on_error):
            return run_nest(chain, point, ctx, operation, policy=policy, trace=trace)  # type: ignore[no-any-return]
    if not chain.fns:
        try:
            result = operation(ctx)
        except Exception as exc:
            return Failure(exc)
        return result if result.__class__ in _OUTCOMES else not_an_outcome(operation, point, result)
    return _level([chain.fns, point, operation, _NOTHING, chain], 0, ctx)  # type: ignore[no-any-return]


async def arun_wrap(
    callbacks: Callbacks,
    point: WrapPoint[C, T],
    ctx: C,
    operation: Callable[[C], Awaitable[Outcome[T]]],
    /,
    *,
    policy: DispatchPolicy = DEFAULT_POLICY,
    trace: Trace | None = None,
) -> Outcome[T]:
    """``run_wrap`` for async code: awaits the wraps, whose ``call_next`` is awaited too.

    Every wrap of the chain must be ``async def`` (``AsyncWrapModel`` ...): a plain
    ``def`` could not await the ``call_next`` it is given, so it is refused with
    ``InvalidCallbacks`` before anything runs.
    """
    compiled = compile_callbacks(callbacks)
    if trace is not None:
        trace.callback = None
    chain = compiled.chain(point.name, point.kind)
    if not chain.all_async:
        owner = chain.owners[chain.asyncs.index(False)]
        msg = (
            f"{describe(owner)}.{point.name} is a plain def; wrap hooks in async dispatch "
            "must be async def (call_next is awaited): see AsyncWrapModel / AsyncWrapTool"
        )
        raise InvalidCallbacks(msg, callback=owner, attribute=point.name)
    if not chain.fns:
        try:
            result = await operation(ctx)
        except Exception as exc:
            return Failure(exc)
        return result if result.__class__ in _OUTCOMES else not_an_outcome(operation, point, result)
    if trace is not None or policy.continue_on_error:
        return await arun_nest(chain, point, ctx, operation, policy=policy, trace=trace)  # type: ignore[no-any-return]
    return await _alevel([chain.fns, point, operation, _NOTHING, chain], 0, ctx)  # type: ignore[no-any-return]


# One dispatch's state, shared by its levels: [fns, point, operation, last, chain], where
# ``last`` is the outcome a level last gave back -- checked, or the operation's own
# (_NOTHING before any). A list indexed by literals, not a class: it is made on every
# dispatch and read at every level.
_NOTHING: Final = object()


def _level(state: list[Any], index: int, ctx: Any) -> Any:
    """Run wrap ``index`` (the operation past the last) on ``ctx``: the default-policy path.

    A wrap's outcome that is the very one a ``call_next`` gave back (the usual case:
    the wrap passed it on) is not checked again.
    """
    fns = state[0]
    if index:
        context = state[1].context
        if context is not None and not isinstance(ctx, context):
            raise bad_context(state[4], state[1], index - 1, ctx)
        if index == len(fns):
            try:
                result = state[2](ctx)
            except Exception as exc:
                return Failure(exc)
            if result.__class__ not in _OUTCOMES:
                result = not_an_outcome(state[2], state[1], result)
            state[3] = result
            return result
    try:
        result = fns[index](ctx, partial(_level, state, index + 1))
    except Exception as exc:
        noted(exc, state[4], state[1], index)
        raise
    if result is state[3]:
        return result
    return _checked(state, index, result)


async def _alevel(state: list[Any], index: int, ctx: Any) -> Any:
    """``_level``, awaiting the wraps and the operation."""
    fns = state[0]
    if index:
        context = state[1].context
        if context is not None and not isinstance(ctx, context):
            raise bad_context(state[4], state[1], index - 1, ctx)
        if index == len(fns):
            try:
                result = await state[2](ctx)
            except Exception as exc:
                return Failure(exc)
            if result.__class__ not in _OUTCOMES:
                result = not_an_outcome(state[2], state[1], result)
            state[3] = result
            return result
    try:
        result = await fns[index](ctx, partial(_alevel, state, index + 1))
    except Exception as exc:
        noted(exc, state[4], state[1], index)
        raise
    if result is state[3]:
        return result
    return _checked(state, index, result)


def _checked(state: list[Any], index: int, result: Any) -> Any:
    """``result`` of wrap ``index`` if it is legal (then remembered as ``last``), else raise."""
    tag = result.__class__  # compared with a class: result stays Any, unnarrowed
    if tag is Success:
        value = state[1].value
        if value is None or isinstance(result.unwrap(), value):
            state[3] = result
            return result
    elif tag is Failure and isinstance(result.failure(), Exception):
        state[3] = result
        return result
    raise invalid(state[4].owners[index], state[1], result, None)  # (no context payloads)
