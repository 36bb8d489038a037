"""``hold``: when a streamed run lets a model attempt's deltas out, checked once per stream.

``Runner.stream(..., hold=...)`` takes:

- ``"auto"`` (the default): ``"output"`` for the agents whose callbacks define an
  output guard (``after_model``), ``"none"`` for the others;
- ``"output"``: no delta of a model attempt goes out until ``after_model`` has passed its
  whole answer unchanged; an answer the hooks replaced goes out instead, as one delta;
- ``"none"`` or ``None``: each delta goes out as it is generated;
- an int ``N >= 1``: held as ``"output"`` holds, and each time the attempt's text has
  grown by ``N`` characters since the last check, ``after_model`` is dispatched over the
  text so far (``ModelResponse(text, finish_reason=PARTIAL)``); when it passes that text
  unchanged, what was held goes out. A check that changes or fails it holds the rest
  of the attempt until ``after_model`` has seen the whole answer.

Resolved here to what the loop reads: ``None`` (no hold), ``0`` (hold until the answer
passed), ``N`` (check every ``N`` characters) or ``AUTO`` (decided per agent,
``hold_for``).
"""

from __future__ import annotations

from typing import Final, Literal

from hooks import AFTER_MODEL, AfterPoint, CompiledCallbacks, ModelContext, ModelResponse
from runner._checks import got

__all__ = ["AUTO", "OUTPUT_GUARDS", "PARTIAL", "Hold", "checked_hold", "hold_for"]

Hold = Literal["auto", "output", "none"] | int | None
"""What ``Runner.stream``'s ``hold`` takes."""

AUTO: Final = -1
"""``hold="auto"`` resolved: each agent holds when it has an output guard."""

PARTIAL: Final = "partial"
"""The ``finish_reason`` of the partial answer a ``hold=N`` check shows ``after_model``."""

OUTPUT_GUARDS: Final[tuple[AfterPoint[ModelContext, ModelResponse], ...]] = (AFTER_MODEL,)
"""The points whose callbacks make ``hold="auto"`` hold an agent's text."""

_MODES: Final[dict[str, int | None]] = {"auto": AUTO, "output": 0, "none": None}
_UNKNOWN: Final = -2  # no mode of _MODES
_EXPECTED: Final = '"auto", "output", "none", None or an int >= 1 (characters between checks)'


def checked_hold(hold: object) -> int | None:
    """``hold`` as the loop reads it: ``None``, ``0``, ``N`` or ``AUTO``; else a clear error
    (``TypeError`` for a wrong type, ``ValueError`` for a wrong value) naming what came."""
    if hold is None:
        return None
    if isinstance(hold, str):
        mode = _MODES.get(str.__str__(hold), _UNKNOWN)  # a str subclass read as its text
        if mode == _UNKNOWN:
            msg = f"stream's hold must be {_EXPECTED}, got {got(hold)}"
            raise ValueError(msg)
        return mode
    if isinstance(hold, bool) or not isinstance(hold, int):
        msg = f"stream's hold must be {_EXPECTED}, got {got(hold)}"
        raise TypeError(msg)
    if hold < 1:
        msg = f"stream's hold must be {_EXPECTED}, got {got(hold)}"
        raise ValueError(msg)
    return int(hold)


def hold_for(hold: int | None, compiled: CompiledCallbacks) -> int | None:
    """What one agent's model attempts hold under ``hold``: ``AUTO`` becomes ``0`` when the
    agent's callbacks define an output guard, ``None`` when they do not."""
    if hold != AUTO:
        return hold
    return 0 if any(compiled.defines(point) for point in OUTPUT_GUARDS) else None
