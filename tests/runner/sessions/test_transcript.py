"""Tests of ``runner._sessions.transcript``: ``Transcript``, a conversation that never copies.

A transcript must behave as an immutable tuple of messages in every respect a caller
can see, and extending it at the tip must not copy the history. Whether the history is
copied cannot be seen through the sequence API (that is the point of the design), so
the tests of sharing and forking count the copies (``copied``: each log the module
makes, with how many messages): they pin the cost model the runner's constant-time
turns rely on.
"""

from __future__ import annotations

import copy
import pickle
import random
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner import Message, ToolCall, Transcript
from runner._sessions import transcript as _history
from runner._sessions.transcript import answered, settled


def msgs(*contents: str) -> tuple[Message, ...]:
    """User messages with the given contents."""
    return tuple(Message("user", content) for content in contents)


SYSTEM = Message("system", "Be terse.")


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages each log a transcript makes from then on holds when made: one
    entry per ``Transcript(...)`` or fork, none for a view of a log that exists."""
    made: list[int] = []
    log_class = _history._Log

    def counting(items: list[Message], *origin: Any) -> Any:
        made.append(len(items))
        return log_class(items, *origin)

    monkeypatch.setattr(_history, "_Log", counting)
    return made


# -- a sequence ---------------------------------------------------------------------


def test_len_and_iteration_follow_the_messages() -> None:
    """A transcript has the length of its messages and iterates them in order."""
    assert len(Transcript()) == 0
    transcript = Transcript(msgs("a", "b", "c"))
    assert len(transcript) == 3
    assert list(transcript) == list(msgs("a", "b", "c"))
    assert list(reversed(transcript)) == list(msgs("c", "b", "a"))


def test_indexing_accepts_negative_positions_and_refuses_out_of_range() -> None:
    """Indexing works like a tuple's, negative positions included."""
    transcript = Transcript(msgs("a", "b", "c")).headed([SYSTEM])
    assert transcript[0] == SYSTEM
    assert transcript[1] == Message("user", "a")
    assert transcript[-1] == Message("user", "c")
    assert transcript[-4] == SYSTEM
    for position in (4, -5):
        with pytest.raises(IndexError, match="out of range"):
            transcript[position]


def test_indexing_with_a_non_integer_is_a_type_error() -> None:
    """A str or float index raises ``TypeError``, as it does for a tuple."""
    transcript = Transcript(msgs("a"))
    for index in ("0", 0.0):
        with pytest.raises(TypeError):
            transcript[index]  # type: ignore[call-overload]


def test_sequence_methods_work() -> None:
    """``in``, ``index`` and ``count`` behave as on the equal tuple."""
    transcript = Transcript(msgs("a", "b", "a"))
    assert Message("user", "b") in transcript
    assert Message("user", "z") not in transcript
    assert transcript.index(Message("user", "b")) == 1
    assert transcript.count(Message("user", "a")) == 2


def test_prefix_slices_are_transcript_views(copied: list[int]) -> None:
    """A slice from the start with step 1 is a transcript viewing the same log: no copy."""
    transcript = Transcript(msgs("a", "b", "c"))
    for piece, expected in (
        (transcript[:2], msgs("a", "b")),
        (transcript[0:3], msgs("a", "b", "c")),
        (transcript[:-1], msgs("a", "b")),
        (transcript[:10], msgs("a", "b", "c")),
        (transcript[:0], ()),
    ):
        assert isinstance(piece, Transcript)
        assert piece == expected
    assert copied == [3]


def test_other_slices_are_tuples() -> None:
    """Slices that do not start at 0 or step other than 1 are tuples of the same messages."""
    transcript = Transcript(msgs("a", "b", "c", "d"))
    as_tuple = tuple(transcript)
    for index in (slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(-2, None)):
        piece = transcript[index]
        assert type(piece) is tuple
        assert piece == as_tuple[index]


def test_a_slice_cutting_into_the_head_is_a_tuple() -> None:
    """A prefix shorter than the head is a plain tuple of the head's first messages."""
    transcript = Transcript(msgs("a")).headed([SYSTEM, SYSTEM])
    assert transcript[:1] == (SYSTEM,)
    assert type(transcript[:1]) is tuple
    assert isinstance(transcript[:2], Transcript)
    assert transcript[:2] == (SYSTEM, SYSTEM)


