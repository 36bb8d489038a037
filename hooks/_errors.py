"""The errors hookline raises.

::

    Exception
     +-- HookError
          +-- InvalidResult (also TypeError)     a callback returned an illegal value
          +-- InvalidCallbacks (also TypeError)  a callbacks list cannot be dispatched
          +-- StopRun                            a callback ends the run cleanly

Exceptions raised *by* callbacks are never wrapped: they keep their type and gain a
PEP 678 note naming the callback and the hook point.
"""

from __future__ import annotations

from typing import final

__all__ = ["HookError", "InvalidCallbacks", "InvalidResult", "StopRun"]


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
    """

    def __init__(
        self,
        callback: object,
        point: str,
        value: object,
        expected: tuple[str, ...],
        *,
        problem: str | None = None,
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
        super().__init__(f"{describe(callback)}.{point} returned {got}")


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


def describe(callback: object) -> str:
    """Name a callback for messages: ``module 'guards'`` or ``Audit instance``."""
    name = getattr(callback, "__name__", None)
    if isinstance(name, str) and type(callback).__name__ == "module":
        return f"module {name!r}"
    if isinstance(callback, type):
        return f"class {callback.__qualname__}"
    return f"{type(callback).__qualname__} instance"
