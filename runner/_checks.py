"""Checks of what the runner is given (numbers, lists, ids, messages, stores), each
raising a clear error.

A wrong type is a ``TypeError``, a wrong value of the right type a ``ValueError``;
both messages name the field, what was expected and what was got.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Final, TypeGuard

from hooks import Message

__all__ = [
    "STORE_METHODS",
    "as_message",
    "check_id",
    "check_type",
    "got",
    "int_at_least",
    "is_list",
    "non_negative_float",
    "positive_float",
    "positive_int",
    "refuse_inside_loop",
    "store_hint",
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


STORE_METHODS: Final = (  # what a SessionStore has, named when a store lacks some
    "load",
    "save",
    "delete",
    "acquire",
    "release",
    "save_paused",
    "load_paused",
    "delete_paused",
)


def check_type(name: str, value: object, expected: type, hint: str) -> None:
    """Refuse ``value`` unless it is an ``expected``; ``hint`` says what to pass."""
    if not isinstance(value, expected):
        msg = f"{name} must be a {expected.__name__}, got {type(value).__name__}; {hint}"
        raise TypeError(msg)


def store_hint(store: object) -> str:
    """What a session store has, and which of it ``store`` lacks."""
    missing = [name for name in STORE_METHODS if not callable(getattr(store, name, None))]
    return f"a store has {', '.join(STORE_METHODS)}; this one has no {', '.join(missing)}"


def check_id(name: str, value: object) -> None:
    """Refuse an id that is no non-empty str."""
    if not isinstance(value, str) or not value:
        msg = f"{name} must be a non-empty str, got {type(value).__name__} {value!r}"
        raise (TypeError if not isinstance(value, str) else ValueError)(msg)


def refuse_inside_loop(name: str, instead: str, *, owner: str = "Runner") -> None:
    """A sync entry point cannot block a running event loop: say which one to await."""
    # asyncio's own probe (in asyncio.events.__all__): None outside a loop, where
    # get_running_loop would raise, at the cost of an exception on every sync run.
    if asyncio._get_running_loop() is None:
        return
    msg = f"{owner}.{name}() was called inside a running event loop; use await runner.{instead}()"
    raise RuntimeError(msg)


def as_message(message: str | Message) -> Message:
    if isinstance(message, Message):
        return message
    if isinstance(message, str):
        return Message("user", message)
    msg = f"a run takes a str or a Message, got {type(message).__name__}"  # type: ignore[unreachable]
    raise TypeError(msg)
