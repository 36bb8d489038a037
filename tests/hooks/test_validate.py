"""Tests for callback validation: the rules, helper names, and the caches behind them.

``hooks._validate`` holds the rules, ``hooks._verdicts`` the per-class and per-module
caches and ``hooks._spelling`` the misspelling index; they are tested together here.

A fresh list of known callbacks must compile in a few microseconds whatever the number
of declared points, so validation is cached per class and per module; these tests pin
what the caches may and may not skip.
"""

from __future__ import annotations

import gc
import types
import uuid
import weakref
from typing import Any

import pytest

import hooks._compile
import hooks._spelling
import hooks._validate
import hooks._verdicts
from hooks import (
    BEFORE_MODEL,
    AfterPoint,
    BeforePoint,
    Cont,
    InvalidCallbacks,
    compile_callbacks,
    observing,
    run_before,
)
from tests.helpers.dispatch import BEFORE, described, listening, make_instance, make_module, passing


def fresh(prefix: str = "before") -> str:
    """A point name no other test declares, long enough to be close to no other name."""
    return f"{prefix}_{uuid.uuid4().hex}"


def make(kind: str, name: str, /, **attributes: object) -> object:
    """A callback of ``kind`` with the given attributes."""
    return (
        make_module(name, **attributes) if kind == "module" else make_instance(name, **attributes)
    )


# -- a callback needs a hook-shaped method ------------------------------------------


@pytest.mark.parametrize(
    "attributes",
    [{}, {"pre_tool": passing}, {"helper": passing, "limit": 3}, {"model": passing}],
    ids=["nothing", "pre_tool", "helpers", "model"],
)
def test_a_callback_without_any_hook_method_is_refused(
    kind: str, attributes: dict[str, object]
) -> None:
    """A module or object defining no hook-shaped method raises InvalidCallbacks, naming it and
    listing what it has, instead of being skipped silently."""
    bare = make(kind, "bare", **attributes)
    with pytest.raises(InvalidCallbacks, match="defines no hook method") as excinfo:
        compile_callbacks([bare])
    assert excinfo.value.callback is bare
    message = str(excinfo.value)
    assert described(kind, "bare") in message
    assert "before_, after_, on_, wrap_" in message
    for name in attributes:
        assert repr(name) in message


def test_an_object_without_public_attributes_is_refused() -> None:
    """``object()`` is no callback: it has no hook method."""
    with pytest.raises(InvalidCallbacks, match="it has no public attribute"):
        compile_callbacks([object()])


@pytest.mark.parametrize(
    "name",
    ["before_model", "on_event", "before_fetch", "after_everything", "on_click", "wrap_model"],
)
def test_one_hook_shaped_method_is_enough(kind: str, name: str) -> None:
    """A declared point's name, ``on_event``, or a name with a point prefix makes a callback."""
    fn = listening if name == "on_event" else passing
    assert compile_callbacks([make(kind, "hooked", **{name: fn})])


def test_an_instance_attribute_can_be_the_hook() -> None:
    """An object whose only hook is an instance attribute is a callback."""
    namespace = types.SimpleNamespace(before_probe=lambda ctx: Cont(ctx + 1))
    assert run_before([namespace], BEFORE, 1) == Cont(2)


def test_a_method_for_a_point_declared_later_is_accepted_then_dispatched(kind: str) -> None:
    """A callback whose only method waits for a point not declared yet compiles; a dispatch
    started before the point exists refuses it (the method would never be called); once
    the point is declared the same compiled list dispatches it."""
    name = fresh("before_awaited")  # no declared point's name is a word of it: no helper
    compiled = compile_callbacks([make(kind, "fetcher", **{name: lambda ctx: Cont(ctx * 2)})])
    with pytest.raises(InvalidCallbacks, match=f"defines {name!r}, which matches no"):
        run_before(compiled, BEFORE, 3)
    point: BeforePoint[int, str] = BeforePoint(name)
    assert run_before(compiled, point, 3) == Cont(6)
    assert run_before(compiled, BEFORE, 3) == Cont(3)


# -- helper names that extend a hook name ---------------------------------------------