def test_equal_to_tuples_lists_and_transcripts_with_the_same_messages() -> None:
    """Equality compares messages, against tuples, lists and other transcripts alike."""
    transcript = Transcript(msgs("a", "b"))
    assert transcript == msgs("a", "b")
    assert msgs("a", "b") == transcript
    assert transcript == list(msgs("a", "b"))
    assert list(msgs("a", "b")) == transcript
    assert transcript == Transcript(msgs("a", "b"))
    assert transcript == Transcript(msgs("b")).headed(msgs("a"))
    assert Transcript() == ()
    assert transcript != msgs("a")
    assert transcript != msgs("a", "c")
    assert transcript != msgs("a", "b", "c")
    assert transcript != "ab"
    assert transcript != {0: Message("user", "a")}


def test_hash_is_the_equal_tuples_hash() -> None:
    """A transcript hashes as the tuple it equals, so the two are interchangeable as keys."""
    transcript = Transcript(msgs("a")).extend(msgs("b"))
    assert hash(transcript) == hash(msgs("a", "b"))
    assert hash(Transcript()) == hash(())
    keys: dict[object, str] = {msgs("a", "b"): "x"}
    assert keys[transcript] == "x"


def test_repr_shows_short_transcripts_and_counts_long_ones() -> None:
    """A short transcript's repr lists its messages; a long one's gives its length."""
    assert repr(Transcript()) == "Transcript([])"
    assert repr(Transcript(msgs("a"))) == f"Transcript({list(msgs('a'))!r})"
    assert repr(Transcript(msgs(*"abcdef"))) == "<Transcript of 6>"


def test_copy_deepcopy_and_pickle_keep_the_messages_and_head() -> None:
    """Copies and pickles of a transcript are equal to it and keep its head apart."""
    transcript = Transcript(msgs("a", "b")).headed([SYSTEM])
    for other in (
        copy.copy(transcript),
        copy.deepcopy(transcript),
        pickle.loads(pickle.dumps(transcript)),
    ):
        assert isinstance(other, Transcript)
        assert other == transcript
        assert other.body() == msgs("a", "b")


# -- growing ------------------------------------------------------------------------


def test_extend_and_append_leave_the_original_unchanged() -> None:
    """``extend`` and ``append`` return a longer transcript; the original keeps its messages."""
    original = Transcript(msgs("a"))
    longer = original.extend(msgs("b", "c"))
    one_more = longer.append(Message("user", "d"))
    assert original == msgs("a")
    assert longer == msgs("a", "b", "c")
    assert one_more == msgs("a", "b", "c", "d")
    assert original.extend(()) == msgs("a")


def test_extend_takes_any_iterable_including_itself() -> None:
    """``extend`` reads its argument first, so a transcript can be extended with itself."""
    transcript = Transcript(msgs("a", "b"))
    assert transcript.extend(iter(msgs("c"))) == msgs("a", "b", "c")
    assert transcript.extend(transcript) == msgs("a", "b", "a", "b")
    assert transcript == msgs("a", "b")


def test_extending_at_the_tip_shares_the_log(copied: list[int]) -> None:
    """Extending the longest view of a log appends to that log instead of copying it."""
    first = Transcript(msgs("a"))
    second = first.extend(msgs("b"))
    third = second.append(Message("user", "c"))
    assert copied == [1]
    assert first == msgs("a")
    assert second == msgs("a", "b")
    assert third == msgs("a", "b", "c")


def test_extending_a_view_behind_the_tip_forks(copied: list[int]) -> None:
    """Extending a view that is not the longest copies its prefix once; both keep their own."""
    base = Transcript(msgs("a"))
    left = base.extend(msgs("left"))
    right = base.extend(msgs("right"))  # base is no longer the tip: a fork
    assert copied == [1, 2]
    assert base == msgs("a")
    assert left == msgs("a", "left")
    assert right == msgs("a", "right")
    further = right.append(Message("user", "more"))  # the fork's tip: no copy
    again = left.append(Message("user", "again"))  # the first log's tip: no copy
    assert copied == [1, 2]
    assert further == msgs("a", "right", "more")
    assert again == msgs("a", "left", "again")
    assert right == msgs("a", "right")
    assert left == msgs("a", "left")


