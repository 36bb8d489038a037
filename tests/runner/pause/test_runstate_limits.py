"""``RunState.from_json`` on hostile input: linear in a table's keys, bounded, only ``ValueError``.

The sizes here would take seconds to minutes if reading were quadratic (0.2 read 40,000
keys in 7.2 s); nothing is timed. Every malformed input -- too long, nested too deep,
not UTF-8, not JSON, any JSON that is no state -- is a ``ValueError``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner import RunState
from runner._pause import runstate
from runner._pause.runstate import MAX_STATE_CHARS


def _valid() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RunState({}, "r", "a", "u", "s", "completed").to_json())
    return data


@pytest.mark.slow  # sizes that take seconds if reading were quadratic
def test_two_hundred_thousand_values_and_decisions_read() -> None:
    """200,000 state values and 200,000 decisions: read, each kept."""
    data = _valid()
    data["values"] = {f"k{index}": index for index in range(200_000)}
    data["decisions"] = {f"r{index}": {"kind": "approve"} for index in range(200_000)}
    state = RunState.from_json(json.dumps(data))
    assert (len(state), state["k199999"], len(state.decisions)) == (200_000, 199_999, 200_000)


@pytest.mark.slow  # sizes that take seconds if reading were quadratic
def test_a_frame_table_of_many_keys_reads() -> None:
    """A paused turn's tables are read in one pass too: 100,000 results."""
    data = _valid()
    data["status"] = "paused"
    data["frame"] = {
        "agent": "a",
        "branch": "a",
        "message": {"role": "user", "content": "go"},
        "messages": [],
        "step": 1,
        "results": {f"c{index}": {"content": "ok"} for index in range(100_000)},
        "requests": {},
        "children": {},
    }
    state = RunState.from_json(json.dumps(data))
    assert state.frame is not None
    assert len(state.frame.results) == 100_000


@pytest.mark.parametrize(
    "text",
    [
        "[" * 200_000 + "]" * 200_000,
        '{"a":' * 200_000 + "1" + "}" * 200_000,
        json.dumps({**_valid(), "values": {"v": "X"}}).replace(
            '"X"', "[" * 100_000 + "]" * 100_000
        ),
    ],
    ids=["arrays", "objects", "a deep value"],
)
def test_nesting_too_deep_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="nested too deep to read"):
        RunState.from_json(text)


def test_frames_nested_too_deep_are_a_value_error() -> None:
    """Sub-agent frames nested 600 deep: a ``ValueError``, never a ``RecursionError``."""

    head = (
        '{"agent": "a", "branch": "a", "message": {"role": "user", "content": "go"}, '
        '"messages": [], "step": 0, "results": {}, "requests": {}, "children": '
    )
    depth = 600  # past what the JSON decoder or the frames' decoding (one call each) go
    frame = (head + '{"c": ') * depth + head + "{}}" + "}}" * depth
    text = json.dumps({**_valid(), "status": "paused"}).replace('"frame": null', '"frame": F')
    with pytest.raises(ValueError, match="nested too deep"):
        RunState.from_json(text.replace("F", frame, 1))


def test_text_over_the_limit_is_refused_before_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over ``MAX_STATE_CHARS``: refused by its length, str or bytes alike."""
    assert MAX_STATE_CHARS == 64 * 1024 * 1024
    monkeypatch.setattr(runstate, "MAX_STATE_CHARS", 1_000)
    text = json.dumps({**_valid(), "values": {"pad": "x" * 1_000}})
    for given_text in (text, text.encode()):
        with pytest.raises(ValueError, match="at most 1000 characters, got 1"):
            RunState.from_json(given_text)


def test_bytes_that_are_no_utf8_are_a_value_error() -> None:
    with pytest.raises(ValueError, match="a RunState must be JSON text"):
        RunState.from_json(b'{"schema": "\xff"}')


def test_what_is_no_text_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a RunState is read from str or bytes, got int"):
        RunState.from_json(5)  # type: ignore[arg-type]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from(sorted(_valid())), value=_json)
def test_any_field_set_to_any_json_is_read_or_a_value_error(key: str, value: object) -> None:
    """Whatever JSON a field holds, ``from_json`` reads a state or raises ``ValueError``."""
    with contextlib.suppress(ValueError):
        RunState.from_json(json.dumps({**_valid(), key: value}))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=50) | st.binary(max_size=50))
def test_any_text_is_read_or_a_value_error(text: str | bytes) -> None:
    with contextlib.suppress(ValueError):
        RunState.from_json(text)