@pytest.mark.parametrize(
    "helper",
    [
        "before_model_hook",
        "after_tool_count",
        "log_before_model",
        "on_model_error_count",
        "check_after_model_outcome",
    ],
)
def test_helpers_extending_a_hook_name_are_no_misspellings(kind: str, helper: str) -> None:
    """A name containing a declared point's name as whole words is a helper, not a typo."""
    callback = make(kind, "helpful", before_model=passing, **{helper: passing})
    assert compile_callbacks([callback]).methods(BEFORE_MODEL)


@pytest.mark.parametrize("typo", ["before_modle", "before_models", "after_tol", "befor_model"])
def test_near_misses_are_still_refused(kind: str, typo: str) -> None:
    """A name close to a point's name without containing it is refused with a hint."""
    with pytest.raises(InvalidCallbacks, match="did you mean"):
        compile_callbacks([make(kind, "typo", **{typo: passing})])


def test_a_helper_of_a_point_declared_later_stays_valid() -> None:
    """A name that becomes an extension of a newly declared point is not turned into a typo."""
    name = fresh("after")
    helper = f"{name}_count"
    callback = make_module("counter", on_event=listening, **{helper: 0})
    assert compile_callbacks([callback])
    AfterPoint(name)
    assert compile_callbacks([make_module("counter2", on_event=listening, **{helper: 0})])


# -- the validation caches -------------------------------------------------------------


class Counting:
    """Counts ``check_method`` calls: each is one signature inspected."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = hooks._validate.check_method

        def counting(*args: Any) -> Any:
            self.calls += 1
            return original(*args)

        monkeypatch.setattr(hooks._verdicts, "check_method", counting)
        monkeypatch.setattr(hooks._compile, "check_method", counting)


def new_class(**methods: object) -> type:
    """A fresh callback class with these methods."""
    return type(f"Guard{uuid.uuid4().hex[:6]}", (), dict(methods))


def before_probe(self: object, ctx: int, /) -> Cont[int]:
    """A before method adding one."""
    return Cont(ctx + 1)


def test_a_class_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fresh lists of new instances of a validated class inspect no signature again."""
    counting = Counting(monkeypatch)
    guard_class = new_class(before_probe=before_probe, limit=3)
    assert run_before([guard_class()], BEFORE, 1) == Cont(2)
    first = counting.calls
    assert first >= 1
    for _ in range(5):
        assert run_before([guard_class(), guard_class()], BEFORE, 1) == Cont(3)
    assert counting.calls == first


