"""Tests for ``slot_init``: a frozen slotted dataclass keeps its ``__init__``'s behaviour."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from hooks._slots import slot_init


def _sample(*, quick: bool) -> Any:
    """The same dataclass, with ``slot_init`` or with the dataclass's own ``__init__``."""

    @dataclass(frozen=True, slots=True)
    class Base:
        a: int
        b: str = "b"

    @dataclass(frozen=True, slots=True, kw_only=True)
    class Sample(Base):
        items: list[int] = field(default_factory=list[int])
        c: float
        seen: tuple[str, ...] = ()

        def __post_init__(self) -> None:
            if self.a < 0:
                msg = f"a must be >= 0, got {self.a}"
                raise ValueError(msg)
            object.__setattr__(self, "seen", (*self.seen, "post_init"))

    return slot_init(Sample) if quick else Sample


QUICK = _sample(quick=True)
OWN = _sample(quick=False)


def test_the_signature_is_the_dataclass_s_own() -> None:
    """Names, order, kinds and defaults of the parameters are the dataclass's."""
    quick, own = inspect.signature(QUICK), inspect.signature(OWN)
    assert str(quick) == str(own)
    assert QUICK.__init__.__annotations__ == OWN.__init__.__annotations__
    assert QUICK.__init__.__qualname__ == "_sample.<locals>.Sample.__init__"


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {"c": 2.0}),
        ((1, "x"), {"c": 2.0, "items": [3]}),
        ((), {"a": 1, "b": "y", "c": 0.5, "seen": ("given",)}),
    ],
)
def test_a_record_is_built_as_the_dataclass_builds_it(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """Same fields, defaults and ``__post_init__`` effect as the dataclass's own ``__init__``."""
    quick, own = QUICK(*args, **kwargs), OWN(*args, **kwargs)
    assert repr(quick).replace("_sample.<locals>.", "") == repr(own).replace(
        "_sample.<locals>.", ""
    )
    assert dataclasses.astuple(quick) == dataclasses.astuple(own)
    assert quick.seen[-1] == "post_init"


def test_a_default_factory_makes_a_value_per_record() -> None:
    """Each record gets its own value from the factory; a given value is kept as given."""
    first, second = QUICK(1, c=0.0), QUICK(1, c=0.0)
    assert first.items == []
    assert first.items is not second.items
    given = [1]
    assert QUICK(1, c=0.0, items=given).items is given


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {"c": 1.0}),  # a required positional missing
        ((1,), {}),  # a required keyword-only missing
        ((1, "b", 2.0), {"c": 1.0}),  # keyword-only given by position
        ((1,), {"c": 1.0, "d": 2}),  # no such field
    ],
)
def test_wrong_arguments_are_refused_with_the_same_error(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """A call the dataclass's ``__init__`` refuses is refused with the same ``TypeError``."""
    with pytest.raises(TypeError) as own:
        OWN(*args, **kwargs)
    with pytest.raises(TypeError) as quick:
        QUICK(*args, **kwargs)
    assert str(quick.value) == str(own.value)


def test_post_init_still_refuses() -> None:
    """``__post_init__`` runs on every record built, so its checks still refuse."""
    with pytest.raises(ValueError, match="a must be >= 0, got -1"):
        QUICK(-1, c=0.0)


def test_the_record_stays_frozen_and_replaceable() -> None:
    """Fields cannot be set; ``dataclasses.replace`` builds a changed record through it."""
    record = QUICK(1, c=0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.a = 2
    changed = dataclasses.replace(record, a=2)
    assert (changed.a, changed.b, changed.c) == (2, "b", 0.0)
    assert changed.seen == ("post_init", "post_init")  # replace passes seen on: post_init ran
    assert hash(QUICK(1, c=0.0, items=())) == hash(OWN(1, c=0.0, items=()))


def test_a_class_it_cannot_keep_is_refused() -> None:
    """Not a frozen slotted dataclass, a field outside ``__init__``, an ``InitVar``: refused."""

    @dataclass(slots=True)
    class Mutable:
        a: int

    @dataclass(frozen=True)
    class Unslotted:
        a: int

    @dataclass(frozen=True, slots=True)
    class Computed:
        a: int
        b: int = field(init=False, default=0)

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        a: int
        scale: InitVar[int] = 1

    class Plain:
        pass

    for cls in (Mutable, Unslotted, Plain):
        with pytest.raises(TypeError, match="slot_init takes a frozen slotted dataclass"):
            slot_init(cls)
    for other in (Computed, WithInitVar):
        with pytest.raises(TypeError, match="it takes other than the fields"):
            slot_init(other)
