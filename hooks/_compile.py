"""Compiling a callbacks list: validate once, then one tuple of bound methods per point.

Everything a dispatch needs is decided here, never per call: which callbacks define
the point's method, the bound methods themselves, and which of them are async.
"""

from __future__ import annotations

import difflib
import inspect
import threading
import types
from collections.abc import Callable, Sequence
from operator import is_
from typing import Any, Final, final

from hooks._errors import InvalidCallbacks, describe
from hooks._points import (
    ON_EVENT,
    SIGNATURES,
    AfterPoint,
    BeforePoint,
    ErrorPoint,
    declarations,
    known_points,
)

__all__ = ["CompiledCallbacks", "compile_callbacks"]

_Fn = Callable[..., Any]
_MISSING: Final = object()
AnyPoint = BeforePoint[Any, Any] | AfterPoint[Any, Any] | ErrorPoint[Any, Any]


@final
class Chain:
    """The callbacks of one list that define one point's method, in list order."""

    __slots__ = ("any_async", "asyncs", "fns", "name", "owners")

    def __init__(
        self,
        name: str,
        owners: tuple[object, ...],
        fns: tuple[_Fn, ...],
        asyncs: tuple[bool, ...] | None = None,
    ) -> None:
        self.name: Final = name
        self.owners: Final = owners
        self.fns: Final = fns
        self.asyncs: Final = tuple(map(_is_async, fns)) if asyncs is None else asyncs
        self.any_async: Final = any(self.asyncs)

    def extend(self, other: Chain) -> Chain:
        """This chain followed by ``other``."""
        if not other.fns:
            return self
        if not self.fns:
            return other
        return Chain(
            self.name, self.owners + other.owners, self.fns + other.fns, self.asyncs + other.asyncs
        )


@final
class CompiledCallbacks:
    """A validated callbacks list with its per-point chains; what the runner holds.

    Build it with ``compile_callbacks``; pass it anywhere a callbacks list goes.
    """

    __slots__ = ("_chains", "_checked", "_lock", "_sync", "callbacks")

    def __init__(self, callbacks: Sequence[object], /) -> None:
        _check_list(callbacks)
        self.callbacks: Final = tuple(callbacks)
        self._lock = threading.Lock()
        known = known_points()
        for callback in self.callbacks:
            _check_callback(callback, known)
        self._checked = len(known)  # how many point names the check above knew
        self._chains: dict[str, Chain] = {
            name: self._build(name, kind) for name, kind in known.items()
        }
        self._sync = _sync_methods(self._chains)

    def chain(self, name: str, kind: str) -> Chain:
        """The chain for the point called ``name``, built (and validated) on first use."""
        chain = self._chains.get(name)
        if chain is None:
            with self._lock:
                chain = self._chains.get(name)
                if chain is None:
                    if self._checked != declarations():  # points declared since: rule 9 again
                        known = known_points()
                        for callback in self.callbacks:
                            _check_callback(callback, known)
                        self._checked = len(known)
                    chain = self._chains[name] = self._build(name, kind)
                    if not chain.any_async:
                        self._sync[name] = chain.fns
        return chain

    def sync_chain(self, name: str, kind: str) -> Chain:
        """``chain(name, kind)``, refused with ``InvalidCallbacks`` if a method is async."""
        chain = self.chain(name, kind)
        if chain.any_async:
            owner = chain.owners[chain.asyncs.index(True)]
            msg = (
                f"{describe(owner)}.{name} is async; sync dispatch cannot await it "
                "(use arun_* or Runner.run_async, or make it a plain def)"
            )
            raise InvalidCallbacks(msg, callback=owner, attribute=name)
        return chain

    def methods(self, point: AnyPoint, /) -> tuple[_Fn, ...]:
        """The bound methods dispatched at ``point``, in list order."""
        return self.chain(point.name, point.kind).fns

    def defines(self, point: AnyPoint, /) -> bool:
        """Whether any callback in the list defines ``point``'s method."""
        return bool(self.methods(point))

    @property
    def observers(self) -> tuple[_Fn, ...]:
        """The ``on_event`` methods of the list, in order."""
        return self._chains[ON_EVENT].fns

    def __add__(self, other: CompiledCallbacks) -> CompiledCallbacks:
        """Both lists, ``self``'s callbacks first, without validating either again."""
        if type(other) is not CompiledCallbacks:
            return NotImplemented
        combined = object.__new__(CompiledCallbacks)
        combined.callbacks = self.callbacks + other.callbacks  # type: ignore[misc]
        combined._lock = threading.Lock()
        combined._checked = min(self._checked, other._checked)
        combined._chains = {
            name: self.chain(name, kind).extend(other.chain(name, kind))
            for name, kind in known_points().items()
        }
        combined._sync = _sync_methods(combined._chains)
        return combined

    def __len__(self) -> int:
        return len(self.callbacks)

    def __repr__(self) -> str:
        return f"compile_callbacks({list(self.callbacks)!r})"

    def _build(self, name: str, kind: str) -> Chain:
        owners: list[object] = []
        fns: list[_Fn] = []
        for callback in self.callbacks:
            fn = getattr(callback, name, _MISSING)
            if fn is _MISSING:
                continue
            owners.append(callback)
            fns.append(_check_method(callback, name, fn, kind))
        return Chain(name, tuple(owners), tuple(fns))


