"""Compiling a callbacks list: validate once, then a chain of bound methods per point.

Everything a dispatch needs is decided here, never per call: which callbacks define
the point's method, the bound methods themselves, and which of them are async.
Validation (the rules of ``_validate``, cached per class and module by ``_verdicts``)
happens when the list is compiled; a point's chain is built the first time that
point is dispatched, so compiling costs the same whatever the number of declared
points.

Which callbacks of a list define a point, with which functions and whether async, is
decided once per point and tuple of verdicts (so per tuple of classes or modules) and
kept as a ``_Layout``: a fresh list of known callbacks gets its chain by binding those
functions to its own callbacks, after checking that no class or module attribute of
that name changed since and no instance holds the name itself. Otherwise, and for
classes that compute their attributes, the chain is found callback by callback.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from itertools import repeat
from operator import attrgetter, is_
from types import MethodType
from typing import Any, Final, final

from hooks._errors import InvalidCallbacks, describe
from hooks._placed import Placed, Tier
from hooks._placing import Placing, build_placed, placing
from hooks._points import AnyPoint, declarations
from hooks._tool_info import ToolInfo
from hooks._validate import Fn, check_method
from hooks._validate import is_async as _is_async
from hooks._verdicts import Verdict, refuse_unmatched_names, validate

__all__ = ["CompiledCallbacks", "compile_callbacks"]

_MISSING: Final = object()
_VIEWS_SIZE: Final = 256  # tools a list keeps a view for; past it, it starts over


@final
class Chain:
    """The callbacks of one list that define one point's method, in list order."""

    __slots__ = ("all_async", "any_async", "asyncs", "fns", "owners", "steps")

    def __init__(
        self, owners: tuple[object, ...], fns: tuple[Fn, ...], asyncs: tuple[bool, ...]
    ) -> None:
        self.owners: Final = owners
        self.fns: Final = fns
        self.asyncs: Final = asyncs
        self.any_async: Final = True in asyncs
        self.all_async: Final = False not in asyncs  # what async wrap dispatch needs
        # (method, is_async) pairs, what the async fast loops walk; empty when none is async
        self.steps: Final = tuple(zip(fns, asyncs, strict=True)) if self.any_async else ()


