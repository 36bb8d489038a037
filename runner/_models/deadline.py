"""Model calls' deadlines: the runner's bound on every call, and how a model reads it.

A runner gives every model attempt a total deadline (``Runner(..., model_deadline=)``,
600 seconds unless given). In ``arun`` and ``stream`` the runner ends an awaited call
that passes it with ``ModelTimeout``, whatever the model is: ``bounded`` wraps the call
and, only once the call has to wait (an answer from memory costs no timer), arms one
timer that cancels what the call waits on, as ``Task.cancel`` would, and turns the
cancellation into ``ModelTimeout``. It cancels the awaited future, not the task: a
streamed run is stepped inside its consumer's task, which must not see a cancellation
meant for one model call.

A sync call cannot be stopped from outside (in ``run``, or on a worker thread in
``arun``), so the runner only says how long it has left: ``time_left()``, read by the
real models (each keeps the smaller of its own deadline and the runner's) and by any
model that wants to honour it.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import time
from collections.abc import Awaitable, Generator
from typing import Any, Final, Generic, TypeVar, final

from runner._errors import ModelTimeout

__all__ = [
    "DEFAULT_MODEL_DEADLINE",
    "MAX_DEADLINE",
    "Bounded",
    "check_deadline",
    "ends",
    "model_name",
    "time_left",
]

T = TypeVar("T")

DEFAULT_MODEL_DEADLINE: Final = 600.0
"""Seconds a runner lets any one model call take, unless ``Runner(model_deadline=)`` says."""

MAX_DEADLINE: Final = 86_400.0
"""The longest deadline a model call may have: a day (a socket's timeout has a limit)."""

ends: Final[contextvars.ContextVar[float]] = contextvars.ContextVar(
    "hookline_model_call_ends", default=math.inf
)
"""When the model call under way must end, in ``time.monotonic()`` seconds; set by the
runner around each model attempt (a copied context carries it to a worker thread)."""


def time_left() -> float:
    """Seconds the model call under way has left before its runner's deadline.

    ``math.inf`` outside a sync model call (an awaited one is bounded by the runner
    itself); never below 0. A sync model, which the runner cannot stop, bounds its own
    waits by this.
    """
    return max(0.0, ends.get() - time.monotonic())


def check_deadline(what: str, value: object) -> float:
    """``value`` as a deadline in seconds: a positive finite number, a day at most;
    else a ``ValueError`` naming ``what`` (``"OpenAIChatModel's deadline"``)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= MAX_DEADLINE
    ):
        msg = (
            f"{what} must be a positive finite number of seconds, "
            f"a day (86400) at most, got {value!r:.60}"
        )
        raise ValueError(msg)
    return float(value)


@final
class Bounded(Generic[T]):
    """``awaitable`` awaited under a deadline of ``seconds``: ``ModelTimeout`` naming
    ``model`` (its ``model`` name, else its class) when it passes.

    The first step runs at once; a call that finishes without waiting arms nothing. A
    cancellation of the task asked for meanwhile (``task.cancel()``) stays a cancellation.
    """

    __slots__ = ("awaitable", "model", "seconds")

    def __init__(self, awaitable: Awaitable[T], seconds: float, model: object) -> None:
        self.awaitable: Final = awaitable
        self.seconds: Final = seconds
        self.model: Final = model

    def __await__(self) -> Generator[Any, Any, T]:
        steps = self.awaitable.__await__()
        try:
            waiting = steps.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # what the awaitable returned
        timer = _Timer(waiting)
        task = asyncio.current_task()
        asked = 0 if task is None else task.cancelling()  # cancellations asked before ours
        handle = asyncio.get_running_loop().call_later(self.seconds, timer.fire)
        try:
            while True:
                try:
                    sent = yield waiting
                except GeneratorExit:
                    steps.close()
                    raise
                except BaseException as error:  # thrown in: a cancellation, ours or not
                    waiting = steps.throw(error)
                else:
                    if timer.fired and not timer.thrown:
                        # It fired as what it cancelled completed: cancel the call still.
                        timer.thrown = True
                        waiting = steps.throw(asyncio.CancelledError())
                    else:
                        waiting = steps.send(sent)
                timer.waiting = waiting
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]  # what the awaitable returned
        except asyncio.CancelledError as error:
            if timer.fired and (task is None or task.cancelling() <= asked):
                raise ModelTimeout(model_name(self.model), self.seconds) from error
            raise
        finally:
            handle.cancel()


def model_name(model: object) -> str:
    """What an error calls ``model``: itself if a str, the name it calls (``.model``),
    else its class."""
    name = model if isinstance(model, str) else getattr(model, "model", None)
    return name if isinstance(name, str) and name else type(model).__qualname__


@final
class _Timer:
    """What a ``Bounded`` call waits on now, and whether its deadline has come."""

    __slots__ = ("fired", "thrown", "waiting")

    def __init__(self, waiting: object) -> None:
        self.waiting = waiting
        self.fired = False
        self.thrown = False

    def fire(self) -> None:
        """The deadline: cancel what the call waits on (a future; else the next step)."""
        self.fired = True
        cancel = getattr(self.waiting, "cancel", None)
        if cancel is not None and cancel():
            self.thrown = True  # the task throws CancelledError in as it wakes
