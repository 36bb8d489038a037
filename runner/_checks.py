"""Checks of the numbers and lists the runner is built from, each raising a clear error.

A wrong type is a ``TypeError``, a wrong value of the right type a ``ValueError``;
both messages name the field, what was expected and what was got.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeGuard

__all__ = [
    "got",
    "int_at_least",
    "is_list",
    "non_negative_float",
    "positive_float",
    "positive_int",
]


def positive_int(name: str, value: object) -> int:
    """``value`` if it is an int >= 1 (a bool is no int here); else a clear error."""
    return int_at_least(name, value, 1, expected="a positive int")


def int_at_least(name: str, value: object, minimum: int, *, expected: str = "") -> int:
    """``value`` if it is an int >= ``minimum`` (a bool is no int here); else a clear error.

    ``expected`` says what ``name`` must be in the message (``"an int >= 0"`` if empty).
    """
    expected = expected or f"an int >= {minimum}"
    if not isinstance(value, int) or isinstance(value, bool):
        msg = f"{name} must be {expected}, got {got(value)}"
        raise TypeError(msg)
    if value < minimum:
        msg = f"{name} must be {expected}, got {value!r}"
        raise ValueError(msg)
    return value


def non_negative_float(name: str, value: object) -> float:
    """``value`` if it is a finite int or float >= 0 (not a bool); else a clear error.

    NaN and infinities are refused: either would switch off a bound they take part in.
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        msg = f"{name} must be a finite number >= 0, got {got(value)}"
        raise TypeError(msg)
    if not math.isfinite(value) or value < 0:
        msg = f"{name} must be a finite number >= 0, got {value!r}"
        raise ValueError(msg)
    return value


def positive_float(name: str, value: object) -> float:
    """``value`` if it is a finite int or float > 0 (not a bool); else a clear error."""
    if non_negative_float(name, value) == 0:
        msg = f"{name} must be a finite number > 0, got {value!r}"
        raise ValueError(msg)
    return non_negative_float(name, value)


def is_list(value: object) -> TypeGuard[Sequence[object]]:
    """Whether ``value`` is a list, a tuple or another sequence that is not a str or bytes."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def got(value: object) -> str:
    """``value`` for an error message: its type's name, then its repr, cut at 60 characters."""
    return f"{type(value).__name__} {value!r:.60}"
