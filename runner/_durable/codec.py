"""What a durable run stores: its steps' values and errors, its result, as JSON any process loads.

The JSON form is ``runner._records.tagged``'s (run records share it): ``dump`` turns a
value into tagged JSON text and ``load`` turns the text back; nothing is ever
unpickled, and ``load`` trusts nothing it reads (a ``ValueError`` naming what was
expected where, and what came). What cannot be stored is a ``TypeError`` naming it and
where it was (``value[0].state['lock']``): keep what a durable run stores JSON.

An error raised out of a step or a run is a ``StoredError`` carrying its record, and is
rebuilt as ``runner._records.tagged`` says: as itself when its class is allowed (or given
to ``DurableRunner(..., errors=[...])``, through ``json_codec``), else as a
``RecoveredError``. ``PICKLE`` is the opt-in of ``DurableRunner(..., allow_pickle=True)``:
the 0.2 codec, which loads with pickle, so a record is then as trusted as the code.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, cast, final

from runner._records.tagged import (
    EXTRA,
    RecoveredError,
    StoredResponse,
    allowed,
    dump,
    load,
    refuse,
)

__all__ = [
    "JSON",
    "PICKLE",
    "Codec",
    "RecoveredError",
    "StoredError",
    "StoredResponse",
    "allowed",
    "dump",
    "json_codec",
    "load",
    "stored",
]


@final
class StoredError(Exception):
    """An error as a durable run stored it: ``codec.load(blob)`` rebuilds it.

    DBOS records it as the failure of a step or of a run, so its own tools show the
    failure; ``str()`` is the original's type and message.
    """

    def __init__(self, blob: str | bytes, summary: str) -> None:
        super().__init__(blob, summary)
        self.blob = blob
        self.summary = summary

    def __str__(self) -> str:
        return self.summary


@final
class Codec:
    """How a durable runner stores values: ``JSON`` (the default) or ``PICKLE`` (opt-in)."""

    __slots__ = ("dump", "load", "name")

    def __init__(
        self, name: str, dump: Callable[[object], str | bytes], load: Callable[[object], Any]
    ) -> None:
        self.name: Final = name
        self.dump: Final = dump
        self.load: Final = load


def stored(error: BaseException, codec: Codec | None = None) -> StoredError:
    """``error`` as a ``StoredError`` to raise out of a step or a run."""
    blob = (codec or JSON).dump(error)
    return StoredError(blob, f"{type(error).__qualname__}: {error}")


def json_codec(errors: Mapping[str, type[Exception]]) -> Codec:
    """The JSON codec, rebuilding the classes of ``errors`` (from ``allowed``) too."""
    if not errors:
        return JSON
    extra = MappingProxyType(dict(errors))

    def load_with(blob: object) -> Any:
        token = EXTRA.set(extra)
        try:
            return load(blob)
        finally:
            EXTRA.reset(token)

    return Codec("json", dump, load_with)


# -- pickle, the opt-in ---------------------------------------------------------------------------


def dump_pickle(value: object) -> bytes:
    """``value`` pickled, errors as their class, args and picklable attributes (the 0.2 codec)."""
    try:
        return _dumps(value)
    except Exception as exc:
        msg = (
            f"a durable run cannot store {type(value).__name__} {value!r:.80}: "
            f"{type(exc).__name__}: {exc}; keep what a run returns (its state too) picklable"
        )
        raise TypeError(msg) from exc


def load_pickle(blob: object) -> Any:
    """The value ``dump_pickle`` stored (unpickled: trust the record), or JSON ``dump`` stored."""
    if type(blob) is str:
        return load(blob)
    if type(blob) is not bytes:
        refuse("a durable record", "bytes or JSON text", blob)
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


def _picklable(value: object) -> bool:
    try:
        _dumps(value)
    except Exception:
        return False
    return True


def _reduce_error(error: BaseException) -> tuple[Any, ...]:
    cls = type(error)
    if not _picklable(cls):
        replacement = RuntimeError(f"{cls.__module__}.{cls.__qualname__}: {error}")
        replacement.__dict__.update(_pickled_state(error))
        return _unpickled_error, (RuntimeError, replacement.args, _pickled_state(replacement))
    args = error.args if _picklable(error.args) else (str(error),)
    return _unpickled_error, (cls, args, _pickled_state(error))


def _pickled_state(error: BaseException) -> dict[str, Any]:
    attributes: dict[str, Any] = getattr(error, "__dict__", {})
    return {name: value for name, value in attributes.items() if _picklable(value)}


def _proxy(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


def _unpickled_error(
    cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]
) -> BaseException:
    try:
        error = cls.__new__(cls, *args)
    except TypeError:
        error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


JSON: Final = Codec("json", dump, load)
PICKLE: Final = Codec("pickle", dump_pickle, load_pickle)