def test_last_is_the_views_own_last_message() -> None:
    """``last()`` is a view's last message (its head's when its body is empty), even behind the
    log's tip; ``None`` for no message at all."""
    assert Transcript().last() is None
    assert Transcript().headed([SYSTEM]).last() is SYSTEM
    whole = Transcript(msgs("a", "b"))
    grown = whole.append(Message("user", "c"))
    assert (whole.last(), grown.last()) == (msgs("b")[0], Message("user", "c"))
    assert whole.prefix(1).last() == msgs("a")[0]
    assert whole.headed([SYSTEM]).last() == msgs("b")[0]


def test_extending_a_prefix_forks() -> None:
    """A prefix view extended gets its own log; the longer transcript is unchanged."""
    whole = Transcript(msgs("a", "b", "c"))
    shorter = whole.prefix(1).append(Message("user", "x"))
    assert shorter == msgs("a", "x")
    assert whole == msgs("a", "b", "c")


# -- head, body and prefix ----------------------------------------------------------


def test_headed_puts_messages_before_the_body_without_copying_it(copied: list[int]) -> None:
    """``headed(h)`` is ``h`` then the body, viewing the same log; a new head replaces the old."""
    body = Transcript(msgs("a", "b"))
    headed = body.headed([SYSTEM])
    assert headed == (SYSTEM, *msgs("a", "b"))
    assert headed.headed(msgs("h")) == msgs("h", "a", "b")
    assert copied == [2]
    assert body == msgs("a", "b")


def test_an_empty_head_drops_the_head_or_is_the_transcript_itself() -> None:
    """``headed(())`` drops a head; a transcript without one is given back as it is."""
    body = Transcript(msgs("a", "b"))
    assert body.headed(()) is body
    assert body.headed([SYSTEM]).headed(()) == msgs("a", "b")


def test_extending_a_headed_transcript_keeps_the_head() -> None:
    """A headed transcript extended still starts with its head."""
    headed = Transcript(msgs("a")).headed([SYSTEM])
    assert headed.append(Message("user", "b")) == (SYSTEM, *msgs("a", "b"))


def test_body_drops_the_head() -> None:
    """``body()`` is the conversation without its head; a headless transcript is its own body."""
    body = Transcript(msgs("a", "b"))
    assert body.headed([SYSTEM]).body() == msgs("a", "b")
    assert body.body() is body


def test_prefix_keeps_at_least_the_head(copied: list[int]) -> None:
    """``prefix(n)`` is the first ``n`` messages, never fewer than the head, never more than all."""
    transcript = Transcript(msgs("a", "b")).headed([SYSTEM])
    assert transcript.prefix(2) == (SYSTEM, Message("user", "a"))
    assert transcript.prefix(0) == (SYSTEM,)
    assert transcript.prefix(-3) == (SYSTEM,)
    assert transcript.prefix(99) == transcript
    assert copied == [2]  # the prefixes are views: no copy


# -- model-based: any history of operations equals the same on tuples -----------------


@dataclass(frozen=True)
class Op:
    """One operation on the view at ``view`` (an index into the views made so far)."""

    kind: str
    view: int
    size: int


OPS = st.builds(
    Op,
    kind=st.sampled_from(["extend", "append", "prefix", "slice", "headed", "body"]),
    view=st.integers(min_value=0, max_value=1_000),
    size=st.integers(min_value=-1, max_value=4),
)


@settings(max_examples=200, deadline=None, database=None)
@given(st.lists(OPS, max_size=40))
def test_any_history_of_operations_equals_the_same_on_tuples(ops: list[Op]) -> None:
    """Every view made by any sequence of operations on earlier views equals the tuple model."""
    fresh = (Message("user", str(n)) for n in range(1_000_000))
    views: list[Transcript] = [Transcript()]
    model: list[tuple[tuple[Message, ...], tuple[Message, ...]]] = [((), ())]  # head, body
    for op in ops:
        index = op.view % len(views)
        view, (head, body) = views[index], model[index]
        size = max(op.size, 0)
        new: Sequence[Message]
        if op.kind == "extend":
            added = tuple(next(fresh) for _ in range(size))
            new, expected = view.extend(added), (head, body + added)
        elif op.kind == "append":
            message = next(fresh)
            new, expected = view.append(message), (head, (*body, message))
        elif op.kind == "prefix":
            new, expected = view.prefix(op.size), (head, body[: max(op.size - len(head), 0)])
        elif op.kind == "slice":
            stop = len(head) + size
            new, expected = view[:stop], (head, body[:size])
        elif op.kind == "headed":
            fresh_head = tuple(Message("system", f"h{n}") for n in range(size))
            new, expected = view.headed(fresh_head), (fresh_head, body)
        else:
            new, expected = view.body(), ((), body)
        assert isinstance(new, Transcript)
        views.append(new)
        model.append(expected)
        for each, (each_head, each_body) in zip(views, model, strict=True):
            whole = each_head + each_body
            assert each == whole
            assert len(each) == len(whole)
            assert tuple(each) == whole
            assert each.body() == each_body
            assert hash(each) == hash(whole)
            if whole:
                assert each[-1] == whole[-1]


