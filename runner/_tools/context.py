"""``RunContext``: what a tool that asks for it gets of its run, its dependencies first.

A function tool whose first parameter is annotated ``RunContext`` (``RunContext[Deps]``)
is called with one as that argument; the parameter is no argument of the model's and is
left out of the tool's schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, final

from typing_extensions import TypeVar

from hooks import State
from hooks._slots import slot_init

__all__ = ["RunContext", "takes_context"]

Deps = TypeVar("Deps", default=None)


@final
@slot_init
@dataclass(frozen=True, slots=True)
class RunContext(Generic[Deps]):
    """One tool call's view of its run: ``deps`` (what ``Runner.run(..., deps=...)``
    was given), the invocation ``state``, who and where (``run_id``, ``user_id``,
    ``session_id``, ``agent``) and the ``call_id`` of the model's call.

    Deps are never saved: a resumed run is given them again.
    """

    deps: Deps
    state: State
    run_id: str
    user_id: str
    session_id: str
    agent: str
    call_id: str


def takes_context(annotation: object) -> bool:
    """Whether a parameter annotated ``annotation`` asks for the ``RunContext``."""
    origin: Any = getattr(annotation, "__origin__", None)
    return annotation is RunContext or origin is RunContext
