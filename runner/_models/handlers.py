"""Ready-made error handlers: retry transient errors, then fall back to a second model.

They are callbacks like any other, and decide in the order of the callbacks list::

    callbacks = [RetryTransient(), FallbackModel(backup)]  # Runner.run
    callbacks = [RetryTransient(), AsyncFallbackModel(backup)]  # Runner.arun

The first ``Retry`` or ``Fallback`` ends an error chain, so ``RetryTransient`` retries
a transient error while the budget lasts, and only what it passes on (the budget spent,
a ``Retry-After`` too long to wait, an error that is not transient) reaches
``FallbackModel``, which answers from the backup model.

What is transient, and how long a server asked to wait, is read off the error by duck
typing (``runner._models.transient``: ``is_transient``, ``retry_after``): importing the runner
imports no provider's SDK.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar, final

from typing_extensions import override

from hooks import (
    AsyncOnModelError,
    ErrorResult,
    Failure,
    Fallback,
    ModelContext,
    ModelRequest,
    ModelResponse,
    OnModelError,
    OnToolError,
    Retry,
    StopRun,
    ToolContext,
    ToolResult,
)
from runner._checks import got, non_negative_float, positive_int
from runner._models.protocols import AsyncModel, Model
from runner._models.transient import is_transient as _is_transient
from runner._models.transient import retry_after
from runner._retry import RetryPolicy

__all__ = ["AsyncFallbackModel", "FallbackModel", "RetryTransient"]

C = TypeVar("C", ModelContext, ToolContext)


@final
class RetryTransient(OnModelError, OnToolError):
    """Retry transient model and tool errors, waiting what the server asks; else pass them on.

    A transient error (``is_transient``, or the predicate given) is retried while
    ``ctx.attempt`` is below the budget: ``ctx.max_attempts`` (the runner's
    ``RetryPolicy.max_attempts``), or ``attempts`` if that is smaller. The wait is the
    server's ``Retry-After`` (``retry_after``); without one, the backoff of the
    runner's ``RetryPolicy`` (``Retry(ctx)``), or, if ``base_delay`` is given, the
    same formula from ``base_delay`` up to ``max_delay``. The runner caps every wait at
    its ``RetryPolicy.max_delay`` as well.

    Anything else goes on as the same ``Failure``, for the next handler to decide (a
    ``FallbackModel``) or the run to fail on: an error that is not transient, a spent
    budget, and a ``Retry-After`` longer than ``max_delay`` -- retrying sooner than the
    server asked would spend an attempt on the same refusal, so it gives up at once (as
    the openai SDK does). The last two add a note to the error saying so.

    Both methods are plain ``def`` (nothing to await), so one instance serves ``run``
    and ``arun`` alike.
    """

    __slots__ = ("_backoff", "attempts", "base_delay", "is_transient", "max_delay")

    def __init__(
        self,
        *,
        attempts: int | None = None,
        base_delay: float | None = None,
        max_delay: float = 30.0,
        is_transient: Callable[[Exception], bool] | None = None,
    ) -> None:
        if attempts is not None:
            positive_int("RetryTransient.attempts", attempts)
        if base_delay is not None:
            non_negative_float("RetryTransient.base_delay", base_delay)
        non_negative_float("RetryTransient.max_delay", max_delay)
        predicate: object = is_transient  # untyped callers may pass anything
        if predicate is not None and not callable(predicate):
            msg = f"RetryTransient.is_transient must be callable or None, got {got(is_transient)}"
            raise TypeError(msg)
        self.attempts: Final = attempts
        self.base_delay: Final = base_delay
        self.max_delay: Final = max_delay
        self.is_transient: Final[Callable[[Exception], bool]] = is_transient or _is_transient
        self._backoff: Final = (
            None if base_delay is None else RetryPolicy(base_delay=base_delay, max_delay=max_delay)
        )

    @override
    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """``Retry`` a transient model error within the budget; else pass the failure on."""
        return self._decide(failure, ctx)

    @override
    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """``Retry`` a transient tool error within the budget; else pass the failure on."""
        return self._decide(failure, ctx)

    def _decide(self, failure: Failure[Exception], ctx: C) -> Retry[C] | Failure[Exception]:
        error = failure.failure()
        if not self.is_transient(error):
            return failure
        budget = ctx.max_attempts if self.attempts is None else min(self.attempts, ctx.max_attempts)
        if ctx.attempt >= budget:
            _note(
                error,
                f"RetryTransient gave up after {ctx.attempt} attempt(s): its budget is {budget}",
            )
            return failure
        wait = retry_after(error)
        if wait is None:
            delay = None if self._backoff is None else self._backoff.delay(ctx.attempt)
            return Retry(ctx, delay=delay)
        if wait > self.max_delay:
            _note(
                error,
                f"RetryTransient did not retry: the server asked to wait {wait:g}s, "
                f"more than max_delay={self.max_delay:g}s",
            )
            return failure
        return Retry(ctx, delay=wait)

    def __repr__(self) -> str:
        base = "" if self.base_delay is None else f"base_delay={self.base_delay!r}, "
        return f"RetryTransient(attempts={self.attempts!r}, {base}max_delay={self.max_delay!r})"


@final
class FallbackModel(OnModelError):
    """Answer a failed model call from a second model: ``Fallback(model.generate(request))``.

    It answers a failure that reaches it once the primary has failed ``after`` times
    (``ctx.attempt >= after``) or the retry budget is spent (``ctx.attempt ==
    ctx.max_attempts``: no retry can follow). Before that it passes the failure on. It
    never retries: put a retry handler before it (``[RetryTransient(),
    FallbackModel(backup)]``), and the failures that handler gives up on fall back.

    The backup answers ``ctx.request``, the request the failed attempt sent. If it
    raises too, the primary's ``Failure`` goes on -- its error keeps its type, so
    ``except RateLimitError`` still catches it -- with a note naming the backup's error.
    ``StopRun`` from the backup ends the run.

    Its method is plain ``def``: in ``Runner.arun`` the backup's call would block
    the event loop, so async runs take ``AsyncFallbackModel``.
    """

    __slots__ = ("after", "model")

    def __init__(self, model: Model, *, after: int = 1) -> None:
        _check_model("FallbackModel", model)
        if inspect.iscoroutinefunction(model.generate):
            msg = (
                f"FallbackModel: {type(model).__qualname__}.generate is async def; "
                f"use AsyncFallbackModel(model) in Runner.arun"
            )
            raise TypeError(msg)
        self.model: Final = model
        self.after: Final = positive_int("FallbackModel.after", after)

    @override
    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """``Fallback`` with the backup model's answer once due; else the failure, passed on."""
        if not _due(ctx, self.after):
            return failure
        try:
            response = self.model.generate(ctx.request)
        except StopRun:
            raise
        except Exception as error:  # the primary's error is the one to report
            return _failed_too(failure, self.model, error)
        return Fallback(response)

    def __repr__(self) -> str:
        return f"FallbackModel({self.model!r}, after={self.after!r})"