def test_a_module_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fresh lists holding a validated, unchanged module inspect no signature again."""
    counting = Counting(monkeypatch)
    guards = make_module("guards", before_probe=lambda ctx: Cont(ctx + 1))
    assert run_before([guards], BEFORE, 1) == Cont(2)
    first = counting.calls
    for _ in range(5):
        assert run_before([guards], BEFORE, 1) == Cont(2)
    assert counting.calls == first


def test_an_instance_attribute_is_checked_though_its_class_is_known() -> None:
    """An instance attribute shadowing or misspelling a hook is checked on every new list."""
    guard_class = new_class(before_probe=before_probe)
    assert run_before([guard_class()], BEFORE, 1) == Cont(2)
    broken = guard_class()
    broken.before_probe = 42
    with pytest.raises(InvalidCallbacks, match="must be a method") as excinfo:
        compile_callbacks([broken])
    assert excinfo.value.callback is broken
    typo = guard_class()
    typo.before_prob = passing
    with pytest.raises(InvalidCallbacks, match="did you mean 'before_probe'"):
        compile_callbacks([typo])


def test_an_instance_attribute_replacing_a_hook_is_the_one_dispatched() -> None:
    """A hook set on an instance of a known class is what a new list dispatches."""
    guard_class = new_class(before_probe=before_probe)
    assert run_before([guard_class()], BEFORE, 1) == Cont(2)
    special = guard_class()
    special.before_probe = lambda ctx: Cont(ctx * 100)
    assert run_before([special], BEFORE, 1) == Cont(100)


def test_a_class_method_replaced_after_validation_is_checked() -> None:
    """A hook method replaced on a validated class is checked when a new list dispatches it."""
    guard_class = new_class(before_probe=before_probe)
    assert run_before([guard_class()], BEFORE, 1) == Cont(2)
    setattr(guard_class, "before_probe", lambda self: Cont(0))  # noqa: B010 -- the class
    with pytest.raises(InvalidCallbacks, match="cannot be called as before_probe"):
        run_before([guard_class()], BEFORE, 1)


def test_an_attribute_added_to_a_module_is_validated() -> None:
    """A module that gained an attribute since it was validated is validated again."""
    guards = make_module("guards", before_probe=passing)
    assert compile_callbacks([guards])
    guards.before_prob = passing  # type: ignore[attr-defined]
    with pytest.raises(InvalidCallbacks, match="did you mean 'before_probe'"):
        compile_callbacks([guards])


def test_classes_that_compute_attributes_are_validated_every_time() -> None:
    """A class with ``__getattr__`` is validated by ``dir()`` on every new list."""

    class Proxy:
        def __init__(self, names: list[str]) -> None:
            self.names = names

        def __dir__(self) -> list[str]:
            return self.names

        def __getattr__(self, name: str) -> object:
            if name in self.names:
                return passing
            raise AttributeError(name)

    assert run_before([Proxy(["before_probe"])], BEFORE, 1) == Cont(1)
    with pytest.raises(InvalidCallbacks, match="did you mean"):
        compile_callbacks([Proxy(["before_prob"])])
    with pytest.raises(InvalidCallbacks, match="defines no hook method"):
        compile_callbacks([Proxy([])])


def test_a_point_declared_since_revalidates_a_known_class() -> None:
    """Declaring a point makes a known class's near miss of it a refused misspelling."""
    name = fresh()
    guard_class = new_class(before_probe=before_probe, **{name[:-1]: before_probe})
    assert compile_callbacks([guard_class()])
    BeforePoint(name)
    with pytest.raises(InvalidCallbacks, match=f"did you mean {name!r}"):
        compile_callbacks([guard_class()])


# -- independent of the number of declared points -------------------------------------


def test_compiling_builds_no_chain_until_its_point_is_dispatched() -> None:
    """Compiling looks up no point's method; dispatching one point looks up that one only."""
    for _ in range(50):
        BeforePoint(fresh())
    looked_up: list[str] = []
    lazy = types.ModuleType("lazy")
    lazy.before_probe = passing  # type: ignore[attr-defined]

    def module_getattr(name: str) -> object:
        looked_up.append(name)
        raise AttributeError(name)

    vars(lazy)["__getattr__"] = module_getattr  # PEP 562: looks up what is missing
    compiled = compile_callbacks([lazy])
    assert looked_up == []
    ctx: Any = 1
    assert run_before(compiled, BEFORE_MODEL, ctx) == Cont(1)
    assert looked_up == ["before_model"]


