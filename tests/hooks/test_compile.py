"""Tests for compiled callbacks lists: chains, hooks set on instances, the identity cache.

``hooks._compile`` turns a list into per-point chains of bound methods. Most of it is
exercised through dispatch in ``test_dispatch``; these tests pin what a chain holds, how a
hook set on an instance (not found when its class was validated) is judged when its chain is
built, how a fresh list of known classes or modules gets its chains from what an earlier
list of them decided (and when it must look again), and the bound of the cache that lets a
reused list skip compiling.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import pytest
from returns.result import Success

import hooks._compile
from hooks import Cont, Fallback, Halt, InvalidCallbacks, compile_callbacks, run_before
from tests.helpers.dispatch import (
    AFTER,
    BEFORE,
    HOOK,
    ON_ERROR,
    Dispatch,
    listening,
    make_instance,
    make_module,
    passing,
    rec,
)

which_point = pytest.mark.parametrize("which", ["before", "after", "error"])
POINTS: dict[str, Any] = {"before": BEFORE, "after": AFTER, "error": ON_ERROR}
RESULTS: dict[str, object] = {"before": Halt("h"), "after": Success(2), "error": Fallback("f")}


# -- what a chain holds ----------------------------------------------------------------


def test_a_chain_names_its_point_and_lists_its_callbacks() -> None:
    """``chain(name, kind)`` holds the point's name and, in list order, the callbacks that
    define it, their methods and whether each is async."""

    async def awaited(ctx: int) -> object:
        return passing(ctx)

    first = make_module("first", before_probe=passing)
    second = make_module("second", before_probe=awaited)
    chain = compile_callbacks([first, make_module("other", on_event=listening), second]).chain(
        "before_probe", "before"
    )
    assert chain.owners == (first, second)
    assert chain.fns == (passing, awaited)
    assert chain.asyncs == (False, True)
    assert chain.any_async


# -- hooks set on an instance, judged when their chain is built ------------------------


@which_point
def test_an_async_hook_set_on_an_instance_is_awaited(which: str) -> None:
    """An ``async def`` hook set on an instance (its class has none) is awaited by ``arun_*``,
    which hands on what it returned."""
    answer = RESULTS[which]

    async def hook(*args: Any) -> Any:
        await asyncio.sleep(0)
        return answer

    guard = make_instance("Guard", on_event=listening)
    setattr(guard, HOOK[which], hook)
    assert Dispatch("async").probe(which, [guard]) is answer


@which_point
def test_an_async_hook_set_on_an_instance_is_refused_by_sync_dispatch(which: str) -> None:
    """Sync dispatch refuses an ``async def`` hook set on an instance, naming the instance."""

    async def hook(*args: Any) -> Any:
        return passing(*args)

    guard = make_instance("Guard", on_event=listening)
    setattr(guard, HOOK[which], hook)
    with pytest.raises(InvalidCallbacks, match="is async") as excinfo:
        Dispatch("sync").probe(which, [guard])
    assert excinfo.value.callback is guard
    assert excinfo.value.attribute == HOOK[which]


@which_point
def test_methods_finds_a_hook_set_on_an_instance(which: str) -> None:
    """``methods(point)`` of a fresh compiled list lists a hook set on an instance."""
    guard = make_instance("Guard", on_event=listening)
    setattr(guard, HOOK[which], passing)
    assert compile_callbacks([guard]).methods(POINTS[which]) == (passing,)


def test_the_async_refusal_says_what_to_do_instead() -> None:
    """Sync dispatch's refusal of an async method names it and offers the ways out."""

    async def hook(ctx: int) -> object:
        return passing(ctx)

    with pytest.raises(InvalidCallbacks) as excinfo:
        Dispatch("sync").probe("before", [make_module("slow", before_probe=hook)])
    assert str(excinfo.value) == (
        "module 'slow'.before_probe is async; sync dispatch cannot await it "
        "(use arun_* or Runner.arun, or make it a plain def)"
    )


def test_a_lone_callback_is_refused_with_the_fix() -> None:
    """A single callback given where a list goes is refused, naming its type and the fix."""
    guard = make_instance("Guard", before_probe=passing)
    lone: Any = guard
    with pytest.raises(InvalidCallbacks) as excinfo:
        compile_callbacks(lone)
    assert str(excinfo.value) == (
        "callbacks must be a list or tuple of modules or objects, got Guard; "
        "wrap a single callback as [callback]"
    )


# -- fresh lists of known callbacks ------------------------------------------------------


class Adding:
    """A callback class adding its ``step`` to the context; a new class per test."""

    def __init__(self, step: int) -> None:
        self.step = step

    def before_probe(self, ctx: int) -> Cont[int]:
        return Cont(ctx + self.step)


