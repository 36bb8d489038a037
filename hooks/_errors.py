"""The errors hookline raises.

::

    Exception
     +-- HookError
          +-- InvalidResult (also TypeError)     a callback returned an illegal value
          +-- InvalidCallbacks (also TypeError)  a callbacks list cannot be dispatched
          +-- StopRun                            a callback ends the run cleanly
          +-- HookTimeout (also TimeoutError)    a hook under with_timeout overran

Exceptions raised *by* callbacks are never wrapped: they keep their type and gain a
PEP 678 note naming the callback and the hook point.
"""

from __future__ import annotations

from types import BuiltinFunctionType, FunctionType, MethodType
from typing import final

__all__ = ["Described", "HookError", "HookTimeout", "InvalidCallbacks", "InvalidResult", "StopRun"]


class HookError(Exception):
    """Base of every error hookline itself raises."""


@final
class InvalidResult(HookError, TypeError):
    """A callback returned a value its hook point does not allow (``None`` included).

    ``callback`` is the module or object, ``point`` the hook point's name, ``value``
    what came back and ``expected`` the tags that were allowed (with their payload
    types when the point declares them: ``Halt[ToolResult]``). ``problem`` is set when
    the tag was legal but its payload was not: what came back and what was expected,
    as in ``"Halt(str) 'refused'; expected Halt[ToolResult]"``; it is ``None`` when
    the tag itself was wrong.

    A wrap that gives ``call_next`` a context of the wrong type gets one too, raised
    from ``call_next``: ``value`` is that context, ``expected`` its class's name, and
    the message says ``passed call_next`` where others say ``returned``.
    """

    def __init__(
        self,
        callback: object,
        point: str,
        value: object,
        expected: tuple[str, ...],
        *,
        problem: str | None = None,
        verb: str = "returned",
    ) -> None:
        self.callback = callback
        self.point = point
        self.value = value
        self.expected = expected
        self.problem = problem
        if problem is None:
            got = f"{type(value).__name__} ({value!r:.80}); expected {' or '.join(expected)}"
        else:
            got = problem
        super().__init__(f"{describe(callback)}.{point} {verb} {got}")


@final
class InvalidCallbacks(HookError, TypeError):
    """A callbacks list cannot be dispatched; raised before any callback runs.

    ``callback`` is the offending entry (or the whole list when the list itself is
    wrong) and ``attribute`` the hook method's name when one is at fault.
    """

    def __init__(self, message: str, *, callback: object, attribute: str | None = None) -> None:
        self.callback = callback
        self.attribute = attribute
        super().__init__(message)


@final
class StopRun(HookError):
    """Raised by any callback to end the run cleanly with ``status == "stopped"``."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@final
class HookTimeout(HookError, TimeoutError):
    """A hook method under ``with_timeout(..., fail="closed")`` overran its deadline.

    ``callback`` is the callback given to ``with_timeout`` (not its wrapper), ``point``
    the hook point's name and ``seconds`` the deadline. Raised by a before hook of a
    point whose value is not a ``ToolResult`` (the model or the agent does not run);
    carried in a ``Failure`` by an after, error or wrap hook.
    """

    def __init__(self, callback: object, point: str, seconds: float) -> None:
        self.callback = callback
        self.point = point
        self.seconds = seconds
        super().__init__(f"{point} of {describe(callback)} timed out after {seconds:g}s")


class Described:
    """A callback that names itself in messages (``describe``): a wrapper of another."""

    __slots__ = ()

    def _description(self) -> str:
        raise NotImplementedError


def describe(callback: object) -> str:
    """Name a callback for messages: ``module 'guards'`` or ``Audit instance``.

    A function or method (a wrap's operation) is ``function 'call_tool'``.
    """
    if isinstance(callback, Described):
        return callback._description()
    if isinstance(callback, (FunctionType, MethodType, BuiltinFunctionType)):
        return f"function {callback.__qualname__!r}"
    name = getattr(callback, "__name__", None)
    if isinstance(name, str) and type(callback).__name__ == "module":
        return f"module {name!r}"
    if isinstance(callback, type):
        return f"class {callback.__qualname__}"
    return f"{type(callback).__qualname__} instance"