@final
class CompiledCallbacks:
    """A validated callbacks list with its per-point chains; what the runner holds.

    Build it with ``compile_callbacks``; pass it anywhere a callbacks list goes.
    """

    __slots__ = (
        "_chains",
        "_generation",
        "_inner",
        "_placing",
        "_ready",
        "_shadows",
        "_sync",
        "_tool",
        "_verdicts",
        "_views",
        "callbacks",
    )

    def __init__(self, callbacks: Sequence[object], /) -> None:
        given: object = callbacks  # checked as callers without a type checker pass it
        if type(given) is not list and type(given) is not tuple:
            _check_list(given)
        self.callbacks: Final = tuple(callbacks)
        # The callbacks themselves (a Placed one unwrapped) and, when any is placed,
        # how: tiers, matches and order, decided here once (None: list order, no match).
        placed = any(type(callback) is Placed for callback in self.callbacks)
        self._inner: tuple[object, ...] = (
            tuple(map(_unwrapped, self.callbacks)) if placed else self.callbacks
        )
        self._generation = generation = declarations()  # the registry validation knew
        self._verdicts: tuple[Verdict | None, ...] = tuple(
            map(validate, self._inner, repeat(generation))
        )
        self._placing: Placing | None = placing(self.callbacks, self._inner) if placed else None
        # id(ToolInfo) -> the view for that tool (which holds it): see ``for_tool``.
        self._views: dict[int, CompiledCallbacks] = {}
        self._tool: Final[ToolInfo | None] = None  # the tool of a view, kept alive with it
        self._shadows: tuple[tuple[object, CompiledCallbacks], ...] | None = None
        # Chains are built without a lock: two threads building one at once build equal
        # chains, and either may stay.
        self._chains: dict[str, Chain] = {}
        # Point name -> methods, for each chain sync dispatch may run as it is: the sync
        # dispatchers' one lookup per call. A point missing here is async or not built yet.
        self._sync: dict[str, tuple[Fn, ...]] = {}
        # The generation at which no callback had an unmatched hook-shaped name (-1: not
        # asked yet). Asked when a chain is first built: when a dispatch starts.
        self._ready = -1

    def chain(self, name: str, kind: str) -> Chain:
        """The chain for the point called ``name``, built (and validated) on first use.

        Building the first chain (a dispatch or a run starting) also refuses, with
        ``InvalidCallbacks``, a callback with a hook-shaped name that matches no point
        declared by then (``hooks._peers``): asked once per list and generation.
        """
        chain = self._chains.get(name)
        if chain is not None:
            return chain
        generation = declarations()
        if self._generation != generation:
            # Points declared since compiling: their names may be misspelled here, or
            # be hooks to check. Validate again (cached per class, so cheap).
            self._verdicts = tuple(map(validate, self._inner, repeat(generation)))
            self._generation = generation
        verdicts = self._verdicts
        layout = None
        if self._placing is None:
            key = (verdicts, name)
            try:
                layout = _layouts[key]
            except KeyError:
                layout = _layout(verdicts, name)
                _remember(key, layout)
        if self._ready != generation:
            # A layout knows its verdicts have no unmatched name and no instance dict to
            # read: then there is nothing to ask (the common case costs one read).
            if layout is None or layout.names_to_check:
                for callback, verdict in zip(self._inner, verdicts, strict=True):
                    if verdict is None or verdict.unmatched or verdict.has_dict:
                        refuse_unmatched_names(callback, verdict)
            self._ready = generation
        if self._placing is not None:
            chain = Chain(*build_placed(self._placing, self._inner, name, kind, self._member))
        else:
            chain = None if layout is None else layout.chain(self._inner, name)
        if chain is None:
            chain = self._build(name, kind)
        self._chains[name] = chain
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
                "(use arun_* or Runner.arun, or make it a plain def)"
            )
            raise InvalidCallbacks(msg, callback=owner, attribute=name)
        return chain

    def methods(self, point: AnyPoint, /) -> tuple[Fn, ...]:
        """The bound methods dispatched at ``point``, in list order."""
        return self.chain(point.name, point.kind).fns

    def defines(self, point: AnyPoint, /) -> bool:
        """Whether any callback in the list defines ``point``'s method."""
        return bool(self.methods(point))

    def for_agent(self, agent: str, /) -> CompiledCallbacks:
        """The list as the agent named ``agent`` dispatches it: a callback matched to
        other agents (``agents=``) left out, one matched to this agent kept without
        asking again. The list itself when nothing in it is matched by agent."""
        placed = self._placing
        if placed is None or not placed.by_agent:
            return self
        kept: list[object] = []
        for callback, each in zip(self.callbacks, placed.placed, strict=True):
            match = None if each is None else each.match
            if each is None or match is None or match.agents is None:
                kept.append(callback)
            elif match.agent(agent):
                kept.append(each.with_match(match.without_agent()))
        return CompiledCallbacks(kept)

    def for_tool(self, tool: ToolInfo, /) -> CompiledCallbacks:
        """The list as a call of ``tool`` dispatches its tool points: a callback whose
        match cannot fit ``tool`` left out (it costs that call nothing), one that fits
        kept with only its per-call tests (the arguments). Made once per ``ToolInfo``
        object and kept; the list itself when nothing in it is matched by tool."""
        view = self._views.get(id(tool))  # a kept view keeps its tool: the id stays its own
        if view is not None:
            return view
        placed = self._placing
        if placed is None or not placed.by_tool:
            return self
        kept: list[object] = []
        for callback, each in zip(self.callbacks, placed.placed, strict=True):
            match = None if each is None else each.match
            if each is None or match is None or not match.scopes_tools:
                kept.append(callback)
            elif not match.static or match.tool(tool):
                kept.append(each.with_match(match.without_tool()))
        view = CompiledCallbacks(kept)
        view._tool = tool  # type: ignore[misc]  # set once, before anyone sees the view
        if len(self._views) >= _VIEWS_SIZE:
            self._views.clear()
        self._views[id(tool)] = view
        return view

    def shadows(self) -> tuple[tuple[object, CompiledCallbacks], ...]:
        """The list's ``shadow`` callbacks, each with a list of itself alone (its match
        kept) to dispatch beside the live chain; made once."""
        shadows = self._shadows
        if shadows is None:
            placed = self._placing
            shadows = self._shadows = (
                ()
                if placed is None
                else tuple(
                    (each.callback, CompiledCallbacks([each.with_tier("default")]))
                    for each in placed.placed
                    if each is not None and each.tier == "shadow"
                )
            )
        return shadows

    def placed(self) -> tuple[Placed[object], ...]:
        """The list's placed callbacks (``guard``, ``matched``, ``audit``), in list order."""
        placed = self._placing
        return () if placed is None else tuple(p for p in placed.placed if p is not None)

    @property
    def by_tool(self) -> bool:
        """Whether a callback of the list is matched by tool (``for_tool`` gives views)."""
        return self._placing is not None and self._placing.by_tool

    def tier(self, owner: object, /) -> Tier:
        """The tier of ``owner``, one of the list's callbacks (as chains name them)."""
        placed = self._placing
        if placed is not None:
            for index, callback in enumerate(self._inner):
                if callback is owner:
                    return placed.tier(index)
        return "default"

    def __add__(self, other: CompiledCallbacks) -> CompiledCallbacks:
        """Both lists, ``self``'s callbacks first, without validating either again."""
        if type(other) is not CompiledCallbacks:
            return NotImplemented
        combined: CompiledCallbacks = object.__new__(CompiledCallbacks)
        combined.callbacks = self.callbacks + other.callbacks  # type: ignore[misc]
        combined._inner = self._inner + other._inner
        combined._generation = min(self._generation, other._generation)
        combined._verdicts = self._verdicts + other._verdicts
        combined._placing = (
            None
            if self._placing is None and other._placing is None
            else placing(combined.callbacks, combined._inner)
        )
        combined._chains = {}
        combined._views = {}
        combined._shadows = None
        combined._tool = None  # type: ignore[misc]
        combined._sync = {}
        combined._ready = min(self._ready, other._ready)
        return combined

    def __len__(self) -> int:
        return len(self.callbacks)

    def __repr__(self) -> str:
        return f"compile_callbacks({list(self.callbacks)!r})"

    def _build(self, name: str, kind: str) -> Chain:
        """The chain found callback by callback, where no layout applies."""
        owners: list[object] = []
        fns: list[Fn] = []
        asyncs: list[bool] = []
        for index, callback in enumerate(self._inner):
            member = self._member(index, name, kind)
            if member is None:
                continue
            owners.append(callback)
            fns.append(member[0])
            asyncs.append(member[1])
        return Chain(tuple(owners), tuple(fns), tuple(asyncs))

    def _member(self, index: int, name: str, kind: str) -> tuple[Fn, bool] | None:
        """The ``index``-th callback's method for the point ``name`` (checked) and whether
        it is async; ``None`` when it has none."""
        callback = self._inner[index]
        verdict = self._verdicts[index]
        fn: Any = getattr(callback, name, _MISSING)
        if fn is _MISSING:
            return None
        known = None if verdict is None else verdict.hooks.get(name)
        if known is not None and (
            (type(fn) is MethodType and fn.__func__ is known[0])
            if verdict.bound  # type: ignore[union-attr]  # known implies a verdict
            else fn is known[0]
        ):
            return fn, known[1]  # the very method validated: checked once, for all
        fn = check_method(callback, name, fn, kind)
        return fn, _is_async(fn)