def test_a_known_name_is_never_compared_with_the_registry_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After many points are declared, validating a class compares each of its names with the
    points of similar length at most once, and a known class not at all."""
    long_names = [f"before_{'x' * 60}_{index}" for index in range(2000)]
    for name in long_names:
        BeforePoint(name)
    compared: list[str] = []
    original = hooks._spelling._ratio

    def counting(matcher: Any, point: str) -> Any:
        compared.append(point)
        return original(matcher, point)

    monkeypatch.setattr(hooks._spelling, "_ratio", counting)
    guard_class = new_class(before_probe=before_probe, limit=1, helper_method=before_probe)
    assert compile_callbacks([guard_class()])
    assert not set(compared) & set(long_names)
    first = len(compared)
    for _ in range(10):
        assert compile_callbacks([guard_class(), guard_class()])
    assert len(compared) == first


def test_observers_and_hook_classes_compile() -> None:
    """``observing(fn)`` and a class with hooks compile together."""
    compiled = compile_callbacks([observing(listening), make_instance("G", before_probe=passing)])
    assert len(compiled.chain("on_event", "event").fns) == 1


# -- what a refusal carries ------------------------------------------------------------


def test_a_method_of_the_wrong_arity_is_refused_naming_its_callback(kind: str) -> None:
    """The arity refusal carries the callback and the attribute at fault."""
    bad = make(kind, "arity", before_probe=lambda: None)
    with pytest.raises(InvalidCallbacks, match="cannot be called as") as excinfo:
        compile_callbacks([bad])
    assert excinfo.value.callback is bad
    assert excinfo.value.attribute == "before_probe"


def test_a_class_method_replaced_after_validation_is_refused_naming_the_instance() -> None:
    """A hook replaced on a validated class with one of the wrong arity is refused when its
    chain is built, naming the instance dispatched."""
    guard_class = new_class(before_probe=before_probe)
    assert run_before([guard_class()], BEFORE, 1) == Cont(2)
    setattr(guard_class, "before_probe", lambda self: Cont(0))  # noqa: B010 -- the class
    guard = guard_class()
    with pytest.raises(InvalidCallbacks, match="cannot be called as") as excinfo:
        run_before([guard], BEFORE, 1)
    assert excinfo.value.callback is guard
    assert excinfo.value.attribute == "before_probe"


@pytest.mark.parametrize("nested", [[passing], {"a": 1}], ids=type)
def test_a_nested_collection_is_refused_as_itself(nested: object) -> None:
    """The refusal of a collection inside the list names its type and shows it."""
    with pytest.raises(InvalidCallbacks) as excinfo:
        compile_callbacks([nested])
    assert excinfo.value.callback is nested
    assert str(excinfo.value) == (
        "a callback is a module or an object with hook methods, "
        f"got a {type(nested).__name__} {nested!r:.60}; "
        "flatten nested lists: callbacks=[*guards, audit]"
    )


def test_a_bare_function_is_refused_naming_its_type() -> None:
    """The refusal of a bare function says it got a function and how to make it a callback."""
    with pytest.raises(InvalidCallbacks) as excinfo:
        compile_callbacks([passing])
    assert str(excinfo.value).startswith(
        "a callback is a module or an object with hook methods, got function <function passing"
    )
    assert str(excinfo.value).endswith(
        "; put a function in a class or module, or use hooks.observing()"
    )


def test_a_hookless_callback_is_refused_listing_its_first_eight_names() -> None:
    """A callback without hooks is refused listing its first eight public names, sorted."""
    names = [f"helper_{letter}" for letter in "jihgfedcba"]
    bare = make_module("bare", **dict.fromkeys(names, 0))
    with pytest.raises(InvalidCallbacks) as excinfo:
        compile_callbacks([bare])
    assert str(excinfo.value).endswith(f"; its public attributes are {sorted(names)[:8]!r}")


def test_a_callback_without_public_attributes_is_refused_saying_so() -> None:
    """A callback without any public attribute is refused saying it has none."""
    with pytest.raises(InvalidCallbacks) as excinfo:
        compile_callbacks([object()])
    assert str(excinfo.value).endswith(
        "or starting with before_, after_, on_, wrap_; it has no public attribute"
    )


# -- an instance's own attributes -------------------------------------------------------


def test_plain_instance_attributes_do_not_make_a_callback() -> None:
    """An instance of a class without hooks is refused, whatever plain attributes it holds."""
    plain_class = new_class(helper=before_probe)
    for _ in range(2):
        instance = plain_class()
        instance.limit = 3
        with pytest.raises(InvalidCallbacks, match="defines no hook method") as excinfo:
            compile_callbacks([instance])
        assert excinfo.value.callback is instance


def test_a_hook_shaped_instance_attribute_makes_a_callback() -> None:
    """An instance of a class without hooks is a callback when it holds a hook-shaped
    attribute (one waiting for a point not declared yet)."""
    plain_class = new_class(helper=before_probe)
    instance = plain_class()
    setattr(instance, fresh("on"), passing)
    assert compile_callbacks([instance])


@pytest.mark.parametrize(
    "before",
    [{"limit": 1}, {"_cache": {}}, {"before_probe": passing}],
    ids=["plain", "private", "hook"],
)
def test_every_instance_attribute_is_checked(before: dict[str, object]) -> None:
    """A misspelled attribute is found on an instance after any other kind of attribute (one
    known plain, a private one, a hook, a private one never seen), and the refusal names the
    instance."""
    guard_class = new_class(before_probe=before_probe)
    seen = guard_class()
    vars(seen).update(before)
    assert compile_callbacks([seen])  # the class and these names are now known
    typo = guard_class()
    vars(typo).update(before)
    vars(typo)[f"_{fresh('unseen')}"] = 1
    typo.before_prob = passing
    with pytest.raises(InvalidCallbacks, match="did you mean 'before_probe'") as excinfo:
        compile_callbacks([typo])
    assert excinfo.value.callback is typo
    assert excinfo.value.attribute == "before_prob"


def test_a_broken_instance_hook_is_refused_naming_the_attribute() -> None:
    """A hook set on an instance that is not callable is refused naming the attribute."""
    guard_class = new_class(before_probe=before_probe)
    broken = guard_class()
    broken.after_probe = 42
    with pytest.raises(InvalidCallbacks, match="must be a method") as excinfo:
        compile_callbacks([broken])
    assert excinfo.value.callback is broken
    assert excinfo.value.attribute == "after_probe"


# -- what the class caches cannot skip ---------------------------------------------------


class Switchable:
    """A slotted callback whose hook is a property: what it gives depends on the instance."""

    __slots__ = ("hook",)

    def __init__(self, hook: object) -> None:
        self.hook = hook

    @property
    def before_probe(self) -> object:
        """The instance's hook."""
        return self.hook