# -- threads ----------------------------------------------------------------------------


class SwitchingList(list[Message]):
    """A log list that lets other threads run right after its length is read.

    Under the GIL a view's check of the tip and its append are rarely split by a thread
    switch; this forces one there, so a missing or misplaced lock loses messages.
    """

    def __len__(self) -> int:
        length = super().__len__()
        time.sleep(0)  # releases the GIL: another thread may append now
        return length


Made = tuple[Transcript, tuple[Message, ...], Transcript]
"""One extend in the thread test: the base view, the messages added, the view returned."""


@pytest.mark.parametrize("switching", [False, True], ids=["plain", "switching"])
def test_concurrent_extends_never_lose_or_corrupt_a_message(
    switching: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 threads extending shared views at once: every view holds its base and its own messages."""
    if switching:
        log_class = _history._Log
        monkeypatch.setattr(
            _history,
            "_Log",
            lambda items, *origin: log_class(SwitchingList(items), *origin),
        )
    threads, rounds = 16, 500
    views: list[Transcript] = [Transcript(msgs("root"))]
    barrier = threading.Barrier(threads)

    def worker(worker_id: int) -> list[Made]:
        rng = random.Random(worker_id)
        made: list[Made] = []
        barrier.wait()
        for round_ in range(rounds):
            # Mostly the newest view, so threads race for the same tip; else any earlier one.
            base = views[-1] if rng.random() < 0.9 else rng.choice(views)
            added = tuple(
                Message("user", f"{worker_id}:{round_}:{n}") for n in range(rng.randint(1, 3))
            )
            grown = base.extend(added)
            views.append(grown)  # list.append is atomic: other threads pick it up
            made.append((base, added, grown))
        return made

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        with ThreadPoolExecutor(threads) as pool:
            results = [made for each in pool.map(worker, range(threads)) for made in each]
    finally:
        sys.setswitchinterval(interval)
    assert len(views) == threads * rounds + 1
    # Checked once the threads are done: a view's contents never change, so what it
    # holds now is what it held when it was extended.
    for base, added, grown in results:
        assert len(grown) == len(base) + len(added)
        assert tuple(grown[len(base) :]) == added
        assert grown[: len(base)] == base
        assert grown[0] == Message("user", "root")


# -- an older view, once the log has grown past it ------------------------------------


def test_an_older_view_never_sees_messages_appended_after_it() -> None:
    """Indexing one past an older view's end is out of range, though the shared log goes on."""
    older = Transcript(msgs("a"))
    newer = older.append(Message("user", "b"))
    assert newer[1] == Message("user", "b")
    with pytest.raises(IndexError, match="out of range"):
        older[1]


def test_copies_and_pickles_of_an_older_view_keep_only_its_messages() -> None:
    """A copy of a view behind the log's tip holds that view's messages, none appended later."""
    older = Transcript(msgs("a", "b")).headed([SYSTEM])
    older.extend(msgs("c", "d"))
    for other in (copy.deepcopy(older), pickle.loads(pickle.dumps(older))):
        assert list(other) == [SYSTEM, *msgs("a", "b")]


def test_repr_lists_up_to_four_messages() -> None:
    """Four messages are listed in the repr; from five on, only their number."""
    four = Transcript(msgs("a", "b", "c", "d"))
    assert repr(four) == f"Transcript({list(four)!r})"
    assert repr(four.append(Message("user", "e"))) == "<Transcript of 5>"


# -- common_prefix: what a store needs not write again -------------------------------------


def test_a_grown_transcript_shares_the_whole_of_the_one_it_grew_from() -> None:
    """Extended at the tip, the new transcript shares every message of the old one."""
    base = Transcript(msgs(*map(str, range(10))))
    grown = base.extend(msgs("x", "y"))
    assert base.common_prefix(grown) == 10
    assert grown.common_prefix(base) == 10


def test_a_cut_transcript_shares_what_is_left(copied: list[int]) -> None:
    """A prefix shares its length; grown again after the cut (a fork), still that prefix."""
    base = Transcript(msgs(*map(str, range(10))))
    cut = base.prefix(7)
    assert base.common_prefix(cut) == 7
    forked = cut.append(Message("user", "replaced"))
    assert copied == [10, 8]  # a fork: the 7 messages left and the new one in a new log
    assert base.common_prefix(forked) == 7
    assert forked.common_prefix(base) == 7


def test_a_fork_of_a_grown_transcript_shares_up_to_the_cut() -> None:
    """The prefix a fork copied counts, however long either side grew since."""
    base = Transcript(msgs("a", "b", "c"))
    grown = base.extend(msgs("d", "e"))
    forked = grown.prefix(4).append(Message("user", "x"))
    assert base.common_prefix(forked) == 3
    assert grown.common_prefix(forked) == 4


def test_other_sequences_are_compared_object_by_object() -> None:
    """A tuple shares the messages that are the same objects, up to the first that is not."""
    messages = msgs("a", "b", "c")
    base = Transcript(messages)
    assert base.common_prefix(messages) == 3
    assert base.common_prefix((*messages[:2], Message("user", "c"))) == 2  # equal is not same
    assert base.common_prefix(()) == 0
    assert base.common_prefix(Transcript(messages)) == 3  # another log of the same objects


def test_a_transcript_with_another_head_is_compared_by_message() -> None:
    """Views of one log under different heads share only what is the same, head included."""
    base = Transcript(msgs("a", "b"))
    headed = base.headed((Message("system", "be brief"),))
    assert base.common_prefix(headed) == 0
    assert headed.common_prefix(headed.append(Message("user", "c"))) == 3


# -- forks, settled and answered (mutation-test hardening) ---------------------------------


def test_a_fork_and_its_origin_share_the_prefix_it_copied() -> None:
    """A transcript forked off another shares exactly the messages before the fork, both ways."""
    base = Transcript(msgs("a", "b", "c"))
    fork = base.prefix(1).append(Message("user", "x"))
    assert base.common_prefix(fork) == 1
    assert fork.common_prefix(base) == 1


def test_a_fork_shares_nothing_with_an_unrelated_transcript() -> None:
    """A fork of one log compared with another log's transcript walks the messages: none shared."""
    fork = Transcript(msgs("a", "b")).prefix(1).append(Message("user", "x"))
    other = Transcript(msgs("a", "b"))  # equal messages, other objects
    assert other.common_prefix(fork) == 0
    assert fork.common_prefix(other) == 0


def call(call_id: str) -> ToolCall:
    """A tool call with the given id."""
    return ToolCall(call_id, "lookup", {})


def test_settled_drops_the_tool_calls_of_a_final_answer_keeping_its_text() -> None:
    """A last assistant message with tool calls becomes one with its text only."""
    history = Transcript(
        (Message("user", "q"), Message("assistant", "done", tool_calls=(call("c1"),)))
    )
    assert tuple(settled(history)) == (Message("user", "q"), Message("assistant", "done"))


@pytest.mark.parametrize(
    "last",
    [Message("assistant", "plain"), Message("user", "q2"), Message("tool", "r", tool_call_id="c1")],
)
def test_settled_keeps_a_history_without_a_final_tool_calling_answer(last: Message) -> None:
    """A history whose last message carries no tool calls is returned as it is."""
    history = Transcript((Message("user", "q"), last))
    assert settled(history) is history


def test_settled_keeps_an_empty_history() -> None:
    """An empty history has nothing to settle."""
    history = Transcript()
    assert settled(history) is history


def test_answered_drops_unanswered_calls_behind_a_later_plain_message() -> None:
    """The last tool-calling turn is found past plain assistant messages after it."""
    history = Transcript(
        (
            Message("user", "q"),
            Message("assistant", "", tool_calls=(call("c1"),)),
            Message("assistant", "x"),
        )
    )
    assert tuple(answered(history)) == (Message("user", "q"),)


def test_answered_keeps_a_history_without_tool_calls() -> None:
    """A history nobody called a tool in is whole."""
    history = Transcript((Message("user", "q"), Message("assistant", "a")))
    assert answered(history) is history
