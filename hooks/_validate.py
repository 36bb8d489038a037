"""Validating callbacks: what makes an entry of a callbacks list dispatchable.

A list breaking any of these rules is refused with ``InvalidCallbacks`` before any
callback runs:

- an entry is a module or an object -- not a class (pass an instance), a nested
  collection, a bare function, ``None``, a string or a number;
- every public attribute named after a declared point is callable as that point
  calls it (``(ctx)``, ``(outcome, ctx)``, ``(failure, ctx)``, ``(event)``);
- no public attribute misspells a declared point's name: one within difflib ratio
  0.8 of a name is refused with a did-you-mean hint, unless it contains a declared
  name as whole underscore-separated words (``before_model_hook``, ``after_tool_call``,
  ``log_before_model``), which marks a helper extending the hook's name;
- a callback defines at least one hook-shaped public attribute: a declared point's
  name, ``on_event``, or a name starting with ``before_``, ``after_``, ``on_`` or
  ``wrap_``. The prefixes let a method wait for a point declared later.

Validation is cached so that a fresh list of known callbacks costs a few dict
lookups, whatever the number of declared points:

- a class's verdict is kept per class while no point is declared (the registry's
  generation). Each instance's own ``__dict__`` is still read every time, since an
  instance attribute can shadow or add a hook name. Classes that compute their
  attributes (a Python ``__getattr__`` / ``__getattribute__``, a custom ``__dir__``)
  are validated in full every time;
- a module's verdict is kept while the generation and its number of attributes hold;
- whether a name misspells a point is kept per name and updated with only the names
  declared since, so a check never walks the whole registry twice.

What a cache cannot see: a hook method *replaced* on a class or module after it was
validated is checked again when its point's chain is built (the method found is
compared with the one validated); a misspelled name *added* to a class after its
first use goes unnoticed until a point is declared.
"""

from __future__ import annotations

import inspect
import threading
import types
from collections.abc import Callable
from difflib import SequenceMatcher
from typing import Any, Final, final

from hooks._errors import InvalidCallbacks, describe
from hooks._points import SIGNATURES, declarations, declared_since, kind_of

__all__ = ["Verdict", "check_method", "is_async", "misspells", "validate"]

Fn = Callable[..., Any]
HOOK_PREFIXES: Final = ("before_", "after_", "on_", "wrap_")
_CUTOFF: Final = 0.8  # difflib's get_close_matches default, as 0.1 used it
_CACHE_SIZE: Final = 1024
_MISSING: Final = object()


@final
class Verdict:
    """What validating one class (or module) found: its hook methods, checked once."""

    __slots__ = (
        "bound",
        "dynamic",
        "generation",
        "has_dict",
        "hookish",
        "hooks",
        "owner",
        "plain",
        "quick",
        "size",
    )

    def __init__(
        self,
        owner: object,
        generation: int,
        hooks: dict[str, tuple[object, bool]],
        *,
        bound: bool,
        dynamic: tuple[str, ...] = (),
        hookish: bool,
        has_dict: bool = False,
        size: int = 0,
    ) -> None:
        self.owner: Final = owner  # the class or module; also keeps its id from being reused
        self.generation: Final = generation
        self.hooks: Final = hooks  # hook name -> (the function validated, whether it is async)
        self.bound: Final = bound  # instances' methods are bound forms of hooks' functions
        self.dynamic: Final = dynamic  # hook names whose class attribute is not a plain def
        self.hookish: Final = hookish  # the class or module has a hook-shaped attribute
        self.has_dict: Final = has_dict  # instances have a __dict__ that may add hooks
        self.size: Final = size  # a module's number of attributes when validated
        # Instance attribute names seen and found to be neither hooks, misspellings nor
        # hook-shaped: an instance whose own attributes are all here adds nothing.
        self.plain: Final[set[str]] = set()
        self.quick: Final = hookish and not has_dict and not dynamic  # nothing per instance


# Keyed by the class or module itself (both hash by identity), which the key keeps alive.
_types: dict[type, Verdict] = {}
_modules: dict[object, Verdict] = {}
_lock = threading.Lock()
_MODULE: Final = types.ModuleType


def validate(callback: object, generation: int) -> Verdict | None:
    """Check ``callback`` against the registry at ``generation`` (``declarations()``).

    Returns its verdict (cached per class or module) for building its chains, or
    ``None`` when none can be kept and every chain must check what it finds.
    """
    cls = type(callback)
    if cls is _MODULE:
        verdict = _modules.get(callback)
        if (
            verdict is None
            or verdict.generation != generation
            or verdict.size != len(vars(callback))
        ):
            return _validate_module(callback, generation)
        return verdict
    verdict = _types.get(cls)
    if verdict is None or verdict.generation != generation:
        _check_entry(callback)
        verdict = _validate_class(callback, generation)
        if verdict is None:
            return None
    if verdict.quick:
        return verdict
    hookish = verdict.hookish
    if verdict.has_dict:
        own = callback.__dict__
        if own and not own.keys() <= verdict.plain:
            hookish = _check_own(callback, own, verdict.plain) or hookish
    for name in verdict.dynamic:
        check_method(callback, name, getattr(callback, name), _kind(name))
    if not hookish:
        _refuse_hookless(callback)
    return verdict


