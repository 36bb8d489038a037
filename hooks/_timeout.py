"""Per-hook deadlines: ``with_timeout(callback, seconds, fail="closed" | "open")``.

``with_timeout`` returns a callback with exactly the hook methods of the one it is
given, each run under ``asyncio.timeout(seconds)``. Only ``async def`` methods can be
bounded -- a running plain ``def`` cannot be pre-empted -- so a callback with a plain
hook method is refused (``on_event`` is passed through as it is, sync or async: an
observer changes no flow). What an overrun does is the caller's explicit choice,
``fail="closed"`` (the operation is refused) or ``fail="open"`` (the hook is skipped):

- before: closed gives ``Halt(ToolResult(message, is_error=True))`` at a point whose
  value is ``ToolResult`` (the tool does not run, the model reads why), else raises
  ``HookTimeout`` (the model or agent does not run; the run fails); open gives
  ``Cont(ctx)``;
- after: closed gives ``Failure(HookTimeout)`` (chained to the outcome's error, if
  any); open gives the outcome unchanged;
- error: closed gives ``Failure(HookTimeout)`` chained to the error being handled;
  open gives the failure unchanged;
- wrap: closed gives ``Failure(HookTimeout)``; open gives what ``call_next`` last gave
  back, or, if the wrap never called it, calls it now.

A wrap's deadline bounds the wrap's own work: it stops while the wrap's ``call_next``
runs (the wraps inside it and the operation have their own time), so a slow cache,
validator or semaphore is cut short, never the operation in the middle. Every overrun
is logged (``logging.getLogger("hooks")``, a warning) and recorded in the wrapper's
``timeouts`` list as a ``TimeoutRecord``.
"""

from __future__ import annotations

import math
from typing import NoReturn

from hooks._errors import InvalidCallbacks, describe
from hooks._messages import ToolResult
from hooks._points import declarations, first_declared, kind_of
from hooks._timed import Fail, Fn, TimedCallback, timed_class
from hooks._validate import HOOK_PREFIXES, is_async, public
from hooks._verdicts import validate

__all__ = ["with_timeout"]


def with_timeout(callback: object, seconds: float, *, fail: Fail) -> TimedCallback:
    """``callback`` with each async hook method bounded by ``seconds``.

    ``fail`` has no default. ``"closed"`` refuses the operation when a hook overruns: a
    before hook gives ``Halt(ToolResult(..., is_error=True))`` at a tool point and raises
    ``HookTimeout`` elsewhere; after, error and wrap hooks give ``Failure(HookTimeout)``.
    ``"open"`` skips the hook: ``Cont(ctx)``, the outcome or failure unchanged, a wrap's
    last ``call_next`` outcome. A wrap's deadline stops while its ``call_next`` runs.
    Every overrun is logged and recorded in the wrapper's ``timeouts``.

    Raises ``InvalidCallbacks`` for a callback with a plain ``def`` hook method (it
    cannot be pre-empted), with a hook-shaped method of no declared point (declare the
    point first), or with nothing to bound; the callback is validated as a callbacks
    list entry first.
    """
    checked: object = seconds  # callers without a type checker pass anything
    if type(checked) not in (int, float):  # a bool is no number of seconds
        msg = f"with_timeout: seconds must be an int or float, got {type(checked).__name__}"
        raise TypeError(msg)
    if not 0 < seconds < math.inf:
        msg = f"with_timeout: seconds must be a finite number > 0, got {seconds!r}"
        raise ValueError(msg)
    if fail not in ("closed", "open"):
        msg = f"with_timeout: fail must be 'closed' or 'open', got {fail!r}"
        raise ValueError(msg)
    validate(callback, declarations())
    hooks: dict[str, Fn] = {}
    shape: list[tuple[str, str, bool]] = []
    for name in dir(callback):
        fn: object = getattr(callback, name, None)
        if not public(name) or not callable(fn):
            continue
        kind = kind_of(name)
        if kind is None:
            if name.startswith(HOOK_PREFIXES):
                _refuse(callback, name, "is no declared hook point yet; declare its point first")
            continue
        if kind != "event" and not is_async(fn):
            _refuse(callback, name, "is a plain def, which cannot be pre-empted; make it async def")
        hooks[name] = fn
        flag = is_async(fn) if kind == "event" else kind == "before" and _halts(name)
        shape.append((name, kind, flag))
    if not any(kind != "event" for _, kind, _ in shape):
        _refuse(callback, None, "has no hook method to bound")
    return timed_class(tuple(shape))(callback, float(seconds), fail, hooks)


def _refuse(callback: object, name: str | None, problem: str) -> NoReturn:
    where = describe(callback) if name is None else f"{describe(callback)}.{name}"
    msg = f"with_timeout: {where} {problem}"
    raise InvalidCallbacks(msg, callback=callback, attribute=name)


def _halts(name: str) -> bool:
    """Whether a before point refuses with ``Halt(ToolResult(...))``: its value is a tool's."""
    point = first_declared(name)
    return point is not None and point.value is ToolResult
