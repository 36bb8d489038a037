"""A ``StateKey[int]`` takes and makes ints only, in ``set`` and in ``update``."""

from typing import Final

from hooks import State, StateKey

COUNT: Final = StateKey[int]("count")


def misuse(state: State) -> None:
    state.set(COUNT, "x")  # E: [misc] Cannot infer value of type parameter "T" of "set" of "State"
    state.update(COUNT, lambda n: n + 1)  # E: [operator] Unsupported operand types for + ("None" and "int")  # N: Left operand is of type "int | None"
    state.update(COUNT, lambda n: str(n), default=0)  # E: [arg-type] Argument 2 to "update" of "State" has incompatible type "Callable[[int], str]"; expected "Callable[[int], int]"  # E: [return-value] Incompatible return value type (got "str", expected "int")
