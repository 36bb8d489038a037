"""The general dispatch path: every rule, any policy, a trace, sync or awaited methods.

The default-policy sync loops in ``_dispatch`` are the hot path. A chain comes here
when its dispatch asks for more: a ``DispatchPolicy`` that departs from the default,
a ``Trace`` to fill in, or ``async def`` methods to await. The rules live once, in
``_Run``; the two drivers below differ only in awaiting.
"""

from __future__ import annotations

from typing import Any, final

from returns.result import Failure

from hooks._compile import Chain
from hooks._errors import describe
from hooks._points import AnyPoint
from hooks._policy import DispatchPolicy, Trace
from hooks._results import Cont
from hooks._rules import invalid, legal

__all__ = ["arun_steps", "chain_failure", "equal", "note", "run_steps"]


def run_steps(
    chain: Chain,
    point: AnyPoint,
    current: Any,
    ctx: Any,
    *,
    policy: DispatchPolicy,
    trace: Trace | None,
) -> Any:
    """Run ``chain`` calling each method directly; ``current`` is what the first receives."""
    run = _Run(chain, point, current, ctx, policy=policy, trace=trace)
    fns = chain.fns
    for index in range(len(fns)):
        try:
            result = fns[index](*run.args())
        except Exception as exc:
            if run.raised(index, exc):
                break
        else:
            if run.returned(index, result):
                break
    return run.finish()


async def arun_steps(
    chain: Chain,
    point: AnyPoint,
    current: Any,
    ctx: Any,
    *,
    policy: DispatchPolicy,
    trace: Trace | None,
) -> Any:
    """``run_steps``, awaiting the methods known to be async.

    A callback's ``StopIteration`` leaves this coroutine as Python's ``RuntimeError``
    ("coroutine raised StopIteration", PEP 479) whose ``__cause__`` is the callback's
    own exception, with its note: no coroutine can raise ``StopIteration`` itself.
    """
    run = _Run(chain, point, current, ctx, policy=policy, trace=trace)
    fns, asyncs = chain.fns, chain.asyncs
    for index in range(len(fns)):
        try:
            result = fns[index](*run.args())
            if asyncs[index]:
                result = await result
        except Exception as exc:
            if run.raised(index, exc):
                break
        else:
            if run.returned(index, result):
                break
    return run.finish()


@final
class _Run:
    """One dispatch's state: what the next callback receives, what ended it, who decided."""

    __slots__ = (
        "before",
        "chain",
        "changed_by",
        "ctx",
        "current",
        "ended",
        "ended_by",
        "error",
        "error_by",
        "point",
        "policy",
        "trace",
    )

    def __init__(
        self,
        chain: Chain,
        point: AnyPoint,
        current: Any,
        ctx: Any,
        *,
        policy: DispatchPolicy,
        trace: Trace | None,
    ) -> None:
        self.chain = chain
        self.point = point
        self.before = point.kind == "before"  # the context itself is what is handed on
        self.current = current  # the context (before), the outcome or the failure
        self.ctx = ctx
        self.policy = policy
        self.trace = trace
        self.ended: object = None  # the Halt, Retry or Fallback that ended the chain
        self.ended_by: object = None
        self.changed_by: object = None  # the last callback that handed on something new
        self.error: Exception | None = None  # the first error raised (or illegal result)
        self.error_by: object = None
        if trace is not None:
            trace.callback = None

    def args(self) -> tuple[Any, ...]:
        """The arguments of the next callback."""
        return (self.current,) if self.before else (self.current, self.ctx)

    def raised(self, index: int, exc: Exception) -> bool:
        """Note ``exc`` raised by callback ``index``; whether the chain stops here."""
        owner = self.chain.owners[index]
        note(exc, owner, self.point.name)
        self._failed(exc, owner)
        return not self.policy.continue_on_error

    def returned(self, index: int, result: object) -> bool:
        """Take callback ``index``'s result by the rules of ``_rules``; whether the chain stops."""
        if result is self.current and not self.before:
            return False  # the outcome or failure handed on unchanged
        owner = self.chain.owners[index]
        tag = legal(self.point, result, self.ctx)
        if tag is None:
            self._failed(invalid(owner, self.point, result, self.ctx), owner)
            return not self.policy.continue_on_error
        if tag.ends:
            self.ended, self.ended_by = result, owner
            return not (self.before and self.policy.continue_on_halt)
        # What is handed on is the new object; only a trace asks whether it differs.
        if tag.hands_on == "payload":
            payload = tag.read(result)
            if payload is not self.ctx:
                if self.trace is not None and not equal(payload, self.ctx):
                    self.changed_by = owner
                self.ctx = self.current = payload
        else:
            if self.trace is not None and not equal(result, self.current):
                self.changed_by = owner
            self.current = result
        return False

    def finish(self) -> Any:
        """Fill in the trace; raise the first error, or return the chain's result."""
        if self.trace is not None:
            self.trace.callback = (
                self.error_by
                if self.error is not None
                else self.ended_by
                if self.ended is not None
                else self.changed_by
            )
        if self.error is not None:
            raise self.error
        if self.ended is not None:
            return self.ended
        return Cont(self.ctx) if self.before else self.current

    def _failed(self, exc: Exception, owner: object) -> None:
        if not self.before:
            chain_failure(exc, self.current)
        if self.error is None:
            self.error, self.error_by = exc, owner


def equal(new: object, old: object) -> bool:
    """Whether ``new`` is ``old`` or equal to it: a callback that handed it on replaced nothing.

    ``Cont(replace(ctx))`` that changed no field, ``Success(x)`` for an outcome of ``x``:
    the trace does not credit them. An ``__eq__`` that raises, or answers something
    that is not a plain ``bool``, counts as different (the callback is credited).
    """
    if new is old:
        return True
    try:
        answer = new == old
    except Exception:
        return False
    return answer is True


def note(exc: BaseException, owner: object, name: str) -> None:
    """Add the note naming ``owner`` and point ``name`` to ``exc``, once."""
    text = f"raised in callback {describe(owner)} at hook point {name!r}"
    if text not in getattr(exc, "__notes__", ()):
        exc.add_note(text)


def chain_failure(exc: BaseException, given: object) -> None:
    """Show the error a ``Failure`` carried as ``exc``'s context, raised while handling it."""
    if type(given) is not Failure or exc.__context__ is not None:
        return
    failure: Failure[object] = given  # pyright: ignore[reportUnknownVariableType]
    error = failure.failure()
    link = error
    while isinstance(link, BaseException):
        if link is exc:
            return  # exc is the error itself, or already in its chain: no cycle
        link = link.__context__
    if isinstance(error, BaseException):
        exc.__context__ = error
