"""Every frozen record of ``hooks`` and ``runner`` is built by ``slot_init``'s ``__init__``."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest

import hooks
import runner


def _frozen_records() -> Iterator[type]:
    for package in (hooks, runner):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            try:
                module = importlib.import_module(info.name)
            except ImportError:  # an optional extra that is not installed
                continue
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and value.__module__ == info.name
                    and dataclasses.is_dataclass(value)
                    and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
                ):
                    yield value


@pytest.mark.parametrize("cls", sorted(set(_frozen_records()), key=repr), ids=repr)
def test_every_frozen_record_of_the_packages_fills_its_slots_directly(cls: type) -> None:
    """Each frozen dataclass in ``hooks`` and ``runner`` has ``slot_init``'s ``__init__``."""
    setters = {f"_set_{item.name}" for item in dataclasses.fields(cls)}
    init: Any = vars(cls)["__init__"]
    assert setters <= set(init.__code__.co_freevars)
