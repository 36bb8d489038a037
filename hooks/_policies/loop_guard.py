"""``LoopGuard``: a model calling the same tool with the same arguments again and again is stopped.

Each ``before_tool`` counts the call's tool and arguments (as canonical JSON) among the
run's last ``window`` tool calls, kept in the run's state (so sub-agents share it and a
paused run carries it in its ``RunState``). The ``n``-th identical call within the
window is halted with an error result telling the model to try something else; the
calls before it run.
"""

from __future__ import annotations

import json
from typing import Final, final

from hooks._contexts import ToolContext
from hooks._messages import ToolResult
from hooks._results import BeforeResult, Cont, Halt
from hooks._state import StateKey

__all__ = ["LoopGuard"]


@final
class LoopGuard:
    """Halts the ``n``-th call of one tool with the same arguments among the run's last
    ``window`` tool calls (``n`` >= 2, ``window`` >= ``n``); ``key`` names its entry in the
    run's state."""

    __slots__ = ("_key", "n", "window")

    def __init__(self, n: int = 3, *, window: int = 20, key: str = "hookline.loop_guard") -> None:
        for name, value, least in (("n", n, 2), ("window", window, n)):
            checked: object = value
            if type(checked) is not int or value < least:
                msg = f"LoopGuard's {name} must be an int >= {least}, got {checked!r:.60}"
                raise ValueError(msg)
        given: object = key
        if not isinstance(given, str) or not given:
            msg = f"LoopGuard's key must be a non-empty str, got {given!r:.60}"
            raise TypeError(msg)
        self.n: Final = n
        self.window: Final = window
        self._key: Final = StateKey[list[str]](key)

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Count the call; halt it if it is the ``n``-th of its kind in the window."""
        call = ctx.call
        signature = f"{call.name} {_canonical(call.args)}"
        recent = ctx.invocation.state.update(
            self._key, lambda seen: [*(seen or [])[-(self.window - 1) :], signature]
        )
        if recent.count(signature) < self.n:
            return Cont(ctx)
        message = (
            f"{call.name} was called {self.n} times with the same arguments in the last "
            f"{self.window} tool calls: refused; try something else or answer with what you have"
        )
        return Halt(ToolResult(message, is_error=True))

    def __repr__(self) -> str:
        return f"LoopGuard({self.n}, window={self.window})"


def _canonical(args: object) -> str:
    try:
        return json.dumps(args, sort_keys=True, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):  # keys that do not sort: the mapping's own repr
        return repr(args)
