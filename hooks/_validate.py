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
  name, ``on_event``, a name starting with ``before_``, ``after_``, ``on_`` or
  ``wrap_``, or a peer library's hook name (``_peers.PEERS``). The prefixes let a
  method wait for a point declared later -- but only until a dispatch starts: then
  every hook-shaped name must name a declared point or be a helper, else the list is
  refused (``_peers``; ``CompiledCallbacks.chain`` asks, once per list).

The checks are cached per class and module by ``_verdicts``; misspellings are found
by ``_spelling``.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any, Final, NoReturn

from hooks._errors import InvalidCallbacks, describe
from hooks._peers import HOOK_PREFIXES, PEERS, hook_shaped, unmatched
from hooks._points import SIGNATURES, kind_of
from hooks._spelling import misspells

__all__ = [
    "HOOK_PREFIXES",
    "check_entry",
    "check_method",
    "check_name",
    "check_names",
    "check_own",
    "is_async",
    "public",
    "refuse_hookless",
]

Fn = Callable[..., Any]


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


def check_entry(callback: object) -> None:
    """Refuse what cannot be a callback at all: a class, a collection, a function, a value."""
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


def check_names(
    callback: object,
    namespace: dict[str, object],
    read: Callable[[object, str], object] | None = None,
    hooks: dict[str, tuple[object, bool]] | None = None,
    pending: list[str] | None = None,
) -> bool:
    """Check the public names of ``namespace``; whether one of them is hook-shaped.

    A hook's value is ``read(callback, name)`` (``getattr``) or the namespace's own.
    The hook-shaped names that match no point yet join ``pending``.
    """
    hookish = False
    for name, value in namespace.items():
        if not public(name):
            continue
        kind = kind_of(name)
        if kind is None:
            check_name(callback, name)
            if hook_shaped(name):
                hookish = True
                if pending is not None and unmatched(name):
                    pending.append(name)
            continue
        hookish = True
        fn = check_method(callback, name, value if read is None else read(callback, name), kind)
        if hooks is not None:
            hooks[name] = (fn, is_async(fn))
    return hookish


def check_own(callback: object, own: dict[str, object], plain: set[str]) -> bool:
    """Check an instance's own attributes; whether one of them is hook-shaped.

    Names found plain (private, or neither hooks, misspellings nor hook-shaped) join
    ``plain``, so the next instance of the class skips them; a hook or a hook-shaped
    name set on an instance is checked every time.
    """
    hookish = False
    for name in own:
        if name in plain:
            continue
        if not public(name):
            plain.add(name)
            continue
        kind = kind_of(name)
        if kind is not None:
            check_method(callback, name, getattr(callback, name), kind)
            hookish = True
            continue
        check_name(callback, name)
        if hook_shaped(name):
            hookish = True  # never plain: whether it matches a point is asked per dispatch
        else:
            plain.add(name)
    return hookish


def check_name(callback: object, name: str) -> None:
    """Refuse ``name`` if it misspells a declared point's name, with a did-you-mean hint.

    A peer library's hook name (``on_llm_error``) is no misspelling: it is refused when a
    dispatch starts, with the point that does its job (not the closest spelling).
    """
    if name in PEERS:
        return
    close = misspells(name)
    if close is not None:
        msg = (
            f"{describe(callback)} defines {name!r}, which is no hook point; "
            f"did you mean {close!r}?"
        )
        raise InvalidCallbacks(msg, callback=callback, attribute=name)


def refuse_hookless(callback: object) -> NoReturn:
    """Refuse a callback without any hook-shaped attribute, listing what it has."""
    found = sorted(name for name in dir(callback) if public(name))
    listed = f"its public attributes are {found[:8]!r}" if found else "it has no public attribute"
    msg = (
        f"{describe(callback)} defines no hook method: a callback needs at least one public "
        f"method named after a declared hook point (such as 'before_model') or 'on_event', "
        f"or starting with {', '.join(HOOK_PREFIXES)}; {listed}"
    )
    raise InvalidCallbacks(msg, callback=callback)


def public(name: str) -> bool:
    """Whether ``name`` is one validation looks at: no leading underscore, lower case."""
    return not name.startswith("_") and name.islower()