def adding_class() -> type[Adding]:
    """A fresh subclass of ``Adding``: validated and laid out anew by each test."""
    return type("Adding", (Adding,), {})


def test_fresh_lists_of_known_classes_chain_each_instance_in_order() -> None:
    """Each fresh list of instances of known classes dispatches its own instances' methods,
    in list order, skipping the ones whose class lacks the point's method."""
    adding = adding_class()
    watcher = type("Watcher", (), {"on_event": lambda self, event: None})
    for _ in range(3):
        first, second = adding(1), adding(10)
        compiled = compile_callbacks([first, watcher(), second])
        assert compiled.methods(BEFORE) == (first.before_probe, second.before_probe)
        assert compiled.chain("before_probe", "before").owners == (first, second)
        assert run_before(compiled, BEFORE, 0) == Cont(11)


def test_a_method_added_to_a_known_class_is_dispatched() -> None:
    """A hook method set on a class after lists of it were dispatched at that point is
    dispatched by the next fresh list."""
    adding = adding_class()
    watcher = type("Watcher", (), {"on_event": lambda self, event: None})
    assert run_before([adding(1), watcher()], BEFORE, 0) == Cont(1)
    watcher.before_probe = lambda self, ctx: Cont(ctx * 100)  # type: ignore[attr-defined]
    assert run_before([adding(1), watcher()], BEFORE, 0) == Cont(100)


def test_a_method_removed_from_a_known_class_is_no_longer_dispatched() -> None:
    """A hook method deleted from a class after lists of it were dispatched is skipped by
    the next fresh list, as a callback without the method is."""
    adding = adding_class()
    adding.before_probe = lambda self, ctx: Cont(ctx + 5)  # type: ignore[method-assign]
    adding.on_event = lambda self, event: None  # type: ignore[attr-defined]
    assert run_before([adding(1), adding(1)], BEFORE, 0) == Cont(10)
    del adding.before_probe  # Adding's own is found again: it adds the step
    assert run_before([adding(1), adding(2)], BEFORE, 0) == Cont(3)


def test_a_module_hook_replaced_in_place_is_the_one_dispatched() -> None:
    """A module whose hook is replaced by another function (its attributes no more) has the
    new function dispatched by the next fresh list."""
    guards = make_module("guards", before_probe=lambda ctx: Cont(ctx + 1))
    assert run_before([guards, guards], BEFORE, 0) == Cont(2)
    guards.before_probe = lambda ctx: Cont(ctx + 7)  # type: ignore[attr-defined]
    assert run_before([guards, guards], BEFORE, 0) == Cont(14)


def test_modules_and_instances_together_chain_in_list_order() -> None:
    """A fresh list holding both modules and instances dispatches them all, in order."""
    adding = adding_class()
    log: list[str] = []
    guards = make_module("guards", before_probe=rec(log, "module", passing))
    for _ in range(2):
        log.clear()
        assert run_before([adding(1), guards, adding(2)], BEFORE, 0) == Cont(3)
        assert log == ["module"]
        compiled = compile_callbacks([guards, adding(1)])
        assert compiled.chain("before_probe", "before").owners[0] is guards


# -- the identity cache ----------------------------------------------------------------


def test_the_identity_cache_is_cut_back_to_the_newest_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past twice its size the cache of compiled lists drops all but the newest ``size``
    entries in one go: the newest lists stay compiled, the oldest compile anew."""
    monkeypatch.setattr(hooks._compile, "_cache", {})
    size = hooks._compile._CACHE_SIZE
    guard = make_instance("Guard", before_probe=passing)
    lists = [[guard] for _ in range(2 * size + 1)]
    compiled = [compile_callbacks(callbacks) for callbacks in lists]
    assert compile_callbacks(lists[-1]) is compiled[-1]
    assert compile_callbacks(lists[-size]) is compiled[-size]
    assert compile_callbacks(lists[-size - 1]) is not compiled[-size - 1]
    assert compile_callbacks(lists[0]) is not compiled[0]


def test_the_identity_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """However many fresh lists compile, the cache never keeps more than twice its size of
    them alive (each list here holds a callback of its own, watched by a weak reference)."""
    monkeypatch.setattr(hooks._compile, "_cache", {})
    size = hooks._compile._CACHE_SIZE
    guard_class = type(make_instance("Guard", before_probe=passing))
    watched: list[weakref.ref[object]] = []
    for _ in range(3 * size + 1):
        guard = guard_class()
        watched.append(weakref.ref(guard))
        compile_callbacks([guard])
        del guard
        assert sum(ref() is not None for ref in watched) <= 2 * size
    assert watched[-1]() is not None