def check_method(callback: object, name: str, fn: object, kind: str) -> Fn:
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


def is_async(fn: object) -> bool:
    """Whether calling ``fn`` gives a coroutine to await (``async def`` or async ``__call__``)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 -- an object with `async def __call__`
    )


# -- one callback -------------------------------------------------------------------

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


def _check_entry(callback: object) -> None:
    if isinstance(callback, type):
        msg = (
            f"{describe(callback)} was passed where a callback is needed; "
            f"pass an instance: {callback.__qualname__}()"
        )
        raise InvalidCallbacks(msg, callback=callback)
    entry: object = callback  # as given: isinstance narrows ``callback`` below
    if isinstance(callback, _COLLECTIONS):
        msg = (
            f"a callback is a module or an object with hook methods, "
            f"got a {type(entry).__name__} {entry!r:.60}; "
            "flatten nested lists: callbacks=[*guards, audit]"
        )
        raise InvalidCallbacks(msg, callback=entry)
    if isinstance(callback, _NOT_CALLBACKS):
        msg = (
            f"a callback is a module or an object with hook methods, got {type(entry).__name__} "
            f"{entry!r:.60}; put a function in a class or module, or use hooks.observing()"
        )
        raise InvalidCallbacks(msg, callback=entry)


def _validate_class(callback: object, generation: int) -> Verdict | None:
    cls = type(callback)
    if _computes_attributes(cls):
        _validate_fully(callback)
        return None
    hooks: dict[str, tuple[object, bool]] = {}
    dynamic: list[str] = []
    hookish = False
    for name in dir(cls):
        if not _public(name):
            continue
        kind = kind_of(name)
        if kind is None:
            _check_name(callback, name)
            hookish = hookish or name.startswith(HOOK_PREFIXES)
            continue
        hookish = True
        raw = _static(cls, name)
        if type(raw) is types.FunctionType:
            check_method(callback, name, raw.__get__(callback, cls), kind)
            hooks[name] = (raw, is_async(raw))
        else:  # a property, staticmethod, callable object ...: judged per instance
            dynamic.append(name)
    verdict = Verdict(
        cls,
        generation,
        hooks,
        bound=True,
        dynamic=tuple(dynamic),
        hookish=hookish,
        has_dict=hasattr(callback, "__dict__"),
    )
    _remember(_types, cls, verdict)
    return verdict


def _validate_module(module: object, generation: int) -> Verdict | None:
    namespace = vars(module)
    if "__getattr__" in namespace or "__dir__" in namespace:  # PEP 562: computed attributes
        _validate_fully(module)
        return None
    size = len(namespace)
    hooks: dict[str, tuple[object, bool]] = {}
    hookish = _check_names(module, dict(namespace), hooks=hooks)
    if not hookish:
        _refuse_hookless(module)
    verdict = Verdict(module, generation, hooks, bound=False, hookish=True, size=size)
    _remember(_modules, module, verdict)
    return verdict


def _validate_fully(callback: object) -> None:
    """Every rule, by ``dir()`` and ``getattr``, keeping nothing: for computed attributes."""
    _check_entry(callback)
    names = dict.fromkeys(dir(callback), _MISSING)
    if not _check_names(callback, names, getattr):
        _refuse_hookless(callback)


def _check_names(
    callback: object,
    namespace: dict[str, object],
    read: Callable[[object, str], object] | None = None,
    hooks: dict[str, tuple[object, bool]] | None = None,
) -> bool:
    """Check the public names of ``namespace``; whether one of them is hook-shaped.

    A hook's value is ``read(callback, name)`` (``getattr``) or the namespace's own.
    """
    hookish = False
    for name, value in namespace.items():
        if not _public(name):
            continue
        kind = kind_of(name)
        if kind is None:
            _check_name(callback, name)
            hookish = hookish or name.startswith(HOOK_PREFIXES)
            continue
        hookish = True
        fn = check_method(callback, name, value if read is None else read(callback, name), kind)
        if hooks is not None:
            hooks[name] = (fn, is_async(fn))
    return hookish


def _check_own(callback: object, own: dict[str, object], plain: set[str]) -> bool:
    """Check an instance's own attributes; whether one of them is hook-shaped."""
    hookish = False
    for name in own:
        if name in plain:
            continue
        kind = kind_of(name) if _public(name) else None
        if kind is not None:
            check_method(callback, name, getattr(callback, name), kind)
            hookish = True
        elif _public(name) and name.startswith(HOOK_PREFIXES):
            _check_name(callback, name)
            hookish = True
        else:
            if _public(name):
                _check_name(callback, name)
            plain.add(name)
    return hookish


def _check_name(callback: object, name: str) -> None:
    close = misspells(name)
    if close is not None:
        msg = (
            f"{describe(callback)} defines {name!r}, which is no hook point; "
            f"did you mean {close!r}?"
        )
        raise InvalidCallbacks(msg, callback=callback, attribute=name)


