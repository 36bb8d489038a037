"""The general wrap path: a ``Trace`` to fill in, or a policy with ``continue_on_error``.

The default-policy levels of ``_wrap`` keep no state; these keep, per dispatch, what
each wrap's ``call_next`` last gave back, which exception is on its way out and who
raised it. That tells the trace who decided, and lets ``continue_on_error`` step over a
wrap that raised (or returned an illegal result): its level gives the outcome its
``call_next`` last gave back, or, if it never called it, runs the rest of the chain on
the context it was given -- so every other wrap still runs, and the operation runs as
if that wrap were not there, never once more than the wraps asked. The first error
is raised when the outermost wrap is done. The rules live once, in ``_Nest``; the two
drivers differ only in awaiting.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Final, final

from returns.result import Failure, Success

from hooks._compile import Chain
from hooks._errors import InvalidResult
from hooks._points import AnyPoint
from hooks._policy import DispatchPolicy, Trace
from hooks._rules import invalid, legal
from hooks._steps import equal, note

__all__ = ["OUTCOMES", "arun_nest", "bad_context", "not_an_outcome", "noted", "run_nest"]

_UNSET: Final = object()  # a wrap has not called call_next (in its current run)

OUTCOMES: Final = frozenset({Success, Failure})
"""The classes an operation may return: anything else is ``not_an_outcome``."""


def run_nest(
    chain: Chain,
    point: AnyPoint,
    ctx: Any,
    operation: Callable[[Any], Any],
    *,
    policy: DispatchPolicy,
    trace: Trace | None,
) -> Any:
    """Run a non-empty ``chain`` of wraps around ``operation``, keeping the books."""
    nest = _Nest(chain, point, operation, policy)
    try:
        outcome = _step(nest, 0, ctx)
    except Exception:
        nest.finish(trace)
        raise
    return nest.finish(trace, outcome)


async def arun_nest(
    chain: Chain,
    point: AnyPoint,
    ctx: Any,
    operation: Callable[[Any], Awaitable[Any]],
    *,
    policy: DispatchPolicy,
    trace: Trace | None,
) -> Any:
    """``run_nest``, awaiting the wraps and the operation."""
    nest = _Nest(chain, point, operation, policy)
    try:
        outcome = await _astep(nest, 0, ctx)
    except Exception:
        nest.finish(trace)
        raise
    return nest.finish(trace, outcome)


def _step(nest: _Nest, index: int, ctx: Any) -> Any:
    if nest.entered(index, ctx):
        try:
            outcome = nest.operation(ctx)
        except Exception as exc:
            outcome = Failure(exc)
        else:
            if outcome.__class__ not in OUTCOMES:
                outcome = not_an_outcome(nest.operation, nest.point, outcome)
        return nest.left(index, outcome)
    try:
        result = nest.fns[index](ctx, partial(_step, nest, index + 1))
    except Exception as exc:
        nest.raised(index, exc)  # raises it again unless stepping over
    else:
        if nest.returned(index, result):
            return nest.left(index, result)
    result = nest.last[index]  # stepping over wrap index
    if result is _UNSET:
        result = _step(nest, index + 1, ctx)
    return nest.left(index, result)


async def _astep(nest: _Nest, index: int, ctx: Any) -> Any:
    if nest.entered(index, ctx):
        try:
            outcome = await nest.operation(ctx)
        except Exception as exc:
            outcome = Failure(exc)
        else:
            if outcome.__class__ not in OUTCOMES:
                outcome = not_an_outcome(nest.operation, nest.point, outcome)
        return nest.left(index, outcome)
    try:
        result = await nest.fns[index](ctx, partial(_astep, nest, index + 1))
    except Exception as exc:
        nest.raised(index, exc)  # raises it again unless stepping over
    else:
        if nest.returned(index, result):
            return nest.left(index, result)
    result = nest.last[index]  # stepping over wrap index
    if result is _UNSET:
        result = await _astep(nest, index + 1, ctx)
    return nest.left(index, result)


@final
class _Nest:
    """One wrap dispatch's books: what each ``call_next`` gave back, the error, who decided."""

    __slots__ = (
        "chain",
        "changed",
        "error",
        "error_by",
        "fns",
        "last",
        "operation",
        "point",
        "stepping",
    )

    def __init__(
        self, chain: Chain, point: AnyPoint, operation: Callable[[Any], Any], policy: DispatchPolicy
    ) -> None:
        self.chain = chain
        self.fns = chain.fns
        self.point = point
        self.operation = operation
        self.stepping = policy.continue_on_error
        size = len(chain.fns)
        self.last: list[object] = [_UNSET] * size  # per wrap: what its call_next last gave back
        self.changed = [False] * size  # per wrap: its last outcome was not that
        self.error: Exception | None = None  # the error on its way out (the first, stepping)
        self.error_by: object = None

    def entered(self, index: int, ctx: object) -> bool:
        """Check the context ``call_next`` was given; whether the operation comes next."""
        if index:
            context = self.point.context
            if context is not None and not isinstance(ctx, context):
                raise bad_context(self.chain, self.point, index - 1, ctx)
        if index == len(self.fns):
            return True
        self.last[index] = _UNSET
        return False

    def left(self, index: int, outcome: object) -> object:
        """``outcome`` as level ``index`` gives it back, to wrap ``index - 1``'s call_next."""
        if index:
            self.last[index - 1] = outcome
        return outcome

    def raised(self, index: int, exc: Exception) -> None:
        """Take ``exc`` out of wrap ``index``: note and record it; raise it unless stepping.

        Wrap ``index`` is the one at fault whenever ``exc`` is new here: it raised it, or
        returned the illegal result, or gave ``call_next`` the context, it names.
        """
        if exc is not self.error:  # else on its way out from a wrap further in
            noted(exc, self.chain, self.point, index)
            if self.error is None or not self.stepping:
                self.error, self.error_by = exc, self.chain.owners[index]
        if not self.stepping:
            raise exc

    def returned(self, index: int, result: object) -> bool:
        """Whether wrap ``index``'s ``result`` is legal; if not, raise it unless stepping."""
        # (No context is passed to the rules: a wrap's tags carry no context payload.)
        if result is not self.last[index] and legal(self.point, result, None) is None:
            self.raised(index, invalid(self.chain.owners[index], self.point, result, None))
            return False
        self.changed[index] = not equal(result, self.last[index])
        return True

    def finish(self, trace: Trace | None, outcome: object = _UNSET) -> Any:
        """Fill in the trace; raise the first error when stepping, or return ``outcome``."""
        failed = outcome is _UNSET or (self.stepping and self.error is not None)
        if trace is not None:
            decided = self.changed.index(True) if True in self.changed else None
            trace.callback = (
                self.error_by if failed else None if decided is None else self.chain.owners[decided]
            )
        if failed and self.error is not None and outcome is not _UNSET:
            raise self.error
        return outcome


