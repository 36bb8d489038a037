"""What a durable run stores: its steps' values and errors, its result, as bytes any process loads.

DBOS stores a step's value with pickle, and a value that pickles may still not load
back: an ``openai.RateLimitError`` pickles, but unpickling calls its ``__init__``
without the ``response`` and ``body`` it requires, so a recovered run would crash
where the first one went on. Here every error is stored as its class, its ``args``
and those of its attributes that can be stored (``__notes__`` among them), and
rebuilt without calling ``__init__``; an error whose class cannot be stored (one
defined inside a function) comes back as a ``RuntimeError`` naming it. Tracebacks,
causes and contexts are not stored. A ``MappingProxyType`` (a result's ``state``) is
stored as the mapping it shows.

Loading runs pickle: a durable run's record is as trusted as the code that reads it.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, cast, final

__all__ = ["StoredError", "dump", "load", "stored"]


@final
class StoredError(Exception):
    """An error as a durable run stored it: ``load(blob)`` rebuilds it.

    DBOS records it as the failure of a step or of a run, so its own tools show the
    failure; ``str()`` is the original's type and message.
    """

    def __init__(self, blob: bytes, summary: str) -> None:
        super().__init__(blob, summary)
        self.blob = blob
        self.summary = summary

    def __str__(self) -> str:
        return self.summary


def stored(error: BaseException) -> StoredError:
    """``error`` as a ``StoredError`` to raise out of a step or a run."""
    return StoredError(dump(error), f"{type(error).__qualname__}: {error}")


def dump(value: object) -> bytes:
    """``value`` as bytes that ``load`` turns back into an equal value.

    Raises ``TypeError`` naming the value when part of it cannot be stored (a lock in
    a run's state, say): a durable run's result must outlive its process.
    """
    try:
        return _dumps(value)
    except Exception as exc:
        msg = (
            f"a durable run cannot store {type(value).__name__} {value!r:.80}: "
            f"{type(exc).__name__}: {exc}; keep what a run returns (its state too) picklable"
        )
        raise TypeError(msg) from exc


def load(blob: bytes) -> Any:
    """The value ``dump`` stored as ``blob``."""
    return pickle.loads(blob)


@final
class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: object) -> Any:
        if isinstance(obj, BaseException):
            return _reduce_error(obj)
        if type(obj) is MappingProxyType:
            return _proxy, (dict(cast("Mapping[Any, Any]", obj)),)
        return NotImplemented


def _dumps(value: object) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def _storable(value: object) -> bool:
    try:
        _dumps(value)
    except Exception:
        return False
    return True


def _reduce_error(error: BaseException) -> tuple[Any, ...]:
    """How to rebuild ``error``: its class, its args and its storable attributes."""
    cls = type(error)
    if not _storable(cls):
        replacement = RuntimeError(f"{cls.__module__}.{cls.__qualname__}: {error}")
        replacement.__dict__.update(_state(error))
        return _rebuild, (RuntimeError, replacement.args, _state(replacement))
    args = error.args if _storable(error.args) else (str(error),)
    return _rebuild, (cls, args, _state(error))


def _state(error: BaseException) -> dict[str, Any]:
    attributes: dict[str, Any] = getattr(error, "__dict__", {})
    return {name: value for name, value in attributes.items() if _storable(value)}


def _proxy(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


def _rebuild(
    cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]
) -> BaseException:
    """An instance of ``cls`` with ``args`` and ``state``, made without calling ``__init__``."""
    try:
        error = cls.__new__(cls, *args)
    except TypeError:  # a __new__ of its own that wants other arguments
        error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error
