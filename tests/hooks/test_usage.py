"""``Usage`` and the response fields that carry it: checked, summed, hashable."""

from __future__ import annotations

import pytest

from hooks import ModelResponse, Usage


def test_usage_adds_field_by_field_and_totals_input_and_output() -> None:
    """``+`` sums each count; ``total_tokens`` is input plus output."""
    total = Usage(10, 2, 4, 1) + Usage(5, 1, 2, 0)
    assert total == Usage(15, 3, 6, 1)
    assert total.total_tokens == 18
    assert Usage() + Usage() == Usage()


def test_usage_refuses_what_is_not_a_usage_to_add() -> None:
    """Adding anything else is a TypeError, as for other values."""
    with pytest.raises(TypeError):
        _ = Usage() + 3  # type: ignore[operator]


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
def test_usage_counts_must_be_non_negative_ints(bad: object) -> None:
    """A count that is not an int >= 0 is refused, naming the field."""
    with pytest.raises(TypeError, match=r"Usage\.output_tokens must be an int >= 0"):
        Usage(1, bad)  # type: ignore[arg-type]


def test_model_response_carries_usage_and_finish_reason() -> None:
    """Both default to None, are checked, and take part in equality and hashing."""
    plain = ModelResponse("hi")
    assert (plain.usage, plain.finish_reason) == (None, None)
    full = ModelResponse("hi", usage=Usage(3, 4), finish_reason="stop")
    assert full != plain
    assert hash(full) == hash(ModelResponse("hi", usage=Usage(3, 4), finish_reason="stop"))
    with pytest.raises(TypeError, match=r"ModelResponse\.usage must be a Usage or None"):
        ModelResponse("hi", usage={"input_tokens": 3})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ModelResponse\.finish_reason must be a str or None"):
        ModelResponse("hi", finish_reason=1)  # type: ignore[arg-type]