@final
class _Layout:
    """One point's chain for any list whose callbacks have these verdicts, decided once.

    Which positions define the point, with which validated functions: a new list of
    the same classes (or modules) builds its chain by binding those functions to its
    callbacks, without looking each one up. ``chain`` first checks what a verdict cannot
    see: a class or module whose attribute of that name is no longer the one validated
    (replaced, added or removed since), and an instance holding the name itself.
    """

    __slots__ = (
        "asyncs",
        "bind",
        "checks",
        "every",
        "fns",
        "instances",
        "names_to_check",
        "positions",
    )

    def __init__(
        self,
        positions: tuple[int, ...],
        fns: tuple[Fn, ...],
        asyncs: tuple[bool, ...],
        *,
        name: str,
        bound: bool,
        checks: tuple[tuple[object, object], ...],
        instances: tuple[int, ...],
        size: int,
        names_to_check: bool,
    ) -> None:
        self.positions: Final = positions  # the callbacks defining the point
        self.fns: Final = fns  # their validated functions (a module's: its hook itself)
        self.asyncs: Final = asyncs
        # The owners are instances: their bound methods, read as dispatch would (the
        # checks make that the validated function, bound); a module's hook is itself.
        self.bind: Final = attrgetter(name) if bound else None
        self.every: Final = len(positions) == size  # every callback defines the point
        # (class or module, its attribute of the point's name when validated, or None)
        self.checks: Final = checks
        self.instances: Final = instances  # the callbacks with a __dict__ of their own
        # Whether a dispatch starting must ask for unmatched hook-shaped names: some
        # verdict has one, or an instance's own attributes may add one.
        self.names_to_check: Final = names_to_check

    def chain(self, callbacks: tuple[object, ...], name: str) -> Chain | None:
        """The chain of ``callbacks`` at ``name``; ``None`` when it must be found one by one."""
        for owner, fn in self.checks:
            if getattr(owner, name, None) is not fn:
                return None
        for index in self.instances:
            if name in callbacks[index].__dict__:
                return None
        owners = callbacks if self.every else tuple(map(callbacks.__getitem__, self.positions))
        fns = self.fns if self.bind is None else tuple(map(self.bind, owners))
        return Chain(owners, fns, self.asyncs)


