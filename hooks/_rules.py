"""Which results are legal at which kind of hook point: the one table dispatch consults.

::

    kind     tag        its payload must be      what it does
    before   Cont       the point's context      hands the context to the next callback
             Halt       the point's value        ends the chain (under continue_on_halt
                                                 the chain goes on and the last Halt wins)
    pausable Cont, Halt as before
             Pause      (its reason: a str, checked  ends the chain like a Halt
                        when the Pause is made)
    after    Success    the point's value        is handed to the next callback
             Failure    an Exception             is handed to the next callback
    error    Retry      the point's context      ends the chain
             Fallback   the point's value        ends the chain
             Failure    an Exception             is handed to the next callback
    wrap     Success    the point's value        is what the wrap's own caller gets:
             Failure    an Exception             the next wrap out, or the dispatcher

A point without payload types (``context`` / ``value`` of ``None``) checks the tags
only. A payload that is the very object the callback was given -- ``Cont(ctx)``,
``Retry(ctx)``, the outcome or failure passed on unchanged -- is not checked again:
only a changed payload costs an ``isinstance``. A wrap's context, the one it gives
``call_next``, is checked against the point's context the same way.

The default-policy loops in ``_dispatch`` and ``_wrap`` inline the tags that hand on
(``Cont``, ``Success`` / ``Failure``, ``Failure``) and bring every other result here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter, methodcaller
from typing import Any, Final, Literal, final

from returns.result import Failure, Success

from hooks._errors import InvalidResult
from hooks._points import AnyPoint
from hooks._results import Cont, Fallback, Halt, Pause, Retry
from hooks._slots import slot_init

__all__ = ["TAGS", "Tag", "expected", "invalid", "legal"]


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Tag:
    """One legal result type at one kind of point, and what dispatch does with it."""

    cls: type[Any]
    label: str
    # what the payload is checked against ("reason": nothing, Pause checks its own)
    payload: Literal["context", "value", "exception", "reason"]
    read: Callable[[Any], object]  # the payload of a result of this tag
    ends: bool  # ends the chain (Halt, Pause, Retry, Fallback)
    hands_on: Literal["payload", "result", None]  # what the next callback receives


_CONT: Final = Tag(Cont, "Cont", "context", attrgetter("_ctx"), ends=False, hands_on="payload")
_HALT: Final = Tag(Halt, "Halt", "value", attrgetter("_value"), ends=True, hands_on=None)
_SUCCESS: Final = Tag(Success, "Success", "value", methodcaller("unwrap"), False, "result")
_FAILURE: Final = Tag(Failure, "Failure", "exception", methodcaller("failure"), False, "result")
_PAUSE: Final = Tag(Pause, "Pause", "reason", attrgetter("_reason"), ends=True, hands_on=None)
_RETRY: Final = Tag(Retry, "Retry", "context", attrgetter("_ctx"), ends=True, hands_on=None)
_FALLBACK: Final = Tag(Fallback, "Fallback", "value", attrgetter("_value"), True, None)

TAGS: Final[dict[str, tuple[Tag, ...]]] = {
    "before": (_CONT, _HALT),
    "pausable": (_CONT, _HALT, _PAUSE),
    "after": (_SUCCESS, _FAILURE),
    "error": (_RETRY, _FALLBACK, _FAILURE),
    "wrap": (_SUCCESS, _FAILURE),
}
"""Point rules (its kind, or "pausable") -> its legal tags, in the order messages list them."""


def legal(point: AnyPoint, result: object, ctx: object) -> Tag | None:
    """``result``'s tag when it is legal at ``point``, payload included; else ``None``.

    ``ctx`` is the context the callback was given: a ``Cont`` or ``Retry`` carrying
    that very object needs no check.
    """
    for tag in TAGS[point.rules]:
        if type(result) is tag.cls:
            return tag if _payload_error(tag, point, result, ctx) is None else None
    return None


def expected(point: AnyPoint) -> tuple[str, ...]:
    """The tags legal at ``point`` as messages name them: ``("Cont[ToolContext]", ...)``."""
    names: list[str] = []
    for tag in TAGS[point.rules]:
        cls = _against(tag, point)
        names.append(tag.label if cls is None else f"{tag.label}[{cls.__name__}]")
    return tuple(names)


def invalid(owner: object, point: AnyPoint, result: object, ctx: object) -> InvalidResult:
    """The ``InvalidResult`` for an illegal ``result`` returned by ``owner`` at ``point``."""
    if inspect.iscoroutine(result):
        result.close()  # a plain def that returned a coroutine: never awaited, say so once
    problem = None
    allowed = expected(point)
    for tag in TAGS[point.rules]:
        if type(result) is tag.cls:
            problem = _payload_error(tag, point, result, ctx)
    if (
        type(result) is Pause
        and problem is None
        and all(tag.cls is not Pause for tag in TAGS[point.rules])
    ):
        problem = (
            f"Pause ({result!r:.80}); Pause is legal only where a call can wait for a human "
            f"(a PausablePoint: before_tool), not at {point.name}: "
            f"expected {' or '.join(allowed)}"
        )
    return InvalidResult(owner, point.name, result, allowed, problem=problem)


def _against(tag: Tag, point: AnyPoint) -> type[object] | None:
    if tag.payload == "exception":
        return Exception
    if tag.payload == "reason":
        return None  # Pause checks its own reason when it is made
    return point.context if tag.payload == "context" else point.value


def _payload_error(tag: Tag, point: AnyPoint, result: object, ctx: object) -> str | None:
    payload = tag.read(result)
    if tag.payload == "context" and payload is ctx:
        return None
    cls = _against(tag, point)
    if cls is None or isinstance(payload, cls):
        return None
    return (
        f"{tag.label}({type(payload).__name__}) {payload!r:.80}; "
        f"expected {tag.label}[{cls.__name__}]"
    )