def noted(exc: Exception, chain: Chain, point: AnyPoint, index: int) -> None:
    """Note ``exc``, raised out of wrap ``index``, unless it already names this point.

    An exception raised by a wrap passes out through the wraps around it: only the
    first (the innermost, the one that raised it) adds the note. Dispatch's own
    ``InvalidResult`` names its callback in its message and gets no note.
    """
    if type(exc) is InvalidResult and exc.point == point.name:
        return
    suffix = f" at hook point {point.name!r}"
    notes: list[str] = getattr(exc, "__notes__", [])
    if not any(text.endswith(suffix) for text in notes):
        note(exc, chain.owners[index], point.name)


def not_an_outcome(operation: object, point: AnyPoint, result: object) -> Failure[InvalidResult]:
    """``Failure(InvalidResult)`` for an operation that returned ``result``, not an outcome.

    It is what the operation's caller gets in place of ``result``: the operation failed,
    as if it had raised the error (``Success`` or ``Failure`` was owed).
    """
    if inspect.iscoroutine(result):
        result.close()  # a plain def operation that returned a coroutine: never awaited
    return Failure(InvalidResult(operation, point.name, result, ("Success", "Failure")))


def bad_context(chain: Chain, point: AnyPoint, index: int, ctx: object) -> InvalidResult:
    """The ``InvalidResult`` for wrap ``index`` giving ``call_next`` a context of the wrong type."""
    context = point.context
    assert context is not None  # only a point with a context type checks it
    return InvalidResult(
        chain.owners[index],
        point.name,
        ctx,
        (context.__name__,),
        problem=f"{type(ctx).__name__} {ctx!r:.80}; expected {context.__name__}",
        verb="passed call_next",
    )