def test_a_hook_computed_per_instance_is_checked_for_each_instance() -> None:
    """A hook that is a property (not a plain method) is checked on each instance when its
    list is compiled, though the class has no ``__dict__`` and is known."""
    assert run_before([Switchable(passing)], BEFORE, 1) == Cont(1)
    broken = Switchable(42)
    with pytest.raises(InvalidCallbacks, match="must be a method") as excinfo:
        compile_callbacks([broken])
    assert excinfo.value.callback is broken


def test_a_class_whose_getattribute_replaces_a_hook_is_checked_as_it_answers() -> None:
    """A class whose ``__getattribute__`` answers a hook name with something else is judged by
    that answer, when its list is compiled."""

    class Masked:
        def before_probe(self, ctx: int, /) -> Cont[int]:
            return Cont(ctx)

        def __getattribute__(self, name: str) -> Any:
            return 42 if name == "before_probe" else object.__getattribute__(self, name)

    masked = Masked()
    with pytest.raises(InvalidCallbacks, match="must be a method") as excinfo:
        compile_callbacks([masked])
    assert excinfo.value.callback is masked


def test_a_class_computing_its_attributes_without_hooks_is_refused_as_itself() -> None:
    """A class with ``__getattr__`` and no hook is refused naming the instance."""

    class Empty:
        def __getattr__(self, name: str) -> object:
            raise AttributeError(name)

    empty = Empty()
    with pytest.raises(InvalidCallbacks, match="defines no hook method") as excinfo:
        compile_callbacks([empty])
    assert excinfo.value.callback is empty
    assert "Empty instance" in str(excinfo.value)


def test_an_unchanged_module_is_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fresh lists holding a validated, unchanged module do not look at its names again."""
    validated: list[object] = []
    original = hooks._validate.check_names

    def counting(callback: object, *args: Any, **kwargs: Any) -> bool:
        validated.append(callback)
        return original(callback, *args, **kwargs)

    monkeypatch.setattr(hooks._verdicts, "check_names", counting)
    guards = make_module("guards", before_probe=passing, limit=3)
    for _ in range(3):
        assert run_before([guards], BEFORE, 1) == Cont(1)
    assert validated == [guards]
    guards.helper = 4  # type: ignore[attr-defined]
    assert run_before([guards], BEFORE, 1) == Cont(1)
    assert validated == [guards, guards]


def test_the_class_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-class cache keeps at most 1024 classes alive, dropping the oldest first."""
    monkeypatch.setattr(hooks._verdicts, "_types", {})
    size = hooks._verdicts._CACHE_SIZE
    watched: list[weakref.ref[type]] = []

    def compile_a_new_class() -> None:
        cls = new_class(before_probe=before_probe)
        watched.append(weakref.ref(cls))
        assert compile_callbacks([cls()])

    for _ in range(size + 1):
        compile_a_new_class()
    gc.collect()  # a class is in a reference cycle with its own namespace
    assert [ref() is not None for ref in watched] == [False] + [True] * size
