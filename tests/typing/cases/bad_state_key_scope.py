"""A ``StateKey``'s scope is ``"invocation"`` or ``"session"``: a misspelt one is a type error."""

from typing import Final

from hooks import State, StateKey

TURNS: Final = StateKey[int]("turns", scope="session")
COUNT: Final = StateKey[int]("count", scope="invocation")
SEEN: Final = StateKey[int]("seen", scope="sesion")  # E: [arg-type] Argument "scope" to "StateKey" has incompatible type "Literal['sesion']"


def read(state: State) -> None:
    state.snapshot(scope="session")
    state.snapshot(scope="run")  # E: [arg-type] Argument "scope" to "snapshot" of "State" has incompatible type "Literal['run']"
