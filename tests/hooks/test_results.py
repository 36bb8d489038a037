"""Tests for the tagged results: ``Cont``, ``Halt``, ``Retry`` and ``Fallback``."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from hooks import BeforeResult, Cont, ErrorResult, Fallback, Halt, Pause, Retry

ALL_TAGS = (Cont, Halt, Retry, Fallback)


@pytest.mark.parametrize(
    ("result", "attribute"),
    [(Cont(1), "ctx"), (Halt(1), "value"), (Retry(1), "ctx"), (Fallback(1), "value")],
)
def test_results_are_immutable(result: object, attribute: str) -> None:
    """Assigning a result's field raises AttributeError and leaves the value alone."""
    with pytest.raises(AttributeError):
        setattr(result, attribute, 2)
    assert getattr(result, attribute) == 1


def test_retry_delay_is_read_only() -> None:
    """A ``Retry``'s delay cannot be reassigned."""
    retry = Retry(1, delay=2.0)
    with pytest.raises(AttributeError):
        retry.delay = 3.0  # type: ignore[misc]
    assert retry.delay == 2.0


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_results_have_no_instance_dict(tag: type[object]) -> None:
    """Results are slotted: no new attribute can be attached to one."""
    result = tag(1)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        result.extra = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_equal_payloads_compare_and_hash_equal(tag: type[object]) -> None:
    """Two results of one tag with equal payloads are equal and hash alike."""
    first, second = tag((1, "a")), tag((1, "a"))  # type: ignore[call-arg]
    assert first == second
    assert not first != second  # noqa: SIM202 -- checks __ne__ too
    assert hash(first) == hash(second)
    assert len({first, second}) == 1


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_different_payloads_differ(tag: type[object]) -> None:
    """Two results of one tag with different payloads are not equal."""
    assert tag(1) != tag(2)  # type: ignore[call-arg]


@pytest.mark.parametrize(("left", "right"), list(itertools.permutations(ALL_TAGS, 2)))
def test_results_of_different_tags_are_never_equal(left: type[object], right: type[object]) -> None:
    """``Cont(1) != Halt(1)``: the tag is part of a result's identity, for equality and hashing."""
    assert left(1) != right(1)  # type: ignore[call-arg]
    assert len({left(1), right(1)}) == 2  # type: ignore[call-arg]


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_results_are_not_equal_to_their_payload_or_a_tuple(tag: type[object]) -> None:
    """A result is not equal to its bare payload nor to a tuple holding it."""
    result = tag(1)  # type: ignore[call-arg]
    assert result != 1
    assert result != (1,)
    assert result != Success(1)


def test_retry_equality_includes_the_delay() -> None:
    """Two ``Retry`` with the same context but different delays differ."""
    assert Retry(1, delay=1.0) == Retry(1, delay=1.0)
    assert hash(Retry(1, delay=1.0)) == hash(Retry(1, delay=1.0))
    assert Retry(1, delay=1.0) != Retry(1, delay=2.0)
    assert Retry(1) != Retry(1, delay=0.0)


@pytest.mark.parametrize(
    ("result", "text"),
    [
        (Cont(1), "Cont(1)"),
        (Cont("ctx"), "Cont('ctx')"),
        (Halt({}), "Halt({})"),
        (Halt(""), "Halt('')"),
        (Retry(1), "Retry(1)"),
        (Retry(1, delay=0.5), "Retry(1, delay=0.5)"),
        (Retry("c", delay=0), "Retry('c', delay=0)"),
        (Fallback([1]), "Fallback([1])"),
    ],
)
def test_repr_shows_tag_and_payload(result: object, text: str) -> None:
    """The repr reads like the constructor call that built the result."""
    assert repr(result) == text


@pytest.mark.parametrize(
    ("tag", "fields"),
    [(Cont, ("ctx",)), (Halt, ("value",)), (Retry, ("ctx",)), (Fallback, ("value",))],
)
def test_match_args(tag: type[object], fields: tuple[str, ...]) -> None:
    """Each tag's ``__match_args__`` names its one positional field."""
    assert tag.__match_args__ == fields  # type: ignore[attr-defined]


def _before_tag(result: BeforeResult[int, str]) -> str:
    match result:
        case Cont(ctx):
            return f"cont {ctx}"
        case Halt(value):
            return f"halt {value!r}"


@pytest.mark.parametrize(
    ("result", "expected"),
    [(Cont(3), "cont 3"), (Halt("x"), "halt 'x'"), (Halt(""), "halt ''")],
)
def test_match_takes_before_results_apart(result: BeforeResult[int, str], expected: str) -> None:
    """``match`` with positional patterns binds a before result's field."""
    assert _before_tag(result) == expected


def _error_tag(result: ErrorResult[int, str]) -> str:
    match result:
        case Retry(ctx, delay=None):
            return f"retry {ctx} now"
        case Retry(ctx, delay=delay):
            return f"retry {ctx} after {delay}"
        case Fallback(value):
            return f"fallback {value}"
        case Failure(error):
            return f"failure {type(error).__name__}"
    raise AssertionError(result)  # returns' Failure is not closed for mypy's match


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (Retry(1), "retry 1 now"),
        (Retry(2, delay=0.25), "retry 2 after 0.25"),
        (Fallback("f"), "fallback f"),
        (Failure(KeyError("k")), "failure KeyError"),
    ],
)
def test_match_takes_error_results_apart(result: ErrorResult[int, str], expected: str) -> None:
    """``match`` tells the error results apart, including ``Retry``'s keyword ``delay``."""
    assert _error_tag(result) == expected


