"""Verdicts: the validation of a class or module, kept so that it is done once.

Validation is cached so that a fresh list of known callbacks costs a few dict
lookups, whatever the number of declared points:

- a class's verdict is kept per class while no point is declared (the registry's
  generation). Each instance's own ``__dict__`` is still read every time, since an
  instance attribute can shadow or add a hook name. Classes that compute their
  attributes (a Python ``__getattr__`` / ``__getattribute__``, a custom ``__dir__``)
  are validated in full every time;
- a module's verdict is kept while the generation and its number of attributes hold;
- whether a name misspells a point is kept per name by ``_spelling``.

What a cache cannot see: a hook method *replaced* on a class or module after it was
validated is checked again when its point's chain is built (the method found is
compared with the one validated); a misspelled name *added* to a class after its
first use goes unnoticed until a point is declared.
"""

from __future__ import annotations

import threading
import types
from typing import Any, Final, final

from hooks._peers import hook_shaped, refuse_unmatched, unmatched
from hooks._points import kind_of
from hooks._validate import (
    check_entry,
    check_method,
    check_name,
    check_names,
    check_own,
    is_async,
    public,
    refuse_hookless,
)

__all__ = ["Verdict", "refuse_unmatched_names", "validate"]

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
        "unmatched",
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
        unmatched: tuple[str, ...] = (),
    ) -> None:
        self.owner: Final = owner  # the class or module validated
        self.generation: Final = generation
        self.hooks: Final = hooks  # hook name -> (the function validated, whether it is async)
        self.bound: Final = bound  # instances' methods are bound forms of hooks' functions
        self.dynamic: Final = dynamic  # hook names whose class attribute is not a plain def
        self.hookish: Final = hookish  # the class or module has a hook-shaped attribute
        self.has_dict: Final = has_dict  # instances have a __dict__ that may add hooks
        self.size: Final = size  # a module's number of attributes when validated
        # Hook-shaped names matching no point at ``generation`` (nor helpers): refused
        # when a dispatch starts, unless their point is declared by then (a new verdict).
        self.unmatched: Final = unmatched
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
        check_entry(callback)
        verdict = _validate_class(callback, generation)
        if verdict is None:
            return None
    if verdict.quick:
        return verdict
    hookish = verdict.hookish
    if verdict.has_dict:
        own = callback.__dict__
        if own and not own.keys() <= verdict.plain:
            hookish = check_own(callback, own, verdict.plain) or hookish
    for name in verdict.dynamic:
        check_method(callback, name, getattr(callback, name), _kind(name))
    if not hookish:
        refuse_hookless(callback)
    return verdict


def _validate_class(callback: object, generation: int) -> Verdict | None:
    cls = type(callback)
    if _computes_attributes(cls):
        _validate_fully(callback)
        return None
    hooks: dict[str, tuple[object, bool]] = {}
    dynamic: list[str] = []
    pending: list[str] = []
    hookish = False
    for name in dir(cls):
        if not public(name):
            continue
        kind = kind_of(name)
        if kind is None:
            check_name(callback, name)
            if hook_shaped(name):
                hookish = True
                if unmatched(name):
                    pending.append(name)
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
        unmatched=tuple(pending),
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
    pending: list[str] = []
    hookish = check_names(module, dict(namespace), hooks=hooks, pending=pending)
    if not hookish:
        refuse_hookless(module)
    verdict = Verdict(
        module, generation, hooks, bound=False, hookish=True, size=size, unmatched=tuple(pending)
    )
    _remember(_modules, module, verdict)
    return verdict


def refuse_unmatched_names(callback: object, verdict: Verdict | None) -> None:
    """Refuse ``callback`` if a hook-shaped name of it matches no declared point.

    ``verdict`` is its verdict at the current generation: its class's or module's
    unmatched names are known; an instance's own names that are not ``plain`` are read.
    A callback without a verdict (computed attributes) is read in full.
    """
    if verdict is None:
        names = [name for name in dir(callback) if public(name) and unmatched(name)]
    else:
        names = list(verdict.unmatched)
        if verdict.has_dict:
            own = callback.__dict__
            if own and not own.keys() <= verdict.plain:
                names.extend(
                    name
                    for name in own
                    if name not in verdict.plain and public(name) and unmatched(name)
                )
    if names:
        refuse_unmatched(callback, sorted(set(names)))


def _validate_fully(callback: object) -> None:
    """Every rule, by ``dir()`` and ``getattr``, keeping nothing: for computed attributes."""
    check_entry(callback)
    names = dict.fromkeys(dir(callback), _MISSING)
    if not check_names(callback, names, getattr):
        refuse_hookless(callback)


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