def _sync_methods(chains: dict[str, Chain]) -> dict[str, tuple[_Fn, ...]]:
    """Point name -> methods, for every chain sync dispatch may run as it is.

    The sync dispatchers' one lookup per call: a point missing here is async, or
    was declared after the list was compiled, and takes the slower checked path.
    """
    return {name: chain.fns for name, chain in chains.items() if not chain.any_async}


def compile_callbacks(callbacks: Sequence[object] | CompiledCallbacks, /) -> CompiledCallbacks:
    """Validate ``callbacks`` once and return the compiled form dispatch runs on.

    Raises ``InvalidCallbacks`` for a misspelled hook name, a non-callable hook
    attribute, a method that cannot take its point's arguments, a class given instead
    of an instance, or a bare function given instead of a module or object.

    The same list object compiles once: the result is cached by the list's identity
    and reused while its items are the same objects (a mutated list compiles anew).
    """
    if type(callbacks) is CompiledCallbacks:
        return callbacks
    entry = _cache.get(id(callbacks))
    if entry is not None and entry[0] is callbacks:
        items = entry[1]
        if type(callbacks) is tuple or (
            len(items) == len(callbacks) and (not items or all(map(is_, items, callbacks)))
        ):
            return entry[2]
    result = CompiledCallbacks(callbacks)
    with _cache_lock:
        if len(_cache) >= _CACHE_SIZE:
            del _cache[next(iter(_cache))]
        _cache[id(callbacks)] = (callbacks, result.callbacks, result)
    return result


# id(list) -> (the list, its items when compiled, the compiled form). The strong
# reference keeps the id from being reused; the items catch a list mutated since.
_cache: dict[int, tuple[object, tuple[object, ...], CompiledCallbacks]] = {}
_cache_lock = threading.Lock()
_CACHE_SIZE: Final = 256


def _is_async(fn: _Fn) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 -- an object with `async def __call__`
    )


def _check_list(callbacks: object) -> None:
    if isinstance(callbacks, str | bytes) or not isinstance(callbacks, Sequence):
        msg = (
            "callbacks must be a list or tuple of modules or objects, "
            f"got {type(callbacks).__name__}; wrap a single callback as [callback]"
        )
        raise InvalidCallbacks(msg, callback=callbacks)


_NOT_CALLBACKS: Final = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.NoneType,
    str,
    bytes,
    int,
    float,
)


_COLLECTIONS: Final = (list, tuple, dict, set, frozenset)


def _check_callback(callback: object, known: dict[str, str]) -> None:
    if isinstance(callback, type):
        msg = (
            f"{describe(callback)} was passed where a callback is needed; "
            f"pass an instance: {callback.__qualname__}()"
        )
        raise InvalidCallbacks(msg, callback=callback)
    if isinstance(callback, _COLLECTIONS):
        msg = (
            f"a callback is a module or an object with hook methods, "
            f"got a {type(callback).__name__} {callback!r:.60}; "
            "flatten nested lists: callbacks=[*guards, audit]"
        )
        raise InvalidCallbacks(msg, callback=callback)
    if isinstance(callback, _NOT_CALLBACKS):
        msg = (
            f"a callback is a module or an object with hook methods, got {type(callback).__name__} "
            f"{callback!r:.60}; put a function in a class or module, or use hooks.observing()"
        )
        raise InvalidCallbacks(msg, callback=callback)
    for name in dir(callback):
        if name.startswith("_") or not name.islower():
            continue
        if name in known:
            fn = getattr(callback, name)
            _check_method(callback, name, fn, known[name])
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        if close:
            msg = (
                f"{describe(callback)} defines {name!r}, which is no hook point; "
                f"did you mean {close[0]!r}?"
            )
            raise InvalidCallbacks(msg, callback=callback, attribute=name)


def _check_method(callback: object, name: str, fn: object, kind: str) -> _Fn:
    """``fn`` itself, once it is known to be callable as the point calls it."""
    expected = SIGNATURES[kind]
    if not callable(fn):
        msg = (
            f"{describe(callback)}.{name} must be a method taking {expected}, "
            f"got {type(fn).__name__} {fn!r:.60}"
        )
        raise InvalidCallbacks(msg, callback=callback, attribute=name)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have no signature; nothing to check
        return fn
    try:
        signature.bind(*expected.strip("()").split(", "))
    except TypeError:
        msg = (
            f"{describe(callback)}.{name}{signature} cannot be called as {name}{expected}, "
            f"which is how hook point {name!r} calls it"
        )
        raise InvalidCallbacks(msg, callback=callback, attribute=name) from None
    return fn