@final
class AsyncFallbackModel(AsyncOnModelError):
    """``FallbackModel`` for ``Runner.arun``: the backup's answer is awaited.

    The backup may be async (``async def generate``), sync with ``async def
    agenerate`` (awaited, as the runner does), or plain sync (run on a worker thread, so
    the event loop never blocks); which one is decided here, once. When it falls back,
    and what a failing backup leaves, is as in ``FallbackModel``. A sync run refuses
    it before it starts, as it does every ``async def`` hook.
    """

    __slots__ = ("_answer", "after", "model")

    def __init__(self, model: Model | AsyncModel, *, after: int = 1) -> None:
        _check_model("AsyncFallbackModel", model)
        self.model: Final = model
        self.after: Final = positive_int("AsyncFallbackModel.after", after)
        self._answer: Final = _awaitable(model)

    @override
    async def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """``Fallback`` with the backup model's answer once due; else the failure, passed on."""
        if not _due(ctx, self.after):
            return failure
        try:
            response = await self._answer(ctx.request)
        except StopRun:
            raise
        except Exception as error:  # the primary's error is the one to report
            return _failed_too(failure, self.model, error)
        return Fallback(response)

    def __repr__(self) -> str:
        return f"AsyncFallbackModel({self.model!r}, after={self.after!r})"


def _due(ctx: ModelContext, after: int) -> bool:
    return ctx.attempt >= min(after, ctx.max_attempts)


def _failed_too(failure: Failure[Exception], model: object, error: Exception) -> Failure[Exception]:
    _note(
        failure.failure(),
        f"the fallback model {type(model).__qualname__} failed too: "
        f"{type(error).__qualname__}: {error}",
    )
    return failure


def _awaitable(model: Model | AsyncModel) -> Callable[[ModelRequest], Awaitable[ModelResponse]]:
    """How to await an answer from ``model``: its coroutine, or its sync call on a thread."""
    generate: Any = model.generate
    agenerate: Any = getattr(model, "agenerate", None)
    answer: Callable[[ModelRequest], Awaitable[ModelResponse]]
    if inspect.iscoroutinefunction(generate):
        answer = generate
        return answer
    if inspect.iscoroutinefunction(agenerate):
        answer = agenerate
        return answer

    async def threaded(request: ModelRequest) -> ModelResponse:
        response: ModelResponse = await asyncio.to_thread(generate, request)
        return response

    return threaded


def _check_model(owner: str, model: object) -> None:
    if isinstance(model, type) or not callable(getattr(model, "generate", None)):
        hint = f"; pass an instance: {model.__qualname__}()" if isinstance(model, type) else ""
        msg = f"{owner}: a model needs a generate(request) method, got {got(model)}{hint}"
        raise TypeError(msg)


def _note(error: BaseException, note: str) -> None:
    if note not in getattr(error, "__notes__", ()):
        error.add_note(note)