def _refuse_hookless(callback: object) -> None:
    found = sorted(name for name in dir(callback) if _public(name))
    listed = f"its public attributes are {found[:8]!r}" if found else "it has no public attribute"
    msg = (
        f"{describe(callback)} defines no hook method: a callback needs at least one public "
        f"method named after a declared hook point (such as 'before_model') or 'on_event', "
        f"or starting with {', '.join(HOOK_PREFIXES)}; {listed}"
    )
    raise InvalidCallbacks(msg, callback=callback)


def _public(name: str) -> bool:
    return not name.startswith("_") and name.islower()


def _kind(name: str) -> str:
    kind = kind_of(name)
    assert kind is not None, name  # only declared names reach here; the registry never shrinks
    return kind


def _static(cls: type, name: str) -> object:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


def _computes_attributes(cls: type) -> bool:
    return any(
        type(_static(cls, special)) is types.FunctionType
        for special in ("__getattr__", "__getattribute__", "__dir__")
    )


def _remember(cache: dict[Any, Verdict], owner: object, verdict: Verdict) -> None:
    with _lock:
        if len(cache) >= _CACHE_SIZE:
            del cache[next(iter(cache))]
        cache[owner] = verdict


# -- misspellings -------------------------------------------------------------------


@final
class _NearMisses:
    """Which names misspell a declared point, kept per name and caught up incrementally.

    ``near`` maps a name to ``(score, point)``: a score of 2.0 means "never a
    misspelling" (it is a point's name or contains one as whole words) and is final; a
    ratio >= 0.8 names the point it misspells; 0.0 means none so far. Both sides are
    indexed by length, since a ratio >= 0.8 needs lengths within 2/3 to 3/2 of each
    other and containing a point needs a longer name: a point declared later is
    compared with the cached names that could match it, never with the whole cache.
    """

    __slots__ = ("names", "near", "points", "synced")

    def __init__(self) -> None:
        self.near: dict[str, tuple[float, str]] = {}
        self.names: dict[int, list[str]] = {}  # cached names still open, by length
        self.points: dict[int, list[str]] = {}  # declared point names, by length
        self.synced = 0  # how many declared names the index accounts for

    def catch_up(self) -> None:
        """Account for the points declared since the last call; the caller holds ``_lock``."""
        new = declared_since(self.synced)
        for point in new:
            size = len(point)
            self.points.setdefault(size, []).append(point)
            for length, names in self.names.items():
                if length > size + 1 or _close_lengths(length, size):
                    for name in names:
                        entry = self.near[name]
                        if entry[0] <= 1.0:
                            self.near[name] = max(entry, _score(name, point))
        self.synced += len(new)

    def add(self, name: str) -> tuple[float, str]:
        """``name``'s entry against every declared point; the caller holds ``_lock``."""
        if len(self.near) >= _NEAR_SIZE:  # recomputed on demand; keeps odd workloads bounded
            self.near.clear()
            self.names.clear()
        entry = self.near[name] = self._score_all(name)
        if entry[0] <= 1.0:
            self.names.setdefault(len(name), []).append(name)
        return entry

    def _score_all(self, name: str) -> tuple[float, str]:
        if kind_of(name) is not None:
            return _NEVER
        words = name.split("_")
        for start in range(len(words)):
            for end in range(start + 1, len(words) + 1):
                if kind_of("_".join(words[start:end])) is not None:
                    return _NEVER
        best = (0.0, "")
        matcher: SequenceMatcher[str] = SequenceMatcher()
        matcher.set_seq2(name)
        size = len(name)
        for length in range(max(1, 2 * size // 3), 3 * size // 2 + 2):
            for point in self.points.get(length, ()):
                best = max(best, _ratio(matcher, point))
        return best


_NEVER: Final = (2.0, "")
_NEAR_SIZE: Final = 8192
_index = _NearMisses()


def misspells(name: str) -> str | None:
    """The declared point name ``name`` is a misspelling of, or ``None``."""
    entry = _index.near.get(name) if _index.synced == declarations() else None
    if entry is None:
        with _lock:
            _index.catch_up()
            entry = _index.near.get(name)
            if entry is None:
                entry = _index.add(name)
    score, point = entry
    return point if _CUTOFF <= score <= 1.0 else None


def _close_lengths(first: int, second: int) -> bool:
    """Whether strings of these lengths can reach the cutoff ratio at all."""
    return 2 * min(first, second) >= _CUTOFF * (first + second)


def _score(name: str, point: str) -> tuple[float, str]:
    if f"_{point}_" in f"_{name}_":
        return _NEVER
    matcher: SequenceMatcher[str] = SequenceMatcher()
    matcher.set_seq2(name)
    return _ratio(matcher, point)


def _ratio(matcher: SequenceMatcher[str], point: str) -> tuple[float, str]:
    # difflib.get_close_matches's filters, cheapest first; ties go to the greater name.
    matcher.set_seq1(point)
    if (
        matcher.real_quick_ratio() >= _CUTOFF
        and matcher.quick_ratio() >= _CUTOFF
        and (ratio := matcher.ratio()) >= _CUTOFF
    ):
        return (ratio, point)
    return (0.0, "")
