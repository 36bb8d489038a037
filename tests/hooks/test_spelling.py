"""Tests for the misspelling index: ``hooks._spelling`` against a from-scratch reference.

The index keeps an answer per name and catches up with points declared later, comparing
only names of lengths that could match. Whatever the order of declarations and questions,
its answer must be the one computed from scratch: ``None`` for a point's name or a name
holding one as whole underscore-separated words, else the declared name with the best
difflib ratio of at least 0.8 (ties to the greater name), else ``None``.

Each test runs against its own registry and index, so the names it declares reach no
other test and no answer cached by another test hides a wrong computation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from difflib import SequenceMatcher
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import hooks._points
import hooks._spelling
from hooks import BeforePoint
from hooks._points import ON_EVENT, known_points
from hooks._spelling import misspells

CUTOFF = 0.8


@contextmanager
def isolated() -> Iterator[hooks._spelling._NearMisses]:
    """A registry declaring only ``on_event``, and an empty index, for the ``with`` block."""
    with (
        mock.patch.object(hooks._points, "_known", {ON_EVENT: "event"}),
        mock.patch.object(hooks._spelling, "_index", hooks._spelling._NearMisses()) as index,
    ):
        yield index


def reference(name: str, points: Iterable[str]) -> str | None:
    """The point ``name`` misspells, computed from scratch by the rule."""
    declared = set(points)
    words = name.split("_")
    for start in range(len(words)):
        for end in range(start + 1, len(words) + 1):
            if "_".join(words[start:end]) in declared:
                return None
    scores = [(SequenceMatcher(None, point, name).ratio(), point) for point in declared]
    best = max((score for score in scores if score[0] >= CUTOFF), default=None)
    return None if best is None else best[1]


NAMES = st.from_regex(r"[a-c][a-c_]{0,7}", fullmatch=True)
"""Short names over three letters and ``_``: many of them are close to each other."""

Ops = list[tuple[bool, str]]
"""``(True, name)`` declares a point called ``name``; ``(False, name)`` asks about it."""


@given(ops=st.lists(st.tuples(st.booleans(), NAMES), max_size=16))
@example(ops=[(False, "abcd"), (True, "abcdef"), (False, "abcd")])  # a ratio of exactly 0.8
@example(ops=[(True, "abcdef"), (False, "abcd")])
@example(ops=[(True, "abcd"), (False, "abcdef")])
@example(ops=[(False, "abcdef"), (True, "abcd"), (False, "abcdef")])
@example(ops=[(False, "abcde"), (True, "abcd"), (False, "abcde")])  # a shorter point
@example(ops=[(True, "abcd"), (False, "abcd_a")])  # one word, held whole: no misspelling
@example(ops=[(True, "ab_cd"), (False, "a_ab_cd"), (False, "ab_cd_a"), (False, "abx_cd")])
@example(ops=[(False, "abc_a"), (True, "abc"), (True, "abc_b"), (False, "abc_a")])
@example(ops=[(False, "x_"), (True, "x"), (True, "x_y"), (False, "x_")])  # a trailing "_"
@example(ops=[(True, "ab"), (True, "ba"), (False, "abx"), (False, "bax")])
def test_the_index_answers_as_computed_from_scratch(ops: Ops) -> None:
    """However points and questions interleave, ``misspells`` gives the reference answer, for
    names asked first and for names answered before a point was declared."""
    with isolated():
        asked: list[str] = []
        for declare, name in ops:
            if declare:
                BeforePoint(name)
            else:
                asked.append(name)
                assert misspells(name) == reference(name, known_points()), name
        for name in asked:
            assert misspells(name) == reference(name, known_points()), name


@pytest.mark.parametrize(
    ("name", "point"),
    [
        ("on_evnet", "on_event"),  # the one point declared before any other
        ("before_modle", "before_model"),
        ("before_models", "before_model"),
    ],
)
def test_a_fresh_index_knows_every_point_declared_before_it(name: str, point: str) -> None:
    """An index built after points were declared (``on_event`` first of all) counts them all."""
    with isolated():
        BeforePoint("before_model")
        assert misspells(name) == point


@pytest.mark.parametrize(
    "helper",
    ["before_model_hook", "log_before_model", "my_before_model_count", "fetch_all", "fetch_a"],
)
def test_names_holding_a_point_as_words_are_helpers(helper: str) -> None:
    """A name holding a point's name as whole words (at its start, end or middle, one word or
    several) is no misspelling, however close it is."""
    with isolated():
        BeforePoint("before_model")
        BeforePoint("fetch")
        assert misspells(helper) is None


def test_the_index_forgets_everything_past_its_bound() -> None:
    """The index keeps at most 8192 names: the next one starts it afresh."""
    with isolated() as index:
        BeforePoint("before_model")
        for number in range(8193):
            assert misspells(f"name_{number}") is None
        assert len(index.near) <= 8192
        assert misspells("before_modle") == "before_model"
