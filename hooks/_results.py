"""The five tagged results callbacks return, and the aliases that name their unions.

Each class is ``@final``, with read-only properties over private slots: nothing writes
a slot once a result has been handed to anyone (dispatch reads them directly, on its
hot path, and builds the empty chain's ``Cont`` by filling the slot of a fresh instance).
Construction is as cheap as a plain slotted class's: a callback builds one per call, so
it is the per-callback cost of every hook point.
"""

from __future__ import annotations

import math
from typing import Generic, TypeAlias, TypeVar, final

from returns.result import Failure, Success

__all__ = [
    "BeforeResult",
    "Cont",
    "ErrorResult",
    "Fallback",
    "Halt",
    "Outcome",
    "PausableResult",
    "Pause",
    "Retry",
]

C_co = TypeVar("C_co", covariant=True)
T_co = TypeVar("T_co", covariant=True)
C = TypeVar("C")
T = TypeVar("T")


@final
class Cont(Generic[C_co]):
    """Go on, with this (possibly changed) context. Legal from before hooks."""

    __slots__ = ("_ctx",)
    __match_args__ = ("ctx",)

    def __init__(self, ctx: C_co, /) -> None:
        self._ctx = ctx

    @property
    def ctx(self) -> C_co:
        """The context handed to the next callback and, at the end, to the operation."""
        return self._ctx

    def __repr__(self) -> str:
        return f"Cont({self._ctx!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Cont:
            return NotImplemented
        that: Cont[object] = other  # pyright: ignore[reportUnknownVariableType]
        return bool(self._ctx == that._ctx)

    def __hash__(self) -> int:
        return hash((Cont, self._ctx))


@final
class Halt(Generic[T_co]):
    """Stop the chain and skip the guarded operation; ``value`` is its result.

    Legal from before hooks. A falsy value (``""``, ``0``, ``{}``) still halts.
    """

    __slots__ = ("_value",)
    __match_args__ = ("value",)

    def __init__(self, value: T_co, /) -> None:
        self._value = value

    @property
    def value(self) -> T_co:
        """The result that stands in for the skipped operation."""
        return self._value

    def __repr__(self) -> str:
        return f"Halt({self._value!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Halt:
            return NotImplemented
        that: Halt[object] = other  # pyright: ignore[reportUnknownVariableType]
        return bool(self._value == that._value)

    def __hash__(self) -> int:
        return hash((Halt, self._value))


@final
class Retry(Generic[C_co]):
    """Run the failed operation again with ``ctx``. Legal from error hooks.

    ``delay`` (seconds) replaces the retry policy's backoff for this one wait;
    ``None`` keeps the policy's.
    """

    __slots__ = ("_ctx", "_delay")
    __match_args__ = ("ctx",)

    def __init__(self, ctx: C_co, /, *, delay: float | None = None) -> None:
        if delay is not None and not 0 <= delay < math.inf:
            msg = f"Retry delay must be a finite number of seconds >= 0 or None, got {delay!r}"
            raise ValueError(msg)
        self._ctx = ctx
        self._delay = delay

    @property
    def ctx(self) -> C_co:
        """The context the operation is retried with."""
        return self._ctx

    @property
    def delay(self) -> float | None:
        """Seconds to wait before the retry, or ``None`` for the policy's backoff."""
        return self._delay

    def __repr__(self) -> str:
        delay = "" if self._delay is None else f", delay={self._delay!r}"
        return f"Retry({self._ctx!r}{delay})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Retry:
            return NotImplemented
        that: Retry[object] = other  # pyright: ignore[reportUnknownVariableType]
        return (self._ctx, self._delay) == (that._ctx, that._delay)

    def __hash__(self) -> int:
        return hash((Retry, self._ctx, self._delay))


@final
class Fallback(Generic[T_co]):
    """Use ``value`` as the failed operation's result. Legal from error hooks."""

    __slots__ = ("_value",)
    __match_args__ = ("value",)

    def __init__(self, value: T_co, /) -> None:
        self._value = value

    @property
    def value(self) -> T_co:
        """The result that stands in for the failed operation."""
        return self._value

    def __repr__(self) -> str:
        return f"Fallback({self._value!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Fallback:
            return NotImplemented
        that: Fallback[object] = other  # pyright: ignore[reportUnknownVariableType]
        return bool(self._value == that._value)

    def __hash__(self) -> int:
        return hash((Fallback, self._value))


@final
class Pause:
    """Stop before the operation and ask a human; ``reason`` says what to decide.

    Legal only at points that can pause (``PausablePoint``: ``before_tool``). The run
    ends with ``status == "paused"`` and a request per paused call; when it is resumed,
    the same before hooks run again with the human's decision in ``ctx.decision``.
    """

    __slots__ = ("_reason",)
    __match_args__ = ("reason",)

    def __init__(self, reason: str, /) -> None:
        checked: object = reason  # callers without a type checker pass anything
        if not isinstance(checked, str):
            msg = f"Pause reason must be a str, got {type(checked).__name__} {checked!r:.60}"
            raise TypeError(msg)
        self._reason = reason

    @property
    def reason(self) -> str:
        """Why the operation waits: what the human is asked to decide."""
        return self._reason

    def __repr__(self) -> str:
        return f"Pause({self._reason!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Pause:
            return NotImplemented
        return self._reason == other._reason

    def __hash__(self) -> int:
        return hash((Pause, self._reason))


BeforeResult: TypeAlias = Cont[C] | Halt[T]
"""What a before hook returns: go on with a context, or halt with the operation's result."""

PausableResult: TypeAlias = Cont[C] | Halt[T] | Pause
"""What a before hook at a point that can pause returns: ``BeforeResult`` or ``Pause``.

A ``match`` over a ``BeforeResult`` needs no ``Pause`` case: only ``PausablePoint``
dispatch (``before_tool``) can return one.
"""

ErrorResult: TypeAlias = Retry[C] | Fallback[T] | Failure[Exception]
"""What an error hook returns: retry, fall back, or pass a (possibly new) error on."""

Outcome: TypeAlias = Success[T] | Failure[Exception]
"""What an after hook receives: the operation's value or its error."""