def _layout(verdicts: tuple[Verdict | None, ...], name: str) -> _Layout | None:
    """The layout of ``name`` for lists with these verdicts; ``None`` if it cannot be kept."""
    positions: list[int] = []
    fns: list[Fn] = []
    asyncs: list[bool] = []
    checks: dict[int, tuple[object, object]] = {}
    instances: list[int] = []
    kinds: set[bool] = set()
    unmatched = False
    for index, verdict in enumerate(verdicts):
        if verdict is None or name in verdict.dynamic:
            return None  # computed attributes, or a hook that is no plain function
        unmatched = unmatched or bool(verdict.unmatched)
        known = verdict.hooks.get(name)
        checks[id(verdict.owner)] = (verdict.owner, None if known is None else known[0])
        if verdict.has_dict:
            instances.append(index)
        if known is not None:
            positions.append(index)
            fns.append(known[0])  # type: ignore[arg-type]  # validated as a hook
            asyncs.append(known[1])
            kinds.add(verdict.bound)
    if len(kinds) > 1:
        return None  # instances and modules: bound and plain functions together
    return _Layout(
        tuple(positions),
        tuple(fns),
        tuple(asyncs),
        name=name,
        bound=True in kinds,
        checks=tuple(checks.values()),
        instances=tuple(instances),
        size=len(verdicts),
        names_to_check=bool(instances) or unmatched,
    )


# (verdicts, point name) -> its layout, or None when it cannot be kept. Verdicts are
# per class or module and generation, so a key never goes stale; it is dropped in turn.
_layouts: dict[tuple[tuple[Verdict | None, ...], str], _Layout | None] = {}
_LAYOUTS_SIZE: Final = 1024
_layouts_lock: Final = threading.Lock()


def _remember(key: tuple[tuple[Verdict | None, ...], str], layout: _Layout | None) -> None:
    with _layouts_lock:
        if len(_layouts) >= _LAYOUTS_SIZE:
            del _layouts[next(iter(_layouts))]
        _layouts[key] = layout


def compile_callbacks(callbacks: Sequence[object] | CompiledCallbacks, /) -> CompiledCallbacks:
    """Validate ``callbacks`` once and return the compiled form dispatch runs on.

    Raises ``InvalidCallbacks`` for a misspelled hook name, a non-callable hook
    attribute, a method that cannot take its point's arguments, a callback without
    any hook-shaped method, a class given instead of an instance, or a bare function
    given instead of a module or object.

    The same list object compiles once: the result is cached by the list's identity
    and reused while its items are the same objects (a mutated list compiles anew).
    A new list of known callbacks compiles in a few microseconds: each class's and
    module's validation is cached (see ``hooks._verdicts``).
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
    _cache[id(callbacks)] = (callbacks, result.callbacks, result)
    if len(_cache) > 2 * _CACHE_SIZE:
        _trim()
    return result


# id(list) -> (the list, its items when compiled, the compiled form). The strong
# reference keeps the id from being reused; the items catch a list mutated since. A
# plain dict, whose lookup is the hot path of every reused list. It holds up to twice
# _CACHE_SIZE entries and is then cut back to the newest _CACHE_SIZE in one go: a dict
# has no cheap "drop the oldest", and adding an entry stays one atomic call.
_cache: dict[int, tuple[object, tuple[object, ...], CompiledCallbacks]] = {}
_trim_lock = threading.Lock()
_CACHE_SIZE: Final = 256


def _trim() -> None:
    with _trim_lock:
        if len(_cache) > 2 * _CACHE_SIZE:
            newest = list(_cache.items())[-_CACHE_SIZE:]
            _cache.clear()
            _cache.update(newest)


def _unwrapped(callback: object) -> object:
    """The callback itself: a ``Placed`` one's, or ``callback``."""
    if type(callback) is Placed:
        placed: Placed[object] = callback  # pyright: ignore[reportUnknownVariableType]
        return placed.callback
    return callback


def _check_list(callbacks: object) -> None:
    if type(callbacks) is list or type(callbacks) is tuple:
        return
    if isinstance(callbacks, str | bytes) or not isinstance(callbacks, Sequence):
        msg = (
            "callbacks must be a list or tuple of modules or objects, "
            f"got {type(callbacks).__name__}; wrap a single callback as [callback]"
        )
        raise InvalidCallbacks(msg, callback=callbacks)
