"""Tests for the error tree, the evidence each error carries, and how callbacks are named."""

from __future__ import annotations

import types
from typing import Any

import pytest

from hooks import (
    BEFORE_MODEL,
    Cont,
    HookError,
    InvalidCallbacks,
    InvalidResult,
    StopRun,
    run_before,
)
from hooks._errors import describe

ANY_CTX: Any = object()
"""A stand-in context: these callbacks never look at it."""


class Audit:
    """A callback class."""

    class Inner:
        """A nested callback class."""


@pytest.mark.parametrize(
    ("error", "bases"),
    [
        (HookError, (Exception,)),
        (InvalidResult, (HookError, TypeError)),
        (InvalidCallbacks, (HookError, TypeError)),
        (StopRun, (HookError,)),
    ],
)
def test_error_tree(error: type[Exception], bases: tuple[type[Exception], ...]) -> None:
    """Each error subclasses its documented bases."""
    for base in bases:
        assert issubclass(error, base)


def test_stop_run_is_not_a_type_error() -> None:
    """``StopRun`` is a HookError only: ``except TypeError`` does not catch it."""
    assert not issubclass(StopRun, TypeError)
    assert not issubclass(HookError, TypeError)


def test_invalid_result_caught_as_type_error() -> None:
    """A dispatch's InvalidResult is caught by ``except TypeError``."""
    callback = types.ModuleType("lazy")
    callback.before_model = lambda ctx: None  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        run_before([callback], BEFORE_MODEL, ANY_CTX)


def test_invalid_callbacks_caught_as_hook_error() -> None:
    """A dispatch's InvalidCallbacks is caught by ``except HookError``."""
    with pytest.raises(HookError):
        run_before([Audit], BEFORE_MODEL, ANY_CTX)


def test_invalid_result_carries_its_evidence() -> None:
    """InvalidResult keeps the callback, point name, value and allowed tags, and says them."""
    callback = Audit()
    value = [1, 2]
    err = InvalidResult(callback, "before_model", value, ("Cont", "Halt"))
    assert err.callback is callback
    assert err.point == "before_model"
    assert err.value is value
    assert err.expected == ("Cont", "Halt")
    assert str(err) == "Audit instance.before_model returned list ([1, 2]); expected Cont or Halt"


def test_invalid_result_message_shortens_the_value() -> None:
    """InvalidResult's message shows at most 80 characters of the value's repr."""
    err = InvalidResult(Audit(), "after_tool", "y" * 1000, ("Success", "Failure[Exception]"))
    shown = str(err).split("(", 1)[1].split(")", 1)[0]
    assert len(shown) == 80
    assert str(err).endswith("expected Success or Failure[Exception]")


def test_invalid_callbacks_carries_its_evidence() -> None:
    """InvalidCallbacks keeps the offending callback and attribute, and its message."""
    callback = Audit()
    err = InvalidCallbacks("bad hook", callback=callback, attribute="before_modle")
    assert err.callback is callback
    assert err.attribute == "before_modle"
    assert str(err) == "bad hook"


def test_invalid_callbacks_attribute_defaults_to_none() -> None:
    """InvalidCallbacks about a whole callback has no attribute."""
    err = InvalidCallbacks("bad list", callback=[])
    assert err.attribute is None


def test_invalid_callbacks_needs_keyword_evidence() -> None:
    """InvalidCallbacks takes its callback by keyword only."""
    with pytest.raises(TypeError):
        InvalidCallbacks("bad", Audit())  # type: ignore[call-arg]


def test_stop_run_carries_its_reason() -> None:
    """StopRun keeps its reason, which is also its message."""
    err = StopRun("budget spent")
    assert err.reason == "budget spent"
    assert str(err) == "budget spent"
    assert err.args == ("budget spent",)


def test_stop_run_raised_by_a_callback_propagates_unchanged() -> None:
    """A StopRun raised by a callback reaches the dispatcher's caller as the same object."""
    stop = StopRun("enough")
    callback = types.ModuleType("stopper")

    def before_model(ctx: object) -> Cont[object]:
        raise stop

    callback.before_model = before_model  # type: ignore[attr-defined]
    with pytest.raises(StopRun) as excinfo:
        run_before([callback], BEFORE_MODEL, ANY_CTX)
    assert excinfo.value is stop
    assert excinfo.value.reason == "enough"


def test_describe_a_module() -> None:
    """A module is named by its ``__name__``."""
    assert describe(types.ModuleType("guards")) == "module 'guards'"
    assert describe(types) == "module 'types'"


def test_describe_an_instance() -> None:
    """An instance is named by its class's qualified name."""
    assert describe(Audit()) == "Audit instance"
    assert describe(Audit.Inner()) == "Audit.Inner instance"


def test_describe_a_class() -> None:
    """A class is named as a class, by its qualified name."""
    assert describe(Audit) == "class Audit"
    assert describe(Audit.Inner) == "class Audit.Inner"


def test_describe_an_object_with_a_name_attribute() -> None:
    """An instance with a ``__name__`` attribute is still described as an instance."""
    named = Audit()
    named.__name__ = "pretender"  # type: ignore[attr-defined]
    assert describe(named) == "Audit instance"


def test_errors_mention_the_tree_in_the_module_docstring() -> None:
    """The errors module draws its tree, naming every error."""
    import hooks._errors

    doc = hooks._errors.__doc__ or ""
    for name in ("HookError", "InvalidResult", "InvalidCallbacks", "StopRun"):
        assert name in doc
