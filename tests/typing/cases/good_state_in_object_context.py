"""A typed ``State.get`` reads where any object will do; ``update`` keeps the key's type."""

import logging
from collections.abc import Mapping
from typing import Any, Final

from typing_extensions import assert_type

from hooks import State, StateKey

COUNT: Final = StateKey[int]("count")


def report(state: State) -> dict[str, object]:
    logging.info("%s calls so far", state.get(COUNT))
    text = f"{state.get(COUNT)} calls"
    seen: object = state.get(COUNT)
    assert_type(state.get(COUNT), int | None)
    assert_type(state.get(COUNT, 0), int)
    assert_type(state.get(COUNT, "none"), int | str)
    assert_type(state.update(COUNT, lambda n: (n or 0) + 1), int)
    assert_type(state.update(COUNT, lambda n: n + 1, default=0), int)
    assert_type(state.snapshot(), Mapping[str, Any])
    return {"count": state.get(COUNT), "text": text, "seen": seen}
