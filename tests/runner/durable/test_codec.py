"""What a durable run stores loads back: errors whatever their ``__init__``, results, state."""

from __future__ import annotations

import pickle
import threading
from types import MappingProxyType

import pytest

from runner import RunResult, RunState, ToolResult
from runner._durable.codec import StoredError, dump, load, stored


class KeywordOnly(Exception):
    """Like ``openai.APIStatusError``: pickles, but its ``__init__`` wants keywords to unpickle."""

    def __init__(self, message: str, *, status_code: int, headers: dict[str, str]) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers
        self.lock = threading.Lock()  # something no store keeps


def test_an_error_whose_init_wants_keywords_loads_back_with_its_attributes() -> None:
    """Class, args, attributes and notes come back; what cannot be stored is left out."""
    error = KeywordOnly("slow down", status_code=429, headers={"retry-after": "2"})
    error.add_note("attempt 1")
    with pytest.raises(TypeError):
        pickle.loads(pickle.dumps(error))  # why the codec exists
    copy = load(dump(error))
    assert type(copy) is KeywordOnly
    assert (copy.args, copy.status_code, copy.headers) == (
        ("slow down",),
        429,
        {"retry-after": "2"},
    )
    assert copy.__notes__ == ["attempt 1"]
    assert not hasattr(copy, "lock")


def test_an_error_of_a_class_no_store_can_name_comes_back_as_a_runtime_error() -> None:
    """A class defined in a function is replaced by a RuntimeError naming it, attributes kept."""

    class Local(Exception):
        pass

    error = Local("gone")
    error.code = 7  # type: ignore[attr-defined]
    copy = load(dump(error))
    assert type(copy) is RuntimeError
    assert str(copy) == f"{__name__}.{Local.__qualname__}: gone"
    assert copy.code == 7  # type: ignore[attr-defined]


def test_nested_errors_and_unstorable_args_are_stored_too() -> None:
    """An error inside an error's args is stored the same way; args that cannot be, as text."""
    inner = KeywordOnly("inner", status_code=500, headers={})
    outer = load(dump(ValueError("outer", inner)))
    assert type(outer.args[1]) is KeywordOnly
    assert outer.args[1].status_code == 500
    assert load(dump(ValueError(threading.Lock()))).args[0].startswith("<unlocked _thread.lock")


def test_a_result_with_state_loads_back_equal() -> None:
    """A ``RunResult`` and its ``RunState`` (values in a read-only mapping) load back equal."""
    state = RunState(MappingProxyType({"count": 2}), "r1", "a", "u", "s", "completed")
    result = RunResult("done", (), "completed", state=state)
    copy = load(dump(result))
    assert (copy.output, copy.status, copy.events) == (result.output, "completed", ())
    assert copy.state.to_json() == state.to_json()
    assert type(copy.state.data) is MappingProxyType


def test_what_cannot_be_stored_is_a_type_error_naming_it() -> None:
    """A lock in a value to store: TypeError saying a durable run cannot store it, and why."""
    with pytest.raises(
        TypeError, match=r"a durable run cannot store dict .*keep what a run returns"
    ):
        dump({"lock": threading.Lock()})


def test_a_stored_error_pickles_plainly_and_says_what_it_holds() -> None:
    """``StoredError`` survives plain pickle (what DBOS uses); its text is the original's."""
    error = stored(KeywordOnly("slow down", status_code=429, headers={}))
    assert str(error) == "KeywordOnly: slow down"
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is StoredError
    assert load(again.blob).status_code == 429
    assert load(dump(ToolResult("ok"))) == ToolResult("ok")