def test_a_pattern_of_one_tag_does_not_match_another() -> None:
    """A ``Cont`` pattern does not match a ``Halt`` holding the same payload."""
    matched: list[str] = []
    for result in (Halt(1), Cont(1)):
        match result:
            case Cont(_):
                matched.append("cont")
            case _:
                matched.append("other")
    assert matched == ["other", "cont"]


def test_retry_delay_is_keyword_only() -> None:
    """``Retry``'s delay can only be given by keyword."""
    with pytest.raises(TypeError):
        Retry(1, 2.0)  # type: ignore[call-arg]
    assert Retry(1, delay=2.0).delay == 2.0


def test_retry_delay_defaults_to_none() -> None:
    """A ``Retry`` without a delay keeps the retry policy's backoff (``delay is None``)."""
    assert Retry(1).delay is None


@pytest.mark.parametrize("delay", [0, 0.0, 0.5, 3, 1e9])
def test_retry_accepts_non_negative_delays(delay: float) -> None:
    """Zero and positive delays are kept as given."""
    assert Retry(1, delay=delay).delay == delay


@pytest.mark.parametrize("delay", [-1, -0.001, -math.inf, math.nan, math.inf])
def test_retry_rejects_negative_nan_and_infinite_delays(delay: float) -> None:
    """A negative, NaN or infinite delay raises ValueError that names the bad value."""
    with pytest.raises(ValueError, match="delay") as excinfo:
        Retry(1, delay=delay)
    assert repr(delay) in str(excinfo.value)


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_payload_is_kept_by_identity(tag: type[object]) -> None:
    """A result holds the very object it was built with, not a copy."""
    payload: dict[str, int] = {}
    result = tag(payload)  # type: ignore[call-arg]
    field = tag.__match_args__[0]  # type: ignore[attr-defined]
    assert getattr(result, field) is payload


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_results_take_their_payload_positionally_only(tag: type[object]) -> None:
    """The payload cannot be passed by keyword."""
    field = tag.__match_args__[0]  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        tag(**{field: 1})


@pytest.mark.parametrize("tag", [Cont(1), Halt(1), Retry(1), Fallback(1)])
def test_equality_with_other_types_defers_to_them(tag: object) -> None:
    """Comparing a tag with a foreign type returns NotImplemented, so the other side decides."""

    class Anything:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    assert tag.__eq__(1) is NotImplemented
    assert tag == Anything()


# Any hashable payload a result may carry; ``1``, ``1.0`` and ``True`` are equal payloads.
HASHABLE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.tuples(st.integers(), st.text(max_size=3)),
    st.frozensets(st.integers(), max_size=3),
)


@given(payload=HASHABLE)
def test_hash_tells_the_tags_apart(payload: object) -> None:
    """The four tags holding one payload hash differently, so ``{Cont(x), Halt(x)}`` spreads
    over a set's buckets instead of colliding."""
    assert len({hash(tag(payload)) for tag in ALL_TAGS}) == len(ALL_TAGS)


@given(payload=st.integers(min_value=-(2**53), max_value=2**53))
def test_hash_agrees_with_equality_across_payload_types(payload: int) -> None:
    """Payloads that are equal across types (``1``, ``1.0``) give equal results of equal hash."""
    for tag in ALL_TAGS:
        exact, approximate = tag(payload), tag(float(payload))
        assert exact == approximate
        assert hash(exact) == hash(approximate)


@settings(max_examples=40)
@given(payloads=st.lists(HASHABLE, max_size=12))
def test_hash_follows_the_payload(payloads: list[object]) -> None:
    """A tag's hash keeps its payload's: results of one tag spread over a set's buckets as
    widely as their payloads do."""
    spread = len({hash(payload) for payload in payloads})
    for tag in ALL_TAGS:
        assert len({hash(tag(payload)) for payload in payloads}) == spread


# -- Pause: its payload is a reason, a str --------------------------------------------


def test_pause_takes_a_str_reason_and_nothing_else() -> None:
    """``Pause(reason)`` keeps its reason; anything but a str is refused, named."""
    assert Pause("ask first").reason == "ask first"
    with pytest.raises(TypeError, match=r"^Pause reason must be a str, got int 3$"):
        Pause(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^Pause reason must be a str, got NoneType None$"):
        Pause(None)  # type: ignore[arg-type]


def test_pause_is_immutable_slotted_and_reads_as_built() -> None:
    """The reason cannot be reassigned, nothing can be attached, and the repr is the call."""
    pause = Pause("sure?")
    with pytest.raises(AttributeError):
        pause.reason = "no"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        pause.extra = 1  # type: ignore[attr-defined]
    assert repr(pause) == "Pause('sure?')"
    assert Pause.__match_args__ == ("reason",)


def test_pauses_compare_and_hash_by_reason_only() -> None:
    """Equal reasons: equal and one hash; another reason, another tag or a str: not equal."""
    assert Pause("a") == Pause("a")
    assert hash(Pause("a")) == hash(Pause("a"))
    assert len({Pause("a"), Pause("a"), Pause("b")}) == 2
    assert Pause("a") != Pause("b")
    assert Pause("a") != Halt("a")
    assert Pause("a") != "a"
    assert hash(Pause("a")) != hash(Halt("a"))
    assert hash(Pause("a")) != hash(Pause("b"))
    assert hash(Pause("a")) != hash(None)


def test_match_takes_a_pause_apart() -> None:
    """``case Pause(reason)`` binds the reason."""
    result: object = Pause("delete it?")
    match result:
        case Pause(reason):
            assert reason == "delete it?"
        case _:
            pytest.fail("Pause did not match")
